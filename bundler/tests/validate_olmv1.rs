//! `olm bundle validate -s olmv1` (and `-s olmv1-experimental`) and `olm catalog validate
//! --olmv1`: what operator-controller would refuse, one crafted bundle per rule (each a copy
//! of our own bundle with one thing broken), the verdicts on the shared real bundles and
//! catalogs, and our own bundle and catalog passing.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

const OLM: &str = env!("CARGO_BIN_EXE_olm");
const CSV: &str = "manifests/reverse-words-operator.clusterserviceversion.yaml";

fn olm(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(OLM).args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
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

/// One finding as `(type, check, file, field, message)`.
type Row = (String, String, String, String, String);

/// The olmv1 findings of `validate -o json`, and whether validation passed.
fn olmv1_findings(dir: &Path, suite: &str) -> (bool, Vec<Row>) {
    let (code, out, err) = olm(&[
        "bundle",
        "validate",
        dir.to_str().unwrap(),
        "--suite",
        suite,
        "-o",
        "json",
    ]);
    assert!(code == 0 || code == 1, "{out}{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let s = |f: &Value, k: &str| f[k].as_str().unwrap_or("").to_string();
    let found = v["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["validator"] == "olmv1")
        .map(|f| {
            (
                s(f, "type"),
                s(f, "check"),
                s(f, "file"),
                s(f, "field"),
                s(f, "message"),
            )
        })
        .collect();
    (v["passed"] == true, found)
}

/// A copy of our bundle with its CSV changed by `edit` (written back as JSON, which is YAML).
fn our_bundle_with(edit: impl FnOnce(&mut Value, &Path)) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(tmp.path().join(sub)).unwrap();
        for e in std::fs::read_dir(repo("bundle").join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), tmp.path().join(sub).join(e.file_name())).unwrap();
        }
    }
    let mut csv: Value = olm_bundler::yaml::load_one(&tmp.path().join(CSV)).unwrap();
    edit(&mut csv, tmp.path());
    std::fs::write(
        tmp.path().join(CSV),
        serde_json::to_string_pretty(&csv).unwrap(),
    )
    .unwrap();
    tmp
}

fn only_modes(csv: &mut Value, supported: &[&str]) {
    let modes: Vec<Value> = [
        "OwnNamespace",
        "SingleNamespace",
        "MultiNamespace",
        "AllNamespaces",
    ]
    .iter()
    .map(|m| json!({"type": m, "supported": supported.contains(m)}))
    .collect();
    csv["spec"]["installModes"] = Value::Array(modes);
}

/// Exactly one olmv1 finding, with this level, check, field and message text.
fn one(dir: &Path, suite: &str, level: &str, check: &str, field: &str, text: &str) {
    let (_, f) = olmv1_findings(dir, suite);
    assert_eq!(f.len(), 1, "{check}: {f:#?}");
    let (t, c, file, fl, msg) = &f[0];
    assert_eq!(
        (t.as_str(), c.as_str(), fl.as_str()),
        (level, check, field),
        "{f:#?}"
    );
    assert!(!file.is_empty(), "{f:#?}");
    assert!(msg.contains(text), "{msg:?} lacks {text:?}");
}

