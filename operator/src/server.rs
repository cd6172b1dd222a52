//! HTTP endpoints next to the controller: probes on :8081 (`/healthz` always OK while the
//! process serves, `/readyz` OK once the informer caches have synced) and Prometheus metrics on
//! :8080 (`/metrics`), following operator-sdk's ports.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;

use crate::metrics::Metrics;

/// Readiness flag shared between the controller and the probe endpoint.
#[derive(Debug, Default)]
pub struct Health {
    ready: AtomicBool,
}

impl Health {
    pub fn set_ready(&self, ready: bool) {
        self.ready.store(ready, Ordering::SeqCst);
    }
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::SeqCst)
    }
}

async fn healthz() -> &'static str {
    "ok"
}

async fn readyz(State(health): State<Arc<Health>>) -> impl IntoResponse {
    if health.is_ready() {
        (StatusCode::OK, "ok")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "caches not synced")
    }
}

async fn metrics(State(m): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        m.encode(),
    )
}

/// The probe router.
pub fn health_router(health: Arc<Health>) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .with_state(health)
}

/// The metrics router.
pub fn metrics_router(m: Arc<Metrics>) -> Router {
    Router::new().route("/metrics", get(metrics)).with_state(m)
}

/// Serves `router` on `addr` until `shutdown` resolves.
pub async fn serve(
    addr: SocketAddr,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "listening");
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get_text(addr: SocketAddr, path: &str) -> (u16, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        s.write_all(
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await
        .unwrap();
        let mut buf = String::new();
        s.read_to_string(&mut buf).await.unwrap();
        let code = buf[9..12].parse().unwrap();
        (code, buf)
    }

    #[tokio::test]
    async fn probes_and_metrics_answer() {
        let health = Arc::new(Health::default());
        let m = Arc::new(Metrics::new());
        let app = health_router(health.clone()).merge(metrics_router(m));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

        assert_eq!(get_text(addr, "/healthz").await.0, 200);
        assert_eq!(get_text(addr, "/readyz").await.0, 503);
        health.set_ready(true);
        assert_eq!(get_text(addr, "/readyz").await.0, 200);
        let (code, body) = get_text(addr, "/metrics").await;
        assert_eq!(code, 200);
        assert!(body.contains("reverse_words_reconcile_total"));
    }
}
