//! The JSON documents of an image (manifest, config, index) and the image we build.
//!
//! We write these with our own serde types rather than a generic builder so the bytes are
//! fully under our control: field order is fixed by the structs, empty fields are left out,
//! and the digest we report is the sha256 of exactly the bytes we store and push (registries
//! and `image@sha256:` references depend on that).

use std::collections::BTreeMap;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

pub use super::blob::Blob;
use super::layer::{Layer, MEDIA_TYPE_LAYER_GZIP};
use super::sha256_digest;
use crate::reproducible::rfc3339;

pub const MEDIA_TYPE_OCI_MANIFEST: &str = "application/vnd.oci.image.manifest.v1+json";
pub const MEDIA_TYPE_OCI_INDEX: &str = "application/vnd.oci.image.index.v1+json";
pub const MEDIA_TYPE_OCI_CONFIG: &str = "application/vnd.oci.image.config.v1+json";
pub const MEDIA_TYPE_DOCKER_MANIFEST: &str = "application/vnd.docker.distribution.manifest.v2+json";
pub const MEDIA_TYPE_DOCKER_LIST: &str =
    "application/vnd.docker.distribution.manifest.list.v2+json";

/// Every manifest type we can read, for explicit `Accept` headers (distribution 2.8 answers
/// 404 or a schema1 conversion without them).
pub const ACCEPTED_MANIFEST_TYPES: &[&str] = &[
    MEDIA_TYPE_OCI_MANIFEST,
    MEDIA_TYPE_OCI_INDEX,
    MEDIA_TYPE_DOCKER_MANIFEST,
    MEDIA_TYPE_DOCKER_LIST,
];

/// The annotation holding a tag inside an OCI layout's index.json.
pub const ANNOTATION_REF_NAME: &str = "org.opencontainers.image.ref.name";

/// A content descriptor: what a manifest or index says about one blob.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Platform {
    pub architecture: String,
    pub os: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
}

/// An image manifest (OCI, or Docker schema 2, which has the same shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    pub config: Descriptor,
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An image index (OCI) or manifest list (Docker); also an OCI layout's index.json.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Index {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    pub manifests: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// The image config: platform, runtime settings and the layer diffIDs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    pub architecture: String,
    pub os: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default)]
    pub config: RuntimeConfig,
    pub rootfs: RootFs,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<History>,
}

/// How a runtime starts the container (the config's `config` object).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RuntimeConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub exposed_ports: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entrypoint: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cmd: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootFs {
    #[serde(rename = "type")]
    pub kind: String,
    pub diff_ids: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct History {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub empty_layer: bool,
}

/// A complete single-platform image: the exact manifest bytes (whose sha256 is the image
/// digest), the config (in memory) and the layers (in files).
#[derive(Debug, Clone)]
pub struct Image {
    pub manifest: Bytes,
    pub manifest_media_type: String,
    pub digest: String,
    pub config: Blob,
    pub layers: Vec<Blob>,
}

/// A manifest or config that does not parse or does not match its blobs.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{what}: not valid JSON for its type: {source}")]
    Json {
        what: String,
        #[source]
        source: serde_json::Error,
    },
    #[error("{what}: digest mismatch: expected {expected}, content has {actual}")]
    DigestMismatch {
        what: String,
        expected: String,
        actual: String,
    },
    #[error("{what}: unsupported media type {media_type:?}")]
    MediaType { what: String, media_type: String },
    #[error("{what}: cannot read: {detail}")]
    Read { what: String, detail: String },
    /// A document larger than `olm` reads ([`super::limits`]).
    #[error(
        "{what}: {} is over the {} limit for {kind}",
        super::limits::size_text(*size),
        super::limits::limit_text(*limit)
    )]
    TooLarge {
        what: String,
        kind: &'static str,
        /// The size, or for a stream cut off at the limit, the bytes read when it was.
        size: u64,
        limit: u64,
    },
    #[error("index {digest}: lists {entries} manifests, more than the {limit} an index may list")]
    TooManyEntries {
        digest: String,
        entries: usize,
        limit: usize,
    },
    #[error("two images for {platform} ({first} and {second}): an index holds one per platform")]
    SamePlatform {
        platform: String,
        first: String,
        second: String,
    },
}