#[test]
fn our_bundle_and_catalog_pass() {
    let (passed, f) = olmv1_findings(&repo("bundle"), "olmv1");
    assert!(passed && f.is_empty(), "{f:#?}");
    let (code, out, err) = olm(&[
        "catalog",
        "validate",
        repo("catalog").to_str().unwrap(),
        "--olmv1",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.lines().any(|l| {
            let all_of = l
                .strip_prefix("package reverse-words-operator: ")
                .and_then(|r| r.split_once(" bundle(s)"))
                .and_then(|(n, _)| n.split_once(" of "))
                .is_some_and(|(a, b)| a == b);
            all_of
                && l.ends_with(&format!(
                    "default channel head reverse-words-operator.v{}: installable",
                    repo_version()
                ))
        }),
        "{out}"
    );
}

#[test]
fn install_modes_by_feature_set() {
    let own = our_bundle_with(|csv, _| only_modes(csv, &["OwnNamespace", "SingleNamespace"]));
    one(
        own.path(),
        "olmv1",
        "error",
        "all-namespaces",
        "spec.installModes",
        "unsupported bundle: bundle does not support AllNamespaces install mode",
    );
    // The experimental gate installs it, with a watch namespace: a warning, and it passes.
    one(
        own.path(),
        "olmv1-experimental",
        "warning",
        "single-own-namespace",
        "spec.installModes",
        "SingleOwnNamespaceInstallSupport",
    );
    let multi = our_bundle_with(|csv, _| only_modes(csv, &["MultiNamespace"]));
    one(
        multi.path(),
        "olmv1-experimental",
        "error",
        "install-modes",
        "spec.installModes",
        "bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes",
    );
}

#[test]
fn apiservices_dependencies_and_operator_conditions() {
    let api = our_bundle_with(|csv, _| {
        csv["spec"]["apiservicedefinitions"] = json!({"owned": [{"name": "v1.metrics.example.com",
            "group": "metrics.example.com", "version": "v1", "kind": "Metric",
            "deploymentName": "reverse-words-operator", "containerPort": 443}]});
    });
    one(
        api.path(),
        "olmv1",
        "error",
        "apiservice",
        "spec.apiservicedefinitions.owned",
        "unsupported bundle: apiServiceDefintions are not supported",
    );

    let required = our_bundle_with(|csv, _| {
        csv["spec"]["customresourcedefinitions"]["required"] = json!([{"name": "kafkas.kafka.strimzi.io",
            "version": "v1beta2", "kind": "Kafka"}]);
    });
    one(
        required.path(),
        "olmv1",
        "error",
        "dependency",
        "spec.customresourcedefinitions.required[0]",
        "required CRD kafkas.kafka.strimzi.io (kafka.strimzi.io/v1beta2 Kafka) is a dependency (olm.gvk.required)",
    );

    let files = our_bundle_with(|_, root| {
        std::fs::write(
            root.join("metadata/dependencies.yaml"),
            "dependencies:\n- type: olm.package\n  value:\n    packageName: prometheus\n    version: '>=0.47.0'\n",
        )
        .unwrap();
        std::fs::write(
            root.join("metadata/properties.yaml"),
            "properties:\n- type: olm.constraint\n  value:\n    failureMessage: needs a GVK\n    cel:\n      rule: 'true'\n",
        )
        .unwrap();
    });
    let (passed, f) = olmv1_findings(files.path(), "olmv1");
    assert!(!passed);
    let got: Vec<(&str, &str, &str)> = f
        .iter()
        .map(|(_, c, file, field, _)| (c.as_str(), file.as_str(), field.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "dependency",
                "metadata/dependencies.yaml",
                "dependencies[0]"
            ),
            ("dependency", "metadata/properties.yaml", "properties[0]")
        ]
    );
    assert!(
        f[0].4.contains("rendered as olm.package.required"),
        "{f:#?}"
    );

    let conditions = our_bundle_with(|csv, _| {
        let rules = csv
            .pointer_mut("/spec/install/spec/permissions/0/rules")
            .unwrap();
        rules
            .as_array_mut()
            .unwrap()
            .push(json!({"apiGroups": ["operators.coreos.com"],
            "resources": ["operatorconditions"], "verbs": ["get", "update"]}));
    });
    let (_, f) = olmv1_findings(conditions.path(), "olmv1");
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(
        (f[0].0.as_str(), f[0].1.as_str()),
        ("error", "operator-conditions")
    );
    assert!(f[0].3.starts_with("spec.install.spec."), "{f:#?}");
    assert!(f[0].4.contains("OperatorConditions API"), "{f:#?}");
}

