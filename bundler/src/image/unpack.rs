//! Applying an image's layers to a directory, the way a runtime builds a container rootfs:
//! in order, honouring whiteouts (`.wh.<name>` deletes, `.wh..wh..opq` empties a directory),
//! never writing outside the target (tar's `unpack_in` refuses `..` and symlink escapes).

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use flate2::read::GzDecoder;

use super::model::{Blob, Image};

/// Reads through to the end while hashing, so a layer whose content does not match its
/// digest fails the unpack (after the fact; the directory is a scratch area then).
struct Hashing<R> {
    inner: R,
    hasher: sha2::Sha256,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use sha2::Digest as _;
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UnpackError {
    #[error("{path}: cannot write: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("layer {digest}: {source}")]
    Layer {
        digest: String,
        #[source]
        source: std::io::Error,
    },
    #[error("layer {digest}: entry {entry:?} escapes the root")]
    Escape { digest: String, entry: String },
    #[error("layer {digest}: unsupported media type {media_type:?}")]
    MediaType { digest: String, media_type: String },
    #[error("layer {digest}: digest mismatch: the content has {actual}")]
    Digest { digest: String, actual: String },
}

fn safe_relative(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Normal(p) => out.push(p),
            Component::CurDir | Component::RootDir => {}
            _ => return None,
        }
    }
    Some(out)
}

fn remove_any(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Applies one layer blob to `root`.
pub fn apply_layer(root: &Path, blob: &Blob) -> Result<(), UnpackError> {
    let lerr = |source| UnpackError::Layer {
        digest: blob.digest.clone(),
        source,
    };
    let raw = blob.reader().map_err(lerr)?;
    let mut hashing = Hashing {
        inner: std::io::BufReader::with_capacity(super::blob::CHUNK, raw),
        hasher: <sha2::Sha256 as sha2::Digest>::new(),
    };
    let gzip = blob.media_type.ends_with("gzip");
    if !(gzip || blob.media_type.ends_with(".tar") || blob.media_type.ends_with("diff.tar")) {
        return Err(UnpackError::MediaType {
            digest: blob.digest.clone(),
            media_type: blob.media_type.clone(),
        });
    }
    let reader: Box<dyn Read + '_> = if gzip {
        Box::new(GzDecoder::new(&mut hashing))
    } else {
        Box::new(&mut hashing)
    };
    let mut archive = tar::Archive::new(reader);
    archive.set_preserve_permissions(true);
    archive.set_overwrite(true);
    archive.set_unpack_xattrs(false);
    for entry in archive.entries().map_err(lerr)? {
        let mut entry = entry.map_err(lerr)?;
        let raw = entry.path().map_err(lerr)?.into_owned();
        let Some(rel) = safe_relative(&raw) else {
            return Err(UnpackError::Escape {
                digest: blob.digest.clone(),
                entry: raw.display().to_string(),
            });
        };
        let name = rel.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(hidden) = name.strip_prefix(".wh.") {
            let parent = root.join(rel.parent().unwrap_or(Path::new("")));
            let result = if hidden == ".wh..opq" {
                match std::fs::read_dir(&parent) {
                    Ok(rd) => rd
                        .filter_map(Result::ok)
                        .try_for_each(|e| remove_any(&e.path())),
                    Err(_) => Ok(()),
                }
            } else {
                remove_any(&parent.join(hidden))
            };
            result.map_err(|source| UnpackError::Io {
                path: parent,
                source,
            })?;
            continue;
        }
        // A later layer may replace a directory by a file or the reverse.
        let target = root.join(&rel);
        if let Ok(meta) = std::fs::symlink_metadata(&target) {
            let entry_is_dir = entry.header().entry_type().is_dir();
            if meta.is_dir() != entry_is_dir || meta.file_type().is_symlink() {
                remove_any(&target).map_err(|source| UnpackError::Io {
                    path: target.clone(),
                    source,
                })?;
            }
        }
        let inside = entry.unpack_in(root).map_err(lerr)?;
        if !inside {
            return Err(UnpackError::Escape {
                digest: blob.digest.clone(),
                entry: raw.display().to_string(),
            });
        }
    }
    drop(archive);
    std::io::copy(&mut hashing, &mut std::io::sink()).map_err(lerr)?;
    let actual = format!(
        "sha256:{}",
        hex::encode(sha2::Digest::finalize(hashing.hasher))
    );
    if actual != blob.digest {
        return Err(UnpackError::Digest {
            digest: blob.digest.clone(),
            actual,
        });
    }
    Ok(())
}

/// Unpacks every layer of `image` into `root` (created if missing).
pub fn unpack_image(image: &Image, root: &Path) -> Result<(), UnpackError> {
    std::fs::create_dir_all(root).map_err(|source| UnpackError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    for layer in &image.layers {
        apply_layer(root, layer)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::layer::{LayerBuilder, Owner};
    use super::super::model::ImageBuilder;
    use super::*;

    #[test]
    fn layers_apply_in_order_with_whiteouts() {
        let mut a = LayerBuilder::new(0);
        a.file("etc/keep", &b"1"[..], 0o644, Owner::Root).unwrap();
        a.file("etc/gone", &b"2"[..], 0o644, Owner::Root).unwrap();
        a.file("opq/x", &b"3"[..], 0o644, Owner::Root).unwrap();
        let mut b = LayerBuilder::new(0);
        b.file("etc/.wh.gone", &b""[..], 0o644, Owner::Root)
            .unwrap();
        b.file("opq/.wh..wh..opq", &b""[..], 0o644, Owner::Root)
            .unwrap();
        b.file("etc/keep", &b"new"[..], 0o755, Owner::Root).unwrap();
        let image = ImageBuilder::new("linux", "amd64", 0)
            .layer(a.finish().unwrap(), "a")
            .layer(b.finish().unwrap(), "b")
            .build();
        let dir = tempfile::tempdir().unwrap();
        unpack_image(&image, dir.path()).unwrap();
        assert_eq!(std::fs::read(dir.path().join("etc/keep")).unwrap(), b"new");
        assert!(!dir.path().join("etc/gone").exists());
        assert!(!dir.path().join("opq/x").exists());
    }
}
