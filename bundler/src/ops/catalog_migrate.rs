//! `olm catalog migrate`: a catalog (a legacy sqlite index file or image, or a file-based
//! catalog directory or image) written out as a catalog directory, one
//! `<package>/catalog.json` (or `.yaml`) per package, as `opm migrate` writes it.

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::atomic_write::{WriteError, write_atomic};
use crate::catalog::declcfg;
use crate::catalog::render::MigrateLevel;
use crate::image::registry::RegistryOptions;
use crate::ops::catalog_render::{self, CatalogRenderError, RenderRequest};

#[derive(Debug, Error)]
pub enum CatalogMigrateError {
    #[error("output dir {0} must be empty")]
    NotEmpty(String),
    #[error("{path}: cannot read the output directory: {source}")]
    Output {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Render(Box<CatalogRenderError>),
    #[error("invalid package name {0:?}: must be a single local path element")]
    PackageName(String),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// What to migrate, where to, and how.
#[derive(Debug, Clone)]
pub struct MigrateRequest {
    /// The catalog: an sqlite index file or image, a catalog directory or image.
    pub index: String,
    /// The directory to write; it must be empty or not exist.
    pub output_dir: PathBuf,
    /// YAML (`catalog.yaml`) instead of JSON (`catalog.json`).
    pub yaml: bool,
    pub migrate: MigrateLevel,
    pub registry: RegistryOptions,
}

/// Renders the catalog and writes it out; returns the files written, in order. Nothing is
/// written unless the whole catalog rendered and every package name is a plain directory name.
pub async fn migrate(req: &MigrateRequest) -> Result<Vec<PathBuf>, CatalogMigrateError> {
    ensure_empty(&req.output_dir)?;
    let cfg = catalog_render::render_config(&RenderRequest {
        refs: vec![req.index.clone()],
        image: None,
        bundle_objects: false,
        migrate: req.migrate,
        registry: req.registry.clone(),
        catalogs_only: true,
    })
    .await
    .map_err(|e| CatalogMigrateError::Render(Box::new(e)))?;
    let ext = if req.yaml { "yaml" } else { "json" };
    let mut files = Vec::new();
    for (package, part) in cfg.into_packages() {
        let path = if package.is_empty() {
            req.output_dir.join(format!("catalog.{ext}"))
        } else if declcfg::is_plain_package_name(&package) {
            declcfg::package_file(&req.output_dir, &package, ext)
        } else {
            return Err(CatalogMigrateError::PackageName(package));
        };
        files.push((path, part));
    }
    let mut written = Vec::with_capacity(files.len());
    for (path, part) in files {
        let mut text = Vec::new();
        part.write_as(&mut text, req.yaml)
            .expect("writing to memory cannot fail");
        write_atomic(&path, &text)?;
        written.push(path);
    }
    Ok(written)
}

/// opm refuses an output directory that holds anything.
fn ensure_empty(dir: &Path) -> Result<(), CatalogMigrateError> {
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_some()) {
        Ok(true) => Err(CatalogMigrateError::NotEmpty(dir.display().to_string())),
        Ok(false) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(CatalogMigrateError::Output {
            path: dir.display().to_string(),
            source,
        }),
    }
}
