//! `olm check operator`'s offline checks: the verdicts preflight's rules give for every
//! certified bundle in shared/data (each expectation written down from reading the rule and
//! the bundle), preflight's own Go-test bundles recreated (`internal/policy/operator/testdata`)
//! with the verdicts its tests assert, and crafted variants that fail exactly the check they
//! break, by name.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use olm_bundler::bundle::load::BundleDir;
use olm_bundler::certify::operator::{self, deployable};
use olm_bundler::certify::{Bucket, CheckResult, Verdict};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/data/bundles"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("shared/data/bundles"))
}

/// Check name -> short verdict (`pass`, `fail`, `error`, `not run`) of the offline checks.
fn verdicts(results: &[CheckResult]) -> BTreeMap<&'static str, &'static str> {
    results
        .iter()
        .map(|r| {
            let v = match &r.verdict {
                Verdict::Passed => "pass",
                Verdict::Failed => "fail",
                Verdict::Error(_) => "error",
                Verdict::NotRun(_) => "not run",
            };
            (r.check.name, v)
        })
        .collect()
}

fn offline(dir: &Path) -> Vec<CheckResult> {
    operator::offline(&BundleDir::load(dir).unwrap())
}

/// The certified bundles, and what preflight's rules give for each:
/// - ValidateOperatorBundle: the api validators (default, operatorhub v2, capabilities,
///   categories, deprecated APIs at the Kubernetes version `com.redhat.openshift.versions`
///   targets) report no error for any of the four.
/// - RequiredAnnotations: only joget sets the seven feature annotations (all "false");
///   the others set none, a failure filed as a warning.
/// - FollowsRestrictedNetworkEnablementGuidelines: none claims disconnected support (joget
///   says "false"), so all fail (not enforced: optional).
/// - SecurityContextConstraintsInCSV: none requests an SCC: pass.
/// - AllImageRefsInRelatedImages: always passes (not enforced).
/// - BundleImageRefsAreCertified: needs Pyxis: not run.
#[test]
fn certified_bundles_get_the_verdicts_preflights_rules_give() {
    let root = shared().join("certified-operators/operators");
    if !root.is_dir() {
        prerequisite::missing("shared/data/bundles/certified-operators not found");
        return;
    }
    let expect = |required_annotations: &'static str| {
        BTreeMap::from([
            ("ValidateOperatorBundle", "pass"),
            ("BundleImageRefsAreCertified", "not run"),
            ("SecurityContextConstraintsInCSV", "pass"),
            ("AllImageRefsInRelatedImages", "pass"),
            ("FollowsRestrictedNetworkEnablementGuidelines", "fail"),
            ("RequiredAnnotations", required_annotations),
        ])
    };
    let cases = [
        (
            "fujitsu-enterprise-postgres-operator/v5.1.9",
            expect("fail"),
        ),
        ("ibm-security-verify-operator/23.3.0", expect("fail")),
        ("joget-dx8-operator/0.0.13", expect("pass")),
        ("leaksignal-operator/1.6.1", expect("fail")),
    ];
    for (bundle, want) in cases {
        let results = offline(&root.join(bundle));
        assert_eq!(verdicts(&results), want, "{bundle}");
        // A failure of RequiredAnnotations is a warning, never a failed check.
        for r in &results {
            assert!(
                r.bucket() != Bucket::Failed,
                "{bundle}: {} failed",
                r.check.name
            );
        }
    }
    // ibm's CSV uses two images and lists none in relatedImages: both named in notes.
    let ibm = offline(&root.join("ibm-security-verify-operator/23.3.0"));
    let related = ibm
        .iter()
        .find(|r| r.check.name == "AllImageRefsInRelatedImages")
        .unwrap();
    assert_eq!(related.notes.len(), 2, "{:?}", related.notes);
    // "v4.6-v4.14" targets OpenShift 4.14, so removed APIs are checked against 1.27.
    let leak = offline(&root.join("leaksignal-operator/1.6.1"));
    assert!(
        leak[0].notes[0].contains("Kubernetes 1.27"),
        "{:?}",
        leak[0].notes
    );
    // The fixes of RequiredAnnotations name the file and every missing annotation.
    let ra = leak
        .iter()
        .find(|r| r.check.name == "RequiredAnnotations")
        .unwrap();
    assert_eq!(ra.fixes.len(), 7);
    assert!(ra.fixes[0].starts_with("manifests/leaksignal.clusterserviceversion.yaml: metadata.annotations: add \"features.operators.openshift.io/disconnected\""));
}

