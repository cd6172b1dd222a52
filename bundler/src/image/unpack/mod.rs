//! Applying an image's layers to a directory, the way a runtime builds a container rootfs:
//! in order, honouring whiteouts (`.wh.<name>` deletes, `.wh..wh..opq` empties a directory of
//! what lower layers put there).
//!
//! A layer is untrusted input. Every operation (create, write, hard link, symlink, whiteout,
//! replace) goes through [`root::Root`], which resolves paths inside the directory and never
//! follows a link out of it; links are stored in a form that stays inside for later readers
//! too. Device nodes and FIFOs are not created, and set-user-ID, set-group-ID and sticky bits
//! are dropped: a catalog or bundle needs none of them.

mod root;

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, OpenOptions, Permissions};
use flate2::read::GzDecoder;
use tar::EntryType;

use super::model::{Blob, Image};
use crate::confined::RelPath;
pub use root::Refusal;
use root::{Root, link_text, remove_any};

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
    #[error("layer {digest}: entry {entry:?}: {reason}")]
    Entry {
        digest: String,
        entry: String,
        reason: Refusal,
    },
    #[error("layer {digest}: unsupported media type {media_type:?}")]
    MediaType { digest: String, media_type: String },
    #[error("layer {digest}: digest mismatch: the content has {actual}")]
    Digest { digest: String, actual: String },
}

/// The permission bits kept from an entry: no set-user-ID, set-group-ID or sticky bit.
const KEPT_MODE: u32 = 0o777;

/// One layer being applied: the root and what this layer has put in it (physical paths),
/// which an opaque whiteout keeps (it hides only lower layers).
struct Applier<'a> {
    root: &'a mut Root,
    unpacked: HashSet<PathBuf>,
}

impl Applier<'_> {
    fn entry<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> Result<(), Refusal> {
        let raw = entry.path()?.into_owned();
        let rel = relative(&raw)?;
        let (Some(name), parent) = (rel.file_name(), rel.parent().unwrap_or(Path::new(""))) else {
            // The root itself: it exists, and its mode is ours.
            return Ok(());
        };
        let name = name.to_os_string();
        if let Some(hidden) = name.to_str().and_then(|n| n.strip_prefix(".wh.")) {
            return self.whiteout(parent, hidden);
        }
        let kind = entry.header().entry_type();
        let mode = entry.header().mode().unwrap_or(0o644) & KEPT_MODE;
        match kind {
            EntryType::Directory => self.directory(parent, &name, mode),
            EntryType::Regular | EntryType::Continuous | EntryType::GNUSparse => {
                self.file(parent, &name, mode, entry)
            }
            EntryType::Symlink => {
                let target = entry.link_name()?.unwrap_or_default().into_owned();
                self.symlink(parent, &name, &target)
            }
            EntryType::Link => {
                let target = entry.link_name()?.unwrap_or_default().into_owned();
                self.hard_link(parent, &name, &target)
            }
            other => {
                tracing::debug!(entry = %raw.display(), kind = ?other, "not created");
                Ok(())
            }
        }
    }

    /// The parent directory of a new entry, made when missing; what is at `name` in it is
    /// removed unless it is a directory and `keep_dir` says a directory may stay.
    fn place(
        &mut self,
        parent: &Path,
        name: &OsStr,
        keep_dir: bool,
    ) -> Result<(Dir, PathBuf), Refusal> {
        let Some(resolved) = self.root.dir(parent, true)? else {
            return Err(Refusal::NotADirectory(parent.to_path_buf()));
        };
        let dir = resolved.dir.try_clone()?;
        let at = resolved.path.clone();
        let path = at.join(name);
        let replace = match dir.symlink_metadata(name) {
            Ok(m) => !(keep_dir && m.is_dir()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(e.into()),
        };
        if replace {
            remove_any(&dir, name)?;
            self.root.changed();
        }
        self.unpacked.insert(path);
        Ok((dir, at))
    }

    fn directory(&mut self, parent: &Path, name: &OsStr, mode: u32) -> Result<(), Refusal> {
        let (dir, _) = self.place(parent, name, true)?;
        match dir.create_dir(name) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e.into()),
        }
        // Owner access always: later entries are written into it.
        dir.set_permissions(name, permissions(mode | 0o700))?;
        Ok(())
    }

    fn file<R: Read>(
        &mut self,
        parent: &Path,
        name: &OsStr,
        mode: u32,
        content: &mut R,
    ) -> Result<(), Refusal> {
        let (dir, _) = self.place(parent, name, false)?;
        // create_new: an entry that appeared meanwhile (or a link) is never written through.
        let mut file = dir.open_with(name, OpenOptions::new().write(true).create_new(true))?;
        io::copy(content, &mut file)?;
        file.set_permissions(permissions(mode))?;
        Ok(())
    }

    fn symlink(&mut self, parent: &Path, name: &OsStr, target: &Path) -> Result<(), Refusal> {
        let (dir, at) = self.place(parent, name, false)?;
        dir.symlink_contents(link_text(&at, target), name)?;
        self.root.changed();
        Ok(())
    }

    fn hard_link(&mut self, parent: &Path, name: &OsStr, target: &Path) -> Result<(), Refusal> {
        let target_rel = relative(target)?;
        let refused = || Refusal::HardLinkTarget(target.to_path_buf());
        let (Some(target_name), target_parent) = (
            target_rel.file_name().map(OsStr::to_os_string),
            target_rel.parent().unwrap_or(Path::new("")).to_path_buf(),
        ) else {
            return Err(refused());
        };
        let source = match self.root.dir(&target_parent, false)? {
            Some(r) => r.dir.try_clone()?,
            None => return Err(refused()),
        };
        match source.symlink_metadata(&target_name) {
            Ok(m) if m.is_file() => {}
            _ => return Err(refused()),
        }
        let (dir, _) = self.place(parent, name, false)?;
        source.hard_link(&target_name, &dir, name)?;
        Ok(())
    }

    fn whiteout(&mut self, parent: &Path, hidden: &str) -> Result<(), Refusal> {
        if hidden.is_empty() || hidden == "." || hidden == ".." {
            return Err(Refusal::BadWhiteout(hidden.to_string()));
        }
        let Some(resolved) = self.root.dir(parent, false)? else {
            return Ok(());
        };
        let dir = resolved.dir.try_clone()?;
        let path = resolved.path.clone();
        if hidden == ".wh..opq" {
            self.clear(&dir, &path)?;
        } else {
            remove_any(&dir, OsStr::new(hidden))?;
        }
        self.root.changed();
        Ok(())
    }

    /// Empties `dir` of what lower layers put there, keeping this layer's entries.
    fn clear(&self, dir: &Dir, path: &Path) -> Result<(), Refusal> {
        for child in dir.entries()? {
            let child = child?;
            let name = child.file_name();
            let child_path = path.join(&name);
            if !self.unpacked.contains(&child_path) {
                remove_any(dir, &name)?;
            } else if child.file_type()?.is_dir() {
                self.clear(&dir.open_dir(&name)?, &child_path)?;
            }
        }
        Ok(())
    }
}

