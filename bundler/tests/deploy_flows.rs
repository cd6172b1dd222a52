//! Install, upgrade, uninstall and status flows through kube's `Client` over a tower-test mock.
//!
//! The mock (tests/support/fake_kube.rs) is a small in-memory API server (create, get, list,
//! merge-patch, delete with a visible terminating state) plus a `controller` closure that runs
//! before every request and plays OLM: it moves CatalogSources to READY, resolves
//! Subscriptions into InstallPlans and CSVs, and so on, as each test scripts it. Tests then check the outcome, the error text and
//! diagnostics, and the order of the calls made.

#[path = "support/fake_kube.rs"]
mod fake_kube;

use fake_kube::*;
use olm_bundler::deploy::flow::{
    self, Action, CatalogTarget, FlowError, UninstallSpec, UpgradeSpec,
};
use olm_bundler::deploy::objects::{
    Approval, CatalogAddress, CatalogServing, CatalogSpec, InstallMode, InstallSpec, Targets,
};
use serde_json::{Value, json};

fn spec(approval: Approval) -> InstallSpec {
    InstallSpec {
        package: "demo".into(),
        namespace: NS.into(),
        channel: Some("stable".into()),
        starting_csv: None,
        approval,
        mode: InstallMode::OwnNamespace,
        targets: Targets::resolve(InstallMode::OwnNamespace, NS, &[]).unwrap(),
        catalog: CatalogSpec {
            name: "demo-catalog".into(),
            serving: CatalogServing::Image {
                image: "registry.test/demo-catalog:v1".into(),
                poll_interval: Some("10m".into()),
            },
            display_name: "Demo".into(),
            publisher: Some("tests".into()),
        },
        operator_group_name: "demo-og".into(),
    }
}

#[tokio::test]
async fn install_happy_path_creates_objects_in_order_and_waits() {
    let (client, server) = fake(true, Objects::new(), olm_controller(Olm::default()));
    let mut rec = Recorder::default();
    let out = flow::install(
        &client,
        &spec(Approval::Automatic),
        false,
        fast(5000),
        &mut rec,
    )
    .await
    .unwrap();
    assert_eq!(out.csv, "demo.v1.0.0");
    assert_eq!(out.install_plan, "install-abc12");
    assert!(!out.pending_approval);
    assert_eq!(out.catalog_source, ("demo-catalog".into(), Action::Created));
    assert_eq!(out.operator_group, ("demo-og".into(), Action::Created));
    assert_eq!(out.subscription, ("demo".into(), Action::Created));

    let log = log_without_polls(&server);
    let expected_prefix = [
        format!("GET {V1A1}"),
        format!("GET {V1}"),
        format!("GET /api/v1/namespaces/{NS}"),
        "POST /api/v1/namespaces".to_string(),
        format!("GET {}", cs_path("demo-catalog")),
        format!("POST {V1A1}/namespaces/{NS}/catalogsources"),
        format!("GET {V1}/namespaces/{NS}/operatorgroups"),
        format!("POST {V1}/namespaces/{NS}/operatorgroups"),
        format!("GET {V1A1}/namespaces/{NS}/subscriptions"),
        format!("POST {V1A1}/namespaces/{NS}/subscriptions"),
        format!("GET {}", cs_path("demo-catalog")),
        format!("GET {}", sub_path("demo")),
        format!("GET {}", ip_path("install-abc12")),
        format!("GET {}", csv_path("demo.v1.0.0")),
    ];
    assert_eq!(log, expected_prefix, "calls");
    // No approval patch with Automatic.
    assert!(!log.iter().any(|l| l.starts_with("PATCH")));

    // The bodies sent are the pure builders' objects.
    let srv = server.lock().unwrap();
    let sub_body = &srv
        .bodies
        .iter()
        .find(|(k, _)| k.ends_with("/subscriptions"))
        .unwrap()
        .1;
    assert_eq!(
        sub_body["spec"],
        json!({"name": "demo", "source": "demo-catalog", "sourceNamespace": NS,
               "channel": "stable", "installPlanApproval": "Automatic"})
    );
    let og_body = &srv
        .bodies
        .iter()
        .find(|(k, _)| k.ends_with("/operatorgroups"))
        .unwrap()
        .1;
    assert_eq!(og_body["spec"], json!({"targetNamespaces": [NS]}));
    let cs_body = &srv
        .bodies
        .iter()
        .find(|(k, _)| k.ends_with("/catalogsources"))
        .unwrap()
        .1;
    assert_eq!(
        cs_body["spec"]["grpcPodConfig"]["securityContextConfig"],
        "restricted"
    );
    assert_eq!(
        cs_body["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "olm-bundler"
    );

    // Progress saw the catalog connecting before READY.
    assert!(
        rec.0.iter().any(|l| l == "update connection CONNECTING"),
        "{:?}",
        rec.0
    );
    assert!(rec.0.iter().any(|l| l == "done Succeeded"), "{:?}", rec.0);
}

#[tokio::test]
async fn install_reports_timeout_when_catalog_never_ready() {
    let mut objs = Objects::new();
    seed_event(
        &mut objs,
        "ev1",
        "Failed",
        "Failed to pull image \"registry.test/demo-catalog:v1\": not found",
    );
    let cfg = Olm {
        catalog_ready_after: None,
        ..Olm::default()
    };
    let (client, server) = fake(true, objs, olm_controller(cfg));
    let err = flow::install(
        &client,
        &spec(Approval::Automatic),
        false,
        fast(200),
        &mut Recorder::default(),
    )
    .await
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("timed out after 200ms waiting for CatalogSource demo-catalog to be READY"),
        "{msg}"
    );
    assert!(
        msg.contains("last seen: connection TRANSIENT_FAILURE"),
        "{msg}"
    );
    let diag = err.diagnostics().join("\n");
    assert!(diag.contains("recent events:"), "{diag}");
    assert!(
        diag.contains("Warning Pod/demo-catalog-xyz: Failed: Failed to pull image"),
        "{diag}"
    );
    // Never went past the catalog wait.
    assert!(
        !server
            .lock()
            .unwrap()
            .log
            .iter()
            .any(|l| l.contains("/installplans/"))
    );
}

