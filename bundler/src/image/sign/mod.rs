//! Image signatures and attestations in cosign's formats, for registries and OCI layouts
//! alike, so every verifier in the field (cosign, containers-image's `sigstoreSigned`,
//! OpenShift's ClusterImagePolicy, policy-controller, Kyverno) accepts what we write.
//!
//! - [`key`]: the key files (`cosign.key`, encrypted; `cosign.pub`) and ECDSA P-256.
//! - [`payload`]: the simple-signing payload, the in-toto statement and its DSSE envelope.
//! - [`store`]: the `sha256-<hex>.sig` / `.att` manifests beside an image, read and appended
//!   to through the copy engine.
//! - [`trust`]: sign, verify, attest and verify attestations of one image.

pub mod key;
pub mod payload;
pub mod store;
pub mod trust;

use super::copy::CopyError;

/// A signing or verification that failed, phrased for the user.
#[derive(Debug, thiserror::Error)]
pub enum SignError {
    #[error("{what}: {detail}")]
    Key { what: String, detail: String },
    #[error("{detail}")]
    Payload { detail: String },
    #[error(transparent)]
    Copy(Box<CopyError>),
    #[error("{reference}: no signatures (nothing at {tag})")]
    NoSignatures { reference: String, tag: String },
    #[error("{reference}: no attestations (nothing tagged {tag})")]
    NoAttestations { reference: String, tag: String },
    #[error("{reference}: no signature verifies: {reasons}")]
    NotVerified { reference: String, reasons: String },
    #[error(
        "{what}: {} is over the {} limit",
        super::limits::size_text(*size),
        super::limits::limit_text(*max)
    )]
    TooLarge { what: String, size: u64, max: u64 },
    #[error("{reference}: {detail}")]
    Malformed { reference: String, detail: String },
}

impl From<CopyError> for SignError {
    fn from(e: CopyError) -> Self {
        SignError::Copy(Box::new(e))
    }
}

impl From<super::registry::RegistryError> for SignError {
    fn from(e: super::registry::RegistryError) -> Self {
        CopyError::Registry(e).into()
    }
}

impl From<super::layout::LayoutError> for SignError {
    fn from(e: super::layout::LayoutError) -> Self {
        CopyError::Layout(e).into()
    }
}
