//! A catalog named on the command line: a directory or file, or a catalog image
//! (`oci:<dir>[:tag]` or a registry reference) pulled and unpacked to a temporary directory.
//! One reading for every command that takes "a catalog directory or image" (serve, list).

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::catalog::load::Keep;
use crate::catalog::sqlite::DATABASE_LABEL;
use crate::confined::{EntryKind, RelPath, Tree};
use crate::image::registry::RegistryOptions;
use crate::image::transfer::{self, LabelPathError, TransferError};
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
    /// A label naming a path that could lead out of the image (`/../../etc`).
    #[error("{reference}: {error}")]
    Label {
        reference: String,
        error: LabelPathError,
    },
    #[error(
        "{reference}: its configs label points at {configs:?}, which the image does not contain"
    )]
    NoConfigs { reference: String, configs: String },
    #[error(
        "{reference}: its {DATABASE_LABEL} label names {database}, which the image does not contain"
    )]
    NoDatabase { reference: String, database: String },
    #[error("{reference}: cannot open the unpacked image")]
    Unpacked {
        reference: String,
        #[source]
        source: std::io::Error,
    },
}

/// A catalog image pulled and unpacked into a temporary directory (removed on drop).
#[derive(Debug)]
pub struct PulledCatalog {
    _dir: ScratchDir,
    /// The FBC root the image's configs label points at, read confined to the image.
    pub configs: Tree,
    /// The configs label's path inside the image (`configs` for `/configs`).
    pub configs_path: RelPath,
    /// The unpacked image's root (for a cache builder in another process, which reads the
    /// catalog at [`PulledCatalog::configs_path`] confined to it).
    pub root: PathBuf,
    /// Our pre-built serve cache inside the image, when it carries one.
    pub cache: Option<PathBuf>,
}

/// Whether a command-line argument names an image rather than a local path: `oci:...`, or a
/// reference that is not an existing path and has a `/` or `@`.
pub fn is_image_ref(r: &str) -> bool {
    // host: the user's own argument
    r.starts_with("oci:") || (!Path::new(r).exists() && (r.contains('/') || r.contains('@')))
}

/// Any image pulled and unpacked into a temporary directory (removed on drop).
#[derive(Debug)]
pub struct PulledImage {
    pub dir: ScratchDir,
    pub pulled: transfer::PulledImage,
}

impl PulledImage {
    /// The unpacked image, every read confined to it.
    pub fn tree(&self, reference: &str) -> Result<Tree, CatalogSourceError> {
        self.pulled
            .tree()
            .map_err(|source| CatalogSourceError::Unpacked {
                reference: reference.to_string(),
                source,
            })
    }

    /// The path inside the image a label names: `None` without the label, an error when it
    /// could lead out of the image.
    fn label_path(
        &self,
        reference: &str,
        label: &str,
    ) -> Option<Result<RelPath, CatalogSourceError>> {
        let found = self.pulled.label_path(label)?;
        Some(found.map_err(|error| CatalogSourceError::Label {
            reference: reference.to_string(),
            error,
        }))
    }

    /// The catalog directory its configs label names (and the label's path): `None` without
    /// the label, an error when it leads out of the image or the image does not contain it.
    pub fn configs_dir(
        &self,
        reference: &str,
    ) -> Option<Result<(Tree, RelPath), CatalogSourceError>> {
        let rel = match self.label_path(reference, CONFIGS_LABEL)? {
            Ok(rel) => rel,
            Err(e) => return Some(Err(e)),
        };
        Some(
            self.tree(reference)
                .and_then(|tree| match tree.is_dir(&rel) {
                    true => Ok((tree.subtree(&rel), rel)),
                    false => Err(CatalogSourceError::NoConfigs {
                        reference: reference.to_string(),
                        configs: self.pulled.config.config.labels[CONFIGS_LABEL].clone(),
                    }),
                }),
        )
    }