#[tokio::test]
async fn install_shows_csv_conditions_when_csv_fails() {
    let cfg = Olm {
        csv_fails: true,
        ..Olm::default()
    };
    let (client, _server) = fake(true, Objects::new(), olm_controller(cfg));
    let err = flow::install(
        &client,
        &spec(Approval::Automatic),
        false,
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, FlowError::Wait { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains("ClusterServiceVersion demo.v1.0.0 to succeed failed: InstallComponentFailed: install strategy failed"),
        "{msg}"
    );
    let diag = err.diagnostics().join("\n");
    assert!(
        diag.contains("ClusterServiceVersion demo.v1.0.0: phase Failed InstallComponentFailed"),
        "{diag}"
    );
    assert!(
        diag.contains("condition Installing InstallSucceeded: waiting for install components"),
        "{diag}"
    );
    assert!(
        diag.contains("InstallPlan install-abc12: phase Complete"),
        "{diag}"
    );
}

#[tokio::test]
async fn install_reuses_a_fitting_operator_group_and_namespace() {
    let mut objs = Objects::from([ns_obj()]);
    objs.insert(
        og_path("global-operators"),
        og("global-operators", Some(&[NS])),
    );
    let (client, server) = fake(true, objs, olm_controller(Olm::default()));
    let out = flow::install(
        &client,
        &spec(Approval::Automatic),
        false,
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        out.operator_group,
        ("global-operators".into(), Action::Reused)
    );
    let log = server.lock().unwrap().log.clone();
    assert!(
        !log.iter()
            .any(|l| l.starts_with("POST") && l.contains("operatorgroups"))
    );
    assert!(!log.iter().any(|l| l == "POST /api/v1/namespaces"));
}

#[tokio::test]
async fn install_refuses_a_second_or_unfitting_operator_group() {
    // An AllNamespaces group does not fit OwnNamespace.
    let mut objs = Objects::from([ns_obj()]);
    objs.insert(og_path("all"), og("all", None));
    let (client, server) = fake(true, objs, olm_controller(Olm::default()));
    let err = flow::install(
        &client,
        &spec(Approval::Automatic),
        false,
        fast(500),
        &mut Recorder::default(),
    )
    .await
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("already has OperatorGroup all (AllNamespaces), which does not fit install mode OwnNamespace"),
        "{msg}"
    );
    assert!(
        !server
            .lock()
            .unwrap()
            .log
            .iter()
            .any(|l| l.contains("subscriptions"))
    );

    // Two groups: OLM would install nothing.
    let mut objs = Objects::from([ns_obj()]);
    objs.insert(og_path("a"), og("a", Some(&[NS])));
    objs.insert(og_path("b"), og("b", Some(&[NS])));
    let (client, _) = fake(true, objs, olm_controller(Olm::default()));
    let err = flow::install(
        &client,
        &spec(Approval::Automatic),
        false,
        fast(500),
        &mut Recorder::default(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("has 2 OperatorGroups"), "{err}");
}

#[tokio::test]
async fn manual_approval_is_approved_when_asked() {
    let (client, server) = fake(true, Objects::new(), olm_controller(Olm::default()));
    let out = flow::install(
        &client,
        &spec(Approval::Manual),
        true,
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert!(!out.pending_approval);
    assert_eq!(out.csv, "demo.v1.0.0");
    let srv = server.lock().unwrap();
    let patch = srv
        .bodies
        .iter()
        .find(|(k, _)| k.starts_with("PATCH") && k.contains("/installplans/install-abc12"))
        .expect("approval patch");
    assert_eq!(patch.1, json!({"spec": {"approved": true}}));
}

#[tokio::test]
async fn manual_approval_stops_and_says_so_when_not_asked() {
    let (client, server) = fake(true, Objects::new(), olm_controller(Olm::default()));
    let out = flow::install(
        &client,
        &spec(Approval::Manual),
        false,
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert!(out.pending_approval);
    assert_eq!(out.install_plan, "install-abc12");
    let log = server.lock().unwrap().log.clone();
    assert!(!log.iter().any(|l| l.starts_with("PATCH")), "{log:?}");
    assert!(
        !log.iter().any(|l| l.contains("clusterserviceversions")),
        "{log:?}"
    );
}

#[tokio::test]
async fn missing_olm_is_reported_with_install_instructions() {
    let (client, server) = fake(false, Objects::new(), Box::new(|_| {}));
    let err = flow::install(
        &client,
        &spec(Approval::Automatic),
        false,
        fast(500),
        &mut Recorder::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, FlowError::OlmMissing { .. }));
    let msg = err.to_string();
    assert!(msg.contains("OLM is not installed"), "{msg}");
    assert!(
        msg.contains("subscriptions.operators.coreos.com/v1alpha1"),
        "{msg}"
    );
    assert!(msg.contains("operator-sdk olm install"), "{msg}");
    // Nothing was created.
    assert!(
        !server
            .lock()
            .unwrap()
            .log
            .iter()
            .any(|l| l.starts_with("POST"))
    );
}

#[tokio::test]
async fn uninstall_deletes_in_order_and_waits() {
    let (client, server) = fake(true, installed(), Box::new(|_| {}));
    let out = flow::uninstall(
        &client,
        &UninstallSpec {
            package: "demo".into(),
            namespace: NS.into(),
            delete_crds: true,
            delete_operator_group: true,
        },
        fast(2000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        out.deleted,
        vec![
            format!("Subscription {NS}/demo"),
            format!("ClusterServiceVersion {NS}/demo.v1.0.0"),
            "CustomResourceDefinition widgets.demo.test".to_string(),
            format!("CatalogSource {NS}/demo-catalog"),
            format!("OperatorGroup {NS}/demo-og"),
        ]
    );
    let srv = server.lock().unwrap();
    let deletes: Vec<&String> = srv.log.iter().filter(|l| l.starts_with("DELETE")).collect();
    assert_eq!(deletes.len(), 5);
    // Each delete is followed by GETs until the object is gone, before the next delete.
    for (i, l) in srv.log.iter().enumerate() {
        if let Some(path) = l.strip_prefix("DELETE ") {
            assert_eq!(srv.log[i + 1], format!("GET {path}"), "waited for {path}");
        }
    }
    assert!(!srv.objects.contains_key(&sub_path("demo")));
    assert!(!srv.objects.contains_key(&csv_path("demo.v1.0.0")));
    // The namespace is never deleted.
    assert!(
        srv.objects
            .contains_key(&format!("/api/v1/namespaces/{NS}"))
    );
}

#[tokio::test]
async fn uninstall_keeps_what_it_does_not_own_by_default() {
    let mut objs = installed();
    // Not created by olm: kept.
    objs.get_mut(&cs_path("demo-catalog")).unwrap()["metadata"]["labels"] = json!({});
    let (client, server) = fake(true, objs, Box::new(|_| {}));
    let out = flow::uninstall(
        &client,
        &UninstallSpec {
            package: "demo".into(),
            namespace: NS.into(),
            ..Default::default()
        },
        fast(2000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.deleted.len(), 2, "{out:?}");
    assert_eq!(
        out.kept,
        vec![format!(
            "CatalogSource {NS}/demo-catalog (not created by olm)"
        )]
    );
    {
        let srv = server.lock().unwrap();
        assert!(srv.objects.contains_key(&og_path("demo-og")));
        assert!(srv.objects.contains_key(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.demo.test"
        ));
    }

    // Not installed: a clear error.
    let (client, _) = fake(true, Objects::new(), Box::new(|_| {}));
    let err = flow::uninstall(
        &client,
        &UninstallSpec {
            package: "demo".into(),
            namespace: NS.into(),
            ..Default::default()
        },
        fast(500),
        &mut Recorder::default(),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "package \"demo\" is not installed in namespace \"ops\" (no Subscription for it)"
    );
}

#[tokio::test]
async fn upgrade_moves_to_the_next_csv_approving_its_plan() {
    let mut step = 0;
    // OLM: once the catalog image changes, resolve v2 into a plan that needs approval; once
    // approved, complete it and install the CSV.
    let controller: Controller = Box::new(move |objs: &mut Objects| {
        let image = objs[&cs_path("demo-catalog")]["spec"]["image"].clone();
        if image != "registry.test/demo-catalog:v2" {
            return;
        }
        step += 1;
        if step == 1 {
            return; // one look at the old state first
        }
        let ip = ip_path("install-v2");
        if !objs.contains_key(&ip) {
            objs.insert(
                ip.clone(),
                json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                       "metadata": {"name": "install-v2", "namespace": NS},
                       "spec": {"clusterServiceVersionNames": ["demo.v2.0.0"], "approval": "Manual", "approved": false},
                       "status": {"phase": "RequiresApproval"}}),
            );
            let st = &mut objs.get_mut(&sub_path("demo")).unwrap()["status"];
            st["currentCSV"] = json!("demo.v2.0.0");
            st["state"] = json!("UpgradePending");
            st["installPlanRef"] = json!({"name": "install-v2", "namespace": NS});
            return;
        }
        if objs[&ip]["spec"]["approved"] == json!(true) {
            objs.get_mut(&ip).unwrap()["status"]["phase"] = json!("Complete");
            objs.insert(
                csv_path("demo.v2.0.0"),
                json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                       "metadata": {"name": "demo.v2.0.0", "namespace": NS},
                       "spec": {}, "status": {"phase": "Succeeded"}}),
            );
        }
    });
    let (client, server) = fake(true, installed(), controller);
    let out = flow::upgrade(
        &client,
        &UpgradeSpec {
            package: "demo".into(),
            namespace: NS.into(),
            catalog: Some(CatalogTarget::Image("registry.test/demo-catalog:v2".into())),
            channel: None,
        },
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.from, "demo.v1.0.0");
    assert_eq!(out.to, "demo.v2.0.0");
    assert_eq!(out.install_plan.as_deref(), Some("install-v2"));
    let srv = server.lock().unwrap();
    let patches: Vec<&(String, Value)> = srv
        .bodies
        .iter()
        .filter(|(k, _)| k.starts_with("PATCH"))
        .collect();
    assert_eq!(patches.len(), 2, "{patches:?}");
    assert_eq!(
        patches[0].1,
        json!({"spec": {"image": "registry.test/demo-catalog:v2", "address": null}})
    );
    assert_eq!(patches[1].1, json!({"spec": {"approved": true}}));
}

