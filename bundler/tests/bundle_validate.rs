//! One small bad bundle per validator rule: each starts from the generated fixture bundle
//! (which passes every suite without warnings) and breaks one thing.

use std::path::{Path, PathBuf};

use olm_bundler::bundle::generate::{self, GenerateInput, GenerateOptions, input};
use olm_bundler::bundle::validate::{Level, Options, Report, Suite, validate_dir};
use olm_bundler::yaml;
use serde_json::{Value, json};

const CSV: &str = "manifests/reverse-words-operator.clusterserviceversion.yaml";
const CRD: &str = "manifests/apps.linuxera.org_reversewordsapps.yaml";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundle")
}

/// The fixture operator generated into a fresh temporary directory.
fn good_bundle() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
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
            related_images_from_containers: true,
            fill_crd_descriptions: false,
            image_digests: None,
            created_at: "2026-01-01T00:00:00Z".into(),
        },
        previous: None,
    };
    let g = generate::generate(&input).unwrap();
    g.tree.write(dir.path(), &generate::OWNED_DIRS).unwrap();
    dir
}

fn all_suites() -> Options {
    Options {
        suites: Suite::ALL.into_iter().collect(),
        ..Default::default()
    }
}

fn run(dir: &Path, opts: &Options) -> Report {
    validate_dir(dir, opts).unwrap()
}

fn edit(dir: &Path, rel: &str, f: impl FnOnce(&mut Value)) {
    let path = dir.join(rel);
    let mut v: Value = yaml::load_one(&path).unwrap();
    f(&mut v);
    std::fs::write(&path, yaml::to_yaml(&v).unwrap()).unwrap();
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// Asserts a finding of `level` from `validator`/`check` whose message contains `text`.
#[track_caller]
fn expect(report: &Report, level: Level, check: &str, text: &str) {
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.level == level && f.check == check && f.message.contains(text)),
        "no {level} {check} containing {text:?} in:\n{}",
        report
            .findings
            .iter()
            .map(|f| format!("  {f}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn generated_fixture_passes_every_suite_without_warnings() {
    let b = good_bundle();
    let r = run(b.path(), &all_suites());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
    assert!(r.passed(true));
}

// ---- format ----

#[test]
fn format_missing_directories() {
    let b = good_bundle();
    std::fs::remove_dir_all(b.path().join("manifests")).unwrap();
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "missing-directory",
        "Unable to locate manifests directory",
    );
    std::fs::remove_dir_all(b.path().join("metadata")).unwrap();
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "missing-directory",
        "Unable to locate metadata directory",
    );
}

#[test]
fn format_nested_dir_and_hidden_file() {
    let b = good_bundle();
    write(b.path(), "manifests/extra/x.yaml", "a: 1\n");
    write(b.path(), "manifests/.secret.yaml", "a: 1\n");
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "nested-directory",
        "bundle manifests dir contains directory: manifests/extra",
    );
    expect(
        &r,
        Level::Error,
        "hidden-file",
        "bundle manifests dir has hidden file: manifests/.secret.yaml",
    );
}

/// operator-registry reads every regular file of manifests/ whatever its name: a CRD kept as
/// `<name>.crd`, a `.yml` file and an editor's `metadata/annotations.yaml.bak` leave the
/// bundle as valid as it was (operator-sdk passes it; opm renders the same bundle).
#[test]
fn format_any_file_name_is_a_manifest() {
    let b = good_bundle();
    let m = b.path().join("manifests");
    std::fs::rename(
        m.join(CRD.trim_start_matches("manifests/")),
        m.join("reversewordsapps.crd"),
    )
    .unwrap();
    let yml = std::fs::read_dir(&m)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "yaml")
                && !p.ends_with(CSV.trim_start_matches("manifests/"))
        })
        .expect("a manifest besides the CSV");
    std::fs::rename(&yml, yml.with_extension("yml")).unwrap();
    std::fs::copy(
        b.path().join("metadata/annotations.yaml"),
        b.path().join("metadata/annotations.yaml.bak"),
    )
    .unwrap();
    let r = run(b.path(), &all_suites());
    assert!(r.findings.is_empty(), "{:#?}", r.findings);
}

