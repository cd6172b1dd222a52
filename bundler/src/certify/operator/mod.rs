//! preflight's operator policy (`internal/policy/operator`, `engine.InitializeOperatorChecks`),
//! in its order: ScorecardBasicSpecCheck, ScorecardOlmSuiteCheck, DeployableByOLM,
//! ValidateOperatorBundle, BundleImageRefsAreCertified, SecurityContextConstraintsInCSV,
//! AllImageRefsInRelatedImages, FollowsRestrictedNetworkEnablementGuidelines,
//! RequiredAnnotations.
//!
//! The offline checks are here as functions of the loaded bundle ([`offline`]); the two
//! scorecard checks judge a scorecard run's results ([`scorecard`]); DeployableByOLM's plan
//! (names, install mode, OperatorGroup targets) is [`deployable`], applied by `ops::check`.

use serde_json::Value;

use super::{Check, CheckResult, Level, timed};
use crate::bundle::load::{BundleDir, Manifest};
use crate::bundle::validate::{self, Finding, Options, Suite};
use crate::grammar::semver_range;

pub mod deployable;
pub mod scorecard;

const SDK_BUNDLE_URL: &str =
    "https://sdk.operatorframework.io/docs/olm-integration/tutorial-bundle/";
const CERT_2024_OPERAND_URL: &str = "https://access.redhat.com/documentation/en-us/red_hat_software_certification/2024/html-single/red_hat_openshift_software_certification_policy_guide/index#con-operand-requirements_openshift-sw-cert-policy-products-managed";
const CERT_2024_OPERATOR_URL: &str = "https://access.redhat.com/documentation/en-us/red_hat_software_certification/2024/html-single/red_hat_openshift_software_certification_policy_guide/index#con-operator-requirements_openshift-sw-cert-policy-products-managed";
const CERT_869_URL: &str = "https://access.redhat.com/documentation/en-us/red_hat_software_certification/8.69/html-single/red_hat_openshift_software_certification_policy_guide/index#con-operator-requirements_openshift-sw-cert-policy-products-managed";
const CERT_845_URL: &str = "https://access.redhat.com/documentation/en-us/red_hat_software_certification/8.45/html/red_hat_openshift_software_certification_policy_guide/assembly-products-managed-by-an-operator_openshift-sw-cert-policy-container-images#con-operator-requirements_openshift-sw-cert-policy-products-managed";
const SCC_URL: &str =
    "https://redhat-connect.gitbook.io/certified-operator-guide/troubleshooting-and-resources/sccs";

pub static SCORECARD_BASIC: Check = Check {
    name: "ScorecardBasicSpecCheck",
    description: "Check to make sure that all CRs have a spec block.",
    level: Level::Best,
    knowledge_base_url: "https://sdk.operatorframework.io/docs/advanced-topics/scorecard/scorecard/#overview",
    check_url: "https://sdk.operatorframework.io/docs/advanced-topics/scorecard/scorecard/#basic-test-suite",
    help: "Check ScorecardBasicSpecCheck encountered an error. Please review the operator_bundle_scorecard_BasicSpecCheck.json file in your execution artifacts for more information.",
    suggestion: "Make sure that all CRs have a spec block",
};

pub static SCORECARD_OLM: Check = Check {
    name: "ScorecardOlmSuiteCheck",
    description: "Operator-sdk scorecard OLM Test Suite Check",
    level: Level::Best,
    knowledge_base_url: "https://sdk.operatorframework.io/docs/testing-operators/scorecard/#overview",
    check_url: "https://sdk.operatorframework.io/docs/testing-operators/scorecard/#olm-test-suite",
    help: "Check ScorecardOlmSuiteCheck encountered an error. Please review the operator_bundle_scorecard_OlmSuiteCheck.json file in your execution artifacts for more information.",
    suggestion: "See scorecard output for details, artifacts/operator_bundle_scorecard_OlmSuiteCheck.json",
};

pub static DEPLOYABLE_BY_OLM: Check = Check {
    name: "DeployableByOLM",
    description: "Checking if the operator could be deployed by OLM",
    level: Level::Best,
    knowledge_base_url: "https://sdk.operatorframework.io/docs/olm-integration/testing-deployment/",
    check_url: "https://sdk.operatorframework.io/docs/olm-integration/testing-deployment/",
    help: "It is required that your operator could be deployed by OLM",
    suggestion: "Follow the guidelines on the operator-sdk website to learn how to package your operator https://sdk.operatorframework.io/docs/olm-integration/cli-overview/",
};

