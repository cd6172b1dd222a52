//! Image builds into OCI layouts, no registry needed: reproducibility, what the bundle,
//! operator and catalog images contain, that the operator image runs from its own rootfs
//! with no shell inside, and clear errors on bad input.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn olm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
    c.env_remove("SOURCE_DATE_EPOCH");
    c
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/image")
        .join(name)
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn digest_of(pinned: &str) -> String {
    pinned.trim().rsplit_once('@').unwrap().1.to_string()
}

fn inspect(layout: &str) -> serde_json::Value {
    let out = ok(
        olm().args(["image", "inspect", layout]).output().unwrap(),
        "inspect",
    );
    serde_json::from_str(&out).unwrap()
}

fn unpack(layout: &str, dir: &Path) {
    ok(
        olm()
            .args(["image", "pull", layout, "--rootfs"])
            .arg(dir)
            .output()
            .unwrap(),
        "olm image pull --rootfs",
    );
}

#[test]
fn bundle_image_is_reproducible_and_holds_the_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let build = |dest: &str, epoch: Option<&str>| {
        let mut c = olm();
        c.args(["bundle", "build"])
            .arg(fixture("bundle"))
            .args(["-t", dest]);
        if let Some(e) = epoch {
            c.env("SOURCE_DATE_EPOCH", e);
        }
        digest_of(&ok(c.output().unwrap(), "olm bundle build"))
    };
    let a = format!("oci:{}:v1", tmp.path().join("a").display());
    let b = format!("oci:{}:v1", tmp.path().join("b").display());
    let c = format!("oci:{}:v1", tmp.path().join("c").display());
    let da = build(&a, None);
    assert_eq!(da, build(&b, None), "two builds, same digest");
    assert_ne!(
        da,
        build(&c, Some("1700000000")),
        "SOURCE_DATE_EPOCH is used"
    );

    let info = inspect(&a);
    assert_eq!(info["Digest"], da);
    assert_eq!(info["Layers"].as_array().unwrap().len(), 1, "one layer");
    assert_eq!(info["Created"], "1970-01-01T00:00:00Z");
    // Labels are exactly annotations.yaml.
    let labels = info["Labels"].as_object().unwrap();
    assert_eq!(labels.len(), 7, "{labels:?}");
    assert_eq!(
        labels["operators.operatorframework.io.bundle.mediatype.v1"],
        "registry+v1"
    );
    assert_eq!(
        labels["operators.operatorframework.io.bundle.channel.default.v1"],
        "stable-3.x"
    );
    assert_eq!(labels["com.redhat.openshift.versions"], "v4.6-v4.8");

    let root = tmp.path().join("rootfs");
    unpack(&a, &root);
    for rel in [
        "manifests/cockroachdb.v2.1.1.clusterserviceversion.yaml",
        "manifests/cockroachdbs.charts.helm.k8s.io.crd.yaml",
        "metadata/annotations.yaml",
        "tests/scorecard/config.yaml",
    ] {
        assert_eq!(
            std::fs::read(root.join(rel)).unwrap(),
            std::fs::read(fixture("bundle").join(rel)).unwrap(),
            "{rel}"
        );
    }
}

