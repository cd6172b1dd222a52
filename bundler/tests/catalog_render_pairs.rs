//! Acceptance: rendering the bundle directories of ../shared/data/render-pairs gives the blobs
//! opm published (v4.16: `olm.bundle.object` form; v4.20: `olm.csv.metadata` form), property
//! for property. Bundles are matched by name; the `image:` is taken from the published blob
//! (it cannot be known from a directory). Ordering: properties are compared in order, except
//! that opm emits `olm.bundle.object`s in its own manifest walk order (not by file name), so in
//! the v4.16 form the properties are compared as a set; JSON object keys are compared as maps
//! (opm writes YAML with sorted keys).

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use olm_bundler::catalog::declcfg::Bundle;
use olm_bundler::catalog::load;
use olm_bundler::catalog::render::{Form, render_bundle_dir};
use olm_bundler::grammar::go_base64 as b64;
use serde_json::Value;

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

/// Compares two property lists; bundle objects are compared decoded (as parsed JSON).
fn normalise(b: &Bundle) -> Vec<(String, Value)> {
    b.properties
        .iter()
        .map(|p| {
            if p.ty == "olm.bundle.object" {
                let data = p.str_field("data").unwrap_or_default();
                let bytes = b64::decode(&data).expect("base64");
                let v: Value = serde_json::from_slice(&bytes).expect("json object");
                (p.ty.clone(), v)
            } else {
                (p.ty.clone(), p.value())
            }
        })
        .collect()
}

fn check(version: &str, form: Form) {
    let Some(data) = shared() else { return };
    let root = data.join("render-pairs/community-operators-prod");
    let mut compared = 0;
    for pkg in ["kairos-operator", "ecr-secret-operator"] {
        let published =
            load::load_dir(&root.join(format!("catalogs/{version}/{pkg}"))).expect("catalog");
        let by_name: BTreeMap<&str, &Bundle> = published
            .bundles
            .iter()
            .map(|b| (b.name.as_str(), b))
            .collect();
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join(format!("operators/{pkg}")))
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("manifests").is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let probe = render_bundle_dir(&dir, "", form).expect("render");
            let Some(expected) = by_name.get(probe.name.as_str()) else {
                continue; // released after this catalog snapshot
            };
            let ours = render_bundle_dir(&dir, &expected.image, form).expect("render");
            assert_eq!(ours.package, expected.package);
            assert_eq!(ours.image, expected.image);
            let (a, b) = (normalise(&ours), normalise(expected));
            let types_a: Vec<_> = a.iter().map(|p| p.0.as_str()).collect();
            let types_b: Vec<_> = b.iter().map(|p| p.0.as_str()).collect();
            if form == Form::BundleObjects {
                // opm orders bundle objects by its own file walk; compare them as a set.
                let mut sa = a.clone();
                let mut sb = b.clone();
                sa.sort_by_key(|p| format!("{}{}", p.0, p.1));
                sb.sort_by_key(|p| format!("{}{}", p.0, p.1));
                pretty_assertions::assert_eq!(sa, sb, "{}", dir.display());
            } else {
                pretty_assertions::assert_eq!(types_a, types_b, "{}", dir.display());
                for (x, y) in a.iter().zip(b.iter()) {
                    pretty_assertions::assert_eq!(x, y, "{}", dir.display());
                }
            }
            pretty_assertions::assert_eq!(ours.related_images, expected.related_images);
            compared += 1;
        }
    }
    assert!(compared >= 8, "compared only {compared} bundles");
}

#[test]
fn csv_metadata_form_matches_v4_20() {
    check("v4.20", Form::CsvMetadata);
}

#[test]
fn bundle_object_form_matches_v4_16() {
    check("v4.16", Form::BundleObjects);
}
