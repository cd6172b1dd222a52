//! Catalog benchmarks: load + validate of synthetic catalogs in opm's benchmark shape (YAML
//! and JSON) and of the real catalogs in ../shared/data, and rendering (bundle directory to
//! `olm.bundle`, catalog to JSON). Peak memory is measured separately on the release binary
//! (see BENCHMARKS.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use olm_bundler::catalog::render::{Form, render_bundle_dir};
use olm_bundler::catalog::{load, validate};

#[path = "../tests/support/synth.rs"]
mod synth;

fn shared() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_dir())
}

fn load_validate(dir: &Path) -> usize {
    let cfg = load::load_dir(dir).expect("catalog loads");
    let report = validate::validate(&cfg);
    assert!(!report.has_errors(), "{}", report.to_text());
    cfg.bundles.len()
}

fn benches(c: &mut Criterion) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let yaml = tmp.path().join("yaml");
    let json = tmp.path().join("json");
    synth::write(&yaml, &synth::Shape::opm(1), synth::Syntax::Yaml).expect("write yaml");
    synth::write(&json, &synth::Shape::opm(1), synth::Syntax::Json).expect("write json");

    let mut g = c.benchmark_group("catalog_load_validate");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("synthetic_1x_yaml", |b| b.iter(|| load_validate(&yaml)));
    g.bench_function("synthetic_1x_json", |b| b.iter(|| load_validate(&json)));
    if let Some(data) = shared() {
        let catalogs = data.join("catalogs");
        g.bench_function("shared_catalogs_all_trees", |b| {
            b.iter(|| {
                let mut n = 0;
                for repo in ["community-operators-prod", "certified-operators"] {
                    for v in ["v4.16", "v4.18", "v4.20"] {
                        let t = catalogs.join(repo).join("catalogs").join(v);
                        if t.is_dir() {
                            n += load_validate(&t);
                        }
                    }
                }
                n
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("catalog_render");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    if let Some(data) = shared() {
        let bundle =
            data.join("render-pairs/community-operators-prod/operators/kairos-operator/2.2.0");
        g.bench_function("bundle_dir_csv_metadata", |b| {
            b.iter(|| {
                render_bundle_dir(&bundle, "quay.io/x/y:1", Form::CsvMetadata).expect("render")
            })
        });
        g.bench_function("bundle_dir_bundle_objects", |b| {
            b.iter(|| {
                render_bundle_dir(&bundle, "quay.io/x/y:1", Form::BundleObjects).expect("render")
            })
        });
    }
    let cfg = load::load_dir(&json).expect("load");
    g.bench_function("synthetic_1x_write_json", |b| {
        b.iter(|| cfg.to_json().len())
    });
    // `render -o yaml`: go-yaml v2's bytes, as opm writes them.
    g.bench_function("synthetic_1x_write_yaml_as_opm", |b| {
        b.iter(|| cfg.to_go_yaml().len())
    });
    g.finish();
}

criterion_group!(catalog, benches);
criterion_main!(catalog);
