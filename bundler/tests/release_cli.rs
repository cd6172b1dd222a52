//! `olm release` end to end: the whole pipeline on a temporary copy of the operator's inputs
//! (fixtures/release: its manifests, CSV base), with /bin/true as the "operator binary" to
//! keep image builds fast. Checks determinism, broken inputs, and a real registry.

#[path = "support/registry.rs"]
mod registry;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use olm_bundler::serve::proto::api::{self, registry_client::RegistryClient};
use registry::{Registry, Variant};

const OLM: &str = env!("CARGO_BIN_EXE_olm");
const EPOCH: &str = "1763683200";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/release")
}

/// A temporary repository: release.yaml, olm/bundle.yaml, the CSV base, manifests.
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("olm")).unwrap();
        std::fs::copy(
            fixtures().join("reverse-words-operator.clusterserviceversion.yaml"),
            root.join("olm/csv-base.yaml"),
        )
        .unwrap();
        for sub in ["manifests", "plain"] {
            std::fs::create_dir_all(root.join(sub)).unwrap();
            std::fs::copy(
                fixtures().join(sub).join("operator.yaml"),
                root.join(sub).join("operator.yaml"),
            )
            .unwrap();
        }
        std::fs::write(
            root.join("olm/bundle.yaml"),
            "csv-base: csv-base.yaml\npackage: reverse-words-operator\nversion: 0.2.1\n\
             channels: [stable-v0, fast-v0, candidate-v0]\ndefault-channel: stable-v0\n\
             replaces: reverse-words-operator.v0.2.0\nskip-range: \">=0.1.0 <0.2.1\"\n\
             min-kube-version: 1.25.0\nrelated-images-from-containers: true\noutput: ../bundle\n",
        )
        .unwrap();
        std::fs::write(
            root.join("release.yaml"),
            "bundle-config: olm/bundle.yaml\nmanifests:\n  dir: manifests\n\
             operator-binary: /bin/true\noperator-build: cargo build --release -p true\n\
             images:\n  operator: quay.io/reverse-words/reverse-words-operator\n  bundle: quay.io/rw/bundle\n  catalog: quay.io/rw/catalog\n\
             pin-operator-image: true\npinned-operator-image: olm/operator-image.yaml\n\
             pinned-catalog-image: olm/catalog-image.yaml\n\
             catalog-channels: [candidate, fast, stable]\n\
             catalog: catalog\nlayouts: target/images\n\
             deploy:\n  output: deploy\n  namespace: rw\n  manifests:\n    dir: plain\n\
             operator-labels:\n  name: rw\n  vendor: Reverse Words\n  release: \"1\"\n  summary: rw\n  description: rw\n  maintainer: rw <rw@rw.test>\n\
             operator-licenses: [LICENSE]\ncertify:\n  container-policy: scratch-nonroot\n",
        )
        .unwrap();
        std::fs::write(root.join("LICENSE"), "Apache-2.0\n").unwrap();
        Repo { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn release(&self, extra: &[&str]) -> Output {
        Command::new(OLM)
            .arg("release")
            .arg("--config")
            .arg(self.root().join("release.yaml"))
            .args(extra)
            .env("SOURCE_DATE_EPOCH", EPOCH)
            .output()
            .unwrap()
    }

    /// Every file of bundle/, catalog/ and deploy/ with its bytes.
    fn outputs(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut files = BTreeMap::new();
        for d in ["bundle", "catalog", "deploy"] {
            collect(&self.root().join(d), self.root(), &mut files);
        }
        for pin in ["olm/operator-image.yaml", "olm/catalog-image.yaml"] {
            if let Ok(bytes) = std::fs::read(self.root().join(pin)) {
                files.insert(PathBuf::from(pin), bytes);
            }
        }
        files
    }
}

fn collect(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(&p, root, out);
        } else {
            out.insert(
                p.strip_prefix(root).unwrap().to_path_buf(),
                std::fs::read(&p).unwrap(),
            );
        }
    }
}

fn text(o: &Output) -> String {
    format!(
        "status {}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", text(&o));
    o
}

/// The `image size reference` lines of the summary.
fn references(o: &Output) -> Vec<String> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.contains("@sha256:"))
        .map(|l| l.split_whitespace().last().unwrap_or_default().to_string())
        .collect()
}