/// A minimal valid bundle (preflight's `all_namespaces`/`valid_bundle` memcached operator
/// recreated): one CSV for AllNamespaces, no owned CRDs, with what OperatorHub's validators
/// ask for.
const CSV: &str = r#"apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  annotations:
    capabilities: Basic Install
    categories: Database
  name: memcached-operator.v0.0.1
  namespace: placeholder
spec:
  description: Memcached Operator description.
  displayName: Memcached Operator
  icon:
  - base64data: PHN2Zy8+
    mediatype: image/svg+xml
  install:
    spec:
      deployments:
      - name: memcached-operator-controller-manager
        spec:
          replicas: 1
          selector:
            matchLabels:
              control-plane: controller-manager
          template:
            metadata:
              labels:
                control-plane: controller-manager
            spec:
              containers:
              - name: manager
                image: quay.io/example/memcached-operator:v0.0.1
              serviceAccountName: memcached-operator-controller-manager
      permissions:
      - rules:
        - apiGroups: [""]
          resources: [configmaps]
          verbs: [get]
        serviceAccountName: memcached-operator-controller-manager
    strategy: deployment
  installModes:
  - supported: false
    type: OwnNamespace
  - supported: false
    type: SingleNamespace
  - supported: false
    type: MultiNamespace
  - supported: true
    type: AllNamespaces
  keywords: [memcached-operator]
  links:
  - name: Memcached Operator
    url: https://memcached-operator.domain
  maintainers:
  - email: your@email.com
    name: Maintainer Name
  maturity: alpha
  provider:
    name: Provider Name
    url: https://your.domain
  version: 0.0.1
"#;

const ANNOTATIONS: &str = "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: testPackage\n  operators.operatorframework.io.bundle.channels.v1: testChannel\n  operators.operatorframework.io.bundle.channel.default.v1: testChannel\n";

/// A bundle directory with `csv` and `annotations`.
fn bundle(dir: &Path, name: &str, csv: &str, annotations: &str) -> PathBuf {
    let root = dir.join(name);
    std::fs::create_dir_all(root.join("manifests")).unwrap();
    std::fs::create_dir_all(root.join("metadata")).unwrap();
    std::fs::write(root.join("manifests/op.clusterserviceversion.yaml"), csv).unwrap();
    std::fs::write(root.join("metadata/annotations.yaml"), annotations).unwrap();
    root
}

fn with_annotations(csv: &str, lines: &[(&str, &str)]) -> String {
    let extra: String = lines
        .iter()
        .map(|(k, v)| format!("    {k}: \"{v}\"\n"))
        .collect();
    csv.replacen("  annotations:\n", &format!("  annotations:\n{extra}"), 1)
}

const FEATURES: [&str; 7] = [
    "features.operators.openshift.io/disconnected",
    "features.operators.openshift.io/fips-compliant",
    "features.operators.openshift.io/proxy-aware",
    "features.operators.openshift.io/tls-profiles",
    "features.operators.openshift.io/token-auth-aws",
    "features.operators.openshift.io/token-auth-azure",
    "features.operators.openshift.io/token-auth-gcp",
];

/// A CSV prepared for restricted networks (preflight's `disconnected_bundle`): the
/// infrastructure-features list names Disconnected, images pinned, listed in relatedImages
/// and passed as RELATED_IMAGE_ variables.
fn disconnected_csv() -> String {
    let pinned = "quay.io/example/memcached-operator@sha256:b4d060da584f7f5f7935e8fb78a0b62b1abb829717ad522190ac7747abd9fbd1";
    let fedora = "quay.io/fedora/fedora@sha256:ce08a91085403ecbc637eb2a96bd3554d75537871a12a14030b89243501050f2";
    with_annotations(CSV, &[("operators.openshift.io/infrastructure-features", "[\\\"Disconnected\\\"]")])
        .replace("image: quay.io/example/memcached-operator:v0.0.1", &format!("image: {pinned}\n                env:\n                - name: RELATED_IMAGE_FEDORA\n                  value: {fedora}"))
        .replace("  version: 0.0.1\n", &format!("  version: 0.0.1\n  relatedImages:\n  - name: fedora\n    image: {fedora}\n  - name: manager\n    image: {pinned}\n"))
}

