//! Where cosign keeps what it attaches to an image: an OCI image manifest tagged
//! `sha256-<hex>.sig` (signatures), `.att` (attestations) or `.sbom` in the image's own
//! repository (or layout), one layer per signature or attestation. The manifest and its
//! config are written with go-containerregistry's field order, as cosign writes them, and
//! move through the copy engine like any image.

use std::collections::BTreeMap;

use bytes::Bytes;
use serde::{Deserialize, Serialize};

use super::SignError;
use crate::grammar::go_json_read::{self as go, GoJsonError};
use crate::image::blob::Blob;
use crate::image::copy::{self, CopyError, Endpoint, Engine, Source};
use crate::image::layout::LayoutError;
use crate::image::limits;
use crate::image::model::{
    Artifact, Descriptor, Image, MEDIA_TYPE_OCI_CONFIG, MEDIA_TYPE_OCI_MANIFEST,
};
use crate::image::reference::Reference;
use crate::image::registry::RegistryError;
use crate::image::{digest_hex, sha256_digest};

pub const MEDIA_TYPE_SIMPLE_SIGNING: &str = "application/vnd.dev.cosign.simplesigning.v1+json";
pub const MEDIA_TYPE_DSSE: &str = "application/vnd.dsse.envelope.v1+json";
/// The layer annotation holding a signature (base64); empty on attestation layers.
pub const ANNOTATION_SIGNATURE: &str = "dev.cosignproject.cosign/signature";
/// The layer annotation naming an attestation's predicate type.
pub const ANNOTATION_PREDICATE_TYPE: &str = "predicateType";
/// At most this many layers are read from one attachment manifest.
pub const MAX_LAYERS: usize = 256;

/// What is attached: the tag suffix cosign uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attachment {
    Signature,
    Attestation,
    Sbom,
}

impl Attachment {
    pub const ALL: [Attachment; 3] = [
        Attachment::Signature,
        Attachment::Attestation,
        Attachment::Sbom,
    ];

    /// The largest layer read or written for this attachment ([`limits`]).
    pub fn layer_limit(self) -> u64 {
        match self {
            Attachment::Signature => limits::SIGNATURE_LAYER_BYTES,
            Attachment::Attestation | Attachment::Sbom => limits::ATTESTATION_LAYER_BYTES,
        }
    }

    /// What one layer is, in messages.
    fn layer_kind(self) -> &'static str {
        match self {
            Attachment::Signature => "a signature layer",
            Attachment::Attestation => "an attestation layer",
            Attachment::Sbom => "an SBOM layer",
        }
    }

    pub fn suffix(self) -> &'static str {
        match self {
            Attachment::Signature => "sig",
            Attachment::Attestation => "att",
            Attachment::Sbom => "sbom",
        }
    }
}

/// `sha256-<hex>.<suffix>`: the tag cosign derives from an image digest.
pub fn attachment_tag(digest: &str, what: Attachment) -> Result<String, SignError> {
    let hex = digest_hex(digest).ok_or_else(|| SignError::Payload {
        detail: format!("{digest}: not a sha256 digest"),
    })?;
    Ok(format!("sha256-{hex}.{}", what.suffix()))
}

/// The endpoint of the attachment `tag` beside `subject` (same repository or layout).
pub fn beside(subject: &Endpoint, tag: &str) -> Endpoint {
    match subject {
        Endpoint::Registry(r) => Endpoint::Registry(Reference::with_tag(
            r.registry().to_string(),
            r.repository().to_string(),
            tag.to_string(),
        )),
        Endpoint::Layout { layout, .. } => Endpoint::Layout {
            layout: layout.clone(),
            tag: Some(tag.to_string()),
        },
    }
}

/// A descriptor in go-containerregistry's field order (`mediaType`, `size`, `digest`,
/// `annotations`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LayerDescriptor {
    pub media_type: String,
    pub size: u64,
    pub digest: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AttachmentManifest {
    schema_version: u32,
    media_type: String,
    config: LayerDescriptor,
    layers: Vec<LayerDescriptor>,
}

