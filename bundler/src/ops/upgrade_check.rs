//! `olm bundle check-upgrade OLD NEW` and `olm catalog check-upgrades <catalog>`: the CRDs of
//! two bundles (directories or images), or along every upgrade edge of a catalog, compared
//! for changes that break stored objects or clients.

use std::path::Path;

use thiserror::Error;

use crate::bundle::crd_upgrade::{self, CrdSet, Report};
use crate::bundle::load::BundleDir;
use crate::catalog::crd_upgrades::{self, CatalogReport};
use crate::catalog::diagnostic;
use crate::catalog::model::{Model, ModelLoadError};
use crate::confined::Tree;
use crate::image::registry::RegistryOptions;
use crate::ops::bundle_source::{self, BundleSourceError};

#[derive(Debug, Error)]
pub enum UpgradeCheckError {
    /// An argument names nothing usable (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Source(#[from] BundleSourceError),
    /// The catalog does not validate: its report, to print before the error.
    #[error("{dir}: the catalog does not validate; fix it first (olm catalog validate)")]
    Invalid {
        dir: String,
        report: Box<diagnostic::Report>,
    },
    #[error(transparent)]
    Load(ModelLoadError),
}

impl UpgradeCheckError {
    pub fn is_usage(&self) -> bool {
        match self {
            Self::Usage(_) => true,
            Self::Source(e) => e.is_usage(),
            _ => false,
        }
    }
}

/// Compares the CRDs of bundle `old` with those of bundle `new` (each a directory or image;
/// images are pulled with `registry`).
pub async fn check_bundles(
    old: &str,
    new: &str,
    registry: &RegistryOptions,
) -> Result<Report, UpgradeCheckError> {
    let old_bundle = bundle_source::fetch(old, registry).await?;
    let new_bundle = bundle_source::fetch(new, registry).await?;
    let load = |tree: &Tree, arg: &str| {
        BundleDir::load_tree_strict(tree)
            .map(|b| CrdSet::from_bundle(&b))
            .map_err(|e| UpgradeCheckError::Usage(format!("{arg}: {e}")))
    };
    let old = load(old_bundle.tree(), old)?;
    let new = load(new_bundle.tree(), new)?;
    Ok(crd_upgrade::compare(&old, &new))
}

/// Checks every upgrade edge of the catalog in `dir` (of `package` only, when given).
pub fn check_catalog(
    dir: &Path,
    package: Option<&str>,
) -> Result<CatalogReport, UpgradeCheckError> {
    let shown = dir.display().to_string();
    if !dir.exists() {
        let msg = format!("{shown}: no such file or directory");
        return Err(UpgradeCheckError::Usage(msg));
    }
    let model = match Model::load(dir) {
        Ok((m, _)) => m,
        Err(ModelLoadError::Invalid(report)) => {
            let report = Box::new(report);
            return Err(UpgradeCheckError::Invalid { dir: shown, report });
        }
        Err(e) => return Err(UpgradeCheckError::Load(e)),
    };
    if let Some(p) = package
        && model.package(p).is_none()
    {
        return Err(UpgradeCheckError::Usage(format!(
            "{shown}: no package {p:?}"
        )));
    }
    Ok(crd_upgrades::check(&model, package))
}
