//! Start-up: the catalog read once and turned into what the runtime serves.
//!
//! - [`build`]: the validated model converted to the index and the payload file.
//! - [`cache`]: `--cache-dir`: the digest of the catalog files, building, checking and opening
//!   the cache (a stale cache is rebuilt, or refused when integrity is enforced).
//! - [`catalogd_content`]: the body of catalogd's `/api/v1/all` and the blobs' places in it.

pub mod build;
pub mod cache;
pub mod catalogd_content;