/// Cuts the three releases of the history: 0.1.0, 0.2.0, then 0.2.1 from the config.
fn bootstrap(repo: &Repo, extra: &[&str]) -> Output {
    let mut a = vec!["--version", "0.1.0", "--no-replaces", "--no-skip-range"];
    a.extend_from_slice(extra);
    ok(repo.release(&a));
    let mut b = vec![
        "--version",
        "0.2.0",
        "--replaces",
        "reverse-words-operator.v0.1.0",
        "--skip-range",
        ">=0.1.0 <0.2.0",
    ];
    b.extend_from_slice(extra);
    ok(repo.release(&b));
    ok(repo.release(extra))
}

#[test]
fn release_to_layouts_is_reproducible_and_idempotent() {
    let repo = Repo::new();
    let first = bootstrap(&repo, &["--graph", "mermaid"]);
    let stdout = String::from_utf8_lossy(&first.stdout);
    assert!(stdout.contains("graph LR"), "{}", text(&first));
    assert!(
        stdout.contains("reverse-words-operator.v0.2.0") && stdout.contains("\"stable-v0\""),
        "{}",
        text(&first)
    );
    let refs = references(&first);
    assert_eq!(refs.len(), 3, "{}", text(&first));
    assert!(refs[0].starts_with("quay.io/reverse-words/reverse-words-operator@sha256:"));
    assert!(refs[1].starts_with("quay.io/rw/bundle@sha256:"));
    assert!(refs[2].starts_with("quay.io/rw/catalog@sha256:"));

    // The CSV runs the operator image by digest; the FBC and deploy/ use digests.
    let files = repo.outputs();
    let csv = String::from_utf8_lossy(
        &files[Path::new("bundle/manifests/reverse-words-operator.clusterserviceversion.yaml")],
    )
    .into_owned();
    assert!(
        csv.contains(&refs[0]),
        "CSV does not pin {}:\n{csv}",
        refs[0]
    );
    let fbc =
        String::from_utf8_lossy(&files[Path::new("catalog/reverse-words-operator/catalog.yaml")])
            .into_owned();
    assert!(fbc.contains(&refs[1]), "{fbc}");
    for v in ["v0.1.0", "v0.2.0", "v0.2.1"] {
        assert!(
            fbc.contains(&format!("reverse-words-operator.{v}")),
            "{fbc}"
        );
    }
    let cs =
        String::from_utf8_lossy(&files[Path::new("deploy/olm/catalogsource.yaml")]).into_owned();
    assert!(cs.contains(&refs[2]), "{cs}");
    let sub =
        String::from_utf8_lossy(&files[Path::new("deploy/olm/subscription.yaml")]).into_owned();
    assert!(sub.contains("channel: stable-v0\n"), "{sub}");
    // The plain install runs the same pinned operator image as the CSV.
    let plain_pinned = files.iter().any(|(p, b)| {
        p.starts_with("deploy/plain") && String::from_utf8_lossy(b).contains(&refs[0])
    });
    assert!(plain_pinned, "deploy/plain does not run {}", refs[0]);
    // The pin is recorded as an input of bundle/.
    let pin = String::from_utf8_lossy(&files[Path::new("olm/operator-image.yaml")]).into_owned();
    assert!(
        pin.contains("version: 0.2.1\n") && pin.contains(&format!("image: {}\n", refs[0])),
        "{pin}"
    );
    // One major channel per archetype holds the whole 0.1.0 -> 0.2.0 -> 0.2.1 path, and the
    // catalog carries the full CSV (olm.bundle.object).
    for ch in ["candidate-v0", "fast-v0", "stable-v0"] {
        assert!(fbc.contains(&format!("name: {ch}\n")), "{ch}:\n{fbc}");
    }
    assert!(!fbc.contains("-v0.2"), "{fbc}");
    assert!(fbc.contains("defaultChannel: stable-v0\n"), "{fbc}");
    assert!(fbc.contains("olm.bundle.object"), "{fbc}");
    assert!(!fbc.contains("olm.csv.metadata"), "{fbc}");
    let up = ok(Command::new(OLM)
        .args(["catalog", "upgrade-path"])
        .arg(repo.root().join("catalog"))
        .args([
            "--package",
            "reverse-words-operator",
            "--from",
            "0.1.0",
            "--channel",
            "stable-v0",
        ])
        .output()
        .unwrap());
    assert!(
        String::from_utf8_lossy(&up.stdout).contains("reverse-words-operator.v0.2.1"),
        "{}",
        text(&up)
    );

    let v = ok(Command::new(OLM)
        .arg("catalog")
        .arg("validate")
        .arg(repo.root().join("catalog"))
        .output()
        .unwrap());
    drop(v);

    // The operator image's SBOM beside the layouts, named in the summary.
    let sbom_path = repo.root().join("target/images/operator.spdx.json");
    let sbom = std::fs::read(&sbom_path).expect("the operator image's SBOM");
    let doc: serde_json::Value = serde_json::from_slice(&sbom).unwrap();
    assert_eq!(doc["spdxVersion"], "SPDX-2.3");
    assert_eq!(doc["name"], "quay.io/reverse-words/reverse-words-operator");
    let digest = refs[0].rsplit_once('@').unwrap().1;
    assert_eq!(doc["packages"][0]["versionInfo"], digest);
    assert!(
        stdout.contains(&format!(
            "{} (operator image, SPDX 2.3)",
            sbom_path.display()
        )),
        "{}",
        text(&first)
    );

    // Again: same digests, nothing written.
    let second = ok(repo.release(&[]));
    assert_eq!(references(&second), refs);
    assert_eq!(
        std::fs::read(&sbom_path).unwrap(),
        sbom,
        "same image, same SBOM"
    );
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("files: 0 written, 0 removed"),
        "{}",
        text(&second)
    );
    assert_eq!(repo.outputs(), files);
}