pub static VALIDATE_OPERATOR_BUNDLE: Check = Check {
    name: "ValidateOperatorBundle",
    description: "Validating Bundle image that checks if it can validate the content and format of the operator bundle",
    level: Level::Best,
    knowledge_base_url: SDK_BUNDLE_URL,
    check_url: SDK_BUNDLE_URL,
    help: "Check ValidateOperatorBundle encountered an error. Please review the preflight.log file for more information.",
    suggestion: "Valid bundles are defined by bundle spec, so make sure that this bundle conforms to that spec. More Information: https://github.com/operator-framework/operator-registry/blob/master/docs/design/operator-bundle.md",
};

pub static CERTIFIED_IMAGES: Check = Check {
    name: "BundleImageRefsAreCertified",
    description: "Checking that all images referenced in the CSV are certified. Currently, this check is not enforced.",
    level: Level::Optional,
    knowledge_base_url: CERT_2024_OPERAND_URL,
    check_url: CERT_2024_OPERAND_URL,
    help: "Check that all images referenced in the CSV are certified.",
    suggestion: "Ensure that any images referenced in the CSV, including the relatedImages section, have been certified.",
};

pub static SCC_IN_CSV: Check = Check {
    name: "SecurityContextConstraintsInCSV",
    description: "Evaluates the csv and logs a message if a non default security context constraint is needed by the operator",
    level: Level::Optional,
    knowledge_base_url: SCC_URL,
    check_url: SCC_URL,
    help: "The securityContextConstraintsInCSV logs a message if the operator requests a security context constraint. Please review the operators documentation to see if this is needed.",
    suggestion: "If no scc is detected the default restricted scc will be used.",
};

pub static RELATED_IMAGES: Check = Check {
    name: "AllImageRefsInRelatedImages",
    description: "Check that all images in the CSV are listed in RelatedImages section. Currently, this check is not enforced.",
    level: Level::Optional,
    knowledge_base_url: CERT_845_URL,
    check_url: CERT_845_URL,
    help: "Check that all images referenced in the CSV are in RelatedImages",
    suggestion: "Either manually or with a tool, populate the RelatedImages section of the CSV",
};

pub static RESTRICTED_NETWORK: Check = Check {
    name: "FollowsRestrictedNetworkEnablementGuidelines",
    description: "Checks for indicators that this bundle has implemented guidelines to indicate readiness for running in a disconnected cluster, or a cluster with a restricted network.",
    level: Level::Optional,
    knowledge_base_url: CERT_2024_OPERATOR_URL,
    check_url: CERT_2024_OPERATOR_URL,
    help: "Check for the implementation of guidelines indicating operator readiness for environments with restricted networking.",
    suggestion: "If consumers of your operator may need to do so on a restricted network, implement the guidelines outlines in OCP documentation for your cluster version, such as https://docs.openshift.com/container-platform/4.11/operators/operator_sdk/osdk-generating-csvs.html#olm-enabling-operator-for-restricted-network_osdk-generating-csvs for OCP 4.11",
};

pub static REQUIRED_ANNOTATIONS: Check = Check {
    name: "RequiredAnnotations",
    description: "Checks that the CSV has all of the required feature annotations.",
    level: Level::Warn,
    knowledge_base_url: CERT_869_URL,
    check_url: CERT_869_URL,
    help: "Check that the CSV has all of the required feature annotations.",
    suggestion: "Add all of the required annotations, and make sure the value is set to either 'true' or 'false'",
};

/// The policy's checks, in preflight's order.
pub const POLICY: [&Check; 9] = [
    &SCORECARD_BASIC,
    &SCORECARD_OLM,
    &DEPLOYABLE_BY_OLM,
    &VALIDATE_OPERATOR_BUNDLE,
    &CERTIFIED_IMAGES,
    &SCC_IN_CSV,
    &RELATED_IMAGES,
    &RESTRICTED_NETWORK,
    &REQUIRED_ANNOTATIONS,
];

