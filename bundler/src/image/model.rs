//! The JSON documents of an image (manifest, config, index) and the in-memory image.
//!
//! We write these with our own serde types rather than a generic builder so the bytes are
//! fully under our control: field order is fixed by the structs, empty fields are left out,
//! and the digest we report is the sha256 of exactly the bytes we store and push (registries
//! and `image@sha256:` references depend on that).

use std::collections::BTreeMap;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

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

/// One stored blob with its descriptor facts.
#[derive(Debug, Clone)]
pub struct Blob {
    pub media_type: String,
    pub digest: String,
    pub data: Bytes,
}

impl Blob {
    pub fn size(&self) -> u64 {
        self.data.len() as u64
    }
}

/// A complete single-platform image in memory: the exact manifest bytes (whose sha256 is the
/// image digest), the config and the layers.
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
        serde_json::from_slice(&self.config.data).map_err(|source| ModelError::Json {
            what: format!("config {}", self.config.digest),
            source,
        })
    }

    /// Every blob of the image, layers first, config last (the order we push in).
    pub fn blobs(&self) -> impl Iterator<Item = &Blob> {
        self.layers.iter().chain(std::iter::once(&self.config))
    }

    /// Assembles an image from a manifest's bytes and blobs fetched separately, checking that
    /// each blob's content matches the digest the manifest names. `wrap` turns format
    /// problems into the caller's error type, so fetch errors pass through unchanged.
    pub fn assemble<E>(
        manifest: Bytes,
        manifest_media_type: Option<&str>,
        mut fetch: impl FnMut(&Descriptor) -> Result<Bytes, E>,
        wrap: impl Fn(ModelError) -> E,
    ) -> Result<Image, E> {
        let digest = sha256_digest(&manifest);
        let parsed = parse_manifest(&manifest, &digest).map_err(&wrap)?;
        let media_type = parsed
            .media_type
            .clone()
            .or_else(|| manifest_media_type.map(str::to_string))
            .unwrap_or_else(|| MEDIA_TYPE_OCI_MANIFEST.to_string());
        if media_type != MEDIA_TYPE_OCI_MANIFEST && media_type != MEDIA_TYPE_DOCKER_MANIFEST {
            return Err(wrap(ModelError::MediaType {
                what: format!("manifest {digest}"),
                media_type,
            }));
        }
        let mut load = |d: &Descriptor| -> Result<Blob, E> {
            let data = fetch(d)?;
            let actual = sha256_digest(&data);
            if actual != d.digest {
                return Err(wrap(ModelError::DigestMismatch {
                    what: format!("blob {}", d.digest),
                    expected: d.digest.clone(),
                    actual,
                }));
            }
            Ok(Blob {
                media_type: d.media_type.clone(),
                digest: d.digest.clone(),
                data,
            })
        };
        let config = load(&parsed.config)?;
        let layers = parsed
            .layers
            .iter()
            .map(&mut load)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Image {
            manifest,
            manifest_media_type: media_type,
            digest,
            config,
            layers,
        })
    }
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
        let config_blob = Blob {
            media_type: MEDIA_TYPE_OCI_CONFIG.into(),
            digest: sha256_digest(&config_bytes),
            data: config_bytes,
        };
        let layers: Vec<Blob> = self
            .layers
            .into_iter()
            .map(|(l, _)| Blob {
                media_type: MEDIA_TYPE_LAYER_GZIP.into(),
                digest: l.digest,
                data: l.blob,
            })
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
        let json: serde_json::Value = serde_json::from_slice(&a.config.data).unwrap();
        assert!(json.pointer("/config/ExposedPorts/50051~1tcp").is_some());
    }
}