/// What operator-framework/api's loader cannot decode into an object fails validation, file
/// by file: an empty file, a binary, text that is not YAML, YAML that is no object, a copy of
/// annotations.yaml (no `kind`).
#[test]
fn format_a_file_that_is_no_object_is_an_error() {
    let b = good_bundle();
    write(b.path(), "manifests/empty.yaml", "");
    std::fs::write(
        b.path().join("manifests/logo.png"),
        [0x89, b'P', b'N', b'G', 0xff, 0],
    )
    .unwrap();
    write(b.path(), "manifests/notes.txt", "key: [unclosed\n");
    write(b.path(), "manifests/list.yaml", "- a\n- b\n");
    std::fs::copy(
        b.path().join("metadata/annotations.yaml"),
        b.path().join("manifests/annotations.yaml.bak"),
    )
    .unwrap();
    let r = run(b.path(), &Options::default());
    for file in ["empty.yaml", "logo.png", "notes.txt"] {
        assert!(
            r.findings.iter().any(|f| f.level == Level::Error
                && f.check == "undecodable-file"
                && f.message.starts_with("unable to decode object: ")
                && f.file.as_deref() == Some(Path::new("manifests").join(file).as_path())),
            "{file}: {:#?}",
            r.findings
        );
    }
    expect(
        &r,
        Level::Error,
        "object",
        "expected a Kubernetes object (a map), found",
    );
    expect(&r, Level::Error, "object", "'kind' is missing");
    assert!(!r.passed(false));
}

/// opm and operator-framework/api read only the first document of a file: a later one that
/// does not parse leaves the first in the bundle, with a warning.
#[test]
fn format_a_broken_later_document_keeps_the_first() {
    let b = good_bundle();
    write(
        b.path(),
        "manifests/extra.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n---\nkind: [unclosed\n",
    );
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Warning,
        "undecodable-document",
        "only the first document decodes",
    );
    assert!(
        !r.findings.iter().any(|f| f.check == "undecodable-file"),
        "{:#?}",
        r.findings
    );
    let bd = olm_bundler::bundle::load::BundleDir::load(b.path()).unwrap();
    assert!(
        bd.manifests
            .iter()
            .any(|m| m.kind() == "ConfigMap" && m.name() == "kept")
    );
}

#[test]
fn format_annotations() {
    let b = good_bundle();
    edit(b.path(), "metadata/annotations.yaml", |v| {
        let a = v["annotations"].as_object_mut().unwrap();
        a.remove("operators.operatorframework.io.bundle.package.v1");
        a.insert(
            "operators.operatorframework.io.bundle.mediatype.v1".into(),
            json!("plain"),
        );
        a.insert(
            "operators.operatorframework.io.bundle.channels.v1".into(),
            json!(""),
        );
    });
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "annotations",
        "Missing annotation \"operators.operatorframework.io.bundle.package.v1\"",
    );
    expect(
        &r,
        Level::Error,
        "annotations",
        "to have value \"registry+v1\" instead of \"plain\"",
    );
    expect(
        &r,
        Level::Error,
        "annotations",
        "operators.operatorframework.io.bundle.channels.v1\" to have non-empty value",
    );
    std::fs::remove_file(b.path().join("metadata/annotations.yaml")).unwrap();
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "annotations",
        "Could not find annotations file",
    );
}

#[test]
fn format_csv_count() {
    let b = good_bundle();
    let csv = std::fs::read_to_string(b.path().join(CSV)).unwrap();
    write(b.path(), "manifests/copy.clusterserviceversion.yaml", &csv);
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "csv-count",
        "contains multiple CSVs",
    );
    std::fs::remove_file(b.path().join(CSV)).unwrap();
    std::fs::remove_file(b.path().join("manifests/copy.clusterserviceversion.yaml")).unwrap();
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "csv-count",
        "unable to find a csv",
    );
}

