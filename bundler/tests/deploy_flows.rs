//! Install, upgrade, uninstall and status flows through kube's `Client` over a tower-test mock.
//!
//! The mock is a small in-memory API server (create, get, list, merge-patch, delete with a
//! visible terminating state) plus a `controller` closure that runs before every request and
//! plays OLM: it moves CatalogSources to READY, resolves Subscriptions into InstallPlans and
//! CSVs, and so on, as each test scripts it. Tests then check the outcome, the error text and
//! diagnostics, and the order of the calls made.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use kube::Client;
use kube::client::Body;
use olm_bundler::deploy::flow::{
    self, Action, FlowError, FlowOptions, Progress, UninstallSpec, UpgradeSpec,
};
use olm_bundler::deploy::objects::{Approval, CatalogSpec, InstallMode, InstallSpec, Targets};
use serde_json::{Value, json};

const NS: &str = "ops";
const V1A1: &str = "/apis/operators.coreos.com/v1alpha1";
const V1: &str = "/apis/operators.coreos.com/v1";

type Objects = BTreeMap<String, Value>;
type Controller = Box<dyn FnMut(&mut Objects) + Send>;

/// Shared state of the fake API server.
struct Server {
    objects: Objects,
    /// `METHOD path` of every request, in order.
    log: Vec<String>,
    /// Bodies of mutating requests, keyed like the log.
    bodies: Vec<(String, Value)>,
    olm_installed: bool,
    controller: Controller,
}

type Shared = Arc<Mutex<Server>>;

const COLLECTIONS: &[&str] = &[
    "catalogsources",
    "subscriptions",
    "installplans",
    "clusterserviceversions",
    "operatorgroups",
    "events",
    "namespaces",
    "customresourcedefinitions",
    "deployments",
];

fn status(code: u16, reason: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": format!("fake {reason}"), "reason": reason, "code": code})
}

fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    b.remove(k);
                } else {
                    merge(b.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (b, p) => *b = p.clone(),
    }
}

fn discovery(gv: &str, names: &[(&str, &str)]) -> Value {
    json!({
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
        "resources": names.iter().map(|(n, k)| json!({
            "name": n, "singularName": "", "namespaced": true, "kind": k, "verbs": ["get", "list"]
        })).collect::<Vec<_>>()
    })
}

fn serve_one(server: &mut Server, method: &str, path: &str, body: Value) -> (u16, Value) {
    (server.controller)(&mut server.objects);
    if path == V1A1 || path == V1 {
        if !server.olm_installed {
            return (404, status(404, "NotFound"));
        }
        return if path == V1A1 {
            (
                200,
                discovery(
                    "operators.coreos.com/v1alpha1",
                    &[
                        ("catalogsources", "CatalogSource"),
                        ("subscriptions", "Subscription"),
                        ("installplans", "InstallPlan"),
                        ("clusterserviceversions", "ClusterServiceVersion"),
                    ],
                ),
            )
        } else {
            (
                200,
                discovery(
                    "operators.coreos.com/v1",
                    &[("operatorgroups", "OperatorGroup")],
                ),
            )
        };
    }
    let last = path.rsplit('/').next().unwrap_or("");
    let is_collection = COLLECTIONS.contains(&last);
    match (method, is_collection) {
        ("GET", true) => {
            let prefix = format!("{path}/");
            let items: Vec<Value> = server
                .objects
                .iter()
                .filter(|(k, _)| k.starts_with(&prefix) && !k[prefix.len()..].contains('/'))
                .map(|(_, v)| v.clone())
                .collect();
            (
                200,
                json!({"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": "1"}, "items": items}),
            )
        }
        ("POST", true) => {
            let name = body["metadata"]["name"].as_str().unwrap_or("").to_string();
            let key = format!("{path}/{name}");
            if server.objects.contains_key(&key) {
                return (409, status(409, "AlreadyExists"));
            }
            let mut obj = body;
            obj["metadata"]["uid"] = json!(format!("uid-{name}"));
            obj["metadata"]["resourceVersion"] = json!("1");
            server.objects.insert(key, obj.clone());
            (201, obj)
        }
        ("GET", false) => match server.objects.get(path).cloned() {
            Some(obj) => {
                // A terminating object is seen once more, then it is gone.
                if obj["metadata"].get("deletionTimestamp").is_some() {
                    server.objects.remove(path);
                }
                (200, obj)
            }
            None => (404, status(404, "NotFound")),
        },
        ("PATCH", false) => match server.objects.get_mut(path) {
            Some(obj) => {
                merge(obj, &body);
                (200, obj.clone())
            }
            None => (404, status(404, "NotFound")),
        },
        ("DELETE", false) => match server.objects.get_mut(path) {
            Some(obj) => {
                obj["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
                (200, obj.clone())
            }
            None => (404, status(404, "NotFound")),
        },
        _ => (405, status(405, "MethodNotAllowed")),
    }
}

