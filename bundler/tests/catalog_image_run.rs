//! The catalog image runs as a container would start it: `olm catalog build` into an OCI layout,
//! unpack the rootfs, chroot into it and run the image's own entrypoint (plus `-p` for a free
//! port), then ask it for health through its `/bin/grpc_health_probe` link and for ListPackages
//! over gRPC. Nothing from the host is visible inside, so the image must carry its loader,
//! libraries, catalog and pre-built serve cache.

#[path = "support/prerequisite.rs"]
mod prerequisite;
#[path = "support/serve.rs"]
mod serve;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use olm_bundler::image::transfer::pull_to_dir;
use olm_bundler::serve::proto::api::{ListPackageRequest, registry_client::RegistryClient};
use serve::{Server, free_port, http_get};

fn olm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
    c.env("SOURCE_DATE_EPOCH", "0");
    c
}

fn chroot_usable() -> bool {
    Command::new("chroot")
        .arg("/")
        .arg("/bin/true")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A one-package catalog rendered from the repository's bundle.
fn write_catalog(dir: &Path) {
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bundle");
    let out = olm()
        .args(["catalog", "render"])
        .arg(&bundle)
        .args(["--image", "quay.io/example/rw-bundle:v0.2.1", "-o", "yaml"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pkg = dir.join("reverse-words-operator");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("bundles.yaml"), &out.stdout).unwrap();
    std::fs::write(
        pkg.join("package.yaml"),
        format!("---\nschema: olm.package\nname: reverse-words-operator\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: reverse-words-operator\nname: stable\nentries:\n- name: reverse-words-operator.v{}\n", repo_version()),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_image_serves_from_its_own_entrypoint() {
    if !chroot_usable() {
        prerequisite::missing("chroot is not usable here (needs root)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    write_catalog(&catalog);
    let layout = format!("oci:{}:v1", tmp.path().join("layout").display());
    // The image also serves catalogd's HTTP API, on a port chosen at build time.
    let http_port = free_port();
    let out = olm()
        .args(["catalog", "build"])
        .arg(&catalog)
        .args(["-t", &layout])
        .args(["--http-port", &http_port.to_string()])
        .args(["--catalog-name", "operatorhub"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let rootfs: PathBuf = tmp.path().join("rootfs");
    let pulled = pull_to_dir(&layout, &rootfs, &Default::default())
        .await
        .unwrap();
    let cfg = &pulled.config.config;
    assert_eq!(
        cfg.entrypoint[..4],
        ["/bin/olm", "catalog", "serve", "/configs"]
    );
    assert!(
        rootfs.join("tmp/cache").is_dir(),
        "pre-built serve cache in the image"
    );
    // The catalog browser's pages, rendered for the name the image serves as.
    let site = std::fs::read_to_string(rootfs.join("tmp/cache/olm-serve.v1/ui/site.json")).unwrap();
    assert!(site.contains(r#""catalogName":"operatorhub""#), "{site}");
    let ui = rootfs.join("tmp/cache/olm-serve.v1/ui");
    let before = std::fs::metadata(ui.join("index.html"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(
        cfg.labels["operators.operatorframework.io.index.configs.v1"],
        "/configs"
    );
    assert_eq!(
        cfg.entrypoint[5..],
        [
            format!("--http-port={http_port}"),
            "--catalog-name=operatorhub".to_string()
        ]
    );

    // Start exactly the entrypoint, in the image's working directory, as its user would.
    let port = free_port();
    let mut cmd = Command::new("chroot");
    cmd.arg(&rootfs)
        .args(&cfg.entrypoint)
        .args(&cfg.cmd)
        .args(["-p", &port.to_string()]);
    cmd.current_dir(&rootfs)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let _server = Server(cmd.spawn().unwrap());

    // grpc_health_probe is /bin/olm under another name, as older OLM versions call it.
    let addr = format!("127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let probe = Command::new("chroot")
            .arg(&rootfs)
            .args(["/bin/grpc_health_probe", &format!("-addr={addr}")])
            .output()
            .unwrap();
        if probe.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never SERVING: {}",
            String::from_utf8_lossy(&probe.stderr)
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    let mut client = RegistryClient::connect(format!("http://{addr}"))
        .await
        .unwrap();
    let mut stream = client
        .list_packages(ListPackageRequest {})
        .await
        .unwrap()
        .into_inner();
    let mut names = Vec::new();
    while let Some(p) = stream.next().await {
        names.push(p.unwrap().name);
    }
    assert_eq!(names, ["reverse-words-operator"]);

    // catalogd's API from the same entrypoint.
    let (status, answer) = http_get(http_port, "/catalogs/operatorhub/api/v1/all");
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("\"schema\":\"olm.package\""), "{answer}");

    // And the catalog browser, from the image's own pages (not rendered again at start-up).
    for (path, wants) in [
        ("/", "packages/reverse-words-operator.html"),
        (
            "/packages/reverse-words-operator.html",
            "kind: ClusterExtension",
        ),
    ] {
        let (status, answer) = http_get(http_port, path);
        assert_eq!(status, 200, "{path}: {answer}");
        assert!(answer.contains(wants), "{path}: {answer}");
    }
    let after = std::fs::metadata(ui.join("index.html"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}

/// The version the repository's bundle config releases (operator/olm/bundle.yaml).
fn repo_version() -> String {
    let cfg = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../operator/olm/bundle.yaml"),
    )
    .unwrap();
    cfg.lines()
        .find_map(|l| l.strip_prefix("version: "))
        .unwrap()
        .trim()
        .to_string()
}