#[test]
fn format_dependencies() {
    let b = good_bundle();
    write(
        b.path(),
        "metadata/dependencies.yaml",
        "dependencies:\n- type: olm.package\n  value: {packageName: etcd, version: 'not a range'}\n- type: olm.crd\n  value: {}\n- type: olm.gvk\n  value: {group: g.io, kind: K}\n- type: olm.label\n  value: {}\n",
    );
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "dependencies",
        "Invalid semver format version",
    );
    expect(
        &r,
        Level::Error,
        "dependencies",
        "couldn't parse dependency of type olm.crd",
    );
    expect(&r, Level::Error, "dependencies", "API Version is empty");
    expect(
        &r,
        Level::Error,
        "dependencies",
        "Label information is missing",
    );
}

#[test]
fn format_unreadable_dependencies_is_a_warning_like_opm() {
    let b = good_bundle();
    write(
        b.path(),
        "metadata/dependencies.yaml",
        "dependencies:\n  - type: olm.gvk\n      value: x\n",
    );
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Warning,
        "metadata-file",
        "dependencies.yaml cannot be read",
    );
    assert!(r.passed(false) && !r.passed(true));
}

#[test]
fn format_multiple_documents_in_one_file() {
    let b = good_bundle();
    write(
        b.path(),
        "manifests/two.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
    );
    expect(
        &run(b.path(), &Options::default()),
        Level::Warning,
        "multiple-documents",
        "OLM uses only the first one",
    );
}

// ---- objects ----

#[test]
fn objects_unsupported_kind_and_bad_metadata() {
    let b = good_bundle();
    write(
        b.path(),
        "manifests/sts.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n",
    );
    write(
        b.path(),
        "manifests/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {app: -bad-}\n",
    );
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "supported-kinds",
        "StatefulSet is not supported type for registryV1 bundle: manifests/sts.yaml",
    );
    expect(
        &r,
        Level::Error,
        "object-metadata",
        "name or generateName is required",
    );
    expect(&r, Level::Error, "object-metadata", "\"-bad-\"");
    let f = r
        .findings
        .iter()
        .find(|f| f.check == "supported-kinds")
        .unwrap();
    assert_eq!(f.file.as_deref(), Some(Path::new("manifests/sts.yaml")));
    assert_eq!(f.line, Some(2), "the line of `kind`");
}

// ---- csv ----

#[test]
fn csv_names_and_required_fields() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| {
        v["metadata"]["name"] = json!("Reverse_Words.v0.2.1");
        v["spec"]["replaces"] = json!("x".repeat(70));
        v["spec"].as_object_mut().unwrap().remove("displayName");
    });
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "name",
        "metadata.name \"Reverse_Words.v0.2.1\" is invalid",
    );
    expect(&r, Level::Error, "name", "must be no more than 63 bytes");
    expect(&r, Level::Error, "required-field", "required field missing");
    assert!(
        r.findings
            .iter()
            .any(|f| f.field.as_deref() == Some("spec.displayName"))
    );
}

#[test]
fn csv_install_modes() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| v["spec"]["installModes"] = json!([]));
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "install-modes",
        "install modes not found",
    );
    edit(
        b.path(),
        CSV,
        |v| v["spec"]["installModes"] = json!([{"type": "AllNamespaces", "supported": false}, {"type": "Everywhere", "supported": true}]),
    );
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "install-modes",
        "\"Everywhere\" is not one of",
    );
    edit(b.path(), CSV, |v| {
        v["spec"]["installModes"] = json!([{"type": "AllNamespaces", "supported": false}])
    });
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "install-modes",
        "none of InstallModeTypes are supported",
    );
}

#[test]
fn csv_min_kube_version() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| {
        v["spec"]["minKubeVersion"] = json!("1.21")
    });
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "min-kube-version",
        "csv.Spec.MinKubeVersion has an invalid value: 1.21",
    );
    edit(b.path(), CSV, |v| {
        v["spec"].as_object_mut().unwrap().remove("minKubeVersion");
    });
    expect(
        &run(b.path(), &Options::default()),
        Level::Warning,
        "min-kube-version",
        "csv.Spec.minKubeVersion is not informed",
    );
}