/// A client wired to a fake server; the server runs until the client is dropped.
fn fake(olm_installed: bool, objects: Objects, controller: Controller) -> (Client, Shared) {
    let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    let shared = Arc::new(Mutex::new(Server {
        objects,
        log: Vec::new(),
        bodies: Vec::new(),
        olm_installed,
        controller,
    }));
    let s = shared.clone();
    tokio::spawn(async move {
        while let Some((req, send)) = handle.next_request().await {
            let method = req.method().to_string();
            let path = req.uri().path().to_string();
            let bytes = req
                .into_body()
                .collect_bytes()
                .await
                .map(|b| b.to_vec())
                .unwrap_or_default();
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let (code, reply) = {
                let mut server = s.lock().unwrap();
                server.log.push(format!("{method} {path}"));
                if method != "GET" {
                    server
                        .bodies
                        .push((format!("{method} {path}"), body.clone()));
                }
                serve_one(&mut server, &method, &path, body)
            };
            let resp = Response::builder()
                .status(StatusCode::from_u16(code).unwrap())
                .header("content-type", "application/json")
                .body(Body::from(serde_json::to_vec(&reply).unwrap()))
                .unwrap();
            send.send_response(resp);
        }
    });
    (Client::new(svc, "default"), shared)
}

/// Records progress calls.
#[derive(Default)]
struct Recorder(Vec<String>);

impl Progress for Recorder {
    fn step(&mut self, title: &str) {
        self.0.push(format!("step {title}"));
    }
    fn update(&mut self, state: &str) {
        self.0.push(format!("update {state}"));
    }
    fn done(&mut self, summary: &str) {
        self.0.push(format!("done {summary}"));
    }
}

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
            image: "registry.test/demo-catalog:v1".into(),
            display_name: "Demo".into(),
            publisher: Some("tests".into()),
            poll_interval: Some("10m".into()),
        },
        operator_group_name: "demo-og".into(),
    }
}

fn fast(timeout_ms: u64) -> FlowOptions {
    FlowOptions {
        timeout: Duration::from_millis(timeout_ms),
        interval: Duration::from_millis(5),
    }
}

fn cs_path(name: &str) -> String {
    format!("{V1A1}/namespaces/{NS}/catalogsources/{name}")
}
fn sub_path(name: &str) -> String {
    format!("{V1A1}/namespaces/{NS}/subscriptions/{name}")
}
fn ip_path(name: &str) -> String {
    format!("{V1A1}/namespaces/{NS}/installplans/{name}")
}
fn csv_path(name: &str) -> String {
    format!("{V1A1}/namespaces/{NS}/clusterserviceversions/{name}")
}
fn og_path(name: &str) -> String {
    format!("{V1}/namespaces/{NS}/operatorgroups/{name}")
}

/// What the simulated OLM does.
#[derive(Clone)]
struct Olm {
    /// Requests to see after the CatalogSource is created before it becomes READY; `None`:
    /// never (stuck in TRANSIENT_FAILURE).
    catalog_ready_after: Option<usize>,
    /// Final phase of the CSV, with conditions when Failed.
    csv_fails: bool,
    csv: &'static str,
    plan: &'static str,
}

impl Default for Olm {
    fn default() -> Self {
        Self {
            catalog_ready_after: Some(6),
            csv_fails: false,
            csv: "demo.v1.0.0",
            plan: "install-abc12",
        }
    }
}

/// Plays OLM's catalog and subscription controllers over the stored objects.
fn olm_controller(cfg: Olm) -> Controller {
    // Requests seen since the CatalogSource exists.
    let mut ticks = 0usize;
    Box::new(move |objs: &mut Objects| {
        let cs = cs_path("demo-catalog");
        let mut ready = false;
        if let Some(c) = objs.get_mut(&cs) {
            ticks += 1;
            let state = match cfg.catalog_ready_after {
                Some(n) if ticks > n => "READY",
                Some(_) => "CONNECTING",
                None => "TRANSIENT_FAILURE",
            };
            ready = state == "READY";
            c["status"] = json!({"connectionState": {"address": "demo-catalog.ops.svc:50051", "lastObservedState": state}});
        }
        let sub = sub_path("demo");
        let Some(s) = objs.get(&sub).cloned() else {
            return;
        };
        if !ready {
            return;
        }
        let approval = s["spec"]["installPlanApproval"]
            .as_str()
            .unwrap_or("Automatic")
            .to_string();
        let ip = ip_path(cfg.plan);
        if !objs.contains_key(&ip) {
            objs.insert(
                ip.clone(),
                json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
                       "metadata": {"name": cfg.plan, "namespace": NS},
                       "spec": {"clusterServiceVersionNames": [cfg.csv], "approval": approval,
                                "approved": approval == "Automatic"},
                       "status": {"phase": "Installing"}}),
            );
            objs.get_mut(&sub).unwrap()["status"] = json!({
                "currentCSV": cfg.csv, "state": "UpgradePending",
                "installPlanRef": {"name": cfg.plan, "namespace": NS},
                "installplan": {"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan", "name": cfg.plan, "uuid": "u"}
            });
            return;
        }
        let plan = objs.get_mut(&ip).unwrap();
        let approved = plan["spec"]["approved"].as_bool().unwrap_or(false);
        if !approved {
            plan["status"]["phase"] = json!("RequiresApproval");
            return;
        }
        plan["status"]["phase"] = json!("Complete");
        let csv = csv_path(cfg.csv);
        if objs.contains_key(&csv) {
            return;
        }
        {
            let status = if cfg.csv_fails {
                json!({"phase": "Failed", "reason": "InstallComponentFailed",
                "message": "install strategy failed: deployment demo-operator not ready",
                "conditions": [
                    {"phase": "Pending", "reason": "RequirementsUnknown", "message": "requirements not yet checked"},
                    {"phase": "Installing", "reason": "InstallSucceeded", "message": "waiting for install components"},
                    {"phase": "Failed", "reason": "InstallComponentFailed", "message": "install strategy failed: deployment demo-operator not ready"}
                ]})
            } else {
                json!({"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors"})
            };
            objs.insert(
                csv,
                json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
                       "metadata": {"name": cfg.csv, "namespace": NS},
                       "spec": {"version": "1.0.0",
                                "customresourcedefinitions": {"owned": [{"name": "widgets.demo.test", "kind": "Widget", "version": "v1"}]},
                                "install": {"strategy": "deployment", "spec": {"deployments": [{"name": "demo-operator"}]}}},
                       "status": status}),
            );
            objs.get_mut(&sub).unwrap()["status"]["installedCSV"] = json!(cfg.csv);
            objs.get_mut(&sub).unwrap()["status"]["state"] = json!("AtLatestKnown");
        }
    })
}

