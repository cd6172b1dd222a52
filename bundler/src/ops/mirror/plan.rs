//! Where a mirror puts each image: `<to>/<prefix>/<original repository path>`, by digest for
//! references by digest and by tag for references by tag, as oc-mirror places them; and the
//! names of what the mirror writes for the cluster.

use std::collections::BTreeMap;

use crate::catalog::images::ImageUse;
use crate::deploy::mirror_sets::RepositoryMirror;
use crate::image::reference::Reference;

/// `--to REGISTRY[/PREFIX]`: a registry host and an optional repository prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    registry: String,
    prefix: Option<String>,
}

impl Destination {
    /// Parses `host[:port][/prefix/...]`. The host is what a reference's first component
    /// must be to name a registry (a `.`, a `:` or `localhost`), the prefix path components
    /// a reference accepts.
    pub fn parse(text: &str) -> Result<Destination, String> {
        let text = text.strip_prefix("docker://").unwrap_or(text);
        let text = text.trim_end_matches('/');
        let (registry, prefix) = match text.split_once('/') {
            Some((r, p)) => (r, Some(p.trim_matches('/'))),
            None => (text, None),
        };
        let is_host = registry.contains('.') || registry.contains(':') || registry == "localhost";
        if registry.is_empty() || !is_host {
            return Err(format!(
                "{text:?}: the destination must start with a registry host (host[:port], e.g. mirror.example.com:5000/prefix)"
            ));
        }
        let prefix = prefix.filter(|p| !p.is_empty()).map(str::to_string);
        let probe = match &prefix {
            Some(p) => format!("{registry}/{p}/x"),
            None => format!("{registry}/x"),
        };
        crate::grammar::image_ref::validate(&probe)
            .map_err(|e| format!("{text:?}: not a registry and repository prefix: {e}"))?;
        Ok(Destination {
            registry: registry.to_string(),
            prefix,
        })
    }

    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// The mirrored repository of `repository` (a path without registry).
    pub fn repository(&self, repository: &str) -> String {
        match &self.prefix {
            Some(p) => format!("{p}/{repository}"),
            None => repository.to_string(),
        }
    }

    /// Where `source` goes: by digest when it has one, else by its tag.
    pub fn map(&self, source: &Reference) -> Reference {
        let repository = self.repository(source.repository());
        match (source.digest(), source.tag()) {
            (Some(d), _) => Reference::with_digest(self.registry.clone(), repository, d.into()),
            (None, t) => Reference::with_tag(
                self.registry.clone(),
                repository,
                t.unwrap_or("latest").to_string(),
            ),
        }
    }
}

/// One image of a mirror: where it is, where it goes, and which bundles use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// As the catalog writes it.
    pub written: String,
    pub source: Reference,
    pub dest: Reference,
    pub used_by: Vec<String>,
}

impl Planned {
    pub fn by_digest(&self) -> bool {
        self.source.digest().is_some()
    }
}

/// An image of the catalog the mirror leaves out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Left {
    pub image: String,
    pub used_by: Vec<String>,
    pub why: String,
}

/// The images of a catalog placed at `to` (`None`: not yet placed, an archive keeps them under
/// their own references); those `blocked` names (the pattern that blocks it, given the
/// source and the destination) and references that do not parse are left out, with the
/// reason.
pub fn plan(
    uses: Vec<ImageUse>,
    to: Option<&Destination>,
    blocked: impl Fn(&str, &str) -> Option<String>,
) -> (Vec<Planned>, Vec<Left>) {
    let (mut planned, mut left) = (Vec::new(), Vec::new());
    for u in uses {
        let source: Reference = match u.image.parse() {
            Ok(r) => r,
            Err(e) => {
                left.push(Left {
                    why: format!("not an image reference: {e}"),
                    image: u.image,
                    used_by: u.used_by,
                });
                continue;
            }
        };
        let dest = to.map_or_else(|| source.clone(), |to| to.map(&source));
        if let Some(pattern) = blocked(&u.image, &dest.whole()) {
            left.push(Left {
                why: format!("blocked by {pattern:?}"),
                image: u.image,
                used_by: u.used_by,
            });
            continue;
        }
        planned.push(Planned {
            written: u.image,
            source,
            dest,
            used_by: u.used_by,
        });
    }
    (planned, left)
}

/// The repository pairs of images mirrored by digest (for the ImageDigestMirrorSet) and by
/// tag (for the ImageTagMirrorSet).
pub fn repository_mirrors(planned: &[Planned]) -> (Vec<RepositoryMirror>, Vec<RepositoryMirror>) {
    let pair = |p: &Planned| RepositoryMirror {
        source: p.source.name(),
        mirror: p.dest.name(),
    };
    let digests = planned.iter().filter(|p| p.by_digest()).map(pair).collect();
    let tags = planned
        .iter()
        .filter(|p| !p.by_digest())
        .map(pair)
        .collect();
    (digests, tags)
}

