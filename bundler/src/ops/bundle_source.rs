//! A bundle named on the command line: a directory, or an image (`oci:<dir>[:tag]` or a
//! registry reference) pulled and unpacked to a temporary directory first. One reading for
//! every command that takes "a bundle directory or image".

use std::path::Path;

use thiserror::Error;

use crate::confined::Tree;
use crate::grammar::image_ref;
use crate::image::registry::RegistryOptions;
use crate::image::transfer::{self, TransferError};
use crate::scratch::ScratchDir;

#[derive(Debug, Error)]
pub enum BundleSourceError {
    #[error("{0}: not a bundle directory or image")]
    NotABundle(String),
    #[error("cannot create a temporary directory: {0}")]
    TempDir(std::io::Error),
    #[error("cannot pull {reference}")]
    Pull {
        reference: String,
        #[source]
        source: TransferError,
    },
    #[error("{reference}: cannot open the unpacked image")]
    Unpacked {
        reference: String,
        #[source]
        source: std::io::Error,
    },
}

impl BundleSourceError {
    /// The argument names nothing usable (exit code 2), rather than an image that failed.
    pub fn is_usage(&self) -> bool {
        !matches!(self, Self::Pull { .. } | Self::Unpacked { .. })
    }
}

/// A bundle on the local file system; for an image, the unpacked copy lives as long as this
/// and is read confined to it.
#[derive(Debug)]
pub struct LocalBundle {
    tree: Tree,
    _unpacked: Option<ScratchDir>,
}

impl LocalBundle {
    /// Where the bundle's files are read from.
    pub fn tree(&self) -> &Tree {
        &self.tree
    }
}

/// Whether a command-line argument that is not an existing path names an image: an OCI
/// layout (`oci:`), or a reference with a registry, repository path, tag or digest that OLM's
/// reference grammar accepts (a bare word is taken for a missing directory).
pub fn names_an_image(arg: &str) -> bool {
    // host: the user's own argument
    arg.starts_with("oci:")
        || (!Path::new(arg).exists()
            && (arg.contains('/') || arg.contains(':') || arg.contains('@'))
            && image_ref::validate(arg).is_ok())
}

/// The bundle `arg` names, pulling an image with `registry`'s options.
pub async fn fetch(
    arg: &str,
    registry: &RegistryOptions,
) -> Result<LocalBundle, BundleSourceError> {
    let path = Path::new(arg);
    // host: the user's own argument, a bundle directory read with host calls
    if path.is_dir() {
        return Ok(LocalBundle {
            tree: Tree::host(path),
            _unpacked: None,
        });
    }
    if !names_an_image(arg) {
        return Err(BundleSourceError::NotABundle(arg.to_string()));
    }
    let tmp = ScratchDir::new().map_err(BundleSourceError::TempDir)?;
    let pulled = transfer::pull_to_dir(arg, tmp.path(), registry)
        .await
        .map_err(|source| BundleSourceError::Pull {
            reference: arg.to_string(),
            source,
        })?;
    let tree = pulled
        .tree()
        .map_err(|source| BundleSourceError::Unpacked {
            reference: arg.to_string(),
            source,
        })?;
    Ok(LocalBundle {
        tree,
        _unpacked: Some(tmp),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_name_images_only_when_they_read_as_references() {
        assert!(names_an_image("oci:layout:v1"));
        assert!(names_an_image("quay.io/org/bundle:v1"));
        assert!(names_an_image(
            "localhost:5000/b@sha256:0123456789012345678901234567890123456789012345678901234567890123"
        ));
        assert!(!names_an_image("bundle"));
        assert!(!names_an_image("UPPER/case:v1"));
        let dir = tempfile::tempdir().unwrap();
        assert!(!names_an_image(dir.path().to_str().unwrap()));
    }
}
