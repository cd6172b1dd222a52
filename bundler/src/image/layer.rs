//! Deterministic image layers: the same entries give the same bytes, diffID and digest on every
//! machine and run.
//!
//! What makes a tar+gzip layer reproducible: entries in sorted path order with parents first,
//! ustar headers whose every field we set (owner 0 or 65532, no user/group names, mtime from
//! `SOURCE_DATE_EPOCH` or 0, modes normalised), and a gzip stream from one pinned backend and
//! level with a fixed header (mtime 0, no file name, OS byte 0xff).
//!
//! Files from disk are referenced, not read in: [`LayerBuilder::finish`] streams each one
//! through tar, the digest of the tar, gzip and the digest of the gzip into a temporary file,
//! so building a layer of any size takes a few hundred kilobytes of memory.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use flate2::{Compression, GzBuilder};

use super::blob::{BlobData, HashingWriter};

/// The gzip level of every layer we write. Fixed, because another level gives other bytes and
/// so another digest. 1 (fastest), as crane and ko use: measured with miniz_oxide it is 3-5x
/// faster than 6 for about 10-20% larger binaries and the same size for YAML.
pub const GZIP_LEVEL: u32 = 1;

/// Media type of the layers we write.
pub const MEDIA_TYPE_LAYER_GZIP: &str = "application/vnd.oci.image.layer.v1.tar+gzip";

/// The non-root user and group of application images (distroless and ko use the same id).
pub const NONROOT_ID: u64 = 65532;

/// Who owns an entry inside the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Root,
    Nonroot,
}

impl Owner {
    fn id(self) -> u64 {
        match self {
            Owner::Root => 0,
            Owner::Nonroot => NONROOT_ID,
        }
    }
}

#[derive(Debug, Clone)]
enum Kind {
    Dir,
    File(Bytes),
    /// A file on the host, read while the tar is written; its size when it was added.
    HostFile(PathBuf, u64),
    Symlink(String),
}

#[derive(Debug, Clone)]
struct Entry {
    kind: Kind,
    mode: u32,
    owner: Owner,
}

/// An entry that cannot go into a layer.
#[derive(Debug, thiserror::Error)]
pub enum LayerError {
    #[error("{path}: not a valid path inside an image (must be relative to / without `..`)")]
    BadPath { path: String },
    #[error("{path}: is both a directory and a file in the same layer")]
    Conflict { path: String },
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: unsupported file type (only files, directories and symlinks go into images)")]
    Unsupported { path: PathBuf },
    #[error("{path}: changed size while the layer was written ({expected} bytes, then {actual})")]
    Changed {
        path: PathBuf,
        expected: u64,
        actual: u64,
    },
    #[error("writing the layer: {0}")]
    Write(#[from] std::io::Error),
}

/// A finished layer: the compressed bytes and what the manifest and config need to know.
#[derive(Debug, Clone)]
pub struct Layer {
    /// The gzip-compressed tar, as pushed and stored (a temporary file).
    pub blob: BlobData,
    /// Size of the compressed bytes.
    pub size: u64,
    /// `sha256:` of the compressed bytes: the manifest descriptor's digest.
    pub digest: String,
    /// `sha256:` of the uncompressed tar: the config's `rootfs.diff_ids` entry.
    pub diff_id: String,
    /// Size of the uncompressed tar.
    pub uncompressed_size: u64,
}

impl Layer {
    pub fn size(&self) -> u64 {
        self.size
    }
}

/// Collects entries by path, then writes them out sorted. Parent directories are added
/// implicitly (mode 0755, root) so every file has its directory before it in the tar, as
/// runtimes that do not create missing parents require.
#[derive(Debug, Clone)]
pub struct LayerBuilder {
    mtime: u64,
    entries: BTreeMap<String, Entry>,
}

/// Normalises `path` to the form stored in tar headers: relative, `/`-separated, no `.`
/// components. Rejects `..` and empty paths.
fn clean_path(path: &str) -> Result<String, LayerError> {
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(LayerError::BadPath { path: path.into() });
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(LayerError::BadPath { path: path.into() });
    }
    Ok(parts.join("/"))
}

