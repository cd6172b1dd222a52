//! OCI image layout directories: `oci-layout`, `index.json` and `blobs/sha256/<hex>`.
//!
//! Writing is additive and crash-safe: blobs are content-addressed and written atomically
//! first, `index.json` last, so a reader never sees an index entry whose blobs are missing.
//! A tag is the `org.opencontainers.image.ref.name` annotation of an index entry, as skopeo
//! and the image spec use it; writing a tag moves it (the old entry is dropped). An entry may
//! name an image index (a multi-platform image), as skopeo's `copy --all` writes it.
//!
//! Blobs are never read whole: an image read from a layout refers to the layout's files, and
//! a blob written to one streams through a temporary file that is hashed, checked and renamed.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use bytes::Bytes;
use futures::StreamExt as _;

use super::blob::{Blob, BlobData, ByteStream, HashingWriter};
use super::limits;
use super::model::{
    self, ANNOTATION_REF_NAME, Descriptor, Image, Index, MEDIA_TYPE_OCI_INDEX, ModelError, Platform,
};
use super::registry::api::FetchedManifest;
use super::{digest_hex, sha256_digest};
use crate::atomic_write;

/// One writer of index.json at a time in this process (images of a mirror land in one
/// layout concurrently).
static INDEX_LOCK: Mutex<()> = Mutex::new(());

const OCI_LAYOUT: &str = "oci-layout";
const LAYOUT_CONTENT: &[u8] = br#"{"imageLayoutVersion":"1.0.0"}"#;

/// The tag used when an `oci:<dir>` destination names none.
pub const DEFAULT_TAG: &str = "latest";

/// A layout that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] atomic_write::WriteError),
    #[error("{path}: not an OCI image layout (no oci-layout file)")]
    NotALayout { path: PathBuf },
    #[error("{path}: invalid JSON: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{dir}: no image tagged {tag:?} (tags: {available})")]
    NoSuchTag {
        dir: PathBuf,
        tag: String,
        available: String,
    },
    #[error("{dir}: holds {count} images; name one with oci:{dir}:<tag> (tags: {available})")]
    Ambiguous {
        dir: PathBuf,
        count: usize,
        available: String,
    },
    #[error("{dir}: index.json is empty")]
    Empty { dir: PathBuf },
    #[error("{dir}: {digest} is an image index with no {platform} image (it has: {available})")]
    NoPlatform {
        dir: PathBuf,
        digest: String,
        platform: String,
        available: String,
    },
    #[error("{dir}: blob {digest} is missing")]
    MissingBlob { dir: PathBuf, digest: String },
    #[error("{path}: cannot write: {source}")]
    WriteBlob {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{dir}: {digest}: not a sha256 digest")]
    BadDigest { dir: PathBuf, digest: String },
    #[error("{dir}: {source}")]
    Model {
        dir: PathBuf,
        #[source]
        source: ModelError,
    },
}

/// An OCI image layout directory.
#[derive(Debug, Clone)]
pub struct Layout {
    dir: PathBuf,
}

impl Layout {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Layout { dir: dir.into() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the blob `digest` is (or would be) stored.
    pub fn blob_path(&self, digest: &str) -> Result<PathBuf, LayoutError> {
        let hex = digest_hex(digest).ok_or_else(|| LayoutError::BadDigest {
            dir: self.dir.clone(),
            digest: digest.into(),
        })?;
        Ok(self.dir.join("blobs/sha256").join(hex))
    }

    /// Whether the layout already stores a blob (by digest and size).
    pub fn has_blob(&self, digest: &str, size: u64) -> bool {
        self.blob_path(digest)
            .ok()
            .and_then(|p| std::fs::metadata(p).ok())
            .is_some_and(|m| m.len() == size)
    }

    /// Creates the directory and its `oci-layout` file (idempotent).
    pub fn init(&self) -> Result<(), LayoutError> {
        let marker = self.dir.join(OCI_LAYOUT);
        if !marker.is_file() {
            atomic_write::write_atomic(&marker, LAYOUT_CONTENT)?;
        }
        Ok(())
    }