/// The checks that need nothing but the bundle, each timed, in the policy's order.
pub fn offline(bundle: &BundleDir) -> Vec<CheckResult> {
    vec![
        timed(|| validate_operator_bundle(bundle)),
        CheckResult::not_run(
            &CERTIFIED_IMAGES,
            "asks Red Hat's certification API (Pyxis) whether each image the CSV names is \
             certified; run preflight online for it",
        ),
        timed(|| scc_in_csv(bundle)),
        timed(|| related_images(bundle)),
        timed(|| restricted_network(bundle)),
        timed(|| required_annotations(bundle)),
    ]
}

fn csv_of(bundle: &BundleDir) -> Option<&Manifest> {
    bundle.csvs().next()
}

fn annotations(csv: &Value) -> serde_json::Map<String, Value> {
    csv.pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn no_csv(check: &'static Check, bundle: &BundleDir) -> CheckResult {
    CheckResult::error(
        check,
        format!(
            "{}: no ClusterServiceVersion in manifests/; the bundle cannot be loaded",
            bundle.root.display()
        ),
    )
}

/// The OpenShift version `com.redhat.openshift.versions` targets, as preflight's
/// `targetVersion` reads it (`=v4.12`, `v4.12-v4.14`, `v4.12`: a bare version means "this
/// and later", so the latest released).
pub fn target_openshift_version(label: &str) -> Result<String, String> {
    const LATEST_RELEASED: &str = "4.21";
    let clean = |s: &str| s.replace(['\'', '"', 'v'], "");
    let major_minor = |s: &str, what: &str| {
        semver_range::parse_version_tolerant(s)
            .map(|v| format!("{}.{}", v.major, v.minor))
            .map_err(|e| format!("unable to parse the {what}: {e}"))
    };
    if let Some(rest) = label.strip_prefix('=') {
        let version = clean(rest.split('=').next().unwrap_or(""));
        return major_minor(&version, &format!("value ({version}) on ({label})"));
    }
    let range = clean(label);
    if range.len() <= 1 {
        return Err("unable to parse the version: unknown error".into());
    }
    if !range.contains('-') {
        let v = semver_range::parse_version_tolerant(&range)
            .map_err(|e| format!("unable to parse the version: {e}"))?;
        let latest = semver_range::parse_version_tolerant(LATEST_RELEASED).expect("a version");
        return Ok(if v > latest {
            format!("{}.{}", v.major, v.minor)
        } else {
            LATEST_RELEASED.into()
        });
    }
    match range.split('-').nth(1) {
        Some(upper) if !upper.is_empty() => major_minor(upper, "version"),
        _ => Err(format!(
            "unable to parse the version: malformed range: {range}"
        )),
    }
}

/// The Kubernetes version an OpenShift version's next release removes APIs for
/// (preflight's `ocpToKubeVersion`).
fn kube_version_for(openshift: &str) -> Option<&'static str> {
    const TABLE: [(&str, &str); 14] = [
        ("4.9", "1.22"),
        ("4.10", "1.23"),
        ("4.11", "1.24"),
        ("4.12", "1.25"),
        ("4.13", "1.26"),
        ("4.14", "1.27"),
        ("4.15", "1.28"),
        ("4.16", "1.29"),
        ("4.17", "1.30"),
        ("4.18", "1.31"),
        ("4.19", "1.32"),
        ("4.20", "1.33"),
        ("4.21", "1.34"),
        ("4.22", "1.35"),
    ];
    TABLE.iter().find(|(o, _)| *o == openshift).map(|(_, k)| *k)
}

/// What to change, from a validator finding: file:line, field, message and hint.
pub fn fix_of(f: &Finding) -> String {
    let mut s = String::new();
    if let Some(file) = &f.file {
        s.push_str(&file.display().to_string());
        if let Some(line) = f.line {
            s.push_str(&format!(":{line}"));
        }
        s.push_str(": ");
    }
    if let Some(field) = f
        .field
        .as_ref()
        .filter(|fl| !f.message.starts_with(fl.as_str()))
    {
        s.push_str(&format!("{field}: "));
    }
    s.push_str(&f.message);
    if let Some(h) = &f.hint {
        s.push_str(&format!(" ({h})"));
    }
    s
}

