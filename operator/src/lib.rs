//! The reverse-words operator: a Rust port of the operator-sdk tutorial operator.
//!
//! Reconcile is a pipeline (Stackable style): read the CR, build the desired children as pure
//! functions ([`desired`]), apply them with server-side apply, then compute and write the status
//! ([`status`]). Only [`reconcile`] and [`controller`] talk to the API server.

pub mod controller;
pub mod crd;
pub mod desired;
pub mod image;
pub mod leader;
pub mod manifests;
pub mod metrics;
pub mod namespace;
pub mod rbac;
pub mod reconcile;
pub mod server;
pub mod status;
pub mod telemetry;
pub mod validate;

/// Selects rustls's crypto provider (ring, which kube uses) for the whole process. rustls
/// refuses to guess when more than one provider is compiled in, which happens whenever this
/// crate is built in one cargo invocation with crates that enable aws-lc-rs (the workspace's
/// `olm` CLI pulls it in through reqwest): every kube client would then panic. Call it before
/// building a client; later calls are no-ops.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
