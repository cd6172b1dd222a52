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

/// The opm output for a shared bundle directory, parsed, after checking that writing it back
/// gives opm's bytes (so the expected outputs derived from it below are opm's bytes too).
fn expected_bundle(data: &Path, rel: &str) -> olm_bundler::catalog::declcfg::DeclarativeConfig {
    let path = data.join(format!("opm-expected/render/bundles/{rel}.json.gz"));
    let bytes = gunzip(&path);
    let cfg = olm_bundler::catalog::load::load_bytes(Path::new("opm.json"), &bytes).unwrap();
    assert_eq!(
        cfg.to_json().as_bytes(),
        bytes.as_slice(),
        "{rel}: writing opm's output back changes it"
    );
    cfg
}

fn olm_ok(args: &[String]) -> Vec<u8> {
    let (ok, out, err) = olm(args);
    assert!(ok, "olm {}: {err}", args.join(" "));
    out
}

/// A bundle image renders as opm 1.73 renders it (no flags): as its directory does, every
/// manifest an `olm.bundle.object`, with the image recorded as the bundle's `image` and added
/// to `relatedImages` (name empty), which opm sorts by image. Each shared bundle is built into
/// an OCI layout with `olm bundle build`; where the sort meets no two entries of one image,
/// the order is the sorted one, whatever the algorithm.
#[test]
fn bundle_images_render_as_opm_renders_them() {
    let Some(data) = shared() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let exp = data.join("opm-expected/render/bundles");
    let mut compared = 0;
    for f in files(&exp, ".json.gz") {
        let rel = f.strip_prefix(&exp).unwrap().to_string_lossy().into_owned();
        let Some(rel) = rel
            .strip_suffix(".json.gz")
            .filter(|r| !r.ends_with(".csv-metadata"))
        else {
            continue;
        };
        let mut cfg = expected_bundle(&data, rel);
        let layout = tmp.path().join(format!("layout-{compared}"));
        let image = format!("oci:{}:v1", layout.display());
        let dir = data.join("bundles").join(rel);
        olm_ok(&[
            "bundle".into(),
            "build".into(),
            dir.to_string_lossy().into_owned(),
            "-t".into(),
            image.clone(),
        ]);
        let b = &mut cfg.bundles[0];
        b.image = image.clone();
        b.related_images
            .push(olm_bundler::catalog::declcfg::RelatedImage {
                name: String::new(),
                image: image.clone(),
            });
        let mut images: Vec<&str> = b.related_images.iter().map(|r| r.image.as_str()).collect();
        images.sort();
        images.dedup();
        assert_eq!(
            images.len(),
            b.related_images.len(),
            "{rel}: an image twice"
        );
        b.related_images.sort_by(|x, y| x.image.cmp(&y.image));
        let want = cfg.to_json();
        let ours = olm_ok(&["catalog".into(), "render".into(), image.clone()]);
        assert!(
            ours == want.as_bytes(),
            "{rel}: {}",
            first_difference(&ours, want.as_bytes())
        );
        compared += 1;
    }
    assert!(compared >= 19, "only {compared} bundles");
}

/// A copy of a shared bundle with `edit` applied to its CSV (and metadata files added).
fn edited_bundle(
    data: &Path,
    rel: &str,
    edit: impl Fn(&mut serde_json::Value),
    metadata: &[(&str, &str)],
) -> tempfile::TempDir {
    let src = data.join("bundles").join(rel);
    let tmp = tempfile::tempdir().unwrap();
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(tmp.path().join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let p = e.unwrap().path();
            let to = tmp.path().join(sub).join(p.file_name().unwrap());
            if p.to_string_lossy().contains("clusterserviceversion") {
                let mut csv: serde_json::Value = olm_bundler::yaml::load_one(&p).unwrap();
                edit(&mut csv);
                std::fs::write(&to, olm_bundler::yaml::to_yaml(&csv).unwrap()).unwrap();
                continue;
            }
            std::fs::copy(&p, &to).unwrap();
        }
    }
    for (file, text) in metadata {
        std::fs::write(tmp.path().join("metadata").join(file), text).unwrap();
    }
    tmp
}

fn rendered(dir: &Path) -> olm_bundler::catalog::declcfg::DeclarativeConfig {
    let out = olm_ok(&[
        "catalog".into(),
        "render".into(),
        dir.to_string_lossy().into_owned(),
    ]);
    olm_bundler::catalog::load::load_bytes(Path::new("olm.json"), &out).unwrap()
}

