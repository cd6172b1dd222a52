//! Differential: `olm catalog render` writes exactly the bytes opm 1.73 wrote for every input
//! in ../shared/data/opm-expected/render (its README lists the opm command behind each file):
//! every shared bundle directory (default form and `--migrate-level
//! bundle-object-to-csv-metadata`), every shared catalog tree (JSON and YAML) and the
//! render-pairs packages (all bundle directories of a package at once, YAML). Prints a tally
//! of identical/different inputs, then fails naming every different one and its first
//! differing line.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

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

fn gunzip(path: &Path) -> Vec<u8> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(f)
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    out
}

fn files(root: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().filter_map(Result::ok) {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn olm(args: &[String]) -> (bool, Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .output()
        .expect("run olm");
    (
        out.status.success(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The first line where two outputs differ, for the failure message.
fn first_difference(ours: &[u8], opm: &[u8]) -> String {
    let (a, b) = (String::from_utf8_lossy(ours), String::from_utf8_lossy(opm));
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            let cut = |s: &str| s.chars().take(160).collect::<String>();
            return format!("line {}:\n  olm: {}\n  opm: {}", i + 1, cut(x), cut(y));
        }
    }
    format!(
        "lengths differ: olm {} bytes, opm {} bytes",
        ours.len(),
        opm.len()
    )
}

struct Case {
    name: String,
    args: Vec<String>,
    expected: PathBuf,
}

fn cases(data: &Path) -> Vec<Case> {
    let exp = data.join("opm-expected/render");
    let s = |p: &Path| p.to_string_lossy().into_owned();
    let mut out = Vec::new();
    for f in files(&exp.join("bundles"), ".json.gz") {
        let rel = f
            .strip_prefix(exp.join("bundles"))
            .unwrap()
            .to_string_lossy();
        let rel = rel.trim_end_matches(".json.gz");
        let (bundle, migrate) = match rel.strip_suffix(".csv-metadata") {
            Some(b) => (b, true),
            None => (rel, false),
        };
        let mut args = vec![
            "catalog".into(),
            "render".into(),
            s(&data.join("bundles").join(bundle)),
            "-o".into(),
            "json".into(),
        ];
        if migrate {
            args.extend([
                "--migrate-level".into(),
                "bundle-object-to-csv-metadata".into(),
            ]);
        }
        out.push(Case {
            name: format!("bundle {rel}"),
            args,
            expected: f,
        });
    }
    for f in files(&exp.join("catalogs"), ".gz") {
        let rel = f
            .strip_prefix(exp.join("catalogs"))
            .unwrap()
            .to_string_lossy();
        let rel = rel.trim_end_matches(".gz");
        let (tree, format) = rel.rsplit_once('.').unwrap();
        out.push(Case {
            name: format!("catalog {rel}"),
            args: vec![
                "catalog".into(),
                "render".into(),
                s(&data.join("catalogs").join(tree)),
                "-o".into(),
                format.into(),
            ],
            expected: f,
        });
    }
    for f in files(&exp.join("render-pairs"), ".yaml.gz") {
        let pkg = f.file_name().unwrap().to_string_lossy();
        let pkg = pkg.trim_end_matches(".yaml.gz");
        let root = data
            .join("render-pairs/community-operators-prod/operators")
            .join(pkg);
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("manifests").is_dir())
            .collect();
        dirs.sort();
        let mut args: Vec<String> = vec!["catalog".into(), "render".into()];
        args.extend(dirs.iter().map(|d| s(d)));
        args.extend(["-o".into(), "yaml".into()]);
        out.push(Case {
            name: format!("render-pairs {pkg}"),
            args,
            expected: f,
        });
    }
    out
}

#[test]
fn render_is_byte_identical_to_opm() {
    let Some(data) = shared() else { return };
    let cases = cases(&data);
    assert!(
        cases.len() >= 50,
        "only {} expected outputs found",
        cases.len()
    );
    let mut different = Vec::new();
    for c in &cases {
        let (ok, ours, err) = olm(&c.args);
        let opm = gunzip(&c.expected);
        if !ok {
            different.push(format!("{}: olm failed: {err}", c.name));
        } else if ours != opm {
            different.push(format!("{}: {}", c.name, first_difference(&ours, &opm)));
        }
    }
    println!(
        "opm render differential: identical={} different={} (of {})",
        cases.len() - different.len(),
        different.len(),
        cases.len()
    );
    assert!(
        different.is_empty(),
        "different from opm:\n{}",
        different.join("\n")
    );
}

#[test]
fn a_bundle_opm_refuses_is_refused_clearly() {
    let Some(data) = shared() else { return };
    let dir = data.join(
        "bundles/community-operators-prod/operators/jupyter-notebook-validator-operator/1.0.7",
    );
    let (ok, out, err) = olm(&[
        "catalog".into(),
        "render".into(),
        dir.to_string_lossy().into_owned(),
    ]);
    assert!(!ok, "rendered: {}", String::from_utf8_lossy(&out));
    assert!(out.is_empty());
    assert!(err.contains("needs manifests/"), "{err}");
    assert_eq!(err.lines().count(), 1, "one clear error: {err}");
}
