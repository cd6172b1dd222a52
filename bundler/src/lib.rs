//! The library behind the `olm` command: turn an operator into an OLM bundle, build and push its
//! OCI images without a daemon, build, validate and serve its file-based catalog, and install it
//! through a Subscription.
//!
//! Areas, one module each, with the CLI as a thin layer on top (`cli`):
//! - [`bundle`]: registry+v1 bundles: load, generate (CSV), validate.
//! - [`image`]: OCI images: reproducible layers, OCI layouts, the registry client.
//! - [`catalog`]: file-based catalogs: the on-disk format (declcfg), the validated model,
//!   render, templates, graph drawing.
//! - [`serve`]: the `api.Registry` gRPC server OLM's catalog-operator talks to.
//! - [`deploy`]: CatalogSource/OperatorGroup/Subscription manifests and installs.
//! - [`certify`]: preflight's operator and container policies, offline, with fixes named.
//! - [`hub`]: the catalog browser (an OperatorHub for any catalog), rendered from a serve cache.
//! - [`grammar`]: notations read exactly as the Go tools read them (semver ranges, image
//!   references, Kubernetes names, Go durations); depends on nothing else here.

pub mod atomic_write;
pub mod bundle;
pub mod catalog;
pub mod certify;
pub mod confined;
pub mod deploy;
pub mod grammar;
pub mod hub;
pub mod image;
pub mod ops;
pub mod parallel;
pub mod release;
pub mod reproducible;
pub mod scratch;
pub mod serve;
pub mod yaml;
