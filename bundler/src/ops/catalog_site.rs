//! `olm catalog site DIR|IMAGE -o OUT/`: the catalog browser as static files, and the hook
//! that renders it into a catalog image's pre-built cache (`olm catalog build --http-port`).

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::hub::{self, SiteError, SiteOptions, SiteStats};
use crate::image::registry::RegistryOptions;
use crate::ops::catalog_source::{self, CatalogSourceError};
use crate::ops::serve::default_catalog_name;
use crate::serve::index::cache::{self, CacheError, Durability};

/// What `olm catalog site` writes.
#[derive(Debug, Clone)]
pub struct SiteRequest {
    /// A catalog directory, or a catalog image pulled first.
    pub catalog: String,
    pub out: PathBuf,
    /// Default: the directory's name, or the image repository's last component.
    pub catalog_name: Option<String>,
    /// The namespace of the CatalogSource the OLM v0 snippets subscribe from.
    pub catalog_namespace: String,
    pub registry: RegistryOptions,
}

#[derive(Debug, Error)]
pub enum SiteCmdError {
    #[error("{0}: no such catalog directory or file (nor an image reference)")]
    Missing(String),
    #[error(transparent)]
    Pull(#[from] CatalogSourceError),
    #[error("create a temporary directory: {0}")]
    TempDir(std::io::Error),
    #[error("catalog {catalog}: {source}")]
    Cache {
        catalog: PathBuf,
        #[source]
        source: CacheError,
    },
    #[error(transparent)]
    Site(#[from] SiteError),
    #[error("start-up task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// Reads the catalog (pulling an image) and writes the site: from the image's pre-built serve
/// cache when it matches the catalog, else from a temporary cache built here.
pub async fn site(req: SiteRequest) -> Result<SiteStats, SiteCmdError> {
    let (root, pulled) = catalog_source::resolve(Path::new(&req.catalog), &req.registry)
        .await
        .map_err(|e| match e {
            CatalogSourceError::Missing(arg) => SiteCmdError::Missing(arg),
            e => SiteCmdError::Pull(e),
        })?;
    let opts = SiteOptions {
        catalog_name: req
            .catalog_name
            .clone()
            .unwrap_or_else(|| default_catalog_name(Path::new(&req.catalog))),
        catalog_namespace: req.catalog_namespace.clone(),
        catalog_image: pulled.as_ref().map(|_| req.catalog.clone()),
    };
    let out = req.out.clone();
    let image_cache = pulled.as_ref().and_then(|p| p.cache.clone());
    tokio::task::spawn_blocking(move || {
        // The image's own cache, read in place: the catalog is neither parsed nor copied.
        if let Some(cache_dir) = image_cache
            && cache::is_fresh(&root, &cache_dir).unwrap_or(false)
        {
            tracing::info!(cache_dir = %cache_dir.display(), "rendering from the image's serve cache");
            return Ok(hub::write_site(&cache_dir, &out, &opts)?);
        }
        let scratch = crate::scratch::ScratchDir::new().map_err(SiteCmdError::TempDir)?;
        cache::build_cache_with(&root, scratch.path(), Durability::Scratch).map_err(|source| {
            SiteCmdError::Cache {
                catalog: root.shown_root(),
                source,
            }
        })?;
        Ok(hub::write_site(scratch.path(), &out, &opts)?)
    })
    .await?
}

/// Renders the catalog browser into a freshly built cache, as a catalog image serving
/// catalogd's API (and so the browser) carries it; `catalog_name` is the name it serves as.
pub fn bake(cache_dir: &Path, catalog_name: &str) -> Result<(), String> {
    hub::write_into_cache(cache_dir, &SiteOptions::named(catalog_name))
        .map(drop)
        .map_err(|e| format!("render the catalog browser: {e}"))
}

/// Whether the cache in `cache_dir` has current browser pages for `catalog_name`.
pub fn is_current(cache_dir: &Path, catalog_name: &str) -> bool {
    hub::is_current(cache_dir, &SiteOptions::named(catalog_name))
}

/// Makes sure the cache in `cache_dir` has the browser's pages for `catalog_name` (a cache
/// built by an older `olm`, or for another name, gets them now).
pub fn ensure(cache_dir: &Path, catalog_name: &str) -> Result<(), SiteError> {
    let opts = SiteOptions::named(catalog_name);
    if !hub::is_current(cache_dir, &opts) {
        hub::write_into_cache(cache_dir, &opts)?;
    }
    Ok(())
}
