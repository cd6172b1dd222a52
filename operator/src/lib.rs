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