impl Image {
    /// Parses the manifest bytes.
    pub fn parsed_manifest(&self) -> Result<Manifest, ModelError> {
        serde_json::from_slice(&self.manifest).map_err(|source| ModelError::Json {
            what: format!("manifest {}", self.digest),
            source,
        })
    }

    /// Parses the config blob.
    pub fn parsed_config(&self) -> Result<ImageConfig, ModelError> {
        let bytes = self.config.bytes().map_err(|e| ModelError::Read {
            what: format!("config {}", self.config.digest),
            detail: e.to_string(),
        })?;
        serde_json::from_slice(&bytes).map_err(|source| ModelError::Json {
            what: format!("config {}", self.config.digest),
            source,
        })
    }

    /// Every blob of the image, layers first, config last (the order we push in).
    pub fn blobs(&self) -> impl Iterator<Item = &Blob> {
        self.layers.iter().chain(std::iter::once(&self.config))
    }

    /// The bytes of the manifest plus every blob.
    pub fn total_size(&self) -> u64 {
        self.manifest.len() as u64 + self.blobs().map(Blob::size).sum::<u64>()
    }

    /// The platform the config names, for an index entry.
    pub fn platform(&self) -> Result<Platform, ModelError> {
        let c = self.parsed_config()?;
        Ok(Platform {
            architecture: c.architecture,
            os: c.os,
            variant: c.variant,
        })
    }
}

/// Several images of one name for different platforms: the index bytes (whose sha256 is the
/// reference's digest) and the images, in the index's order.
#[derive(Debug, Clone)]
pub struct ImageIndex {
    pub manifest: Bytes,
    pub digest: String,
    pub images: Vec<Image>,
}

impl ImageIndex {
    /// An OCI index of `images`, each entry carrying the platform its config names. Two
    /// images of one platform are refused (a runtime would pick one of them at random).
    pub fn of(images: Vec<Image>) -> Result<ImageIndex, ModelError> {
        let mut manifests = Vec::with_capacity(images.len());
        for image in &images {
            let platform = image.platform()?;
            if let Some(other) = manifests
                .iter()
                .position(|d: &Descriptor| d.platform.as_ref() == Some(&platform))
            {
                return Err(ModelError::SamePlatform {
                    platform: platform.to_string(),
                    first: images[other].digest.clone(),
                    second: image.digest.clone(),
                });
            }
            manifests.push(Descriptor {
                media_type: image.manifest_media_type.clone(),
                digest: image.digest.clone(),
                size: image.manifest.len() as u64,
                platform: Some(platform),
                annotations: BTreeMap::new(),
            });
        }
        let index = Index {
            schema_version: 2,
            media_type: Some(MEDIA_TYPE_OCI_INDEX.into()),
            manifests,
            annotations: BTreeMap::new(),
        };
        // Serialising our own plain structs cannot fail.
        let manifest = Bytes::from(serde_json::to_vec(&index).unwrap_or_default());
        Ok(ImageIndex {
            digest: sha256_digest(&manifest),
            manifest,
            images,
        })
    }
}

/// What a build makes: one image, or an index of images for several platforms.
#[derive(Debug, Clone)]
pub enum Artifact {
    Image(Image),
    Index(ImageIndex),
}

impl Artifact {
    /// The digest a reference pins: the image's, or the index's.
    pub fn digest(&self) -> &str {
        match self {
            Artifact::Image(i) => &i.digest,
            Artifact::Index(x) => &x.digest,
        }
    }