impl AttachmentManifest {
    /// Reads the manifest as go-containerregistry's `v1.Manifest` is read by `json.Unmarshal`
    /// (cosign reads which signatures there are from it), or refuses it where another reader
    /// could see other layers or annotations.
    fn parse(bytes: &[u8]) -> Result<AttachmentManifest, GoJsonError> {
        const MANIFEST: [&str; 6] = [
            "schemaVersion",
            "mediaType",
            "config",
            "layers",
            "annotations",
            "subject",
        ];
        const DESCRIPTOR: [&str; 8] = [
            "mediaType",
            "size",
            "digest",
            "data",
            "urls",
            "annotations",
            "platform",
            "artifactType",
        ];
        let descriptor = |d: go::Fields<'_, 8>, at: &str| -> Result<LayerDescriptor, GoJsonError> {
            let size = d.int("size")?;
            Ok(LayerDescriptor {
                media_type: d.string("mediaType")?,
                size: u64::try_from(size).map_err(|_| GoJsonError::Type {
                    at: format!("{at}.size"),
                    found: "negative number",
                    wanted: "a size",
                })?,
                digest: d.string("digest")?,
                annotations: d.string_map("annotations")?.unwrap_or_default(),
            })
        };
        let doc = go::parse(bytes)?;
        let top = go::fields(Some(&doc), MANIFEST, "")?;
        let layers = top
            .array("layers")?
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let at = format!("layers[{i}]");
                descriptor(go::fields(Some(l), DESCRIPTOR, &at)?, &at)
            })
            .collect::<Result<_, _>>()?;
        Ok(AttachmentManifest {
            schema_version: u32::try_from(top.int("schemaVersion")?).unwrap_or(0),
            media_type: top.string("mediaType")?,
            config: descriptor(top.object("config", DESCRIPTOR)?, "config")?,
            layers,
        })
    }
}

/// One signature or attestation: its layer descriptor and bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layer {
    pub descriptor: LayerDescriptor,
    pub data: Bytes,
}

impl Layer {
    pub fn new(media_type: &str, data: Vec<u8>, annotations: BTreeMap<String, String>) -> Self {
        Layer {
            descriptor: LayerDescriptor {
                media_type: media_type.to_string(),
                size: data.len() as u64,
                digest: sha256_digest(&data),
                annotations,
            },
            data: Bytes::from(data),
        }
    }
}

/// Whether a copy error says "nothing there" (a 404, a layout without that tag).
pub fn is_absent(e: &CopyError) -> bool {
    matches!(
        e,
        CopyError::Registry(RegistryError::NotFound { .. })
            | CopyError::Layout(LayoutError::NoSuchTag { .. })
    )
}

