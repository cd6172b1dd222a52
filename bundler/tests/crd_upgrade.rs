//! CRD upgrade safety: a crafted pair of CRDs per rule (each breaking change found, named by
//! CRD, version and path; each compatible change passes), `olm bundle check-upgrade` on the
//! real upgrade pairs of shared/data/render-pairs and on a bundle image, and `olm catalog
//! check-upgrades` on the shared catalogs (real breaking changes, and the edges of
//! olm.csv.metadata catalogs reported as unverifiable).

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};
use std::process::Command;

use olm_bundler::bundle::crd_upgrade::{CrdSet, Finding, Rule, compare};
use serde_json::{Value, json};

const OLM: &str = env!("CARGO_BIN_EXE_olm");

fn olm(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(OLM).args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// shared/data beside the checkout; missing data fails under CI and skips visibly outside.
fn shared(rel: &str) -> Option<PathBuf> {
    let found = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/data").join(rel))
        .find(|p| p.exists());
    if found.is_none() {
        prerequisite::missing(&format!("shared/data/{rel} beside this checkout"));
    }
    found
}

/// A CRD with one stored v1 version and a schema exercising every rule.
fn base() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {"spec": {
                        "type": "object",
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string", "enum": ["a", "b"], "description": "the name"},
                            "size": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
                            "tags": {"type": "array", "maxItems": 5, "minItems": 1,
                                     "items": {"type": "string", "maxLength": 20, "minLength": 2}},
                            "labels": {"type": "object", "maxProperties": 8, "minProperties": 1,
                                       "additionalProperties": {"type": "string"}},
                            "email": {"type": "string", "format": "email"},
                            "free": {"type": "string"},
                            "code": {"type": "string", "pattern": "^[a-z]+$"},
                            "maybe": {"type": "string", "nullable": true},
                            "blob": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                            "list": {"type": "array", "x-kubernetes-list-type": "atomic",
                                     "items": {"type": "string"}}
                        }
                    }}
                }}
            }]
        }
    })
}

/// The v1 schema's `spec` properties.
fn spec(crd: &mut Value) -> &mut Value {
    crd.pointer_mut("/spec/versions/0/schema/openAPIV3Schema/properties/spec")
        .unwrap()
}

fn field<'a>(crd: &'a mut Value, name: &str) -> &'a mut Value {
    spec(crd)
        .pointer_mut(&format!("/properties/{name}"))
        .unwrap()
}

fn check(change: impl FnOnce(&mut Value)) -> Vec<Finding> {
    let old = base();
    let mut new = base();
    change(&mut new);
    compare(
        &CrdSet::from_objects("old", [old]),
        &CrdSet::from_objects("new", [new]),
    )
    .findings
}

/// Exactly one finding, of `rule`, at `path` in version v1, whose message contains `text`.
fn breaks(rule: Rule, path: Option<&str>, text: &str, change: impl FnOnce(&mut Value)) {
    let f = check(change);
    assert_eq!(f.len(), 1, "{rule}: want one finding, got {f:#?}");
    let f = &f[0];
    assert_eq!(f.rule, rule, "{f:#?}");
    assert_eq!(f.crd, "widgets.example.com");
    assert_eq!(f.path.as_deref(), path, "{f:#?}");
    assert!(
        f.message.contains(text),
        "{rule}: {:?} lacks {text:?}",
        f.message
    );
    assert!(!f.hint.is_empty());
}