    /// The index database a legacy index image's database label names, opened confined to
    /// the image, and the label: `None` without the label, an error when it leads out of the
    /// image or the image does not contain it.
    pub fn database_file(
        &self,
        reference: &str,
    ) -> Option<Result<(std::fs::File, &str), CatalogSourceError>> {
        let label = self.pulled.config.config.labels.get(DATABASE_LABEL)?;
        let rel = match self.label_path(reference, DATABASE_LABEL)? {
            Ok(rel) => rel,
            Err(e) => return Some(Err(e)),
        };
        let missing = || CatalogSourceError::NoDatabase {
            reference: reference.to_string(),
            database: label.clone(),
        };
        Some(self.tree(reference).and_then(|tree| {
            let file = tree.open_regular(&rel).map_err(|_| missing())?;
            Ok((file, label.as_str()))
        }))
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
    let (configs, configs_path) = configs?;
    let cache = image_cache(&image.tree(reference)?);
    let PulledImage { dir, pulled } = image;
    // host: our own cache path in our scratch directory, checked free of links above
    let cache = cache.then(|| pulled.rootfs.join(CACHE_DIR.trim_start_matches('/')));
    Ok(PulledCatalog {
        _dir: dir,
        configs,
        configs_path,
        root: pulled.rootfs,
        cache,
    })
}

/// Whether the image carries our serve cache (`/tmp/cache/olm-serve.v1`) as real
/// directories and files, no link on the way or in it: the cache is then used by its path in
/// the image. An image whose cache holds a link has it rebuilt in a directory of ours.
fn image_cache(tree: &Tree) -> bool {
    let mut at = RelPath::root();
    let names = CACHE_DIR
        .trim_start_matches('/')
        .split('/')
        .chain([CACHE_SUBDIR]);
    for name in names {
        let Ok(next) = at.child(std::ffi::OsStr::new(name)) else {
            return false;
        };
        if !tree
            .symlink_metadata(&next)
            .is_ok_and(|m| m.kind == EntryKind::Dir)
        {
            return false;
        }
        at = next;
    }
    let cache = at.parent().unwrap_or_default();
    tree.subtree(&cache)
        .links_and_specials()
        .is_ok_and(|found| found.is_empty())
}

/// The catalog `arg` names: an existing directory or file as it is (a tree read with host
/// calls), else a catalog image pulled with `opts` (its FBC root, confined to the image, and
/// the pulled image, which must outlive its use). An argument that looks like a path (`/`,
/// `.`, `~`) is never taken for an image.
pub async fn resolve(
    arg: &Path,
    opts: &RegistryOptions,
) -> Result<(Tree, Option<PulledCatalog>), CatalogSourceError> {
    // host: the user's own argument, read as opm reads a directory it is given
    if arg.exists() {
        return Ok((Tree::host(arg), None));
    }
    let reference = arg.to_string_lossy().into_owned();
    if reference.starts_with(['/', '.', '~']) || !is_image_ref(&reference) {
        return Err(CatalogSourceError::Missing(reference));
    }
    let pulled = pull_catalog(&reference, opts).await?;
    tracing::info!(image = %reference, configs = %pulled.configs_path, "pulled catalog image");
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
    load_tree_model(&pulled.configs, Keep::All).map_err(|e| match e {
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
    load_tree_model(&Tree::host(dir), keep)
}

/// [`load_local_model`] of a tree (an image's configs, confined to the image).
pub fn load_tree_model(
    tree: &Tree,
    keep: Keep,
) -> Result<crate::catalog::model::Model, CatalogModelError> {
    let cfg = crate::catalog::load::load_tree_keeping(tree, keep)?;
    match crate::catalog::model::Model::from_declcfg(&cfg) {
        Ok((m, _)) => Ok(m),
        Err(report) => Err(CatalogModelError::Invalid {
            catalog: tree.shown_root().display().to_string(),
            report: Box::new(report),
        }),
    }
}
