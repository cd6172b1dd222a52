//! Catalogs built on the fly for `olm install --bundle` and `olm upgrade --bundle`: what
//! `operator-sdk run bundle` and `run bundle-upgrade` do, as a pushed catalog image instead of a
//! registry pod, so the CatalogSource is an ordinary `grpc` one with an `image`.
//!
//! Nothing here is new catalog machinery: the bundle image is pulled and unpacked by
//! [`crate::image::transfer`], rendered by [`crate::catalog::render`], the catalog is validated
//! by [`crate::catalog::validate`], written with the declcfg writer, and built and pushed as
//! `olm catalog build --push` does ([`crate::serve::image::CatalogImage`]). This module only
//! decides the catalog's content: one package with one channel for an install, the existing
//! catalog plus one channel entry for an upgrade.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use semver::Version;
use serde_json::Value;

use crate::bundle::load::{BundleDir, keys};
use crate::catalog::declcfg::{self, Bundle, Channel, ChannelEntry, DeclarativeConfig, Package};
use crate::catalog::diagnostic::Report;
use crate::catalog::model::Model;
use crate::catalog::render::{self, Form};
use crate::catalog::{load, validate};
use crate::confined::{RelPath, Tree};
use crate::image::reference::{ImageRef, Reference, is_valid_tag};
use crate::image::registry::RegistryOptions;
use crate::image::rootfs::BuildError;
use crate::image::transfer::{self, Stored, TransferError};
use crate::serve::image::{CONFIGS_LABEL, CatalogImage};

