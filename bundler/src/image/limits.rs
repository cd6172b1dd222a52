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

/// What one image may unpack to, all its layers together: file bytes (a sparse file counted
/// by its full size, holes included; a file a later layer replaces still counted) and
/// entries. Above either, the unpack stops with the layer named, so a small layer that
/// expands without end (a gzip bomb, a sparse file declaring terabytes) cannot fill the disk
/// or run for hours. The defaults are far above the largest real catalog and bundle images
/// (a few GiB and a few hundred thousand files); the commands that unpack raise them with
/// `--max-unpack-bytes` and `--max-unpack-entries`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnpackLimits {
    pub bytes: u64,
    pub entries: u64,
}

/// [`UnpackLimits::bytes`] by default: 8 GiB.
pub const UNPACK_BYTES: u64 = 8 << 30;
/// [`UnpackLimits::entries`] by default.
pub const UNPACK_ENTRIES: u64 = 1_000_000;

impl Default for UnpackLimits {
    fn default() -> Self {
        UnpackLimits {
            bytes: UNPACK_BYTES,
            entries: UNPACK_ENTRIES,
        }
    }
}

/// A size as a flag takes it: bytes, or a number with `K`, `M`, `G`, `T` (powers of 1024,
/// an optional `i` and `B`: `512M`, `8GiB`, `1T`).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(digits);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{text:?}: expected a size such as 8G, 512MiB or 1073741824"))?;
    let shift = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => return Err(format!("{text:?}: unknown unit (use K, M, G or T)")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{text:?}: too large"))
}

/// A byte limit as text: `8 GiB`, `512 MiB`, or bytes when it is not a whole number of KiB.
pub fn bytes_limit_text(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 10 && n % (1 << 10) == 0 => format!("{} KiB", n >> 10),
        n => format!("{n} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_flags_write_them() {
        assert_eq!(parse_size("8G"), Ok(8 << 30));
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("1073741824"), Ok(1 << 30));
        assert_eq!(parse_size("2 KiB"), Ok(2048));
        assert!(parse_size("").is_err());
        assert!(parse_size("8X").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999T").is_err());
        assert_eq!(bytes_limit_text(8 << 30), "8 GiB");
        assert_eq!(bytes_limit_text(3 << 20), "3 MiB");
        assert_eq!(bytes_limit_text(1000), "1000 bytes");
    }
}
