//! A catalog named on the command line: a directory or file, or a catalog image
//! (`oci:<dir>[:tag]` or a registry reference) pulled and unpacked to a temporary directory.
//! One reading for every command that takes "a catalog directory or image" (serve, list).

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::catalog::load::Keep;
use crate::catalog::sqlite::DATABASE_LABEL;
use crate::image::registry::RegistryOptions;
use crate::image::transfer::{self, TransferError};
use crate::scratch::ScratchDir;
use crate::serve::image::{CACHE_DIR, CONFIGS_LABEL};
use crate::serve::index::cache::CACHE_SUBDIR;

#[derive(Debug, Error)]
pub enum CatalogSourceError {
    #[error("{0}: no such catalog directory or file (nor an image reference)")]
    Missing(String),
    #[error("cannot create a temporary directory: {0}")]
    TempDir(std::io::Error),
    #[error("cannot pull {reference}")]
    Pull {
        reference: String,
        #[source]
        source: TransferError,
    },
    #[error("{0}: not a catalog image (no {CONFIGS_LABEL} label)")]
    NotACatalog(String),
    #[error("{reference}: its configs label points at {configs}, which the image does not contain")]
    NoConfigs { reference: String, configs: String },
    #[error(
        "{reference}: its {DATABASE_LABEL} label names {database}, which the image does not contain"
    )]
    NoDatabase { reference: String, database: String },
}

/// A catalog image pulled and unpacked into a temporary directory (removed on drop).
#[derive(Debug)]
pub struct PulledCatalog {
    _dir: ScratchDir,
    /// The FBC root the image's configs label points at.
    pub configs: PathBuf,
    /// Our pre-built serve cache inside the image, when it carries one.
    pub cache: Option<PathBuf>,
}

/// Whether a command-line argument names an image rather than a local path: `oci:...`, or a
/// reference that is not an existing path and has a `/` or `@`.
pub fn is_image_ref(r: &str) -> bool {
    r.starts_with("oci:") || (!Path::new(r).exists() && (r.contains('/') || r.contains('@')))
}

/// Any image pulled and unpacked into a temporary directory (removed on drop).
#[derive(Debug)]
pub struct PulledImage {
    pub dir: ScratchDir,
    pub pulled: transfer::PulledImage,
}

impl PulledImage {
    /// The catalog directory its configs label names: `None` without the label, an error
    /// when the image does not contain it.
    pub fn configs_dir(&self, reference: &str) -> Option<Result<PathBuf, CatalogSourceError>> {
        let label = self.pulled.config.config.labels.get(CONFIGS_LABEL)?;
        let configs = self.pulled.rootfs.join(label.trim_start_matches('/'));
        Some(match configs.is_dir() {
            true => Ok(configs),
            false => Err(CatalogSourceError::NoConfigs {
                reference: reference.to_string(),
                configs: configs.display().to_string(),
            }),
        })
    }

    /// The index database a legacy index image's database label names, and the label: `None`
    /// without the label, an error when the image does not contain it.
    pub fn database_file(
        &self,
        reference: &str,
    ) -> Option<Result<(PathBuf, &str), CatalogSourceError>> {
        let label = self.pulled.config.config.labels.get(DATABASE_LABEL)?;
        let db = self.pulled.rootfs.join(label.trim_start_matches('/'));
        // A label is input: it may not lead out of the unpacked image.
        let inside = !Path::new(label)
            .components()
            .any(|c| c == std::path::Component::ParentDir);
        Some(match inside && db.is_file() {
            true => Ok((db, label.as_str())),
            false => Err(CatalogSourceError::NoDatabase {
                reference: reference.to_string(),
                database: label.clone(),
            }),
        })
    }
}