    pub fn media_type(&self) -> &str {
        match self {
            Artifact::Image(i) => &i.manifest_media_type,
            Artifact::Index(_) => MEDIA_TYPE_OCI_INDEX,
        }
    }

    pub fn manifest(&self) -> &Bytes {
        match self {
            Artifact::Image(i) => &i.manifest,
            Artifact::Index(x) => &x.manifest,
        }
    }

    /// The images, one for a single-platform artifact.
    pub fn images(&self) -> &[Image] {
        match self {
            Artifact::Image(i) => std::slice::from_ref(i),
            Artifact::Index(x) => &x.images,
        }
    }

    /// The bytes of every manifest and distinct blob.
    pub fn total_size(&self) -> u64 {
        match self {
            Artifact::Image(i) => i.total_size(),
            Artifact::Index(x) => {
                let mut seen = std::collections::HashSet::new();
                x.manifest.len() as u64
                    + x.images
                        .iter()
                        .map(|i| {
                            i.manifest.len() as u64
                                + i.blobs()
                                    .filter(|b| seen.insert(b.digest.clone()))
                                    .map(Blob::size)
                                    .sum::<u64>()
                        })
                        .sum::<u64>()
            }
        }
    }
}

impl From<Image> for Artifact {
    fn from(image: Image) -> Self {
        Artifact::Image(image)
    }
}

impl std::fmt::Display for Platform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.os, self.architecture)?;
        if let Some(v) = &self.variant {
            write!(f, "/{v}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for Platform {
    type Err = String;

    /// `os/arch[/variant]`, as `--platform` takes it (`linux/arm64`, `linux/arm/v7`).
    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split('/').collect();
        match parts.as_slice() {
            [os, arch] if !os.is_empty() && !arch.is_empty() => Ok(Platform {
                os: os.to_string(),
                architecture: arch.to_string(),
                variant: None,
            }),
            [os, arch, v] if !os.is_empty() && !arch.is_empty() && !v.is_empty() => Ok(Platform {
                os: os.to_string(),
                architecture: arch.to_string(),
                variant: Some(v.to_string()),
            }),
            _ => Err(format!(
                "{s:?}: expected OS/ARCH[/VARIANT], e.g. linux/arm64"
            )),
        }
    }
}

impl Platform {
    /// Whether an index entry's platform is the one asked for (a request without a variant
    /// matches any variant).
    pub fn matches(&self, wanted: &Platform) -> bool {
        self.os == wanted.os
            && self.architecture == wanted.architecture
            && (wanted.variant.is_none() || self.variant == wanted.variant)
    }
}

/// The media type of manifest bytes: their `mediaType`, else the served `Content-Type` when
/// it is a manifest type, else an index when they list `manifests`, else an OCI manifest.
pub fn media_type_of(bytes: &[u8], served: Option<&str>) -> String {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "mediaType")]
        media_type: Option<String>,
        manifests: Option<serde::de::IgnoredAny>,
    }
    let probe = serde_json::from_slice::<Probe>(bytes).ok();
    if let Some(m) = probe.as_ref().and_then(|p| p.media_type.clone()) {
        return m;
    }
    if let Some(s) = served.filter(|s| ACCEPTED_MANIFEST_TYPES.contains(s)) {
        return s.to_string();
    }
    match probe {
        Some(Probe {
            manifests: Some(_), ..
        }) => MEDIA_TYPE_OCI_INDEX.into(),
        _ => MEDIA_TYPE_OCI_MANIFEST.into(),
    }
}

/// Whether a media type names an index (OCI) or a manifest list (Docker).
pub fn is_index(media_type: &str) -> bool {
    media_type == MEDIA_TYPE_OCI_INDEX || media_type == MEDIA_TYPE_DOCKER_LIST
}

/// The entry of an index for `wanted` (the first match, as runtimes pick).
pub fn pick_platform<'a>(index: &'a Index, wanted: &Platform) -> Option<&'a Descriptor> {
    index
        .manifests
        .iter()
        .find(|d| d.platform.as_ref().is_some_and(|p| p.matches(wanted)))
}

