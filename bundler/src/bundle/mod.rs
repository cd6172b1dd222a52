//! registry+v1 bundles: loading a bundle directory, generating one from an operator's manifests,
//! and validating it as operator-framework/api's validators do.
//!
//! - [`load`]: the on-disk bundle directory, read leniently.
//! - [`kinds`]: the object kinds a registry+v1 bundle may carry.
//! - [`generate`]: operator manifests + a CSV base in, a bundle [`crate::atomic_write::FileTree`] out.
//! - [`validate`]: one module per validator suite, each producing typed [`validate::Finding`]s.
//! - [`image`]: the bundle image (one layer of manifests/ and metadata/, labels from annotations).
//! - [`crd_upgrade`]: whether one bundle's CRDs can replace another's without breaking stored
//!   objects or clients (operator-controller's CRD upgrade-safety rules and more).
pub mod crd_upgrade;
pub mod generate;
pub mod image;
pub mod kinds;
pub mod load;
pub mod scorecard;
pub mod validate;
