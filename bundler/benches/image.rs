//! Image benchmarks: layer build throughput (tar + gzip + both sha256), bundle and operator
//! image build time, and build + push to a local registry (distribution 2.8), cold (every
//! blob uploaded) and warm (nothing to upload).
//!
//! `cargo bench -p olm-bundler --bench image`. The push rows need `docker-registry`; without
//! it they are skipped with a SKIP line.

#[path = "../tests/support/registry.rs"]
mod registry;

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use olm_bundler::bundle::image::build_bundle_image;
use olm_bundler::image::layer::{LayerBuilder, Owner};
use olm_bundler::image::operator::OperatorImage;
use olm_bundler::image::reference::ImageRef;
use olm_bundler::image::registry::RegistryOptions;
use olm_bundler::image::transfer;

fn fixture_bundle() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/image/bundle")
}

/// 16 MiB that compresses like real binaries and manifests do (about 3:1): repeated YAML-ish
/// text interleaved with pseudo-random bytes.
fn sample_data() -> Vec<u8> {
    let mut out = Vec::with_capacity(16 << 20);
    let text = b"apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: example.v0.1.0\n";
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    while out.len() < 16 << 20 {
        out.extend_from_slice(text);
        for _ in 0..48 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            out.push(state as u8);
        }
    }
    out.truncate(16 << 20);
    out
}

fn layer_throughput(c: &mut Criterion) {
    let data = sample_data();
    let mut g = c.benchmark_group("image/layer");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.sample_size(10);
    g.bench_function("build_16MiB_gzip", |b| {
        b.iter(|| {
            let mut l = LayerBuilder::new(0);
            l.file("usr/local/bin/app", data.clone(), 0o755, Owner::Root)
                .unwrap();
            black_box(l.finish().unwrap())
        })
    });
    g.finish();
}

fn image_builds(c: &mut Criterion) {
    let mut g = c.benchmark_group("image/build");
    let bundle = fixture_bundle();
    g.bench_function("bundle_image", |b| {
        b.iter(|| black_box(build_bundle_image(&bundle, 0).unwrap()))
    });
    if Path::new("/bin/true").exists() {
        let spec = OperatorImage::for_binary(PathBuf::from("/bin/true")).unwrap();
        g.sample_size(20);
        g.bench_function("operator_image_bin_true", |b| {
            b.iter(|| black_box(spec.build().unwrap()))
        });
    }
    g.finish();
}

fn pushes(c: &mut Criterion) {
    let Some(reg) = registry::Registry::start(registry::Variant::Plain) else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let opts = RegistryOptions::default();
    let bundle = fixture_bundle();
    let operator = OperatorImage::for_binary(PathBuf::from("/bin/true")).unwrap();
    let counter = AtomicU64::new(0);
    let fresh = |name: &str| {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        ImageRef::parse(&reg.image(&format!("bench/{name}-{n}:v1"))).unwrap()
    };

    let mut g = c.benchmark_group("image/push");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(8));
    g.bench_function("bundle_build_push_cold", |b| {
        b.iter(|| {
            let image = build_bundle_image(&bundle, 0).unwrap();
            let dest = fresh("bundle");
            rt.block_on(transfer::store(&dest, &image.into(), &opts))
                .unwrap()
        })
    });
    let warm = ImageRef::parse(&reg.image("bench/bundle-warm:v1")).unwrap();
    let image = build_bundle_image(&bundle, 0).unwrap();
    rt.block_on(transfer::store(&warm, &image.into(), &opts))
        .unwrap();
    g.bench_function("bundle_build_push_warm", |b| {
        b.iter(|| {
            let image = build_bundle_image(&bundle, 0).unwrap();
            let stored = rt
                .block_on(transfer::store(&warm, &image.into(), &opts))
                .unwrap();
            assert!(stored.push.as_ref().unwrap().uploaded.is_empty());
            stored
        })
    });
    // Push only (the image already built): what a re-run of `olm image push` costs.
    let built = operator.build().unwrap();
    let warm_push = ImageRef::parse(&reg.image("bench/operator-pushonly:v1")).unwrap();
    rt.block_on(transfer::store(&warm_push, &built.clone().into(), &opts))
        .unwrap();
    g.bench_function("operator_push_only_warm", |b| {
        b.iter(|| {
            rt.block_on(transfer::store(&warm_push, &built.clone().into(), &opts))
                .unwrap()
        })
    });
    g.bench_function("operator_build_push_cold", |b| {
        b.iter(|| {
            let image = operator.build().unwrap();
            let dest = fresh("operator");
            rt.block_on(transfer::store(&dest, &image.into(), &opts))
                .unwrap()
        })
    });
    let warm = ImageRef::parse(&reg.image("bench/operator-warm:v1")).unwrap();
    let image = operator.build().unwrap();
    rt.block_on(transfer::store(&warm, &image.into(), &opts))
        .unwrap();
    g.bench_function("operator_build_push_warm", |b| {
        b.iter(|| {
            let image = operator.build().unwrap();
            let stored = rt
                .block_on(transfer::store(&warm, &image.into(), &opts))
                .unwrap();
            assert!(stored.push.as_ref().unwrap().uploaded.is_empty());
            stored
        })
    });
    g.finish();
}

criterion_group!(benches, layer_throughput, image_builds, pushes);
criterion_main!(benches);
