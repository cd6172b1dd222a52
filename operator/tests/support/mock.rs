//! A scripted Kubernetes API for reconcile tests: kube's `Client` over a tower-test mock
//! service. Each test lists the calls it expects, in order, with the answer to give; the verifier
//! checks method, path and query, records request bodies, and fails on any extra call.

#![allow(dead_code)]

use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use kube::Client;
use kube::client::Body;
use serde_json::{Value, json};

pub type Handle = tower_test::mock::Handle<Request<Body>, Response<Body>>;

/// A client whose every request goes to the returned handle.
pub fn client() -> (Client, Handle) {
    let (svc, handle) = tower_test::mock::pair::<Request<Body>, Response<Body>>();
    (Client::new(svc, "default"), handle)
}

/// How to answer one expected call.
pub enum Reply {
    /// A status code and body.
    Json(u16, Value),
    /// Echo the request body back with this status (what apply and create effectively do).
    Echo(u16),
    /// Echo the request body back, merged over this object (server defaults/status).
    EchoWith(u16, Value),
    /// A Kubernetes Status error.
    Error(u16, &'static str),
}

/// One expected call.
pub struct Step {
    pub method: Method,
    /// Path, optionally with `?query`; the query must match exactly when given.
    pub uri: String,
    pub reply: Reply,
}

pub fn step(method: Method, uri: impl Into<String>, reply: Reply) -> Step {
    Step {
        method,
        uri: uri.into(),
        reply,
    }
}

/// A recorded request.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: Method,
    pub uri: String,
    pub content_type: String,
    pub body: Value,
}

pub fn status_error(code: u16, reason: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
           "message": format!("mock {reason}"), "reason": reason, "code": code})
}

fn merge(base: &mut Value, over: &Value) {
    match (base, over) {
        (Value::Object(b), Value::Object(o)) => {
            for (k, v) in o {
                merge(b.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (b, o) => *b = o.clone(),
    }
}

async fn read_body(req: Request<Body>) -> (Method, String, String, Value) {
    let method = req.method().clone();
    let uri = req.uri().to_string();
    let ct = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let bytes = req.into_body().collect_bytes().await.expect("request body");
    let body = if bytes.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&bytes).unwrap_or(Value::Null)
    };
    (method, uri, ct, body)
}

fn respond(send: tower_test::mock::SendResponse<Response<Body>>, code: u16, body: &Value) {
    let resp = Response::builder()
        .status(StatusCode::from_u16(code).expect("status"))
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(body).expect("json")))
        .expect("response");
    send.send_response(resp);
}

/// Serves the scripted steps and returns the requests seen. Panics (failing the test) on a
/// mismatch, a missing call (1 s timeout) or an extra call.
pub async fn serve(mut handle: Handle, steps: Vec<Step>) -> Vec<Seen> {
    let mut seen = Vec::new();
    for (i, s) in steps.into_iter().enumerate() {
        let next = tokio::time::timeout(Duration::from_secs(1), handle.next_request()).await;
        let (req, send) = next
            .unwrap_or_else(|_| {
                panic!(
                    "step {i}: expected {} {} but no request came",
                    s.method, s.uri
                )
            })
            .unwrap_or_else(|| panic!("step {i}: client closed before {} {}", s.method, s.uri));
        let (method, uri, ct, body) = read_body(req).await;
        let (want_path, want_query) = s
            .uri
            .split_once('?')
            .map_or((s.uri.as_str(), None), |(p, q)| (p, Some(q)));
        let (got_path, got_query) = uri
            .split_once('?')
            .map_or((uri.as_str(), None), |(p, q)| (p, Some(q)));
        // A trailing `*` matches any path with that prefix (generated names, e.g. event series).
        let path_ok = match want_path.strip_suffix('*') {
            Some(prefix) => got_path.starts_with(prefix),
            None => got_path == want_path,
        };
        assert!(
            method == s.method && path_ok,
            "step {i}: expected {} {} but got {method} {uri}",
            s.method,
            s.uri
        );
        if let Some(q) = want_query {
            assert_eq!(got_query, Some(q), "step {i}: query of {method} {uri}");
        }
        match &s.reply {
            Reply::Json(code, v) => respond(send, *code, v),
            Reply::Echo(code) => respond(send, *code, &body),
            Reply::EchoWith(code, over) => {
                let mut b = body.clone();
                merge(&mut b, over);
                respond(send, *code, &b)
            }
            Reply::Error(code, reason) => respond(send, *code, &status_error(*code, reason)),
        }
        seen.push(Seen {
            method,
            uri,
            content_type: ct,
            body,
        });
    }
    if let Ok(Some((req, _))) =
        tokio::time::timeout(Duration::from_millis(200), handle.next_request()).await
    {
        panic!("unexpected extra call {} {}", req.method(), req.uri());
    }
    seen
}

/// A permissive fake for benchmarks: GET of a child says 404, apply and create echo the body,
/// pod lists are empty, status patches echo a CR. Runs until the client is dropped.
pub async fn serve_forever(mut handle: Handle) {
    while let Some((req, send)) = handle.next_request().await {
        let (method, uri, _ct, body) = read_body(req).await;
        let path = uri.split('?').next().unwrap_or("").to_string();
        let (code, reply) = if method == Method::GET && path.ends_with("/pods") {
            (
                200,
                json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": []}),
            )
        } else if method == Method::GET {
            (404, status_error(404, "NotFound"))
        } else if path.ends_with("/status") {
            let mut cr = json!({"apiVersion": "apps.linuxera.org/v1alpha1", "kind": "ReverseWordsApp",
                                "metadata": {"name": "x", "namespace": "bench"}, "spec": {"replicas": 1}});
            merge(&mut cr, &body);
            (200, cr)
        } else {
            (if method == Method::POST { 201 } else { 200 }, body)
        };
        respond(send, code, &reply);
    }
}