#[test]
fn webhooks_as_operator_controller_renders_them() {
    let hooks = our_bundle_with(|csv, _| {
        only_modes(csv, &["OwnNamespace", "AllNamespaces"]);
        csv["spec"]["webhookdefinitions"] = json!([
            {"type": "ConversionWebhook", "generateName": "convert.example.com",
             "deploymentName": "reverse-words-operator", "containerPort": 443,
             "conversionCRDs": ["reversewordsapps.apps.linuxera.org", "others.example.com"],
             "admissionReviewVersions": ["v1"], "sideEffects": "None"},
            {"type": "ValidatingAdmissionWebhook", "generateName": "Bad_Name",
             "deploymentName": "no-such-deployment", "containerPort": 443,
             "admissionReviewVersions": ["v1"], "sideEffects": "None",
             "rules": [{"apiGroups": ["*"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]},
                       {"apiGroups": ["admissionregistration.k8s.io"], "apiVersions": ["v1"],
                        "operations": ["CREATE"], "resources": ["ValidatingWebhookConfigurations"]}]}
        ]);
    });
    let (passed, f) = olmv1_findings(hooks.path(), "olmv1");
    assert!(!passed);
    let messages: Vec<&str> = f.iter().map(|x| x.4.as_str()).collect();
    for want in [
        "webhookDefinitions need a certificate provider",
        "bundle contains conversion webhook \"convert.example.com\" and supports install modes [AllNamespaces OwnNamespace] - conversion webhooks are only supported for bundles that only support AllNamespaces install mode",
        "webhook of type 'ValidatingAdmissionWebhook' with name 'Bad_Name' references non-existent deployment 'no-such-deployment'",
        "webhook of type 'ValidatingAdmissionWebhook' has invalid name 'Bad_Name': a lowercase RFC 1123 subdomain",
        "conversion webhook 'convert.example.com' references custom resource definition 'others.example.com' not owned bundle",
        "webhook \"Bad_Name\" contains forbidden rule: admission webhook rules cannot reference API group \"*\"",
        "webhook \"Bad_Name\" contains forbidden rule: admission webhook rules cannot reference resource \"ValidatingWebhookConfigurations\" for API group \"admissionregistration.k8s.io\"",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(want)),
            "missing {want:?} in {messages:#?}"
        );
    }
    assert_eq!(f.len(), 7, "{f:#?}");
}

#[test]
fn renderer_checks_on_crds_and_deployments() {
    let broken = our_bundle_with(|csv, root| {
        let d = csv["spec"]["install"]["spec"]["deployments"][0].clone();
        csv["spec"]["install"]["spec"]["deployments"]
            .as_array_mut()
            .unwrap()
            .push(d);
        std::fs::remove_file(root.join("manifests/apps.linuxera.org_reversewordsapps.yaml"))
            .unwrap();
        std::fs::create_dir_all(root.join("manifests/nested")).unwrap();
    });
    let (passed, f) = olmv1_findings(broken.path(), "olmv1");
    assert!(!passed);
    let checks: Vec<(&str, &str)> = f.iter().map(|x| (x.1.as_str(), x.4.as_str())).collect();
    assert_eq!(
        checks,
        [
            (
                "deployment-name",
                "cluster service version contains duplicate strategy deployment spec 'reverse-words-operator'"
            ),
            (
                "crd",
                "cluster service definition references owned custom resource definition 'reversewordsapps.apps.linuxera.org' not found in bundle"
            ),
            (
                "manifests-layout",
                "subdirectories are not allowed within the \"manifests\" directory of the bundle image filesystem: found \"manifests/nested\""
            ),
        ],
        "{f:#?}"
    );
}

