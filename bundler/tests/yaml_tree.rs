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
