//! The catalog image: the file-based catalog under `/configs`, the `olm` binary as
//! `/bin/olm` (with `/bin/grpc_health_probe` linking to it), and the label OLM reads to find
//! the catalog. Its entrypoint serves `/configs` on :50051.
//!
//! Given `olm` binaries for several platforms it is an index of one image per platform; the
//! catalog layer and the serve cache (built once, here) are the same blobs in each.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::image::layer::{LayerBuilder, Owner};
use crate::image::model::{Artifact, ImageIndex};
use crate::image::rootfs::{self, BinarySpec, BuildError};

/// The label pointing OLM and opm at the catalog inside the image.
pub const CONFIGS_LABEL: &str = "operators.operatorframework.io.index.configs.v1";
/// Where the catalog goes.
pub const CONFIGS_DIR: &str = "/configs";
/// The gRPC port `olm catalog serve` listens on (as `opm serve` does).
pub const GRPC_PORT: &str = "50051/tcp";
/// Where the pre-built serve cache lives in the image (opm's images use the same path).
pub const CACHE_DIR: &str = "/tmp/cache";
/// The name the image's server gives the catalog without `--catalog-name`: the last
/// component of [`CONFIGS_DIR`].
pub const DEFAULT_CATALOG_NAME: &str = "configs";

/// Everything that decides the catalog image's bytes.
#[derive(Debug, Clone)]
pub struct CatalogImage {
    /// The file-based catalog directory.
    pub catalog_dir: PathBuf,
    /// The `olm` binary to serve it with: one, or one per platform of a multi-platform image.
    pub olm_binaries: Vec<PathBuf>,
    /// Extra labels.
    pub labels: BTreeMap<String, String>,
    /// The CA bundle to copy in; `None` for none.
    pub ca_bundle: Option<PathBuf>,
    pub created: u64,
    /// Also serve catalogd's HTTP API on this port (`--http-port` in the entrypoint), under
    /// `catalog_name` (default: `configs`, the catalog directory's name in the image).
    pub http_port: Option<u16>,
    pub catalog_name: Option<String>,
    /// With `http_port`: renders the catalog browser into the pre-built cache (given the cache
    /// directory and the catalog's name), so the image serves it beside catalogd's API.
    pub site: Option<SiteHook>,
}

/// Renders pages into a freshly built cache directory for the named catalog (the layer
/// above `serve` provides it: the pages use the deploy builders).
pub type SiteHook = fn(&Path, &str) -> Result<(), String>;

fn has_catalog_files(dir: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.filter_map(Result::ok).any(|e| {
        let p = e.path();
        if p.is_dir() {
            has_catalog_files(&p)
        } else {
            matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("yaml" | "yml" | "json")
            )
        }
    })
}

