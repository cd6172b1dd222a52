//! Applying an image's layers to a directory, the way a runtime builds a container rootfs:
//! in order, honouring whiteouts (`.wh.<name>` deletes, `.wh..wh..opq` empties a directory of
//! what lower layers put there).
//!
//! A layer is untrusted input. Every operation (create, write, hard link, symlink, whiteout,
//! replace) goes through [`root::Root`], which resolves paths inside the directory and never
//! follows a link out of it; links are stored in a form that stays inside for later readers
//! too. Device nodes and FIFOs are not created, and set-user-ID, set-group-ID and sticky bits
//! are dropped: a catalog or bundle needs none of them.
//!
//! Expansion is bounded ([`UnpackLimits`]): every byte the decompressor hands the tar reader
//! counts (headers, skipped data, a sparse file's holes at their declared size), and so does
//! every entry, across all the layers of one image. A file whose declared size would pass the
//! limit is refused before it is written; sparse files are written with holes.

mod root;
mod sparse;

use std::cell::Cell;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, OpenOptions, Permissions};
use flate2::read::GzDecoder;
use tar::EntryType;

use super::limits::{UnpackLimits, bytes_limit_text};
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
    #[error(
        "layer {digest}: the image unpacks to more than {limit}, the limit on what one image may unpack to{at}; if the image is trusted, raise it with {flag}"
    )]
    Limit {
        digest: String,
        /// The limit, as text (`8 GiB`, `1000000 entries`).
        limit: String,
        flag: &'static str,
        /// ` (at entry "x")`, or nothing.
        at: String,
    },
    #[error("layer {digest}: interrupted")]
    Interrupted { digest: String },
}

/// Which limit an unpack passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Exceeded {
    Bytes,
    Entries,
}

/// What one image has unpacked so far against its [`UnpackLimits`], shared by its layers.
/// The counts live in cells so the reader under the tar stream and the entry writer both
/// keep them.
#[derive(Debug)]
pub struct Budget {
    limits: UnpackLimits,
    bytes: Cell<u64>,
    entries: Cell<u64>,
    exceeded: Cell<Option<Exceeded>>,
}

impl Budget {
    pub fn new(limits: UnpackLimits) -> Budget {
        Budget {
            limits,
            bytes: Cell::new(0),
            entries: Cell::new(0),
            exceeded: Cell::new(None),
        }
    }

    /// Counts `n` more bytes; an error once past the limit.
    fn take_bytes(&self, n: u64) -> io::Result<()> {
        let total = self.bytes.get().saturating_add(n);
        self.bytes.set(total);
        if total > self.limits.bytes {
            self.exceeded.set(Some(Exceeded::Bytes));
            return Err(io::Error::other("unpack limit reached"));
        }
        Ok(())
    }

    /// Whether `n` more bytes would pass the limit (a file's declared size, before writing).
    fn check_bytes(&self, n: u64) -> io::Result<()> {
        if self.bytes.get().saturating_add(n) > self.limits.bytes {
            self.exceeded.set(Some(Exceeded::Bytes));
            return Err(io::Error::other("unpack limit reached"));
        }
        Ok(())
    }

    fn take_entry(&self) -> bool {
        let n = self.entries.get() + 1;
        self.entries.set(n);
        if n > self.limits.entries {
            self.exceeded.set(Some(Exceeded::Entries));
            return false;
        }
        true
    }

    /// The bytes and entries counted so far.
    pub fn used(&self) -> (u64, u64) {
        (self.bytes.get(), self.entries.get())
    }

    /// The error for a stop caused by a limit, when one caused it.
    fn error(&self, digest: &str, entry: Option<String>) -> Option<UnpackError> {
        let (limit, flag) = match self.exceeded.get()? {
            Exceeded::Bytes => (bytes_limit_text(self.limits.bytes), "--max-unpack-bytes"),
            Exceeded::Entries => (
                format!("{} entries", self.limits.entries),
                "--max-unpack-entries",
            ),
        };
        Some(UnpackError::Limit {
            digest: digest.to_string(),
            limit,
            flag,
            at: entry
                .map(|e| format!(" (at entry {e:?})"))
                .unwrap_or_default(),
        })
    }
}

/// The most a PAX extended header or a GNU long name may hold (Go's archive/tar's
/// `maxSpecialFileSize`): the tar reader holds it whole in memory.
const EXTENDED_HEADER_BYTES: u64 = 1 << 20;