#[test]
fn csv_annotations_and_examples() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| {
        let a = v["metadata"]["annotations"].as_object_mut().unwrap();
        a.insert("olm.targetnamespaces".into(), json!("x"));
        a.insert("olm.properties".into(), json!("[]"));
        a.insert(
            "alm-examples".into(),
            json!("[{\"apiVersion\": \"other.io/v1\", \"kind\": \"Thing\"}]"),
        );
    });
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "annotation-case",
        "provided annotation olm.targetnamespaces uses wrong case and should be olm.targetNamespaces instead",
    );
    expect(
        &r,
        Level::Warning,
        "properties-annotation",
        "found olm.properties annotation",
    );
    expect(
        &r,
        Level::Error,
        "examples",
        "example must have a provided API: other.io/v1, Kind=Thing",
    );
    expect(
        &r,
        Level::Warning,
        "examples",
        "provided API should have an example annotation: apps.linuxera.org/v1alpha1, Kind=ReverseWordsApp",
    );
    edit(b.path(), CSV, |v| {
        v["metadata"]["annotations"]["alm-examples"] = json!("[{oops")
    });
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "examples",
        "invalid example",
    );
}

#[test]
fn csv_wrong_types_are_errors_not_panics() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| {
        v["spec"]["version"] = json!(7);
        v["spec"]["installModes"] = json!("all");
        v["spec"]["keywords"] = json!({"a": 1});
        v["metadata"]["annotations"]["capabilities"] = json!(true);
    });
    let r = run(b.path(), &all_suites());
    expect(
        &r,
        Level::Error,
        "field-type",
        "must be a string, found a number",
    );
    expect(
        &r,
        Level::Error,
        "field-type",
        "must be a list, found a string",
    );
    expect(
        &r,
        Level::Error,
        "field-type",
        "annotation values must be strings",
    );
    assert!(
        r.findings
            .iter()
            .any(|f| f.field.as_deref() == Some("spec.keywords"))
    );
}

#[test]
fn csv_invalid_version() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| v["spec"]["version"] = json!("one.two"));
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "version",
        "is not a semantic version",
    );
}

// ---- crd ----

#[test]
fn crd_preserve_unknown_fields_and_v1beta1_default() {
    let b = good_bundle();
    edit(b.path(), CRD, |v| {
        v["spec"]["preserveUnknownFields"] = json!(true)
    });
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "preserve-unknown-fields",
        "cannot set to true",
    );
    // A v1beta1 CRD without the field defaults it to true.
    edit(b.path(), CRD, |v| {
        v["apiVersion"] = json!("apiextensions.k8s.io/v1beta1");
        v["spec"]
            .as_object_mut()
            .unwrap()
            .remove("preserveUnknownFields");
    });
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "preserve-unknown-fields",
        "cannot set to true",
    );
    edit(b.path(), CRD, |v| {
        v["spec"]["preserveUnknownFields"] = json!(false)
    });
    let r = run(b.path(), &Options::default());
    assert!(r.passed(false), "{:#?}", r.findings);
}

#[test]
fn findings_carry_the_line_of_their_field() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| {
        v["spec"]["installModes"][1]["type"] = json!("Somewhere")
    });
    let r = run(b.path(), &Options::default());
    let f = r
        .findings
        .iter()
        .find(|f| f.check == "install-modes")
        .unwrap();
    assert_eq!(f.field.as_deref(), Some("spec.installModes[1].type"));
    let text = std::fs::read_to_string(b.path().join(CSV)).unwrap();
    let line = text.lines().nth(f.line.unwrap() - 1).unwrap();
    assert!(
        line.contains("type: Somewhere"),
        "line {:?}: {line}",
        f.line
    );
}