/// The layers of the attachment `what` at `at` (a `sha256-<hex>.sig` tag, say), or `None`
/// when there is none. Each layer is bounded by `what`'s limit and all of them together by
/// [`limits::ATTACHMENT_TOTAL_BYTES`], both checked on the manifest before anything is fetched.
pub async fn read(
    engine: &Engine,
    at: &Endpoint,
    what: Attachment,
) -> Result<Option<Vec<Layer>>, SignError> {
    let top = match engine.manifest(Source::Endpoint(at)).await {
        Ok(m) => m,
        Err(e) if is_absent(&e) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let malformed = |detail: String| SignError::Malformed {
        reference: at.to_string(),
        detail,
    };
    let manifest = AttachmentManifest::parse(&top.bytes)
        .map_err(|e| malformed(format!("not an image manifest as cosign reads it: {e}")))?;
    if manifest.layers.len() > MAX_LAYERS {
        return Err(malformed(format!(
            "{} layers, more than {MAX_LAYERS}",
            manifest.layers.len()
        )));
    }
    let max = what.layer_limit();
    let mut total = 0u64;
    for d in &manifest.layers {
        if d.size > max {
            return Err(SignError::TooLarge {
                what: format!("{at}: {} {}", what.layer_kind(), d.digest),
                size: d.size,
                max,
            });
        }
        total = total.saturating_add(d.size);
    }
    if total > limits::ATTACHMENT_TOTAL_BYTES {
        return Err(SignError::TooLarge {
            what: format!("{at}: its {} layers together", manifest.layers.len()),
            size: total,
            max: limits::ATTACHMENT_TOTAL_BYTES,
        });
    }
    let mut layers = Vec::with_capacity(manifest.layers.len());
    for d in manifest.layers {
        let desc = Descriptor {
            media_type: d.media_type.clone(),
            digest: d.digest.clone(),
            size: d.size,
            platform: None,
            annotations: BTreeMap::new(),
        };
        let kind = what.layer_kind();
        let data = copy::read_blob_bounded(
            engine,
            Source::Endpoint(at),
            &desc,
            max,
            &format!("{at}: layer"),
            kind,
        )
        .await?;
        if sha256_digest(&data) != d.digest || data.len() as u64 != d.size {
            return Err(malformed(format!(
                "layer {} does not match its digest or size",
                d.digest
            )));
        }
        layers.push(Layer {
            descriptor: d,
            data,
        });
    }
    Ok(Some(layers))
}

/// go-containerregistry's config for an image made of `layers` on `empty.Image`: empty
/// platform, zero times, one history entry and diffID per layer.
fn config_bytes(layers: &[Layer]) -> Vec<u8> {
    let zero = "0001-01-01T00:00:00Z";
    let history: Vec<_> = layers
        .iter()
        .map(|_| serde_json::json!({"created": zero}))
        .collect();
    let diff_ids: Vec<_> = layers.iter().map(|l| l.descriptor.digest.clone()).collect();
    let mut m = serde_json::Map::new();
    m.insert("architecture".into(), "".into());
    m.insert("created".into(), zero.into());
    m.insert("history".into(), history.into());
    m.insert("os".into(), "".into());
    m.insert(
        "rootfs".into(),
        serde_json::json!({"type": "layers", "diff_ids": diff_ids}),
    );
    m.insert("config".into(), serde_json::json!({}));
    serde_json::to_vec(&serde_json::Value::Object(m)).unwrap_or_default()
}

/// The image (manifest, config, layers) holding `layers`.
pub fn image_of(layers: &[Layer]) -> Image {
    let config = config_bytes(layers);
    let config_desc = LayerDescriptor {
        media_type: MEDIA_TYPE_OCI_CONFIG.into(),
        size: config.len() as u64,
        digest: sha256_digest(&config),
        annotations: BTreeMap::new(),
    };
    let manifest = AttachmentManifest {
        schema_version: 2,
        media_type: MEDIA_TYPE_OCI_MANIFEST.into(),
        config: config_desc.clone(),
        layers: layers.iter().map(|l| l.descriptor.clone()).collect(),
    };
    let bytes = Bytes::from(serde_json::to_vec(&manifest).unwrap_or_default());
    Image {
        digest: sha256_digest(&bytes),
        manifest: bytes,
        manifest_media_type: MEDIA_TYPE_OCI_MANIFEST.into(),
        config: Blob::in_memory(
            MEDIA_TYPE_OCI_CONFIG,
            config_desc.digest,
            Bytes::from(config),
        ),
        layers: layers
            .iter()
            .map(|l| {
                Blob::in_memory(
                    l.descriptor.media_type.clone(),
                    l.descriptor.digest.clone(),
                    l.data.clone(),
                )
            })
            .collect(),
    }
}

/// Adds `layer` to the attachment `what` at `at` (created when missing). A layer already
/// there (same bytes and annotations) is not added twice. Returns whether it was added. A
/// layer over `what`'s limit is refused here, so nothing is written that no reader reads.
pub async fn append(
    engine: &Engine,
    at: &Endpoint,
    what: Attachment,
    layer: Layer,
) -> Result<bool, SignError> {
    let max = what.layer_limit();
    if layer.descriptor.size > max {
        return Err(SignError::TooLarge {
            what: format!("{at}: the layer to add"),
            size: layer.descriptor.size,
            max,
        });
    }
    let mut layers = read(engine, at, what).await?.unwrap_or_default();
    if layers.contains(&layer) {
        return Ok(false);
    }
    layers.push(layer);
    let total: u64 = layers.iter().map(|l| l.descriptor.size).sum();
    if total > limits::ATTACHMENT_TOTAL_BYTES {
        return Err(SignError::TooLarge {
            what: format!(
                "{at}: its {} layers together with the new one",
                layers.len()
            ),
            size: total,
            max: limits::ATTACHMENT_TOTAL_BYTES,
        });
    }
    let artifact = Artifact::Image(image_of(&layers));
    engine.copy(Source::Built(&artifact), at, None).await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_and_config_match_cosign_shape() {
        let mut a = BTreeMap::new();
        a.insert(ANNOTATION_SIGNATURE.to_string(), "MEUC".to_string());
        let l = Layer::new(MEDIA_TYPE_SIMPLE_SIGNING, b"{}".to_vec(), a);
        let img = image_of(std::slice::from_ref(&l));
        let text = String::from_utf8(img.manifest.to_vec()).unwrap();
        assert!(text.starts_with(r#"{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","size":"#), "{text}");
        assert!(text.ends_with(&format!(r#""layers":[{{"mediaType":"application/vnd.dev.cosign.simplesigning.v1+json","size":2,"digest":"{}","annotations":{{"dev.cosignproject.cosign/signature":"MEUC"}}}}]}}"#, l.descriptor.digest)), "{text}");
        let config = String::from_utf8(img.config.bytes().unwrap().to_vec()).unwrap();
        assert_eq!(
            config,
            format!(
                r#"{{"architecture":"","created":"0001-01-01T00:00:00Z","history":[{{"created":"0001-01-01T00:00:00Z"}}],"os":"","rootfs":{{"type":"layers","diff_ids":["{}"]}},"config":{{}}}}"#,
                l.descriptor.digest
            )
        );
        let d = format!("sha256:{}", "b".repeat(64));
        assert_eq!(
            attachment_tag(&d, Attachment::Signature).unwrap(),
            format!("sha256-{}.sig", "b".repeat(64))
        );
    }
}