/// The platforms an index holds, for messages (`linux/amd64, linux/arm64`).
pub fn platforms_text(index: &Index) -> String {
    let list: Vec<String> = index
        .manifests
        .iter()
        .filter_map(|d| d.platform.as_ref().map(ToString::to_string))
        .collect();
    if list.is_empty() {
        "no platforms".into()
    } else {
        list.join(", ")
    }
}

/// Parses index bytes; `digest` names it in errors.
pub fn parse_index(bytes: &[u8], digest: &str) -> Result<Index, ModelError> {
    let index: Index = serde_json::from_slice(bytes).map_err(|source| ModelError::Json {
        what: format!("index {digest}"),
        source,
    })?;
    if index.manifests.len() > super::limits::INDEX_ENTRIES {
        return Err(ModelError::TooManyEntries {
            digest: digest.to_string(),
            entries: index.manifests.len(),
            limit: super::limits::INDEX_ENTRIES,
        });
    }
    Ok(index)
}

/// Refuses a document of `size` bytes over `limit`; `what` names it, `kind` says what it is.
pub fn check_size(what: &str, kind: &'static str, size: u64, limit: u64) -> Result<(), ModelError> {
    if size > limit {
        return Err(ModelError::TooLarge {
            what: what.to_string(),
            kind,
            size,
            limit,
        });
    }
    Ok(())
}

/// Parses manifest bytes; `digest` names it in errors.
pub fn parse_manifest(bytes: &[u8], digest: &str) -> Result<Manifest, ModelError> {
    serde_json::from_slice(bytes).map_err(|source| ModelError::Json {
        what: format!("manifest {digest}"),
        source,
    })
}

/// Builds an image from layers plus runtime settings. This is the API other parts of `olm`
/// (and a release pipeline) use: add layers, set labels, entrypoint and so on, then
/// [`ImageBuilder::build`] gives the exact bytes and digest.
#[derive(Debug, Clone)]
pub struct ImageBuilder {
    created: u64,
    architecture: String,
    os: String,
    variant: Option<String>,
    runtime: RuntimeConfig,
    layers: Vec<(Layer, String)>,
    annotations: BTreeMap<String, String>,
}

impl ImageBuilder {
    /// An image for `os`/`architecture` whose config `created` (and history times) is the Unix
    /// time `created`, normally [`crate::reproducible::source_date_epoch`].
    pub fn new(os: &str, architecture: &str, created: u64) -> Self {
        ImageBuilder {
            created,
            architecture: architecture.to_string(),
            os: os.to_string(),
            variant: None,
            runtime: RuntimeConfig::default(),
            layers: Vec::new(),
            annotations: BTreeMap::new(),
        }
    }

    pub fn variant(mut self, variant: Option<String>) -> Self {
        self.variant = variant;
        self
    }

    /// Appends a layer; `created_by` is recorded in the config history (what made it).
    pub fn layer(mut self, layer: Layer, created_by: impl Into<String>) -> Self {
        self.layers.push((layer, created_by.into()));
        self
    }

    pub fn label(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.runtime.labels.insert(key.into(), value.into());
        self
    }

    pub fn labels(mut self, labels: impl IntoIterator<Item = (String, String)>) -> Self {
        self.runtime.labels.extend(labels);
        self
    }

    /// A manifest annotation (OCI annotations, next to the config labels).
    pub fn annotation(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.annotations.insert(key.into(), value.into());
        self
    }

    pub fn entrypoint(mut self, entrypoint: Vec<String>) -> Self {
        self.runtime.entrypoint = entrypoint;
        self
    }

    pub fn cmd(mut self, cmd: Vec<String>) -> Self {
        self.runtime.cmd = cmd;
        self
    }

    pub fn user(mut self, user: impl Into<String>) -> Self {
        self.runtime.user = Some(user.into());
        self
    }

