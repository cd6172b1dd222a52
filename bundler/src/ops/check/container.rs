//! `olm check container IMAGE`: preflight's container policy on one platform's image of a
//! registry reference or OCI layout, pulled through the copy engine and unpacked by the
//! confined unpacker; each layer is also scanned for what it changes.

use std::io::Read;

use super::{ArtifactOptions, CheckError};
use crate::certify::container::{self, ImageFacts, Policy, layers};
use crate::certify::report::Report;
use crate::image::copy::Engine;
use crate::image::layout::Layout;
use crate::image::model::Platform;
use crate::image::reference::ImageRef;
use crate::image::registry::RegistryOptions;
use crate::image::transfer;

/// What to check and how.
#[derive(Debug, Clone, Default)]
pub struct ContainerRequest {
    /// `registry/repo:tag`, `registry/repo@sha256:...` or `oci:<dir>[:tag]`.
    pub image: String,
    pub policy: Policy,
    /// The platform of a multi-platform image (default: this machine's).
    pub platform: Option<Platform>,
    /// The repository the image will be published to, when it is checked from a layout
    /// (its last component is the container name HasProhibitedContainerName checks).
    pub repository: Option<String>,
    pub registry: RegistryOptions,
    pub artifacts: ArtifactOptions,
}

fn image_err(reference: &str) -> impl FnOnce(transfer::TransferError) -> CheckError + '_ {
    move |source| CheckError::Image {
        reference: reference.to_string(),
        source,
    }
}

/// Reads the image into [`ImageFacts`], its root file system unpacked under `scratch`.
pub async fn facts(
    req: &ContainerRequest,
    scratch: &std::path::Path,
) -> Result<ImageFacts, CheckError> {
    let parsed = ImageRef::parse(&req.image).map_err(|e| CheckError::Usage(e.to_string()))?;
    let rootfs = scratch.join("fs");
    let engine = Engine::new(&req.registry);
    let pulled =
        transfer::pull_to_dir_keeping_layers(&engine, &req.image, req.platform.as_ref(), &rootfs)
            .await;
    let (image, blobs) = match pulled {
        Ok(p) => p,
        Err(e) => {
            engine.finish();
            return Err(image_err(&req.image)(e));
        }
    };
    let (repository, tag_or_digest) = match &parsed {
        ImageRef::Registry(r) => (
            format!("{}/{}", r.registry(), r.repository()),
            r.digest().or(r.tag()).unwrap_or("latest").to_string(),
        ),
        ImageRef::Layout { dir, tag } => (
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            tag.clone().unwrap_or_else(|| "latest".into()),
        ),
    };
    let listed_tags = if tag_or_digest.starts_with("sha256:") || tag_or_digest == "latest" {
        Some(match &parsed {
            ImageRef::Registry(r) => match engine.client(r.registry()).await {
                Ok(c) => c.list_tags(r.repository()).await.map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            },
            ImageRef::Layout { dir, .. } => Layout::new(dir)
                .index()
                .map(|i| {
                    i.manifests
                        .iter()
                        .filter_map(|m| {
                            m.annotations
                                .get("org.opencontainers.image.ref.name")
                                .cloned()
                        })
                        .collect()
                })
                .map_err(|e| e.to_string()),
        })
    } else {
        None
    };
    engine.finish();
    let mut scans = Vec::with_capacity(blobs.len());
    let mut digests = Vec::with_capacity(blobs.len());
    for blob in &blobs {
        let raw = blob
            .reader()
            .map_err(|e| CheckError::Io(format!("layer {}: {e}", blob.digest)))?;
        let reader: Box<dyn Read> = if blob.media_type.ends_with("gzip") {
            Box::new(flate2::read::GzDecoder::new(raw))
        } else {
            raw
        };
        let scan = layers::scan(reader)
            .map_err(|e| CheckError::Io(format!("layer {}: {e}", blob.digest)))?;
        scans.push(scan);
        digests.push(blob.digest.clone());
    }
    let config = image.config.config;
    Ok(ImageFacts {
        reference: req.image.clone(),
        repository: req.repository.clone().unwrap_or(repository),
        tag_or_digest,
        listed_tags,
        labels: config.labels,
        user: config.user.unwrap_or_default(),
        layer_count: blobs.len(),
        layer_digests: digests,
        scans,
        rootfs: crate::confined::Tree::confined(&rootfs)
            .map_err(|e| CheckError::Io(format!("the unpacked image: {e}")))?,
        rpm: Default::default(),
    })
}

/// Runs the policy on the image and writes the artifacts under `<dir>/<architecture>`, as
/// preflight lays them out.
pub async fn check(req: &ContainerRequest) -> Result<Report, CheckError> {
    let scratch = crate::scratch::ScratchDir::new()
        .map_err(|e| CheckError::Io(format!("a temporary directory: {e}")))?;
    let facts = facts(req, scratch.path()).await?;
    let results = container::run(req.policy, &facts, scratch.path());
    let report = Report {
        image: req.image.clone(),
        results,
        certification_hash: None,
    };
    if let Some(dir) = &req.artifacts.dir {
        let arch = req
            .platform
            .as_ref()
            .map(|p| p.architecture.clone())
            .unwrap_or_else(|| crate::image::layout::host_platform().architecture);
        super::write_artifacts(&dir.join(arch), &report, req.artifacts.junit, &[])?;
    }
    Ok(report)
}
