//! The one copy engine every image move goes through (push, pull, copy, the pushes of the
//! build commands, mirrors), as containers-image has one `copy.Image` for every transport.
//!
//! - Blobs stream from the source (a registry, an OCI layout, an image just built) to the
//!   destination (a registry or a layout) in pieces of [`blob::CHUNK`] bytes, their digest
//!   and size checked on the way; memory does not grow with layer or image size.
//! - Blobs move in parallel, at most [`RegistryOptions::concurrency`] at once per engine,
//!   whatever number of images are moving.
//! - A blob the destination has is not sent: a HEAD first, then a cross-repository mount from
//!   a repository of the same registry known to hold it (the source's own repository when
//!   both are on one registry, else one from [`locations`]), then an upload (monolithic, or
//!   a streamed PATCH where the registry refuses that).
//! - A destination that already holds the manifest by digest is done at once: a re-run
//!   transfers nothing, and an interrupted run re-run sends only what is missing.
//! - Manifests (and an index and its images) keep their exact bytes, so digests survive.

pub mod locations;
pub mod progress;

use std::collections::HashMap;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures::{StreamExt as _, TryStreamExt as _};
use tokio::sync::Semaphore;

use super::blob::{self, Blob, ByteStream, Verified};
use super::layout::{DEFAULT_TAG, Layout, LayoutError};
use super::model::{self, Artifact, Descriptor, ModelError, Platform};
use super::reference::Reference;
use super::registry::api::{FetchedManifest, Mount};
use super::registry::{RegistryClient, RegistryError, RegistryOptions};
use locations::BlobLocations;
use progress::{ImageBar, Progress};

/// Where an image is read from or written to.
#[derive(Debug, Clone)]
pub enum Endpoint {
    Registry(Reference),
    /// An OCI layout and the name of its entry (`org.opencontainers.image.ref.name`); a
    /// source without one takes the layout's only image (or `latest`), a destination
    /// without one writes `latest`.
    Layout {
        layout: Layout,
        tag: Option<String>,
    },
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Registry(r) => write!(f, "{r}"),
            Endpoint::Layout { layout, tag: None } => write!(f, "oci:{}", layout.dir().display()),
            Endpoint::Layout {
                layout,
                tag: Some(t),
            } => write!(f, "oci:{}:{t}", layout.dir().display()),
        }
    }
}

/// What a copy reads: an endpoint, or an image this process built.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    Endpoint(&'a Endpoint),
    Built(&'a Artifact),
}

/// An image move that failed.
#[derive(Debug, thiserror::Error)]
pub enum CopyError {
    #[error(transparent)]
    Registry(#[from] RegistryError),
    #[error(transparent)]
    Layout(#[from] LayoutError),
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("{reference}: the image index has no {platform} image (it has: {available})")]
    NoPlatform {
        reference: String,
        platform: String,
        available: String,
    },
    #[error("{reference}: names digest {wanted}, but the image copied there is {actual}")]
    DigestConflict {
        reference: String,
        wanted: String,
        actual: String,
    },
    #[error("{reference}: {what}")]
    Unsupported { reference: String, what: String },
}

/// What one copy did.
#[derive(Debug, Clone, Default)]
pub struct Copied {
    /// The digest the destination now names (an index's, or the one platform's).
    pub digest: String,
    pub media_type: String,
    /// `registry/repo@digest`, or `oci:<dir>@digest`.
    pub pinned: String,
    /// Blobs sent, with their sizes.
    pub uploaded: Vec<(String, u64)>,
    /// Blobs mounted from another repository of the destination registry.
    pub mounted: Vec<String>,
    /// Blobs the destination had.
    pub present: Vec<String>,
    /// Whether a manifest or tag was written.
    pub manifest_written: bool,
    /// Images (manifests) in what was copied: 1, or an index's images.
    pub images: usize,
}

impl Copied {
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded.iter().map(|(_, s)| s).sum()
    }

    fn absorb(&mut self, other: Copied) {
        self.uploaded.extend(other.uploaded);
        self.mounted.extend(other.mounted);
        self.present.extend(other.present);
    }

