//! The catalog browser: an OperatorHub-like site for any catalog. A grid of packages with
//! search and category filters, and per package a page with its description, channels,
//! versions, upgrade graph, owned CRDs with examples, related images and install snippets
//! for OLM v0, OLM v1 and `olm install`.
//!
//! The site is rendered once from a serve cache (its index, payload file and catalogd's
//! content) into plain files: [`write_into_cache`] puts them beside catalogd's content, where
//! `olm catalog serve --http-port` serves them from disk (`serve::runtime::ui`), so the server's
//! memory does not grow with the catalog; [`write_site`] writes the same files to a directory
//! for any static host (`olm catalog site`).
//!
//! - [`view`]: what a page shows, read from the cache.
//! - [`markdown`]: descriptions as sanitised HTML.
//! - [`snippets`]: install YAML from the deploy builders.
//! - [`page`]: the HTML.

pub mod markdown;
pub mod page;
pub mod snippets;
pub mod view;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::atomic_write::{WriteError, replace_dir};
use crate::catalog::declcfg::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Deprecation, DeprecationEntry, Package,
    PackageScopedReference, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE,
};
use crate::catalog::graph;
use crate::catalog::property::Property;
use crate::serve::index::cache::{self, CACHE_SUBDIR, CacheError};
use crate::serve::proto::cache as pb;
use crate::serve::runtime::catalogd_files::ContentFiles;
use crate::serve::runtime::store::StoreError;
use crate::serve::runtime::ui::{CSP_KEY, MARKER_FILE, SEARCH_FILE, UI_DIR};
use snippets::CatalogRef;
use view::{PackageBlob, PackageView};

/// Why the site could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("read the serve cache: {0}")]
    Cache(#[from] CacheError),
    #[error("read the serve cache: {0}")]
    Store(#[from] StoreError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{0}: exists and is not a site written by olm (no valid {MARKER_FILE}): choose an empty or new directory"
    )]
    NotOurs(PathBuf),
    #[error("{0}: exists and is not a directory: choose an empty or new directory")]
    NotADirectory(PathBuf),
}

/// What the pages say about where the catalog is: the names in the install snippets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SiteOptions {
    /// The catalog's name: page titles, the CatalogSource and ClusterCatalog names.
    pub catalog_name: String,
    /// The namespace of the CatalogSource the OLM v0 Subscription points at.
    pub catalog_namespace: String,
    /// The catalog image, when known.
    pub catalog_image: Option<String>,
}

impl SiteOptions {
    /// A site for catalog `name`, its CatalogSource in `olm` (where upstream OLM's catalogs
    /// live), its image unknown.
    pub fn named(name: &str) -> SiteOptions {
        SiteOptions {
            catalog_name: name.to_string(),
            catalog_namespace: "olm".into(),
            catalog_image: None,
        }
    }
}

/// What was written.
#[derive(Debug, Clone, Default)]
pub struct SiteStats {
    pub packages: usize,
    pub bytes: u64,
}

/// The marker's content: the format, the options the pages were made with, the digest of
/// the catalog the cache was built from and the pages' Content-Security-Policy (recorded so
/// pages made under another policy count as stale; the server sends the binary's own).
fn marker(opts: &SiteOptions, digest: &str) -> String {
    let mut v = serde_json::to_value(opts).unwrap_or_default();
    v["format"] = json!(FORMAT);
    v["digest"] = json!(digest);
    v[CSP_KEY] = json!(page::content_security_policy());
    format!("{v}\n")
}

/// Bumped when the pages change, so a cache's pages made by an older `olm` are remade.
const FORMAT: u32 = 1;

/// Whether the cache in `cache_dir` holds pages made with `opts` by this format, from the
/// catalog its index was built from.
pub fn is_current(cache_dir: &Path, opts: &SiteOptions) -> bool {
    let Some(digest) = cache::cached_digest(cache_dir) else {
        return false;
    };
    let path = cache_dir.join(CACHE_SUBDIR).join(UI_DIR).join(MARKER_FILE);
    std::fs::read_to_string(path).is_ok_and(|m| m == marker(opts, &digest))
}

