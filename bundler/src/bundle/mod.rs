//! registry+v1 bundles: loading a bundle directory, generating one from an operator's manifests,
//! and validating it as operator-framework/api's validators do.
//!
//! - [`load`]: the on-disk bundle directory, read leniently.
//! - [`kinds`]: the object kinds a registry+v1 bundle may carry.
//! - [`generate`]: operator manifests + a CSV base in, a bundle [`crate::fsx::FileTree`] out.
//! - [`validate`]: one module per validator suite, each producing typed [`validate::Finding`]s.
pub mod generate;
pub mod kinds;
pub mod load;
pub mod validate;
