//! The release config file. Paths inside it are relative to the file's directory, so the
//! file at the repository root can name `operator/olm/bundle.yaml` and `target/...`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::grammar::image_ref;
use crate::yaml::{self, YamlError};

/// Where the operator's manifests come from: a command printing a YAML stream, or a directory.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ManifestsSource {
    /// Program and arguments (run from the config file's directory; no shell).
    #[serde(default)]
    pub command: Vec<String>,
    /// A directory of YAML files.
    pub dir: Option<PathBuf>,
}

/// The image repositories (without tag or digest) the release publishes to.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Repositories {
    pub operator: String,
    pub bundle: String,
    pub catalog: String,
}

/// `catalog-channel-generation`.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ChannelGeneration {
    /// `<archetype>-v<major>`: one channel per major version, so minor upgrades stay in it.
    #[default]
    Major,
    /// `<archetype>-v<major>.<minor>`.
    Minor,
    Both,
}

impl ChannelGeneration {
    /// The name as written in release.yaml.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelGeneration::Major => "major",
            ChannelGeneration::Minor => "minor",
            ChannelGeneration::Both => "both",
        }
    }
}

/// `catalog-form`.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum CatalogForm {
    /// `olm.bundle.object` properties: GetBundle serves the whole CSV, install strategy
    /// included, which every OLM version reads.
    #[default]
    BundleObjects,
    /// One `olm.csv.metadata` property per bundle.
    CsvMetadata,
}

/// The deploy/ tree settings (the OLM objects, and the plain install).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct DeploySettings {
    pub output: PathBuf,
    pub namespace: Option<String>,
    /// Subscription channel; default: the catalog's default channel for the package.
    pub channel: Option<String>,
    pub display_name: Option<String>,
    pub publisher: Option<String>,
    /// The operator's manifests for the plain install (with its Namespace).
    pub manifests: Option<ManifestsSource>,
    /// Also write `<output>/olmv1`: OLM v1's ClusterCatalog and ClusterExtension, and the
    /// installer ServiceAccount's RBAC derived from the released bundle.
    #[serde(default)]
    pub olmv1: bool,
}

/// `release.yaml`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ReleaseConfig {
    /// The `olm bundle generate --config` file: CSV base, package, version, channels,
    /// replaces, skip-range, output directory.
    pub bundle_config: PathBuf,
    pub manifests: ManifestsSource,
    /// The release build of the operator, packaged into the operator image.
    pub operator_binary: PathBuf,
    /// Builds of the same operator for other platforms (cross-compiled), one per platform:
    /// the operator image becomes an index of one image per binary, platforms read from the
    /// ELF headers.
    #[serde(default)]
    pub operator_binaries: Vec<PathBuf>,
    /// `olm` builds for other platforms: the catalog image becomes an index of one image per
    /// platform (this machine's `olm` serves the first).
    #[serde(default)]
    pub catalog_olm_binaries: Vec<PathBuf>,
    /// The command that builds `operator-binary`, named in the error when it is missing.
    pub operator_build: Option<String>,
    pub images: Repositories,
    /// Replace the operator image in the manifests by `<images.operator>@<digest>` of the
    /// image just built, so the CSV runs exactly what was released. Off keeps the manifests'
    /// own reference (a tag), which keeps bundle/ independent of the binary's bytes.
    #[serde(default)]
    pub pin_operator_image: bool,
    /// Where the pin is recorded (written together with bundle/). It makes the pin an input
    /// of bundle/, the way operator-sdk's `make bundle` records the image in a kustomization:
    /// bundle/ can be re-derived without the binary, and a re-run of a released version keeps
    /// the image it was released with. Needs `pin-operator-image: true`.
    pub pinned_operator_image: Option<PathBuf>,
    /// Where the released catalog image is recorded, with the digest of the catalog it
    /// serves. The catalog image carries this machine's `olm` binary and CA bundle, so another
    /// machine builds another digest from the same catalog: while the catalog is unchanged,
    /// a release without a registry keeps the recorded image in deploy/ (a fresh clone's
    /// release leaves the tree as it was); a changed catalog records the new image.
    pub pinned_catalog_image: Option<PathBuf>,
    /// Catalog channels (semver archetypes candidate, fast, stable); default: the bundle's.
    #[serde(default)]
    pub catalog_channels: Vec<String>,
    /// Which channels a new semver template generates (`major`: `stable-v1`, `minor`:
    /// `stable-v1.2`, `both`). Only used when the release creates the template.
    #[serde(default)]
    pub catalog_channel_generation: ChannelGeneration,
    /// How bundles are written into the catalog: `bundle-objects` (every manifest, so the
    /// catalog serves the full CSV; opm `render`'s default) or `csv-metadata` (compact).
    #[serde(default)]
    pub catalog_form: CatalogForm,
    /// Copy each CSV's `olm.skipRange` onto its catalog channel entries (`olm catalog add
    /// --skip-range-from-csv`): opm's semver template drops it.
    #[serde(default)]
    pub catalog_skip_range_from_csv: bool,
    /// The file-based catalog directory (holding `<package>/template.yaml`).
    pub catalog: PathBuf,
    /// Directory of the OCI layouts images go to without a registry.
    pub layouts: PathBuf,
    pub deploy: Option<DeploySettings>,
    /// Sign every image the release makes (`olm release --sign-key` wins over it).
    pub signing: Option<SigningSettings>,
    /// Labels of the operator image (certification asks for name, vendor, version, release,
    /// summary, description, maintainer; `version` defaults to the release's).
    #[serde(default)]
    pub operator_labels: std::collections::BTreeMap<String, String>,
    /// License files copied into the operator image's `/licenses/`.
    #[serde(default)]
    pub operator_licenses: Vec<PathBuf>,
    /// preflight's checks on what the release made, before the bundle image is published.
    #[serde(default)]
    pub certify: CertifySettings,
}