#[tokio::test]
async fn upgrade_says_up_to_date_or_times_out_when_nothing_newer_resolves() {
    // Nothing asked to change, OLM at latest: an immediate answer, no writes.
    let (client, server) = fake(true, installed(), Box::new(|_| {}));
    let out = flow::upgrade(
        &client,
        &UpgradeSpec {
            package: "demo".into(),
            namespace: NS.into(),
            ..Default::default()
        },
        fast(100),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert!(out.up_to_date());
    assert_eq!(out.to, "demo.v1.0.0");
    assert!(server.lock().unwrap().bodies.is_empty());

    // A new catalog image that offers nothing newer: the deadline ends the wait, saying where.
    let (client, _) = fake(true, installed(), Box::new(|_| {}));
    let err = flow::upgrade(
        &client,
        &UpgradeSpec {
            package: "demo".into(),
            namespace: NS.into(),
            catalog: Some(CatalogTarget::Image(
                "registry.test/demo-catalog:v1.0.1".into(),
            )),
            channel: None,
        },
        fast(100),
        &mut Recorder::default(),
    )
    .await
    .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains(
            "waiting for Subscription demo to get an InstallPlan (last seen: state AtLatestKnown)"
        ),
        "{msg}"
    );
}

#[tokio::test]
async fn status_reports_every_object() {
    let (client, _) = fake(true, installed(), Box::new(|_| {}));
    let report = flow::status(&client, NS, "demo").await.unwrap();
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["subscription"]["installedCSV"], "demo.v1.0.0");
    assert_eq!(json["subscription"]["state"], "AtLatestKnown");
    assert_eq!(json["catalogSource"]["state"], "READY");
    assert_eq!(json["installPlan"]["phase"], "Complete");
    assert_eq!(json["csv"]["phase"], "Succeeded");
    assert_eq!(
        json["deployments"][0],
        json!({"name": "demo-operator", "replicas": 1, "ready": 1, "available": 1})
    );
    let table = report.table();
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("KIND"), "{table}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("ClusterServiceVersion  demo.v1.0.0") && l.contains("Succeeded")),
        "{table}"
    );
    assert!(lines.iter().any(|l| l.contains("1/1 ready")), "{table}");
}

