//! The recorded operator image pin (`pinned-operator-image` in release.yaml).
//!
//! The CSV of a release runs the operator image by digest, and that digest comes from bytes
//! (the release binary, the host's shared libraries it packs) that another machine does not
//! reproduce. Recording the pin next to the bundle config makes it an input of bundle/, like
//! the image operator-sdk's `make bundle` writes into `config/manager/kustomization.yaml`:
//! bundle/ re-derives from checked-in files alone, and a released version keeps its image.

use std::path::Path;

use serde::Deserialize;

use super::config::repository_of;
use crate::yaml::{self, YamlError};

/// What the file holds: which version was released with which image.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct OperatorImagePin {
    /// The bundle version (semver, no `v`).
    pub version: String,
    /// `<repository>@sha256:<digest>`.
    pub image: String,
}

/// A pin file that is not what `olm release` writes.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error(transparent)]
    Yaml(#[from] YamlError),
    #[error("{path}: image {image:?} is not pinned by digest (want <repository>@sha256:<64 hex>)")]
    NotPinned { path: String, image: String },
}

/// What a release does with the operator image it just built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinChoice {
    /// Nothing recorded for this version and repository: pin the image just built.
    New,
    /// This version was released with exactly this image.
    Same,
    /// This version was released with another image (another build of the binary): the
    /// released one stays, since a released version cannot change.
    Released { image: String },
}

impl OperatorImagePin {
    /// Reads the file; `Ok(None)` when it does not exist yet (the first release).
    pub fn load(path: &Path) -> Result<Option<OperatorImagePin>, PinError> {
        if !path.exists() {
            return Ok(None);
        }
        let pin: OperatorImagePin = yaml::load_one(path)?;
        if !is_pinned(&pin.image) {
            return Err(PinError::NotPinned {
                path: path.display().to_string(),
                image: pin.image,
            });
        }
        Ok(Some(pin))
    }

    /// Compares the image just built (`built`, pinned) for `version` with this record.
    pub fn choose(&self, version: &str, built: &str) -> PinChoice {
        if self.version != version || repository_of(&self.image) != repository_of(built) {
            PinChoice::New
        } else if self.image == built {
            PinChoice::Same
        } else {
            PinChoice::Released {
                image: self.image.clone(),
            }
        }
    }

    /// The file's bytes: stable for the same pin, so a re-run writes nothing.
    pub fn to_text(&self) -> String {
        format!(
            "# Written by `olm release` with bundle/: the operator image the CSV of this version runs.\n\
             # An input of bundle/ (give it to the manifests generator to re-derive bundle/); a re-run\n\
             # of this version keeps it. Cut a new version to release another build.\n\
             version: {}\nimage: {}\n",
            self.version, self.image
        )
    }
}

/// The recorded catalog image (`pinned-catalog-image` in release.yaml): which image was
/// released for which catalog content.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct CatalogImagePin {
    /// The digest of the catalog's files (the serve cache's digest: paths and bytes).
    pub catalog: String,
    /// `<repository>@sha256:<digest>`.
    pub image: String,
}

impl CatalogImagePin {
    /// Reads the file; `Ok(None)` when it does not exist yet.
    pub fn load(path: &Path) -> Result<Option<CatalogImagePin>, PinError> {
        if !path.exists() {
            return Ok(None);
        }
        let pin: CatalogImagePin = yaml::load_one(path)?;
        if !is_pinned(&pin.image) {
            return Err(PinError::NotPinned {
                path: path.display().to_string(),
                image: pin.image,
            });
        }
        Ok(Some(pin))
    }

    /// The recorded image, when it serves exactly `catalog` from the repository of `built`.
    pub fn keeps(&self, catalog: &str, built: &str) -> Option<&str> {
        (self.catalog == catalog && repository_of(&self.image) == repository_of(built))
            .then_some(self.image.as_str())
    }

    /// The file's bytes: stable for the same pin, so a re-run writes nothing.
    pub fn to_text(&self) -> String {
        format!(
            "# Written by `olm release` with deploy/: the catalog image released for this catalog.\n\
             # The image carries the releasing machine's olm binary, so another machine builds\n\
             # another digest from the same catalog; while the catalog is unchanged, a release\n\
             # without a registry keeps this image in deploy/.\n\
             catalog: {}\nimage: {}\n",
            self.catalog, self.image
        )
    }
}

/// `repo@sha256:<64 lowercase hex>`.
fn is_pinned(image: &str) -> bool {
    image.split_once("@sha256:").is_some_and(|(repo, hex)| {
        !repo.is_empty()
            && hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str =
        "quay.io/a/op@sha256:1111111111111111111111111111111111111111111111111111111111111111";
    const B: &str =
        "quay.io/a/op@sha256:2222222222222222222222222222222222222222222222222222222222222222";

    fn pin(version: &str, image: &str) -> OperatorImagePin {
        OperatorImagePin {
            version: version.into(),
            image: image.into(),
        }
    }

    #[test]
    fn choices() {
        let p = pin("0.2.1", A);
        assert_eq!(p.choose("0.2.1", A), PinChoice::Same);
        assert_eq!(
            p.choose("0.2.1", B),
            PinChoice::Released { image: A.into() }
        );
        assert_eq!(p.choose("0.3.0", B), PinChoice::New);
        let elsewhere = B.replace("quay.io", "127.0.0.1:5000");
        assert_eq!(p.choose("0.2.1", &elsewhere), PinChoice::New);
    }

    #[test]
    fn catalog_pin_keeps_the_image_of_the_same_catalog() {
        let p = CatalogImagePin {
            catalog: "c1".into(),
            image: A.into(),
        };
        assert_eq!(p.keeps("c1", B), Some(A));
        assert_eq!(p.keeps("c2", B), None);
        let elsewhere = B.replace("quay.io", "127.0.0.1:5000");
        assert_eq!(p.keeps("c1", &elsewhere), None);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog-image.yaml");
        assert_eq!(CatalogImagePin::load(&path).unwrap(), None);
        std::fs::write(&path, p.to_text()).unwrap();
        assert_eq!(CatalogImagePin::load(&path).unwrap(), Some(p));
    }

    #[test]
    fn round_trip_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("operator-image.yaml");
        assert_eq!(OperatorImagePin::load(&path).unwrap(), None);
        std::fs::write(&path, pin("0.2.1", A).to_text()).unwrap();
        assert_eq!(
            OperatorImagePin::load(&path).unwrap(),
            Some(pin("0.2.1", A))
        );

        std::fs::write(&path, "version: 0.2.1\nimage: quay.io/a/op:v0.2.1\n").unwrap();
        let e = OperatorImagePin::load(&path).unwrap_err().to_string();
        assert!(
            e.contains("operator-image.yaml") && e.contains("not pinned"),
            "{e}"
        );

        std::fs::write(&path, "version: 0.2.1\nimage: [x]\n").unwrap();
        let e = OperatorImagePin::load(&path).unwrap_err().to_string();
        assert!(e.contains("operator-image.yaml:2"), "{e}");
    }
}