#[test]
fn every_rule_finds_its_breaking_change() {
    breaks(
        Rule::Scope,
        None,
        r#"scope changed from "Namespaced" to "Cluster""#,
        |c| c["spec"]["scope"] = "Cluster".into(),
    );
    breaks(
        Rule::StoredVersionRemoval,
        None,
        r#"stored version "v1" removed"#,
        |c| c["spec"]["versions"][0]["name"] = "v2".into(),
    );
    breaks(
        Rule::ServedVersionRemoval,
        None,
        r#"version "v1" is no longer served"#,
        |c| c["spec"]["versions"][0]["served"] = false.into(),
    );
    breaks(
        Rule::ExistingFieldRemoval,
        Some("^.spec.tags"),
        "field may not be removed",
        |c| {
            spec(c)["properties"]
                .as_object_mut()
                .unwrap()
                .remove("tags");
        },
    );
    breaks(
        Rule::Enum,
        Some("^.spec.name"),
        r#"enums ["b"] removed from the set of previously allowed values"#,
        |c| field(c, "name")["enum"] = json!(["a"]),
    );
    breaks(
        Rule::Enum,
        Some("^.spec.free"),
        r#"enum constraints ["x"] added when there were no restrictions previously"#,
        |c| field(c, "free")["enum"] = json!(["x"]),
    );
    breaks(
        Rule::Required,
        Some("^.spec"),
        "new required fields [size] added",
        |c| spec(c)["required"] = json!(["name", "size"]),
    );
    breaks(
        Rule::Maximum,
        Some("^.spec.size"),
        "maximum: constraint decreased from 10 to 5",
        |c| field(c, "size")["maximum"] = 5.into(),
    );
    breaks(
        Rule::Minimum,
        Some("^.spec.size"),
        "minimum: constraint increased from 1 to 2",
        |c| field(c, "size")["minimum"] = 2.into(),
    );
    breaks(
        Rule::MaxItems,
        Some("^.spec.tags"),
        "maxItems: constraint decreased from 5 to 4",
        |c| field(c, "tags")["maxItems"] = 4.into(),
    );
    breaks(
        Rule::MinItems,
        Some("^.spec.tags"),
        "minItems: constraint increased from 1 to 2",
        |c| field(c, "tags")["minItems"] = 2.into(),
    );
    breaks(
        Rule::MaxLength,
        Some("^.spec.tags[*]"),
        "maxLength: constraint decreased from 20 to 10",
        |c| field(c, "tags")["items"]["maxLength"] = 10.into(),
    );
    breaks(
        Rule::MinLength,
        Some("^.spec.tags[*]"),
        "minLength: constraint increased from 2 to 3",
        |c| field(c, "tags")["items"]["minLength"] = 3.into(),
    );
    breaks(
        Rule::MaxProperties,
        Some("^.spec.labels"),
        "maxProperties: constraint decreased from 8 to 2",
        |c| field(c, "labels")["maxProperties"] = 2.into(),
    );
    breaks(
        Rule::MinProperties,
        Some("^.spec.labels"),
        "minProperties: constraint increased from 1 to 2",
        |c| field(c, "labels")["minProperties"] = 2.into(),
    );
    breaks(
        Rule::MaxLength,
        Some("^.spec.free"),
        "maxLength: constraint 63 added when there were no restrictions previously",
        |c| field(c, "free")["maxLength"] = 63.into(),
    );
    breaks(
        Rule::Default,
        Some("^.spec.size"),
        "default value changed from 3 to 4",
        |c| field(c, "size")["default"] = 4.into(),
    );
    breaks(
        Rule::Default,
        Some("^.spec.size"),
        "default value 3 removed",
        |c| {
            field(c, "size").as_object_mut().unwrap().remove("default");
        },
    );
    breaks(
        Rule::Default,
        Some("^.spec.free"),
        r#"default value "x" added when there was no default previously"#,
        |c| field(c, "free")["default"] = "x".into(),
    );
    breaks(
        Rule::Type,
        Some("^.spec.size"),
        r#"type changed from "integer" to "string""#,
        |c| field(c, "size")["type"] = "string".into(),
    );
    breaks(
        Rule::Format,
        Some("^.spec.email"),
        r#"format changed from "email" to "hostname""#,
        |c| field(c, "email")["format"] = "hostname".into(),
    );
    breaks(
        Rule::Pattern,
        Some("^.spec.code"),
        r#"pattern changed from "^[a-z]+$" to "^[a-z]{2}$""#,
        |c| field(c, "code")["pattern"] = "^[a-z]{2}$".into(),
    );
    breaks(
        Rule::Nullable,
        Some("^.spec.maybe"),
        "nullable changed from true to false",
        |c| field(c, "maybe")["nullable"] = false.into(),
    );
    breaks(
        Rule::UniqueItems,
        Some("^.spec.tags"),
        "uniqueItems: constraint added",
        |c| field(c, "tags")["uniqueItems"] = true.into(),
    );
    breaks(
        Rule::PreserveUnknownFields,
        Some("^.spec.blob"),
        "unknown fields of stored objects are pruned",
        |c| {
            field(c, "blob")
                .as_object_mut()
                .unwrap()
                .remove("x-kubernetes-preserve-unknown-fields");
        },
    );
    breaks(
        Rule::Validations,
        Some("^.spec"),
        r#"validation rules ["self.size > 1"] added"#,
        |c| spec(c)["x-kubernetes-validations"] = json!([{"rule": "self.size > 1"}]),
    );
    breaks(
        Rule::Unhandled,
        Some("^.spec.list"),
        r#"x-kubernetes-list-type "atomic" -> "set""#,
        |c| field(c, "list")["x-kubernetes-list-type"] = "set".into(),
    );
}

