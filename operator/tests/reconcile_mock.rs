//! Reconcile through kube's `Client` over a scripted mock API server: every HTTP call the
//! operator makes is checked, in order.

mod support;

use std::sync::Arc;
use std::time::Duration;

use http::Method;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::runtime::controller::Action;
use kube::runtime::events::{Recorder, Reporter};
use reverse_words_operator::crd::{ReverseWordsApp, ReverseWordsAppSpec};
use reverse_words_operator::image::OperandImage;
use reverse_words_operator::metrics::Metrics;
use reverse_words_operator::reconcile::{self, Backoff, Context, FINALIZER};
use reverse_words_operator::validate::validate;
use reverse_words_operator::{desired, status};
use serde_json::{Value, json};
use support::mock::{self, Reply, step};

const NS: &str = "apps";
const CR_PATH: &str = "/apis/apps.linuxera.org/v1alpha1/namespaces/apps/reversewordsapps/example";
const DEP_PATH: &str = "/apis/apps/v1/namespaces/apps/deployments/dp-example";
const SVC_PATH: &str = "/api/v1/namespaces/apps/services/service-example";
const PODS_PATH: &str = "/api/v1/namespaces/apps/pods?&labelSelector=app%3Dexample";
const EVENTS_PATH: &str = "/apis/events.k8s.io/v1/namespaces/apps/events";
const APPLY_QUERY: &str = "?&force=true&fieldManager=reverse-words-operator";

fn fixed_now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap())
}

fn context(client: kube::Client) -> Arc<Context> {
    Arc::new(Context {
        recorder: Recorder::new(
            client.clone(),
            Reporter {
                controller: "reverse-words-operator".into(),
                instance: Some("test".into()),
            },
        ),
        client,
        image: OperandImage::default(),
        metrics: Arc::new(Metrics::new()),
        backoff: Backoff::new(Duration::from_secs(1), Duration::from_secs(60)),
        clock: fixed_now,
        children: Default::default(),
    })
}

fn cr(replicas: i32, finalizer: bool) -> ReverseWordsApp {
    let mut cr = ReverseWordsApp::new(
        "example",
        ReverseWordsAppSpec {
            replicas,
            app_version: Some("v0.0.2".into()),
        },
    );
    cr.metadata.namespace = Some(NS.into());
    cr.metadata.uid = Some("uid-1".into());
    cr.metadata.generation = Some(1);
    cr.metadata.resource_version = Some("10".into());
    if finalizer {
        cr.metadata.finalizers = Some(vec![FINALIZER.into()]);
    }
    cr
}

fn cr_json(cr: &ReverseWordsApp) -> Value {
    serde_json::to_value(cr).unwrap()
}

/// What the API server returns for an applied Deployment: the body plus server fields.
fn server_deployment(replicas: i32, ready: i32) -> Value {
    json!({"metadata": {"generation": 1, "resourceVersion": "20", "uid": "dep-uid"},
           "status": {"observedGeneration": 1, "replicas": replicas, "readyReplicas": ready, "updatedReplicas": ready}})
}

fn existing_deployment(cr: &ReverseWordsApp, replicas: i32, ready: i32) -> Value {
    let app = validate(cr).unwrap();
    let mut d = serde_json::to_value(desired::deployment(&app, &OperandImage::default())).unwrap();
    d["spec"]["replicas"] = json!(replicas);
    d["metadata"]["generation"] = json!(1);
    d["status"] = server_deployment(replicas, ready)["status"].clone();
    d
}

fn existing_service(cr: &ReverseWordsApp) -> Value {
    serde_json::to_value(desired::service(&validate(cr).unwrap())).unwrap()
}

