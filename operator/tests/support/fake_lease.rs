//! An in-memory API server for `coordination.k8s.io/v1` Leases that enforces what the real one
//! does and leader election relies on: server-side-apply field ownership (a non-forced apply that
//! changes a field another manager owns is refused with 409 Conflict naming the owners), managed
//! fields per (manager, operation), strategic-merge patches that take ownership of what they
//! change and drop it with what they delete, create -> 409 AlreadyExists, GET -> 404 NotFound,
//! and a resourceVersion that increments on every change (and is checked when a request sends
//! one). Each client gets its own connection task, so a "dead" replica can be cut off.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use kube::Client;
use kube::client::Body;
use serde_json::{Map, Value, json};
use tokio::task::JoinHandle;

/// How a manager last wrote its fields (SSA keeps them apart: `Apply` vs `Update`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    Apply,
    Update,
}

impl Operation {
    fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

#[derive(Debug, Default)]
struct Stored {
    name: String,
    namespace: String,
    resource_version: u64,
    spec: Map<String, Value>,
    /// (manager, operation) -> the spec fields it owns.
    managed: BTreeMap<(String, Operation), BTreeSet<String>>,
}

impl Stored {
    fn to_json(&self) -> Value {
        let managed: Vec<Value> = self
            .managed
            .iter()
            .filter(|(_, f)| !f.is_empty())
            .map(|((m, op), fields)| {
                let spec: Map<String, Value> = fields
                    .iter()
                    .map(|f| (format!("f:{f}"), json!({})))
                    .collect();
                json!({"manager": m, "operation": op.as_str(), "apiVersion": "coordination.k8s.io/v1",
                       "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": spec}})
            })
            .collect();
        json!({
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace,
                         "resourceVersion": self.resource_version.to_string(),
                         "managedFields": managed},
            "spec": self.spec,
        })
    }

    fn owners_except(&self, field: &str, me: &(String, Operation)) -> Vec<String> {
        self.managed
            .iter()
            .filter(|(k, f)| *k != me && f.contains(field))
            .map(|((m, op), _)| format!("{m:?} using {}", op.as_str()))
            .collect()
    }

    fn disown(&mut self, field: &str, except: Option<&(String, Operation)>) {
        for (k, f) in self.managed.iter_mut() {
            if Some(k) != except {
                f.remove(field);
            }
        }
    }
}

/// Counters of what the server saw (for assertions and for reporting).
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub requests: usize,
    pub conflicts: usize,
}

#[derive(Debug, Default)]
struct State {
    lease: Option<Stored>,
    next_rv: u64,
    stats: Stats,
}

/// A shared fake API server; clone it freely.
#[derive(Clone, Default)]
pub struct FakeLeaseServer {
    state: Arc<Mutex<State>>,
}

/// One client's connection: abort it to cut the client off (requests then never arrive).
pub struct Connection {
    pub client: Client,
    pub task: JoinHandle<()>,
}

fn status(code: u16, reason: &str, message: String) -> (u16, Value) {
    (
        code,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": message, "reason": reason, "code": code}),
    )
}

fn query_param<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v)
}

impl FakeLeaseServer {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn stats(&self) -> Stats {
        self.state.lock().unwrap().stats.clone()
    }

    /// The current holder, if any.
    pub fn holder(&self) -> Option<String> {
        let st = self.state.lock().unwrap();
        st.lease
            .as_ref()?
            .spec
            .get("holderIdentity")?
            .as_str()
            .map(str::to_string)
    }

    /// Creates the lease with an empty spec, as a deployment tool or an earlier run would.
    pub fn create_empty(&self, namespace: &str, name: &str) {
        let mut st = self.state.lock().unwrap();
        st.next_rv += 1;
        st.lease = Some(Stored {
            name: name.to_string(),
            namespace: namespace.to_string(),
            resource_version: st.next_rv,
            ..Default::default()
        });
    }

    /// A kube client connected to this server. Each request waits a random 0-`jitter` before it
    /// is applied, and one in three waits up to twenty times longer (a scheduling pause, a slow
    /// network path), so concurrent clients interleave differently from run to run.
    pub fn connect(&self, jitter: Duration) -> Connection {
        self.connect_with(jitter, Duration::ZERO)
    }

