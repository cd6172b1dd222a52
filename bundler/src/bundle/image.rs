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
    build_bundle_image_over(dir, created, Default::default())
}

/// [`build_bundle_image`] keeping `labels` (an earlier build's, say) under the annotations:
/// an annotation wins over a label of the same key.
pub fn build_bundle_image_over(
    dir: &Path,
    created: u64,
    labels: std::collections::BTreeMap<String, String>,
) -> Result<Image, BundleImageError> {
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
        .labels(labels)
        .labels(annotations)
        .build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rebuild_keeps_the_earlier_labels_under_the_annotations() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
        std::fs::create_dir_all(dir.path().join("metadata")).unwrap();
        std::fs::write(dir.path().join("manifests/cm.yaml"), "kind: ConfigMap\n").unwrap();
        std::fs::write(
            dir.path().join("metadata/annotations.yaml"),
            "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: p\n  operators.operatorframework.io.bundle.channels.v1: stable\n",
        )
        .unwrap();
        let earlier = [
            ("vendor", "acme"),
            ("operators.operatorframework.io.bundle.package.v1", "old"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .into();
        let image = build_bundle_image_over(dir.path(), 0, earlier).unwrap();
        let labels = image.parsed_config().unwrap().config.labels;
        assert_eq!(labels["vendor"], "acme");
        assert_eq!(
            labels["operators.operatorframework.io.bundle.package.v1"],
            "p"
        );
        let plain = build_bundle_image(dir.path(), 0).unwrap();
        assert!(
            !plain
                .parsed_config()
                .unwrap()
                .config
                .labels
                .contains_key("vendor")
        );
    }
}
