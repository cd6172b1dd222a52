//! OCI image layout directories: `oci-layout`, `index.json` and `blobs/sha256/<hex>`.
//!
//! Writing is additive and crash-safe: blobs are content-addressed and written atomically
//! first, `index.json` last, so a reader never sees an index entry whose blobs are missing.
//! A tag is the `org.opencontainers.image.ref.name` annotation of an index entry, as skopeo
//! and the image spec use it; writing a tag moves it (the old entry is dropped).

use std::path::{Path, PathBuf};

use bytes::Bytes;

use super::model::{
    ANNOTATION_REF_NAME, Descriptor, Image, Index, MEDIA_TYPE_OCI_INDEX, ModelError,
};
use super::{digest_hex, sha256_digest};
use crate::atomic_write;

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
    #[error("{dir}: {digest} is an image index; only single-platform images are supported here")]
    Nested { dir: PathBuf, digest: String },
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

    fn blob_path(&self, digest: &str) -> Result<PathBuf, LayoutError> {
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

    /// Stores a blob unless it is already there.
    pub fn write_blob(&self, digest: &str, data: &[u8]) -> Result<(), LayoutError> {
        if self.has_blob(digest, data.len() as u64) {
            return Ok(());
        }
        let path = self.blob_path(digest)?;
        atomic_write::write_atomic(&path, data)?;
        Ok(())
    }

    /// Reads a blob and checks its digest.
    pub fn read_blob(&self, digest: &str) -> Result<Bytes, LayoutError> {
        let path = self.blob_path(digest)?;
        let data = std::fs::read(&path).map_err(|source| LayoutError::Read {
            path: path.clone(),
            source,
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

    /// The layout's index.json, or an empty index when the directory is new.
    pub fn index(&self) -> Result<Index, LayoutError> {
        let path = self.dir.join("index.json");
        match std::fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes).map_err(|source| LayoutError::Json { path, source })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Index {
                schema_version: 2,
                media_type: Some(MEDIA_TYPE_OCI_INDEX.into()),
                manifests: Vec::new(),
                annotations: Default::default(),
            }),
            Err(source) => Err(LayoutError::Read { path, source }),
        }
    }

    /// Writes every blob of `image`, then points `tag` at it in index.json.
    pub fn write_image(&self, image: &Image, tag: Option<&str>) -> Result<(), LayoutError> {
        let tag = tag.unwrap_or(DEFAULT_TAG);
        atomic_write::write_atomic(&self.dir.join(OCI_LAYOUT), LAYOUT_CONTENT)?;
        for blob in image.blobs() {
            self.write_blob(&blob.digest, &blob.data)?;
        }
        self.write_blob(&image.digest, &image.manifest)?;

        let mut index = self.index()?;
        let mut entry = Descriptor {
            media_type: image.manifest_media_type.clone(),
            digest: image.digest.clone(),
            size: image.manifest.len() as u64,
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
            Some(i) => index.manifests[i] = entry,
            None => index.manifests.push(entry),
        }
        let bytes = serde_json::to_vec(&index).map_err(|source| LayoutError::Json {
            path: self.dir.join("index.json"),
            source,
        })?;
        atomic_write::write_atomic(&self.dir.join("index.json"), &bytes)?;
        Ok(())
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

    /// Reads the image `tag` names (see [`Layout::resolve`]), checking every digest.
    pub fn read_image(&self, tag: Option<&str>) -> Result<Image, LayoutError> {
        let desc = self.resolve(tag)?;
        if desc.media_type == MEDIA_TYPE_OCI_INDEX
            || desc.media_type == super::model::MEDIA_TYPE_DOCKER_LIST
        {
            return Err(LayoutError::Nested {
                dir: self.dir.clone(),
                digest: desc.digest,
            });
        }
        let manifest = self.read_blob(&desc.digest)?;
        Image::assemble(
            manifest,
            Some(&desc.media_type),
            |d| self.read_blob(&d.digest),
            |source| LayoutError::Model {
                dir: self.dir.clone(),
                source,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::layer::{LayerBuilder, Owner};
    use super::super::model::ImageBuilder;
    use super::*;

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
        layout.write_image(&a, Some("v1")).unwrap();
        layout.write_image(&b, Some("v2")).unwrap();
        assert_eq!(layout.read_image(Some("v1")).unwrap().digest, a.digest);
        assert!(matches!(
            layout.read_image(None),
            Err(LayoutError::Ambiguous { .. })
        ));
        layout.write_image(&b, Some("v1")).unwrap();
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
        layout.write_image(&a, None).unwrap();
        let hex = digest_hex(&a.layers[0].digest).unwrap();
        std::fs::write(dir.path().join("blobs/sha256").join(hex), b"garbage").unwrap();
        let err = layout.read_image(None).unwrap_err().to_string();
        assert!(err.contains("digest mismatch"), "{err}");
    }
}