    /// Stores a small blob held in memory unless it is already there.
    pub fn write_blob(&self, digest: &str, data: &[u8]) -> Result<(), LayoutError> {
        if self.has_blob(digest, data.len() as u64) {
            return Ok(());
        }
        let path = self.blob_path(digest)?;
        atomic_write::write_atomic(&path, data)?;
        Ok(())
    }

    /// A temporary file beside the blobs (so the final rename stays on one filesystem),
    /// removed by an interrupt's cleanup until the guard goes.
    fn temp_blob(
        &self,
    ) -> Result<(tempfile::NamedTempFile, crate::scratch::RemoveOnSignal), LayoutError> {
        let dir = self.dir.join("blobs/sha256");
        std::fs::create_dir_all(&dir).map_err(|source| LayoutError::WriteBlob {
            path: dir.clone(),
            source,
        })?;
        tempfile::Builder::new()
            .prefix(".partial-")
            .tempfile_in(&dir)
            .map(|tmp| {
                let guard = crate::scratch::remove_on_signal(tmp.path());
                (tmp, guard)
            })
            .map_err(|source| LayoutError::WriteBlob { path: dir, source })
    }

    /// Moves a checked temporary file to the blob's place.
    fn commit(
        &self,
        tmp: tempfile::NamedTempFile,
        digest: &str,
        actual: (String, u64),
        size: u64,
    ) -> Result<(), LayoutError> {
        let path = self.blob_path(digest)?;
        if actual.0 != digest || actual.1 != size {
            return Err(LayoutError::Model {
                dir: self.dir.clone(),
                source: ModelError::DigestMismatch {
                    what: format!("blob {digest} ({size} bytes)"),
                    expected: digest.into(),
                    actual: format!("{} ({} bytes)", actual.0, actual.1),
                },
            });
        }
        tmp.persist(&path).map_err(|e| LayoutError::WriteBlob {
            path,
            source: e.error,
        })?;
        Ok(())
    }

    /// Stores a blob from a stream of pieces, checking its digest and size before it
    /// becomes visible. Memory: one piece.
    pub async fn write_blob_stream(
        &self,
        digest: &str,
        size: u64,
        mut pieces: ByteStream,
    ) -> Result<u64, LayoutError> {
        if self.has_blob(digest, size) {
            return Ok(0);
        }
        let (tmp, _partial) = self.temp_blob()?;
        let path = tmp.path().to_path_buf();
        let werr = |source| LayoutError::WriteBlob {
            path: path.clone(),
            source,
        };
        let file = tmp.reopen().map_err(werr)?;
        let mut out = HashingWriter::new(file);
        while let Some(piece) = pieces.next().await {
            let piece = piece.map_err(werr)?;
            // Page-cache writes of one piece; not worth a blocking-pool hop each.
            out.write_all(&piece).map_err(werr)?;
        }
        let (_, actual, written) = out.finish();
        self.commit(tmp, digest, (actual, written), size)?;
        Ok(written)
    }

    /// Stores a blob we hold in a file (a built layer, another layout's blob), copying it
    /// while hashing. Returns the bytes written (0 when the layout had it).
    pub fn write_blob_from(&self, blob: &Blob) -> Result<u64, LayoutError> {
        if self.has_blob(&blob.digest, blob.size()) {
            return Ok(0);
        }
        if let BlobData::Memory(b) = &blob.data {
            self.write_blob(&blob.digest, b)?;
            return Ok(b.len() as u64);
        }
        let (tmp, _partial) = self.temp_blob()?;
        let path = tmp.path().to_path_buf();
        let werr = |source| LayoutError::WriteBlob {
            path: path.clone(),
            source,
        };
        let mut out = HashingWriter::new(tmp.reopen().map_err(werr)?);
        let mut reader = blob.reader().map_err(|source| LayoutError::Read {
            path: blob.path().map(Path::to_path_buf).unwrap_or_default(),
            source,
        })?;
        std::io::copy(&mut reader, &mut out).map_err(werr)?;
        let (_, actual, written) = out.finish();
        self.commit(tmp, &blob.digest, (actual, written), blob.size())?;
        Ok(written)
    }