    /// Like [`connect`](Self::connect), and every server-side apply from this client arrives
    /// `apply_delay` late: a replica that read the lease as free but whose acquire is slow.
    pub fn connect_with(&self, jitter: Duration, apply_delay: Duration) -> Connection {
        let (svc, mut handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
        let server = self.clone();
        let task = tokio::spawn(async move {
            while let Some((req, send)) = handle.next_request().await {
                let method = req.method().clone();
                let path = req.uri().path().to_string();
                let query = req.uri().query().unwrap_or("").to_string();
                let ct = req
                    .headers()
                    .get(http::header::CONTENT_TYPE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                let bytes = req.into_body().collect_bytes().await.unwrap_or_default();
                let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
                if !jitter.is_zero() {
                    let nanos = u64::try_from(jitter.as_nanos()).unwrap_or(u64::MAX);
                    let mut wait = random_below(nanos);
                    if random_below(3) == 0 {
                        wait += random_below(nanos.saturating_mul(20));
                    }
                    tokio::time::sleep(Duration::from_nanos(wait)).await;
                }
                if method == Method::PATCH && ct.starts_with("application/apply-patch") {
                    tokio::time::sleep(apply_delay).await;
                }
                let (code, reply) = server.handle(&method, &path, &query, &ct, &body);
                let resp = Response::builder()
                    .status(StatusCode::from_u16(code).expect("status"))
                    .header("content-type", "application/json")
                    .body(Body::from(serde_json::to_vec(&reply).expect("json")))
                    .expect("response");
                send.send_response(resp);
            }
        });
        Connection {
            client: Client::new(svc, "default"),
            task,
        }
    }

    fn handle(
        &self,
        method: &Method,
        path: &str,
        query: &str,
        content_type: &str,
        body: &Value,
    ) -> (u16, Value) {
        let mut st = self.state.lock().unwrap();
        st.stats.requests += 1;
        // /apis/coordination.k8s.io/v1/namespaces/{ns}/leases[/{name}]
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let (namespace, name) = match parts.as_slice() {
            [
                "apis",
                "coordination.k8s.io",
                "v1",
                "namespaces",
                ns,
                "leases",
            ] => (*ns, None),
            [
                "apis",
                "coordination.k8s.io",
                "v1",
                "namespaces",
                ns,
                "leases",
                n,
            ] => (*ns, Some(*n)),
            _ => return status(404, "NotFound", format!("no route for {method} {path}")),
        };
        let reply = match (method.clone(), name) {
            (Method::GET, Some(name)) => match &st.lease {
                Some(l) if l.name == name => (200, l.to_json()),
                _ => status(404, "NotFound", format!("leases {name:?} not found")),
            },
            (Method::POST, None) => {
                let name = body["metadata"]["name"].as_str().unwrap_or("").to_string();
                if st.lease.is_some() {
                    status(
                        409,
                        "AlreadyExists",
                        format!("leases {name:?} already exists"),
                    )
                } else {
                    st.next_rv += 1;
                    let spec = body["spec"].as_object().cloned().unwrap_or_default();
                    st.lease = Some(Stored {
                        name,
                        namespace: namespace.to_string(),
                        resource_version: st.next_rv,
                        spec,
                        managed: BTreeMap::new(),
                    });
                    (201, st.lease.as_ref().unwrap().to_json())
                }
            }
            (Method::PATCH, Some(name)) => {
                let manager = query_param(query, "fieldManager").unwrap_or("").to_string();
                let force = query_param(query, "force") == Some("true");
                if content_type.starts_with("application/apply-patch") {
                    apply(&mut st, namespace, name, manager, force, body)
                } else if content_type.starts_with("application/strategic-merge-patch")
                    || content_type.starts_with("application/merge-patch")
                {
                    merge_patch(&mut st, name, manager, body)
                } else {
                    status(
                        415,
                        "UnsupportedMediaType",
                        format!("unsupported patch type {content_type:?}"),
                    )
                }
            }
            _ => status(405, "MethodNotAllowed", format!("{method} {path}")),
        };
        if reply.0 == 409 && reply.1["reason"] == "Conflict" {
            st.stats.conflicts += 1;
        }
        reply
    }
}

/// Checks `metadata.resourceVersion` when the request carries one (optimistic concurrency).
fn precondition(lease: &Stored, body: &Value) -> Option<(u16, Value)> {
    let want = body["metadata"]["resourceVersion"].as_str()?;
    (want != lease.resource_version.to_string()).then(|| {
        status(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on leases.coordination.k8s.io {:?}: the object has been modified; please apply your changes to the latest version and try again",
                lease.name
            ),
        )
    })
}

fn apply(
    st: &mut State,
    namespace: &str,
    name: &str,
    manager: String,
    force: bool,
    body: &Value,
) -> (u16, Value) {
    if manager.is_empty() {
        return status(
            422,
            "Invalid",
            "fieldManager is required for apply patch".into(),
        );
    }
    let created = st.lease.is_none();
    if created {
        // Apply creates a missing object.
        st.lease = Some(Stored {
            name: name.to_string(),
            namespace: namespace.to_string(),
            ..Default::default()
        });
    }
    let lease = st.lease.as_mut().unwrap();
    if let Some(err) = precondition(lease, body) {
        return err;
    }
    let me = (manager, Operation::Apply);
    let applied: Map<String, Value> = body["spec"].as_object().cloned().unwrap_or_default();
    let mut conflicts = Vec::new();
    for (field, value) in &applied {
        if lease.spec.get(field) == Some(value) {
            continue; // Same value: shared ownership, never a conflict.
        }
        for owner in lease.owners_except(field, &me) {
            conflicts.push(format!("conflict with {owner}: .spec.{field}"));
        }
    }
    if !conflicts.is_empty() && !force {
        if created {
            st.lease = None;
        }
        return status(
            409,
            "Conflict",
            format!(
                "Apply failed with {} conflict{}: {}",
                conflicts.len(),
                if conflicts.len() == 1 { "" } else { "s" },
                conflicts.join("\n")
            ),
        );
    }
    let mut changed = created;
    // Fields this manager applied before but no longer does are removed unless someone else owns them.
    let previous = lease.managed.get(&me).cloned().unwrap_or_default();
    for field in previous.iter().filter(|f| !applied.contains_key(*f)) {
        if lease.owners_except(field, &me).is_empty() && lease.spec.remove(field).is_some() {
            changed = true;
        }
    }
    let mut owned = BTreeSet::new();
    for (field, value) in &applied {
        if value.is_null() {
            if lease.spec.remove(field).is_some() {
                changed = true;
            }
            lease.disown(field, None);
            continue;
        }
        if lease.spec.get(field) != Some(value) {
            // A changed value now belongs to the applier alone (forced or unowned).
            lease.disown(field, Some(&me));
            lease.spec.insert(field.clone(), value.clone());
            changed = true;
        }
        owned.insert(field.clone());
    }
    if previous != owned {
        changed = true;
    }
    lease.managed.insert(me, owned);
    if changed {
        st.next_rv += 1;
        let lease = st.lease.as_mut().unwrap();
        lease.resource_version = st.next_rv;
    }
    let lease = st.lease.as_ref().unwrap();
    (if created { 201 } else { 200 }, lease.to_json())
}

fn merge_patch(st: &mut State, name: &str, manager: String, body: &Value) -> (u16, Value) {
    let Some(lease) = st.lease.as_mut().filter(|l| l.name == name) else {
        return status(404, "NotFound", format!("leases {name:?} not found"));
    };
    if let Some(err) = precondition(lease, body) {
        return err;
    }
    let me = (manager, Operation::Update);
    let mut changed = false;
    if let Some(spec) = body["spec"].as_object() {
        for (field, value) in spec {
            if value.is_null() {
                // Deleting a field drops every manager's ownership of it.
                if lease.spec.remove(field).is_some() {
                    changed = true;
                }
                lease.disown(field, None);
            } else if lease.spec.get(field) != Some(value) {
                lease.disown(field, Some(&me));
                lease.spec.insert(field.clone(), value.clone());
                lease
                    .managed
                    .entry(me.clone())
                    .or_default()
                    .insert(field.clone());
                changed = true;
            }
        }
    }
    if changed {
        st.next_rv += 1;
        let lease = st.lease.as_mut().unwrap();
        lease.resource_version = st.next_rv;
    }
    (200, st.lease.as_ref().unwrap().to_json())
}

/// A small, dependency-free random number (xorshift seeded from the clock and a counter).
fn random_below(bound: u64) -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEED: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut x = t ^ SEED.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    if bound == 0 { 0 } else { x % bound }
}