fn event_reasons(seen: &[mock::Seen]) -> Vec<String> {
    seen.iter()
        .filter(|s| {
            s.uri.starts_with(EVENTS_PATH) && !s.body.is_null() && s.body.get("reason").is_some()
        })
        .map(|s| s.body["reason"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn first_reconcile_adds_the_finalizer() {
    let (client, handle) = mock::client();
    let cr = cr(2, false);
    let mut with_fin = cr_json(&cr);
    with_fin["metadata"]["finalizers"] = json!([FINALIZER]);
    let server = tokio::spawn(mock::serve(
        handle,
        vec![step(Method::PATCH, CR_PATH, Reply::Json(200, with_fin))],
    ));
    let action = reconcile::reconcile(Arc::new(cr), context(client))
        .await
        .unwrap();
    assert_eq!(action, Action::await_change());
    let seen = server.await.unwrap();
    assert_eq!(seen[0].content_type, "application/json-patch+json");
    assert!(seen[0].body.to_string().contains(FINALIZER));
}

#[tokio::test]
async fn creates_deployment_and_service_and_writes_status() {
    let (client, handle) = mock::client();
    let cr = cr(2, true);
    let mut cr_after = cr_json(&cr);
    cr_after["status"] = json!({"appPods": []});
    let server = tokio::spawn(mock::serve(
        handle,
        vec![
            // 201 Created from the apply itself says the child is new: no GET before it.
            step(
                Method::PATCH,
                format!("{DEP_PATH}{APPLY_QUERY}"),
                Reply::EchoWith(201, server_deployment(2, 0)),
            ),
            step(Method::POST, EVENTS_PATH, Reply::Echo(201)),
            step(
                Method::PATCH,
                format!("{SVC_PATH}{APPLY_QUERY}"),
                Reply::Echo(201),
            ),
            step(Method::POST, EVENTS_PATH, Reply::Echo(201)),
            step(
                Method::GET,
                PODS_PATH,
                Reply::Json(
                    200,
                    json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": [
                        {"metadata": {"name": "dp-example-1"}, "status": {"phase": "Running"}},
                        {"metadata": {"name": "dp-example-2"}, "status": {"phase": "Pending"}},
                        {"metadata": {"name": "dp-example-old"}, "status": {"phase": "Succeeded"}}
                    ]}),
                ),
            ),
            step(
                Method::PATCH,
                format!("{CR_PATH}/status"),
                Reply::Json(200, cr_after),
            ),
        ],
    ));
    let action = reconcile::reconcile(Arc::new(cr), context(client))
        .await
        .unwrap();
    assert_eq!(action, Action::requeue(reconcile::NOT_READY_RESYNC));
    let seen = server.await.unwrap();
    // Two applies, two events, the pod list and the status: 6 calls (8 with a GET per child).
    assert_eq!(seen.len(), 6);

    let dep = &seen[0];
    assert_eq!(dep.content_type, "application/apply-patch+yaml");
    assert_eq!(dep.body["kind"], "Deployment");
    assert_eq!(dep.body["spec"]["replicas"], 2);
    assert_eq!(
        dep.body["spec"]["template"]["spec"]["containers"][0]["image"],
        "quay.io/mavazque/reversewords:v0.0.2"
    );
    assert_eq!(dep.body["metadata"]["ownerReferences"][0]["uid"], "uid-1");
    let svc = &seen[2];
    assert_eq!(svc.body["spec"]["type"], "LoadBalancer");
    assert_eq!(event_reasons(&seen), ["Created", "Created"]);
    let related: Vec<(&str, &str)> = [1, 3]
        .iter()
        .map(|&i| {
            let r = &seen[i].body["related"];
            (
                r["apiVersion"].as_str().unwrap(),
                r["kind"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(related, [("apps/v1", "Deployment"), ("v1", "Service")]);

    let st = &seen[5];
    assert_eq!(st.content_type, "application/merge-patch+json");
    assert_eq!(
        st.body["status"]["appPods"],
        json!(["dp-example-1", "dp-example-2"])
    );
    let conds = st.body["status"]["conditions"].as_array().unwrap();
    let get = |t: &str| conds.iter().find(|c| c["type"] == t).unwrap().clone();
    assert_eq!(get("Ready")["status"], "False");
    assert_eq!(get("ReverseWordsDeploymentNotReady")["status"], "True");
    assert_eq!(get("Ready")["lastTransitionTime"], "2023-11-14T22:13:20Z");
    assert_eq!(st.body["status"]["selector"], "app=example");
}

#[tokio::test]
async fn second_pass_with_nothing_changed_writes_nothing() {
    let (client, handle) = mock::client();
    let mut cr = cr(2, true);
    let dep_value = existing_deployment(&cr, 2, 2);
    let dep: Deployment = serde_json::from_value(dep_value.clone()).unwrap();
    let pods_json = json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": [
        {"metadata": {"name": "p1"}, "status": {"phase": "Running"}},
        {"metadata": {"name": "p2"}, "status": {"phase": "Running"}}]});
    let pods: k8s_openapi::List<k8s_openapi::api::core::v1::Pod> =
        serde_json::from_value(pods_json.clone()).unwrap();
    cr.status = Some(status::desired_status(
        &cr,
        Some(&dep),
        &pods.items,
        fixed_now(),
    ));
    let server = tokio::spawn(mock::serve(
        handle,
        vec![
            step(
                Method::PATCH,
                format!("{DEP_PATH}{APPLY_QUERY}"),
                Reply::Json(200, dep_value),
            ),
            step(
                Method::PATCH,
                format!("{SVC_PATH}{APPLY_QUERY}"),
                Reply::Json(200, existing_service(&cr)),
            ),
            step(Method::GET, PODS_PATH, Reply::Json(200, pods_json)),
        ],
    ));
    let action = reconcile::reconcile(Arc::new(cr), context(client))
        .await
        .unwrap();
    assert_eq!(action, Action::requeue(reconcile::READY_RESYNC));
    let seen = server.await.unwrap();
    // Steady state: two applies and the pod list, 3 calls (5 with a GET per child).
    assert_eq!(seen.len(), 3);
    assert!(
        event_reasons(&seen).is_empty(),
        "no events when nothing changed"
    );
}

#[tokio::test]
async fn drift_is_corrected_and_a_deleted_service_recreated() {
    let (client, handle) = mock::client();
    let ctx = context(client);
    let cr = cr(1, true);
    let in_sync = existing_deployment(&cr, 1, 1);
    // Someone scaled the Deployment to 5 (generation 2); the apply puts 1 back (generation 3).
    let mut corrected = existing_deployment(&cr, 1, 1);
    corrected["metadata"]["generation"] = json!(3);
    corrected["status"]["observedGeneration"] = json!(2);
    let pods = || {
        step(
            Method::GET,
            PODS_PATH,
            Reply::Json(
                200,
                json!({"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": []}),
            ),
        )
    };
    let status_write = || {
        step(
            Method::PATCH,
            format!("{CR_PATH}/status"),
            Reply::Json(200, cr_json(&cr)),
        )
    };
    let server = tokio::spawn(mock::serve(
        handle,
        vec![
            // Pass 1: both children exist as desired.
            step(
                Method::PATCH,
                format!("{DEP_PATH}{APPLY_QUERY}"),
                Reply::Json(200, in_sync),
            ),
            step(
                Method::PATCH,
                format!("{SVC_PATH}{APPLY_QUERY}"),
                Reply::Json(200, existing_service(&cr)),
            ),
            pods(),
            status_write(),
            // Pass 2: the Deployment drifted and the Service was deleted.
            step(
                Method::PATCH,
                format!("{DEP_PATH}{APPLY_QUERY}"),
                Reply::Json(200, corrected),
            ),
            step(Method::POST, EVENTS_PATH, Reply::Echo(201)),
            step(
                Method::PATCH,
                format!("{SVC_PATH}{APPLY_QUERY}"),
                Reply::Echo(201),
            ),
            step(Method::POST, EVENTS_PATH, Reply::Echo(201)),
            pods(),
            status_write(),
        ],
    ));
    let cr = Arc::new(cr.clone());
    reconcile::reconcile(cr.clone(), ctx.clone()).await.unwrap();
    reconcile::reconcile(cr, ctx).await.unwrap();
    let seen = server.await.unwrap();
    assert_eq!(
        seen[4].body["spec"]["replicas"], 1,
        "desired replicas re-applied"
    );
    assert_eq!(event_reasons(&seen), ["Updated", "Created"]);
}

#[tokio::test]
async fn an_invalid_cr_gets_a_condition_and_a_warning_and_no_children() {
    let (client, handle) = mock::client();
    let ctx = context(client);
    let mut cr = cr(1, true);
    // Stored under an older CRD without the tag pattern.
    cr.spec.app_version = Some("v1:bad".into());
    let server = tokio::spawn(mock::serve(
        handle,
        vec![
            step(Method::POST, EVENTS_PATH, Reply::Echo(201)),
            step(
                Method::PATCH,
                format!("{CR_PATH}/status"),
                Reply::Json(200, cr_json(&cr)),
            ),
        ],
    ));
    let action = reconcile::reconcile(Arc::new(cr), ctx.clone())
        .await
        .unwrap();
    assert_eq!(action, Action::await_change(), "only a spec change helps");
    let seen = server.await.unwrap();
    assert_eq!(event_reasons(&seen), ["InvalidSpec"]);
    assert_eq!(seen[0].body["type"], "Warning");
    let ready = &seen[1].body["status"]["conditions"][0];
    assert_eq!(ready["type"], "Ready");
    assert_eq!(ready["status"], "False");
    assert_eq!(ready["reason"], "InvalidSpec");
    assert!(
        ready["message"]
            .as_str()
            .unwrap()
            .starts_with("spec.appVersion: \"v1:bad\""),
        "{ready}"
    );
    assert!(
        ctx.metrics
            .encode()
            .contains("reverse_words_reconcile_errors_total{error=\"invalid\"} 1")
    );
}

#[tokio::test]
async fn deletion_cleans_up_then_removes_the_finalizer() {
    let (client, handle) = mock::client();
    let mut cr = cr(1, true);
    cr.metadata.deletion_timestamp = Some(fixed_now());
    let mut gone = cr_json(&cr);
    gone["metadata"]["finalizers"] = json!([]);
    let server = tokio::spawn(mock::serve(
        handle,
        vec![
            step(
                Method::DELETE,
                DEP_PATH,
                Reply::Json(
                    200,
                    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}),
                ),
            ),
            step(Method::DELETE, SVC_PATH, Reply::Error(404, "NotFound")),
            step(Method::POST, EVENTS_PATH, Reply::Echo(201)),
            step(Method::PATCH, CR_PATH, Reply::Json(200, gone)),
        ],
    ));
    let action = reconcile::reconcile(Arc::new(cr), context(client))
        .await
        .unwrap();
    assert_eq!(action, Action::await_change());
    let seen = server.await.unwrap();
    assert_eq!(event_reasons(&seen), ["Deleted"]);
    assert!(
        seen[3].body.to_string().contains("remove"),
        "finalizer removed with a JSON patch: {}",
        seen[3].body
    );
}