fn related_names(cfg: &olm_bundler::catalog::declcfg::DeclarativeConfig) -> Vec<String> {
    cfg.bundles[0]
        .related_images
        .iter()
        .map(|r| r.name.clone())
        .collect()
}

/// One image listed under two names in a real CSV: opm's `sort.Slice` decides their order.
/// - Five entries (stackgres): insertion sort, which keeps the CSV's order: `stackgres_operator`
///   before `stackgres-operator`, although `-` sorts before `_`.
/// - Twenty-two entries (fujitsu, its `feputils` image again as `fep-utils` right after it):
///   traced by hand through Go's pdqsort: the pivot is position 5 (pgpool2; positions 5, 10, 15
///   hold ranks 11, 14, 9), and partitioning swaps `feputils` (position 1) to 20 and
///   `fep-utils` (position 2) to 19; insertion sort of the right part keeps them so:
///   `fep-utils` first, where a stable sort keeps `feputils` first.
#[test]
fn related_images_of_one_image_come_out_in_go_sort_order() {
    let Some(data) = shared() else { return };
    let dup = |name: &'static str, at: usize, of: usize| {
        move |csv: &mut serde_json::Value| {
            let list = csv["spec"]["relatedImages"].as_array_mut().unwrap();
            let image = list[of]["image"].clone();
            list.insert(at, serde_json::json!({"name": name, "image": image}));
        }
    };
    let stackgres = "community-operators-prod/operators/stackgres-community/1.18.8";
    let dir = edited_bundle(&data, stackgres, dup("stackgres_operator", 1, 1), &[]);
    assert_eq!(
        related_names(&rendered(dir.path())),
        [
            "kubectl_1_31_3",
            "stackgres-admin-ui",
            "stackgres_operator",
            "stackgres-operator",
            "stackgres-restapi"
        ]
    );
    let fujitsu = "certified-operators/operators/fujitsu-enterprise-postgres-operator/v5.1.9";
    let dir = edited_bundle(&data, fujitsu, dup("fep-utils", 2, 1), &[]);
    assert_eq!(
        related_names(&rendered(dir.path())),
        [
            "backup-13",
            "fepexporter-13",
            "pgpool2-13",
            "restore-13",
            "fep-13",
            "backup-14",
            "pgpool2-14",
            "restore-14",
            "fep-14",
            "upgrade-14",
            "backup",
            "pgpool2",
            "restore",
            "fep",
            "upgrade",
            "cronjob",
            "exporter",
            "fluentbit",
            "fluentd",
            "operator",
            "fep-utils",
            "feputils"
        ]
    );
}

/// A real bundle given a `metadata/properties.yaml` with the constraint a real catalog
/// carries (kernel-module-management >=2.4.0): opm's YAML-to-JSON conversion escapes `>` in
/// every string of the value, nested ones included, and the property sorts first.
#[test]
fn properties_yaml_values_are_escaped_as_opm_escapes_them() {
    let Some(data) = shared() else { return };
    let rel = "community-operators-prod/operators/stackgres-community/1.18.8";
    let dir = edited_bundle(
        &data,
        rel,
        |_| {},
        &[(
            "properties.yaml",
            "properties:\n  - type: olm.constraint\n    value:\n      failureMessage: Require kernel-module-management >=2.4.0\n      package:\n        packageName: kernel-module-management\n        versionRange: '>=2.4.0'\n",
        )],
    );
    let mut want = expected_bundle(&data, rel);
    let props = &mut want.bundles[0].properties;
    assert!(props[0].ty.as_str() > "olm.constraint", "{}", props[0].ty);
    let raw = r#"{"failureMessage":"Require kernel-module-management \u003e=2.4.0","package":{"packageName":"kernel-module-management","versionRange":"\u003e=2.4.0"}}"#;
    props.insert(
        0,
        olm_bundler::catalog::property::Property::from_raw(
            "olm.constraint".into(),
            serde_json::value::RawValue::from_string(raw.into()).unwrap(),
        ),
    );
    let want = want.to_json();
    let ours = olm_ok(&[
        "catalog".into(),
        "render".into(),
        dir.path().to_string_lossy().into_owned(),
    ]);
    assert!(
        ours == want.as_bytes(),
        "{}",
        first_difference(&ours, want.as_bytes())
    );
    assert!(want.contains(r#""versionRange": "\u003e=2.4.0""#));
}
