//! `olm release` end to end, as a user runs it: the `olm` binary on a temporary repository
//! (the release fixtures: the operator's manifests and CSV base), with the project's release
//! build of the operator as the packaged binary when it exists (`/bin/true` otherwise).
//!
//! - `release/layouts warm`: nothing changes (every output identical, nothing written).
//! - `release/layouts cold`: the OCI layouts removed before each run.
//! - `release/registry warm`: pushed to a local docker-registry that already has everything.
//! - `release/registry cold`: a fresh registry and a fresh repository for each run.
//!
//! `cargo bench -p olm-bundler --bench release`. The registry rows need `docker-registry`;
//! without it they print a SKIP line. Peak RSS and CPU: scripts/bench-release.sh.

#[path = "../tests/support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

const OLM: &str = env!("CARGO_BIN_EXE_olm");

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/release")
}

fn operator_binary() -> PathBuf {
    let built =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/release/reverse-words-operator");
    if built.is_file() {
        built
    } else {
        println!("note: no release build of the operator; packaging /bin/true");
        PathBuf::from("/bin/true")
    }
}

/// A repository with release.yaml, the bundle config, CSV base and manifests.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    for sub in ["olm", "manifests", "plain"] {
        std::fs::create_dir_all(root.join(sub)).expect("mkdir");
    }
    std::fs::copy(
        fixtures().join("reverse-words-operator.clusterserviceversion.yaml"),
        root.join("olm/csv-base.yaml"),
    )
    .expect("copy CSV base");
    for sub in ["manifests", "plain"] {
        std::fs::copy(
            fixtures().join(sub).join("operator.yaml"),
            root.join(sub).join("operator.yaml"),
        )
        .expect("copy manifests");
    }
    std::fs::write(
        root.join("olm/bundle.yaml"),
        "csv-base: csv-base.yaml\npackage: reverse-words-operator\nversion: 0.2.1\n\
         channels: [stable-v0, fast-v0, candidate-v0]\ndefault-channel: stable-v0\n\
         replaces: reverse-words-operator.v0.2.0\nskip-range: \">=0.1.0 <0.2.1\"\n\
         min-kube-version: 1.25.0\noutput: ../bundle\n",
    )
    .expect("write bundle.yaml");
    std::fs::write(
        root.join("release.yaml"),
        format!(
            "bundle-config: olm/bundle.yaml\nmanifests:\n  dir: manifests\n\
             operator-binary: {}\n\
             images:\n  operator: quay.io/reverse-words/reverse-words-operator\n  bundle: quay.io/rw/bundle\n  catalog: quay.io/rw/catalog\n\
             pin-operator-image: true\npinned-operator-image: olm/operator-image.yaml\n\
             catalog-channels: [candidate, fast, stable]\ncatalog: catalog\nlayouts: target/images\n\
             deploy:\n  output: deploy\n  namespace: rw\n  manifests:\n    dir: plain\n",
            operator_binary().display()
        ),
    )
    .expect("write release.yaml");
    dir
}

fn release(root: &Path, extra: &[&str]) {
    let out = Command::new(OLM)
        .arg("release")
        .arg("--config")
        .arg(root.join("release.yaml"))
        .args(["--graph", "none"])
        .args(extra)
        .output()
        .expect("run olm release");
    assert!(
        out.status.success(),
        "olm release failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn layouts(c: &mut Criterion) {
    let mut g = c.benchmark_group("release");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(30));
    let r = repo();
    release(r.path(), &[]);
    g.bench_function("layouts warm", |b| b.iter(|| release(r.path(), &[])));
    g.bench_function("layouts cold", |b| {
        b.iter_batched(
            || {
                let _ = std::fs::remove_dir_all(r.path().join("target/images"));
            },
            |()| release(r.path(), &[]),
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

fn pushes(c: &mut Criterion) {
    if !registry::have("docker-registry") {
        return;
    }
    let mut g = c.benchmark_group("release");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(30));
    let Some(reg) = registry::Registry::start(registry::Variant::Plain) else {
        return;
    };
    let r = repo();
    release(r.path(), &["--registry", &reg.addr]);
    g.bench_function("registry warm", |b| {
        b.iter(|| release(r.path(), &["--registry", &reg.addr]))
    });
    g.bench_function("registry cold", |b| {
        b.iter_batched(
            || {
                let reg = registry::Registry::start(registry::Variant::Plain)
                    .expect("docker-registry starts");
                (reg, repo())
            },
            |(reg, r)| {
                release(r.path(), &["--registry", &reg.addr]);
                (reg, r)
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, layouts, pushes);
criterion_main!(benches);
