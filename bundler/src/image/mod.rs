//! OCI images without a daemon: reproducible layers, OCI image layouts and a registry client.
//!
//! The pieces, one job each:
//! - [`layer`]: deterministic tar+gzip layers (sorted entries, fixed owners, mtimes and gzip
//!   header) with their diffID and digest.
//! - [`model`]: the manifest and config JSON we write and read, and [`model::ImageBuilder`],
//!   which turns layers plus settings into an [`model::Image`] (exact bytes, exact digests).
//! - [`layout`]: OCI image layout directories (`oci:<dir>[:tag]`).
//! - [`reference`]: telling `oci:` destinations from registry references.
//! - [`auth`]: credentials from `--creds`, podman's auth.json and docker's config.json
//!   (entries, credential helpers, identity tokens); the auth-file writer for login/logout.
//! - [`token`]: asking a registry's token server for a bearer token (a password, or an
//!   identity token traded as an OAuth2 refresh token).
//! - [`blob`]: where a blob's bytes are (memory, a spooled file, a layout's file), read and
//!   written in bounded pieces while hashing.
//! - [`registry`]: the distribution API spoken directly: auth flow, blobs, manifests, retries.
//! - [`copy`]: the one copy engine every image move goes through (streaming, parallel, HEAD
//!   and cross-repository mount before upload, resumable).
//! - [`unpack`]: applying layers to a directory (pull to a rootfs).
//! - [`elf`]: reading ELF headers to find a dynamic binary's shared-library closure.
//! - [`rootfs`]: the small distroless base every application image gets (passwd, group, CA
//!   certificates) and the binary layers.
//! - [`sbom`]: the SPDX SBOM of an image we built (files, Debian packages, Rust crates).
//! - [`operator`]: the operator image (bundle images are built by `bundle::image`, catalog
//!   images by `serve::image`).
//! - [`sign`]: signatures and attestations in cosign's formats (keys, payloads, the
//!   `sha256-<hex>.sig` and `.att` manifests), sign and verify.
//! - [`transfer`]: one-call moves by reference string (`store`, `copy`, `pull_to_dir`).

pub mod auth;
pub mod blob;
pub mod copy;
pub mod elf;
pub mod layer;
pub mod layout;
pub mod limits;
pub mod model;
pub mod operator;
pub mod reference;
pub mod registry;
pub mod rootfs;
pub mod sbom;
pub mod sign;
pub mod token;
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
