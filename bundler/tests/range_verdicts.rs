//! `olm bundle validate` and `olm catalog validate` must agree on every `olm.skipRange`: both
//! read it with blang/semver v4 `ParseRange`, so a release cannot pass the bundle step and fail
//! the catalog step. Each range goes through both commands; the expected verdicts are blang's
//! (see the table in `grammar::semver_range`).

use std::path::{Path, PathBuf};
use std::process::Command;

use olm_bundler::bundle::generate::{self, GenerateInput, GenerateOptions, input};
use olm_bundler::yaml;
use serde_json::{Value, json};

const CSV: &str = "manifests/reverse-words-operator.clusterserviceversion.yaml";

/// `(range, blang accepts it)`.
const RANGES: &[(&str, bool)] = &[
    // The 13 inputs of issue #14.
    (">1.0.0 <2", false),
    (">=1", false),
    ("1", false),
    ("1.2.*", false),
    ("*", false),
    ("x", false),
    ("=>1.0", false),
    ("1.0.0 - 2.0.0", true),
    (">=1.0.0 <2.0.0", true),
    ("1.x", true),
    ("1.2.x", true),
    (">= 1.0.0 < 2.0.0", true),
    ("~1.2.3", false),
    // More corners.
    ("^1.2.3", false),
    ("1.X", false),
    ("1.0.0-x", false),
    (">=1.0.0-beta.x", true),
    ("<2.0.0 || >=3.0.0", true),
    ("<2.0.0||>=3.0.0", false),
    (">v0.1.0", false),
    (">=01.0.0", false),
    ("!1.0.0", true),
    ("1.0.0 x", true),
    (">=4.1.0 <4.1.5-0", true),
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundle")
}

/// The fixture operator generated into `dir` (it passes `olm bundle validate`).
fn generate_bundle(dir: &Path) {
    let base_path = fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml");
    let input = GenerateInput {
        manifests: input::read_dir(&fixtures().join("operator")).unwrap(),
        csv_base: yaml::load_one(&base_path).unwrap(),
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
            scorecard_image: None,
            extra_service_accounts: vec![],
            created_at: "2026-01-01T00:00:00Z".into(),
            related_images_from_containers: false,
            fill_crd_descriptions: false,
            image_digests: None,
        },
        previous: None,
    };
    let g = generate::generate(&input).unwrap();
    g.tree.write(dir, &generate::OWNED_DIRS).unwrap();
}

fn set_skip_range(bundle: &Path, range: &str) {
    let path = bundle.join(CSV);
    let mut v: Value = yaml::load_one(&path).unwrap();
    v["metadata"]["annotations"]["olm.skipRange"] = json!(range);
    std::fs::write(&path, yaml::to_yaml(&v).unwrap()).unwrap();
}

fn catalog(range: &str) -> String {
    let bundle = |name: &str, version: &str, extra: &str| {
        format!(
            "---\nschema: olm.bundle\nname: {name}\npackage: foo\nimage: quay.io/x/foo-bundle:{version}\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: {version}}}\n{extra}"
        )
    };
    format!(
        "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n---\nschema: olm.channel\npackage: foo\nname: stable\nentries:\n- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n  skipRange: {}\n{}{}",
        serde_json::to_string(range).unwrap(),
        bundle("foo.v0.1.0", "0.1.0", ""),
        bundle("foo.v0.2.0", "0.2.0", ""),
    )
}

/// Runs `olm <args>`; true when it exits 0, with its output for failure messages.
fn olm_accepts(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .output()
        .expect("run olm");
    let code = out.status.code().unwrap_or(-1);
    assert!(code == 0 || code == 1, "olm {args:?} exited {code}");
    (
        code == 0,
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn bundle_and_catalog_validate_agree_with_blang_on_every_range() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("bundle");
    generate_bundle(&bundle);
    let (ok, out) = olm_accepts(&["bundle", "validate", bundle.to_str().unwrap()]);
    assert!(ok, "the fixture bundle must validate: {out}");

    let catalog_dir = tmp.path().join("catalog");
    std::fs::create_dir_all(catalog_dir.join("foo")).unwrap();
    let mut wrong = Vec::new();
    for (range, blang) in RANGES {
        set_skip_range(&bundle, range);
        let (by_bundle, bundle_out) =
            olm_accepts(&["bundle", "validate", bundle.to_str().unwrap()]);
        std::fs::write(catalog_dir.join("foo/catalog.yaml"), catalog(range)).unwrap();
        let (by_catalog, catalog_out) =
            olm_accepts(&["catalog", "validate", catalog_dir.to_str().unwrap()]);
        if by_bundle != *blang || by_catalog != *blang {
            wrong.push(format!(
                "{range:?}: blang {blang}, bundle validate {by_bundle}, catalog validate {by_catalog}\n{bundle_out}\n{catalog_out}"
            ));
        }
        if !blang {
            assert!(
                bundle_out.contains("skipRange") && catalog_out.contains("skipRange"),
                "{range:?}: both errors name the field:\n{bundle_out}\n{catalog_out}"
            );
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