#[test]
fn crd_protected_group_needs_approval() {
    let b = good_bundle();
    edit(b.path(), CRD, |v| {
        v["spec"]["group"] = json!("apps.k8s.io");
        v["metadata"]["name"] = json!("reversewordsapps.apps.k8s.io");
    });
    edit(b.path(), CSV, |v| {
        v["spec"]["customresourcedefinitions"]["owned"][0]["name"] =
            json!("reversewordsapps.apps.k8s.io");
        v["metadata"]["annotations"]["alm-examples"] = json!("[]");
    });
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "api-approval",
        "protected groups must have approval annotation \"api-approved.kubernetes.io\"",
    );
    edit(b.path(), CRD, |v| {
        v["metadata"]["annotations"]["api-approved.kubernetes.io"] =
            json!("https://github.com/kubernetes/enhancements/pull/1111")
    });
    assert!(run(b.path(), &Options::default()).errors().next().is_none());
    edit(b.path(), CRD, |v| {
        v["metadata"]["annotations"]["api-approved.kubernetes.io"] = json!("yes please")
    });
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "api-approval",
        "either a URL or a reason starting with \"unapproved\"",
    );
}

#[test]
fn crd_structure() {
    let b = good_bundle();
    edit(b.path(), CRD, |v| {
        v["metadata"]["name"] = json!("wrong.apps.linuxera.org");
        v["spec"]["scope"] = json!("Galaxy");
        let mut second = v["spec"]["versions"][0].clone();
        second["storage"] = json!(true);
        v["spec"]["versions"].as_array_mut().unwrap().push(second);
    });
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "crd",
        "must be spec.names.plural+\".\"+spec.group",
    );
    expect(
        &r,
        Level::Error,
        "crd",
        "spec.scope: Unsupported value: \"Galaxy\"",
    );
    expect(&r, Level::Error, "crd", "must contain unique version names");
    expect(
        &r,
        Level::Error,
        "crd",
        "must have exactly one version marked as storage version",
    );
}

#[test]
fn crd_group_conversion_and_api_version() {
    let b = good_bundle();
    edit(b.path(), CRD, |v| {
        v["spec"]["group"] = json!("linuxera");
        v["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}}});
    });
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "crd",
        "should be a domain with at least one dot",
    );
    expect(
        &r,
        Level::Error,
        "crd",
        "spec.conversion.conversionReviewVersions: Required value",
    );
    edit(b.path(), CRD, |v| {
        v["apiVersion"] = json!("apiextensions.k8s.io/v2")
    });
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "crd-version",
        "Unsupported api version of CRD: apiextensions.k8s.io/v2",
    );
}

// ---- bundle consistency ----

#[test]
fn bundle_owned_crd_missing_and_unowned_crd() {
    let b = good_bundle();
    std::fs::remove_file(b.path().join(CRD)).unwrap();
    write(
        b.path(),
        "manifests/extra_crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: gadgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Gadget, plural: gadgets, listKind: GadgetList, singular: gadget}\n  scope: Namespaced\n  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n",
    );
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "owned-crd-missing",
        "owned CRD \"apps.linuxera.org/v1alpha1, Kind=ReverseWordsApp\" not found in bundle \"reverse-words-operator.v0.2.1\"",
    );
    expect(
        &r,
        Level::Error,
        "crd-not-owned",
        "CRD \"example.com/v1, Kind=Gadget\" is present in bundle",
    );
}

#[test]
fn bundle_duplicate_crd() {
    let b = good_bundle();
    let crd = std::fs::read_to_string(b.path().join(CRD)).unwrap();
    write(b.path(), "manifests/copy_crd.yaml", &crd);
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "duplicate-crd",
        "duplicate CRD \"apps.linuxera.org/v1alpha1, Kind=ReverseWordsApp\"",
    );
}

#[test]
fn bundle_service_account_clash() {
    let b = good_bundle();
    write(
        b.path(),
        "manifests/sa.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: reverse-words-operator-controller-manager}\n",
    );
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "service-account",
        "This service account reverse-words-operator-controller-manager in your bundle is not valid",
    );
}

#[test]
fn bundle_related_images() {
    let b = good_bundle();
    edit(
        b.path(),
        CSV,
        |v| {
            v["spec"]["relatedImages"] =
                json!([{"name": "a", "image": ""}, {"name": "b", "image": "quay.io/Bad/Image:tag"}])
        },
    );
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "related-images",
        "relatedImages[0] has an empty image field",
    );
    expect(
        &r,
        Level::Error,
        "related-images",
        "relatedImages[1] has an invalid image pullspec \"quay.io/Bad/Image:tag\"",
    );
}

