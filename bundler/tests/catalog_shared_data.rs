//! Acceptance: every real catalog of ../shared/data/catalogs loads and validates as opm does
//! (each package directory and each `<repo>/catalogs/<version>/` tree as a whole).

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};

use olm_bundler::catalog::{load, model::Model, validate};

/// The shared data: `$OLM_SHARED_DATA`, else `../shared/data` beside the checkout (also
/// looked up one level higher, for git worktrees kept in a subdirectory).
fn shared() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.is_dir());
    if found.is_none() {
        prerequisite::missing(&format!(
            "shared data not found beside {}",
            manifest.display()
        ));
    }
    found
}

fn dirs(p: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(p)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `<repo>/catalogs/<version>` trees of a data folder.
fn version_trees(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for repo in dirs(root) {
        out.extend(dirs(&repo.join("catalogs")));
    }
    out
}

#[test]
fn every_shared_catalog_validates() {
    let Some(data) = shared() else { return };
    let mut checked = 0;
    for tree in version_trees(&data.join("catalogs")) {
        let mut targets = vec![tree.clone()];
        targets.extend(dirs(&tree));
        for t in targets {
            let cfg = load::load_dir(&t).unwrap_or_else(|e| panic!("{}: {e}", t.display()));
            let report = validate::validate(&cfg);
            assert!(
                !report.has_errors(),
                "{}:\n{}",
                t.display(),
                report.to_text()
            );
            Model::from_declcfg(&cfg).expect("model builds");
            checked += 1;
        }
    }
    assert!(checked >= 16, "only {checked} catalogs found");
}

#[test]
fn render_pairs_catalogs_validate() {
    let Some(data) = shared() else { return };
    for tree in version_trees(&data.join("render-pairs")) {
        let cfg = load::load_dir(&tree).unwrap_or_else(|e| panic!("{}: {e}", tree.display()));
        let report = validate::validate(&cfg);
        assert!(
            !report.has_errors(),
            "{}:\n{}",
            tree.display(),
            report.to_text()
        );
    }
}
