//! `olm catalog render` streams (each blob written to a spill as it is read, then copied out in
//! opm's order) and writes exactly what rendering the whole catalog in memory writes: JSON and
//! YAML of every shared catalog tree and of every catalog directory among opm's own fixtures
//! (../shared/data/peer-fixtures), several inputs at once (packages spread over inputs, a
//! bundle directory among them), and a migration.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};
use std::process::Command;

use olm_bundler::catalog::declcfg::DeclarativeConfig;
use olm_bundler::catalog::render::{self, MigrateLevel};

fn shared() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.is_dir());
    if found.is_none() {
        prerequisite::missing(&format!("shared data beside {}", manifest.display()));
    }
    found
}

/// The catalog directories among the peer fixtures opm rendered, and every shared catalog.
fn catalogs(data: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let cases = std::fs::read_to_string(data.join("peer-fixtures/expected/cases.jsonl")).unwrap();
    for line in cases.lines() {
        let case: serde_json::Value = serde_json::from_str(line).unwrap();
        if case["kind"] == "render" && case["variant"] == "fbc" {
            let input = case["input"].as_str().unwrap();
            out.push(data.join("peer-fixtures").join(input));
        }
    }
    for repo in ["certified-operators", "community-operators-prod"] {
        let dir = data.join("catalogs").join(repo).join("catalogs");
        let mut versions: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        versions.sort();
        out.extend(versions);
    }
    out
}

/// What `olm catalog render` wrote before it streamed: every input rendered into one config
/// in memory, migrated, then written.
fn in_memory(inputs: &[PathBuf], level: MigrateLevel, yaml: bool) -> Vec<u8> {
    let mut cfg = DeclarativeConfig::default();
    for i in inputs {
        cfg.merge(render::render_ref(&i.to_string_lossy()).unwrap());
    }
    render::migrate(&mut cfg, level);
    match yaml {
        true => cfg.to_go_yaml().into_bytes(),
        false => cfg.to_json().into_bytes(),
    }
}

fn streamed(inputs: &[PathBuf], extra: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(["catalog", "render"])
        .args(inputs)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{inputs:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn streamed_render_writes_what_the_in_memory_render_wrote() {
    let Some(data) = shared() else { return };
    let fixtures = data.join("peer-fixtures/operator-registry/alpha/action/testdata");
    let mut cases: Vec<(Vec<PathBuf>, MigrateLevel)> = catalogs(&data)
        .into_iter()
        .map(|c| (vec![c], MigrateLevel::None))
        .collect();
    assert!(cases.len() >= 20, "only {} catalogs found", cases.len());
    // Packages spread over several inputs, and a bundle directory among them.
    cases.push((
        vec![
            fixtures.join("list-index"),
            fixtures.join("bar-bundle-v0.1.0"),
            fixtures.join("index-declcfgs/latest"),
            fixtures.join("list-index/foo"),
        ],
        MigrateLevel::None,
    ));
    cases.push((
        vec![data.join("catalogs/certified-operators/catalogs/v4.16")],
        MigrateLevel::BundleObjectToCsvMetadata,
    ));
    let mut different = Vec::new();
    for (inputs, level) in &cases {
        for yaml in [false, true] {
            let mut args = vec!["-o", if yaml { "yaml" } else { "json" }];
            if *level == MigrateLevel::BundleObjectToCsvMetadata {
                args.extend(["--migrate-level", "bundle-object-to-csv-metadata"]);
            }
            if streamed(inputs, &args) != in_memory(inputs, *level, yaml) {
                different.push(format!("{inputs:?} {args:?}"));
            }
        }
    }
    assert!(different.is_empty(), "different:\n{}", different.join("\n"));
}

/// Nothing reaches stdout when an input fails: every failing file is named, as before.
#[test]
fn a_failing_input_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let good = tmp.path().join("good");
    std::fs::create_dir_all(good.join("a")).unwrap();
    std::fs::write(
        good.join("a/catalog.yaml"),
        "schema: olm.package\nname: a\n---\nschema: olm.channel\npackage: a\nname: stable\nentries: []\n",
    )
    .unwrap();
    std::fs::create_dir_all(good.join("b")).unwrap();
    std::fs::write(
        good.join("b/catalog.json"),
        "{\"schema\": \"olm.package\", ",
    )
    .unwrap();
    std::fs::write(good.join("c.yaml"), "schema: [\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(["catalog", "render"])
        .arg(&good)
        .args(["-o", "json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("b/catalog.json") && err.contains("c.yaml"),
        "{err}"
    );
}
