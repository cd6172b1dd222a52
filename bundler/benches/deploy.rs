//! `olm deploy generate` without process start-up: parse the operator's manifest stream, build
//! the OLM objects and the whole `deploy/` tree in memory, and diff it against a written copy
//! (what `--check` does in CI); and the registry half of `olm install --bundle`: from a bundle
//! image in a local registry (distribution 2.8 on 127.0.0.1) to its one-bundle catalog image
//! pushed, cold (new repository: every blob uploaded) and warm (re-run: nothing uploaded).
//!
//! Run: `cargo bench -p olm-bundler --bench deploy`. The `deploy/bundle` rows need
//! `docker-registry`; without it they are skipped with a SKIP line.

#[path = "../tests/support/registry.rs"]
mod registry;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use olm_bundler::bundle::image::build_bundle_image;
use olm_bundler::deploy::bundle_catalog::CatalogBuild;
use olm_bundler::deploy::bundle_flow::{self, BundleInstall};
use olm_bundler::deploy::flow::Silent;
use olm_bundler::deploy::generate::{self, GenerateOptions};
use olm_bundler::deploy::objects::{
    Approval, CatalogServing, CatalogSpec, InstallMode, InstallSpec, Targets,
};
use olm_bundler::image::reference::ImageRef;
use olm_bundler::image::registry::RegistryOptions;
use olm_bundler::image::transfer;

fn spec() -> InstallSpec {
    let ns = "reverse-words-operator";
    InstallSpec {
        package: "reverse-words-operator".into(),
        namespace: ns.into(),
        channel: Some("stable".into()),
        starting_csv: None,
        approval: Approval::Automatic,
        mode: InstallMode::OwnNamespace,
        targets: Targets::resolve(InstallMode::OwnNamespace, ns, &[]).expect("targets"),
        catalog: CatalogSpec {
            name: "reverse-words-operator-catalog".into(),
            serving: CatalogServing::Image {
                image: "quay.io/reverse-words/reverse-words-operator-catalog:latest".into(),
                poll_interval: Some("10m".into()),
            },
            display_name: "Reverse Words Operator".into(),
            publisher: Some("reverse-words".into()),
        },
        operator_group_name: "reverse-words-operator-og".into(),
    }
}

fn bench(c: &mut Criterion) {
    let manifests = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/deploy/reverse-words-manifests.yaml"),
    )
    .expect("fixture");
    c.bench_function("deploy/generate_reverse_words_tree", |b| {
        b.iter(|| {
            let plain = generate::parse_manifests("<stdin>", black_box(&manifests)).expect("parse");
            let g = generate::generate(&GenerateOptions {
                spec: spec(),
                plain: Some(plain),
                olmv1: None,
            })
            .expect("generate");
            black_box(g.tree.len())
        })
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = generate::parse_manifests("<stdin>", &manifests).expect("parse");
    let g = generate::generate(&GenerateOptions {
        spec: spec(),
        plain: Some(plain),
        olmv1: None,
    })
    .expect("generate");
    g.tree.write(dir.path(), &g.owned_dirs).expect("write");
    c.bench_function("deploy/check_up_to_date_tree", |b| {
        b.iter(|| black_box(g.tree.diff_against(dir.path(), &g.owned_dirs).len()))
    });
}

/// The deploy tests' bundle template as package `demo`, version 1.0.0.
fn demo_bundle(root: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/deploy/bundle-template");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(root.join(sub)).expect("mkdir");
        for e in std::fs::read_dir(src.join(sub)).expect("fixture") {
            let e = e.expect("entry");
            let body = std::fs::read_to_string(e.path())
                .expect("read")
                .replace("@PACKAGE@", "demo")
                .replace("@VERSION@", "1.0.0");
            std::fs::write(root.join(sub).join(e.file_name()), body).expect("write");
        }
    }
    root.to_path_buf()
}

fn bundle_to_catalog(c: &mut Criterion) {
    let Some(reg) = registry::Registry::start(registry::Variant::Plain) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let tmp = tempfile::tempdir().expect("tempdir");
    let bundle_ref = reg.image("demo-bundle:v1.0.0");
    let image = build_bundle_image(&demo_bundle(tmp.path()), 0).expect("bundle image");
    rt.block_on(transfer::store(
        &ImageRef::parse(&bundle_ref).expect("ref"),
        &image.into(),
        &RegistryOptions::default(),
    ))
    .expect("push bundle");
    // /bin/true stands in for the olm binary the catalog image carries: these rows measure
    // pull, render, validate, catalog image build and push; the binary's own layer costs what
    // image/layer's throughput row says per MiB.
    let req = |index: String| BundleInstall {
        bundle_image: bundle_ref.clone(),
        index_image: Some(index),
        channel: None,
        package: None,
        build: CatalogBuild {
            olm_binary: PathBuf::from("/bin/true"),
            ca_bundle: None,
            created: 0,
            labels: Default::default(),
            registry: RegistryOptions::default(),
        },
    };
    let counter = AtomicU64::new(0);
    let mut g = c.benchmark_group("deploy/bundle");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("bundle_image_to_pushed_catalog_cold", |b| {
        b.iter(|| {
            let n = counter.fetch_add(1, Ordering::Relaxed);
            let r = req(reg.image(&format!("bench/index-{n}:v1")));
            rt.block_on(bundle_flow::prepare_install(&r, &mut Silent))
                .expect("prepare")
        })
    });
    let warm = req(reg.image("bench/index-warm:v1"));
    rt.block_on(bundle_flow::prepare_install(&warm, &mut Silent))
        .expect("prepare");
    g.bench_function("bundle_image_to_pushed_catalog_warm", |b| {
        b.iter(|| {
            rt.block_on(bundle_flow::prepare_install(&warm, &mut Silent))
                .expect("prepare")
        })
    });
    g.finish();
}

criterion_group!(benches, bench, bundle_to_catalog);
criterion_main!(benches);
