//! Tags that keep images mirrored by digest alive. A registry's garbage collection of
//! untagged manifests (Harbor's, Quay's, distribution's `garbage-collect --delete-untagged`)
//! deletes what was pushed by digest alone, so every image copied by digest also gets a tag
//! in the mirror, named as oc-mirror v2 names the destination of a digest-only image:
//! `<algorithm>-<hex>` (`sha256-0123…`), cut to 127 characters past the 128 a tag may have,
//! as oc-mirror cuts it; an image the catalog names by tag and digest also gets its source
//! tag, unless another image of the plan is mirrored by that tag into the same repository, or
//! the tag already names another digest there (it is never moved: something may depend on
//! it). An index's own images get
//! their digest tag too: distribution 2.8's collector does not follow an index to its
//! images and deletes them when they carry no tag of their own.

use std::collections::{HashMap, HashSet};

use futures::StreamExt as _;

use crate::image::copy::{CopyError, Endpoint, Engine, Source};
use crate::image::model;
use crate::image::reference::Reference;
use crate::image::registry::api::FetchedManifest;

use super::Failure;
use super::plan::Planned;

/// The longest tag a registry accepts (the distribution spec's `[\w][\w.-]{0,127}`).
pub const MAX_TAG: usize = 128;

/// The tag a digest-only image gets in the mirror: `sha256:abc…` -> `sha256-abc…`; one longer
/// than [`MAX_TAG`] is cut to its first 127 characters, as oc-mirror v2 cuts it
/// (`tag[:127]`), so both name the same tag.
pub fn digest_tag(digest: &str) -> String {
    let tag = digest.replacen(':', "-", 1);
    if tag.chars().count() > MAX_TAG {
        tag.chars().take(MAX_TAG - 1).collect()
    } else {
        tag
    }
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

/// The `(repository, tag)` pairs images of the plan are mirrored by: a source tag that one
/// of them names is theirs, not a digest-mirrored image's to take.
pub fn taken(planned: &[Planned]) -> HashSet<(String, String)> {
    planned
        .iter()
        .filter(|p| p.dest.digest().is_none())
        .filter_map(|p| Some((p.dest.repository().to_string(), p.dest.tag()?.to_string())))
        .collect()
}

/// The manifest at `at` (a digest), fetched once when a tag needs writing.
struct Lazy<'a> {
    engine: &'a Engine,
    at: &'a Reference,
    fetched: Option<FetchedManifest>,
}

impl Lazy<'_> {
    async fn get(&mut self) -> Result<&FetchedManifest, CopyError> {
        if self.fetched.is_none() {
            let m = self
                .engine
                .manifest(Source::Endpoint(&Endpoint::Registry(self.at.clone())))
                .await?;
            self.fetched = Some(m);
        }
        Ok(self.fetched.as_ref().expect("fetched above"))
    }
}

/// Points each tag at the manifest `m.at` (a digest in the mirror): a HEAD per tag, a PUT
/// only where the tag names something else. `own` tags (the digest tags) are moved onto the
/// digest; any other tag already naming another digest is left as it is (something else of
/// the mirror may depend on it). Returns whether a tag was written.
async fn put_tags(
    engine: &Engine,
    m: &mut Lazy<'_>,
    digest: &str,
    tags: &[String],
    own: usize,
) -> Result<bool, CopyError> {
    let at = m.at;
    let client = engine.client(at.registry()).await?;
    let mut written = false;
    for (i, tag) in tags.iter().enumerate() {
        match client.head_manifest(at.repository(), tag).await? {
            Some(d) if d == digest => continue,
            Some(d) if i >= own => {
                tracing::info!(
                    "{}:{tag} names {d} in the mirror; left as it is (not moved to {digest})",
                    at.name()
                );
                continue;
            }
            _ => {}
        }
        let f = m.get().await?;
        client
            .put_manifest(at.repository(), tag, &f.bytes, &f.media_type)
            .await?;
        written = true;
    }
    Ok(written)
}

/// Tags one mirrored image (and an index's images). `media_type` is what the copy learned
/// of the image (`None`: ask the mirror).
async fn tag_one(
    engine: &Engine,
    p: &Planned,
    taken: &HashSet<(String, String)>,
    media_type: Option<&str>,
) -> Result<usize, CopyError> {
    let Some(digest) = p.dest.digest() else {
        return Ok(0);
    };
    let repo = p.dest.repository().to_string();
    let tags: Vec<String> = tags_of(p)
        .into_iter()
        .enumerate()
        .filter(|(i, t)| *i == 0 || !taken.contains(&(repo.clone(), t.clone())))
        .map(|(_, t)| t)
        .collect();
    let mut top = Lazy {
        engine,
        at: &p.dest,
        fetched: None,
    };
    let mut written = usize::from(put_tags(engine, &mut top, digest, &tags, 1).await?);
    let index = match media_type {
        Some(t) => model::is_index(t),
        None => model::is_index(&top.get().await?.media_type),
    };
    if index {
        let f = top.get().await?;
        let index = model::parse_index(&f.bytes, &f.digest)?;
        for child in &index.manifests {
            let at = Reference::with_digest(
                p.dest.registry().to_string(),
                repo.clone(),
                child.digest.clone(),
            );
            let mut m = Lazy {
                engine,
                at: &at,
                fetched: None,
            };
            let tag = [digest_tag(&child.digest)];
            written += usize::from(put_tags(engine, &mut m, &child.digest, &tag, 1).await?);
        }
    }
    Ok(written)
}

/// Gives every image of `planned` that reached the mirror (those not in `failed`) its tags,
/// a few images at a time; `media_types` is what the copies learned (`written -> media
/// type`). Returns how many images had a tag written, and the images that could not be
/// tagged.
pub async fn tag_all(
    engine: &Engine,
    planned: &[Planned],
    failed: &[Failure],
    media_types: &HashMap<String, String>,
) -> (usize, Vec<Failure>) {
    let at_once = engine.options().concurrency.max(1);
    let taken = taken(planned);
    let taken = &taken;
    let results: Vec<(Result<usize, CopyError>, &Planned)> = futures::stream::iter(
        planned
            .iter()
            .filter(|p| !failed.iter().any(|f| f.image == p.written)),
    )
    .map(|p| async move {
        let media_type = media_types.get(&p.written).map(String::as_str);
        (tag_one(engine, p, taken, media_type).await, p)
    })
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
        assert_eq!(t.len(), 127, "oc-mirror's tag[:127]");
        assert!(t.starts_with("sha512-ccc"));
        assert!(crate::image::reference::is_valid_tag(&t), "{t}");
    }

    #[test]
    fn a_source_tag_another_image_is_mirrored_by_is_taken() {
        let d = format!("sha256:{}", "1".repeat(64));
        let plan = [
            planned(&format!("q.io/a/op:v1@{d}"), &format!("m.local/x/a/op@{d}")),
            planned("q.io/a/op:v1", "m.local/x/a/op:v1"),
            planned("q.io/a/other:v2", "m.local/x/a/other:v2"),
        ];
        let taken = taken(&plan);
        assert!(taken.contains(&("x/a/op".to_string(), "v1".to_string())));
        assert!(taken.contains(&("x/a/other".to_string(), "v2".to_string())));
        assert_eq!(taken.len(), 2);
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