impl LayerBuilder {
    /// A builder whose entries all get `mtime` (seconds since the epoch).
    pub fn new(mtime: u64) -> Self {
        LayerBuilder {
            mtime,
            entries: BTreeMap::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn ensure_parents(&mut self, path: &str) -> Result<(), LayerError> {
        let mut end = 0;
        while let Some(i) = path[end..].find('/') {
            let parent = &path[..end + i];
            match self.entries.get(parent) {
                None => {
                    self.entries.insert(
                        parent.to_string(),
                        Entry {
                            kind: Kind::Dir,
                            mode: 0o755,
                            owner: Owner::Root,
                        },
                    );
                }
                Some(Entry {
                    kind: Kind::Dir, ..
                }) => {}
                Some(_) => {
                    return Err(LayerError::Conflict {
                        path: parent.to_string(),
                    });
                }
            }
            end += i + 1;
        }
        Ok(())
    }

    fn insert(&mut self, path: &str, entry: Entry) -> Result<(), LayerError> {
        let path = clean_path(path)?;
        self.ensure_parents(&path)?;
        let is_dir = matches!(entry.kind, Kind::Dir);
        if let Some(old) = self.entries.get(&path) {
            let old_is_dir = matches!(old.kind, Kind::Dir);
            if old_is_dir != is_dir {
                return Err(LayerError::Conflict { path });
            }
        }
        self.entries.insert(path, entry);
        Ok(())
    }

    /// Adds a directory (or sets the mode and owner of one added implicitly).
    pub fn dir(&mut self, path: &str, mode: u32, owner: Owner) -> Result<&mut Self, LayerError> {
        self.insert(
            path,
            Entry {
                kind: Kind::Dir,
                mode,
                owner,
            },
        )?;
        Ok(self)
    }

    /// Adds a regular file holding `data`.
    pub fn file(
        &mut self,
        path: &str,
        data: impl Into<Bytes>,
        mode: u32,
        owner: Owner,
    ) -> Result<&mut Self, LayerError> {
        self.insert(
            path,
            Entry {
                kind: Kind::File(data.into()),
                mode,
                owner,
            },
        )?;
        Ok(self)
    }

    /// Adds the regular file `host` from disk; its bytes are read when the layer is written.
    pub fn host_file(
        &mut self,
        path: &str,
        host: &Path,
        mode: u32,
        owner: Owner,
    ) -> Result<&mut Self, LayerError> {
        let meta = std::fs::metadata(host).map_err(|source| LayerError::Read {
            path: host.to_path_buf(),
            source,
        })?;
        self.insert(
            path,
            Entry {
                kind: Kind::HostFile(host.to_path_buf(), meta.len()),
                mode,
                owner,
            },
        )?;
        Ok(self)
    }

    /// Adds a symbolic link to `target` (kept verbatim: relative or absolute inside the image).
    pub fn symlink(&mut self, path: &str, target: &str) -> Result<&mut Self, LayerError> {
        self.insert(
            path,
            Entry {
                kind: Kind::Symlink(target.to_string()),
                mode: 0o777,
                owner: Owner::Root,
            },
        )?;
        Ok(self)
    }

    /// Adds the tree under `src` at `dest` inside the image, walking it in sorted order.
    /// Modes are normalised (0755 for directories and executables, 0644 otherwise) so the
    /// host's umask does not leak into the digest; hidden files are kept, symlinks stay links.
    pub fn tree(&mut self, src: &Path, dest: &str, owner: Owner) -> Result<&mut Self, LayerError> {
        let dest = clean_path(dest)?;
        self.dir(&dest, 0o755, owner)?;
        self.walk(src, &dest, owner)?;
        Ok(self)
    }

    fn walk(&mut self, dir: &Path, dest: &str, owner: Owner) -> Result<(), LayerError> {
        let read_err = |source| LayerError::Read {
            path: dir.to_path_buf(),
            source,
        };
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map_err(read_err)?
            .collect::<Result<_, _>>()
            .map_err(read_err)?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = entry.path();
            let name = entry.file_name();
            let Some(name) = name.to_str() else {
                return Err(LayerError::BadPath {
                    path: path.display().to_string(),
                });
            };
            let target = format!("{dest}/{name}");
            let meta = std::fs::symlink_metadata(&path).map_err(|source| LayerError::Read {
                path: path.clone(),
                source,
            })?;
            let ft = meta.file_type();
            if ft.is_symlink() {
                let link = std::fs::read_link(&path).map_err(|source| LayerError::Read {
                    path: path.clone(),
                    source,
                })?;
                self.symlink(&target, &link.to_string_lossy())?;
            } else if ft.is_dir() {
                self.dir(&target, 0o755, owner)?;
                self.walk(&path, &target, owner)?;
            } else if ft.is_file() {
                self.insert(
                    &target,
                    Entry {
                        kind: Kind::HostFile(path.clone(), meta.len()),
                        mode: normalised_mode(&meta),
                        owner,
                    },
                )?;
            } else {
                return Err(LayerError::Unsupported { path });
            }
        }
        Ok(())
    }

    /// Writes the tar, compresses it and hashes both forms, streaming into a temporary file.
    pub fn finish(&self) -> Result<Layer, LayerError> {
        let (file, path) = crate::scratch::ScratchFile::new()?;
        let gz_out = HashingWriter::new(io::BufWriter::with_capacity(super::blob::CHUNK, file));
        let gz = GzBuilder::new()
            .mtime(0)
            .write(gz_out, Compression::new(GZIP_LEVEL));
        let tar_out = HashingWriter::new(gz);
        let tar_out = self.write_tar(tar_out)?;
        let (gz, diff_id, uncompressed_size) = tar_out.finish();
        let gz_out = gz.finish()?;
        let (buffered, digest, size) = gz_out.finish();
        buffered
            .into_inner()
            .map_err(|e| e.into_error())?
            .sync_data()
            .ok();
        Ok(Layer {
            blob: BlobData::Spooled(Arc::new(path)),
            size,
            digest,
            diff_id,
            uncompressed_size,
        })
    }

    /// The uncompressed tar stream, in memory (for tests and small layers).
    pub fn tar(&self) -> Result<Vec<u8>, LayerError> {
        self.write_tar(Vec::new())
    }

    /// Writes the tar stream to `out` and returns it.
    fn write_tar<W: Write>(&self, out: W) -> Result<W, LayerError> {
        let mut builder = tar::Builder::new(out);
        for (path, entry) in &self.entries {
            let mut h = tar::Header::new_ustar();
            h.set_mtime(self.mtime);
            h.set_uid(entry.owner.id());
            h.set_gid(entry.owner.id());
            h.set_mode(entry.mode);
            match &entry.kind {
                Kind::Dir => {
                    h.set_entry_type(tar::EntryType::Directory);
                    h.set_size(0);
                    builder.append_data(&mut h, format!("{path}/"), std::io::empty())?;
                }
                Kind::File(data) => {
                    h.set_entry_type(tar::EntryType::Regular);
                    h.set_size(data.len() as u64);
                    builder.append_data(&mut h, path, &data[..])?;
                }
                Kind::HostFile(host, size) => {
                    h.set_entry_type(tar::EntryType::Regular);
                    h.set_size(*size);
                    let file = std::fs::File::open(host).map_err(|source| LayerError::Read {
                        path: host.clone(),
                        source,
                    })?;
                    let mut exact = Exact {
                        inner: file,
                        left: *size,
                    };
                    builder.append_data(&mut h, path, &mut exact)?;
                    let mut probe = [0u8; 1];
                    let extra =
                        exact
                            .inner
                            .read(&mut probe)
                            .map_err(|source| LayerError::Read {
                                path: host.clone(),
                                source,
                            })?;
                    if exact.left != 0 || extra != 0 {
                        return Err(LayerError::Changed {
                            path: host.clone(),
                            expected: *size,
                            actual: *size - exact.left + extra as u64,
                        });
                    }
                }
                Kind::Symlink(target) => {
                    h.set_entry_type(tar::EntryType::Symlink);
                    h.set_size(0);
                    builder.append_link(&mut h, path, target)?;
                }
            }
        }
        Ok(builder.into_inner()?)
    }
}

/// Reads at most `left` bytes; a file that shrank shows as `left > 0` at the end.
struct Exact<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Read for Exact<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let want = buf.len().min(self.left as usize);
        if want == 0 {
            return Ok(0);
        }
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

fn normalised_mode(meta: &std::fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    if meta.permissions().mode() & 0o111 != 0 {
        0o755
    } else {
        0o644
    }
}

/// gzip with the pinned level and a header without mtime or name.
pub fn gzip(data: &[u8]) -> Result<Vec<u8>, std::io::Error> {
    let mut enc = GzBuilder::new().mtime(0).write(
        Vec::with_capacity(data.len() / 3 + 64),
        Compression::new(GZIP_LEVEL),
    );
    enc.write_all(data)?;
    enc.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(mtime: u64) -> LayerBuilder {
        let mut b = LayerBuilder::new(mtime);
        b.file("z/last.txt", &b"z"[..], 0o644, Owner::Root).unwrap();
        b.file("/a/first.txt", &b"a"[..], 0o644, Owner::Nonroot)
            .unwrap();
        b.symlink("bin/sh-link", "/bin/tool").unwrap();
        b
    }

    #[test]
    fn same_entries_in_any_order_give_the_same_digest() {
        let one = sample(0).finish().unwrap();
        let mut other = LayerBuilder::new(0);
        other.symlink("bin/sh-link", "/bin/tool").unwrap();
        other
            .file("a/first.txt", &b"a"[..], 0o644, Owner::Nonroot)
            .unwrap();
        other
            .file("z/last.txt", &b"z"[..], 0o644, Owner::Root)
            .unwrap();
        let two = other.finish().unwrap();
        assert_eq!(one.digest, two.digest);
        assert_eq!(one.diff_id, two.diff_id);
        // gzip header: no mtime, no name, XFL 4 (fastest), OS 0xff (unknown).
        let bytes = std::fs::read(blob_path(&one)).unwrap();
        assert_eq!(&bytes[..10], &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 0xff]);
        // The same bytes as compressing the whole tar at once.
        let whole = gzip(&sample(0).tar().unwrap()).unwrap();
        assert_eq!(bytes, whole);
        assert_eq!(one.size, whole.len() as u64);
        assert_eq!(one.digest, crate::image::sha256_digest(&whole));
    }

