//! Signatures travel with the images they sign: for each mirrored image (an index and each of
//! its images), the `sha256-<hex>.sig`, `.att` and `.sbom` manifests cosign attaches are
//! copied beside it, to a registry or into an archive, so the mirror verifies with the same
//! key (the signed identity stays the original repository). With a key, every image of a
//! catalog is verified before any of them is copied.
//!
//! In a registry an attachment sits in the image's repository under cosign's tag. An archive
//! keeps all images in one layout named by reference, so there it is named
//! `<registry/repository>:sha256-<hex>.sig`.

use std::collections::{HashMap, HashSet};

use futures::StreamExt as _;

use crate::image::copy::{Endpoint, Engine, Source};
use crate::image::model;
use crate::image::reference::ImageRef;
use crate::image::sign::key::{PrivateKey, PublicKey};
use crate::image::sign::store::{self, Attachment};
use crate::image::sign::{SignError, trust};

use super::Failure;
use super::plan::Planned;

/// What the mirror does about signatures.
#[derive(Debug, Clone, Default)]
pub struct SignaturePolicy {
    /// Leave the `.sig`, `.att` and `.sbom` manifests behind (`--remove-signatures`).
    pub remove: bool,
    /// Mirror nothing of a catalog unless every image of it verifies with this key
    /// (`--verify-key`).
    pub verify_key: Option<PublicKey>,
    /// Sign what the mirror makes (`--sign-key`): the filtered catalog image and the bundle
    /// images rebuilt with rewritten references, which no original signature can cover.
    pub sign_key: Option<std::sync::Arc<PrivateKey>>,
}

/// Signs each image the mirror made (`pinned` references in the mirror) with the policy's
/// key, under the image's own repository as identity; every image of an index too. Returns
/// the signature tags written.
pub async fn sign_made(
    engine: &Engine,
    policy: &SignaturePolicy,
    pinned: &[String],
) -> Result<Vec<String>, SignMadeError> {
    let Some(key) = &policy.sign_key else {
        return Ok(Vec::new());
    };
    let mut tags = Vec::new();
    for image in pinned {
        let fail = |detail: String| SignMadeError {
            image: image.clone(),
            detail,
        };
        let reference = ImageRef::parse(image).map_err(|e| fail(e.to_string()))?;
        let opts = trust::SignOptions {
            key,
            annotations: Default::default(),
            recursive: true,
            identity: None,
        };
        let signed = trust::sign(engine, &crate::image::transfer::endpoint(&reference), &opts)
            .await
            .map_err(|e| fail(e.to_string()))?;
        tags.extend(signed.into_iter().map(|s| s.tag));
    }
    Ok(tags)
}

/// An image the mirror made could not be signed.
#[derive(Debug, thiserror::Error)]
#[error("signing {image}, which the mirror made: {detail}")]
pub struct SignMadeError {
    pub image: String,
    pub detail: String,
}

/// Where the attachment `tag` of the image `at` (for `p`) is kept.
fn attachment_at(at: &Endpoint, p: &Planned, tag: &str) -> Endpoint {
    match at {
        Endpoint::Layout { layout, .. } => Endpoint::Layout {
            layout: layout.clone(),
            tag: Some(format!("{}:{tag}", p.source.name())),
        },
        Endpoint::Registry(_) => store::beside(at, tag),
    }
}

/// The digests whose attachments go with an image: its own, and an index's images'. What the
/// copy learned (`(digest, media type)`) saves asking the source again for all but an index.
async fn digests(
    engine: &Engine,
    from: &Endpoint,
    learned: Option<&(String, String)>,
) -> Result<Vec<String>, SignError> {
    if let Some((digest, media_type)) = learned
        && !model::is_index(media_type)
    {
        return Ok(vec![digest.clone()]);
    }
    let top = engine.manifest(Source::Endpoint(from)).await?;
    let mut out = vec![top.digest.clone()];
    if model::is_index(&top.media_type) {
        let index = model::parse_index(&top.bytes, &top.digest)
            .map_err(crate::image::copy::CopyError::from)?;
        out.extend(index.manifests.into_iter().map(|d| d.digest));
    }
    Ok(out)
}

fn failure(p: &Planned, reason: String) -> Failure {
    Failure {
        image: p.written.clone(),
        used_by: p.used_by.clone(),
        reason,
    }
}

/// What [`verify_all`] found: the digest each image verified at (`written -> digest`), for
/// the copy to take exactly that (a tag may move meanwhile), and the ones that do not verify.
#[derive(Debug, Default)]
pub struct Verified {
    pub digests: HashMap<String, String>,
    pub failures: Vec<Failure>,
}

