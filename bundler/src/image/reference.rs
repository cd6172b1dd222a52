//! Where an image lives: an OCI layout directory (`oci:<dir>[:tag]`) or a registry reference
//! (`registry/repo[:tag][@sha256:...]`).

use std::fmt;
use std::path::PathBuf;

pub use oci_client::Reference;

/// A parsed image location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImageRef {
    /// An OCI image layout directory and an optional tag (`org.opencontainers.image.ref.name`).
    Layout { dir: PathBuf, tag: Option<String> },
    /// An image in a registry.
    Registry(Reference),
}

/// A reference that is neither form.
#[derive(Debug, thiserror::Error)]
pub enum RefError {
    #[error("{input:?}: an empty OCI layout path (expected oci:<dir>[:tag])")]
    EmptyLayout { input: String },
    #[error("{input:?}: not an image reference: {reason}")]
    Invalid { input: String, reason: String },
    #[error(
        "{input:?}: the `{transport}:` transport is not supported (use oci:<dir>[:tag] or a registry reference)"
    )]
    Transport { input: String, transport: String },
}

/// True for a tag as the distribution spec allows it (`[A-Za-z0-9_][A-Za-z0-9._-]{0,127}`).
pub fn is_valid_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric() || c == '_')
        && tag.len() <= 128
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

impl ImageRef {
    /// Parses `oci:<dir>[:tag]`, `docker://<ref>` or a plain registry reference.
    ///
    /// The tag of a layout is the text after the last `:` when it is a valid tag, so
    /// directories with colons in their names still work when no tag follows.
    pub fn parse(input: &str) -> Result<ImageRef, RefError> {
        if let Some(rest) = input.strip_prefix("oci:") {
            if rest.is_empty() {
                return Err(RefError::EmptyLayout {
                    input: input.into(),
                });
            }
            let (dir, tag) = match rest.rsplit_once(':') {
                Some((dir, tag)) if !dir.is_empty() && is_valid_tag(tag) => {
                    (dir, Some(tag.to_string()))
                }
                _ => (rest, None),
            };
            return Ok(ImageRef::Layout {
                dir: PathBuf::from(dir),
                tag,
            });
        }
        let plain = input.strip_prefix("docker://").unwrap_or(input);
        if let Some((transport, _)) = plain.split_once(':')
            && matches!(
                transport,
                "oci-archive" | "docker-archive" | "dir" | "containers-storage" | "docker-daemon"
            )
        {
            return Err(RefError::Transport {
                input: input.into(),
                transport: transport.into(),
            });
        }
        // OLM's grammar decides what is a reference; oci-client then splits it.
        crate::grammar::image_ref::validate(plain).map_err(|e| RefError::Invalid {
            input: input.into(),
            reason: e.to_string(),
        })?;
        let reference: Reference =
            plain
                .parse()
                .map_err(|e: oci_client::ParseError| RefError::Invalid {
                    input: input.into(),
                    reason: e.to_string(),
                })?;
        Ok(ImageRef::Registry(reference))
    }

    pub fn is_registry(&self) -> bool {
        matches!(self, ImageRef::Registry(_))
    }
}

impl fmt::Display for ImageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImageRef::Layout { dir, tag: Some(t) } => write!(f, "oci:{}:{t}", dir.display()),
            ImageRef::Layout { dir, tag: None } => write!(f, "oci:{}", dir.display()),
            ImageRef::Registry(r) => write!(f, "{}", r.whole()),
        }
    }
}

/// `registry/repository@digest` for a pushed image: the reference that pins what we pushed.
pub fn pinned(reference: &Reference, digest: &str) -> String {
    format!(
        "{}/{}@{digest}",
        reference.registry(),
        reference.repository()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_with_and_without_tags() {
        assert_eq!(
            ImageRef::parse("oci:/tmp/out:v1").unwrap(),
            ImageRef::Layout {
                dir: "/tmp/out".into(),
                tag: Some("v1".into())
            }
        );
        assert_eq!(
            ImageRef::parse("oci:./out").unwrap(),
            ImageRef::Layout {
                dir: "./out".into(),
                tag: None
            }
        );
        assert_eq!(
            ImageRef::parse("oci:a:b/c").unwrap(),
            ImageRef::Layout {
                dir: "a:b/c".into(),
                tag: None
            }
        );
        assert!(ImageRef::parse("oci:").is_err());
    }

    #[test]
    fn registry_references() {
        let ImageRef::Registry(r) = ImageRef::parse("127.0.0.1:5000/ns/app:v1").unwrap() else {
            panic!("expected a registry ref")
        };
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "ns/app");
        assert_eq!(r.tag(), Some("v1"));
        assert!(
            ImageRef::parse("docker://quay.io/a/b:c")
                .unwrap()
                .is_registry()
        );
        assert!(ImageRef::parse("Not A Ref").is_err());
        assert!(matches!(
            ImageRef::parse("oci-archive:/x.tar"),
            Err(RefError::Transport { .. })
        ));
    }
}