#[test]
fn a_released_version_keeps_its_operator_image() {
    let repo = Repo::new();
    let first = ok(repo.release(&[]));
    let refs = references(&first);
    let before = repo.outputs();

    // Another build of the binary (here: another program) for the released 0.2.1: the CSV,
    // the catalog and the pin stay those of the release, and the release says so.
    let other = ok(repo.release(&["--operator-binary", "/bin/false"]));
    let other_refs = references(&other);
    assert_ne!(other_refs[0], refs[0], "{}", text(&other));
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(
        err.contains("0.2.1 is released: the CSV keeps sha256:") && !err.contains("warning:"),
        "{}",
        text(&other)
    );
    assert_eq!(other_refs[1..], refs[1..], "{}", text(&other));
    assert_eq!(repo.outputs(), before);

    // The next version pins the new build and records it.
    ok(repo.release(&[
        "--operator-binary",
        "/bin/false",
        "--version",
        "0.2.2",
        "--replaces",
        "reverse-words-operator.v0.2.1",
        "--skip-range",
        ">=0.1.0 <0.2.2",
    ]));
    let after = repo.outputs();
    let pin = String::from_utf8_lossy(&after[Path::new("olm/operator-image.yaml")]).into_owned();
    assert!(pin.contains("version: 0.2.2\n"), "{pin}");
    let csv = String::from_utf8_lossy(
        &after[Path::new("bundle/manifests/reverse-words-operator.clusterserviceversion.yaml")],
    )
    .into_owned();
    let new_pin = pin
        .lines()
        .find_map(|l| l.strip_prefix("image: "))
        .unwrap()
        .to_string();
    assert_ne!(new_pin, refs[0]);
    assert!(csv.contains(&new_pin), "{csv}");
}

#[test]
fn an_existing_template_decides_the_channels() {
    let repo = Repo::new();
    ok(repo.release(&[]));
    let before = repo.outputs();
    let cfg = repo.root().join("release.yaml");
    let config = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(&cfg, format!("{config}catalog-channel-generation: minor\n")).unwrap();
    let o = ok(repo.release(&[]));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("catalog/reverse-words-operator/template.yaml: the template has generateMajorChannels: true, generateMinorChannels: false, but release.yaml has catalog-channel-generation: minor"),
        "{}",
        text(&o)
    );
    assert_eq!(repo.outputs(), before);
}

/// Runs a failing release and checks the step it names and that nothing changed.
fn fails_at(repo: &Repo, args: &[&str], step: &str, message: &str) {
    let before = repo.outputs();
    let o = repo.release(args);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!("({step})")),
        "want step {step}:\n{}",
        text(&o)
    );
    assert!(err.contains(message), "want {message:?}:\n{}", text(&o));
    assert!(err.contains("FAILED"), "{}", text(&o));
    assert_eq!(
        repo.outputs(),
        before,
        "outputs changed after a failed release"
    );
}