/// preflight's operator Go tests, their bundles recreated, their assertions kept.
#[test]
fn preflights_testdata_bundles_give_its_tests_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = |root: &Path, check: &str| verdicts(&offline(root))[check];

    // validate_operator_bundle_test: all_namespaces passes, invalid_bundle does not.
    let all = bundle(d, "all_namespaces", CSV, ANNOTATIONS);
    assert_eq!(
        v(&all, "ValidateOperatorBundle"),
        "pass",
        "{:?}",
        offline(&all)[0].fixes
    );
    let invalid_csv = CSV
        .replace("  - base64data: PHN2Zy8+\n    mediatype: image/svg+xml\n", "  - base64data: \"\"\n    mediatype: \"\"\n")
        .replace("  description: Memcached", "  customresourcedefinitions:\n    owned:\n    - kind: Memcached\n      name: memcacheds.cache.example.com\n      version: v1alpha1\n  description: Memcached");
    let invalid = bundle(
        d,
        "invalid_bundle",
        &invalid_csv,
        "annotations:\n  com.redhat.openshift.versions: \"v4.6-v4.9\"\n  operators.operatorframework.io.bundle.package.v1: testPackage\n  operators.operatorframework.io.bundle.channel.default.v1: testChannel\n",
    );
    assert_eq!(v(&invalid, "ValidateOperatorBundle"), "fail");

    // restricted_network_aware_test: disconnected_bundle passes, invalid_bundle fails.
    let disc = bundle(d, "disconnected_bundle", &disconnected_csv(), ANNOTATIONS);
    assert_eq!(
        v(&disc, "FollowsRestrictedNetworkEnablementGuidelines"),
        "pass"
    );
    assert_eq!(
        v(&invalid, "FollowsRestrictedNetworkEnablementGuidelines"),
        "fail"
    );

    // required_annotations_test: the prepared bundle passes; invalid_bundle (none), wrong
    // values for the required ones, and a wrong optional value fail.
    let all_false: Vec<(&str, &str)> = FEATURES.iter().map(|f| (*f, "false")).collect();
    let mut prepared = all_false.clone();
    prepared[0].1 = "true";
    let ok = bundle(
        d,
        "required_annotations_bundle",
        &with_annotations(CSV, &prepared),
        ANNOTATIONS,
    );
    assert_eq!(v(&ok, "RequiredAnnotations"), "pass");
    assert_eq!(v(&invalid, "RequiredAnnotations"), "fail");
    let wrong: Vec<(&str, &str)> = FEATURES
        .iter()
        .zip(["foo", "bar", "foo", "bar", "cat", "hat", ""])
        .map(|(f, x)| (*f, x))
        .collect();
    let bad = bundle(
        d,
        "incorrect_required_annotations_bundle",
        &with_annotations(CSV, &wrong),
        ANNOTATIONS,
    );
    assert_eq!(v(&bad, "RequiredAnnotations"), "fail");
    let mut optional = all_false;
    optional.push(("features.operators.openshift.io/cnf", "foo"));
    let opt = bundle(
        d,
        "incorrect_optional_annotations_bundle",
        &with_annotations(CSV, &optional),
        ANNOTATIONS,
    );
    assert_eq!(v(&opt, "RequiredAnnotations"), "fail");
    let opt_results = offline(&opt);
    let ra = opt_results
        .iter()
        .find(|r| r.check.name == "RequiredAnnotations")
        .unwrap();
    assert_eq!(ra.fixes.len(), 1);
    assert!(
        ra.fixes[0].contains("features.operators.openshift.io/cnf"),
        "{:?}",
        ra.fixes
    );

    // deployable_by_olm_test: the OperatorGroup for each install mode.
    let modes = |own: bool, single: bool, multi: bool, all: bool| {
        CSV.replace(
            "  - supported: false\n    type: OwnNamespace\n  - supported: false\n    type: SingleNamespace\n  - supported: false\n    type: MultiNamespace\n  - supported: true\n    type: AllNamespaces\n",
            &format!("  - supported: {own}\n    type: OwnNamespace\n  - supported: {single}\n    type: SingleNamespace\n  - supported: {multi}\n    type: MultiNamespace\n  - supported: {all}\n    type: AllNamespaces\n"),
        )
    };
    for (name, csv, mode, targets) in [
        (
            "all",
            modes(false, false, false, true),
            deployable::Mode::AllNamespaces,
            vec![],
        ),
        (
            "own",
            modes(true, true, false, false),
            deployable::Mode::OwnNamespace,
            vec!["install"],
        ),
        (
            "single",
            modes(false, true, false, false),
            deployable::Mode::SingleNamespace,
            vec!["target"],
        ),
        (
            "multi",
            modes(false, false, true, false),
            deployable::Mode::MultiNamespace,
            vec!["target", "install"],
        ),
    ] {
        let root = bundle(d, &format!("{name}_namespace"), &csv, ANNOTATIONS);
        let p = deployable::plan(&BundleDir::load(&root).unwrap(), None, "abc12").unwrap();
        assert_eq!(p.mode, mode, "{name}");
        // testPackage is not a DNS-1035 label (upper case): preflight prefixes it.
        assert_eq!(p.app, "p-testPackage");
        assert_eq!(p.install_namespace, "p-testPackage-abc12");
        let want: Vec<String> = targets
            .iter()
            .map(|t| match *t {
                "install" => p.install_namespace.clone(),
                _ => p.target_namespace.clone(),
            })
            .collect();
        assert_eq!(p.target_namespaces, want, "{name}");
        assert_eq!(p.channel.as_deref(), Some("testChannel"));
    }
    let p = deployable::plan(
        &BundleDir::load(&all).unwrap(),
        Some("non-default-channel"),
        "x",
    )
    .unwrap();
    assert_eq!(p.channel.as_deref(), Some("non-default-channel"));
}

