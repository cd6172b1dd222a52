//! File-based catalogs (FBC): the on-disk format, the validated model, and the commands on them.
//!
//! - [`declcfg`]: the blobs as written on disk; [`load`] reads a directory the way opm does.
//! - [`property`]: bundle properties, raw with a typed view.
//! - [`validate`]: every `opm validate` rule plus extra warnings, as a [`diagnostic::Report`].
//! - [`model`]: the validated graph (packages -> channels -> bundles) a catalog server serves.
//! - [`crd_upgrades`]: CRD upgrade safety of every upgrade edge a catalog offers.
//! - [`olmv1`]: which bundles of each package OLM v1 could install.
//! - [`filter`]: keep what a cluster needs of a catalog (oc-mirror v2's selection).
//! - [`sqlite`]: legacy sqlite index databases, rendered as opm renders them.
//! - [`render`]: what `opm render` makes of bundles and catalogs; [`spill`] puts a streamed
//!   render's blobs in opm's order through a temporary file.

pub mod add;
pub mod convert;
pub mod crd_upgrades;
pub mod declcfg;
pub mod diagnostic;
pub mod fast_hash;
pub mod filter;
pub mod gonum;
pub mod gosort;
pub mod goyaml;
pub mod graph;
pub mod ignore;
pub mod images;
pub mod init;
pub mod list;
pub mod load;
pub mod model;
pub mod olmv1;
pub mod opm_bundle;
pub mod opm_json;
pub mod property;
pub mod render;
pub mod spill;
pub mod sqlite;
pub mod template;
pub mod upgrade;
pub mod validate;
pub mod write_fs;

/// The real catalogs of `../shared/data/catalogs` (beside the checkout, or beside a clone one
/// level deeper), for tests. Missing, they fail a test under CI (`CI=true`) and skip it, saying
/// so, elsewhere.
#[cfg(test)]
pub(crate) fn shared_catalogs() -> Option<std::path::PathBuf> {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = [
        "../../shared/data/catalogs",
        "../../../shared/data/catalogs",
    ]
    .iter()
    .map(|p| crate_dir.join(p))
    .find(|p| p.is_dir());
    if found.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
        assert!(
            !ci,
            "test data missing under CI=true: ../shared/data/catalogs"
        );
        eprintln!("SKIP: ../shared/data/catalogs not found");
    }
    found
}