    fn blob_path(l: &Layer) -> std::path::PathBuf {
        match &l.blob {
            BlobData::Spooled(p) => p.to_path_buf(),
            other => panic!("not spooled: {other:?}"),
        }
    }

    #[test]
    fn host_files_stream_and_match_in_memory_files() {
        let dir = tempfile::tempdir().unwrap();
        let host = dir.path().join("big");
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&host, &data).unwrap();
        let mut a = LayerBuilder::new(0);
        a.host_file("bin/big", &host, 0o755, Owner::Root).unwrap();
        let mut b = LayerBuilder::new(0);
        b.file("bin/big", data.clone(), 0o755, Owner::Root).unwrap();
        let (a, b) = (a.finish().unwrap(), b.finish().unwrap());
        assert_eq!((a.digest, a.diff_id), (b.digest, b.diff_id));
        // A file that changes size between adding and writing is an error, not a bad tar.
        let mut c = LayerBuilder::new(0);
        c.host_file("bin/big", &host, 0o755, Owner::Root).unwrap();
        std::fs::write(&host, b"short").unwrap();
        assert!(matches!(c.finish(), Err(LayerError::Changed { .. })));
    }

    #[test]
    fn mtime_changes_the_digest() {
        assert_ne!(
            sample(0).finish().unwrap().digest,
            sample(1).finish().unwrap().digest
        );
    }

    #[test]
    fn entries_are_sorted_with_parents_first_and_owners_fixed() {
        let tar = sample(7).tar().unwrap();
        let mut archive = tar::Archive::new(&tar[..]);
        let mut seen = Vec::new();
        for e in archive.entries().unwrap() {
            let e = e.unwrap();
            let h = e.header();
            seen.push((
                e.path().unwrap().display().to_string(),
                h.uid().unwrap(),
                h.mtime().unwrap(),
            ));
        }
        let paths: Vec<_> = seen.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(
            paths,
            [
                "a/",
                "a/first.txt",
                "bin/",
                "bin/sh-link",
                "z/",
                "z/last.txt"
            ]
        );
        assert_eq!(seen[1].1, NONROOT_ID);
        assert!(seen.iter().all(|s| s.2 == 7));
    }

    #[test]
    fn dotdot_and_file_dir_conflicts_are_errors() {
        let mut b = LayerBuilder::new(0);
        assert!(matches!(
            b.file("../etc/passwd", &b""[..], 0o644, Owner::Root),
            Err(LayerError::BadPath { .. })
        ));
        b.file("x", &b""[..], 0o644, Owner::Root).unwrap();
        assert!(matches!(
            b.file("x/y", &b""[..], 0o644, Owner::Root),
            Err(LayerError::Conflict { .. })
        ));
    }
}