/// Crafted variants of a bundle that passes every offline check: each breaks one rule and
/// changes exactly that check's verdict.
#[test]
fn crafted_variants_fail_exactly_the_check_they_break() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let features: Vec<(&str, &str)> = FEATURES.iter().map(|f| (*f, "false")).collect();
    let good_csv = with_annotations(&disconnected_csv(), &features);
    let good = bundle(d, "good", &good_csv, ANNOTATIONS);
    let base = verdicts(&offline(&good));
    for (check, v) in &base {
        let want = if *check == "BundleImageRefsAreCertified" {
            "not run"
        } else {
            "pass"
        };
        assert_eq!(*v, want, "{check} on the good bundle: {:?}", offline(&good));
    }
    let variants: Vec<(&str, String, &str)> = vec![
        (
            "ValidateOperatorBundle",
            good_csv.replace("  provider:\n    name: Provider Name\n    url: https://your.domain\n", ""),
            "fail",
        ),
        (
            "RequiredAnnotations",
            good_csv.replace("features.operators.openshift.io/proxy-aware: \"false\"", "features.operators.openshift.io/proxy-aware: \"False\""),
            "fail",
        ),
        (
            "FollowsRestrictedNetworkEnablementGuidelines",
            good_csv.replace("  - name: manager\n    image: quay.io/example/memcached-operator@sha256:b4d060da584f7f5f7935e8fb78a0b62b1abb829717ad522190ac7747abd9fbd1\n", "  - name: manager\n    image: quay.io/example/memcached-operator:v0.0.1\n"),
            "fail",
        ),
        (
            "SecurityContextConstraintsInCSV",
            good_csv.replace("      permissions:\n", "      clusterPermissions:\n      - rules:\n        - apiGroups: [security.openshift.io]\n          resources: [securitycontextconstraints]\n          resourceNames: [anyuid, privileged]\n          verbs: [use]\n        serviceAccountName: memcached-operator-controller-manager\n      permissions:\n"),
            "error",
        ),
    ];
    for (check, csv, want) in variants {
        assert_ne!(csv, good_csv, "{check}: the variant changes nothing");
        let root = bundle(d, check, &csv, ANNOTATIONS);
        let got = verdicts(&offline(&root));
        let mut expected = base.clone();
        expected.insert(check, want);
        assert_eq!(got, expected, "{check}");
    }
}

