//! `olm catalog render`: bundle directories, catalog directories and files, bundle and catalog
//! images, rendered to one declarative config as `opm render` does, streamed: each blob is
//! written out as it is read (see [`crate::catalog::spill`]).

use std::path::Path;

use thiserror::Error;

use crate::catalog::declcfg::TextFormat;
use crate::catalog::render::{self, Form, MigrateLevel, RenderError};
use crate::catalog::spill::Spill;
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
}

/// What to render and how.
#[derive(Debug, Clone)]
pub struct RenderRequest {
    /// Bundle or catalog directories and files, and image references, rendered in order.
    pub refs: Vec<String>,
    /// The image to record for a single bundle directory (opm's `--image-ref-template`).
    pub image: Option<String>,
    /// Embed every manifest as `olm.bundle.object`, even for a bundle that has an image.
    pub bundle_objects: bool,
    pub migrate: MigrateLevel,
    pub registry: RegistryOptions,
}

impl RenderRequest {
    /// The form of a bundle rendered with image reference `image`.
    fn bundle_form(&self, image: &str) -> Form {
        if self.bundle_objects {
            Form::BundleObjects
        } else {
            render::opm_form(image)
        }
    }
}

fn is_bundle_dir(p: &Path) -> bool {
    p.join("manifests").is_dir() && p.join("metadata").is_dir()
}

/// Renders every reference of `req` as `opm render` writes it in `format`, migrated as asked:
/// each blob is written to the returned spill as soon as it is read, and
/// [`Spill::write_to`] writes them out in opm's order. Memory holds each blob's place, not
/// the catalog.
pub async fn render(req: &RenderRequest, format: TextFormat) -> Result<Spill, CatalogRenderError> {
    if req.image.is_some() && req.refs.len() != 1 {
        let msg = "--image applies to a single bundle directory";
        return Err(CatalogRenderError::Usage(msg.into()));
    }
    let spill = Spill::new(format).map_err(RenderError::Spill)?;
    let level = req.migrate;
    for (input, r) in (0u32..).zip(&req.refs) {
        let p = Path::new(r);
        if let Some(image) = &req.image {
            if !is_bundle_dir(p) {
                let msg = format!("{r}: --image applies to a bundle directory");
                return Err(CatalogRenderError::Usage(msg));
            }
            let form = req.bundle_form(image);
            let b = render::render_bundle_dir(p, image, form)?;
            render::spill_bundle(b, &spill, input, level)?;
        } else if catalog_source::is_image_ref(r) {
            render_image(r, req.bundle_form(r), &req.registry, &spill, input, level).await?;
        } else if req.bundle_objects && is_bundle_dir(p) {
            let b = render::render_bundle_dir(p, "", Form::BundleObjects)?;
            render::spill_bundle(b, &spill, input, level)?;
        } else {
            render::spill_ref(r, &spill, input, level)?;
        }
    }
    Ok(spill)
}

/// Pulls a bundle or catalog image and renders it into `spill`: a catalog image's FBC lives
/// where its configs label points; a bundle image is rendered with its reference recorded as
/// the bundle's `image`, as opm does.
async fn render_image(
    reference: &str,
    form: Form,
    registry: &RegistryOptions,
    spill: &Spill,
    input: u32,
    level: MigrateLevel,
) -> Result<(), CatalogRenderError> {
    // Kept until rendered: the image is unpacked in it.
    let image = catalog_source::pull(reference, registry).await?;
    if let Some(root) = image.configs_dir(reference) {
        let root = root?;
        return render::spill_catalog(&root, spill, input, level).map_err(|source| {
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
        let b = render::render_bundle_dir(&pulled.rootfs, reference, form)?;
        render::spill_bundle(b, spill, input, level)?;
        return Ok(());
    }
    Err(CatalogRenderError::NotAnOlmImage(reference.to_string()))
}
