//! The catalog gRPC server (`api.Registry`) that OLM's catalog-operator queries.
//!
//! - [`proto`]: the generated `api` messages and services (from `proto/registry.proto`).
//! - [`store`]: the catalog as the server holds it: a compact index in memory plus a payload
//!   file with the large CSV/manifest JSON, built from the validated [`model`](crate::catalog::model).
//! - [`cache`]: `--cache-dir`: writing, digest checking and loading the index without YAML.
//! - [`registry`]: the `api.Registry` RPCs with opm's semantics and error texts.
//! - [`server`]: start-up, health, reflection, graceful shutdown.
//! - [`probe`]: the `grpc_health_probe` multi-call mode.
//! - [`catalogd`]: catalogd's HTTP API (OLM v1) from the same catalog, with `--http-port`.
//! - [`image`]: the catalog image (catalog, pre-built cache, `olm` as its entrypoint).
//! - [`stub_csv`]: the stub ClusterServiceVersion served for `olm.csv.metadata` bundles.

pub mod cache;
pub mod catalogd;
pub mod image;
pub mod probe;
pub mod proto;
pub mod registry;
pub mod server;
pub mod store;
pub mod stub_csv;