/// ValidateOperatorBundle: operator-framework/api's default validators plus OperatorHub v2,
/// standard capabilities and categories, and deprecated APIs against the Kubernetes version
/// the bundle's `com.redhat.openshift.versions` targets; errors fail, warnings do not.
pub fn validate_operator_bundle(bundle: &BundleDir) -> CheckResult {
    let check = &VALIDATE_OPERATOR_BUNDLE;
    if csv_of(bundle).is_none() {
        return no_csv(check, bundle);
    }
    let mut opts = Options::default();
    opts.suites.extend([
        Suite::DeprecatedApis,
        Suite::OperatorHub,
        Suite::Capabilities,
        Suite::Categories,
    ]);
    let mut notes = Vec::new();
    if let Some(label) = bundle.annotation("com.redhat.openshift.versions") {
        let target = match target_openshift_version(label) {
            Ok(t) => t,
            Err(e) => {
                return CheckResult::error(
                    check,
                    format!(
                        "metadata/annotations.yaml: com.redhat.openshift.versions {label:?}: {e}"
                    ),
                );
            }
        };
        if let Some(k8s) = kube_version_for(&target) {
            opts.k8s_version = semver_range::parse_version_tolerant(k8s).ok();
            notes.push(format!(
                "com.redhat.openshift.versions {label:?} targets OpenShift {target}: removed \
                 APIs checked against Kubernetes {k8s}"
            ));
        }
    }
    let report = validate::validate(bundle, &opts);
    let fixes: Vec<String> = report.errors().map(fix_of).collect();
    notes.extend(report.warnings().map(|w| format!("warning: {}", fix_of(w))));
    CheckResult::by_fixes(check, fixes).with_notes(notes)
}

/// The first cluster-permission rule naming `security.openshift.io`
/// `securitycontextconstraints`: its resource names (preflight's
/// `GetSecurityContextConstraints`).
fn requested_sccs(csv: &Value) -> Option<Vec<String>> {
    let perms = csv
        .pointer("/spec/install/spec/clusterPermissions")
        .and_then(Value::as_array)?;
    let has = |rule: &Value, key: &str, want: &str| {
        rule.get(key)
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(want)))
    };
    for p in perms {
        for rule in p
            .get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if has(rule, "apiGroups", "security.openshift.io")
                && has(rule, "resources", "securitycontextconstraints")
            {
                return Some(
                    rule.get("resourceNames")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default(),
                );
            }
        }
    }
    None
}

/// SecurityContextConstraintsInCSV: informational; more than one SCC named in the rule is an
/// error, one is noted for the cluster admin.
pub fn scc_in_csv(bundle: &BundleDir) -> CheckResult {
    let check = &SCC_IN_CSV;
    let Some(csv) = csv_of(bundle) else {
        return no_csv(check, bundle);
    };
    match requested_sccs(&csv.object).unwrap_or_default().as_slice() {
        [] => CheckResult::passed(check).note(
            "No custom security context constraint was detected in the CSV. The default \
             restricted SCC will be used.",
        ),
        [one] => CheckResult::passed(check).note(format!(
            "{}: the operator requests SecurityContextConstraints {one:?}; a cluster admin may \
             need to apply it",
            csv.file.display()
        )),
        many => {
            let mut r = CheckResult::error(check, "only one scc should be requested at a time");
            r.fixes.push(format!(
                "{}: spec.install.spec.clusterPermissions: name one SecurityContextConstraints in \
                 the rule's resourceNames, not {}",
                csv.file.display(),
                many.join(", ")
            ));
            r
        }
    }
}

/// The image pull specs a CSV names: its deployments' containers and init containers,
/// `RELATED_IMAGE_*` environment values, `metadata.annotations.containerImage` and
/// `spec.relatedImages`, sorted and without duplicates.
pub fn csv_images(csv: &Value) -> Vec<String> {
    let mut out = std::collections::BTreeSet::new();
    for d in csv
        .pointer("/spec/install/spec/deployments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for key in ["containers", "initContainers"] {
            for c in d
                .pointer(&format!("/spec/template/spec/{key}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(i) = c.get("image").and_then(Value::as_str) {
                    out.insert(i.to_string());
                }
                for e in c.get("env").and_then(Value::as_array).into_iter().flatten() {
                    let name = e.get("name").and_then(Value::as_str).unwrap_or("");
                    if name.starts_with("RELATED_IMAGE_")
                        && let Some(v) = e.get("value").and_then(Value::as_str)
                        && !v.is_empty()
                    {
                        out.insert(v.to_string());
                    }
                }
            }
        }
    }
    if let Some(i) = csv
        .pointer("/metadata/annotations/containerImage")
        .and_then(Value::as_str)
        .filter(|i| !i.is_empty())
    {
        out.insert(i.to_string());
    }
    out.extend(related_image_list(csv));
    out.into_iter().collect()
}

