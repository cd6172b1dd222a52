//! The registry+v1 bundle image: one layer with `/manifests`, `/metadata` and (when present)
//! `/tests/scorecard`, and config labels equal to `metadata/annotations.yaml`, which is what
//! `bundle.Dockerfile` produces and what opm and OLM read when they unpack a bundle.

use std::path::{Path, PathBuf};

use crate::bundle::load::{BundleDir, LoadError, keys};
use crate::image::layer::{LayerBuilder, LayerError, Owner};
use crate::image::model::{Image, ImageBuilder};

#[derive(Debug, thiserror::Error)]
pub enum BundleImageError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{0}: no manifests/ directory; a bundle image needs /manifests")]
    NoManifests(PathBuf),
    #[error(
        "{0}: no metadata/annotations.yaml; the bundle image labels come from its `annotations` map"
    )]
    NoAnnotations(PathBuf),
    #[error("{path}: annotation {key:?} is missing; OLM needs it as an image label")]
    MissingKey { path: PathBuf, key: &'static str },
    #[error(transparent)]
    Layer(#[from] LayerError),
}

/// Builds the bundle image for the bundle directory `dir`. Files keep their bytes; owners,
/// modes (0644/0755) and times are normalised, so the digest depends on content only.
pub fn build_bundle_image(dir: &Path, created: u64) -> Result<Image, BundleImageError> {
    let bundle = BundleDir::load(dir)?;
    if !bundle.has_manifests_dir {
        return Err(BundleImageError::NoManifests(dir.to_path_buf()));
    }
    let Some(annotations) = bundle.annotations.clone() else {
        return Err(BundleImageError::NoAnnotations(dir.to_path_buf()));
    };
    for key in [keys::MEDIATYPE, keys::PACKAGE, keys::CHANNELS] {
        if !annotations.contains_key(key) {
            return Err(BundleImageError::MissingKey {
                path: dir.join("metadata/annotations.yaml"),
                key,
            });
        }
    }
    let mut layer = LayerBuilder::new(created);
    layer.tree(&dir.join("manifests"), "manifests", Owner::Root)?;
    layer.tree(&dir.join("metadata"), "metadata", Owner::Root)?;
    let scorecard = dir.join("tests/scorecard");
    if scorecard.is_dir() {
        layer.tree(&scorecard, "tests/scorecard", Owner::Root)?;
    }
    // Bundle images are FROM scratch and hold no executables: the platform is fixed so the
    // digest is the same on every build machine.
    Ok(ImageBuilder::new("linux", "amd64", created)
        .layer(layer.finish()?, "olm bundle build: /manifests /metadata")
        .labels(annotations)
        .build())
}
