//! `olm release`: the settings of a release pipeline (`release.yaml`) and the pieces of it
//! that are plain data (resolving paths, pinning image references, the recorded operator image
//! pin). The pipeline itself runs in `cli::release`, which drives the bundle, image, catalog
//! and deploy modules in order.

pub mod config;
pub mod manifests;
pub mod pin;
