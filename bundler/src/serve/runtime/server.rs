//! Running the server: listener, services (registry, health, reflection), graceful shutdown.
//!
//! The listener is bound only after the catalog is loaded, like opm, so "port open" already
//! means "answers queries": OLM's native gRPC startup probe and the channel-state health check
//! both see READY only when the catalog can be served.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::{Request, Response, Status};
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};

use super::registry::RegistryService;
use super::store::Store;
use crate::serve::proto::api::experimental_registry_server::ExperimentalRegistryServer;
use crate::serve::proto::api::registry_server::RegistryServer;

/// `grpc.health.v1.Health` as opm answers it: the same status for every service name (OLM's
/// client asks for `"Registry"`, grpc_health_probe for `""`), SERVING while the server runs and
/// NOT_SERVING once shutdown has begun.
#[derive(Debug, Clone)]
pub struct HealthService {
    status: watch::Receiver<ServingStatus>,
}

impl HealthService {
    pub fn new(status: watch::Receiver<ServingStatus>) -> Self {
        HealthService { status }
    }
}

#[tonic::async_trait]
impl Health for HealthService {
    async fn check(
        &self,
        _: Request<HealthCheckRequest>,
    ) -> Result<Response<HealthCheckResponse>, Status> {
        Ok(Response::new(HealthCheckResponse {
            status: *self.status.borrow() as i32,
        }))
    }

    type WatchStream =
        Pin<Box<dyn Stream<Item = Result<HealthCheckResponse, Status>> + Send + 'static>>;

    async fn watch(
        &self,
        _: Request<HealthCheckRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let rx = self.status.clone();
        let stream = futures::stream::unfold((rx, true), |(mut rx, first)| async move {
            if !first && rx.changed().await.is_err() {
                return None;
            }
            let status = *rx.borrow_and_update() as i32;
            Some((Ok(HealthCheckResponse { status }), (rx, false)))
        });
        Ok(Response::new(Box::pin(stream)))
    }
}

/// How long in-flight calls get after SIGTERM before the server stops regardless.
pub const DRAIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Why the server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("gRPC server: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("gRPC reflection: {0}")]
    Reflection(#[from] tonic_reflection::server::Error),
}

/// Binds `addr` (port 0 picks a free one).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

/// Serves `store` on `listener` until `shutdown` resolves, then drains in-flight calls.
pub async fn serve<F>(
    store: Arc<Store>,
    listener: TcpListener,
    shutdown: F,
) -> Result<(), ServeError>
where
    F: std::future::Future<Output = ()> + Send,
{
    let (status_tx, status_rx) = watch::channel(ServingStatus::Serving);
    let registry = RegistryService::new(store);
    let reflection_v1 = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::serve::proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let reflection_v1alpha = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(crate::serve::proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1alpha()?;
    let incoming = tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true));
    let (fired_tx, fired_rx) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        shutdown.await;
        tracing::info!("shutting down: refusing new calls, finishing in-flight ones");
        let _ = status_tx.send(ServingStatus::NotServing);
        let _ = fired_tx.send(());
    };
    let server = tonic::transport::Server::builder()
        .add_service(HealthServer::new(HealthService::new(status_rx)))
        .add_service(RegistryServer::new(registry.clone()))
        .add_service(ExperimentalRegistryServer::new(registry))
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .serve_with_incoming_shutdown(incoming, shutdown);
    // Draining waits for clients to close their connections; one that never does must not
    // keep the pod in Terminating until the kubelet's SIGKILL.
    let deadline = async move {
        if fired_rx.await.is_ok() {
            tokio::time::sleep(DRAIN_TIMEOUT).await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        r = server => r?,
        _ = deadline => tracing::warn!(
            timeout_s = DRAIN_TIMEOUT.as_secs(),
            "clients still connected after the drain timeout; stopping anyway"
        ),
    }
    Ok(())
}

/// Resolves on SIGTERM (what the kubelet sends) or Ctrl-C. The signals are listened for from
/// the call on (not from the first poll), so one that arrives while the server is still
/// starting is not lost. Call it within the runtime.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> + Send {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    async move {
        match (term, int) {
            (Ok(mut term), Ok(mut int)) => {
                tokio::select! {
                    _ = term.recv() => tracing::info!("received SIGTERM"),
                    _ = int.recv() => tracing::info!("received interrupt"),
                }
            }
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; only Ctrl-C stops the server");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}
