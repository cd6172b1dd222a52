//! Bundle generate + validate speed: the fixture operator (the shape of the project's own
//! bundle) generated in memory and validated on disk, and the default suite over every real
//! bundle in shared/data/bundles.
//!
//! `cargo bench -p olm-bundler --bench bundle`

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use olm_bundler::bundle::generate::{self, GenerateInput, GenerateOptions, input};
use olm_bundler::bundle::validate::{Options, Suite, validate_dir};
use olm_bundler::yaml;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundle")
}

fn fixture_input() -> GenerateInput {
    let base_path = fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml");
    GenerateInput {
        manifests: input::read_dir(&fixtures().join("operator")).expect("fixture manifests"),
        csv_base: yaml::load_one(&base_path).expect("fixture CSV base"),
        csv_base_path: base_path,
        options: GenerateOptions {
            package: "reverse-words-operator".into(),
            version: semver::Version::new(0, 2, 1),
            channels: vec!["stable".into()],
            default_channel: Some("stable".into()),
            replaces: None,
            skips: vec![],
            skip_range: None,
            min_kube_version: Some("1.25.0".into()),
            scorecard_image: Some(generate::DEFAULT_SCORECARD_IMAGE.into()),
            extra_service_accounts: vec![],
            related_images_from_containers: true,
            fill_crd_descriptions: false,
            image_digests: None,
            created_at: "2026-01-01T00:00:00Z".into(),
        },
        previous: None,
    }
}

fn shared_bundles() -> Vec<PathBuf> {
    let Some(root) = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/data/bundles"))
        .find(|p| p.is_dir())
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for repo in std::fs::read_dir(&root).into_iter().flatten().flatten() {
        for pkg in std::fs::read_dir(repo.path().join("operators"))
            .into_iter()
            .flatten()
            .flatten()
        {
            for ver in std::fs::read_dir(pkg.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if ver.path().is_dir() {
                    out.push(ver.path());
                }
            }
        }
    }
    out.sort();
    out
}

fn bench(c: &mut Criterion) {
    let input = fixture_input();
    c.bench_function("bundle/generate fixture (in memory)", |b| {
        b.iter(|| generate::generate(&input).expect("generate"))
    });

    let dir = tempfile::tempdir().expect("tempdir");
    generate::generate(&input)
        .expect("generate")
        .tree
        .write(dir.path(), &generate::OWNED_DIRS)
        .expect("write");
    let all = Options {
        suites: Suite::ALL.into_iter().collect(),
        ..Default::default()
    };
    c.bench_function("bundle/validate fixture (all suites)", |b| {
        b.iter(|| validate_dir(dir.path(), &all).expect("validate"))
    });
    c.bench_function("bundle/generate+write+validate fixture", |b| {
        b.iter(|| {
            let out = tempfile::tempdir().expect("tempdir");
            generate::generate(&input)
                .expect("generate")
                .tree
                .write(out.path(), &generate::OWNED_DIRS)
                .expect("write");
            validate_dir(out.path(), &Options::default()).expect("validate")
        })
    });

    let bundles = shared_bundles();
    if bundles.is_empty() {
        println!("SKIP: shared/data/bundles not found; shared-bundle benchmark not run");
        return;
    }
    let mut group = c.benchmark_group("bundle/validate shared");
    group.sample_size(20);
    group.bench_function(
        format!("all {} bundles (default suite)", bundles.len()),
        |b| {
            b.iter(|| {
                for dir in &bundles {
                    validate_dir(dir, &Options::default()).expect("validate");
                }
            })
        },
    );
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