/// Why a one-bundle catalog could not be made or published. Registry errors come from the
/// image module, which never shows a secret.
#[derive(Debug, thiserror::Error)]
pub enum BundleCatalogError {
    #[error("--bundle {reference:?}: {message}")]
    BundleRef { reference: String, message: String },
    #[error("cannot pull bundle image {reference}: {source}")]
    PullBundle {
        reference: String,
        #[source]
        source: TransferError,
    },
    #[error(
        "{reference}: not a bundle image (no manifests/ and metadata/ directories in it); \
         build one with `olm bundle build`"
    )]
    NotABundle { reference: String },
    #[error("bundle image {reference}: {source}")]
    Render {
        reference: String,
        #[source]
        source: render::RenderError,
    },
    #[error("bundle image {reference}: {message}")]
    Bundle { reference: String, message: String },
    #[error(
        "bundle image {reference} (CSV {csv}) names no channel to put it in: \
         metadata/annotations.yaml has neither `{default_key}` nor a single channel in \
         `{channels_key}`; pass --channel",
        default_key = keys::DEFAULT_CHANNEL,
        channels_key = keys::CHANNELS
    )]
    NoChannel { reference: String, csv: String },
    #[error("cannot pull catalog image {reference}: {source}")]
    PullCatalog {
        reference: String,
        #[source]
        source: TransferError,
    },
    #[error(
        "{reference}: not a catalog image (no `{CONFIGS_LABEL}` label); olm upgrade --bundle \
         adds the bundle to the file-based catalog the CatalogSource serves"
    )]
    NotACatalog { reference: String },
    /// A label naming a path that could lead out of the image.
    #[error("catalog image {reference}: {error}")]
    Label {
        reference: String,
        error: transfer::LabelPathError,
    },
    #[error("catalog image {reference}: cannot load its catalog at {configs}: {source}")]
    LoadCatalog {
        reference: String,
        configs: String,
        #[source]
        source: load::LoadErrors,
    },
    #[error(
        "bundle image {reference} holds {csv} of package {bundle_package:?}, not of package \
         {package:?}"
    )]
    OtherPackage {
        reference: String,
        csv: String,
        bundle_package: String,
        package: String,
    },
    #[error("catalog image {reference} has no package {package:?}")]
    PackageMissing { reference: String, package: String },
    #[error(
        "catalog image {reference}: package {package:?} has no channel {channel:?} (channels: {})",
        .available.join(", ")
    )]
    ChannelMissing {
        reference: String,
        package: String,
        channel: String,
        available: Vec<String>,
    },
    #[error(
        "catalog image {reference}: the installed CSV {installed} is not in channel {channel:?} \
         of package {package:?}, so the new bundle cannot be chained to it"
    )]
    InstalledMissing {
        reference: String,
        package: String,
        channel: String,
        installed: String,
    },
    #[error(
        "channel {channel:?} of the catalog already moved past the installed CSV {installed} \
         (its head is {head}); run `olm upgrade {package}` to reach the head first, then \
         upgrade to the bundle"
    )]
    NotHead {
        package: String,
        channel: String,
        installed: String,
        head: String,
    },
    #[error(
        "{csv} (version {version}) is not newer than the installed {installed} (version \
         {installed_version}); build a bundle with a higher spec.version"
    )]
    NotNewer {
        csv: String,
        version: String,
        installed: String,
        installed_version: String,
    },
    #[error("{csv} is already in package {package:?} of catalog image {reference}")]
    AlreadyInCatalog {
        reference: String,
        package: String,
        csv: String,
    },
    #[error("the catalog for {what} does not validate:\n{report}")]
    Invalid { what: String, report: Report },
    #[error("--index-image {input:?}: {message}")]
    IndexRef { input: String, message: String },
    #[error("building the catalog image: {0}")]
    Build(#[source] BuildError),
    #[error("cannot push catalog image {reference}: {source}")]
    Push {
        reference: String,
        #[source]
        source: TransferError,
    },
    #[error(transparent)]
    Write(#[from] crate::atomic_write::WriteError),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

type Result<T, E = BundleCatalogError> = std::result::Result<T, E>;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> BundleCatalogError + '_ {
    move |source| BundleCatalogError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A bundle image pulled and rendered, with the facts a catalog entry needs from it.
#[derive(Debug, Clone)]
pub struct RenderedBundle {
    /// The reference it was pulled from; recorded as the bundle's `image`, so OLM's unpack job
    /// pulls the same image.
    pub reference: String,
    /// The `olm.bundle` blob (CSV metadata form, as `olm catalog render` writes by default).
    pub bundle: Bundle,
    pub package: String,
    /// The CSV name, which is the bundle name in the catalog.
    pub csv: String,
    pub version: Version,
    /// `operators.operatorframework.io.bundle.channel.default.v1`.
    pub default_channel: Option<String>,
    /// `operators.operatorframework.io.bundle.channels.v1`.
    pub channels: Vec<String>,
    /// The CSV's `spec.skips`, kept on the channel entry of an upgrade.
    pub skips: Vec<String>,
    /// The CSV's `olm.skipRange` annotation, kept on the channel entry of an upgrade.
    pub skip_range: Option<String>,
}

impl RenderedBundle {
    /// The channel to publish in: `explicit`, else the bundle's default channel, else its only
    /// channel.
    pub fn channel(&self, explicit: Option<&str>) -> Result<String> {
        if let Some(c) = explicit {
            return Ok(c.to_string());
        }
        if let Some(c) = &self.default_channel {
            return Ok(c.clone());
        }
        match self.channels.as_slice() {
            [one] => Ok(one.clone()),
            _ => Err(BundleCatalogError::NoChannel {
                reference: self.reference.clone(),
                csv: self.csv.clone(),
            }),
        }
    }
}

/// Checks that `reference` is a registry reference: the cluster pulls the bundle image itself
/// (OLM's unpack job), so a local OCI layout cannot be installed.
pub fn parse_bundle_ref(reference: &str) -> Result<Reference> {
    match ImageRef::parse(reference) {
        Ok(ImageRef::Registry(r)) => Ok(r),
        Ok(ImageRef::Layout { .. }) => Err(BundleCatalogError::BundleRef {
            reference: reference.to_string(),
            message: "an OCI layout cannot be installed: the cluster pulls the bundle image \
                      itself; push it first (`olm bundle build --push` or `olm image push`)"
                .into(),
        }),
        Err(e) => Err(BundleCatalogError::BundleRef {
            reference: reference.to_string(),
            message: e.to_string(),
        }),
    }
}

/// Pulls the bundle image `reference`, unpacks it into a temporary directory and renders it.
pub async fn pull_bundle(reference: &str, opts: &RegistryOptions) -> Result<RenderedBundle> {
    parse_bundle_ref(reference)?;
    let dir = crate::scratch::ScratchDir::new().map_err(io(&std::env::temp_dir()))?;
    let pulled = transfer::pull_to_dir(reference, dir.path(), opts)
        .await
        .map_err(|source| BundleCatalogError::PullBundle {
            reference: reference.to_string(),
            source,
        })?;
    let tree = pulled.tree().map_err(io(&pulled.rootfs))?;
    read_bundle(&tree, reference)
}

/// Renders an unpacked bundle (`root` holds `manifests/` and `metadata/`) as pulled from
/// `reference`.
pub fn read_bundle(root: &Tree, reference: &str) -> Result<RenderedBundle> {
    let is_dir = |d: &str| RelPath::parse(d).is_ok_and(|d| root.is_dir(&d));
    if !(is_dir("manifests") && is_dir("metadata")) {
        return Err(BundleCatalogError::NotABundle {
            reference: reference.to_string(),
        });
    }
    let bundle =
        render::render_bundle_tree(root, reference, Form::CsvMetadata).map_err(|source| {
            BundleCatalogError::Render {
                reference: reference.to_string(),
                source,
            }
        })?;
    let bad = |message: String| BundleCatalogError::Bundle {
        reference: reference.to_string(),
        message,
    };
    let dir = BundleDir::load_tree(root).map_err(|e| bad(e.to_string()))?;
    // render_bundle_dir succeeded, so opm's reading of the bundle finds its CSV (the version
    // may still be missing: a catalog entry needs one, checked below).
    let opm = crate::catalog::opm_bundle::read(&dir).map_err(bad)?;
    let csv = &opm.csv.object;
    let version_text = csv
        .pointer("/spec/version")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let version = Version::parse(version_text).map_err(|e| {
        bad(format!(
            "CSV {}: spec.version {version_text:?} is not a semantic version: {e}",
            bundle.name
        ))
    })?;
    let skips = csv
        .pointer("/spec/skips")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let skip_range = csv
        .pointer("/metadata/annotations/olm.skipRange")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let channels = dir
        .annotation(keys::CHANNELS)
        .map(|c| {
            c.split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let default_channel = dir
        .annotation(keys::DEFAULT_CHANNEL)
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_string);
    Ok(RenderedBundle {
        reference: reference.to_string(),
        package: bundle.package.clone(),
        csv: bundle.name.clone(),
        version,
        default_channel,
        channels,
        skips,
        skip_range,
        bundle,
    })
}

/// The catalog `operator-sdk run bundle` serves: the package (default channel = `channel`),
/// one channel holding one entry, and the bundle. The CSV's `replaces`/`skips` are left out:
/// nothing they name is in this catalog.
pub fn single_bundle_catalog(b: &RenderedBundle, channel: &str) -> Result<DeclarativeConfig> {
    let cfg = DeclarativeConfig {
        packages: vec![Package {
            schema: declcfg::SCHEMA_PACKAGE.into(),
            name: b.package.clone(),
            default_channel: channel.to_string(),
            ..Default::default()
        }],
        channels: vec![Channel {
            schema: declcfg::SCHEMA_CHANNEL.into(),
            name: channel.to_string(),
            package: b.package.clone(),
            entries: vec![ChannelEntry {
                name: b.csv.clone(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        bundles: vec![b.bundle.clone()],
        ..Default::default()
    };
    check(&cfg, &format!("bundle {}", b.csv))?;
    Ok(cfg)
}

/// Validates with the catalog validator; errors carry the whole report.
pub fn check(cfg: &DeclarativeConfig, what: &str) -> Result<Report> {
    let report = validate::validate(cfg);
    if report.has_errors() {
        return Err(BundleCatalogError::Invalid {
            what: what.to_string(),
            report,
        });
    }
    Ok(report)
}

/// Adds `b` to `channel` of its package in `cfg` (a catalog pulled from `reference`), replacing
/// the installed CSV, which must be the channel head: what `run bundle-upgrade` does. The new
/// entry keeps the CSV's own `skips` and `olm.skipRange`. Refuses a bundle of another package,
/// one already in the package, and one whose version is not above the installed one.
pub fn add_upgrade(
    cfg: &mut DeclarativeConfig,
    reference: &str,
    b: &RenderedBundle,
    package: &str,
    channel: &str,
    installed: &str,
) -> Result<()> {
    if b.package != package {
        return Err(BundleCatalogError::OtherPackage {
            reference: b.reference.clone(),
            csv: b.csv.clone(),
            bundle_package: b.package.clone(),
            package: package.to_string(),
        });
    }
    let (model, _) = Model::from_declcfg(cfg).map_err(|report| BundleCatalogError::Invalid {
        what: format!("catalog image {reference} as pulled"),
        report,
    })?;
    let pkg = model
        .package(package)
        .ok_or_else(|| BundleCatalogError::PackageMissing {
            reference: reference.to_string(),
            package: package.to_string(),
        })?;
    let ch = pkg
        .channel(channel)
        .ok_or_else(|| BundleCatalogError::ChannelMissing {
            reference: reference.to_string(),
            package: package.to_string(),
            channel: channel.to_string(),
            available: pkg.channels.keys().cloned().collect(),
        })?;
    if pkg.bundle(&b.csv).is_some() {
        return Err(BundleCatalogError::AlreadyInCatalog {
            reference: reference.to_string(),
            package: package.to_string(),
            csv: b.csv.clone(),
        });
    }
    let installed_bundle = match (ch.entry(installed), pkg.bundle(installed)) {
        (Some(_), Some(bundle)) => bundle,
        _ => {
            return Err(BundleCatalogError::InstalledMissing {
                reference: reference.to_string(),
                package: package.to_string(),
                channel: channel.to_string(),
                installed: installed.to_string(),
            });
        }
    };
    if ch.head().name != installed {
        return Err(BundleCatalogError::NotHead {
            package: package.to_string(),
            channel: channel.to_string(),
            installed: installed.to_string(),
            head: ch.head().name.clone(),
        });
    }
    if b.version <= installed_bundle.version {
        return Err(BundleCatalogError::NotNewer {
            csv: b.csv.clone(),
            version: b.version.to_string(),
            installed: installed.to_string(),
            installed_version: installed_bundle.version.to_string(),
        });
    }
    let entry = ChannelEntry {
        name: b.csv.clone(),
        replaces: installed.to_string(),
        skips: b
            .skips
            .iter()
            .filter(|s| s.as_str() != installed)
            .cloned()
            .collect(),
        skip_range: b.skip_range.clone().unwrap_or_default(),
    };
    // `Model::from_declcfg` found the channel, so the blob exists.
    if let Some(blob) = cfg
        .channels
        .iter_mut()
        .find(|c| c.package == package && c.name == channel)
    {
        blob.entries.push(entry);
    }
    cfg.bundles.push(b.bundle.clone());
    check(cfg, &format!("{reference} plus {}", b.csv))?;
    Ok(())
}

/// Where the catalog image goes: `explicit` as given (tagged with the CSV name when it has no
/// tag), else the bundle's repository with an `-index` suffix, tagged with the CSV name, e.g.
/// `quay.io/org/op-bundle:v1` -> `quay.io/org/op-bundle-index:op.v1.0.0`. A tag per CSV keeps
/// every published catalog addressable, and never moves a tag a running catalog pod uses.
pub fn index_reference(explicit: Option<&str>, bundle: &str, csv: &str) -> Result<Reference> {
    let tag = csv_tag(csv);
    match explicit {
        Some(text) => {
            let bad = |message: String| BundleCatalogError::IndexRef {
                input: text.to_string(),
                message,
            };
            let r = match ImageRef::parse(text) {
                Ok(ImageRef::Registry(r)) => r,
                Ok(ImageRef::Layout { .. }) => {
                    return Err(bad(
                        "must be a registry reference: the cluster pulls the catalog image".into(),
                    ));
                }
                Err(e) => return Err(bad(e.to_string())),
            };
            if r.digest().is_some() {
                return Err(bad(
                    "give a tag, not a digest: the catalog image is pushed there".into(),
                ));
            }
            if has_explicit_tag(text) {
                Ok(r)
            } else {
                Ok(Reference::with_tag(
                    r.registry().to_string(),
                    r.repository().to_string(),
                    tag,
                ))
            }
        }
        None => {
            let b = parse_bundle_ref(bundle)?;
            Ok(Reference::with_tag(
                b.registry().to_string(),
                format!("{}-index", b.repository()),
                tag,
            ))
        }
    }
}

/// True when the last path component of `text` carries `:tag` (a registry port does not count:
/// it sits before the first `/`).
fn has_explicit_tag(text: &str) -> bool {
    let plain = text.strip_prefix("docker://").unwrap_or(text);
    let name = plain.split('@').next().unwrap_or(plain);
    name.rsplit('/')
        .next()
        .is_some_and(|last| last.contains(':'))
}

/// A CSV name as a tag: CSV names are DNS subdomains, so usually valid already; anything else
/// becomes `-`, and the result is cut to the 128 characters a tag may have.
fn csv_tag(csv: &str) -> String {
    if is_valid_tag(csv) {
        return csv.to_string();
    }
    let mut tag: String = csv
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(128)
        .collect();
    if !tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
        tag.insert(0, '_');
        tag.truncate(128);
    }
    tag
}

/// How to build and push the catalog image (the choices of `olm catalog build`).
#[derive(Debug, Clone)]
pub struct CatalogBuild {
    /// The `olm` binary the image serves the catalog with (a Linux binary for the cluster's
    /// architecture).
    pub olm_binary: PathBuf,
    /// CA bundle to copy in; `None` for none.
    pub ca_bundle: Option<PathBuf>,
    /// Image creation time (SOURCE_DATE_EPOCH), for reproducible digests.
    pub created: u64,
    pub labels: BTreeMap<String, String>,
    pub registry: RegistryOptions,
}

impl CatalogBuild {
    /// What `olm catalog build` uses on this machine: the host's CA bundle when it has one,
    /// SOURCE_DATE_EPOCH, no extra labels.
    pub fn on_this_host(
        olm_binary: PathBuf,
        registry: RegistryOptions,
    ) -> Result<Self, crate::reproducible::EpochError> {
        let host_ca = PathBuf::from(crate::image::rootfs::HOST_CA_BUNDLE);
        Ok(CatalogBuild {
            olm_binary,
            // host: this machine's CA bundle
            ca_bundle: host_ca.is_file().then_some(host_ca),
            created: crate::reproducible::source_date_epoch()?,
            labels: BTreeMap::new(),
            registry,
        })
    }
}

/// A catalog image that was pushed.
#[derive(Debug, Clone)]
pub struct Published {
    /// The tag pushed to.
    pub tagged: String,
    /// `registry/repo@sha256:...`: what the CatalogSource points at, so OLM serves exactly
    /// this catalog and a new one always changes `spec.image`.
    pub pinned: String,
    pub digest: String,
    /// Bytes uploaded (0 when the registry had every blob).
    pub uploaded: u64,
}

/// Writes `cfg` as a catalog directory: `<dir>/<package>/catalog.json` per package (as opm's
/// `WriteFS` lays it out), blobs of no package in `<dir>/catalog.json`. A package name that is
/// not a plain file name (a pulled catalog is input) goes to `<dir>/catalog.json` as well, so
/// nothing is written outside `dir`.
pub fn write_catalog_dir(cfg: &DeclarativeConfig, dir: &Path) -> Result<()> {
    let mut files: BTreeMap<PathBuf, DeclarativeConfig> = BTreeMap::new();
    for (package, part) in cfg.clone().into_packages() {
        let path = if declcfg::is_plain_package_name(&package) {
            declcfg::package_file(dir, &package, "json")
        } else {
            dir.join("catalog.json")
        };
        files.entry(path).or_default().merge(part);
    }
    for (path, part) in files {
        crate::atomic_write::write_atomic(&path, part.to_json().as_bytes())?;
    }
    Ok(())
}

/// Builds the catalog image of `cfg` (as `olm catalog build` does) and pushes it to `dest`.
pub async fn publish(
    cfg: &DeclarativeConfig,
    dest: &Reference,
    build: &CatalogBuild,
) -> Result<Published> {
    let scratch = crate::scratch::ScratchDir::new().map_err(io(&std::env::temp_dir()))?;
    let configs = scratch.path().join("configs");
    write_catalog_dir(cfg, &configs)?;
    let image = CatalogImage {
        catalog_dir: configs,
        olm_binaries: vec![build.olm_binary.clone()],
        labels: build.labels.clone(),
        ca_bundle: build.ca_bundle.clone(),
        created: build.created,
        http_port: None,
        catalog_name: None,
        // gRPC only: no catalog browser.
        site: None,
    }
    .build()
    .map_err(BundleCatalogError::Build)?;
    let target = ImageRef::Registry(dest.clone());
    let stored: Stored = transfer::store(&target, &image, &build.registry)
        .await
        .map_err(|source| BundleCatalogError::Push {
            reference: dest.whole(),
            source,
        })?;
    Ok(Published {
        tagged: dest.whole(),
        pinned: stored.pinned,
        digest: stored.digest,
        uploaded: stored.push.map(|p| p.uploaded_bytes()).unwrap_or(0),
    })
}

/// Pulls a catalog image and loads the file-based catalog its configs label points at, blobs
/// as written (no re-rendering), so an upgrade changes nothing but the added entry.
pub async fn pull_catalog(reference: &str, opts: &RegistryOptions) -> Result<DeclarativeConfig> {
    let dir = crate::scratch::ScratchDir::new().map_err(io(&std::env::temp_dir()))?;
    let pulled = transfer::pull_to_dir(reference, dir.path(), opts)
        .await
        .map_err(|source| BundleCatalogError::PullCatalog {
            reference: reference.to_string(),
            source,
        })?;
    let Some(configs_path) = pulled.label_path(CONFIGS_LABEL) else {
        return Err(BundleCatalogError::NotACatalog {
            reference: reference.to_string(),
        });
    };
    let configs_path = configs_path.map_err(|error| BundleCatalogError::Label {
        reference: reference.to_string(),
        error,
    })?;
    let configs = &pulled.config.config.labels[CONFIGS_LABEL];
    let root = pulled.tree().map_err(io(&pulled.rootfs))?;
    let root = root.subtree(&configs_path);
    let mut cfg = load::load_tree(&root).map_err(|source| BundleCatalogError::LoadCatalog {
        reference: reference.to_string(),
        configs: configs.clone(),
        source,
    })?;
    // Sources point into the temporary directory, which is gone after this returns.
    cfg.clear_sources();
    Ok(cfg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_reference_defaults_to_the_bundle_repository_with_an_index_suffix() {
        let r = index_reference(None, "quay.io/org/op-bundle:v1.0.0", "op.v1.0.0").unwrap();
        assert_eq!(r.whole(), "quay.io/org/op-bundle-index:op.v1.0.0");
        let r = index_reference(None, "127.0.0.1:5000/op-bundle@sha256:0000000000000000000000000000000000000000000000000000000000000000", "op.v2").unwrap();
        assert_eq!(r.whole(), "127.0.0.1:5000/op-bundle-index:op.v2");
    }

    #[test]
    fn index_reference_keeps_an_explicit_tag_and_adds_one_otherwise() {
        let r = index_reference(Some("127.0.0.1:5000/cat:dev"), "x/y:z", "op.v1").unwrap();
        assert_eq!(r.whole(), "127.0.0.1:5000/cat:dev");
        let r = index_reference(Some("127.0.0.1:5000/cat"), "x/y:z", "op.v1").unwrap();
        assert_eq!(r.whole(), "127.0.0.1:5000/cat:op.v1");
        let e = index_reference(Some("oci:/tmp/x"), "x/y:z", "op.v1").unwrap_err();
        assert!(e.to_string().contains("registry reference"), "{e}");
        let e = index_reference(
            Some("r.io/c@sha256:0000000000000000000000000000000000000000000000000000000000000000"),
            "x/y:z",
            "op.v1",
        )
        .unwrap_err();
        assert!(e.to_string().contains("not a digest"), "{e}");
    }

    #[test]
    fn csv_names_become_valid_tags() {
        assert_eq!(csv_tag("op.v1.0.0"), "op.v1.0.0");
        assert_eq!(csv_tag("op.v1.0.0+build"), "op.v1.0.0-build");
        assert!(is_valid_tag(&csv_tag(&"x".repeat(300))));
        assert!(is_valid_tag(&csv_tag(".hidden")));
    }

    #[test]
    fn catalog_files_stay_inside_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = DeclarativeConfig {
            packages: vec![
                Package {
                    name: "good".into(),
                    ..Default::default()
                },
                Package {
                    name: "../escape".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let root = dir.path().join("configs");
        write_catalog_dir(&cfg, &root).unwrap();
        assert!(root.join("good/catalog.json").is_file());
        let rest = std::fs::read_to_string(root.join("catalog.json")).unwrap();
        assert!(rest.contains("../escape"), "{rest}");
        assert!(!dir.path().join("escape").exists());
    }

    #[test]
    fn a_layout_bundle_is_refused_with_the_reason() {
        let e = parse_bundle_ref("oci:/tmp/bundle:v1").unwrap_err();
        assert!(
            e.to_string().contains("the cluster pulls the bundle image"),
            "{e}"
        );
    }
}
