//! The operator reports ready once its caches have synced: the real controller wiring against a
//! fake API server over HTTP that answers lists with nothing and holds watches open.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Query, Request};
use axum::response::Response;
use reverse_words_operator::namespace::WatchNamespaces;
use reverse_words_operator::{controller, image, metrics, reconcile, server};

async fn fake_api(
    Query(q): Query<std::collections::HashMap<String, String>>,
    _req: Request,
) -> Response {
    if q.get("watch").map(String::as_str) == Some("true") {
        let idle = futures::stream::pending::<Result<Bytes, std::convert::Infallible>>();
        return Response::builder()
            .header("content-type", "application/json")
            .body(Body::from_stream(idle))
            .unwrap();
    }
    let list = r#"{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}"#;
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(list))
        .unwrap()
}

async fn client_for_fake(watch: &str) -> (kube::Client, WatchNamespaces) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, Router::new().fallback(fake_api))
            .await
            .unwrap()
    });
    reverse_words_operator::install_crypto_provider();
    let cfg = kube::Config::new(format!("http://{addr}").parse().unwrap());
    (
        kube::Client::try_from(cfg).unwrap(),
        WatchNamespaces::parse(watch).unwrap(),
    )
}

async fn becomes_ready(watch: &str) {
    let (client, watch) = client_for_fake(watch).await;
    controller::check_crd(&client, &watch)
        .await
        .expect("CRD listable");
    let ctx = Arc::new(reconcile::Context::new(
        client.clone(),
        image::OperandImage::default(),
        Arc::new(metrics::Metrics::new()),
        None,
    ));
    let health = Arc::new(server::Health::default());
    let (tx, rx) = tokio::sync::watch::channel(false);
    let stop = futures::FutureExt::shared(async move {
        let mut rx = rx;
        let _ = rx.wait_for(|s| *s).await;
    });
    let run = tokio::spawn({
        let health = health.clone();
        async move { controller::run(client, ctx, &watch, health, stop).await }
    });
    let ready = tokio::time::timeout(Duration::from_secs(10), async {
        while !health.is_ready() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(ready.is_ok(), "operator never reported ready");
    tx.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .expect("graceful shutdown")
        .unwrap();
}

#[tokio::test]
async fn ready_after_caches_sync_all_namespaces() {
    becomes_ready("").await;
}

#[tokio::test]
async fn ready_after_caches_sync_several_namespaces() {
    becomes_ready("team-a,team-b").await;
}