fn related_image_list(csv: &Value) -> Vec<String> {
    csv.pointer("/spec/relatedImages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("image").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// AllImageRefsInRelatedImages: not enforced; notes each image the CSV uses that
/// `spec.relatedImages` does not list.
pub fn related_images(bundle: &BundleDir) -> CheckResult {
    let check = &RELATED_IMAGES;
    let Some(csv) = csv_of(bundle) else {
        return no_csv(check, bundle);
    };
    let related: std::collections::BTreeSet<String> =
        related_image_list(&csv.object).into_iter().collect();
    let notes = csv_images(&csv.object)
        .into_iter()
        .filter(|i| !related.contains(i))
        .map(|i| {
            format!(
                "{}: spec.relatedImages: add {{name: ..., image: {i}}} (the CSV uses it)",
                csv.file.display()
            )
        });
    CheckResult::passed(check).with_notes(notes)
}

const DISCONNECTED: &str = "features.operators.openshift.io/disconnected";
const INFRASTRUCTURE_FEATURES: &str = "operators.openshift.io/infrastructure-features";

/// Whether the CSV says it supports disconnected clusters: the `disconnected` feature
/// annotation is "true", or the older infrastructure-features list names "disconnected".
fn claims_disconnected(ann: &serde_json::Map<String, Value>) -> bool {
    let feature = ann
        .get(DISCONNECTED)
        .and_then(Value::as_str)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let listed = ann
        .get(INFRASTRUCTURE_FEATURES)
        .and_then(Value::as_str)
        .and_then(|v| serde_json::from_str::<Vec<String>>(v).ok())
        .is_some_and(|l| l.iter().any(|f| f.eq_ignore_ascii_case("disconnected")));
    feature || listed
}

/// Whether a pull spec names a digest (`...@sha256:...`).
fn pinned(image: &str) -> bool {
    image_ref_digest(image).is_some()
}

fn image_ref_digest(image: &str) -> Option<&str> {
    crate::grammar::image_ref::split(image)
        .2
        .filter(|d| !d.is_empty())
}

/// FollowsRestrictedNetworkEnablementGuidelines: a CSV that claims disconnected support
/// lists its images in relatedImages, all pinned by digest, and passes them to its
/// containers as `RELATED_IMAGE_*` variables.
pub fn restricted_network(bundle: &BundleDir) -> CheckResult {
    let check = &RESTRICTED_NETWORK;
    let Some(csv) = csv_of(bundle) else {
        return no_csv(check, bundle);
    };
    let file = csv.file.display();
    let ann = annotations(&csv.object);
    if !claims_disconnected(&ann) {
        return CheckResult::failed(
            check,
            vec![format!(
                "{file}: metadata.annotations: set \"{DISCONNECTED}\": \"true\" once the \
                 operator runs on a restricted network (this is safe to ignore otherwise)"
            )],
        );
    }
    let related = related_image_list(&csv.object);
    if related.is_empty() {
        return CheckResult::failed(
            check,
            vec![format!(
                "{file}: spec.relatedImages: list every image the operator runs or deploys, \
                 by digest (at least the controller's)"
            )],
        );
    }
    let unpinned: Vec<String> = related.iter().filter(|i| !pinned(i)).cloned().collect();
    if !unpinned.is_empty() {
        return CheckResult::failed(
            check,
            unpinned
                .iter()
                .map(|i| format!("{file}: spec.relatedImages: pin {i} by digest (@sha256:...)"))
                .collect(),
        );
    }
    let env_refs = csv
        .object
        .pointer("/spec/install/spec/deployments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|d| {
            ["containers", "initContainers"]
                .into_iter()
                .flat_map(move |k| {
                    d.pointer(&format!("/spec/template/spec/{k}"))
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                })
        })
        .flat_map(|c| c.get("env").and_then(Value::as_array).into_iter().flatten())
        .filter(|e| {
            e.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| n.starts_with("RELATED_IMAGE_"))
        })
        .count();
    if env_refs == 0 {
        return CheckResult::failed(
            check,
            vec![format!(
                "{file}: spec.install.spec.deployments[].spec.template.spec.containers[].env: \
                 pass each related image to the controller as RELATED_IMAGE_<NAME>"
            )],
        );
    }
    CheckResult::passed(check)
}