    /// As the registry push report the build commands print.
    pub fn push_report(&self) -> super::registry::PushReport {
        super::registry::PushReport {
            digest: self.digest.clone(),
            pinned: self.pinned.clone(),
            uploaded: self.uploaded.clone(),
            mounted: self.mounted.clone(),
            skipped: self.present.clone(),
            manifest_written: self.manifest_written,
        }
    }
}

/// How one blob got to the destination.
enum Outcome {
    Present,
    Mounted,
    Uploaded(u64),
}

/// The source side of one copy, resolved.
enum Src<'a> {
    Registry {
        client: Arc<RegistryClient>,
        reference: &'a Reference,
    },
    Layout {
        layout: &'a Layout,
        tag: Option<&'a str>,
    },
    Built {
        artifact: &'a Artifact,
        blobs: HashMap<&'a str, &'a Blob>,
    },
}

/// The destination side of one copy, resolved.
enum Dst<'a> {
    Registry {
        client: Arc<RegistryClient>,
        reference: &'a Reference,
    },
    Layout {
        layout: &'a Layout,
        tag: &'a str,
    },
}

/// The copy engine: connections, the blob-locations record, the transfer slots and the
/// progress bars of one run. Share it across every copy of a run.
pub struct Engine {
    opts: RegistryOptions,
    clients: tokio::sync::Mutex<HashMap<String, Arc<RegistryClient>>>,
    slots: Semaphore,
    locations: BlobLocations,
    progress: Progress,
    inflight: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Engine {
    /// An engine with the blob-locations record at its default place.
    pub fn new(opts: &RegistryOptions) -> Self {
        Self::with_locations(opts, BlobLocations::new(locations::default_path()))
    }

    pub fn with_locations(opts: &RegistryOptions, locations: BlobLocations) -> Self {
        Engine {
            opts: opts.clone(),
            clients: tokio::sync::Mutex::new(HashMap::new()),
            slots: Semaphore::new(opts.concurrency.max(1)),
            locations,
            progress: Progress::new(opts.progress),
            inflight: std::sync::Mutex::new(HashMap::new()),
        }
    }

    /// `images` more images are about to move (a mirror): the total bar counts them.
    pub fn expect_images(&self, images: u64) {
        self.progress.expect(images);
    }

    pub fn options(&self) -> &RegistryOptions {
        &self.opts
    }

    /// The connection to `registry`, made once per run.
    pub async fn client(&self, registry: &str) -> Result<Arc<RegistryClient>, RegistryError> {
        let mut clients = self.clients.lock().await;
        if let Some(c) = clients.get(registry) {
            return Ok(c.clone());
        }
        let c = Arc::new(RegistryClient::connect(registry, &self.opts).await?);
        clients.insert(registry.to_string(), c.clone());
        Ok(c)
    }

    /// Saves the blob-locations record and clears the bars. Call once at the end of a run.
    pub fn finish(&self) {
        self.locations.save();
        self.progress.clear();
    }

    async fn src<'a>(&self, source: Source<'a>) -> Result<Src<'a>, CopyError> {
        Ok(match source {
            Source::Endpoint(Endpoint::Registry(r)) => Src::Registry {
                client: self.client(r.registry()).await?,
                reference: r,
            },
            Source::Endpoint(Endpoint::Layout { layout, tag }) => Src::Layout {
                layout,
                tag: tag.as_deref(),
            },
            Source::Built(artifact) => Src::Built {
                artifact,
                blobs: artifact
                    .images()
                    .iter()
                    .flat_map(|i| i.blobs())
                    .map(|b| (b.digest.as_str(), b))
                    .collect(),
            },
        })
    }

    async fn dst<'a>(&self, dest: &'a Endpoint) -> Result<Dst<'a>, CopyError> {
        Ok(match dest {
            Endpoint::Registry(r) => Dst::Registry {
                client: self.client(r.registry()).await?,
                reference: r,
            },
            Endpoint::Layout { layout, tag } => Dst::Layout {
                layout,
                tag: tag.as_deref().unwrap_or(DEFAULT_TAG),
            },
        })
    }

    /// The top manifest (or index) of a source, exact bytes.
    pub async fn manifest(&self, source: Source<'_>) -> Result<FetchedManifest, CopyError> {
        let src = self.src(source).await?;
        self.top(&src).await
    }

    async fn top(&self, src: &Src<'_>) -> Result<FetchedManifest, CopyError> {
        Ok(match src {
            Src::Registry { client, reference } => {
                client
                    .get_manifest(reference.repository(), reference.manifest_ref())
                    .await?
            }
            Src::Layout { layout, tag } => layout.manifest(*tag)?,
            Src::Built { artifact, .. } => FetchedManifest {
                bytes: artifact.manifest().clone(),
                media_type: artifact.media_type().to_string(),
                digest: artifact.digest().to_string(),
            },
        })
    }

    async fn child(&self, src: &Src<'_>, desc: &Descriptor) -> Result<FetchedManifest, CopyError> {
        let fetched = match src {
            Src::Registry { client, reference } => {
                client
                    .get_manifest(reference.repository(), &desc.digest)
                    .await?
            }
            Src::Layout { layout, .. } => layout.manifest(Some(&desc.digest))?,
            Src::Built { artifact, .. } => {
                let image = artifact
                    .images()
                    .iter()
                    .find(|i| i.digest == desc.digest)
                    .ok_or_else(|| CopyError::Unsupported {
                        reference: artifact.digest().to_string(),
                        what: format!("the index names {} which was not built", desc.digest),
                    })?;
                FetchedManifest {
                    bytes: image.manifest.clone(),
                    media_type: image.manifest_media_type.clone(),
                    digest: image.digest.clone(),
                }
            }
        };
        if fetched.digest != desc.digest {
            return Err(ModelError::DigestMismatch {
                what: format!("manifest {}", desc.digest),
                expected: desc.digest.clone(),
                actual: fetched.digest,
            }
            .into());
        }
        Ok(fetched)
    }

    /// Copies `source` to `dest`: an index with all its images, or (with `platform`) the
    /// one image of that platform.
    pub async fn copy(
        &self,
        source: Source<'_>,
        dest: &Endpoint,
        platform: Option<&Platform>,
    ) -> Result<Copied, CopyError> {
        let src = self.src(source).await?;
        let dst = self.dst(dest).await?;
        let mut top = self.top(&src).await?;
        let name = match source {
            Source::Endpoint(e) => e.to_string(),
            Source::Built(_) => dest.to_string(),
        };
        if let Some(wanted) = platform
            && model::is_index(&top.media_type)
        {
            let index = model::parse_index(&top.bytes, &top.digest)?;
            let Some(desc) = model::pick_platform(&index, wanted) else {
                return Err(CopyError::NoPlatform {
                    reference: name,
                    platform: wanted.to_string(),
                    available: model::platforms_text(&index),
                });
            };
            top = self.child(&src, desc).await?;
        }
        if let Dst::Registry { reference, .. } = &dst
            && let Some(wanted) = reference.digest()
            && wanted != top.digest
        {
            return Err(CopyError::DigestConflict {
                reference: reference.whole(),
                wanted: wanted.to_string(),
                actual: top.digest,
            });
        }

        let mut copied = Copied {
            digest: top.digest.clone(),
            media_type: top.media_type.clone(),
            pinned: pinned(&dst, &top.digest),
            images: 1,
            ..Copied::default()
        };
        if self.has_manifest(&dst, &top.digest).await? {
            tracing::debug!(%name, digest = %top.digest, "the destination has it");
            if !model::is_index(&top.media_type) {
                let parsed = model::parse_manifest(&top.bytes, &top.digest)?;
                copied.present = std::iter::once(&parsed.config)
                    .chain(parsed.layers.iter())
                    .filter(|d| !is_foreign(d))
                    .map(|d| d.digest.clone())
                    .collect();
            }
            copied.manifest_written = self.tag(&dst, &top).await?;
            return Ok(copied);
        }
        if model::is_index(&top.media_type) {
            let index = model::parse_index(&top.bytes, &top.digest)?;
            copied.images = index.manifests.len();
            let children = futures::stream::iter(index.manifests.iter())
                .map(|desc| async {
                    let child = self.child(&src, desc).await?;
                    if model::is_index(&child.media_type) {
                        return Err(CopyError::Unsupported {
                            reference: name.clone(),
                            what: format!("{} is an index inside an index", desc.digest),
                        });
                    }
                    let label = format!(
                        "{name} ({})",
                        desc.platform
                            .as_ref()
                            .map_or_else(|| desc.digest.clone(), ToString::to_string)
                    );
                    self.copy_image(&src, &dst, &child, &label).await
                })
                .buffer_unordered(4)
                .try_collect::<Vec<_>>()
                .await?;
            for c in children {
                copied.absorb(c);
            }
        } else {
            let c = self.copy_image(&src, &dst, &top, &name).await?;
            copied.absorb(c);
        }
        self.put_manifest(&dst, &top, true).await?;
        copied.manifest_written = true;
        Ok(copied)
    }

    /// Whether the destination holds the manifest `digest` (and so, as registries and our
    /// layouts guarantee, everything it names).
    async fn has_manifest(&self, dst: &Dst<'_>, digest: &str) -> Result<bool, CopyError> {
        Ok(match dst {
            Dst::Registry { client, reference } => client
                .head_manifest(reference.repository(), digest)
                .await?
                .is_some(),
            Dst::Layout { layout, .. } => layout
                .blob_path(digest)
                .map(|p| p.is_file())
                .unwrap_or(false),
        })
    }

    /// Points the destination's tag at a manifest it already holds. Returns whether
    /// anything was written.
    async fn tag(&self, dst: &Dst<'_>, top: &FetchedManifest) -> Result<bool, CopyError> {
        match dst {
            Dst::Registry { client, reference } => {
                let Some(tag) = reference.tag() else {
                    return Ok(false);
                };
                let current = client.head_manifest(reference.repository(), tag).await?;
                if current.as_deref() == Some(top.digest.as_str()) {
                    return Ok(false);
                }
                client
                    .put_manifest(reference.repository(), tag, &top.bytes, &top.media_type)
                    .await?;
                Ok(true)
            }
            Dst::Layout { layout, tag } => {
                let before = layout.resolve(Some(tag)).ok().map(|d| d.digest);
                layout.tag_manifest(&top.bytes, &top.media_type, tag)?;
                Ok(before.as_deref() != Some(top.digest.as_str()))
            }
        }
    }

    /// Writes manifest bytes: by digest (an index's image), or under the destination's
    /// reference (`top`).
    async fn put_manifest(
        &self,
        dst: &Dst<'_>,
        m: &FetchedManifest,
        top: bool,
    ) -> Result<(), CopyError> {
        match dst {
            Dst::Registry { client, reference } => {
                let target = if top {
                    reference.tag().unwrap_or(&m.digest)
                } else {
                    &m.digest
                };
                client
                    .put_manifest(reference.repository(), target, &m.bytes, &m.media_type)
                    .await?;
            }
            Dst::Layout { layout, tag } => {
                if top {
                    layout.tag_manifest(&m.bytes, &m.media_type, tag)?;
                } else {
                    layout.write_blob(&m.digest, &m.bytes)?;
                }
            }
        }
        Ok(())
    }

    /// Copies one image's blobs in parallel, then (for an index's image) its manifest.
    async fn copy_image(
        &self,
        src: &Src<'_>,
        dst: &Dst<'_>,
        m: &FetchedManifest,
        label: &str,
    ) -> Result<Copied, CopyError> {
        let parsed = model::parse_manifest(&m.bytes, &m.digest)?;
        let descs: Vec<&Descriptor> = std::iter::once(&parsed.config)
            .chain(parsed.layers.iter())
            .filter(|d| !is_foreign(d))
            .collect();
        let bar = self
            .progress
            .image(label, descs.iter().map(|d| d.size).sum());
        let outcomes =
            futures::future::try_join_all(descs.iter().map(|d| self.copy_blob(src, dst, d, &bar)))
                .await?;
        bar.done();
        let mut copied = Copied::default();
        for (d, o) in descs.iter().zip(outcomes) {
            match o {
                Outcome::Present => copied.present.push(d.digest.clone()),
                Outcome::Mounted => copied.mounted.push(d.digest.clone()),
                Outcome::Uploaded(n) => copied.uploaded.push((d.digest.clone(), n)),
            }
        }
        if let Dst::Registry { client, reference } = dst {
            for d in &descs {
                self.locations
                    .record(&d.digest, client.registry(), reference.repository());
            }
        }
        if let Src::Registry { client, reference } = src {
            for d in &descs {
                self.locations
                    .record(&d.digest, client.registry(), reference.repository());
            }
        }
        self.put_manifest(dst, m, false).await?;
        Ok(copied)
    }

    /// One transfer of a blob to a destination at a time in this run: a second image with
    /// the same layer waits, then finds it there.
    fn inflight(&self, key: String) -> Arc<tokio::sync::Mutex<()>> {
        let mut map = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        map.entry(key).or_default().clone()
    }

    async fn copy_blob(
        &self,
        src: &Src<'_>,
        dst: &Dst<'_>,
        desc: &Descriptor,
        bar: &ImageBar,
    ) -> Result<Outcome, CopyError> {
        let key = match dst {
            Dst::Registry { client, reference } => {
                format!(
                    "{}/{}|{}",
                    client.registry(),
                    reference.repository(),
                    desc.digest
                )
            }
            Dst::Layout { layout, .. } => format!("{}|{}", layout.dir().display(), desc.digest),
        };
        let lock = self.inflight(key);
        let _one = lock.lock().await;
        let _slot = self
            .slots
            .acquire()
            .await
            .map_err(|e| io_error("transfer slots", io::Error::other(e.to_string())))?;
        let outcome = match dst {
            Dst::Registry { client, reference } => {
                self.to_registry(src, client, reference, desc, bar).await?
            }
            Dst::Layout { layout, .. } => self.to_layout(src, layout, desc, bar).await?,
        };
        if matches!(outcome, Outcome::Present | Outcome::Mounted) {
            bar.inc(desc.size);
        }
        Ok(outcome)
    }

    /// The source's blob as a checked stream of pieces, counted into `bar`.
    async fn open(
        &self,
        src: &Src<'_>,
        desc: &Descriptor,
        bar: &ImageBar,
        corrupt: &Arc<AtomicBool>,
    ) -> Result<ByteStream, CopyError> {
        let (pieces, what): (ByteStream, String) = match src {
            Src::Registry { client, reference } => {
                let resp = client
                    .get_blob(reference.repository(), &desc.digest)
                    .await?;
                let pieces = resp
                    .bytes_stream()
                    .map_err(|e| io::Error::other(super::registry::client::chain_text(&e)));
                (
                    Box::pin(pieces),
                    format!("blob {} of {}", desc.digest, reference.name()),
                )
            }
            Src::Layout { layout, .. } => {
                let blob = layout.blob(desc)?;
                (
                    blob.stream().map_err(|e| io_error(&desc.digest, e))?,
                    format!("blob {} in {}", desc.digest, layout.dir().display()),
                )
            }
            Src::Built { blobs, .. } => {
                let blob =
                    blobs
                        .get(desc.digest.as_str())
                        .ok_or_else(|| CopyError::Unsupported {
                            reference: desc.digest.clone(),
                            what: "a blob the manifest names was not built".into(),
                        })?;
                (
                    blob.stream().map_err(|e| io_error(&desc.digest, e))?,
                    format!("built blob {}", desc.digest),
                )
            }
        };
        let bar = bar.clone();
        let corrupt = corrupt.clone();
        let checked = Verified::new(pieces, &desc.digest, desc.size, what).map(move |r| {
            match &r {
                Ok(piece) => bar.inc(piece.len() as u64),
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    corrupt.store(true, Ordering::Relaxed)
                }
                Err(_) => {}
            }
            r
        });
        Ok(Box::pin(checked))
    }

    /// A blob from a layout or a build, when the source holds it as a file or in memory.
    fn local(&self, src: &Src<'_>, desc: &Descriptor) -> Result<Option<Blob>, CopyError> {
        Ok(match src {
            Src::Registry { .. } => None,
            Src::Layout { layout, .. } => Some(layout.blob(desc)?),
            Src::Built { blobs, .. } => blobs.get(desc.digest.as_str()).map(|b| (*b).clone()),
        })
    }

    async fn to_layout(
        &self,
        src: &Src<'_>,
        layout: &Layout,
        desc: &Descriptor,
        bar: &ImageBar,
    ) -> Result<Outcome, CopyError> {
        if layout.has_blob(&desc.digest, desc.size) {
            return Ok(Outcome::Present);
        }
        if let Some(blob) = self.local(src, desc)? {
            let layout = layout.clone();
            let n = tokio::task::spawn_blocking(move || layout.write_blob_from(&blob))
                .await
                .map_err(|e| io_error(&desc.digest, io::Error::other(e.to_string())))??;
            bar.inc(n);
            return Ok(Outcome::Uploaded(n));
        }
        let mut attempt = 0;
        loop {
            let corrupt = Arc::new(AtomicBool::new(false));
            let result = match self.open(src, desc, bar, &corrupt).await {
                Ok(pieces) => layout
                    .write_blob_stream(&desc.digest, desc.size, pieces)
                    .await
                    .map_err(CopyError::from),
                Err(e) => Err(e),
            };
            match result {
                Ok(n) => return Ok(Outcome::Uploaded(n)),
                Err(e) if self.retry(&e, &corrupt, attempt).await => attempt += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// Waits before another attempt when `err` is worth one. Content that does not match
    /// its digest is not.
    async fn retry(&self, err: &CopyError, corrupt: &AtomicBool, attempt: u32) -> bool {
        let retryable = !corrupt.load(Ordering::Relaxed)
            && match err {
                CopyError::Registry(e) => e.retryable(),
                CopyError::Layout(LayoutError::WriteBlob { source, .. }) => {
                    source.kind() != io::ErrorKind::InvalidData
                }
                _ => false,
            };
        if !retryable || attempt >= self.opts.retries {
            return false;
        }
        let delay = self.opts.retry_delay * 2u32.saturating_pow(attempt);
        tracing::warn!("{err}; retrying in {} ms", delay.as_millis());
        tokio::time::sleep(delay).await;
        true
    }

    async fn to_registry(
        &self,
        src: &Src<'_>,
        client: &RegistryClient,
        reference: &Reference,
        desc: &Descriptor,
        bar: &ImageBar,
    ) -> Result<Outcome, CopyError> {
        let repo = reference.repository();
        if client.head_blob(repo, &desc.digest).await? {
            return Ok(Outcome::Present);
        }
        let mut sources = Vec::new();
        if let Src::Registry {
            client: from,
            reference: from_ref,
        } = src
            && from.registry() == client.registry()
            && from_ref.repository() != repo
        {
            sources.push(from_ref.repository().to_string());
        }
        for r in self.locations.repositories(&desc.digest, client.registry()) {
            if r != repo && !sources.contains(&r) {
                sources.push(r);
            }
        }
        let mut session = None;
        for from in sources.iter().take(3) {
            match client.mount_blob(repo, &desc.digest, from).await {
                Ok(Mount::Mounted) => return Ok(Outcome::Mounted),
                Ok(Mount::Upload(location)) => {
                    session = Some(location);
                    break;
                }
                // A source we may not read, or one that no longer exists: upload instead.
                Err(e) => tracing::debug!(from, error = %e, "mount refused"),
            }
        }

        let mut attempt = 0;
        let mut streamed_patch = false;
        loop {
            let corrupt = Arc::new(AtomicBool::new(false));
            let result = async {
                let location = match session.take() {
                    Some(l) => l,
                    None => client.start_upload(repo, &desc.digest).await?,
                };
                let pieces = self.open(src, desc, bar, &corrupt).await?;
                let body = reqwest::Body::wrap_stream(pieces);
                if streamed_patch {
                    client
                        .patch_blob(repo, &location, &desc.digest, body)
                        .await?;
                } else {
                    client
                        .put_blob(repo, &location, &desc.digest, desc.size, body)
                        .await?;
                }
                Ok::<_, CopyError>(())
            }
            .await;
            match result {
                Ok(()) => return Ok(Outcome::Uploaded(desc.size)),
                Err(CopyError::Registry(RegistryError::Server { code, .. }))
                    if !streamed_patch && matches!(code, 405 | 411 | 413 | 416) =>
                {
                    // A registry that takes no body on the closing PUT takes a PATCH.
                    streamed_patch = true;
                }
                Err(e) if self.retry(&e, &corrupt, attempt).await => attempt += 1,
                Err(e) => return Err(e),
            }
        }
    }
}

/// Layers that registries do not serve (Windows base layers with `urls`): left out, as
/// skopeo leaves them.
fn is_foreign(desc: &Descriptor) -> bool {
    desc.media_type.contains("foreign") || desc.media_type.contains("nondistributable")
}

fn io_error(what: &str, source: io::Error) -> CopyError {
    CopyError::Io {
        what: what.to_string(),
        source,
    }
}

fn pinned(dst: &Dst<'_>, digest: &str) -> String {
    match dst {
        Dst::Registry { reference, .. } => super::reference::pinned(reference, digest),
        Dst::Layout { layout, .. } => format!("oci:{}@{digest}", layout.dir().display()),
    }
}

/// Reads a whole small blob (a config) from a source.
pub async fn read_small_blob(
    engine: &Engine,
    source: Source<'_>,
    desc: &Descriptor,
) -> Result<Bytes, CopyError> {
    read_blob_bounded(
        engine,
        source,
        desc,
        super::limits::CONFIG_BYTES,
        "config",
        "a config",
    )
    .await
}

/// Reads a whole blob of at most `max` bytes: `what` names it in errors (`config`,
/// `signature layer`), `kind` is the limit's name (`a config`). The descriptor's size is
/// checked first and the stream is cut off at that size and verified against the digest.
pub async fn read_blob_bounded(
    engine: &Engine,
    source: Source<'_>,
    desc: &Descriptor,
    max: u64,
    what: &str,
    kind: &'static str,
) -> Result<Bytes, CopyError> {
    model::check_size(&format!("{what} {}", desc.digest), kind, desc.size, max)?;
    let src = engine.src(source).await?;
    let corrupt = Arc::new(AtomicBool::new(false));
    let mut pieces = engine
        .open(&src, desc, &ImageBar::hidden(), &corrupt)
        .await?;
    let mut out = Vec::with_capacity(desc.size as usize);
    while let Some(piece) = pieces.next().await {
        out.extend_from_slice(&piece.map_err(|e| io_error(&desc.digest, e))?);
    }
    Ok(Bytes::from(out))
}

/// Downloads one blob of a source into a temporary file (checked), for readers that need a
/// file (unpacking a layer).
pub async fn fetch_to_file(
    engine: &Engine,
    source: Source<'_>,
    desc: &Descriptor,
) -> Result<Blob, CopyError> {
    let src = engine.src(source).await?;
    if let Some(blob) = engine.local(&src, desc)? {
        return Ok(blob);
    }
    let corrupt = Arc::new(AtomicBool::new(false));
    let mut pieces = engine
        .open(&src, desc, &ImageBar::hidden(), &corrupt)
        .await?;
    let (mut file, path) =
        crate::scratch::ScratchFile::new().map_err(|e| io_error("a temporary file", e))?;
    while let Some(piece) = pieces.next().await {
        let piece = piece.map_err(|e| io_error(&desc.digest, e))?;
        io::Write::write_all(&mut file, &piece).map_err(|e| io_error(&desc.digest, e))?;
    }
    Ok(Blob::in_file(
        desc.media_type.clone(),
        desc.digest.clone(),
        desc.size,
        blob::BlobData::Spooled(Arc::new(path)),
    ))
}