/// Counts the tar stream's bytes as the tar reader takes them from the decompressor, and
/// refuses an extended header (PAX, GNU long name) larger than [`EXTENDED_HEADER_BYTES`]
/// before the tar reader reads it into memory.
struct Counted<'b, R> {
    inner: R,
    budget: &'b Budget,
    /// Bytes of this layer's tar stream read so far.
    pos: u64,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // The tar reader asks for a header as one 512-byte read: fill it whole, so a header
        // is always seen in one piece however the decompressor splits its output.
        let mut n = self.inner.read(buf)?;
        if buf.len() == 512 {
            while n > 0 && n < 512 {
                match self.inner.read(&mut buf[n..])? {
                    0 => break,
                    m => n += m,
                }
            }
        }
        self.budget.take_bytes(n as u64)?;
        if n == 512 && self.pos.is_multiple_of(512) {
            check_extended_header(buf)?;
        }
        self.pos += n as u64;
        Ok(n)
    }
}

/// Refuses `block` when it is a header (its checksum holds) of a PAX extended header or a GNU
/// long name or link declaring more than [`EXTENDED_HEADER_BYTES`].
fn check_extended_header(block: &[u8]) -> io::Result<()> {
    if !matches!(block[156], b'x' | b'g' | b'L' | b'K') {
        return Ok(());
    }
    let octal = |field: &[u8]| -> Option<u64> {
        let text = std::str::from_utf8(field).ok()?;
        let text = text.trim_matches(|c: char| c == ' ' || c == '\0');
        u64::from_str_radix(text, 8).ok()
    };
    let stored = octal(&block[148..156]);
    let sum: u64 = block
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u64::from(*b)
            }
        })
        .sum();
    if stored != Some(sum) {
        return Ok(());
    }
    let size = match block[124] & 0x80 {
        0 => octal(&block[124..136]).unwrap_or(0),
        _ => block[128..136].iter().fold(0u64, |n, b| {
            n.saturating_mul(256).saturating_add(u64::from(*b))
        }),
    };
    if size > EXTENDED_HEADER_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "an extended header (PAX or GNU long name) of {size} bytes, more than the {} a tar reader holds (Go's archive/tar refuses it too)",
                bytes_limit_text(EXTENDED_HEADER_BYTES)
            ),
        ));
    }
    Ok(())
}

/// The permission bits kept from an entry: no set-user-ID, set-group-ID or sticky bit.
const KEPT_MODE: u32 = 0o777;

/// One layer being applied: the root and what this layer has put in it (physical paths),
/// which an opaque whiteout keeps (it hides only lower layers).
struct Applier<'a> {
    root: &'a mut Root,
    unpacked: HashSet<PathBuf>,
    budget: &'a Budget,
}

