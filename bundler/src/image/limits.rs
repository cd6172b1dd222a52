//! Bounds on what `olm` reads whole from a registry, an OCI layout or a mirror archive. Every
//! such document is someone else's input: without a bound, a registry (or a layout carried
//! across an air gap) that serves a manifest padded to gigabytes makes `olm` hold it all in
//! memory before it can tell. The figures are containers-image's (its `iolimits`) where it
//! has one, so what `olm` refuses is what podman, skopeo and CRI-O refuse.

use std::path::Path;

/// A manifest or an index (containers-image's `MaxManifestBodySize`; distribution refuses
/// larger pushes too).
pub const MANIFEST_BYTES: u64 = 4 << 20;
/// An image config.
pub const CONFIG_BYTES: u64 = 8 << 20;
/// One signature layer (a simple-signing payload): a digest, a repository and the signer's
/// annotations, a few hundred bytes in practice.
pub const SIGNATURE_LAYER_BYTES: u64 = 64 << 10;
/// One attestation layer (a DSSE envelope): an SBOM of a large image is a few MiB, and
/// base64 in the envelope adds a third.
pub const ATTESTATION_LAYER_BYTES: u64 = 64 << 20;
/// All the layers of one attachment manifest together (each `attest` adds one, so a tag
/// attested on every release grows).
pub const ATTACHMENT_TOTAL_BYTES: u64 = 256 << 20;
/// A layout's `index.json`, which has one entry per tag (a mirror archive tags every image
/// it carries).
pub const LAYOUT_INDEX_BYTES: u64 = 64 << 20;
/// The images one index may list: multi-platform indexes have a handful, so thousands mean
/// an index made to fan a reader out.
pub const INDEX_ENTRIES: usize = 4096;

/// `n` bytes as people read sizes: `5242880 bytes (5.0 MiB)`.
pub fn size_text(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{n} bytes ({:.1} MiB)", n as f64 / f64::from(1 << 20))
    } else {
        format!("{n} bytes")
    }
}

/// A limit as text: `4 MiB`, `64 KiB`.
pub fn limit_text(n: u64) -> String {
    if n >= 1 << 20 {
        format!("{} MiB", n >> 20)
    } else {
        format!("{} KiB", n >> 10)
    }
}

/// Why a bounded file read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadFileError {
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    TooLarge(#[from] super::model::ModelError),
}

/// Reads the file at `path` (a layout's or an archive's document) whole, refusing more than
/// `limit` bytes and anything that is not a regular file. The read itself is bounded, not only
/// a size looked up first: a crafted layout may hold `index.json` as a link to `/dev/zero` or
/// a FIFO, which reports no size and never ends.
pub fn read_file(path: &Path, kind: &'static str, limit: u64) -> Result<Vec<u8>, ReadFileError> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file").into());
    }
    // The size the file says it has, for the message; the bounded read below is the guard.
    super::model::check_size(&path.display().to_string(), kind, meta.len(), limit)?;
    let mut data = Vec::with_capacity(meta.len().min(limit) as usize);
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut data)?;
    super::model::check_size(&path.display().to_string(), kind, data.len() as u64, limit)?;
    Ok(data)
}

/// [`read_file`] of the file `rel` of `tree` (an unpacked image, read confined to it).
pub fn read_tree_file(
    tree: &crate::confined::Tree,
    rel: &crate::confined::RelPath,
    kind: &'static str,
    limit: u64,
) -> Result<Vec<u8>, ReadFileError> {
    let shown = tree.shown(rel).display().to_string();
    match tree.read_bounded(rel, limit)? {
        Some(data) => Ok(data),
        None => Err(super::model::ModelError::TooLarge {
            what: shown,
            kind,
            size: tree
                .metadata(rel)
                .map_or(limit + 1, |m| m.len.max(limit + 1)),
            limit,
        }
        .into()),
    }
}