/// Pulls an image (from a registry or an `oci:` layout) and unpacks it.
pub async fn pull(
    reference: &str,
    opts: &RegistryOptions,
) -> Result<PulledImage, CatalogSourceError> {
    let dir = ScratchDir::new().map_err(CatalogSourceError::TempDir)?;
    let pulled = transfer::pull_to_dir(reference, dir.path(), opts)
        .await
        .map_err(|source| CatalogSourceError::Pull {
            reference: reference.to_string(),
            source,
        })?;
    Ok(PulledImage { dir, pulled })
}

/// Pulls a catalog image (from a registry or an `oci:` layout) and unpacks it.
pub async fn pull_catalog(
    reference: &str,
    opts: &RegistryOptions,
) -> Result<PulledCatalog, CatalogSourceError> {
    let image = pull(reference, opts).await?;
    let Some(configs) = image.configs_dir(reference) else {
        return Err(CatalogSourceError::NotACatalog(reference.to_string()));
    };
    let configs = configs?;
    let PulledImage { dir, pulled } = image;
    let cache = pulled.rootfs.join(CACHE_DIR.trim_start_matches('/'));
    let cache = cache.join(CACHE_SUBDIR).is_dir().then_some(cache);
    Ok(PulledCatalog {
        _dir: dir,
        configs,
        cache,
    })
}

/// The catalog `arg` names: an existing directory or file as it is, else a catalog image
/// pulled with `opts` (its FBC root, and the pulled image, which must outlive its use). An
/// argument that looks like a path (`/`, `.`, `~`) is never taken for an image.
pub async fn resolve(
    arg: &Path,
    opts: &RegistryOptions,
) -> Result<(PathBuf, Option<PulledCatalog>), CatalogSourceError> {
    if arg.exists() {
        return Ok((arg.to_path_buf(), None));
    }
    let reference = arg.to_string_lossy().into_owned();
    if reference.starts_with(['/', '.', '~']) || !is_image_ref(&reference) {
        return Err(CatalogSourceError::Missing(reference));
    }
    let pulled = pull_catalog(&reference, opts).await?;
    tracing::info!(image = %reference, configs = %pulled.configs.display(), "pulled catalog image");
    Ok((pulled.configs.clone(), Some(pulled)))
}

/// Why a catalog's model could not be had.
#[derive(Debug, Error)]
pub enum CatalogModelError {
    #[error(transparent)]
    Source(#[from] CatalogSourceError),
    #[error(transparent)]
    Load(#[from] crate::catalog::load::LoadErrors),
    /// The catalog does not validate: its report, to print before the error.
    #[error("{catalog}: the catalog does not validate")]
    Invalid {
        catalog: String,
        report: Box<crate::catalog::diagnostic::Report>,
    },
}

/// The validated model of the catalog `arg` names: a directory or file, or an image pulled
/// with `opts`.
pub async fn load_model(
    arg: &str,
    opts: &RegistryOptions,
) -> Result<crate::catalog::model::Model, CatalogModelError> {
    if !is_image_ref(arg) {
        return load_local_model(Path::new(arg), Keep::All);
    }
    // The pulled image lives in a temporary directory until the model is built.
    let pulled = pull_catalog(arg, opts).await?;
    load_local_model(&pulled.configs, Keep::All).map_err(|e| match e {
        CatalogModelError::Invalid { report, .. } => CatalogModelError::Invalid {
            catalog: arg.to_string(),
            report,
        },
        e => e,
    })
}

/// The validated model of a catalog directory or file, keeping what `keep` says of the
/// blobs.
pub fn load_local_model(
    dir: &Path,
    keep: Keep,
) -> Result<crate::catalog::model::Model, CatalogModelError> {
    let cfg = crate::catalog::load::load_dir_keeping(dir, keep)?;
    match crate::catalog::model::Model::from_declcfg(&cfg) {
        Ok((m, _)) => Ok(m),
        Err(report) => Err(CatalogModelError::Invalid {
            catalog: dir.display().to_string(),
            report: Box::new(report),
        }),
    }
}
