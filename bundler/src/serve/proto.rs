//! Generated protobuf types and gRPC stubs.

/// operator-registry's `api` package: `Registry`, `ExperimentalRegistry` and their messages.
#[allow(clippy::all, missing_docs)]
pub mod api {
    tonic::include_proto!("api");
}

/// Our cache index format (`olm_serve_cache`).
#[allow(clippy::all, missing_docs)]
pub mod cache {
    tonic::include_proto!("olm_serve_cache");
}

/// The encoded descriptor set of both files, for gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/registry_descriptor.bin"));