#[test]
fn a_removed_crd_and_a_removed_served_version_are_reported() {
    let mut two = base();
    two["spec"]["versions"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "v1beta1", "served": true, "storage": false,
                     "schema": {"openAPIV3Schema": {"type": "object"}}}));
    let r = compare(
        &CrdSet::from_objects("old", [two]),
        &CrdSet::from_objects("new", [base()]),
    );
    assert_eq!(r.findings.len(), 1, "{:#?}", r.findings);
    assert_eq!(r.findings[0].rule, Rule::ServedVersionRemoval);
    assert_eq!(r.findings[0].version.as_deref(), Some("v1beta1"));

    let r = compare(
        &CrdSet::from_objects("old", [base()]),
        &CrdSet::from_objects("new", []),
    );
    assert_eq!(r.findings.len(), 1);
    assert_eq!(r.findings[0].rule, Rule::CrdRemoval);
    assert!(
        r.findings[0]
            .message
            .contains("old ships this CRD, new does not")
    );
}

#[test]
fn a_field_removed_from_a_later_served_version_needs_a_conversion_webhook() {
    let mut new = base();
    let mut v2 = new["spec"]["versions"][0].clone();
    v2["name"] = "v2".into();
    v2["storage"] = false.into();
    v2.pointer_mut("/schema/openAPIV3Schema/properties/spec/properties")
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove("code");
    new["spec"]["versions"].as_array_mut().unwrap().push(v2);
    let old = CrdSet::from_objects("old", [base()]);
    let r = compare(&old, &CrdSet::from_objects("new", [new.clone()]));
    assert_eq!(r.findings.len(), 1, "{:#?}", r.findings);
    let f = &r.findings[0];
    assert_eq!(f.rule, Rule::ExistingFieldRemoval);
    assert_eq!(
        (
            f.version.as_deref(),
            f.to_version.as_deref(),
            f.path.as_deref()
        ),
        (Some("v1"), Some("v2"), Some("^.spec.code"))
    );
    assert!(
        f.to_string()
            .contains("served versions v1 -> v2 ^.spec.code"),
        "{f}"
    );
    // A conversion webhook converts between the versions: nothing to report.
    new["spec"]["conversion"] = json!({"strategy": "Webhook"});
    assert!(compare(&old, &CrdSet::from_objects("new", [new])).passed());
}

#[test]
fn compatible_changes_pass() {
    let f = check(|c| {
        // A new optional field, loosened bounds, a new enum value, a lifted restriction,
        // documentation, a dropped pattern/format, a new served version with the same schema.
        spec(c)["properties"]["added"] = json!({"type": "string", "maxLength": 5});
        field(c, "size")["maximum"] = 100.into();
        field(c, "size")["minimum"] = 0.into();
        field(c, "tags")["maxItems"] = 50.into();
        field(c, "tags")["items"]["maxLength"] = 200.into();
        field(c, "name")["enum"] = json!(["a", "b", "c"]);
        field(c, "name")["description"] = "the widget's name".into();
        field(c, "code").as_object_mut().unwrap().remove("pattern");
        field(c, "email").as_object_mut().unwrap().remove("format");
        field(c, "free")["nullable"] = true.into();
        spec(c)["required"] = json!([]);
        let mut v2 = c["spec"]["versions"][0].clone();
        v2["name"] = "v2".into();
        v2["storage"] = false.into();
        c["spec"]["versions"].as_array_mut().unwrap().push(v2);
    });
    assert!(f.is_empty(), "{f:#?}");
}

/// Writes a one-CRD bundle directory.
fn bundle_with(dir: &Path, crd: &Value) {
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    std::fs::write(
        dir.join("manifests/widgets.yaml"),
        serde_json::to_string_pretty(crd).unwrap(),
    )
    .unwrap();
}