/// `source=destination` lines, sorted (oc-mirror's mapping.txt).
pub fn mapping_text(planned: &[Planned], catalog: Option<(&str, &str)>) -> String {
    let mut lines: BTreeMap<String, String> = planned
        .iter()
        .map(|p| (p.source.whole(), p.dest.whole()))
        .collect();
    if let Some((from, to)) = catalog {
        lines.insert(from.to_string(), to.to_string());
    }
    lines
        .into_iter()
        .map(|(s, d)| format!("{s}={d}\n"))
        .collect()
}

/// A Kubernetes object name from a repository's last component and a tag: lowercase
/// letters, digits and `-`, at most 63 characters (`redhat-operator-index-v4-16`).
pub fn object_name(repository: &str, tag: Option<&str>) -> String {
    let last = repository.rsplit('/').next().unwrap_or(repository);
    let raw = match tag {
        Some(t) if t != "latest" => format!("{last}-{t}"),
        _ => last.to_string(),
    };
    let mut name: String = raw
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    while name.contains("--") {
        name = name.replace("--", "-");
    }
    let name = name.trim_matches('-');
    let mut name: String = name.chars().take(63).collect();
    while name.ends_with('-') {
        name.pop();
    }
    if name.is_empty() {
        "mirrored-catalog".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> Reference {
        s.parse().unwrap()
    }

    #[test]
    fn destinations_keep_the_repository_path_under_the_prefix() {
        let d = format!("sha256:{}", "a".repeat(64));
        let to = Destination::parse("mirror.local:5000/ocp/operators").unwrap();
        assert_eq!(
            to.map(&r(&format!("registry.redhat.io/ubi8/ubi@{d}")))
                .whole(),
            format!("mirror.local:5000/ocp/operators/ubi8/ubi@{d}")
        );
        assert_eq!(
            to.map(&r(&format!("quay.io/a/b:v1@{d}"))).whole(),
            format!("mirror.local:5000/ocp/operators/a/b@{d}"),
            "a digest wins over a tag"
        );
        assert_eq!(
            to.map(&r("busybox")).whole(),
            "mirror.local:5000/ocp/operators/library/busybox:latest"
        );
        let bare = Destination::parse("localhost:5000").unwrap();
        assert_eq!(
            bare.map(&r("quay.io/a/b:v2")).whole(),
            "localhost:5000/a/b:v2"
        );
        assert!(Destination::parse("mirror").is_err(), "no registry host");
        assert!(Destination::parse("m.local/UPPER").is_err());
        assert_eq!(
            Destination::parse("docker://m.local/p/").unwrap(),
            Destination::parse("m.local/p").unwrap()
        );
    }

    #[test]
    fn plans_leave_out_blocked_and_unparsable_images_with_the_reason() {
        let to = Destination::parse("m.local/x").unwrap();
        let uses = vec![
            ImageUse {
                image: "quay.io/a/op:v1".into(),
                used_by: vec!["p/p.v1".into()],
            },
            ImageUse {
                image: "quay.io/a/blocked:v1".into(),
                used_by: vec!["p/p.v1".into()],
            },
            ImageUse {
                image: "Not A Ref".into(),
                used_by: vec!["p/p.v2".into()],
            },
        ];
        let (planned, left) = plan(uses, Some(&to), |src, dst| {
            (src.contains("blocked") && dst.starts_with("m.local/")).then(|| "blocked".into())
        });
        assert_eq!(planned.len(), 1);
        assert_eq!(planned[0].dest.whole(), "m.local/x/a/op:v1");
        assert_eq!(left.len(), 2);
        assert!(left[0].why.contains("blocked by"), "{left:?}");
        assert!(left[1].why.contains("not an image reference"), "{left:?}");
        let (digests, tags) = repository_mirrors(&planned);
        assert!(digests.is_empty());
        assert_eq!(tags[0].source, "quay.io/a/op");
        assert_eq!(tags[0].mirror, "m.local/x/a/op");
        assert_eq!(
            mapping_text(&planned, Some(("q.io/c:v1", "m.local/x/c:v1"))),
            "q.io/c:v1=m.local/x/c:v1\nquay.io/a/op:v1=m.local/x/a/op:v1\n"
        );
    }

    #[test]
    fn object_names_are_dns_labels() {
        assert_eq!(
            object_name("redhat/redhat-operator-index", Some("v4.16")),
            "redhat-operator-index-v4-16"
        );
        assert_eq!(object_name("a/Cat__Alog", Some("latest")), "cat-alog");
        assert_eq!(object_name("x", Some(&"9".repeat(80))).len(), 63);
    }
}
