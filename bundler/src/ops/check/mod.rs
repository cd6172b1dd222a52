//! `olm check operator` and `olm check container`: preflight's policies run on a bundle
//! (directory or image) and on an image (registry or OCI layout), offline unless a cluster
//! is given for DeployableByOLM. The checks are [`crate::certify`]'s; this module fetches
//! and unpacks, runs them, and writes preflight's artifacts directory.

use std::path::{Path, PathBuf};

use crate::atomic_write;
use crate::certify::report::Report;

pub mod container;
pub mod deploy;
pub mod operator;

/// Where and what to write besides stdout.
#[derive(Debug, Clone, Default)]
pub struct ArtifactOptions {
    /// preflight's `--artifacts` directory; nothing is written when `None`.
    pub dir: Option<PathBuf>,
    /// Also write `results-junit.xml` (preflight's `--junit`).
    pub junit: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    /// The argument names nothing usable (exit 2).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Source(#[from] crate::ops::bundle_source::BundleSourceError),
    #[error("cannot read {reference}")]
    Image {
        reference: String,
        #[source]
        source: crate::image::transfer::TransferError,
    },
    #[error("{0}")]
    Io(String),
    #[error(transparent)]
    Write(#[from] atomic_write::WriteError),
}

impl CheckError {
    pub fn is_usage(&self) -> bool {
        match self {
            CheckError::Usage(_) => true,
            CheckError::Source(e) => e.is_usage(),
            _ => false,
        }
    }
}

/// The checks' reasons, fixes and notes, one block per check: what preflight writes to
/// `preflight.log`.
pub fn log_text(report: &Report) -> String {
    report.to_text(&format!("checks of {}", report.image))
}

/// Writes `results.json`, `results-junit.xml` (when asked), `checks.log` and `extra` files
/// (name, bytes) into `dir`, each atomically.
pub fn write_artifacts(
    dir: &Path,
    report: &Report,
    junit: bool,
    extra: &[(String, Vec<u8>)],
) -> Result<(), CheckError> {
    std::fs::create_dir_all(dir).map_err(|e| CheckError::Io(format!("{}: {e}", dir.display())))?;
    atomic_write::write_atomic(&dir.join("results.json"), report.to_json().as_bytes())?;
    if junit {
        atomic_write::write_atomic(&dir.join("results-junit.xml"), report.to_junit().as_bytes())?;
    }
    atomic_write::write_atomic(&dir.join("checks.log"), log_text(report).as_bytes())?;
    for (name, bytes) in extra {
        atomic_write::write_atomic(&dir.join(name), bytes)?;
    }
    Ok(())
}