/// The feature annotations RequiredAnnotations asks for, and whether each is required.
pub const FEATURE_ANNOTATIONS: [(&str, bool); 10] = [
    ("features.operators.openshift.io/cnf", false),
    ("features.operators.openshift.io/cni", false),
    ("features.operators.openshift.io/csi", false),
    ("features.operators.openshift.io/disconnected", true),
    ("features.operators.openshift.io/fips-compliant", true),
    ("features.operators.openshift.io/proxy-aware", true),
    ("features.operators.openshift.io/tls-profiles", true),
    ("features.operators.openshift.io/token-auth-aws", true),
    ("features.operators.openshift.io/token-auth-azure", true),
    ("features.operators.openshift.io/token-auth-gcp", true),
];

/// RequiredAnnotations (a warning for now): the seven required feature annotations present,
/// and every feature annotation present (required or optional) exactly "true" or "false".
pub fn required_annotations(bundle: &BundleDir) -> CheckResult {
    let check = &REQUIRED_ANNOTATIONS;
    let Some(csv) = csv_of(bundle) else {
        return no_csv(check, bundle);
    };
    let file = csv.file.display();
    let ann = annotations(&csv.object);
    let mut fixes = Vec::new();
    for (key, required) in FEATURE_ANNOTATIONS {
        match ann.get(key) {
            None if required => fixes.push(format!(
                "{file}: metadata.annotations: add \"{key}\": \"true\" or \"false\""
            )),
            None => {}
            Some(v) if v.as_str() == Some("true") || v.as_str() == Some("false") => {}
            Some(v) => fixes.push(format!(
                "{file}: metadata.annotations[\"{key}\"]: is {v}; must be \"true\" or \"false\" \
                 (lower case, quoted)"
            )),
        }
    }
    CheckResult::by_fixes(check, fixes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openshift_versions_read_as_preflight_reads_them() {
        for (label, want) in [
            ("v4.6-v4.9", Ok("4.9")),
            ("=v4.12", Ok("4.12")),
            ("\"v4.14\"", Ok("4.21")),
            ("v4.23", Ok("4.23")),
            ("v4.12-v4.15", Ok("4.15")),
        ] {
            assert_eq!(
                target_openshift_version(label).as_deref(),
                want.map_err(|e: &str| e.to_string()).as_deref(),
                "{label}"
            );
        }
        assert!(target_openshift_version("v4.12-").is_err());
        assert!(target_openshift_version("v").is_err());
        assert_eq!(kube_version_for("4.9"), Some("1.22"));
        assert_eq!(kube_version_for("4.8"), None);
    }

    #[test]
    fn images_are_collected_from_every_place_a_csv_names_them() {
        let csv = serde_json::json!({
            "metadata": {"annotations": {"containerImage": "q.io/o/op@sha256:aa"}},
            "spec": {
                "relatedImages": [{"name": "x", "image": "q.io/o/x:1"}],
                "install": {"spec": {"deployments": [{"spec": {"template": {"spec": {
                    "containers": [{"image": "q.io/o/op:1", "env": [
                        {"name": "RELATED_IMAGE_Y", "value": "q.io/o/y:2"},
                        {"name": "OTHER", "value": "q.io/o/z:3"}]}],
                    "initContainers": [{"image": "q.io/o/init:1"}]}}}}]}}
            }
        });
        assert_eq!(
            csv_images(&csv),
            [
                "q.io/o/init:1",
                "q.io/o/op:1",
                "q.io/o/op@sha256:aa",
                "q.io/o/x:1",
                "q.io/o/y:2"
            ]
        );
    }
}
