//! The direct YAML-to-tree path (`yaml::parse_value`) gives exactly serde-saphyr's value (or
//! error) for every YAML document we have: the shared real catalogs and bundles, the project's
//! own generated files, the test fixtures and a synthetic catalog.

use std::path::{Path, PathBuf};

use olm_bundler::catalog::{load, synth};
use olm_bundler::yaml;
use serde_json::Value;

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(p);
        }
    }
}

/// Compares both parsers on every document of `file`; returns the number of documents.
fn compare(file: &Path) -> usize {
    let bytes = std::fs::read(file).unwrap();
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return 0;
    };
    let docs = load::yaml_documents(text);
    for (line, doc) in &docs {
        let fast = yaml::parse_value(file, doc);
        let slow: Result<Value, _> = yaml::parse_one(file, doc);
        match (fast, slow) {
            (Ok(a), Ok(b)) => assert!(a == b, "{}:{line}: values differ", file.display()),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{}:{line}: {a:?} vs {b:?}", file.display()),
        }
    }
    docs.len()
}

#[test]
fn every_yaml_document_reads_the_same_as_with_serde_saphyr() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        manifest.join("../bundle"),
        manifest.join("../catalog"),
        manifest.join("../deploy"),
        manifest.join("../operator/olm"),
        manifest.join("tests/fixtures"),
        manifest.join("../../shared/data"),
        manifest.join("../../../shared/data"),
    ] {
        yaml_files(&dir, &mut files);
    }
    let synthetic = tempfile::tempdir().unwrap();
    let shape = synth::Shape {
        packages: 6,
        bundles_per_package: 10,
    };
    synth::write(synthetic.path(), &shape, synth::Syntax::Yaml).unwrap();
    yaml_files(synthetic.path(), &mut files);
    let docs: usize = files.iter().map(|f| compare(f)).sum();
    assert!(docs > 100, "only {docs} documents compared");
}

/// serde-saphyr gives up on a long run of comments while looking ahead (found by the
/// `yaml_tree` fuzz target); the fast readers must then report its error, not a value.
#[test]
fn long_comment_runs_get_serde_saphyrs_verdict() {
    for n in [10, 20, 95, 96, 97, 200] {
        let doc = format!("a:\n{}  b: 1\nc: 2\n", "  # note\n".repeat(n));
        let path = Path::new("c.yaml");
        let fast = yaml::parse_value(path, &doc);
        let slow: Result<Value, _> = yaml::parse_one(path, &doc);
        match (fast, slow) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{n} comments"),
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
            (a, b) => panic!("{n} comments: {a:?} vs {b:?}"),
        }
    }
    let crash = "annotaTions:\n".to_string()
        + &"  # io.bundle.mamework.io.bundle,metadata.v0.bundle.channel.Core bTiions:\n".repeat(60)
        + "  apiVersion: v1\n  kind: ReverseWordsApp\n";
    let fast = yaml::parse_value(Path::new("f.yaml"), &crash);
    let slow: Result<Value, _> = yaml::parse_one(Path::new("f.yaml"), &crash);
    assert_eq!(fast.is_ok(), slow.is_ok());
}