/// Building an HTTPS client must not panic on rustls' provider choice (the binary links both
/// ring and aws-lc-rs), and kubeconfig errors name the file.
#[tokio::test]
async fn kubeconfig_client_builds_and_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\n\
         users:\n- name: u\n  user: {token: not-printed-secret}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\n\
         current-context: x\n",
    )
    .unwrap();
    if let Err(e) = olm_bundler::deploy::cluster::client(Some(&kc), None).await {
        panic!("client from kubeconfig: {e}");
    }

    let Err(err) = olm_bundler::deploy::cluster::client(Some(&kc), Some("missing")).await else {
        panic!("a missing context must fail");
    };
    let err = err.to_string();
    assert!(
        err.contains("kubeconfig") && err.contains("unusable"),
        "{err}"
    );
    assert!(!err.contains("not-printed-secret"), "{err}");

    let gone = dir.path().join("nope");
    let Err(err) = olm_bundler::deploy::cluster::client(Some(&gone), None).await else {
        panic!("a missing kubeconfig must fail");
    };
    let err = err.to_string();
    assert!(
        err.starts_with(&format!("{}: cannot read kubeconfig", gone.display())),
        "{err}"
    );
}

/// `olm install --catalog-address`: the CatalogSource points OLM at a running `olm catalog
/// serve`, with no image, pod settings or polling (OLM starts no pod for an address).
#[tokio::test]
async fn install_from_an_address_creates_an_address_catalog_source() {
    let (client, server) = fake(true, Objects::new(), olm_controller(Olm::default()));
    let mut spec = spec(Approval::Automatic);
    spec.catalog.serving =
        CatalogServing::Address(CatalogAddress::parse("host.docker.internal:50051").unwrap());
    let out = flow::install(&client, &spec, false, fast(5000), &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(out.csv, "demo.v1.0.0");
    let srv = server.lock().unwrap();
    let cs_body = &srv
        .bodies
        .iter()
        .find(|(k, _)| k.ends_with("/catalogsources"))
        .unwrap()
        .1;
    assert_eq!(
        cs_body["spec"],
        json!({"sourceType": "grpc", "address": "host.docker.internal:50051",
               "displayName": "Demo", "publisher": "tests"})
    );
}

/// Re-running install against a CatalogSource that serves an image, now with an address,
/// switches it and clears the image-only fields (OLM would otherwise keep the pod).
#[tokio::test]
async fn install_with_an_address_switches_an_existing_image_catalog_source() {
    let (client, server) = fake(true, installed(), olm_controller(Olm::default()));
    let mut spec = spec(Approval::Automatic);
    spec.catalog.serving =
        CatalogServing::Address(CatalogAddress::parse("10.0.0.7:50051").unwrap());
    flow::install(&client, &spec, false, fast(5000), &mut Recorder::default())
        .await
        .unwrap();
    let srv = server.lock().unwrap();
    let cs = &srv.objects[&cs_path("demo-catalog")]["spec"];
    assert_eq!(cs["address"], "10.0.0.7:50051");
    assert!(cs.get("image").is_none(), "{cs}");
}

/// `olm upgrade --catalog-address`: a new address is patched in (clearing the image); the
/// same address again changes nothing, since OLM re-resolves on its own when the connection to
/// a restarted server is READY again.
#[tokio::test]
async fn upgrade_to_an_address_patches_it_and_the_same_address_is_left_alone() {
    let addr = CatalogAddress::parse("[fd00::7]:50051").unwrap();
    let (client, server) = fake(true, installed(), Box::new(|_| {}));
    let upgrade = UpgradeSpec {
        package: "demo".into(),
        namespace: NS.into(),
        catalog: Some(CatalogTarget::Address(addr.clone())),
        channel: None,
    };
    // OLM never offers anything newer here: the wait ends in a timeout, after the patch.
    let _ = flow::upgrade(&client, &upgrade, fast(300), &mut Recorder::default()).await;
    {
        let srv = server.lock().unwrap();
        let patches: Vec<&(String, Value)> = srv
            .bodies
            .iter()
            .filter(|(k, _)| k.starts_with("PATCH"))
            .collect();
        assert_eq!(
            patches[0].1,
            json!({"spec": {"address": "[fd00::7]:50051", "image": null,
                            "updateStrategy": null, "grpcPodConfig": null}})
        );
        let cs = &srv.objects[&cs_path("demo-catalog")]["spec"];
        assert_eq!(
            cs,
            &json!({"sourceType": "grpc", "address": "[fd00::7]:50051"})
        );
    }
    let before = server.lock().unwrap().bodies.len();
    let mut rec = Recorder::default();
    let _ = flow::upgrade(&client, &upgrade, fast(300), &mut rec).await;
    let srv = server.lock().unwrap();
    assert!(
        !srv.bodies[before..]
            .iter()
            .any(|(k, _)| k.starts_with("PATCH")),
        "{:?}",
        &srv.bodies[before..]
    );
    assert!(rec.0.iter().any(|l| l == "done unchanged"), "{:?}", rec.0);
}

/// Usage errors about the catalog address stop before any cluster access, with exit code 2.
#[test]
fn catalog_address_usage_errors_exit_2() {
    let olm = env!("CARGO_BIN_EXE_olm");
    for (args, says) in [
        (
            &[
                "install",
                "--package",
                "demo",
                "--catalog-address",
                "localhost",
            ][..],
            "is not HOST:PORT",
        ),
        (
            &[
                "install",
                "--package",
                "demo",
                "--catalog",
                "quay.io/x/y:1",
                "--catalog-address",
                "h:1",
            ][..],
            "cannot be used with",
        ),
        (
            &["upgrade", "demo", "--catalog-address", "h:0"][..],
            "no port between 1 and 65535",
        ),
    ] {
        let out = std::process::Command::new(olm)
            .args(args)
            .env("KUBECONFIG", "/nonexistent")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}

/// `olm install` as a library call (`ops::install`): flags checked by `plan` without a
/// cluster, then the flow against the fake API server, with the defaults derived from the
/// package.
#[tokio::test]
async fn ops_install_plans_then_installs_with_package_defaults() {
    use olm_bundler::ops::install::{self as ops, InstallPlan, Source, SpecInputs};
    let inputs = SpecInputs {
        package: String::new(),
        namespace: Some(NS.into()),
        channel: Some("stable".into()),
        install_mode: InstallMode::OwnNamespace,
        target_namespaces: vec![],
        approval: Approval::Automatic,
        starting_csv: None,
        catalog_name: None,
        display_name: None,
        publisher: None,
        poll_interval: "10m".into(),
        operator_group_name: None,
    };
    let source = Source::Catalog("registry.test/demo-catalog:v1".into());
    let plan = ops::plan(inputs, Some("demo".into()), source).unwrap();
    assert!(matches!(&plan, InstallPlan::Ready(s) if s.catalog.name == "demo-catalog"));
    let (client, server) = fake(true, Objects::new(), olm_controller(Olm::default()));
    let out = ops::install(&client, plan, false, fast(5000), &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(out.csv, "demo.v1.0.0");
    assert_eq!(out.operator_group, ("demo-og".into(), Action::Created));
    let srv = server.lock().unwrap();
    let cs = &srv.objects[&cs_path("demo-catalog")];
    assert_eq!(cs["spec"]["displayName"], "demo catalog");
}