#[test]
fn broken_inputs_stop_at_their_step_and_change_nothing() {
    let repo = Repo::new();
    ok(repo.release(&[]));

    // Missing operator binary: names the build command.
    fails_at(
        &repo,
        &["--operator-binary", "/nonexistent/operator"],
        "operator image",
        "cargo build --release -p true",
    );

    // A bad skipRange.
    fails_at(
        &repo,
        &["--skip-range", ">=0.1.0 <<0.2.1 junk"],
        "bundle generate + validate",
        "--skip-range \">=0.1.0 <<0.2.1 junk\": invalid version",
    );

    // Unreachable registry (nothing listens on port 1).
    fails_at(
        &repo,
        &["--registry", "127.0.0.1:1", "--retries", "0"],
        "operator image",
        "127.0.0.1:1",
    );

    // A pin file that is not one.
    let pin = std::fs::read(repo.root().join("olm/operator-image.yaml")).unwrap();
    std::fs::write(
        repo.root().join("olm/operator-image.yaml"),
        "version: 0.2.1\nimage: quay.io/reverse-words/reverse-words-operator:v0.2.1\n",
    )
    .unwrap();
    fails_at(
        &repo,
        &[],
        "operator image",
        "olm/operator-image.yaml: image \"quay.io/reverse-words/reverse-words-operator:v0.2.1\" is not pinned by digest",
    );
    std::fs::write(repo.root().join("olm/operator-image.yaml"), pin).unwrap();

    // An invalid CSV base.
    std::fs::write(
        repo.root().join("olm/csv-base.yaml"),
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: [not, a, map]\n",
    )
    .unwrap();
    fails_at(&repo, &[], "bundle generate + validate", "csv-base.yaml");
}

#[test]
fn a_breaking_crd_change_stops_the_release() {
    let repo = Repo::new();
    ok(repo.release(&[]));
    let next = [
        "--version",
        "0.2.2",
        "--replaces",
        "reverse-words-operator.v0.2.1",
        "--skip-range",
        ">=0.1.0 <0.2.2",
    ];
    // A tighter maximum on spec.replicas: objects stored with 51..100 could not be updated.
    let manifests = repo.root().join("manifests/operator.yaml");
    let yaml = std::fs::read_to_string(&manifests).unwrap();
    assert!(yaml.contains("maximum: 100.0"));
    std::fs::write(&manifests, yaml.replace("maximum: 100.0", "maximum: 50.0")).unwrap();
    fails_at(
        &repo,
        &next,
        "crd upgrade check",
        "error [maximum] reversewordsapps.apps.linuxera.org version v1alpha1 ^.spec.replicas: maximum: constraint decreased from 100 to 50",
    );
    // A looser one is compatible: the release goes through and says what it compared.
    std::fs::write(&manifests, yaml.replace("maximum: 100.0", "maximum: 200.0")).unwrap();
    let o = ok(repo.release(&next));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("1 CRD(s) safe to upgrade from reverse-words-operator.v0.2.1"),
        "{}",
        text(&o)
    );
}