    /// The layout's index.json, or an empty index when the directory is new.
    pub fn index(&self) -> Result<Index, LayoutError> {
        let path = self.dir.join("index.json");
        match self.read_bounded(&path, "a layout's index.json", limits::LAYOUT_INDEX_BYTES) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|source| LayoutError::Json { path, source })
            }
            Err(LayoutError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                Ok(Index {
                    schema_version: 2,
                    media_type: Some(MEDIA_TYPE_OCI_INDEX.into()),
                    manifests: Vec::new(),
                    annotations: Default::default(),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Stores manifest (or index) bytes as a blob and points `tag` at them in index.json.
    /// Call it after every blob the manifest names is stored.
    pub fn tag_manifest(
        &self,
        manifest: &[u8],
        media_type: &str,
        tag: &str,
    ) -> Result<String, LayoutError> {
        self.init()?;
        let digest = sha256_digest(manifest);
        self.write_blob(&digest, manifest)?;
        let _guard = INDEX_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let mut index = self.index()?;
        let mut entry = Descriptor {
            media_type: media_type.to_string(),
            digest: digest.clone(),
            size: manifest.len() as u64,
            platform: None,
            annotations: Default::default(),
        };
        entry
            .annotations
            .insert(ANNOTATION_REF_NAME.into(), tag.into());
        match index
            .manifests
            .iter()
            .position(|d| d.annotations.get(ANNOTATION_REF_NAME).map(String::as_str) == Some(tag))
        {
            Some(i) if index.manifests[i] == entry => return Ok(digest),
            Some(i) => index.manifests[i] = entry,
            None => index.manifests.push(entry),
        }
        let bytes = serde_json::to_vec(&index).map_err(|source| LayoutError::Json {
            path: self.dir.join("index.json"),
            source,
        })?;
        atomic_write::write_atomic(&self.dir.join("index.json"), &bytes)?;
        Ok(digest)
    }

    fn tags(index: &Index) -> String {
        let tags: Vec<&str> = index
            .manifests
            .iter()
            .filter_map(|d| d.annotations.get(ANNOTATION_REF_NAME).map(String::as_str))
            .collect();
        if tags.is_empty() {
            "none".into()
        } else {
            tags.join(", ")
        }
    }

    /// The index entry for `tag`; with no tag, the only entry, or else the one tagged `latest`.
    pub fn resolve(&self, tag: Option<&str>) -> Result<Descriptor, LayoutError> {
        if !self.dir.join(OCI_LAYOUT).is_file() {
            return Err(LayoutError::NotALayout {
                path: self.dir.clone(),
            });
        }
        let index = self.index()?;
        let by_tag = |t: &str| {
            index
                .manifests
                .iter()
                .find(|d| d.annotations.get(ANNOTATION_REF_NAME).map(String::as_str) == Some(t))
        };
        let found = match tag {
            Some(t) => by_tag(t).ok_or_else(|| LayoutError::NoSuchTag {
                dir: self.dir.clone(),
                tag: t.into(),
                available: Self::tags(&index),
            })?,
            None => match index.manifests.as_slice() {
                [] => {
                    return Err(LayoutError::Empty {
                        dir: self.dir.clone(),
                    });
                }
                [only] => only,
                many => by_tag(DEFAULT_TAG).ok_or_else(|| LayoutError::Ambiguous {
                    dir: self.dir.clone(),
                    count: many.len(),
                    available: Self::tags(&index),
                })?,
            },
        };
        Ok(found.clone())
    }

    /// A blob of the layout as a [`Blob`] that refers to its file (checked for size; the
    /// digest is checked by whoever reads it).
    pub fn blob(&self, desc: &Descriptor) -> Result<Blob, LayoutError> {
        let path = self.blob_path(&desc.digest)?;
        match std::fs::metadata(&path) {
            Ok(m) if m.len() == desc.size => Ok(Blob::in_file(
                desc.media_type.clone(),
                desc.digest.clone(),
                desc.size,
                BlobData::Stored(path),
            )),
            Ok(m) => Err(LayoutError::Model {
                dir: self.dir.clone(),
                source: ModelError::DigestMismatch {
                    what: format!(
                        "{} (size {}, descriptor says {})",
                        path.display(),
                        m.len(),
                        desc.size
                    ),
                    expected: desc.digest.clone(),
                    actual: "other content".into(),
                },
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(LayoutError::MissingBlob {
                dir: self.dir.clone(),
                digest: desc.digest.clone(),
            }),
            Err(source) => Err(LayoutError::Read { path, source }),
        }
    }

    /// A file of the layout read whole, at most `limit` bytes ([`limits::read_file`]).
    fn read_bounded(
        &self,
        path: &Path,
        kind: &'static str,
        limit: u64,
    ) -> Result<Vec<u8>, LayoutError> {
        limits::read_file(path, kind, limit).map_err(|e| match e {
            limits::ReadFileError::Io(source) => LayoutError::Read {
                path: path.to_path_buf(),
                source,
            },
            limits::ReadFileError::TooLarge(source) => LayoutError::Model {
                dir: self.dir.clone(),
                source,
            },
        })
    }

    /// Reads a small blob whole (a config, at most [`limits::CONFIG_BYTES`]), checking its
    /// digest.
    pub fn read_blob(&self, digest: &str) -> Result<Bytes, LayoutError> {
        self.read_small(digest, "a config", limits::CONFIG_BYTES)
    }

    /// Reads a blob of at most `limit` bytes whole, checking its digest.
    fn read_small(
        &self,
        digest: &str,
        kind: &'static str,
        limit: u64,
    ) -> Result<Bytes, LayoutError> {
        let path = self.blob_path(digest)?;
        let data = self.read_bounded(&path, kind, limit).map_err(|e| match e {
            LayoutError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                LayoutError::MissingBlob {
                    dir: self.dir.clone(),
                    digest: digest.to_string(),
                }
            }
            e => e,
        })?;
        let actual = sha256_digest(&data);
        if actual != digest {
            return Err(LayoutError::Model {
                dir: self.dir.clone(),
                source: ModelError::DigestMismatch {
                    what: path.display().to_string(),
                    expected: digest.into(),
                    actual,
                },
            });
        }
        Ok(Bytes::from(data))
    }

    /// The manifest or index a tag (or, for `sha256:` strings, a digest) names.
    pub fn manifest(&self, reference: Option<&str>) -> Result<FetchedManifest, LayoutError> {
        let (digest, served) = match reference {
            Some(d) if d.starts_with("sha256:") => (d.to_string(), None),
            tag => {
                let desc = self.resolve(tag)?;
                (desc.digest, Some(desc.media_type))
            }
        };
        let bytes = self.read_small(&digest, "a manifest", limits::MANIFEST_BYTES)?;
        Ok(FetchedManifest {
            media_type: model::media_type_of(&bytes, served.as_deref()),
            bytes,
            digest,
        })
    }

    /// The single-platform image of a manifest's bytes, its blobs referring to this layout.
    fn image_of(&self, fetched: FetchedManifest) -> Result<Image, LayoutError> {
        let wrap = |source| LayoutError::Model {
            dir: self.dir.clone(),
            source,
        };
        let parsed = model::parse_manifest(&fetched.bytes, &fetched.digest).map_err(wrap)?;
        let config = self.blob(&parsed.config)?;
        let config = Blob::in_memory(
            config.media_type.clone(),
            config.digest.clone(),
            self.read_blob(&config.digest)?,
        );
        let layers = parsed
            .layers
            .iter()
            .map(|d| self.blob(d))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Image {
            manifest: fetched.bytes,
            manifest_media_type: fetched.media_type,
            digest: fetched.digest,
            config,
            layers,
        })
    }

    /// Reads the image `tag` names; an index is resolved to `platform` (default: linux and
    /// this machine's architecture).
    pub fn read_image_for(
        &self,
        tag: Option<&str>,
        platform: Option<&Platform>,
    ) -> Result<Image, LayoutError> {
        let top = self.manifest(tag)?;
        if !model::is_index(&top.media_type) {
            return self.image_of(top);
        }
        let index =
            model::parse_index(&top.bytes, &top.digest).map_err(|source| LayoutError::Model {
                dir: self.dir.clone(),
                source,
            })?;
        let wanted = platform.cloned().unwrap_or_else(host_platform);
        match model::pick_platform(&index, &wanted) {
            Some(d) => self.image_of(self.manifest(Some(&d.digest))?),
            None => Err(LayoutError::NoPlatform {
                dir: self.dir.clone(),
                digest: top.digest,
                platform: wanted.to_string(),
                available: model::platforms_text(&index),
            }),
        }
    }

    /// Reads the image `tag` names (an index resolved to this machine's platform).
    pub fn read_image(&self, tag: Option<&str>) -> Result<Image, LayoutError> {
        self.read_image_for(tag, None)
    }
}

/// linux and this machine's architecture.
pub fn host_platform() -> Platform {
    Platform {
        os: "linux".into(),
        architecture: super::registry::host_arch().into(),
        variant: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::copy::{Endpoint, Engine, Source, locations::BlobLocations};
    use super::super::layer::{LayerBuilder, Owner};
    use super::super::model::{Artifact, ImageBuilder};
    use super::super::registry::RegistryOptions;
    use super::*;

    /// Writes `image` into `layout` as every move does: through the copy engine.
    fn store(layout: &Layout, image: &Image, tag: Option<&str>) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let engine = Engine::with_locations(&RegistryOptions::default(), BlobLocations::new(None));
        let dest = Endpoint::Layout {
            layout: layout.clone(),
            tag: tag.map(str::to_string),
        };
        let built = Artifact::Image(image.clone());
        rt.block_on(engine.copy(Source::Built(&built), &dest, None))
            .unwrap();
    }

    fn image(content: &'static [u8]) -> Image {
        let mut l = LayerBuilder::new(0);
        l.file("f", content, 0o644, Owner::Root).unwrap();
        ImageBuilder::new("linux", "amd64", 0)
            .layer(l.finish().unwrap(), "t")
            .build()
    }

    #[test]
    fn write_then_read_round_trips_and_tags_move() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let (a, b) = (image(b"a"), image(b"b"));
        store(&layout, &a, Some("v1"));
        store(&layout, &b, Some("v2"));
        assert_eq!(layout.read_image(Some("v1")).unwrap().digest, a.digest);
        assert!(matches!(
            layout.read_image(None),
            Err(LayoutError::Ambiguous { .. })
        ));
        store(&layout, &b, Some("v1"));
        assert_eq!(layout.read_image(Some("v1")).unwrap().digest, b.digest);
        assert_eq!(layout.index().unwrap().manifests.len(), 2);
        let err = layout.read_image(Some("nope")).unwrap_err().to_string();
        assert!(err.contains("v1, v2"), "{err}");
    }

    #[test]
    fn corrupted_blob_is_detected() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let a = image(b"a");
        store(&layout, &a, None);
        let hex = digest_hex(&a.config.digest).unwrap();
        std::fs::write(dir.path().join("blobs/sha256").join(hex), b"garbage").unwrap();
        let err = layout.read_image(None).unwrap_err().to_string();
        assert!(err.contains("digest mismatch"), "{err}");
        // A layer is checked for size when read, for content when streamed.
        let b = image(b"b");
        let layout = Layout::new(dir.path().join("b"));
        store(&layout, &b, None);
        let hex = digest_hex(&b.layers[0].digest).unwrap();
        std::fs::write(dir.path().join("b/blobs/sha256").join(hex), b"garbage").unwrap();
        let err = layout.read_image(None).unwrap_err().to_string();
        assert!(err.contains("digest mismatch"), "{err}");
    }
}