#[tokio::test]
async fn server_errors_fail_with_backoff_and_a_warning_event() {
    let (client, handle) = mock::client();
    let ctx = context(client);
    let cr = Arc::new(cr(1, true));
    let server = tokio::spawn(mock::serve(
        handle,
        vec![
            step(
                Method::PATCH,
                format!("{DEP_PATH}{APPLY_QUERY}"),
                Reply::Error(500, "InternalError"),
            ),
            step(Method::POST, EVENTS_PATH, Reply::Echo(201)),
            step(
                Method::PATCH,
                format!("{DEP_PATH}{APPLY_QUERY}"),
                Reply::Error(409, "Conflict"),
            ),
            // The recorder turns a repeated event into a series: a PATCH of the first one.
            step(
                Method::PATCH,
                format!("{EVENTS_PATH}/example.*"),
                Reply::Echo(200),
            ),
        ],
    ));
    let e1 = reconcile::reconcile(cr.clone(), ctx.clone())
        .await
        .unwrap_err();
    assert!(
        e1.to_string()
            .contains("cannot apply Deployment dp-example"),
        "{e1}"
    );
    assert_eq!(
        reconcile::error_policy(cr.clone(), &e1, ctx.clone()),
        Action::requeue(Duration::from_secs(1))
    );
    let e2 = reconcile::reconcile(cr.clone(), ctx.clone())
        .await
        .unwrap_err();
    assert!(
        e2.to_string()
            .contains("cannot apply Deployment dp-example"),
        "{e2}"
    );
    assert_eq!(
        reconcile::error_policy(cr.clone(), &e2, ctx.clone()),
        Action::requeue(Duration::from_secs(2))
    );
    let seen = server.await.unwrap();
    assert_eq!(event_reasons(&seen), ["ReconcileFailed", "ReconcileFailed"]);
    assert_eq!(seen[1].body["type"], "Warning");
    let metrics = ctx.metrics.encode();
    assert!(
        metrics.contains("reverse_words_reconcile_errors_total{error=\"kube\"} 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_cr_that_is_already_gone_is_not_an_error() {
    let (client, handle) = mock::client();
    let server = tokio::spawn(mock::serve(
        handle,
        vec![step(Method::PATCH, CR_PATH, Reply::Error(404, "NotFound"))],
    ));
    let action = reconcile::reconcile(Arc::new(cr(1, false)), context(client))
        .await
        .unwrap();
    assert_eq!(action, Action::await_change());
    server.await.unwrap();
}
