//! Serving: what runs after start-up. Reads the index, the payload file and the protocol
//! types only (see [`crate::serve`]).
//!
//! - [`store`]: the index in memory and the payload file, with the lookups the RPCs need.
//! - [`registry`]: the `api.Registry` RPCs with opm's semantics and error texts.
//! - [`server`]: the gRPC server: health, reflection, graceful shutdown.
//! - [`catalogd`]: catalogd's HTTP API (`/api/v1/all`, `/api/v1/metas`), optionally over TLS.
//! - [`catalogd_files`]: what it serves, as files of the cache read in bounded chunks.
//! - [`ui`]: the catalog browser's pages, rendered into the cache at start-up.
//! - [`stub_csv`]: the stub ClusterServiceVersion served for `olm.csv.metadata` bundles.
//! - [`probe`]: the `grpc_health_probe` multi-call mode of the binary.

pub mod catalogd;
pub mod catalogd_files;
pub mod probe;
pub mod registry;
pub mod server;
pub mod store;
pub mod stub_csv;
pub mod ui;
