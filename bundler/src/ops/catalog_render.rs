//! `olm catalog render`: bundle directories, catalog directories and files, bundle and catalog
//! images, rendered to one declarative config as `opm render` does, streamed: each blob is
//! written out as it is read (see [`crate::catalog::spill`]).

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::catalog::declcfg::{Bundle, DeclarativeConfig, TextFormat};
use crate::catalog::render::{self, Form, MigrateLevel, RenderError};
use crate::catalog::spill::Spill;
use crate::catalog::sqlite::{self, SqliteError};
use crate::confined::{RelPath, Tree};
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
        source: Box<RenderError>,
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
    is_bundle_tree(&Tree::host(p))
}

fn is_bundle_tree(tree: &Tree) -> bool {
    ["manifests", "metadata"]
        .iter()
        .all(|d| RelPath::parse(d).is_ok_and(|d| tree.is_dir(&d)))
}

/// One reference, read: what the streamed and the in-memory render each take.
enum Piece {
    Bundle(Bundle),
    /// An sqlite index, converted whole.
    Config(DeclarativeConfig),
    /// A local bundle or catalog directory or file (what it is, [`render`] decides).
    Local(PathBuf),
    /// A catalog directory of an image, read by the writer as it likes (confined to the
    /// image); `image` names the image it came from and where it is in it, for messages.
    Catalog {
        root: Tree,
        image: Option<(String, String)>,
    },
}

/// A [`Piece`] and the unpacked image it may live in (removed when dropped).
struct Read {
    piece: Piece,
    _image: Option<catalog_source::PulledImage>,
}

impl Read {
    fn of(piece: Piece) -> Self {
        Read {
            piece,
            _image: None,
        }
    }
}

fn check(req: &RenderRequest) -> Result<(), CatalogRenderError> {
    if req.image.is_some() && req.refs.len() != 1 {
        let msg = "--image applies to a single bundle directory";
        return Err(CatalogRenderError::Usage(msg.into()));
    }
    Ok(())
}

/// Reads reference `r` as `opm render` reads it.
async fn read(r: &str, req: &RenderRequest) -> Result<Read, CatalogRenderError> {
    let p = Path::new(r);
    if req.catalogs_only && is_bundle_dir(p) {
        return Err(CatalogRenderError::NotACatalog(r.to_string()));
    }
    if let Some(image) = &req.image {
        if !is_bundle_dir(p) {
            let msg = format!("{r}: --image applies to a bundle directory");
            return Err(CatalogRenderError::Usage(msg));
        }
        let form = req.bundle_form(image);
        return Ok(Read::of(Piece::Bundle(render::render_bundle_dir(
            p, image, form,
        )?)));
    }
    if catalog_source::is_image_ref(r) {
        let form = (!req.catalogs_only).then(|| req.bundle_form(r));
        return read_image(r, form, &req.registry).await;
    }
    if sqlite::is_sqlite_file(p) {
        return Ok(Read::of(Piece::Config(sqlite::render_file(p)?)));
    }
    Ok(Read::of(Piece::Local(p.to_path_buf())))
}

/// Pulls a bundle or catalog image: an index database, the FBC its configs label points at,
/// or a bundle rendered with its reference recorded as its `image`, as opm does, in `form`
/// (`None`: bundles refused).
async fn read_image(
    reference: &str,
    form: Option<Form>,
    registry: &RegistryOptions,
) -> Result<Read, CatalogRenderError> {
    let image = catalog_source::pull(reference, registry).await?;
    // opm looks for an index database first.
    if let Some(found) = image.database_file(reference) {
        let (db, path) = found?;
        let cfg = sqlite::render_open_file(&db, &format!("{reference} {path}"))?;
        return Ok(Read::of(Piece::Config(cfg)));
    }
    if let Some(root) = image.configs_dir(reference) {
        let (root, rel) = root?;
        // Where it is in the image, not in the temporary directory.
        let inside = format!("/{rel}");
        return Ok(Read {
            piece: Piece::Catalog {
                root,
                image: Some((reference.to_string(), inside)),
            },
            _image: Some(image),
        });
    }
    let tree = image.tree(reference)?;
    if is_bundle_tree(&tree) {
        let Some(form) = form else {
            return Err(CatalogRenderError::NotACatalog(reference.to_string()));
        };
        let b = render::render_bundle_tree(&tree, reference, form)?;
        return Ok(Read::of(Piece::Bundle(b)));
    }
    Err(CatalogRenderError::NotAnOlmImage(reference.to_string()))
}

/// A catalog of an image that does not render: named by the image and the path in it.
fn in_image(image: &Option<(String, String)>, source: RenderError) -> CatalogRenderError {
    match image {
        Some((reference, configs)) => CatalogRenderError::CatalogImage {
            reference: reference.clone(),
            configs: configs.clone(),
            source: Box::new(source),
        },
        None => CatalogRenderError::Render(source),
    }
}

/// Renders every reference of `req` as `opm render` writes it in `format`, migrated as asked:
/// each blob is written to the returned spill as soon as it is read, and
/// [`Spill::write_to`] writes them out in opm's order. Memory holds each blob's place, not
/// the catalog.
pub async fn render(req: &RenderRequest, format: TextFormat) -> Result<Spill, CatalogRenderError> {
    check(req)?;
    let spill = Spill::new(format).map_err(RenderError::Spill)?;
    let level = req.migrate;
    for (input, r) in (0u32..).zip(&req.refs) {
        match read(r, req).await?.piece {
            Piece::Bundle(b) => render::spill_bundle(b, &spill, input, level)?,
            Piece::Config(cfg) => render::spill_config(cfg, &spill, input, level)?,
            Piece::Local(path) => render::spill_ref(&path.to_string_lossy(), &spill, input, level)?,
            Piece::Catalog { root, image } => render::spill_catalog(&root, &spill, input, level)
                .map_err(|e| in_image(&image, e))?,
        }
    }
    Ok(spill)
}

/// [`render`] into one config in memory (for `olm catalog migrate`, which splits it by
/// package).
pub async fn render_config(req: &RenderRequest) -> Result<DeclarativeConfig, CatalogRenderError> {
    check(req)?;
    let mut cfg = DeclarativeConfig::default();
    for r in &req.refs {
        match read(r, req).await?.piece {
            Piece::Bundle(b) => cfg.bundles.push(b),
            Piece::Config(c) => cfg.merge(c),
            Piece::Local(path) => cfg.merge(render::render_ref(&path.to_string_lossy())?),
            Piece::Catalog { root, image } => {
                let c = render::render_tree(&root).map_err(|e| in_image(&image, e))?;
                cfg.merge(c);
            }
        }
    }
    render::migrate(&mut cfg, req.migrate);
    Ok(cfg)
}