    pub fn env(mut self, var: impl Into<String>) -> Self {
        self.runtime.env.push(var.into());
        self
    }

    pub fn working_dir(mut self, dir: impl Into<String>) -> Self {
        self.runtime.working_dir = Some(dir.into());
        self
    }

    /// Declares a port, e.g. `50051/tcp`.
    pub fn expose(mut self, port: impl Into<String>) -> Self {
        self.runtime
            .exposed_ports
            .insert(port.into(), serde_json::Map::new());
        self
    }

    /// Serialises config and manifest and hashes them.
    pub fn build(self) -> Image {
        let created = rfc3339(self.created);
        let config = ImageConfig {
            created: Some(created.clone()),
            architecture: self.architecture,
            os: self.os,
            variant: self.variant,
            config: self.runtime,
            rootfs: RootFs {
                kind: "layers".into(),
                diff_ids: self.layers.iter().map(|(l, _)| l.diff_id.clone()).collect(),
            },
            history: self
                .layers
                .iter()
                .map(|(_, by)| History {
                    created: Some(created.clone()),
                    created_by: Some(by.clone()),
                    comment: None,
                    empty_layer: false,
                })
                .collect(),
        };
        // Serialising our own plain structs cannot fail.
        let config_bytes = Bytes::from(serde_json::to_vec(&config).unwrap_or_default());
        let config_blob = Blob::in_memory(
            MEDIA_TYPE_OCI_CONFIG,
            sha256_digest(&config_bytes),
            config_bytes,
        );
        let layers: Vec<Blob> = self
            .layers
            .into_iter()
            .map(|(l, _)| Blob::in_file(MEDIA_TYPE_LAYER_GZIP, l.digest, l.size, l.blob))
            .collect();
        let manifest = Manifest {
            schema_version: 2,
            media_type: Some(MEDIA_TYPE_OCI_MANIFEST.into()),
            config: descriptor(&config_blob),
            layers: layers.iter().map(descriptor).collect(),
            annotations: self.annotations,
        };
        let manifest_bytes = Bytes::from(serde_json::to_vec(&manifest).unwrap_or_default());
        Image {
            digest: sha256_digest(&manifest_bytes),
            manifest: manifest_bytes,
            manifest_media_type: MEDIA_TYPE_OCI_MANIFEST.into(),
            config: config_blob,
            layers,
        }
    }
}

/// The descriptor of a blob (no platform, no annotations).
pub fn descriptor(blob: &Blob) -> Descriptor {
    Descriptor {
        media_type: blob.media_type.clone(),
        digest: blob.digest.clone(),
        size: blob.size(),
        platform: None,
        annotations: BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::layer::{LayerBuilder, Owner};
    use super::*;

    #[test]
    fn build_is_deterministic_and_self_consistent() {
        let mk = || {
            let mut l = LayerBuilder::new(0);
            l.file("hello", &b"hi"[..], 0o644, Owner::Root).unwrap();
            ImageBuilder::new("linux", "amd64", 0)
                .layer(l.finish().unwrap(), "test")
                .label("a", "b")
                .expose("50051/tcp")
                .build()
        };
        let (a, b) = (mk(), mk());
        assert_eq!(a.digest, b.digest);
        assert_eq!(a.manifest, b.manifest);
        let m = a.parsed_manifest().unwrap();
        assert_eq!(m.config.digest, a.config.digest);
        assert_eq!(m.layers[0].digest, a.layers[0].digest);
        let c = a.parsed_config().unwrap();
        assert_eq!(c.created.as_deref(), Some("1970-01-01T00:00:00Z"));
        assert_eq!(c.config.labels["a"], "b");
        let json: serde_json::Value = serde_json::from_slice(&a.config.bytes().unwrap()).unwrap();
        assert!(json.pointer("/config/ExposedPorts/50051~1tcp").is_some());
    }
}
