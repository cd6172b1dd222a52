//! File-based catalogs (FBC): the on-disk format, the validated model, and the commands on them.
//!
//! - [`declcfg`]: the blobs as written on disk; [`load`] reads a directory the way opm does.
//! - [`property`]: bundle properties, raw with a typed view.
//! - [`validate`]: every `opm validate` rule plus extra warnings, as a [`diagnostic::Report`].
//! - [`model`]: the validated graph (packages -> channels -> bundles) a catalog server serves.
//! - [`semver_range`]: blang/semver versions and ranges, as OLM's skipRange uses them.

pub mod add;
pub mod b64;
pub mod convert;
pub mod declcfg;
pub mod diagnostic;
pub mod graph;
pub mod ignore;
pub mod imageref;
pub mod init;
pub mod list;
pub mod load;
pub mod model;
pub mod property;
pub mod render;
pub mod semver_range;
pub mod substitutes;
pub mod synth;
pub mod template;
pub mod upgrade;
pub mod validate;