impl CatalogImage {
    /// Builds the image (layers spooled to temporary files): one image, or an index of one
    /// per `olm` binary.
    pub fn build(&self) -> Result<Artifact, BuildError> {
        if !self.catalog_dir.is_dir() {
            return Err(BuildError::Input {
                path: self.catalog_dir.clone(),
                what: "not a directory (expected a file-based catalog)".into(),
            });
        }
        if !has_catalog_files(&self.catalog_dir) {
            return Err(BuildError::Input {
                path: self.catalog_dir.clone(),
                what: "holds no .yaml, .yml or .json files: not a file-based catalog".into(),
            });
        }
        // Checked now, not when the image's server starts in the cluster.
        if let Some(name) = &self.catalog_name
            && let Err(e) = crate::serve::index::catalogd_content::check_name(name)
        {
            return Err(BuildError::Input {
                path: self.catalog_dir.clone(),
                what: e.to_string(),
            });
        }
        if self.olm_binaries.is_empty() {
            return Err(BuildError::Input {
                path: self.catalog_dir.clone(),
                what: "no olm binary to serve the catalog with".into(),
            });
        }
        rootfs::distinct_platforms(&self.olm_binaries)?;
        let base = rootfs::base_layer(self.ca_bundle.as_deref(), self.created)?;
        let mut configs = LayerBuilder::new(self.created);
        configs.tree(&self.catalog_dir, CONFIGS_DIR, Owner::Root)?;
        let configs = configs.finish()?;
        // Pre-build the serve cache (what opm's `RUN serve --cache-only` step does): catalog
        // pods then start from it without parsing YAML, and an invalid catalog fails the build.
        let scratch = crate::scratch::ScratchDir::new().map_err(|source| BuildError::Read {
            path: std::env::temp_dir(),
            source,
        })?;
        let cache_dir = scratch.path().join("cache");
        crate::serve::index::cache::build_cache(
            &crate::confined::Tree::host(&self.catalog_dir),
            &cache_dir,
        )
        .map_err(|e| BuildError::Input {
            path: self.catalog_dir.clone(),
            what: format!("cannot build the serve cache: {e}"),
        })?;
        if let (Some(_), Some(site)) = (self.http_port, self.site) {
            let name = self.catalog_name.as_deref().unwrap_or(DEFAULT_CATALOG_NAME);
            site(&cache_dir, name).map_err(|what| BuildError::Input {
                path: self.catalog_dir.clone(),
                what,
            })?;
        }
        let mut cache = LayerBuilder::new(self.created);
        cache.tree(&cache_dir, CACHE_DIR, Owner::Root)?;
        let cache = cache.finish()?;
        let mut entrypoint: Vec<String> = [
            "/bin/olm",
            "catalog",
            "serve",
            CONFIGS_DIR,
            &format!("--cache-dir={CACHE_DIR}"),
        ]
        .map(String::from)
        .to_vec();
        if let Some(port) = self.http_port {
            entrypoint.push(format!("--http-port={port}"));
            if let Some(name) = &self.catalog_name {
                entrypoint.push(format!("--catalog-name={name}"));
            }
        }
        let images = self
            .olm_binaries
            .iter()
            .map(|olm| {
                let spec = BinarySpec {
                    binary: olm.clone(),
                    install_path: "/bin/olm".into(),
                    sysroot: PathBuf::from("/"),
                    library_path: Vec::new(),
                };
                let layers = rootfs::binary_layers(&spec, self.created, |b| {
                    b.symlink("bin/grpc_health_probe", "olm").map(|_| ())
                })?;
                let mut image =
                    rootfs::app_image(layers, base.clone(), self.created, "olm catalog build");
                if let Some(port) = self.http_port {
                    image = image.expose(format!("{port}/tcp"));
                }
                Ok(image
                    .layer(
                        configs.clone(),
                        "olm catalog build: file-based catalog at /configs",
                    )
                    .layer(
                        cache.clone(),
                        "olm catalog serve --cache-only: serve cache at /tmp/cache",
                    )
                    .entrypoint(entrypoint.clone())
                    .expose(GRPC_PORT)
                    .labels(self.labels.clone())
                    .label(CONFIGS_LABEL, CONFIGS_DIR)
                    .build())
            })
            .collect::<Result<Vec<_>, BuildError>>()?;
        match <[_; 1]>::try_from(images) {
            Ok([one]) => Ok(Artifact::Image(one)),
            Err(many) => Ok(Artifact::Index(ImageIndex::of(many)?)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalog_name_catalogd_would_refuse_fails_the_build() {
        let image = CatalogImage {
            catalog_dir: Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog"),
            olm_binaries: vec![PathBuf::from("/nonexistent/olm")],
            labels: Default::default(),
            ca_bundle: None,
            created: 0,
            http_port: Some(8080),
            catalog_name: Some("Not_A_Name".into()),
            site: None,
        };
        let Err(err) = image.build() else {
            panic!("a bad catalog name was accepted")
        };
        let err = err.to_string();
        assert!(
            err.contains("\"Not_A_Name\"") && err.contains("--catalog-name"),
            "{err}"
        );
    }
}
