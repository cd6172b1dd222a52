//! The catalog server OLM queries: operator-registry's gRPC `api.Registry` (OLM v0's
//! catalog-operator) and catalogd's HTTP API (OLM v1), from one catalog.
//!
//! Two halves with a wall between them (checked by `tests/layers.rs`):
//! - [`index`]: start-up. Reads the catalog (YAML/JSON, the validated model) once and writes
//!   what the server needs: the index and payload file of `--cache-dir`, catalogd's JSON lines.
//! - [`runtime`]: serving. Reads only the index, the payload file and the generated protocol
//!   types; no YAML parser, no catalog model after start-up.
//!
//! Beside them: [`proto`] (the generated `api` messages and services, and the cache's own
//! messages) and [`image`] (the catalog image: catalog, pre-built cache, `olm` as entrypoint).

pub mod image;
pub mod index;
pub mod proto;
pub mod runtime;
