//! The operand image: `quay.io/mavazque/reversewords:<appVersion>`, unless overridden.
//!
//! `RELATED_IMAGE_REVERSEWORDS` (the operator-sdk convention that OLM's `relatedImages` and
//! disconnected mirroring rely on) replaces the repository. If it also carries a tag or a
//! digest, that pins the image for CRs that do not ask for a specific `appVersion`; a CR that
//! sets `appVersion` gets that tag from the overriding repository.

/// Default repository of the reverse-words application.
pub const DEFAULT_REPOSITORY: &str = "quay.io/mavazque/reversewords";
/// Environment variable that overrides the operand image.
pub const RELATED_IMAGE_ENV: &str = "RELATED_IMAGE_REVERSEWORDS";

/// Where the operand image comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandImage {
    repository: String,
    /// `:tag` or `@sha256:...` from the override, used when the CR has no appVersion.
    pinned: Option<String>,
}

/// An override value that is not an image reference.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{RELATED_IMAGE_ENV}: {value:?} is not an image reference ({why})")]
pub struct InvalidImage {
    pub value: String,
    pub why: &'static str,
}

impl Default for OperandImage {
    fn default() -> Self {
        Self {
            repository: DEFAULT_REPOSITORY.to_string(),
            pinned: None,
        }
    }
}

impl OperandImage {
    /// Builds from the override's value; `None` or an empty string keeps the default.
    pub fn from_override(value: Option<&str>) -> Result<Self, InvalidImage> {
        let Some(value) = value.map(str::trim).filter(|v| !v.is_empty()) else {
            return Ok(Self::default());
        };
        let invalid = |why| InvalidImage {
            value: value.to_string(),
            why,
        };
        if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid("contains whitespace"));
        }
        let (repository, pinned) = if let Some((repo, digest)) = value.split_once('@') {
            let Some(hex) = digest.strip_prefix("sha256:") else {
                return Err(invalid("digest must be sha256:<64 hex>"));
            };
            if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(invalid("digest must be sha256:<64 hex>"));
            }
            (repo, Some(format!("@{digest}")))
        } else {
            // A tag is after the last ':' that follows the last '/' (a registry port is not a tag).
            let last_slash = value.rfind('/').map_or(0, |i| i + 1);
            match value[last_slash..].rfind(':') {
                Some(i) => {
                    let tag = &value[last_slash + i + 1..];
                    if !crate::crd::is_valid_tag(tag) {
                        return Err(invalid("invalid tag"));
                    }
                    (&value[..last_slash + i], Some(format!(":{tag}")))
                }
                None => (value, None),
            }
        };
        if repository.is_empty() || repository.ends_with('/') || repository.starts_with('/') {
            return Err(invalid("empty repository"));
        }
        Ok(Self {
            repository: repository.to_string(),
            pinned,
        })
    }

    /// The image for a CR: its appVersion as tag, or the pinned override, or `latest`.
    pub fn for_app_version(&self, app_version: Option<&str>) -> String {
        match (app_version, &self.pinned) {
            (Some(tag), _) => format!("{}:{tag}", self.repository),
            (None, Some(pin)) => format!("{}{pin}", self.repository),
            (None, None) => format!("{}:{}", self.repository, crate::crd::DEFAULT_APP_VERSION),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIGEST: &str = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn default_repository_and_tags() {
        let img = OperandImage::from_override(None).unwrap();
        assert_eq!(
            img.for_app_version(None),
            "quay.io/mavazque/reversewords:latest"
        );
        assert_eq!(
            img.for_app_version(Some("v0.0.2")),
            "quay.io/mavazque/reversewords:v0.0.2"
        );
        assert_eq!(OperandImage::from_override(Some("  ")).unwrap(), img);
    }

    #[test]
    fn override_with_tag_pins_unversioned_crs() {
        let img =
            OperandImage::from_override(Some("mirror.local:5000/rw/reversewords:v0.1.0")).unwrap();
        assert_eq!(
            img.for_app_version(None),
            "mirror.local:5000/rw/reversewords:v0.1.0"
        );
        assert_eq!(
            img.for_app_version(Some("v9")),
            "mirror.local:5000/rw/reversewords:v9"
        );
    }

    #[test]
    fn override_with_digest_and_without_tag() {
        let img = OperandImage::from_override(Some(&format!("mirror.local/rw@{DIGEST}"))).unwrap();
        assert_eq!(
            img.for_app_version(None),
            format!("mirror.local/rw@{DIGEST}")
        );
        let img = OperandImage::from_override(Some("mirror.local:5000/rw")).unwrap();
        assert_eq!(img.for_app_version(None), "mirror.local:5000/rw:latest");
    }

    #[test]
    fn bad_overrides_are_rejected() {
        for bad in [
            "a b",
            "repo@md5:abc",
            "repo@sha256:xyz",
            "repo:-bad",
            ":tag",
            "/x",
        ] {
            assert!(OperandImage::from_override(Some(bad)).is_err(), "{bad}");
        }
    }
}