/// `certify:` in release.yaml.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct CertifySettings {
    /// Run the checks (default); `olm release --skip-checks` turns them off for one run.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The operator image's container policy: `container`, `root`, `scratch-nonroot`,
    /// `scratch-root` (Red Hat grants the scratch and root exceptions per project).
    #[serde(default = "container_policy")]
    pub container_policy: String,
}

fn yes() -> bool {
    true
}

fn container_policy() -> String {
    "container".into()
}

impl Default for CertifySettings {
    fn default() -> Self {
        CertifySettings {
            enabled: true,
            container_policy: container_policy(),
        }
    }
}

/// `signing`: the key the release signs its images with, cosign's way.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct SigningSettings {
    /// The private key file (`cosign.key`; its password from COSIGN_PASSWORD or asked).
    pub key: PathBuf,
}

impl ReleaseConfig {
    /// Reads the file and makes its paths relative to the current directory.
    pub fn load(path: &Path) -> Result<ReleaseConfig, YamlError> {
        let mut cfg: ReleaseConfig = yaml::load_one(path)?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let rel = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = base.join(&*p);
            }
        };
        rel(&mut cfg.bundle_config);
        rel(&mut cfg.operator_binary);
        cfg.operator_binaries.iter_mut().for_each(rel);
        cfg.catalog_olm_binaries.iter_mut().for_each(rel);
        rel(&mut cfg.catalog);
        rel(&mut cfg.layouts);
        cfg.operator_licenses.iter_mut().for_each(rel);
        if let Some(p) = cfg.pinned_operator_image.as_mut() {
            rel(p);
        }
        if let Some(p) = cfg.pinned_catalog_image.as_mut() {
            rel(p);
        }
        if let Some(d) = cfg.manifests.dir.as_mut() {
            rel(d);
        }
        if let Some(s) = cfg.signing.as_mut() {
            rel(&mut s.key);
        }
        if let Some(dep) = cfg.deploy.as_mut() {
            rel(&mut dep.output);
            if let Some(d) = dep.manifests.as_mut().and_then(|m| m.dir.as_mut()) {
                rel(d);
            }
        }
        Ok(cfg)
    }
}

/// `repo@digest`.
pub fn pinned(repository: &str, digest: &str) -> String {
    format!("{repository}@{digest}")
}

/// The repository part of an image reference (tag and digest cut off).
pub fn repository_of(reference: &str) -> &str {
    image_ref::split(reference).0
}

/// The same repository path on another registry host: `quay.io/a/b` on `127.0.0.1:5000`
/// is `127.0.0.1:5000/a/b`. A repository without a host (`a/b`) keeps its whole path.
pub fn on_registry(repository: &str, host: &str) -> String {
    let path = match image_ref::registry_host(repository) {
        Some(h) => &repository[h.len() + 1..],
        None => repository,
    };
    format!("{}/{path}", host.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories() {
        assert_eq!(repository_of("quay.io/a/b:v1"), "quay.io/a/b");
        assert_eq!(repository_of("localhost:5000/a/b"), "localhost:5000/a/b");
        assert_eq!(repository_of("quay.io/a/b@sha256:00"), "quay.io/a/b");
        assert_eq!(
            on_registry("quay.io/a/b", "127.0.0.1:5000"),
            "127.0.0.1:5000/a/b"
        );
        assert_eq!(on_registry("a/b", "127.0.0.1:5000"), "127.0.0.1:5000/a/b");
    }
}
