//! DeployableByOLM without a cluster: the deploy goes through the install flow against the
//! fake API server of the flow tests (which plays OLM), then cleans up; a CSV that fails
//! makes the check fail with the CSV's reason; without a kubeconfig the check is reported as
//! not run, with why. With `E2E_KUBECONFIG` (a cluster with OLM) and `E2E_BUNDLE_IMAGE` (a
//! bundle image the cluster pulls) the real thing runs.

#[path = "support/fake_kube.rs"]
mod fake_kube;
#[path = "support/prerequisite.rs"]
mod prerequisite;

use fake_kube::*;
use olm_bundler::certify::Verdict;
use olm_bundler::certify::operator::deployable::{Mode, Plan};
use olm_bundler::deploy::objects::{CatalogAddress, CatalogServing};
use olm_bundler::ops::check::deploy::deploy_with;

fn plan() -> Plan {
    Plan {
        package: "demo".into(),
        channel: Some("stable".into()),
        csv: "demo.v1.0.0".into(),
        app: "demo-catalog".into(),
        install_namespace: NS.into(),
        target_namespace: format!("{NS}-target"),
        mode: Mode::OwnNamespace,
        target_namespaces: vec![NS.into()],
        deployments: vec!["demo-operator".into()],
    }
}

fn serving() -> CatalogServing {
    CatalogServing::Address(CatalogAddress::parse("192.0.2.10:50051").unwrap())
}

#[tokio::test]
async fn a_bundle_olm_installs_passes_and_everything_is_cleaned_up() {
    let (client, server) = fake(true, Objects::new(), olm_controller(Olm::default()));
    let mut rec = Recorder::default();
    let r = deploy_with(&client, &plan(), serving(), fast(5000), &mut rec).await;
    assert_eq!(r.verdict, Verdict::Passed, "{:?}", r.fixes);
    assert!(
        r.notes[0]
            .starts_with("CSV demo.v1.0.0 succeeded; namespace ops (OwnNamespace, targets ops)"),
        "{:?}",
        r.notes
    );
    let s = server.lock().unwrap();
    // Created through the install flow: namespace, CatalogSource, OperatorGroup, Subscription.
    let created: Vec<&str> = s
        .log
        .iter()
        .filter(|l| l.starts_with("POST"))
        .map(String::as_str)
        .collect();
    assert_eq!(
        created,
        [
            "POST /api/v1/namespaces",
            "POST /apis/operators.coreos.com/v1alpha1/namespaces/ops/catalogsources",
            "POST /apis/operators.coreos.com/v1/namespaces/ops/operatorgroups",
            "POST /apis/operators.coreos.com/v1alpha1/namespaces/ops/subscriptions",
        ]
    );
    // The CatalogSource dials the address it was given.
    let cs = s
        .bodies
        .iter()
        .find(|(k, _)| k.ends_with("/catalogsources"))
        .unwrap();
    assert_eq!(cs.1["spec"]["address"], "192.0.2.10:50051");
    // And every object it made is deleted: Subscription, CSV, CatalogSource, OperatorGroup,
    // then the namespace.
    let deleted: Vec<String> = s
        .log
        .iter()
        .filter(|l| l.starts_with("DELETE"))
        .cloned()
        .collect();
    for what in [
        "subscriptions/demo",
        "clusterserviceversions/demo.v1.0.0",
        "catalogsources/demo-catalog",
        "operatorgroups/demo-catalog",
        "namespaces/ops",
    ] {
        assert!(
            deleted.iter().any(|d| d.ends_with(what)),
            "{what} not deleted: {deleted:?}"
        );
    }
}

#[tokio::test]
async fn a_csv_that_fails_fails_the_check_with_its_reason() {
    let cfg = Olm {
        csv_fails: true,
        ..Olm::default()
    };
    let (client, _server) = fake(true, Objects::new(), olm_controller(cfg));
    let mut rec = Recorder::default();
    let r = deploy_with(&client, &plan(), serving(), fast(3000), &mut rec).await;
    assert_eq!(r.verdict, Verdict::Failed);
    assert!(
        r.fixes[0].contains("InstallComponentFailed")
            && r.fixes[0].contains("deployment demo-operator not ready"),
        "{:?}",
        r.fixes
    );
}

#[tokio::test]
async fn without_olm_the_check_fails_saying_so() {
    let (client, _server) = fake(false, Objects::new(), olm_controller(Olm::default()));
    let mut rec = Recorder::default();
    let r = deploy_with(&client, &plan(), serving(), fast(1000), &mut rec).await;
    assert_eq!(r.verdict, Verdict::Failed);
    assert!(r.fixes[0].contains("OLM is not installed"), "{:?}", r.fixes);
}

#[tokio::test]
async fn without_a_cluster_deployable_by_olm_is_not_run_with_why() {
    use olm_bundler::ops::check::operator::{OperatorRequest, check};
    let bundle = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bundle");
    let req = OperatorRequest {
        bundle: bundle.display().to_string(),
        registry: Default::default(),
        cluster: None,
        no_cluster_reason: "no cluster: pass --kubeconfig".into(),
        artifacts: Default::default(),
    };
    let report = check(&req, &mut Recorder::default()).await.unwrap();
    let d = report
        .results
        .iter()
        .find(|r| r.check.name == "DeployableByOLM")
        .unwrap();
    assert_eq!(
        d.verdict,
        Verdict::NotRun("no cluster: pass --kubeconfig".into())
    );
    assert!(!report.passed());
    assert!(report.not_run().contains(&"DeployableByOLM"));
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    let errors: Vec<&str> = json["results"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert!(errors.contains(&"DeployableByOLM"));
}

/// The real thing: `E2E_KUBECONFIG` names a cluster with OLM and `E2E_BUNDLE_IMAGE` a bundle
/// image it pulls (reverse-words' pushed by the E2E setup); the catalog image goes to
/// `E2E_INDEX_IMAGE`.
#[tokio::test]
async fn e2e_deployable_by_olm_on_a_real_cluster() {
    let (Ok(kubeconfig), Ok(bundle)) = (
        std::env::var("E2E_KUBECONFIG"),
        std::env::var("E2E_BUNDLE_IMAGE"),
    ) else {
        prerequisite::skip_opt_in("E2E_KUBECONFIG and E2E_BUNDLE_IMAGE not set: no cluster test");
        return;
    };
    use olm_bundler::ops::check::deploy::{CatalogMode, ClusterSettings};
    use olm_bundler::ops::check::operator::{OperatorRequest, check};
    let req = OperatorRequest {
        bundle: bundle.clone(),
        registry: Default::default(),
        cluster: Some(ClusterSettings {
            kubeconfig: Some(kubeconfig.into()),
            context: None,
            channel: None,
            catalog: CatalogMode::Image {
                index_image: std::env::var("E2E_INDEX_IMAGE").ok(),
                olm_binary: env!("CARGO_BIN_EXE_olm").into(),
            },
            timeout: std::time::Duration::from_secs(360),
        }),
        no_cluster_reason: String::new(),
        artifacts: Default::default(),
    };
    let report = check(&req, &mut Recorder::default()).await.unwrap();
    let d = report
        .results
        .iter()
        .find(|r| r.check.name == "DeployableByOLM")
        .unwrap();
    assert_eq!(d.verdict, Verdict::Passed, "{}", report.to_text(&bundle));
}
