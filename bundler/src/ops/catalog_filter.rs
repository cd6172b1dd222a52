//! `olm catalog filter SOURCE -o DIR`: read a catalog (a directory or an image), keep what
//! the selection names ([`catalog::filter`](crate::catalog::filter)), and write the result as
//! a catalog directory in one piece.
//!
//! The selection comes from the filter flags or from an oc-mirror ImageSetConfiguration, whose
//! `mirror.operators[]` entry for SOURCE applies (the only entry, when there is one). `-o DIR`
//! is replaced as a whole, and only when it is new, empty, or a catalog directory (nothing
//! but `catalog.json`/`catalog.yaml` files, at the top or one directory down): pointing it at
//! a directory of other files by mistake cannot delete them.

use std::path::{Path, PathBuf};

use crate::catalog::declcfg::DeclarativeConfig;
use crate::catalog::filter::isc::{CatalogSelection, ImageSetConfig, IscError};
use crate::catalog::filter::{self, FilterError, FilterFlags, FilterSpec, SpecError, UnknownNames};
use crate::catalog::load::{self, LoadErrors};
use crate::catalog::write_fs::{self, Format, WriteFsError};
use crate::confined::Tree;
use crate::image::registry::RegistryOptions;
use crate::ops::catalog_source::{self, CatalogSourceError};

/// Where the selection comes from.
#[derive(Debug, Clone)]
pub enum Selection {
    /// Built from the flags ([`FilterSpec::from_flags`]).
    Spec(FilterSpec),
    /// An ImageSetConfiguration file. Its packages and channels the catalog does not have are
    /// left out with a warning, as oc-mirror leaves them out, or with `strict`, an error.
    Config { file: PathBuf, strict: bool },
}

impl Selection {
    /// An ImageSetConfiguration when one is named, else the flags' selection.
    pub fn new(
        config: Option<PathBuf>,
        strict: bool,
        flags: &FilterFlags,
    ) -> Result<Selection, SpecError> {
        match config {
            Some(file) => Ok(Selection::Config { file, strict }),
            None => FilterSpec::from_flags(flags).map(Selection::Spec),
        }
    }
}

#[derive(Debug, Clone)]
pub struct FilterRequest {
    /// A catalog directory or file, or a catalog image (`oci:<dir>[:tag]` or a reference).
    pub source: String,
    pub output: PathBuf,
    pub format: Format,
    pub selection: Selection,
    pub registry: RegistryOptions,
}

/// What the filtered catalog holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterOutcome {
    pub packages: usize,
    pub channels: usize,
    pub bundles: usize,
    /// The files written, relative to the output directory.
    pub files: Vec<PathBuf>,
}