fn permissions(mode: u32) -> Permissions {
    Permissions::from_std(std::fs::Permissions::from_mode(mode))
}

/// An entry's name relative to the root, read as every path inside an image is
/// ([`RelPath::in_image_os`]): a leading `/` or `./` is dropped, as runtimes do; `..` is
/// refused.
fn relative(path: &Path) -> Result<PathBuf, Refusal> {
    RelPath::in_image_os(path.as_os_str())
        .map(|p| p.as_relative_path())
        .map_err(|_| Refusal::Escape)
}

/// Applies one layer blob to `root`.
pub fn apply_layer(root: &Path, blob: &Blob) -> Result<(), UnpackError> {
    let lerr = |source| UnpackError::Layer {
        digest: blob.digest.clone(),
        source,
    };
    let gzip = blob.media_type.ends_with("gzip");
    if !(gzip || blob.media_type.ends_with(".tar") || blob.media_type.ends_with("diff.tar")) {
        return Err(UnpackError::MediaType {
            digest: blob.digest.clone(),
            media_type: blob.media_type.clone(),
        });
    }
    let mut dir = Root::open(root).map_err(|source| UnpackError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    let raw = blob.reader().map_err(lerr)?;
    let mut hashing = Hashing {
        inner: std::io::BufReader::with_capacity(super::blob::CHUNK, raw),
        hasher: <sha2::Sha256 as sha2::Digest>::new(),
    };
    let reader: Box<dyn Read + '_> = if gzip {
        Box::new(GzDecoder::new(&mut hashing))
    } else {
        Box::new(&mut hashing)
    };
    let mut archive = tar::Archive::new(reader);
    let mut applier = Applier {
        root: &mut dir,
        unpacked: HashSet::new(),
    };
    for entry in archive.entries().map_err(lerr)? {
        let mut entry = entry.map_err(lerr)?;
        if let Err(reason) = applier.entry(&mut entry) {
            let entry = String::from_utf8_lossy(&entry.path_bytes())
                .chars()
                .take(512)
                .collect();
            return Err(UnpackError::Entry {
                digest: blob.digest.clone(),
                entry,
                reason,
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
mod tests;