impl Applier<'_> {
    fn entry<R: Read>(&mut self, entry: &mut tar::Entry<'_, R>) -> Result<(), Refusal> {
        let kind = entry.header().entry_type();
        // A PAX sparse file (GNU tar's 0.x and 1.0) is a regular entry with a real name and
        // size in its records.
        let pax_sparse = match kind {
            EntryType::Regular | EntryType::Continuous => match entry.pax_extensions()? {
                Some(records) => sparse::pax_sparse(
                    records
                        .filter_map(Result::ok)
                        .map(|r| (r.key_bytes(), r.value_bytes())),
                )?,
                None => None,
            },
            _ => None,
        };
        let raw = match pax_sparse.as_ref().and_then(|s| s.name.as_ref()) {
            Some(name) => PathBuf::from(std::ffi::OsStr::from_bytes(name)),
            None => entry.path()?.into_owned(),
        };
        let rel = relative(&raw)?;
        let (Some(name), parent) = (rel.file_name(), rel.parent().unwrap_or(Path::new(""))) else {
            // The root itself: it exists, and its mode is ours.
            return Ok(());
        };
        let name = name.to_os_string();
        if let Some(hidden) = name.to_str().and_then(|n| n.strip_prefix(".wh.")) {
            return self.whiteout(parent, hidden);
        }
        let mode = entry.header().mode().unwrap_or(0o644) & KEPT_MODE;
        match kind {
            EntryType::Directory => self.directory(parent, &name, mode),
            EntryType::Regular | EntryType::Continuous => match pax_sparse {
                Some(s) => self.pax_sparse_file(parent, &name, mode, entry, s),
                None => self.file(parent, &name, mode, entry),
            },
            EntryType::GNUSparse => {
                // The real size counts (the stored data is counted as it is read).
                let (real, stored) = (entry.size(), entry.header().entry_size()?);
                self.budget.check_bytes(real)?;
                self.budget.take_bytes(real.saturating_sub(stored))?;
                let (dir, _) = self.place(parent, &name, false)?;
                let mut file = create(&dir, &name)?;
                sparse::copy_sparse(&mut file, entry)?;
                file.set_permissions(std::fs::Permissions::from_mode(mode))?;
                Ok(())
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
        entry: &mut tar::Entry<'_, R>,
    ) -> Result<(), Refusal> {
        // Refused before anything is written when its declared size would pass the limit.
        self.budget.check_bytes(entry.size())?;
        let (dir, _) = self.place(parent, name, false)?;
        let mut file = create(&dir, name)?;
        io::copy(entry, &mut file)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        Ok(())
    }

    /// A PAX sparse file: its segments written at their offsets, the holes left as holes.
    fn pax_sparse_file<R: Read>(
        &mut self,
        parent: &Path,
        name: &OsStr,
        mode: u32,
        entry: &mut tar::Entry<'_, R>,
        facts: sparse::PaxSparse,
    ) -> Result<(), Refusal> {
        let stored = entry.size();
        self.budget.check_bytes(facts.real_size)?;
        let (map, taken) = match facts.map {
            Some(map) => (map, 0),
            None => sparse::read_map_1x0(entry, stored)?,
        };
        let data = stored - taken;
        sparse::check_map(&map, facts.real_size, data)?;
        self.budget
            .take_bytes(facts.real_size.saturating_sub(data))?;
        let (dir, _) = self.place(parent, name, false)?;
        let mut file = create(&dir, name)?;
        sparse::write_segments(&mut file, entry, &map, facts.real_size)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
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

/// A new file `name` in `dir`, as a std file (for seeks and lengths). `create_new`: an entry
/// that appeared meanwhile (or a link) is never written through.
fn create(dir: &Dir, name: &OsStr) -> io::Result<std::fs::File> {
    let file = dir.open_with(name, OpenOptions::new().write(true).create_new(true))?;
    Ok(file.into_std())
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

/// Applies one layer blob to `root`, within the default [`UnpackLimits`] for this layer alone.
pub fn apply_layer(root: &Path, blob: &Blob) -> Result<(), UnpackError> {
    apply_layer_within(root, blob, &Budget::new(UnpackLimits::default()))
}

/// Applies one layer blob to `root`, counting what it unpacks to against `budget` (one
/// budget for all the layers of an image).
pub fn apply_layer_within(root: &Path, blob: &Blob, budget: &Budget) -> Result<(), UnpackError> {
    let lerr = |source| UnpackError::Layer {
        digest: blob.digest.clone(),
        source,
    };
    // What a stop is blamed on: the limit when one was passed, else the error itself.
    let limit_or =
        |err: UnpackError, entry: Option<String>| budget.error(&blob.digest, entry).unwrap_or(err);
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
    let mut archive = tar::Archive::new(Counted {
        inner: reader,
        budget,
        pos: 0,
    });
    let mut applier = Applier {
        root: &mut dir,
        unpacked: HashSet::new(),
        budget,
    };
    for entry in archive.entries().map_err(|e| limit_or(lerr(e), None))? {
        let mut entry = entry.map_err(|e| limit_or(lerr(e), None))?;
        let name = |entry: &tar::Entry<'_, _>| {
            String::from_utf8_lossy(&entry.path_bytes())
                .chars()
                .take(512)
                .collect::<String>()
        };
        if crate::scratch::interrupted() {
            return Err(UnpackError::Interrupted {
                digest: blob.digest.clone(),
            });
        }
        if !budget.take_entry() {
            let at = Some(name(&entry));
            return Err(limit_or(lerr(io::Error::other("too many entries")), at));
        }
        if let Err(reason) = applier.entry(&mut entry) {
            let entry = name(&entry);
            let refused = UnpackError::Entry {
                digest: blob.digest.clone(),
                entry: entry.clone(),
                reason,
            };
            return Err(limit_or(refused, Some(entry)));
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

/// Unpacks every layer of `image` into `root` (created if missing), within `limits`.
pub fn unpack_image(image: &Image, root: &Path) -> Result<(), UnpackError> {
    unpack_image_within(image, root, UnpackLimits::default())
}

/// [`unpack_image`] within `limits`.
pub fn unpack_image_within(
    image: &Image,
    root: &Path,
    limits: UnpackLimits,
) -> Result<(), UnpackError> {
    std::fs::create_dir_all(root).map_err(|source| UnpackError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    let budget = Budget::new(limits);
    for layer in &image.layers {
        apply_layer_within(root, layer, &budget)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