#[test]
fn bundle_without_annotations_names_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("b");
    std::fs::create_dir_all(bundle.join("manifests")).unwrap();
    std::fs::write(bundle.join("manifests/cm.yaml"), "kind: ConfigMap\n").unwrap();
    let out = olm()
        .args(["bundle", "build"])
        .arg(&bundle)
        .args(["-t", &format!("oci:{}", tmp.path().join("out").display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("metadata/annotations.yaml"), "{stderr}");
    assert!(
        !tmp.path().join("out").exists(),
        "nothing written on failure"
    );
}

#[test]
fn registry_tag_without_push_is_a_usage_error() {
    let out = olm()
        .args(["bundle", "build"])
        .arg(fixture("bundle"))
        .args(["-t", "quay.io/example/bundle:v1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--push"));
    let out = olm()
        .args(["bundle", "build"])
        .arg(fixture("bundle"))
        .args(["-t", "oci:/tmp/x", "--push"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn non_elf_binary_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = olm()
        .args(["image", "build", "--binary"])
        .arg(fixture("bundle/metadata/annotations.yaml"))
        .args(["-t", &format!("oci:{}", tmp.path().join("o").display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an ELF file"));
}

/// Runs `args` inside `root` with chroot, the way a runtime would start the container:
/// nothing from the host is visible, so the image must bring its loader and libraries.
fn run_in_rootfs(root: &Path, args: &[&str]) -> Option<Output> {
    let probe = Command::new("chroot").arg("/").arg("/bin/true").output();
    if !probe.is_ok_and(|o| o.status.success()) {
        prerequisite::missing(
            "chroot not usable here (needs root); running with the packed loader instead",
        );
        return None;
    }
    Some(
        Command::new("chroot")
            .arg(root)
            .args(args)
            .output()
            .unwrap(),
    )
}

#[test]
fn operator_image_from_a_dynamic_binary_runs_from_its_own_rootfs() {
    let bin = Path::new("/bin/echo");
    if !bin.exists() {
        prerequisite::missing("/bin/echo not present");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dest = format!("oci:{}:op", tmp.path().join("layout").display());
    let build = || {
        digest_of(&ok(
            olm()
                .args(["image", "build", "--binary", "/bin/echo", "-t", &dest])
                .args(["--arg", "hello-from-image", "--image-version", "1.2.3"])
                .args(["--licenses", "Apache-2.0"])
                .output()
                .unwrap(),
            "olm image build",
        ))
    };
    let digest = build();
    assert_eq!(digest, build(), "reproducible");

    let info = inspect(&dest);
    let cfg = &info["Config"];
    assert_eq!(cfg["architecture"], "amd64");
    assert_eq!(cfg["os"], "linux");
    assert_eq!(cfg["config"]["User"], "65532:65532");
    assert_eq!(cfg["config"]["Entrypoint"][0], "/usr/local/bin/echo");
    assert_eq!(cfg["config"]["Cmd"][0], "hello-from-image");
    assert_eq!(info["Labels"]["org.opencontainers.image.version"], "1.2.3");
    assert_eq!(
        info["Labels"]["org.opencontainers.image.licenses"],
        "Apache-2.0"
    );
    assert_eq!(
        info["Layers"].as_array().unwrap().len(),
        3,
        "base, libraries, binary"
    );

    let root = tmp.path().join("rootfs");
    unpack(&dest, &root);
    let passwd = std::fs::read_to_string(root.join("etc/passwd")).unwrap();
    assert!(passwd.contains("nonroot:x:65532:65532:"), "{passwd}");
    assert!(
        std::fs::read_to_string(root.join("etc/group"))
            .unwrap()
            .contains("nonroot:x:65532:")
    );
    if Path::new("/etc/ssl/certs/ca-certificates.crt").exists() {
        assert!(root.join("etc/ssl/certs/ca-certificates.crt").is_file());
    }
    // No shell, no coreutils: only the binary and what it links.
    assert!(!root.join("bin/sh").exists());
    assert!(!root.join("usr/bin/env").exists());
    // The loader and libc are packed.
    let interp = olm_bundler::image::elf::read(bin)
        .unwrap()
        .interpreter
        .unwrap();
    assert!(
        root.join(interp.trim_start_matches('/')).is_file(),
        "{interp} packed"
    );
    let libc = walk(&root)
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "libc.so.6"))
        .expect("libc.so.6 packed");

    // Run it the way a runtime would: entrypoint + cmd from the config, in the rootfs.
    let entry = cfg["config"]["Entrypoint"][0].as_str().unwrap().to_string();
    match run_in_rootfs(&root, &[&entry, "hello-from-image"]) {
        Some(out) => {
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(String::from_utf8_lossy(&out.stdout), "hello-from-image\n");
        }
        None => {
            let out = Command::new(root.join(interp.trim_start_matches('/')))
                .arg("--library-path")
                .arg(libc.parent().unwrap())
                .arg(root.join("usr/local/bin/echo"))
                .arg("hello-from-image")
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&out.stdout), "hello-from-image\n");
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn catalog_image_serves_configs_with_olm() {
    let tmp = tempfile::tempdir().unwrap();
    let dest = format!("oci:{}:cat", tmp.path().join("layout").display());
    let build = || {
        digest_of(&ok(
            olm()
                .args(["catalog", "build"])
                .arg(fixture("catalog"))
                .args(["-t", &dest, "--label", "team=olm"])
                .output()
                .unwrap(),
            "olm catalog build",
        ))
    };
    assert_eq!(build(), build(), "reproducible");
    let info = inspect(&dest);
    let cfg = &info["Config"]["config"];
    assert_eq!(
        info["Labels"]["operators.operatorframework.io.index.configs.v1"],
        "/configs"
    );
    assert_eq!(info["Labels"]["team"], "olm");
    assert_eq!(
        cfg["Entrypoint"],
        serde_json::json!([
            "/bin/olm",
            "catalog",
            "serve",
            "/configs",
            "--cache-dir=/tmp/cache"
        ])
    );
    assert!(cfg["ExposedPorts"]["50051/tcp"].is_object());

    let root = tmp.path().join("rootfs");
    unpack(&dest, &root);
    assert_eq!(
        std::fs::read(root.join("configs/cockroachdb/catalog.yaml")).unwrap(),
        std::fs::read(fixture("catalog/cockroachdb/catalog.yaml")).unwrap()
    );
    assert_eq!(
        std::fs::read(root.join("bin/olm")).unwrap(),
        std::fs::read(env!("CARGO_BIN_EXE_olm")).unwrap()
    );
    assert_eq!(
        std::fs::read_link(root.join("bin/grpc_health_probe")).unwrap(),
        Path::new("olm")
    );
    // The packed olm starts inside its own rootfs.
    if let Some(out) = run_in_rootfs(&root, &["/bin/olm", "--version"]) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("olm "));
    }
}

#[test]
fn copy_between_layouts_keeps_the_digest() {
    let tmp = tempfile::tempdir().unwrap();
    let a = format!("oci:{}:v1", tmp.path().join("a").display());
    let b = format!("oci:{}:other", tmp.path().join("b").display());
    let d = digest_of(&ok(
        olm()
            .args(["bundle", "build"])
            .arg(fixture("bundle"))
            .args(["-t", &a])
            .output()
            .unwrap(),
        "build",
    ));
    let copied = digest_of(&ok(
        olm().args(["image", "copy", &a, &b]).output().unwrap(),
        "copy",
    ));
    assert_eq!(d, copied);
    assert_eq!(inspect(&b)["Digest"], d);
}