fn seed_event(objs: &mut Objects, name: &str, reason: &str, message: &str) {
    objs.insert(
        format!("/api/v1/namespaces/{NS}/events/{name}"),
        json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": NS},
               "involvedObject": {"kind": "Pod", "name": "demo-catalog-xyz", "namespace": NS},
               "reason": reason, "message": message, "type": "Warning",
               "lastTimestamp": "2026-01-01T00:00:00Z"}),
    );
}

fn log_without_polls(s: &Shared) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in s.lock().unwrap().log.iter() {
        if out.last() != Some(l) {
            out.push(l.clone());
        }
    }
    out
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

fn og(name: &str, targets: Option<&[&str]>) -> Value {
    let spec = match targets {
        Some(t) => json!({"targetNamespaces": t}),
        None => json!({}),
    };
    json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
           "metadata": {"name": name, "namespace": NS}, "spec": spec})
}

fn ns_obj() -> (String, Value) {
    (
        format!("/api/v1/namespaces/{NS}"),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    )
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

/// The state a finished install leaves behind.
fn installed() -> Objects {
    let mut objs = Objects::from([ns_obj()]);
    objs.insert(
        cs_path("demo-catalog"),
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
               "metadata": {"name": "demo-catalog", "namespace": NS,
                            "labels": {"app.kubernetes.io/managed-by": "olm-bundler"}},
               "spec": {"sourceType": "grpc", "image": "registry.test/demo-catalog:v1"},
               "status": {"connectionState": {"lastObservedState": "READY"}}}),
    );
    objs.insert(og_path("demo-og"), og("demo-og", Some(&[NS])));
    objs.insert(
        sub_path("demo"),
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
               "metadata": {"name": "demo", "namespace": NS},
               "spec": {"name": "demo", "source": "demo-catalog", "sourceNamespace": NS, "channel": "stable",
                        "installPlanApproval": "Manual"},
               "status": {"installedCSV": "demo.v1.0.0", "currentCSV": "demo.v1.0.0", "state": "AtLatestKnown",
                          "installPlanRef": {"name": "install-abc12", "namespace": NS}}}),
    );
    objs.insert(
        ip_path("install-abc12"),
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
               "metadata": {"name": "install-abc12", "namespace": NS},
               "spec": {"clusterServiceVersionNames": ["demo.v1.0.0"], "approval": "Manual", "approved": true},
               "status": {"phase": "Complete"}}),
    );
    objs.insert(
        csv_path("demo.v1.0.0"),
        json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
               "metadata": {"name": "demo.v1.0.0", "namespace": NS},
               "spec": {"customresourcedefinitions": {"owned": [{"name": "widgets.demo.test", "kind": "Widget", "version": "v1"}]},
                        "install": {"strategy": "deployment", "spec": {"deployments": [{"name": "demo-operator"}]}}},
               "status": {"phase": "Succeeded", "reason": "InstallSucceeded", "message": "install strategy completed with no errors"}}),
    );
    objs.insert(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.demo.test".into(),
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": "widgets.demo.test"},
               "spec": {"group": "demo.test", "scope": "Namespaced",
                        "names": {"plural": "widgets", "kind": "Widget"}, "versions": []}}),
    );
    objs.insert(
        format!("/apis/apps/v1/namespaces/{NS}/deployments/demo-operator"),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "demo-operator", "namespace": NS},
               "spec": {"selector": {}, "template": {}},
               "status": {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}}),
    );
    objs
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
            catalog_image: Some("registry.test/demo-catalog:v2".into()),
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
        json!({"spec": {"image": "registry.test/demo-catalog:v2"}})
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
            catalog_image: Some("registry.test/demo-catalog:v1.0.1".into()),
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
