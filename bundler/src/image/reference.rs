//! Where an image lives: an OCI layout directory (`oci:<dir>[:tag]`) or a registry reference
//! (`registry/repo[:tag][@sha256:...]`).

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::grammar::image_ref;

/// A registry image reference, split the way containers/image's `ParseNormalizedNamed` splits
/// it: `registry/repository[:tag][@digest]`, with Docker Hub's implicit `docker.io/` and
/// `library/` added. A reference with neither tag nor digest gets the tag `latest`, as every
/// container tool assumes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference {
    registry: String,
    repository: String,
    tag: Option<String>,
    digest: Option<String>,
}

impl Reference {
    pub fn with_tag(registry: String, repository: String, tag: String) -> Self {
        Reference {
            registry,
            repository,
            tag: Some(tag),
            digest: None,
        }
    }

    pub fn with_digest(registry: String, repository: String, digest: String) -> Self {
        Reference {
            registry,
            repository,
            tag: None,
            digest: Some(digest),
        }
    }

    /// The same image under `tag` as well (`repo:tag@digest`: a copy there puts the tag and
    /// checks the digest).
    pub fn tagged(&self, tag: String) -> Self {
        Reference {
            tag: Some(tag),
            ..self.clone()
        }
    }

    /// The registry as written (`docker.io` for Docker Hub).
    pub fn registry(&self) -> &str {
        &self.registry
    }

    pub fn repository(&self) -> &str {
        &self.repository
    }

    pub fn tag(&self) -> Option<&str> {
        self.tag.as_deref()
    }

    pub fn digest(&self) -> Option<&str> {
        self.digest.as_deref()
    }

    /// What a manifest request names: the digest when there is one, else the tag.
    pub fn manifest_ref(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .unwrap_or(crate::image::layout::DEFAULT_TAG)
    }

    /// `registry/repository[:tag][@digest]`.
    pub fn whole(&self) -> String {
        self.to_string()
    }

    /// `registry/repository`, the name without tag or digest.
    pub fn name(&self) -> String {
        format!("{}/{}", self.registry, self.repository)
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.registry, self.repository)?;
        if let Some(t) = &self.tag {
            write!(f, ":{t}")?;
        }
        if let Some(d) = &self.digest {
            write!(f, "@{d}")?;
        }
        Ok(())
    }
}

impl FromStr for Reference {
    type Err = image_ref::ImageRefError;

    /// Parses a pull spec OLM's grammar accepts ([`image_ref::validate`]).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        image_ref::validate(s)?;
        let (name, tag, digest) = image_ref::split(s);
        let (registry, repository) = image_ref::split_docker_domain(name);
        let tag = match (tag, digest) {
            (None, None) => Some(crate::image::layout::DEFAULT_TAG.to_string()),
            (t, _) => t.map(str::to_string),
        };
        Ok(Reference {
            registry,
            repository,
            tag,
            digest: digest.map(str::to_string),
        })
    }
}

/// The repository a reference or repository name means, spelled one way
/// (`registry/repository`, Docker Hub as `docker.io/library/...`): `index.docker.io/x`,
/// `docker.io/library/x` and `x` are one repository. `None` when it is not a reference.
pub fn normalized_name(reference: &str) -> Option<String> {
    reference.parse::<Reference>().ok().map(|r| r.name())
}

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
        let reference: Reference =
            plain
                .parse()
                .map_err(|e: image_ref::ImageRefError| RefError::Invalid {
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
    fn references_split_like_containers_image() {
        let r: Reference = "busybox".parse().unwrap();
        assert_eq!(r.whole(), "docker.io/library/busybox:latest");
        let d = format!("sha256:{}", "a".repeat(64));
        let r: Reference = format!("127.0.0.1:5000/ns/app@{d}").parse().unwrap();
        assert_eq!((r.registry(), r.repository()), ("127.0.0.1:5000", "ns/app"));
        assert_eq!((r.tag(), r.digest()), (None, Some(d.as_str())));
        assert_eq!(r.manifest_ref(), d);
        let r: Reference = format!("quay.io/a/b:v1@{d}").parse().unwrap();
        assert_eq!(r.whole(), format!("quay.io/a/b:v1@{d}"));
        assert_eq!(r.manifest_ref(), d);
        assert!("quay.io/A/b".parse::<Reference>().is_err());
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