// ---- size ----

/// Incompressible text (xorshift over a 64-character alphabet).
fn noise(len: usize) -> String {
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            alphabet[(x % 64) as usize] as char
        })
        .collect()
}

#[test]
fn size_a_2mb_crd_is_a_clear_error() {
    let b = good_bundle();
    edit(b.path(), CRD, |v| {
        v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] =
            json!(noise(2 * 1024 * 1024))
    });
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "size",
        "maximum bundle compressed size with gzip size exceeded",
    );
    expect(&r, Level::Error, "size", "max=1.0 MB");
}

#[test]
fn size_near_the_limit_warns() {
    let b = good_bundle();
    // ~ 0.9 MiB after gzip+base64: the noise compresses to 6 bits per byte, base64 expands 4/3.
    edit(b.path(), CRD, |v| {
        v["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["description"] = json!(noise(940_000))
    });
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Warning,
        "size",
        "nearing maximum bundle compressed size",
    );
}

// ---- optional suites ----

#[test]
fn operatorhub_metadata() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| {
        v["spec"]["provider"] = json!({});
        v["spec"]["maintainers"] = json!([{"name": "x"}, {"name": "y", "email": "nobody"}]);
        v["spec"]["links"] = json!([{"name": "docs"}, {"name": "src", "url": "example.com/src"}]);
        v["spec"]["icon"] = json!([{"base64data": "AAAA", "mediatype": "image/bmp"}, {"base64data": "", "mediatype": "image/png"}]);
    });
    let opts = Options {
        suites: [Suite::OperatorHub].into(),
        ..Default::default()
    };
    let r = run(b.path(), &opts);
    for text in [
        "csv.Spec.Provider.Name not specified",
        "csv.Spec.Maintainers elements should contain both name and email",
        "csv.Spec.Maintainers email nobody is invalid",
        "csv.Spec.Links elements should contain both name and url",
        "csv.Spec.Links url example.com/src is invalid",
        "csv.Spec.Icon should only have one element",
        "csv.Spec.Icon image/bmp does not have a valid mediatype",
        "csv.Spec.Icon elements should contain both data and mediatype",
    ] {
        expect(&r, Level::Error, "operatorhub", text);
    }
    edit(b.path(), CSV, |v| {
        v["spec"].as_object_mut().unwrap().remove("icon");
    });
    expect(
        &run(b.path(), &opts),
        Level::Warning,
        "operatorhub",
        "csv.Spec.Icon not specified",
    );
}

#[test]
fn capabilities_and_categories() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| {
        v["metadata"]["annotations"]["capabilities"] = json!("Installs and stuff");
        v["metadata"]["annotations"]["categories"] = json!("Developer Tools, Magic");
    });
    let mut opts = Options {
        suites: [Suite::Capabilities, Suite::Categories].into(),
        ..Default::default()
    };
    let r = run(b.path(), &opts);
    expect(
        &r,
        Level::Error,
        "capabilities",
        "\"Installs and stuff\" is not a valid capabilities level",
    );
    expect(
        &r,
        Level::Error,
        "categories",
        "value \"Magic\" is not in the set of standard categories",
    );
    assert_eq!(
        r.findings
            .iter()
            .filter(|f| f.check == "categories")
            .count(),
        1,
        "Developer Tools is standard"
    );
    opts.custom_categories = Some(vec!["Magic".into(), "Developer Tools".into()]);
    let r = run(b.path(), &opts);
    assert!(
        r.findings.iter().all(|f| f.check != "categories"),
        "{:#?}",
        r.findings
    );
}

