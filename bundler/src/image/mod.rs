//! OCI images without a daemon: reproducible layers, OCI image layouts and a registry client.
//!
//! The pieces, one job each:
//! - [`layer`]: deterministic tar+gzip layers (sorted entries, fixed owners, mtimes and gzip
//!   header) with their diffID and digest.
//! - [`model`]: the manifest and config JSON we write and read, and [`model::ImageBuilder`],
//!   which turns layers plus settings into an [`model::Image`] (exact bytes, exact digests).
//! - [`layout`]: OCI image layout directories (`oci:<dir>[:tag]`).
//! - [`reference`]: telling `oci:` destinations from registry references.
//! - [`auth`]: credentials from `--creds`, podman's auth.json and docker's config.json.
//! - [`registry`]: the registry client (oci-client underneath): HEAD before upload, parallel
//!   blob pushes, manifest last, retries.
//! - [`unpack`]: applying layers to a directory (pull to a rootfs).
//! - [`elf`]: reading ELF headers to find a dynamic binary's shared-library closure.
//! - [`rootfs`]: the small distroless base every application image gets (passwd, group, CA
//!   certificates) and the binary layers.
//! - [`bundle`], [`operator`], [`catalog`]: the three kinds of image `olm` builds.
//! - [`transfer`]: moving whole images between layouts and registries (`copy`, `pull_to_dir`).

pub mod auth;
pub mod bundle;
pub mod catalog;
pub mod elf;
pub mod layer;
pub mod layout;
pub mod model;
pub mod operator;
pub mod reference;
pub mod registry;
pub mod rootfs;
pub mod transfer;
pub mod unpack;

use sha2::{Digest as _, Sha256};

/// `sha256:<hex>` of `bytes`, the digest form used everywhere in OCI.
pub fn sha256_digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The hex part of a `sha256:<hex>` digest, or `None` when it is not one (only sha256 is
/// written by this tool; other algorithms are refused rather than mishandled).
pub fn digest_hex(digest: &str) -> Option<&str> {
    let hex = digest.strip_prefix("sha256:")?;
    (hex.len() == 64
        && hex
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    .then_some(hex)
}

/// The build time of images: `SOURCE_DATE_EPOCH` when set (reproducible-builds.org), else 0,
/// so the same inputs give the same digest on every machine and run.
pub fn source_date_epoch() -> Result<u64, EpochError> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Err(_) => Ok(0),
        Ok(v) if v.trim().is_empty() => Ok(0),
        Ok(v) => v.trim().parse::<u64>().map_err(|_| EpochError(v)),
    }
}

/// `SOURCE_DATE_EPOCH` that is not a number of seconds.
#[derive(Debug, thiserror::Error)]
#[error("SOURCE_DATE_EPOCH={0:?}: expected a whole number of seconds since 1970-01-01")]
pub struct EpochError(String);

/// RFC 3339 UTC text for a Unix time, as image configs carry it (`1970-01-01T00:00:00Z`).
pub fn rfc3339(epoch: u64) -> String {
    let days = (epoch / 86_400) as i64;
    let secs = epoch % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm), valid for the whole u64 second range we
    // accept in practice.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// Human-readable byte counts for progress lines (`1.2 MiB`).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_matches_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn digest_hex_accepts_only_sha256() {
        let d = sha256_digest(b"");
        assert_eq!(
            digest_hex(&d),
            Some("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        );
        assert_eq!(digest_hex("sha512:abc"), None);
        assert_eq!(digest_hex("sha256:../../etc"), None);
    }
}
