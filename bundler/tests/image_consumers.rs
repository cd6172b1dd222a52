//! Commands that take an image instead of a directory pull it first: `olm bundle validate` and
//! `olm catalog render` on a bundle image and a catalog image in an OCI layout give the same
//! results as on the directories they were built from.

use std::path::Path;
use std::process::Command;

fn olm(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .env("SOURCE_DATE_EPOCH", "0")
        .output()
        .expect("run olm");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
        .to_string_lossy()
        .into_owned()
}

#[test]
fn bundle_image_validates_and_renders_like_its_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let layout = format!("oci:{}:v1", tmp.path().join("layout").display());
    let bundle = repo("bundle");
    let (ok, _, err) = olm(&["bundle", "build", &bundle, "-t", &layout]);
    assert!(ok, "{err}");

    let (ok, out, err) = olm(&[
        "bundle",
        "validate",
        &layout,
        "--select-optional",
        "all",
        "--strict",
    ]);
    assert!(ok, "{out}{err}");
    assert!(out.contains(&layout), "report names the image: {out}");

    let (ok, from_dir, err) = olm(&["catalog", "render", &bundle, "--image", &layout]);
    assert!(ok, "{err}");
    let (ok, from_image, err) = olm(&["catalog", "render", &layout]);
    assert!(ok, "{err}");
    assert_eq!(from_dir, from_image);
}

#[test]
fn catalog_image_renders_like_its_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    let bundle = repo("bundle");
    let (ok, fbc, err) = olm(&[
        "catalog",
        "render",
        &bundle,
        "--image",
        "quay.io/example/bundle:v0.2.1",
        "-o",
        "yaml",
    ]);
    assert!(ok, "{err}");
    std::fs::create_dir_all(catalog.join("reverse-words-operator")).unwrap();
    std::fs::write(catalog.join("reverse-words-operator/bundles.yaml"), &fbc).unwrap();
    std::fs::write(
        catalog.join("reverse-words-operator/package.yaml"),
        format!("---\nschema: olm.package\nname: reverse-words-operator\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: reverse-words-operator\nname: stable\nentries:\n- name: reverse-words-operator.v{}\n", repo_version()),
    )
    .unwrap();

    let layout = format!("oci:{}:v1", tmp.path().join("layout").display());
    let (ok, _, err) = olm(&["catalog", "build", catalog.to_str().unwrap(), "-t", &layout]);
    assert!(ok, "{err}");
    let (ok, from_dir, err) = olm(&["catalog", "render", catalog.to_str().unwrap()]);
    assert!(ok, "{err}");
    let (ok, from_image, err) = olm(&["catalog", "render", &layout]);
    assert!(ok, "{err}");
    assert_eq!(from_dir, from_image);
}

#[test]
fn a_missing_image_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let layout = format!("oci:{}:nope", tmp.path().display());
    let (ok, _, err) = olm(&["catalog", "render", &layout]);
    assert!(!ok);
    assert!(err.contains("cannot pull"), "{err}");
}

/// The version the repository's bundle config releases (operator/olm/bundle.yaml).
fn repo_version() -> String {
    let cfg = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../operator/olm/bundle.yaml"),
    )
    .unwrap();
    cfg.lines()
        .find_map(|l| l.strip_prefix("version: "))
        .unwrap()
        .trim()
        .to_string()
}