#[test]
fn check_upgrade_exits_1_with_findings_in_text_and_json() {
    let tmp = tempfile::tempdir().unwrap();
    let (old, new) = (tmp.path().join("old"), tmp.path().join("new"));
    bundle_with(&old, &base());
    let mut broken = base();
    field(&mut broken, "name")["enum"] = json!(["a"]);
    bundle_with(&new, &broken);
    let (old_s, new_s) = (old.to_str().unwrap(), new.to_str().unwrap());

    let (code, out, err) = olm(&["bundle", "check-upgrade", old_s, new_s]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains(r#"error [enum] widgets.example.com version v1 ^.spec.name: enums ["b"] removed from the set of previously allowed values"#),
        "{out}"
    );
    assert!(out.contains("    hint: allow every value"), "{out}");
    assert!(out.contains("FAILED: 1 breaking change(s)"), "{out}");

    let (code, out, _) = olm(&["bundle", "check-upgrade", old_s, new_s, "-o", "json"]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["findings"][0]["rule"], "enum");
    assert_eq!(v["findings"][0]["crd"], "widgets.example.com");
    assert_eq!(v["findings"][0]["version"], "v1");
    assert_eq!(v["findings"][0]["path"], "^.spec.name");
    assert_eq!(v["findings"][0]["type"], "error");

    // Same bundle both ways: passes.
    let (code, out, _) = olm(&["bundle", "check-upgrade", old_s, old_s]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("1 CRD(s) compared: no breaking CRD changes"),
        "{out}"
    );

    // Not a bundle: usage error.
    let (code, _, err) = olm(&["bundle", "check-upgrade", old_s, "/nonexistent/dir"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/nonexistent/dir"), "{err}");

    // A CRD file that does not parse is refused, naming it: leaving it out would compare
    // nothing and pass.
    let broken_old = tmp.path().join("broken-old");
    std::fs::create_dir_all(broken_old.join("manifests")).unwrap();
    std::fs::write(
        broken_old.join("manifests/widgets.crd"),
        "kind: CustomResourceDefinition\nspec: [unclosed\n",
    )
    .unwrap();
    let (code, out, err) = olm(&[
        "bundle",
        "check-upgrade",
        broken_old.to_str().unwrap(),
        new_s,
    ]);
    assert_ne!(code, 0, "{out}{err}");
    assert!(err.contains("manifests/widgets.crd"), "{err}");
    assert!(!out.contains("no breaking CRD changes"), "{out}");
}

#[test]
fn real_upgrade_pairs_are_safe() {
    let Some(ops) = shared("render-pairs/community-operators-prod/operators") else {
        return;
    };
    let pairs = [
        (
            "kairos-operator",
            ["2.0.1", "2.1.0", "2.1.1", "2.2.0"].as_slice(),
        ),
        (
            "ecr-secret-operator",
            ["0.3.2", "0.4.0", "0.4.1", "0.5.0", "0.5.1", "0.6.0"].as_slice(),
        ),
    ];
    let mut checked = 0;
    for (pkg, versions) in pairs {
        for w in versions.windows(2) {
            let (old, new) = (ops.join(pkg).join(w[0]), ops.join(pkg).join(w[1]));
            let r = olm_bundler::bundle::crd_upgrade::compare_dirs(&old, &new).unwrap();
            assert!(r.passed(), "{pkg} {} -> {}: {:#?}", w[0], w[1], r.findings);
            assert!(!r.compared.is_empty(), "{pkg} {} -> {}", w[0], w[1]);
            checked += 1;
        }
    }
    assert_eq!(checked, 8);
    // ecr-secret-operator 0.4.0 adds a CRD.
    let r = olm_bundler::bundle::crd_upgrade::compare_dirs(
        &ops.join("ecr-secret-operator/0.3.2"),
        &ops.join("ecr-secret-operator/0.4.0"),
    )
    .unwrap();
    assert_eq!(r.added, ["argohelmreposecrets.ecr.mobb.redhat.com"]);
    // And the other way round: a downgrade removes it, which deletes its objects.
    let (code, out, _) = olm(&[
        "bundle",
        "check-upgrade",
        ops.join("ecr-secret-operator/0.4.0").to_str().unwrap(),
        ops.join("ecr-secret-operator/0.3.2").to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("error [crdRemoval] argohelmreposecrets.ecr.mobb.redhat.com: ecr-secret-operator.v0.4.0 ships this CRD, ecr-secret-operator.v0.3.2 does not"),
        "{out}"
    );
}

#[test]
fn check_upgrade_reads_bundle_images() {
    let tmp = tempfile::tempdir().unwrap();
    let layout = format!("oci:{}:v1", tmp.path().join("layout").display());
    let bundle = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bundle");
    let bundle = bundle.to_str().unwrap();
    let (code, _, err) = olm(&["bundle", "build", bundle, "-t", &layout]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = olm(&["bundle", "check-upgrade", &layout, bundle]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(&format!(
            "reverse-words-operator.v{v} -> reverse-words-operator.v{v}: 1 CRD(s) compared: no breaking CRD changes",
            v = repo_version()
        )),
        "{out}"
    );
}

#[test]
fn catalog_edges_real_findings_and_unverifiable_edges() {
    let Some(catalogs) = shared("catalogs") else {
        return;
    };
    // tigera-operator 1.38.0 -> 1.38.1 removed fields that stored objects may hold.
    let tigera = catalogs.join("certified-operators/catalogs/v4.16/tigera-operator");
    let (code, out, err) = olm(&["catalog", "check-upgrades", tigera.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("tigera-operator: tigera-operator.v1.38.0 -> tigera-operator.v1.38.1 (release-v1.38 replaces, release-v1.38 skipRange): FAILED"),
        "{out}"
    );
    assert!(
        out.contains("error [existingFieldRemoval] installations.operator.tigera.io version v1 ^.spec.cni.binDir: field may not be removed"),
        "{out}"
    );
    assert!(
        out.contains("3 upgrade edge(s): 3 checked, 2 with breaking CRD changes (12 finding(s)), 0 could not be checked"),
        "{out}"
    );

    // eda: a CRD changed scope; one edge's old bundle is in olm.csv.metadata form.
    let eda = catalogs.join("certified-operators/catalogs/v4.18/eda-openshift-operator");
    let (code, out, _) = olm(&[
        "catalog",
        "check-upgrades",
        eda.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(code, 1, "{out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["summary"],
        json!({"edges": 3, "checked": 2, "breaking": 1, "unverifiable": 1, "findings": 1})
    );
    let edges = v["edges"].as_array().unwrap();
    let scope = edges
        .iter()
        .flat_map(|e| {
            e["report"]["findings"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|f| f["rule"] == "scope")
        .unwrap();
    assert_eq!(
        scope["crd"],
        "connectcontrollerconfigs.config.eda.nokia.com"
    );
    assert!(
        edges.iter().any(|e| e["status"] == "unverifiable"
            && e["reason"]
                .as_str()
                .unwrap()
                .contains("olm.csv.metadata form: the catalog does not carry its CRDs")),
        "{out}"
    );
}

#[test]
fn render_pair_catalogs_both_forms() {
    let Some(cats) = shared("render-pairs/community-operators-prod/catalogs") else {
        return;
    };
    // The olm.bundle.object form carries the CRDs: every edge is checked, and passes.
    let full = cats.join("v4.16/kairos-operator");
    let (code, out, _) = olm(&["catalog", "check-upgrades", full.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("kairos-operator: kairos-operator.v2.1.1 -> kairos-operator.v2.2.0 (candidate-v2 replaces): ok (4 CRD(s) compared)"),
        "{out}"
    );
    assert!(
        out.contains("5 upgrade edge(s): 5 checked, 0 with breaking CRD changes (0 finding(s)), 0 could not be checked"),
        "{out}"
    );
    // The olm.csv.metadata form does not: the edges are named, not passed; --strict fails.
    let meta = cats.join("v4.20/kairos-operator");
    let (code, out, _) = olm(&["catalog", "check-upgrades", meta.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("5 upgrade edge(s): 0 checked, 0 with breaking CRD changes (0 finding(s)), 5 could not be checked"),
        "{out}"
    );
    assert!(out.contains("not checked: kairos-operator.v2"), "{out}");
    let (code, _, _) = olm(&[
        "catalog",
        "check-upgrades",
        meta.to_str().unwrap(),
        "--strict",
    ]);
    assert_eq!(code, 1);
}

#[test]
fn our_catalog_upgrades_are_safe() {
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
    let (code, out, err) = olm(&["catalog", "check-upgrades", catalog.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 could not be checked"), "{out}");
    assert!(!out.contains(" 0 checked"), "{out}");
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