/// Renders the pages of the cache in `cache_dir` into its `ui/` directory (replaced whole).
pub fn write_into_cache(cache_dir: &Path, opts: &SiteOptions) -> Result<SiteStats, SiteError> {
    let dir = cache_dir.join(CACHE_SUBDIR).join(UI_DIR);
    render(cache_dir, &dir, opts)
}

/// Renders the pages of the cache in `cache_dir` into `out` (replaced whole; an existing
/// `out` must be empty or a site written before).
pub fn write_site(
    cache_dir: &Path,
    out: &Path,
    opts: &SiteOptions,
) -> Result<SiteStats, SiteError> {
    let ours = |dir: &Path| {
        let marker = std::fs::read(dir.join(MARKER_FILE)).unwrap_or_default();
        serde_json::from_slice::<serde_json::Value>(&marker).is_ok_and(|m| {
            m.get("format").is_some_and(serde_json::Value::is_u64)
                && m.get("catalogName")
                    .is_some_and(serde_json::Value::is_string)
        })
    };
    // A file, a link or anything else in the way is the user's: never renamed away.
    match std::fs::symlink_metadata(out) {
        Ok(m) if !m.is_dir() => return Err(SiteError::NotADirectory(out.to_path_buf())),
        Ok(_) => {
            let empty = std::fs::read_dir(out).is_ok_and(|mut rd| rd.next().is_none());
            if !empty && !ours(out) {
                return Err(SiteError::NotOurs(out.to_path_buf()));
            }
        }
        Err(_) => {}
    }
    render(cache_dir, out, opts)
}

fn render(cache_dir: &Path, out: &Path, opts: &SiteOptions) -> Result<SiteStats, SiteError> {
    let (store, stats) = cache::open_checked(cache_dir, false)?;
    let blobs = package_blobs(&cache::content_dir(cache_dir));
    let catalog = CatalogRef {
        name: opts.catalog_name.clone(),
        namespace: opts.catalog_namespace.clone(),
        image: opts.catalog_image.clone(),
    };
    replace_dir(out, |tmp: &Path| -> Result<SiteStats, SiteError> {
        let io = |path: PathBuf| move |source| SiteError::Io { path, source };
        let pages = tmp.join("packages");
        std::fs::create_dir_all(&pages).map_err(io(pages.clone()))?;
        let mut cards = Vec::new();
        let mut bytes = 0u64;
        // A slice of packages at a time on all cores: only their pages are held at once.
        for slice in store.packages().chunks(32) {
            let rendered = crate::parallel::map(slice, |p| -> Result<_, StoreError> {
                let blob = blobs.get(&p.name).cloned().unwrap_or_default();
                let view = view::package_view(&store, p, &blob)?;
                let html = page::package(
                    &opts.catalog_name,
                    &view,
                    &graph_svg(p),
                    &snippets::snippets(&view, &catalog),
                );
                Ok((card(view), html))
            });
            for r in rendered {
                let (card, html) = r?;
                let path = pages.join(format!("{}.html", page::page_file(&card.name)));
                std::fs::write(&path, &html).map_err(io(path.clone()))?;
                bytes += html.len() as u64;
                cards.push(card);
            }
        }
        let grid = page::grid(&opts.catalog_name, &cards);
        let search = search_index(&cards);
        for (name, text) in [
            ("index.html", grid),
            (SEARCH_FILE, search),
            (MARKER_FILE, marker(opts, &stats.digest)),
        ] {
            let path = tmp.join(name);
            std::fs::write(&path, &text).map_err(io(path.clone()))?;
            bytes += text.len() as u64;
        }
        Ok(SiteStats {
            packages: cards.len(),
            bytes,
        })
    })
}