#[test]
fn good_practices() {
    let b = good_bundle();
    edit(b.path(), CSV, |v| {
        let dep = &mut v["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"]
            [0];
        dep.as_object_mut().unwrap().remove("resources");
        v["spec"]["customresourcedefinitions"]["owned"][0]["description"] = json!("");
        v["spec"]["install"]["spec"]["clusterPermissions"][0]["rules"]
            .as_array_mut()
            .unwrap()
            .push(json!({"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["create"]}));
        v["metadata"]["name"] = json!("reverse-words-operator");
    });
    edit(b.path(), "metadata/annotations.yaml", |v| {
        v["annotations"]["operators.operatorframework.io.bundle.channels.v1"] = json!("alpha");
        v["annotations"]["operators.operatorframework.io.bundle.channel.default.v1"] =
            json!("alpha");
    });
    let opts = Options {
        suites: [Suite::GoodPractices].into(),
        ..Default::default()
    };
    let r = run(b.path(), &opts);
    expect(
        &r,
        Level::Warning,
        "resource-requests",
        "unable to find the resource requests for the container: (manager)",
    );
    expect(
        &r,
        Level::Warning,
        "crd-description",
        "owned CRD \"reversewordsapps.apps.linuxera.org\" has an empty description",
    );
    expect(
        &r,
        Level::Warning,
        "crd-permissions",
        "CSV contains permissions to create CRD",
    );
    expect(
        &r,
        Level::Warning,
        "channel-naming",
        "channel(s) [\"alpha\"] are not following the recommended naming convention",
    );
    expect(
        &r,
        Level::Warning,
        "name-convention",
        "is not following the recommended naming convention",
    );
    assert!(r.passed(false) && !r.passed(true));
}

#[test]
fn deprecated_apis_warn_then_fail_at_the_target_version() {
    let b = good_bundle();
    edit(b.path(), CRD, |v| {
        v["apiVersion"] = json!("apiextensions.k8s.io/v1beta1");
        v["spec"]["preserveUnknownFields"] = json!(false);
    });
    write(
        b.path(),
        "manifests/pdb.yaml",
        "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: op}\nspec: {minAvailable: 1}\n",
    );
    let mut opts = Options {
        suites: [Suite::DeprecatedApis].into(),
        ..Default::default()
    };
    edit(b.path(), CSV, |v| {
        v["spec"]["minKubeVersion"] = json!("1.16.0")
    });
    let r = run(b.path(), &opts);
    expect(
        &r,
        Level::Warning,
        "removed-api",
        "removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22. Migrate the API(s) for CustomResourceDefinition: ([\"reversewordsapps.apps.linuxera.org\"])",
    );
    expect(&r, Level::Warning, "removed-api", "removed in v1.25");
    opts.k8s_version = Some(semver::Version::new(1, 22, 0));
    let r = run(b.path(), &opts);
    expect(&r, Level::Error, "removed-api", "removed in v1.22");
    expect(&r, Level::Warning, "removed-api", "removed in v1.25");
}

#[test]
fn object_risks() {
    let b = good_bundle();
    write(
        b.path(),
        "manifests/pdb.yaml",
        "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: op}\nspec: {maxUnavailable: 0}\n",
    );
    write(
        b.path(),
        "manifests/pc.yaml",
        "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: op}\nvalue: 1000\nglobalDefault: true\n",
    );
    write(
        b.path(),
        "manifests/role.yaml",
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: op-extra}\nrules:\n- apiGroups: [security.openshift.io]\n  resources: [securitycontextconstraints]\n  resourceNames: [restricted]\n  verbs: [update]\n- apiGroups: [policy]\n  resources: [poddisruptionbudgets]\n  verbs: [create]\n",
    );
    let opts = Options {
        suites: [Suite::Object].into(),
        ..Default::default()
    };
    let r = run(b.path(), &opts);
    expect(
        &r,
        Level::Error,
        "pdb",
        "maxUnavailable field cannot be set to 0 or 0%",
    );
    expect(
        &r,
        Level::Error,
        "priority-class",
        "globalDefault field cannot be set to true",
    );
    expect(
        &r,
        Level::Error,
        "rbac",
        "permission to modify default securitycontextconstraints",
    );
    expect(
        &r,
        Level::Warning,
        "rbac",
        "permission to create/update poddisruptionbudgets",
    );
}

// ---- malformed input ----

#[test]
fn malformed_yaml_names_file_and_line() {
    let b = good_bundle();
    write(
        b.path(),
        "manifests/broken.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n",
    );
    // operator-sdk fails on the file (`unable to decode object`); opm renders without it.
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "undecodable-file",
        "unable to decode object: manifests/broken.yaml:4:",
    );
}

#[test]
fn non_map_documents_are_reported() {
    let b = good_bundle();
    write(b.path(), "manifests/list.yaml", "- just\n- a list\n");
    expect(
        &run(b.path(), &Options::default()),
        Level::Error,
        "object",
        "expected a Kubernetes object (a map), found a list",
    );
}

// ---- what the reference accepts, and what it says ----

/// A missing media type is also the wrong one, as opm's format check says.
#[test]
fn format_missing_mediatype_says_both_things() {
    let b = good_bundle();
    edit(b.path(), "metadata/annotations.yaml", |v| {
        let a = v["annotations"].as_object_mut().unwrap();
        a.remove("operators.operatorframework.io.bundle.mediatype.v1");
    });
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Error,
        "annotations",
        "Missing annotation \"operators.operatorframework.io.bundle.mediatype.v1\"",
    );
    expect(
        &r,
        Level::Error,
        "annotations",
        "Expecting annotation \"operators.operatorframework.io.bundle.mediatype.v1\" to have value \"registry+v1\" instead of \"\"",
    );
}

