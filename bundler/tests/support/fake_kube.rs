//! A small in-memory Kubernetes API server behind kube's `Client` (over a tower-test mock), for
//! the install flow tests: create, get, list, merge-patch, and delete with a visible
//! terminating state, plus a `controller` closure that runs before every request and plays
//! OLM as each test scripts it. Also a progress recorder and the object paths the tests use.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Request, Response, StatusCode};
use kube::Client;
use kube::client::Body;
use olm_bundler::deploy::flow::{FlowOptions, Progress};
use serde_json::{Value, json};

pub const NS: &str = "ops";
pub const V1A1: &str = "/apis/operators.coreos.com/v1alpha1";
pub const V1: &str = "/apis/operators.coreos.com/v1";

pub type Objects = BTreeMap<String, Value>;
pub type Controller = Box<dyn FnMut(&mut Objects) + Send>;

/// Shared state of the fake API server.
pub struct Server {
    pub objects: Objects,
    /// `METHOD path` of every request, in order.
    pub log: Vec<String>,
    /// Bodies of mutating requests, keyed like the log.
    pub bodies: Vec<(String, Value)>,
    pub olm_installed: bool,
    pub controller: Controller,
}

pub type Shared = Arc<Mutex<Server>>;

pub const COLLECTIONS: &[&str] = &[
    "catalogsources",
    "subscriptions",
    "installplans",
    "clusterserviceversions",
    "operatorgroups",
    "events",
    "namespaces",
    "customresourcedefinitions",
    "deployments",
    "clustercatalogs",
    "clusterextensions",
    "serviceaccounts",
    "clusterroles",
    "clusterrolebindings",
    "roles",
    "rolebindings",
    "pods",
    "configmaps",
];

/// OLM v1's API group, served when `olm_installed`.
pub const OLMV1: &str = "/apis/olm.operatorframework.io/v1";

pub fn status(code: u16, reason: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": format!("fake {reason}"), "reason": reason, "code": code})
}

pub fn merge(base: &mut Value, patch: &Value) {
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

pub fn discovery(gv: &str, names: &[(&str, &str)]) -> Value {
    json!({
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
        "resources": names.iter().map(|(n, k)| json!({
            "name": n, "singularName": "", "namespaced": true, "kind": k, "verbs": ["get", "list"]
        })).collect::<Vec<_>>()
    })
}

pub fn serve_one(server: &mut Server, method: &str, path: &str, body: Value) -> (u16, Value) {
    (server.controller)(&mut server.objects);
    if path == OLMV1 {
        if !server.olm_installed {
            return (404, status(404, "NotFound"));
        }
        return (
            200,
            discovery(
                "olm.operatorframework.io/v1",
                &[
                    ("clustercatalogs", "ClusterCatalog"),
                    ("clusterextensions", "ClusterExtension"),
                ],
            ),
        );
    }
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
        ("DELETE", true) => {
            let prefix = format!("{path}/");
            server.objects.retain(|k, _| !k.starts_with(&prefix));
            (
                200,
                json!({"apiVersion": "v1", "kind": "Status", "status": "Success", "metadata": {}}),
            )
        }
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
pub fn fake(olm_installed: bool, objects: Objects, controller: Controller) -> (Client, Shared) {
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
                // `{"__raw": text}` is sent as the text itself (a pod log).
                .body(Body::from(
                    match reply.get("__raw").and_then(Value::as_str) {
                        Some(text) => text.as_bytes().to_vec(),
                        None => serde_json::to_vec(&reply).unwrap(),
                    },
                ))
                .unwrap();
            send.send_response(resp);
        }
    });
    (Client::new(svc, "default"), shared)
}

/// Records progress calls.
#[derive(Default)]
pub struct Recorder(pub Vec<String>);

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

pub fn fast(timeout_ms: u64) -> FlowOptions {
    FlowOptions {
        timeout: Duration::from_millis(timeout_ms),
        interval: Duration::from_millis(5),
    }
}

pub fn cs_path(name: &str) -> String {
    format!("{V1A1}/namespaces/{NS}/catalogsources/{name}")
}
pub fn sub_path(name: &str) -> String {
    format!("{V1A1}/namespaces/{NS}/subscriptions/{name}")
}
pub fn ip_path(name: &str) -> String {
    format!("{V1A1}/namespaces/{NS}/installplans/{name}")
}
pub fn csv_path(name: &str) -> String {
    format!("{V1A1}/namespaces/{NS}/clusterserviceversions/{name}")
}
pub fn og_path(name: &str) -> String {
    format!("{V1}/namespaces/{NS}/operatorgroups/{name}")
}

/// What the simulated OLM does.
#[derive(Clone)]
pub struct Olm {
    /// Requests to see after the CatalogSource is created before it becomes READY; `None`:
    /// never (stuck in TRANSIENT_FAILURE).
    pub catalog_ready_after: Option<usize>,
    /// Final phase of the CSV, with conditions when Failed.
    pub csv_fails: bool,
    pub csv: &'static str,
    pub plan: &'static str,
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
pub fn olm_controller(cfg: Olm) -> Controller {
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

pub fn seed_event(objs: &mut Objects, name: &str, reason: &str, message: &str) {
    objs.insert(
        format!("/api/v1/namespaces/{NS}/events/{name}"),
        json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": NS},
               "involvedObject": {"kind": "Pod", "name": "demo-catalog-xyz", "namespace": NS},
               "reason": reason, "message": message, "type": "Warning",
               "lastTimestamp": "2026-01-01T00:00:00Z"}),
    );
}

pub fn log_without_polls(s: &Shared) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in s.lock().unwrap().log.iter() {
        if out.last() != Some(l) {
            out.push(l.clone());
        }
    }
    out
}

pub fn og(name: &str, targets: Option<&[&str]>) -> Value {
    let spec = match targets {
        Some(t) => json!({"targetNamespaces": t}),
        None => json!({}),
    };
    json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
           "metadata": {"name": name, "namespace": NS}, "spec": spec})
}

pub fn ns_obj() -> (String, Value) {
    (
        format!("/api/v1/namespaces/{NS}"),
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}),
    )
}

/// The state a finished install leaves behind.
pub fn installed() -> Objects {
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
