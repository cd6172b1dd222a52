//! Tags that keep images mirrored by digest alive. A registry's garbage collection of
//! untagged manifests (Harbor's, Quay's, distribution's `garbage-collect --delete-untagged`)
//! deletes what was pushed by digest alone, so every image copied by digest also gets a tag
//! in the mirror, named as oc-mirror v2 names the destination of a digest-only image:
//! `<algorithm>-<hex>` (`sha256-0123…`), cut to the 128 characters a tag may have; an image
//! the catalog names by tag and digest also gets its source tag. An index's own images get
//! their digest tag too: distribution 2.8's collector does not follow an index to its
//! images and deletes them when they carry no tag of their own.

use futures::StreamExt as _;

use crate::image::copy::{CopyError, Endpoint, Engine, Source};
use crate::image::model;
use crate::image::reference::Reference;

use super::Failure;
use super::plan::Planned;

/// The longest tag a registry accepts (the distribution spec's `[\w][\w.-]{0,127}`).
pub const MAX_TAG: usize = 128;

/// The tag a digest-only image gets in the mirror: `sha256:abc…` -> `sha256-abc…`, at most
/// [`MAX_TAG`] characters.
pub fn digest_tag(digest: &str) -> String {
    let tag = digest.replacen(':', "-", 1);
    tag.chars().take(MAX_TAG).collect()
}

/// The tags an image of the plan gets in the mirror beyond its own reference: none for one
/// mirrored by tag (it has its tag), else its digest tag and its source tag when it had one.
pub fn tags_of(p: &Planned) -> Vec<String> {
    let Some(digest) = p.dest.digest() else {
        return Vec::new();
    };
    let mut tags = vec![digest_tag(digest)];
    if let Some(t) = p.source.tag()
        && !tags.iter().any(|d| d == t)
    {
        tags.push(t.to_string());
    }
    tags
}

/// Points each tag at its digest in the repository of `at` (a manifest the mirror holds),
/// through the engine: a tag already there costs a HEAD. Returns whether one was written,
/// and the manifest's media type.
async fn put_tags(
    engine: &Engine,
    at: &Reference,
    tags: &[String],
) -> Result<(bool, String), CopyError> {
    let (mut written, mut media_type) = (false, String::new());
    for tag in tags {
        let from = Endpoint::Registry(at.clone());
        let to = Endpoint::Registry(at.tagged(tag.clone()));
        let c = engine.copy(Source::Endpoint(&from), &to, None).await?;
        written |= c.manifest_written;
        media_type = c.media_type;
    }
    Ok((written, media_type))
}

/// Tags one mirrored image (and an index's images).
async fn tag_one(engine: &Engine, p: &Planned) -> Result<usize, CopyError> {
    let tags = tags_of(p);
    if tags.is_empty() {
        return Ok(0);
    }
    let (top_written, media_type) = put_tags(engine, &p.dest, &tags).await?;
    let mut written = usize::from(top_written);
    if model::is_index(&media_type) {
        let top = engine
            .manifest(Source::Endpoint(&Endpoint::Registry(p.dest.clone())))
            .await?;
        let index = model::parse_index(&top.bytes, &top.digest)?;
        for child in &index.manifests {
            let at = Reference::with_digest(
                p.dest.registry().to_string(),
                p.dest.repository().to_string(),
                child.digest.clone(),
            );
            written += usize::from(put_tags(engine, &at, &[digest_tag(&child.digest)]).await?.0);
        }
    }
    Ok(written)
}

/// Gives every image of `planned` that reached the mirror (those not in `failed`) its tags,
/// a few images at a time. Returns how many images had a tag written, and the images that
/// could not be tagged.
pub async fn tag_all(
    engine: &Engine,
    planned: &[Planned],
    failed: &[Failure],
) -> (usize, Vec<Failure>) {
    let at_once = engine.options().concurrency.max(1);
    let results: Vec<(Result<usize, CopyError>, &Planned)> = futures::stream::iter(
        planned
            .iter()
            .filter(|p| !failed.iter().any(|f| f.image == p.written)),
    )
    .map(|p| async move { (tag_one(engine, p).await, p) })
    .buffer_unordered(at_once)
    .collect()
    .await;
    let (mut tagged, mut failures) = (0, Vec::new());
    for (r, p) in results {
        match r {
            Ok(n) => tagged += usize::from(n > 0),
            Err(e) => failures.push(Failure {
                image: p.written.clone(),
                used_by: p.used_by.clone(),
                reason: format!("tagging {} in the mirror: {e}", p.dest),
            }),
        }
    }
    failures.sort_by(|a, b| a.image.cmp(&b.image));
    (tagged, failures)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planned(source: &str, dest: &str) -> Planned {
        Planned {
            written: source.into(),
            source: source.parse().unwrap(),
            dest: dest.parse().unwrap(),
            used_by: vec![],
        }
    }

    #[test]
    fn digest_tags_are_oc_mirrors_and_fit_the_tag_limit() {
        let d = format!("sha256:{}", "ab".repeat(32));
        assert_eq!(digest_tag(&d), format!("sha256-{}", "ab".repeat(32)));
        let long = format!("sha512:{}", "c".repeat(128));
        let t = digest_tag(&long);
        assert_eq!(t.len(), MAX_TAG);
        assert!(t.starts_with("sha512-ccc"));
        assert!(crate::image::reference::is_valid_tag(&t), "{t}");
    }

    #[test]
    fn images_get_their_digest_tag_and_their_source_tag() {
        let d = format!("sha256:{}", "1".repeat(64));
        let by_digest = planned(&format!("q.io/a/op@{d}"), &format!("m.local/x/a/op@{d}"));
        assert_eq!(tags_of(&by_digest), [format!("sha256-{}", "1".repeat(64))]);
        let both = planned(&format!("q.io/a/op:v1@{d}"), &format!("m.local/x/a/op@{d}"));
        assert_eq!(
            tags_of(&both),
            [format!("sha256-{}", "1".repeat(64)), "v1".to_string()]
        );
        let by_tag = planned("q.io/a/op:v1", "m.local/x/a/op:v1");
        assert!(tags_of(&by_tag).is_empty(), "it has its tag");
    }
}