/// Published bundles carry properties.yaml entries without a value (and with extra keys);
/// operator-framework/api passes them, so they are warnings, failing only under --strict.
#[test]
fn properties_without_a_value_are_a_warning() {
    let b = good_bundle();
    write(
        b.path(),
        "metadata/properties.yaml",
        "properties:\n- type: olm.maxOpenShiftVersion\n  version: '4.12'\n- type: com.example.note\n- value: x\n",
    );
    let r = run(b.path(), &all_suites());
    expect(&r, Level::Warning, "properties", "property has no `value`");
    expect(
        &r,
        Level::Warning,
        "properties",
        "property has no `type` string",
    );
    assert_eq!(r.errors().count(), 0, "{:?}", r.findings);
    assert!(r.passed(false) && !r.passed(true));
}

/// The reference reads a namespace that is not a string as none and passes the bundle.
#[test]
fn a_number_as_namespace_is_a_warning() {
    let b = good_bundle();
    write(
        b.path(),
        "manifests/sa.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: extra\n  namespace: 0\n",
    );
    let r = run(b.path(), &Options::default());
    expect(
        &r,
        Level::Warning,
        "object-metadata",
        "metadata.namespace is a number, not a string",
    );
    assert_eq!(r.errors().count(), 0, "{:?}", r.findings);
}

/// The community suite: a bundle on APIs Kubernetes 1.22 removed needs
/// olm.maxOpenShiftVersion below 4.9.
#[test]
fn community_needs_max_openshift_version_for_removed_apis() {
    let b = good_bundle();
    let opts = Options {
        suites: [Suite::Community].into(),
        ..Default::default()
    };
    assert!(run(b.path(), &opts).findings.is_empty());
    edit(b.path(), CRD, |v| {
        v["apiVersion"] = json!("apiextensions.k8s.io/v1beta1");
        v["spec"]["preserveUnknownFields"] = json!(false);
    });
    let r = run(b.path(), &opts);
    expect(
        &r,
        Level::Error,
        "max-openshift-version",
        "csv.Annotations not specified olm.maxOpenShiftVersion for an OCP version < 4.9",
    );
    expect(&r, Level::Warning, "openshift-versions-label", "index-path");
    edit(b.path(), CSV, |v| {
        v["metadata"]["annotations"]["olm.properties"] =
            json!(r#"[{"type": "olm.maxOpenShiftVersion", "value": "4.8"}]"#)
    });
    let r = run(b.path(), &opts);
    assert_eq!(r.errors().count(), 0, "{:?}", r.findings);
    assert!(Suite::parse("all").unwrap().contains(&Suite::Community));
    assert!(
        !Suite::parse("suite=operatorframework")
            .unwrap()
            .contains(&Suite::Community)
    );
}