#[test]
fn release_to_a_registry() {
    if !registry::have("docker-registry") || !registry::have("skopeo") {
        return;
    }
    let Some(reg) = Registry::start(Variant::Plain) else {
        registry::prerequisite::missing("cannot start docker-registry");
        return;
    };
    let repo = Repo::new();
    let out = bootstrap(&repo, &["--registry", &reg.addr]);
    let refs = references(&out);
    assert_eq!(refs.len(), 3, "{}", text(&out));
    // Pushed images are referenced where they were pushed.
    let operator_repo = format!("{}/reverse-words/reverse-words-operator", reg.addr);
    assert!(
        refs[0].starts_with(&format!("{operator_repo}@sha256:")),
        "{}",
        text(&out)
    );
    assert!(refs[1].starts_with(&format!("{}/rw/bundle@sha256:", reg.addr)));
    assert!(refs[2].starts_with(&format!("{}/rw/catalog@sha256:", reg.addr)));

    // Another build for the released version is refused before anything is pushed: the
    // registry would then hold an operator image the released CSV does not run.
    fails_at(
        &repo,
        &["--registry", &reg.addr, "--operator-binary", "/bin/false"],
        "operator image",
        "a released version cannot change",
    );

    // skopeo sees every pushed image with the digest we reported (the refused release
    // overwrote no tag).
    for (r, repo_path) in refs.iter().zip([
        "reverse-words/reverse-words-operator",
        "rw/bundle",
        "rw/catalog",
    ]) {
        let digest = r.split('@').nth(1).unwrap();
        let mut args = vec!["inspect".to_string()];
        args.extend(reg.skopeo_inspect_args());
        args.push(format!("docker://{}/{repo_path}:0.2.1", reg.addr));
        let o = registry::skopeo(&args);
        let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(info["Digest"], digest, "{repo_path}");
    }

    // A second release pushes nothing new, reports the same digests and writes nothing.
    let before = repo.outputs();
    let again = ok(repo.release(&["--registry", &reg.addr]));
    assert_eq!(references(&again), refs);
    assert_eq!(repo.outputs(), before);
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("files: 0 written, 0 removed"),
        "{}",
        text(&again)
    );
    assert!(
        String::from_utf8_lossy(&again.stdout).contains("manifest unchanged"),
        "{}",
        text(&again)
    );

    // The pushed catalog image, pulled and unpacked, renders to what catalog/ renders to.
    let rootfs = tempfile::tempdir().unwrap();
    let catalog_tag = format!("{}/rw/catalog:0.2.1", reg.addr);
    ok(Command::new(OLM)
        .args(["image", "pull", &catalog_tag, "--rootfs"])
        .arg(rootfs.path())
        .args(reg.olm_args())
        .output()
        .unwrap());
    let pushed = ok(Command::new(OLM)
        .args(["catalog", "render", "--migrate-level", "none"])
        .arg(rootfs.path().join("configs"))
        .output()
        .unwrap());
    let local = ok(Command::new(OLM)
        .args(["catalog", "render", "--migrate-level", "none"])
        .arg(repo.root().join("catalog"))
        .output()
        .unwrap());
    assert!(!pushed.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&pushed.stdout),
        String::from_utf8_lossy(&local.stdout)
    );

    // `olm catalog serve` on the pulled catalog answers for the package and its head bundle,
    // whose CSV runs the pushed operator image by digest.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = Server(
        Command::new(OLM)
            .args(["catalog", "serve", "--host", "127.0.0.1", "--port"])
            .arg(port.to_string())
            .arg(rootfs.path().join("configs"))
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        let mut client = loop {
            match RegistryClient::connect(format!("http://127.0.0.1:{port}")).await {
                Ok(c) => break c.max_decoding_message_size(64 << 20),
                Err(e) => {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "serve never came up: {e}"
                    );
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        };
        let pkg = loop {
            match client
                .get_package(api::GetPackageRequest {
                    name: "reverse-words-operator".into(),
                })
                .await
            {
                Ok(p) => break p.into_inner(),
                Err(e) => {
                    assert!(std::time::Instant::now() < deadline, "GetPackage: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        };
        assert_eq!(pkg.default_channel_name, "stable-v0");
        for name in ["candidate-v0", "fast-v0", "stable-v0"] {
            let ch = pkg
                .channels
                .iter()
                .find(|c| c.name == name)
                .unwrap_or_else(|| panic!("channel {name} in {:?}", pkg.channels));
            assert_eq!(ch.csv_name, "reverse-words-operator.v0.2.1", "{name}");
        }
        let bundle = client
            .get_bundle(api::GetBundleRequest {
                pkg_name: "reverse-words-operator".into(),
                channel_name: "stable-v0".into(),
                csv_name: "reverse-words-operator.v0.2.1".into(),
            })
            .await
            .unwrap()
            .into_inner();
        let csv: serde_json::Value = serde_json::from_str(&bundle.csv_json).unwrap();
        // The catalog carries the whole CSV (olm.bundle.object), so its install strategy runs
        // the operator image just pushed, by digest.
        let deployments = csv["spec"]["install"]["spec"]["deployments"]
            .as_array()
            .unwrap_or_else(|| panic!("no install strategy in {}", bundle.csv_json));
        let images: Vec<&str> = deployments
            .iter()
            .flat_map(|d| {
                d["spec"]["template"]["spec"]["containers"]
                    .as_array()
                    .into_iter()
                    .flatten()
            })
            .filter_map(|c| c["image"].as_str())
            .collect();
        assert_eq!(images, vec![refs[0].as_str()], "{}", bundle.csv_json);
        assert_eq!(
            csv["metadata"]["annotations"]["containerImage"].as_str(),
            Some(refs[0].as_str())
        );
        // Every manifest of the bundle is served (CSV and CRD).
        assert_eq!(bundle.object.len(), 2, "{:?}", bundle.object);
        assert_eq!(bundle.bundle_path, refs[1]);
        // In its one channel, 0.2.1 replaces the previous minor's head and skips 0.2.0 (the
        // semver template's z-stream edges): OLM upgrades 0.1.0 and 0.2.0 straight to it.
        for from in [
            "reverse-words-operator.v0.1.0",
            "reverse-words-operator.v0.2.0",
        ] {
            let next = client
                .get_bundle_that_replaces(api::GetReplacementRequest {
                    csv_name: from.into(),
                    pkg_name: "reverse-words-operator".into(),
                    channel_name: "stable-v0".into(),
                })
                .await
                .unwrap_or_else(|e| panic!("GetBundleThatReplaces {from}: {e}"))
                .into_inner();
            assert_eq!(next.csv_name, "reverse-words-operator.v0.2.1", "{from}");
        }
    });
    drop(server);
}

struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM first, so the server removes its temporary cache as users' servers do;
        // SIGKILL only when it has not stopped after a few seconds.
        if let Ok(pid) = i32::try_from(self.0.id()) {
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while std::time::Instant::now() < deadline {
                if matches!(self.0.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What the library reports, in order.
#[derive(Default)]
struct Recorded(Vec<String>);

impl olm_bundler::ops::release::Reporter for Recorded {
    fn begin(&mut self, package: &str, version: &str, _: &Path, destination: &str) {
        self.0
            .push(format!("begin {package} {version} -> {destination}"));
    }
    fn step(&mut self, n: usize, total: usize, name: &str) {
        self.0.push(format!("step {n}/{total} {name}"));
    }
    fn done(&mut self, _: &str) {
        self.0.push("done".into());
    }
    fn warning(&mut self, text: &str) {
        self.0.push(format!("warning {text}"));
    }
    fn file(&mut self, path: &Path, removed: bool) {
        self.0.push(format!("file {} {removed}", path.display()));
    }
}

/// `olm release` as a library call (`ops::release`): every step reported in order, the
/// outputs written once, nothing written on a second run; a failing step is a
/// `ReleaseError::Stopped` naming it, with the rows so far.
#[tokio::test]
async fn release_runs_as_a_library_call() {
    use olm_bundler::ops::release::{self, ReleaseError, ReleaseRequest};
    let repo = Repo::new();
    let req = ReleaseRequest {
        config: repo.root().join("release.yaml"),
        version: None,
        replaces: None,
        no_replaces: false,
        skip_range: None,
        no_skip_range: false,
        channels: vec![],
        operator_binary: None,
        registry: None,
        registry_opts: Default::default(),
        olm_binary: PathBuf::from(OLM),
        sign_key: None,
        skip_checks: false,
    };
    let mut rec = Recorded::default();
    let out = release::release(&req, &mut rec).await.unwrap();
    let steps: Vec<&String> = rec.0.iter().filter(|l| l.starts_with("step ")).collect();
    assert_eq!(steps.len(), 10, "{:?}", rec.0);
    assert_eq!(steps[0], "step 1/10 operator manifests");
    assert_eq!(steps[9], "step 10/10 deploy manifests");
    assert_eq!(out.rows.len(), 10);
    assert!(out.rows.iter().all(|r| r.ok));
    let kinds: Vec<&str> = out.images.iter().map(|m| m.what).collect();
    assert_eq!(kinds, ["operator", "bundle", "catalog"]);
    assert!(out.written > 0);
    assert_eq!(out.package, "reverse-words-operator");
    assert!(
        out.catalog
            .bundles
            .iter()
            .any(|b| b.name == "reverse-words-operator.v0.2.1")
    );

    let again = release::release(&req, &mut Recorded::default())
        .await
        .unwrap();
    assert_eq!(again.written, 0, "a second release writes nothing");

    let broken = ReleaseRequest {
        operator_binary: Some(repo.root().join("no-such-binary")),
        ..req
    };
    match release::release(&broken, &mut Recorded::default()).await {
        Err(ReleaseError::Stopped {
            rows, index, step, ..
        }) => {
            assert_eq!((index, step), (2, "operator image"));
            assert_eq!(rows.len(), 2);
            assert!(!rows[1].ok);
        }
        other => panic!("expected a stopped release, got {other:?}"),
    }
}

/// `--quiet` (global, before or after the subcommand): no progress lines or summary on stderr,
/// the images still on stdout; warnings and errors still shown.
#[test]
fn quiet_release_prints_results_only() {
    let repo = Repo::new();
    let o = repo.release(&["--quiet", "--graph", "none"]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("[1/9]") && !err.contains("files:"), "{err}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("operator") && out.contains("@sha256:"),
        "{out}"
    );
}

/// By default the release writes the upgrade graph's picture next to the image layouts and
/// prints its path and one line per channel; no wall of graph text.
#[test]
fn release_writes_the_graph_picture_and_a_channel_summary() {
    let repo = Repo::new();
    let o = ok(repo.release(&[]));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !out.contains("graph LR") && !out.contains("digraph"),
        "{out}"
    );
    let picture = out
        .lines()
        .find_map(|l| l.strip_prefix("  picture: "))
        .unwrap_or_else(|| panic!("no picture line: {out}"));
    let picture = repo.root().join(picture);
    assert!(picture.ends_with("graph.svg"), "{}", picture.display());
    let svg = std::fs::read_to_string(&picture).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("reverse-words-operator"));
    let channels: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("  reverse-words-operator/"))
        .collect();
    assert!(!channels.is_empty(), "{out}");
    for c in &channels {
        assert!(
            c.contains(": head reverse-words-operator.v") && c.contains(" bundle"),
            "{c}"
        );
    }
    assert!(channels.iter().any(|c| c.ends_with("(default)")), "{out}");
}

/// A fresh clone on another machine: the operator and `olm` binaries differ in their bytes
/// (here: another program, and olm with one more byte), so the images built differ; the
/// released version keeps the images it was released with, deploy/ and every other output
/// stay as they were, and nothing is a warning.
#[tokio::test]
async fn another_machine_releasing_an_unchanged_checkout_changes_nothing() {
    use olm_bundler::ops::release::{self, ReleaseRequest};
    let repo = Repo::new();
    let req = ReleaseRequest {
        config: repo.root().join("release.yaml"),
        version: None,
        replaces: None,
        no_replaces: false,
        skip_range: None,
        no_skip_range: false,
        channels: vec![],
        operator_binary: None,
        registry: None,
        registry_opts: Default::default(),
        olm_binary: PathBuf::from(OLM),
        sign_key: None,
        skip_checks: false,
    };
    let first = release::release(&req, &mut Recorded::default())
        .await
        .unwrap();
    let released = repo.outputs();
    let pin = String::from_utf8_lossy(&released[Path::new("olm/catalog-image.yaml")]).into_owned();
    assert!(
        pin.contains(&format!("image: {}\n", first.images[2].pinned)),
        "{pin}"
    );

    let other_olm = repo.root().join("other-olm");
    let mut bytes = std::fs::read(OLM).unwrap();
    bytes.push(0);
    std::fs::write(&other_olm, bytes).unwrap();
    let elsewhere = ReleaseRequest {
        operator_binary: Some(PathBuf::from("/bin/false")),
        olm_binary: other_olm,
        ..req
    };
    let mut rec = Recorded::default();
    let again = release::release(&elsewhere, &mut rec).await.unwrap();
    assert_ne!(again.images[0].pinned, first.images[0].pinned);
    assert_ne!(again.images[2].pinned, first.images[2].pinned);
    assert_eq!(repo.outputs(), released, "the tree changed");
    assert_eq!(again.written, 0);
    assert!(
        !rec.0.iter().any(|l| l.starts_with("warning")),
        "{:?}",
        rec.0
    );
    let catalog_row = again
        .rows
        .iter()
        .find(|r| r.step == "catalog image")
        .unwrap();
    assert!(
        catalog_row
            .detail
            .contains("deploy/ keeps the released sha256:"),
        "{}",
        catalog_row.detail
    );

    // A changed catalog (a new version) records the new catalog image.
    let next = ReleaseRequest {
        version: Some("0.2.2".into()),
        replaces: Some("reverse-words-operator.v0.2.1".into()),
        skip_range: Some(">=0.1.0 <0.2.2".into()),
        ..elsewhere
    };
    let out = release::release(&next, &mut Recorded::default())
        .await
        .unwrap();
    let pin = std::fs::read_to_string(repo.root().join("olm/catalog-image.yaml")).unwrap();
    assert!(
        pin.contains(&format!("image: {}\n", out.images[2].pinned)),
        "{pin}"
    );
    let cs = std::fs::read_to_string(repo.root().join("deploy/olm/catalogsource.yaml")).unwrap();
    assert!(cs.contains(&out.images[2].pinned), "{cs}");
}

/// A python3 with cryptography and PyNaCl for tests/support/cosign_check.py.
fn python() -> Option<&'static str> {
    let found = ["/usr/bin/python3", "python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import cryptography, nacl.secret"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        registry::prerequisite::missing(
            "python3 with cryptography and nacl (python3-cryptography, python3-nacl)",
        );
    }
    found
}

/// `olm` with the signing key's password in the environment.
fn signing(args: &[&str], dir: &Path) -> Output {
    Command::new(OLM)
        .args(args)
        .current_dir(dir)
        .env("COSIGN_PASSWORD", "release-pw")
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .output()
        .unwrap()
}

#[test]
fn a_signed_release_signs_every_image_it_pushes() {
    if !registry::have("docker-registry") {
        return;
    }
    let Some(reg) = Registry::start(Variant::Plain) else {
        return;
    };
    let repo = Repo::new();
    let root = repo.root();
    ok(signing(&["image", "generate-key-pair"], root));
    let config = root.join("release.yaml").display().to_string();
    let first = [
        "release",
        "--config",
        &config,
        "--version",
        "0.1.0",
        "--no-replaces",
        "--no-skip-range",
    ];
    let mut args = first.to_vec();
    args.extend(["--registry", &reg.addr, "--sign-key", "cosign.key"]);
    let out = ok(signing(&args, root));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        stdout.contains("identity"),
        "the summary lists the signatures: {}",
        text(&out)
    );
    let refs = references(&out);
    assert_eq!(refs.len(), 3, "{}", text(&out));
    // The signature table, row by row: each image (all single-platform here) signed once for
    // its repository, and the operator's SBOM attested once.
    let table: Vec<Vec<&str>> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("image     digest"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    let mut want: Vec<Vec<String>> = Vec::new();
    for (what, r) in ["operator", "bundle", "catalog"].iter().zip(&refs) {
        let (repository, digest) = r.split_once('@').unwrap();
        let short = format!("sha256:{}", &digest[7..19]);
        want.push(vec![
            what.to_string(),
            short.clone(),
            "signature".into(),
            repository.into(),
        ]);
        if *what == "operator" {
            want.push(vec![
                what.to_string(),
                short,
                "https://spdx.dev/Document".into(),
                repository.into(),
            ]);
        }
    }
    assert_eq!(table, want, "the signature table: {stdout}");
    ok(signing(
        &[
            "image",
            "verify-attestation",
            &refs[0],
            "--key",
            "cosign.pub",
            "--type",
            "spdxjson",
        ],
        root,
    ));
    // An independent verifier accepts the bundle image's signature.
    if let Some(py) = python() {
        let (repository, digest) = refs[1].split_once('@').unwrap();
        let path = repository.split_once('/').unwrap().1;
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/cosign_check.py");
        let check = Command::new(py)
            .arg(script)
            .args([
                "verify",
                &format!("http://{}/{path}", reg.addr),
                digest,
                &root.join("cosign.pub").display().to_string(),
                repository,
            ])
            .output()
            .unwrap();
        assert!(check.status.success(), "cosign_check.py verify: {check:?}");
    }
    for r in &refs {
        let repository = r.split('@').next().unwrap();
        ok(signing(
            &[
                "image",
                "verify",
                r,
                "--key",
                "cosign.pub",
                "--identity",
                repository,
            ],
            root,
        ));
    }

    // A release to layouts signs with release.yaml's signing block, into the layouts.
    let layouts = Repo::new();
    let root = layouts.root();
    for f in ["cosign.key", "cosign.pub"] {
        std::fs::copy(repo.root().join(f), root.join(f)).unwrap();
    }
    let config = root.join("release.yaml").display().to_string();
    let first = [
        "release",
        "--config",
        &config,
        "--version",
        "0.1.0",
        "--no-replaces",
        "--no-skip-range",
    ];
    let mut cfg = std::fs::read_to_string(root.join("release.yaml")).unwrap();
    cfg.push_str("signing:\n  key: cosign.key\n");
    std::fs::write(root.join("release.yaml"), cfg).unwrap();
    let out = ok(signing(&first, root));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("sign images"),
        "{}",
        text(&out)
    );
    for (what, repository) in [
        ("operator", "quay.io/reverse-words/reverse-words-operator"),
        ("bundle", "quay.io/rw/bundle"),
        ("catalog", "quay.io/rw/catalog"),
    ] {
        let layout = format!(
            "oci:{}:0.1.0",
            root.join("target/images").join(what).display()
        );
        ok(signing(
            &[
                "image",
                "verify",
                &layout,
                "--key",
                "cosign.pub",
                "--identity",
                repository,
            ],
            root,
        ));
    }

    // A wrong password stops the release before any step.
    let wrong = Command::new(OLM)
        .args(first)
        .current_dir(root)
        .env("COSIGN_PASSWORD", "nope")
        .output()
        .unwrap();
    assert_eq!(wrong.status.code(), Some(1), "{}", text(&wrong));
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("wrong password"),
        "{}",
        text(&wrong)
    );
}
