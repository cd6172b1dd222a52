//! Numbers as Go's `encoding/json` writes a `float64` (what opm marshals every number of a
//! manifest as once Kubernetes' unstructured decoder has read it): kept in
//! [`crate::grammar::go_json`] with the rest of Go's JSON output, so catalogs and cosign
//! payloads write numbers alike.

pub use crate::grammar::go_json::{GoFloats, go_float, to_compact_string};