/// The scorecard checks run operator-sdk scorecard's built-in tests in-process with
/// preflight's selectors: on operator-sdk's memcached bundle without a spec in its example CR
/// basic-check-spec fails, which preflight files as an error with the result's log, and the
/// fix is scorecard's error; the artifacts hold scorecard's JSON.
#[tokio::test]
async fn scorecard_checks_use_preflights_selectors_and_rule() {
    use olm_bundler::ops::check::operator::{OperatorRequest, check};
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/scorecard");
    let run = |dir: PathBuf, artifacts: Option<PathBuf>| async move {
        let req = OperatorRequest {
            bundle: dir.display().to_string(),
            registry: Default::default(),
            cluster: None,
            no_cluster_reason: "offline".into(),
            artifacts: olm_bundler::ops::check::ArtifactOptions {
                dir: artifacts,
                junit: false,
            },
        };
        check(&req, &mut olm_bundler::deploy::flow::Silent)
            .await
            .unwrap()
    };
    let out = tempfile::tempdir().unwrap();
    let no_spec = run(fixtures.join("no-spec"), Some(out.path().to_path_buf())).await;
    let basic = &no_spec.results[0];
    assert_eq!(basic.check.name, "ScorecardBasicSpecCheck");
    assert!(
        matches!(basic.verdict, Verdict::Error(_)),
        "{:?}",
        basic.verdict
    );
    assert!(
        basic.fixes[0].contains("spec does not exist for the custom resource"),
        "{:?}",
        basic.fixes
    );
    assert_eq!(basic.bucket(), Bucket::Errors);
    let json: serde_json::Value = serde_json::from_slice(
        &std::fs::read(
            out.path()
                .join("operator_bundle_scorecard_BasicSpecCheck.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(json["kind"], "TestList");
    assert!(
        out.path()
            .join("operator_bundle_scorecard_OlmSuiteCheck.json")
            .is_file()
    );
    let memcached = run(fixtures.join("memcached"), None).await;
    assert_eq!(memcached.results[0].verdict, Verdict::Passed);
}

/// The scorecard checks on the certified bundles, from scorecard's rules: every example CR
/// has a spec (basic passes); the olm suite fails for fujitsu (CRD fields without
/// validation), joget and leaksignal (owned CRDs without resources, spec fields without
/// descriptors), which preflight files as errors; ibm's passes.
#[tokio::test]
async fn certified_bundles_get_scorecards_verdicts() {
    use olm_bundler::ops::check::operator::{OperatorRequest, check};
    let root = shared().join("certified-operators/operators");
    if !root.is_dir() {
        prerequisite::missing("shared/data/bundles/certified-operators not found");
        return;
    }
    for (bundle, olm_suite) in [
        ("fujitsu-enterprise-postgres-operator/v5.1.9", "error"),
        ("ibm-security-verify-operator/23.3.0", "pass"),
        ("joget-dx8-operator/0.0.13", "error"),
        ("leaksignal-operator/1.6.1", "error"),
    ] {
        let req = OperatorRequest {
            bundle: root.join(bundle).display().to_string(),
            registry: Default::default(),
            cluster: None,
            no_cluster_reason: "offline".into(),
            artifacts: Default::default(),
        };
        let report = check(&req, &mut olm_bundler::deploy::flow::Silent)
            .await
            .unwrap();
        let v = verdicts(&report.results);
        assert_eq!(v["ScorecardBasicSpecCheck"], "pass", "{bundle}");
        assert_eq!(v["ScorecardOlmSuiteCheck"], olm_suite, "{bundle}");
        assert_eq!(v["DeployableByOLM"], "not run", "{bundle}");
    }
}
