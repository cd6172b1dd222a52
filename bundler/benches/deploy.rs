//! `olm deploy generate` without process start-up: parse the operator's manifest stream, build
//! the OLM objects and the whole `deploy/` tree in memory, and diff it against a written copy
//! (what `--check` does in CI).
//!
//! Run: `cargo bench -p olm-bundler --bench deploy`.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use olm_bundler::deploy::generate::{self, GenerateOptions};
use olm_bundler::deploy::objects::{Approval, CatalogSpec, InstallMode, InstallSpec, Targets};

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
            image: "quay.io/reverse-words/reverse-words-operator-catalog:latest".into(),
            display_name: "Reverse Words Operator".into(),
            publisher: Some("reverse-words".into()),
            poll_interval: Some("10m".into()),
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
    })
    .expect("generate");
    g.tree.write(dir.path(), &g.owned_dirs).expect("write");
    c.bench_function("deploy/check_up_to_date_tree", |b| {
        b.iter(|| black_box(g.tree.diff_against(dir.path(), &g.owned_dirs).len()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