/// A view with only what a grid card and the search index need.
fn card(mut v: PackageView) -> PackageView {
    v.description = String::new();
    v.versions = Vec::new();
    v.crds = Vec::new();
    v.head_objects = Vec::new();
    v.related_images = Vec::new();
    v
}

/// `search.json`: one entry per package, for clients that search without the grid page.
fn search_index(cards: &[PackageView]) -> String {
    let entries: Vec<_> = cards
        .iter()
        .map(|v| {
            json!({
                "name": v.name,
                "displayName": v.display_name,
                "provider": v.provider,
                "description": v.short_description,
                "categories": v.categories,
                "keywords": v.keywords,
                "capability": v.capability,
                "version": v.head_version,
                "defaultChannel": v.default_channel,
                "page": format!("packages/{}.html", page::page_file(&v.name)),
            })
        })
        .collect();
    format!("{}\n", serde_json::Value::from(entries))
}

/// Every package's `olm.package` blob from catalogd's content; none when the cache has no
/// content (the pages then lack icons and package descriptions, nothing else).
fn package_blobs(content: &Path) -> std::collections::HashMap<String, PackageBlob> {
    let mut out = std::collections::HashMap::new();
    let read = ContentFiles::open(content).and_then(|files| {
        let spans = files.select(|m| m.schema == "olm.package")?;
        files.read(&spans)
    });
    match read {
        Ok(body) => {
            for line in body.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                if let Ok(blob) = serde_json::from_slice::<PackageBlob>(line) {
                    out.insert(blob.name.clone(), blob);
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "catalog browser: no package icons or descriptions"),
    }
    out
}

/// The upgrade graph of package `p` as SVG, drawn by `catalog::graph` from the index (its
/// declarative config made directly from the index's package).
fn graph_svg(p: &pb::Package) -> String {
    match graph::build(
        &graph_config(p),
        &graph::Options {
            package: Some(p.name.clone()),
            ..Default::default()
        },
    ) {
        Ok(g) => graph::svg(&g),
        Err(e) => format!(
            "<p class=\"note\">{}</p>",
            page::esc(&format!("no graph: {e}"))
        ),
    }
}

/// The package, channels, bundles and deprecations of `p` as a declarative config: what
/// the graph reads of them.
fn graph_config(p: &pb::Package) -> DeclarativeConfig {
    let bundle_name = |i: u32| {
        p.bundles
            .get(i as usize)
            .and_then(|b| b.base.as_ref())
            .map(|b| b.csv_name.clone())
            .unwrap_or_default()
    };
    let reference = |schema: &str, name: &str, message: &str| DeprecationEntry {
        reference: PackageScopedReference {
            schema: schema.into(),
            name: name.into(),
        },
        message: message.into(),
    };
    let mut entries = Vec::new();
    if let Some(d) = &p.deprecation {
        entries.push(reference(SCHEMA_PACKAGE, "", &d.message));
    }
    let channels = p
        .channels
        .iter()
        .map(|c| {
            if let Some(d) = &c.deprecation {
                entries.push(reference(SCHEMA_CHANNEL, &c.name, &d.message));
            }
            Channel {
                schema: SCHEMA_CHANNEL.into(),
                name: c.name.clone(),
                package: p.name.clone(),
                entries: c
                    .entries
                    .iter()
                    .map(|e| ChannelEntry {
                        name: bundle_name(e.bundle),
                        replaces: e.replaces.clone(),
                        skips: e.skips.clone(),
                        skip_range: e.skip_range.clone(),
                    })
                    .collect(),
                ..Default::default()
            }
        })
        .collect();
    let bundles = p
        .bundles
        .iter()
        .filter_map(|b| b.base.as_ref())
        .map(|b| {
            if let Some(d) = &b.deprecation {
                entries.push(reference(SCHEMA_BUNDLE, &b.csv_name, &d.message));
            }
            Bundle {
                schema: SCHEMA_BUNDLE.into(),
                name: b.csv_name.clone(),
                package: p.name.clone(),
                image: b.bundle_path.clone(),
                properties: vec![Property::package(&p.name, &b.version)],
                ..Default::default()
            }
        })
        .collect();
    let deprecations = match entries.is_empty() {
        true => Vec::new(),
        false => vec![Deprecation {
            schema: SCHEMA_DEPRECATIONS.into(),
            package: p.name.clone(),
            entries,
            ..Default::default()
        }],
    };
    DeclarativeConfig {
        packages: vec![Package {
            schema: SCHEMA_PACKAGE.into(),
            name: p.name.clone(),
            default_channel: p.default_channel.clone(),
            ..Default::default()
        }],
        channels,
        bundles,
        deprecations,
        others: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::proto::api;

    /// The graph is drawn from the index's package: its bundles, edges and deprecations.
    #[test]
    fn graph_is_drawn_from_the_index() {
        let bundle = |name: &str, version: &str, deprecated: bool| pb::Bundle {
            base: Some(api::Bundle {
                csv_name: name.into(),
                version: version.into(),
                bundle_path: format!("example.com/b:{version}"),
                deprecation: deprecated.then(|| api::Deprecation {
                    message: "old".into(),
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut p = pb::Package {
            name: "demo".into(),
            default_channel: "stable".into(),
            bundles: vec![
                bundle("demo.v1", "1.0.0", true),
                bundle("demo.v2", "2.0.0", false),
            ],
            channels: vec![pb::Channel {
                name: "stable".into(),
                head: 1,
                entries: vec![
                    pb::Entry {
                        bundle: 0,
                        ..Default::default()
                    },
                    pb::Entry {
                        bundle: 1,
                        replaces: "demo.v1".into(),
                        ..Default::default()
                    },
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let cfg = graph_config(&p);
        assert_eq!(cfg.deprecations[0].entries[0].reference.name, "demo.v1");
        let svg = graph_svg(&p);
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.contains("demo.v1") && svg.contains("demo.v2"), "{svg}");
        // A bundle the graph cannot place is said, not drawn.
        p.bundles[1].base.as_mut().unwrap().version = "not-semver".into();
        assert!(graph_svg(&p).starts_with("<p class=\"note\">no graph: "));
    }

    /// `-o` never replaces what is not a site: a file, a link, or a directory whose
    /// `site.json` is not ours. Refused before the cache is read, so none is needed here.
    #[test]
    fn write_site_refuses_what_is_not_a_site() {
        let tmp = tempfile::tempdir().unwrap();
        let (cache, opts) = (tmp.path().join("no-cache"), SiteOptions::named("c"));
        let file = tmp.path().join("notes.txt");
        std::fs::write(&file, "mine").unwrap();
        let err = write_site(&cache, &file, &opts).unwrap_err();
        assert!(matches!(err, SiteError::NotADirectory(_)), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");

        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path(), &link).unwrap();
        let err = write_site(&cache, &link, &opts).unwrap_err();
        assert!(matches!(err, SiteError::NotADirectory(_)), "{err}");

        let dir = tmp.path().join("dir");
        std::fs::create_dir(&dir).unwrap();
        for marker in [
            "",
            "{}",
            "not json",
            r#"{"format":1}"#,
            r#"{"catalogName":"x"}"#,
        ] {
            std::fs::write(dir.join(MARKER_FILE), marker).unwrap();
            let err = write_site(&cache, &dir, &opts).unwrap_err();
            assert!(matches!(err, SiteError::NotOurs(_)), "{marker}: {err}");
            assert!(dir.join(MARKER_FILE).is_file());
        }
        // Ours: refused no more (it fails on the missing cache instead).
        std::fs::write(dir.join(MARKER_FILE), r#"{"format":1,"catalogName":"x"}"#).unwrap();
        let err = write_site(&cache, &dir, &opts).unwrap_err();
        assert!(matches!(err, SiteError::Cache(_)), "{err}");
    }
}
