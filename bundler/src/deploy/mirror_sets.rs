//! OpenShift's registry mirror configuration for a mirrored catalog: an ImageDigestMirrorSet
//! (`config.openshift.io/v1`) for images referenced by digest and an ImageTagMirrorSet for
//! images referenced by tag, one entry per source repository, so nodes pull from the mirror
//! what the catalog and its bundles name at the original registries.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// A mirrored repository: where images were, and where the mirror put them.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RepositoryMirror {
    /// `registry/repository` at the source.
    pub source: String,
    /// `registry[/prefix]/repository` at the mirror.
    pub mirror: String,
}

#[derive(Debug, Serialize)]
struct Metadata<'a> {
    name: &'a str,
}

#[derive(Debug, Serialize)]
struct Mirrors {
    source: String,
    mirrors: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct DigestSpec {
    image_digest_mirrors: Vec<Mirrors>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct TagSpec {
    image_tag_mirrors: Vec<Mirrors>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct MirrorSet<'a, S> {
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata<'a>,
    spec: S,
}

/// One entry per source repository, its mirrors sorted, entries sorted by source.
fn grouped(pairs: &[RepositoryMirror]) -> Vec<Mirrors> {
    let mut by_source: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for p in pairs {
        by_source.entry(&p.source).or_default().insert(&p.mirror);
    }
    by_source
        .into_iter()
        .map(|(source, mirrors)| Mirrors {
            source: source.to_string(),
            mirrors: mirrors.into_iter().map(str::to_string).collect(),
        })
        .collect()
}

/// The ImageDigestMirrorSet `name` for images mirrored by digest.
pub fn image_digest_mirror_set<'a>(
    name: &'a str,
    pairs: &[RepositoryMirror],
) -> impl Serialize + 'a {
    MirrorSet {
        api_version: "config.openshift.io/v1",
        kind: "ImageDigestMirrorSet",
        metadata: Metadata { name },
        spec: DigestSpec {
            image_digest_mirrors: grouped(pairs),
        },
    }
}

/// The ImageTagMirrorSet `name` for images mirrored by tag.
pub fn image_tag_mirror_set<'a>(name: &'a str, pairs: &[RepositoryMirror]) -> impl Serialize + 'a {
    MirrorSet {
        api_version: "config.openshift.io/v1",
        kind: "ImageTagMirrorSet",
        metadata: Metadata { name },
        spec: TagSpec {
            image_tag_mirrors: grouped(pairs),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_entry_per_source_repository_sorted() {
        let pairs = [
            RepositoryMirror {
                source: "quay.io/b/op".into(),
                mirror: "m.local/x/b/op".into(),
            },
            RepositoryMirror {
                source: "quay.io/a/bundle".into(),
                mirror: "m.local/x/a/bundle".into(),
            },
            RepositoryMirror {
                source: "quay.io/b/op".into(),
                mirror: "m.local/x/b/op".into(),
            },
        ];
        let yaml = crate::yaml::to_yaml(&image_digest_mirror_set("cat", &pairs)).unwrap();
        assert_eq!(
            yaml,
            "apiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  name: cat\nspec:\n  imageDigestMirrors:\n  - source: quay.io/a/bundle\n    mirrors:\n    - m.local/x/a/bundle\n  - source: quay.io/b/op\n    mirrors:\n    - m.local/x/b/op\n"
        );
        let yaml = crate::yaml::to_yaml(&image_tag_mirror_set("cat", &pairs[..1])).unwrap();
        assert!(yaml.contains("kind: ImageTagMirrorSet\n"), "{yaml}");
        assert!(yaml.contains("imageTagMirrors:"), "{yaml}");
    }
}
