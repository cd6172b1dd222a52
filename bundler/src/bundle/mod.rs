//! registry+v1 bundles: loading a bundle directory, generating one from an operator's manifests,
//! and validating it as operator-framework/api's validators do.
pub mod load;
