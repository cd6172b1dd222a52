//! Moving whole images between OCI layouts and registries, by reference string. This is the
//! library surface other commands use: [`load`] and [`store`] for builds and copies,
//! [`pull_to_dir`] for commands that read an image's files (`olm bundle validate <image>`,
//! `olm catalog render <image>`), [`inspect`] for `olm image inspect`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::layout::{Layout, LayoutError};
use super::model::{Image, ImageConfig, ModelError};
use super::reference::{ImageRef, RefError};
use super::registry::{PushReport, RegistryClient, RegistryError, RegistryOptions};
use super::unpack::{UnpackError, unpack_image};

#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    #[error(transparent)]
    Ref(#[from] RefError),
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Unpack(#[from] UnpackError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{0}")]
    Unsupported(String),
}

/// Where an image ended up.
#[derive(Debug, Clone)]
pub struct Stored {
    pub digest: String,
    /// `registry/repo@digest` or `oci:<dir>@digest`.
    pub pinned: String,
    /// What the push did, for registry destinations.
    pub push: Option<PushReport>,
}

/// Reads the image `src` names, from a layout or a registry.
pub async fn load(src: &ImageRef, opts: &RegistryOptions) -> Result<Image, TransferError> {
    match src {
        ImageRef::Layout { dir, tag } => Ok(Layout::new(dir).read_image(tag.as_deref())?),
        ImageRef::Registry(r) => {
            let client = RegistryClient::connect(r.registry(), opts).await?;
            Ok(client.pull(r, None).await?)
        }
    }
}

/// Writes `image` to `dst`: into a layout, or pushed to a registry.
pub async fn store(
    dst: &ImageRef,
    image: &Image,
    opts: &RegistryOptions,
) -> Result<Stored, TransferError> {
    match dst {
        ImageRef::Layout { dir, tag } => {
            Layout::new(dir).write_image(image, tag.as_deref())?;
            Ok(Stored {
                digest: image.digest.clone(),
                pinned: format!("oci:{}@{}", dir.display(), image.digest),
                push: None,
            })
        }
        ImageRef::Registry(r) => {
            let client = RegistryClient::connect(r.registry(), opts).await?;
            let report = client.push(r, image).await?;
            Ok(Stored {
                digest: report.digest.clone(),
                pinned: report.pinned.clone(),
                push: Some(report),
            })
        }
    }
}

/// Copies an image as is (same manifest bytes, so the same digest) from `src` to `dst`.
pub async fn copy(
    src: &ImageRef,
    dst: &ImageRef,
    opts: &RegistryOptions,
) -> Result<Stored, TransferError> {
    let image = load(src, opts).await?;
    store(dst, &image, opts).await
}

/// An image unpacked to a directory.
#[derive(Debug, Clone)]
pub struct PulledImage {
    pub digest: String,
    pub config: ImageConfig,
    /// The directory holding the image's files (the container rootfs).
    pub rootfs: PathBuf,
}

/// Fetches the image `reference` names (`oci:<dir>[:tag]` or a registry reference) and
/// unpacks its layers into `dest`. Returns the digest and config alongside.
pub async fn pull_to_dir(
    reference: &str,
    dest: &Path,
    opts: &RegistryOptions,
) -> Result<PulledImage, TransferError> {
    let src = ImageRef::parse(reference)?;
    let image = load(&src, opts).await?;
    let config = image.parsed_config()?;
    unpack_image(&image, dest)?;
    Ok(PulledImage {
        digest: image.digest,
        config,
        rootfs: dest.to_path_buf(),
    })
}

/// `<repository>@sha256:...` for a registry reference (a tag resolved by the registry, a
/// digest checked); a layout reference is refused, since it has no repository to pin.
pub async fn resolve(src: &ImageRef, opts: &RegistryOptions) -> Result<String, TransferError> {
    match src {
        ImageRef::Layout { .. } => Err(TransferError::Unsupported(format!(
            "{src}: only a registry reference can be pinned by digest"
        ))),
        ImageRef::Registry(r) => {
            let client = RegistryClient::connect(r.registry(), opts).await?;
            let digest = client.resolve_digest(r).await?;
            Ok(format!("{}/{}@{digest}", r.registry(), r.repository()))
        }
    }
}

/// A summary of an image in the spirit of `skopeo inspect`: name, digest, platform, labels,
/// layers, plus the raw manifest and config.
pub async fn inspect(src: &ImageRef, opts: &RegistryOptions) -> Result<Value, TransferError> {
    let (manifest, digest, config_bytes) = match src {
        ImageRef::Layout { dir, tag } => {
            let image = Layout::new(dir).read_image(tag.as_deref())?;
            (
                image.manifest.clone(),
                image.digest.clone(),
                image.config.data.clone(),
            )
        }
        ImageRef::Registry(r) => {
            let client = RegistryClient::connect(r.registry(), opts).await?;
            let (manifest, digest, _) = client.fetch_manifest(r, None).await?;
            let parsed = super::model::parse_manifest(&manifest, &digest)?;
            let config = client.fetch_blob(r, &parsed.config, None).await?;
            (manifest, digest, config)
        }
    };
    let parsed = super::model::parse_manifest(&manifest, &digest)?;
    let config: ImageConfig =
        serde_json::from_slice(&config_bytes).map_err(|source| ModelError::Json {
            what: format!("config {}", parsed.config.digest),
            source,
        })?;
    let manifest_json: Value =
        serde_json::from_slice(&manifest).map_err(|source| ModelError::Json {
            what: format!("manifest {digest}"),
            source,
        })?;
    let config_json: Value =
        serde_json::from_slice(&config_bytes).map_err(|source| ModelError::Json {
            what: format!("config {}", parsed.config.digest),
            source,
        })?;
    Ok(json!({
        "Name": src.to_string(),
        "Digest": digest,
        "Created": config.created,
        "Architecture": config.architecture,
        "Os": config.os,
        "Labels": config.config.labels,
        "Layers": parsed.layers.iter().map(|l| l.digest.clone()).collect::<Vec<_>>(),
        "Size": parsed.layers.iter().map(|l| l.size).sum::<u64>() + parsed.config.size,
        "Manifest": manifest_json,
        "Config": config_json,
    }))
}