impl FilterOutcome {
    /// One line for the terminal.
    pub fn summary(&self, output: &Path) -> String {
        format!(
            "{}: {} package(s), {} channel(s), {} bundle(s) in {} file(s)\n",
            output.display(),
            self.packages,
            self.channels,
            self.bundles,
            self.files.len()
        )
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogFilterError {
    #[error(transparent)]
    Config(#[from] IscError),
    #[error(
        "{}: no mirror.operators[] entry is for {catalog} (catalogs: {catalogs}); name one of them as the source",
        file.display()
    )]
    NoEntry {
        file: PathBuf,
        catalog: String,
        catalogs: String,
    },
    #[error("{}: no mirror.operators[] entry to filter with", file.display())]
    NoCatalogs { file: PathBuf },
    #[error(
        "{}: holds {}, which is not a catalog file; -o replaces the whole directory, so name a new or empty one",
        dir.display(), found.display()
    )]
    NotACatalogDir { dir: PathBuf, found: PathBuf },
    #[error(transparent)]
    Source(#[from] CatalogSourceError),
    #[error(transparent)]
    Load(#[from] LoadErrors),
    /// The filter refused: the catalog, and why (one message, not a chain of two).
    #[error("{catalog}: {error}")]
    Filter { catalog: String, error: FilterError },
    #[error(transparent)]
    Write(#[from] WriteFsError),
}

/// The `mirror.operators[]` entries of `isc` (read from `file`) that apply to `source`: those
/// naming it, else the only entry when there is one (with a warning); every entry when no
/// source is named. With `strict`, their selections refuse names the catalog does not have
/// instead of leaving them out with a warning.
pub fn entries(
    isc: &ImageSetConfig,
    file: &Path,
    source: Option<&str>,
    strict: bool,
) -> Result<Vec<CatalogSelection>, CatalogFilterError> {
    let found = applying(isc, file, source)?;
    Ok(found
        .into_iter()
        .map(|e| {
            let mut e = e.clone();
            if strict {
                e.spec = e.spec.with_unknown_names(UnknownNames::Refuse);
            }
            e
        })
        .collect())
}

fn applying<'a>(
    isc: &'a ImageSetConfig,
    file: &Path,
    source: Option<&str>,
) -> Result<Vec<&'a CatalogSelection>, CatalogFilterError> {
    if isc.catalogs.is_empty() {
        return Err(CatalogFilterError::NoCatalogs {
            file: file.to_path_buf(),
        });
    }
    let Some(source) = source else {
        return Ok(isc.catalogs.iter().collect());
    };
    let named: Vec<_> = isc.catalogs.iter().filter(|c| c.names(source)).collect();
    match (named.is_empty(), isc.catalogs.as_slice()) {
        (false, _) => Ok(named),
        (true, [only]) => {
            tracing::warn!(
                "{}: using the entry for {} with {source}",
                file.display(),
                only.catalog
            );
            Ok(vec![only])
        }
        (true, many) => Err(CatalogFilterError::NoEntry {
            file: file.to_path_buf(),
            catalog: source.to_string(),
            catalogs: many
                .iter()
                .map(|c| c.catalog.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// Reads an ImageSetConfiguration, warning of the fields `what` (a command) does not act on.
pub fn load_config(file: &Path, what: &str) -> Result<ImageSetConfig, CatalogFilterError> {
    let isc = ImageSetConfig::load(file)?;
    for field in &isc.ignored {
        tracing::warn!(
            "{}: {field} is accepted as oc-mirror accepts it, but {what} does not act on it",
            file.display()
        );
    }
    Ok(isc)
}

/// The selection `config` holds for `source`: its entry for that catalog, or its only entry
/// (see [`entries`] for `strict`). Fields it accepts without acting on them are logged as
/// warnings.
pub fn spec_from_config(
    config: &Path,
    source: &str,
    strict: bool,
) -> Result<FilterSpec, CatalogFilterError> {
    let isc = load_config(config, "a catalog filter")?;
    if !isc.blocked_images.is_empty() {
        tracing::warn!(
            "{}: mirror.blockedImages applies when images are mirrored, not to a catalog filter",
            config.display()
        );
    }
    let mut found = entries(&isc, config, Some(source), strict)?;
    Ok(found.swap_remove(0).spec)
}

/// Filters the catalog `req` names and writes it to `req.output`.
pub async fn filter_catalog(req: &FilterRequest) -> Result<FilterOutcome, CatalogFilterError> {
    let spec = match &req.selection {
        Selection::Spec(s) => s.clone(),
        Selection::Config { file, strict } => spec_from_config(file, &req.source, *strict)?,
    };
    check_output_dir(&req.output)?;
    let cfg = read_catalog(&req.source, &req.registry, Some(&spec)).await?;
    let filtered =
        filter_warning(cfg, &spec, &req.source).map_err(|error| CatalogFilterError::Filter {
            catalog: req.source.clone(),
            error,
        })?;
    write(filtered, &req.output, req.format)
}

/// [`filter::filter`], each warning logged with the catalog's name.
pub fn filter_warning(
    cfg: DeclarativeConfig,
    spec: &FilterSpec,
    catalog: &str,
) -> Result<DeclarativeConfig, FilterError> {
    filter::filter_reporting(cfg, spec, &mut |w| tracing::warn!("{catalog}: {w}"))
}

/// The catalog `source` names: a directory or file, or an image pulled to a temporary place.
/// With `spec`, what its filter would drop is dropped as each file is read
/// ([`filter::prune_unselected`]).
pub async fn read_catalog(
    source: &str,
    registry: &RegistryOptions,
    spec: Option<&FilterSpec>,
) -> Result<DeclarativeConfig, CatalogFilterError> {
    let load = |tree: &Tree| {
        let prune = |_: &[u8], cfg: &mut DeclarativeConfig| {
            if let Some(spec) = spec {
                filter::prune_unselected(cfg, spec);
            }
        };
        load::load_tree_with(tree, load::Keep::All, prune).map(|(cfg, _)| cfg)
    };
    if catalog_source::is_image_ref(source) {
        let pulled = catalog_source::pull_catalog(source, registry).await?;
        return Ok(load(&pulled.configs)?);
    }
    Ok(load(&Tree::host(Path::new(source)))?)
}

/// Writes `cfg` as a catalog directory at `dir`, replacing it in one rename.
pub fn write(
    cfg: DeclarativeConfig,
    dir: &Path,
    format: Format,
) -> Result<FilterOutcome, CatalogFilterError> {
    let (packages, channels, bundles) = (cfg.packages.len(), cfg.channels.len(), cfg.bundles.len());
    let files = crate::atomic_write::replace_dir(dir, |tmp| write_fs::write_fs(cfg, tmp, format))?;
    Ok(FilterOutcome {
        packages,
        channels,
        bundles,
        files,
    })
}

/// `dir` may be replaced: it is missing, empty, or holds only catalog files.
pub fn check_output_dir(dir: &Path) -> Result<(), CatalogFilterError> {
    let not_catalog = |found: PathBuf| CatalogFilterError::NotACatalogDir {
        dir: dir.to_path_buf(),
        found,
    };
    let is_catalog_file = |p: &Path| {
        p.is_file()
            && p.file_name()
                .is_some_and(|n| n == "catalog.json" || n == "catalog.yaml")
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return match dir.exists() {
            true => Err(not_catalog(dir.to_path_buf())),
            false => Ok(()),
        };
    };
    for e in entries.flatten() {
        let p = e.path();
        if is_catalog_file(&p) {
            continue;
        }
        if !p.is_dir() || p.is_symlink() {
            return Err(not_catalog(p));
        }
        for inner in std::fs::read_dir(&p)
            .map_err(|_| not_catalog(p.clone()))?
            .flatten()
        {
            if !is_catalog_file(&inner.path()) || inner.path().is_symlink() {
                return Err(not_catalog(inner.path()));
            }
        }
    }
    Ok(())
}