/// Verifies every image at its source with the policy's key.
pub async fn verify_all(
    engine: &Engine,
    policy: &SignaturePolicy,
    pairs: &[(Endpoint, Endpoint, &Planned)],
) -> Verified {
    let Some(key) = &policy.verify_key else {
        return Verified::default();
    };
    let at_once = engine.options().concurrency.max(1);
    let results: Vec<(&Planned, Result<String, SignError>)> = futures::stream::iter(pairs.iter())
        .map(|(from, _, p)| async move {
            let checked = async {
                let digest = engine.manifest(Source::Endpoint(from)).await?.digest;
                let tag = store::attachment_tag(&digest, Attachment::Signature)?;
                let at = attachment_at(from, p, &tag);
                trust::verify_attached(engine, &at, &p.written, &digest, key, None).await?;
                Ok::<_, SignError>(digest)
            }
            .await;
            (*p, checked)
        })
        .buffer_unordered(at_once)
        .collect()
        .await;
    let mut out = Verified::default();
    for (p, r) in results {
        match r {
            Ok(d) => {
                out.digests.insert(p.written.clone(), d);
            }
            Err(e) => out.failures.push(failure(p, e.to_string())),
        }
    }
    out
}

/// The tags of each source repository, one `tags/list` per repository instead of a GET per
/// attachment of every digest; `None` where the registry will not list (then each
/// attachment is asked for).
async fn source_tags<'a>(
    engine: &Engine,
    sources: impl Iterator<Item = &'a Endpoint>,
) -> HashMap<(String, String), Option<HashSet<String>>> {
    let repos: HashSet<(String, String)> = sources
        .filter_map(|e| match e {
            Endpoint::Registry(r) => Some((r.registry().to_string(), r.repository().to_string())),
            _ => None,
        })
        .collect();
    let at_once = engine.options().concurrency.max(1);
    futures::stream::iter(repos)
        .map(|(registry, repo)| async move {
            let listed = async {
                let client = engine.client(&registry).await?;
                client.list_tags(&repo).await
            }
            .await;
            let tags = match listed {
                Ok(t) => Some(t.into_iter().collect()),
                Err(e) => {
                    tracing::debug!("{registry}/{repo}: tags not listed ({e}); each asked for");
                    None
                }
            };
            ((registry, repo), tags)
        })
        .buffer_unordered(at_once)
        .collect()
        .await
}

/// Copies each image's attachments that exist (a missing one is no error); the images whose
/// attachments could not be copied.
pub async fn copy_attachments(
    engine: &Engine,
    policy: &SignaturePolicy,
    pairs: &[(Endpoint, Endpoint, &Planned)],
    failed: &[Failure],
    learned: &HashMap<String, (String, String)>,
) -> Vec<Failure> {
    if policy.remove {
        return Vec::new();
    }
    let at_once = engine.options().concurrency.max(1);
    let todo: Vec<_> = pairs
        .iter()
        .filter(|(_, _, p)| !failed.iter().any(|f| f.image == p.written))
        .collect();
    let listed = &source_tags(engine, todo.iter().map(|(from, _, _)| from)).await;
    futures::stream::iter(todo)
        .map(|(from, to, p)| async move {
            let copied = async {
                let mut n = 0;
                for digest in digests(engine, from, learned.get(&p.written)).await? {
                    for what in Attachment::ALL {
                        let tag = store::attachment_tag(&digest, what)?;
                        if let Endpoint::Registry(r) = from
                            && let Some(Some(tags)) =
                                listed.get(&(r.registry().to_string(), r.repository().to_string()))
                            && !tags.contains(&tag)
                        {
                            continue; // the repository has no such tag: nothing to copy
                        }
                        let src = attachment_at(from, p, &tag);
                        match engine
                            .copy(Source::Endpoint(&src), &attachment_at(to, p, &tag), None)
                            .await
                        {
                            Ok(_) => n += 1,
                            Err(e) if store::is_absent(&e) => {}
                            Err(e) => return Err(SignError::from(e)),
                        }
                    }
                }
                Ok::<_, SignError>(n)
            }
            .await;
            match copied {
                Ok(n) => {
                    tracing::debug!("{}: {n} signature manifest(s) copied", p.written);
                    None
                }
                Err(e) => Some(failure(p, format!("its signatures: {e}"))),
            }
        })
        .buffer_unordered(at_once)
        .filter_map(|f| async move { f })
        .collect()
        .await
}