#[test]
fn shared_bundles_verdicts() {
    let Some(root) = shared("bundles") else {
        return;
    };
    let b = |rel: &str| root.join(rel);
    let cases: [(&str, &str, &str, &str); 6] = [
        (
            "certified-operators/operators/fujitsu-enterprise-postgres-operator/v5.1.9",
            "error",
            "all-namespaces",
            "spec.installModes",
        ),
        (
            "community-operators-prod/operators/mercury-operator/1.0.1",
            "error",
            "dependency",
            "spec.customresourcedefinitions.required[0]",
        ),
        (
            "community-operators-prod/operators/cockroachdb/2.1.1",
            "error",
            "crd-api-version",
            "apiVersion",
        ),
        (
            "certified-operators/operators/ibm-security-verify-operator/23.3.0",
            "warning",
            "webhook-certificates",
            "spec.webhookdefinitions",
        ),
        (
            "community-operators-prod/operators/pelorus-operator/0.0.6",
            "warning",
            "olmv0-api",
            "spec.install.spec",
        ),
        ("community-operators-prod/operators/k8gb/0.11.4", "", "", ""),
    ];
    for (rel, level, check, field) in cases {
        let (_, f) = olmv1_findings(&b(rel), "olmv1");
        if check.is_empty() {
            assert!(f.is_empty(), "{rel}: {f:#?}");
            continue;
        }
        assert!(
            f.iter()
                .any(|x| x.0 == level && x.1 == check && x.3 == field && !x.2.is_empty()),
            "{rel}: want {level} {check} at {field}: {f:#?}"
        );
    }
    let (_, f) = olmv1_findings(
        &b("community-operators-prod/operators/mercury-operator/1.0.1"),
        "olmv1",
    );
    assert_eq!(f.len(), 4, "one per required CRD: {f:#?}");
}

#[test]
fn catalog_validate_olmv1_per_package() {
    let Some(cats) = shared("catalogs/community-operators-prod/catalogs/v4.20") else {
        return;
    };
    let rmq = cats.join("rabbitmq-messaging-topology-operator");
    let (code, out, _) = olm(&["catalog", "validate", rmq.to_str().unwrap(), "--olmv1"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("OLM v1 (standard feature set):"), "{out}");
    assert!(
        out.contains("package rabbitmq-messaging-topology-operator: 5 of 12 bundle(s) installable; default channel head rabbitmq-messaging-topology-operator.v1.19.3: NOT installable"),
        "{out}"
    );
    assert!(
        out.contains(r#"property olm.package.required {"packageName":"rabbitmq-cluster-operator","versionRange":">2.0.0"}: OLM v1 does not resolve dependencies"#),
        "{out}"
    );
    assert!(out.contains("(olm.csv.metadata only:"), "{out}");

    let (code, out, _) = olm(&[
        "catalog",
        "validate",
        rmq.to_str().unwrap(),
        "--olmv1",
        "-o",
        "json",
    ]);
    assert_eq!(code, 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    let pkg = &v["olmv1"][0];
    assert_eq!(pkg["package"], "rabbitmq-messaging-topology-operator");
    assert_eq!(pkg["bundles"].as_array().unwrap().len(), 12);

    // Full manifests (olm.bundle.object): install modes read from the CSV itself.
    let Some(eda) = shared("catalogs/certified-operators/catalogs/v4.18/eda-openshift-operator")
    else {
        return;
    };
    let (code, out, _) = olm(&["catalog", "validate", eda.to_str().unwrap(), "--olmv1"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("error [olmv1] olm.bundle.object ClusterServiceVersion/eda-openshift-operator.v5.0.2 spec.installModes: unsupported bundle: bundle does not support AllNamespaces install mode"),
        "{out}"
    );
    let (_, out, _) = olm(&[
        "catalog",
        "validate",
        eda.to_str().unwrap(),
        "--olmv1",
        "--olmv1-experimental",
    ]);
    assert!(out.contains("OLM v1 (experimental feature set):"), "{out}");
    assert!(!out.contains("does not support AllNamespaces"), "{out}");
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
