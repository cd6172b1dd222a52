//! Moving whole images by reference string, each call one run of the copy engine
//! ([`super::copy`]). This is the surface other commands use: [`store`] for builds, [`copy`]
//! for `olm image push|pull|copy`, [`pull_to_dir`] for commands that read an image's files
//! (`olm bundle validate <image>`, `olm catalog render <image>`), [`inspect`] for
//! `olm image inspect`, [`resolve`] to pin a tag.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::copy::{self, Copied, CopyError, Endpoint, Engine, Source};
use super::layout::Layout;
use super::model::{self, Artifact, ImageConfig, ModelError, Platform};
use super::reference::{ImageRef, RefError};
use super::registry::api::FetchedManifest;
use super::registry::{PushReport, RegistryError, RegistryOptions};
use super::unpack::{Budget, UnpackError, apply_layer_within};
use crate::confined::{PathRefusal, RelPath, Tree};

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error(transparent)]
    Ref(#[from] RefError),
    #[error(transparent)]
    Copy(Box<CopyError>),
    #[error(transparent)]
    Unpack(#[from] UnpackError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{0}")]
    Unsupported(String),
}

impl From<CopyError> for TransferError {
    fn from(e: CopyError) -> Self {
        TransferError::Copy(Box::new(e))
    }
}

impl From<RegistryError> for TransferError {
    fn from(e: RegistryError) -> Self {
        CopyError::Registry(e).into()
    }
}

impl From<super::layout::LayoutError> for TransferError {
    fn from(e: super::layout::LayoutError) -> Self {
        CopyError::Layout(e).into()
    }
}

/// Where an image ended up.
#[derive(Debug, Clone)]
pub struct Stored {
    pub digest: String,
    /// `registry/repo@digest` or `oci:<dir>@digest`.
    pub pinned: String,
    /// What the push did, for registry destinations.
    pub push: Option<PushReport>,
    /// What the copy did, blob by blob.
    pub copied: Copied,
}

impl Stored {
    fn from_copied(copied: Copied, to_registry: bool) -> Self {
        Stored {
            digest: copied.digest.clone(),
            pinned: copied.pinned.clone(),
            push: to_registry.then(|| copied.push_report()),
            copied,
        }
    }
}

/// The engine's view of a parsed reference.
pub fn endpoint(r: &ImageRef) -> Endpoint {
    match r {
        ImageRef::Layout { dir, tag } => Endpoint::Layout {
            layout: Layout::new(dir),
            tag: tag.clone(),
        },
        ImageRef::Registry(r) => Endpoint::Registry(r.clone()),
    }
}

/// Writes a built image (or index) to `dst`: into a layout, or pushed to a registry.
pub async fn store(
    dst: &ImageRef,
    artifact: &Artifact,
    opts: &RegistryOptions,
) -> Result<Stored, TransferError> {
    let engine = Engine::new(opts);
    let result = engine
        .copy(Source::Built(artifact), &endpoint(dst), None)
        .await;
    engine.finish();
    Ok(Stored::from_copied(result?, dst.is_registry()))
}

/// Copies an image as is (same manifest bytes, so the same digest) from `src` to `dst`: an
/// index with all its images, or with `platform` the one image for it.
pub async fn copy(
    src: &ImageRef,
    dst: &ImageRef,
    platform: Option<&Platform>,
    opts: &RegistryOptions,
) -> Result<Stored, TransferError> {
    let engine = Engine::new(opts);
    let from = endpoint(src);
    let result = engine
        .copy(Source::Endpoint(&from), &endpoint(dst), platform)
        .await;
    engine.finish();
    Ok(Stored::from_copied(result?, dst.is_registry()))
}

/// An image unpacked to a directory.
#[derive(Debug, Clone)]
pub struct PulledImage {
    pub digest: String,
    pub config: ImageConfig,
    /// The directory holding the image's files (the container rootfs). Read it through
    /// [`PulledImage::tree`]: a path from the image is opened only relative to it.
    pub rootfs: PathBuf,
}

/// A label naming a path inside the image that could lead out of it.
#[derive(Debug, thiserror::Error)]
#[error("its label {label}={value:?} is refused: {reason}; it must name a path inside the image")]
pub struct LabelPathError {
    pub label: String,
    pub value: String,
    pub reason: PathRefusal,
}

impl PulledImage {
    /// The path inside the image that the label `key` names (`/configs`, `configs/`), read as
    /// Go's loaders join it onto the image's root but refused when it could lead out (`..`,
    /// NUL): `None` without the label.
    pub fn label_path(&self, key: &str) -> Option<Result<RelPath, LabelPathError>> {
        let value = self.config.config.labels.get(key)?;
        Some(RelPath::in_image(value).map_err(|reason| LabelPathError {
            label: key.to_string(),
            value: value.clone(),
            reason,
        }))
    }

    /// The image's files, every read confined to them.
    pub fn tree(&self) -> std::io::Result<Tree> {
        Tree::confined(&self.rootfs)
    }
}

/// Resolves `top`, the manifest `from` names, to one platform's manifest when it is an index
/// (default: linux and this machine's architecture); a single image is itself.
async fn platform_manifest(
    engine: &Engine,
    from: &Endpoint,
    top: FetchedManifest,
    platform: Option<&Platform>,
) -> Result<FetchedManifest, TransferError> {
    if !model::is_index(&top.media_type) {
        return Ok(top);
    }
    let index = model::parse_index(&top.bytes, &top.digest)?;
    let wanted = platform
        .cloned()
        .unwrap_or_else(super::layout::host_platform);
    let desc = model::pick_platform(&index, &wanted).ok_or_else(|| CopyError::NoPlatform {
        reference: from.to_string(),
        platform: wanted.to_string(),
        available: model::platforms_text(&index),
    })?;
    let child = match from {
        Endpoint::Registry(r) => Endpoint::Registry(super::reference::Reference::with_digest(
            r.registry().to_string(),
            r.repository().to_string(),
            desc.digest.clone(),
        )),
        Endpoint::Layout { layout, .. } => Endpoint::Layout {
            layout: layout.clone(),
            tag: Some(desc.digest.clone()),
        },
    };
    Ok(engine.manifest(Source::Endpoint(&child)).await?)
}

/// Fetches the image `reference` names (`oci:<dir>[:tag]` or a registry reference; an
/// index resolved to this machine's platform) and unpacks its layers into `dest`, each
/// layer streamed through a temporary file. Returns the digest and config alongside.
pub async fn pull_to_dir(
    reference: &str,
    dest: &Path,
    opts: &RegistryOptions,
) -> Result<PulledImage, TransferError> {
    pull_to_dir_for(reference, None, dest, opts).await
}

/// [`pull_to_dir`] of one platform's image of an index (`None`: this machine's).
pub async fn pull_to_dir_for(
    reference: &str,
    platform: Option<&Platform>,
    dest: &Path,
    opts: &RegistryOptions,
) -> Result<PulledImage, TransferError> {
    let engine = Engine::new(opts);
    let pulled = pull_to_dir_with(&engine, reference, platform, dest).await;
    engine.finish();
    pulled
}

/// [`pull_to_dir_for`] through an engine the caller keeps (its connections, tokens and blob
/// locations shared with the rest of a run; the caller finishes it).
pub async fn pull_to_dir_with(
    engine: &Engine,
    reference: &str,
    platform: Option<&Platform>,
    dest: &Path,
) -> Result<PulledImage, TransferError> {
    Ok(pull_layers(engine, reference, platform, dest, false)
        .await?
        .0)
}

/// [`pull_to_dir_with`] that also hands back the layer blobs (base first, each checked
/// against its digest while it was unpacked), for readers of what each layer changed.
pub async fn pull_to_dir_keeping_layers(
    engine: &Engine,
    reference: &str,
    platform: Option<&Platform>,
    dest: &Path,
) -> Result<(PulledImage, Vec<super::blob::Blob>), TransferError> {
    pull_layers(engine, reference, platform, dest, true).await
}

async fn pull_layers(
    engine: &Engine,
    reference: &str,
    platform: Option<&Platform>,
    dest: &Path,
    keep: bool,
) -> Result<(PulledImage, Vec<super::blob::Blob>), TransferError> {
    let opts = engine.options();
    let src = ImageRef::parse(reference)?;
    let from = endpoint(&src);
    let top = engine.manifest(Source::Endpoint(&from)).await?;
    let m = platform_manifest(engine, &from, top, platform).await?;
    let parsed = model::parse_manifest(&m.bytes, &m.digest)?;
    let source = Source::Endpoint(&from);
    let config_bytes = copy::read_small_blob(engine, source, &parsed.config).await?;
    let config: ImageConfig =
        serde_json::from_slice(&config_bytes).map_err(|source| ModelError::Json {
            what: format!("config {}", parsed.config.digest),
            source,
        })?;
    // host: the caller's own scratch directory
    std::fs::create_dir_all(dest).map_err(|source| UnpackError::Io {
        path: dest.to_path_buf(),
        source,
    })?;
    // Download a few layers ahead of the one being unpacked (layers apply in order).
    let mut fetches = futures::stream::iter(parsed.layers.iter())
        .map(|d| copy::fetch_to_file(engine, source, d))
        .buffered(opts.concurrency.max(1));
    use futures::StreamExt as _;
    let mut kept = Vec::new();
    // One budget for the image's layers together.
    let mut budget = Budget::new(opts.unpack);
    while let Some(blob) = fetches.next().await {
        let blob = blob?;
        let root = dest.to_path_buf();
        let (left, applied) = tokio::task::spawn_blocking(move || {
            let applied = apply_layer_within(&root, &blob, &budget).map(|()| blob);
            (budget, applied)
        })
        .await
        .map_err(|e| TransferError::Unsupported(e.to_string()))?;
        budget = left;
        let blob = applied?;
        if keep {
            kept.push(blob);
        }
    }
    Ok((
        PulledImage {
            digest: m.digest,
            config,
            rootfs: dest.to_path_buf(),
        },
        kept,
    ))
}

/// `<repository>@sha256:...` for a registry reference (a tag resolved by the registry, a
/// digest checked); a layout reference is refused, since it has no repository to pin. For a
/// multi-platform image this is the index's digest (what `crane digest` prints, and what
/// operator-sdk's `--use-image-digests` pins).
pub async fn resolve(src: &ImageRef, opts: &RegistryOptions) -> Result<String, TransferError> {
    match src {
        ImageRef::Layout { .. } => Err(TransferError::Unsupported(format!(
            "{src}: only a registry reference can be pinned by digest"
        ))),
        ImageRef::Registry(r) => {
            let engine = Engine::new(opts);
            let client = engine.client(r.registry()).await?;
            let digest = match client
                .head_manifest(r.repository(), r.manifest_ref())
                .await?
            {
                Some(d) if r.digest().is_none() || r.digest() == Some(d.as_str()) => d,
                _ => {
                    client
                        .get_manifest(r.repository(), r.manifest_ref())
                        .await?
                        .digest
                }
            };
            Ok(format!("{}/{}@{digest}", r.registry(), r.repository()))
        }
    }
}

/// A summary of an image in the spirit of `skopeo inspect`: name, digest, platform, labels,
/// layers, plus the raw manifest (the index itself for a multi-platform image) and config
/// (of this machine's platform).
pub async fn inspect(src: &ImageRef, opts: &RegistryOptions) -> Result<Value, TransferError> {
    let from = endpoint(src);
    let engine = Engine::new(opts);
    let top = engine.manifest(Source::Endpoint(&from)).await?;
    let m = platform_manifest(&engine, &from, top.clone(), None).await?;
    let parsed = model::parse_manifest(&m.bytes, &m.digest)?;
    let config_bytes =
        copy::read_small_blob(&engine, Source::Endpoint(&from), &parsed.config).await?;
    let config: ImageConfig =
        serde_json::from_slice(&config_bytes).map_err(|source| ModelError::Json {
            what: format!("config {}", parsed.config.digest),
            source,
        })?;
    let json_of = |bytes: &[u8], what: String| {
        serde_json::from_slice::<Value>(bytes).map_err(|source| ModelError::Json { what, source })
    };
    let manifest_json = json_of(&top.bytes, format!("manifest {}", top.digest))?;
    let config_json = json_of(&config_bytes, format!("config {}", parsed.config.digest))?;
    let mut out = json!({
        "Name": src.to_string(),
        "Digest": top.digest,
        "Created": config.created,
        "Architecture": config.architecture,
        "Os": config.os,
        "Labels": config.config.labels,
        "Layers": parsed.layers.iter().map(|l| l.digest.clone()).collect::<Vec<_>>(),
        "Size": parsed.layers.iter().map(|l| l.size).sum::<u64>() + parsed.config.size,
        "Manifest": manifest_json,
        "Config": config_json,
    });
    if model::is_index(&top.media_type) {
        let index = model::parse_index(&top.bytes, &top.digest)?;
        out["Platforms"] = json!(
            index
                .manifests
                .iter()
                .filter_map(|d| d.platform.as_ref().map(ToString::to_string))
                .collect::<Vec<_>>()
        );
        out["PlatformDigest"] = json!(m.digest);
    }
    engine.finish();
    Ok(out)
}
