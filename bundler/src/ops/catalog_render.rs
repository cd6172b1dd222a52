//! `olm catalog render`: bundle directories, catalog directories and files, bundle and catalog
//! images, rendered to one declarative config as `opm render` does.

use std::path::Path;

use thiserror::Error;

use crate::catalog::declcfg::DeclarativeConfig;
use crate::catalog::render::{self, Form, MigrateLevel, RenderError};
use crate::catalog::sqlite::{self, SqliteError};
use crate::image::registry::RegistryOptions;
use crate::ops::catalog_source;
use crate::serve::image::CONFIGS_LABEL;

#[derive(Debug, Error)]
pub enum CatalogRenderError {
    /// The arguments do not fit together (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Sqlite(#[from] SqliteError),
    #[error(transparent)]
    Pull(#[from] crate::ops::catalog_source::CatalogSourceError),
    #[error("{reference}: rendering its catalog at {configs}")]
    CatalogImage {
        reference: String,
        configs: String,
        #[source]
        source: RenderError,
    },
    #[error(
        "{0}: neither a catalog image (no {CONFIGS_LABEL} label) nor a bundle image (no manifests/ and metadata/)"
    )]
    NotAnOlmImage(String),
    #[error(
        "{0}: a bundle, not a catalog (an sqlite index file or image, or a catalog directory or image)"
    )]
    NotACatalog(String),
}

/// What to render and how.
#[derive(Debug, Clone)]
pub struct RenderRequest {
    /// Bundle or catalog directories and files, and image references, rendered in order.
    pub refs: Vec<String>,
    /// The image to record for a single bundle directory (opm's `--image-ref-template`).
    pub image: Option<String>,
    /// Embed every manifest as `olm.bundle.object` (opm's default too; kept for scripts that
    /// pass it).
    pub bundle_objects: bool,
    pub migrate: MigrateLevel,
    pub registry: RegistryOptions,
    /// Refuse bundles, directories and images (opm's `migrate` takes catalogs only).
    pub catalogs_only: bool,
}

impl RenderRequest {
    /// The form a bundle is rendered in: opm 1.73 writes every manifest as an
    /// `olm.bundle.object`, bundle images included, unless the migration to
    /// `olm.csv.metadata` is asked for (which applies to bundles that have an image).
    fn bundle_form(&self, image: &str) -> Form {
        if self.bundle_objects || image.is_empty() || self.migrate == MigrateLevel::None {
            Form::BundleObjects
        } else {
            Form::CsvMetadata
        }
    }
}

fn is_bundle_dir(p: &Path) -> bool {
    p.join("manifests").is_dir() && p.join("metadata").is_dir()
}

/// Renders every reference of `req` into one config, migrated as asked.
pub async fn render(req: &RenderRequest) -> Result<DeclarativeConfig, CatalogRenderError> {
    if req.image.is_some() && req.refs.len() != 1 {
        let msg = "--image applies to a single bundle directory";
        return Err(CatalogRenderError::Usage(msg.into()));
    }
    let mut cfg = DeclarativeConfig::default();
    for r in &req.refs {
        let p = Path::new(r);
        if req.catalogs_only && is_bundle_dir(p) {
            return Err(CatalogRenderError::NotACatalog(r.clone()));
        }
        if let Some(image) = &req.image {
            if !is_bundle_dir(p) {
                let msg = format!("{r}: --image applies to a bundle directory");
                return Err(CatalogRenderError::Usage(msg));
            }
            let form = req.bundle_form(image);
            cfg.bundles.push(render::render_bundle_dir(p, image, form)?);
        } else if catalog_source::is_image_ref(r) {
            let form = (!req.catalogs_only).then(|| req.bundle_form(r));
            cfg.merge(render_image(r, form, &req.registry).await?);
        } else if sqlite::is_sqlite_file(p) {
            cfg.merge(sqlite::render_file(p)?);
        } else {
            cfg.merge(render::render_ref(r)?);
        }
    }
    render::migrate(&mut cfg, req.migrate);
    Ok(cfg)
}

/// Pulls a bundle or catalog image and renders it: a catalog image's FBC lives where its
/// configs label points; a bundle image is rendered with its reference recorded as the
/// bundle's `image`, as opm does, in `form` (`None`: bundles refused).
async fn render_image(
    reference: &str,
    form: Option<Form>,
    registry: &RegistryOptions,
) -> Result<DeclarativeConfig, CatalogRenderError> {
    // Kept until rendered: the image is unpacked in it.
    let image = catalog_source::pull(reference, registry).await?;
    // opm looks for an index database first.
    if let Some(found) = image.database_file(reference) {
        let (db, path) = found?;
        return Ok(sqlite::render_file_named(
            &db,
            &format!("{reference} {path}"),
        )?);
    }
    if let Some(root) = image.configs_dir(reference) {
        let root = root?;
        return render::render_ref(&root.to_string_lossy()).map_err(|source| {
            CatalogRenderError::CatalogImage {
                reference: reference.to_string(),
                // Where it is in the image, not in the temporary directory.
                configs: format!(
                    "/{}",
                    root.strip_prefix(&image.pulled.rootfs)
                        .unwrap_or(&root)
                        .display()
                ),
                source,
            }
        });
    }
    let pulled = &image.pulled;
    if is_bundle_dir(&pulled.rootfs) {
        let Some(form) = form else {
            return Err(CatalogRenderError::NotACatalog(reference.to_string()));
        };
        let mut cfg = DeclarativeConfig::default();
        cfg.bundles
            .push(render::render_bundle_dir(&pulled.rootfs, reference, form)?);
        return Ok(cfg);
    }
    Err(CatalogRenderError::NotAnOlmImage(reference.to_string()))
}
