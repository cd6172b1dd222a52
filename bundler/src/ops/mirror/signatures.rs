//! Signatures travel with the images they sign: for each mirrored image (an index and each of
//! its images), the `sha256-<hex>.sig`, `.att` and `.sbom` manifests cosign attaches are
//! copied beside it, to a registry or into an archive, so the mirror verifies with the same
//! key (the signed identity stays the original repository). With a key, every image of a
//! catalog is verified before any of them is copied.
//!
//! In a registry an attachment sits in the image's repository under cosign's tag. An archive
//! keeps all images in one layout named by reference, so there it is named
//! `<registry/repository>:sha256-<hex>.sig`.

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

/// The digests whose attachments go with an image: its own, and an index's images'.
async fn digests(engine: &Engine, from: &Endpoint) -> Result<Vec<String>, SignError> {
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

/// Verifies every image at its source with the policy's key; the ones that do not verify.
pub async fn verify_all(
    engine: &Engine,
    policy: &SignaturePolicy,
    pairs: &[(Endpoint, Endpoint, &Planned)],
) -> Vec<Failure> {
    let Some(key) = &policy.verify_key else {
        return Vec::new();
    };
    let at_once = engine.options().concurrency.max(1);
    futures::stream::iter(pairs.iter())
        .map(|(from, _, p)| async move {
            let checked = async {
                let digest = engine.manifest(Source::Endpoint(from)).await?.digest;
                let tag = store::attachment_tag(&digest, Attachment::Signature)?;
                let at = attachment_at(from, p, &tag);
                trust::verify_attached(engine, &at, &p.written, &digest, key, None).await
            }
            .await;
            checked.err().map(|e| failure(p, e.to_string()))
        })
        .buffer_unordered(at_once)
        .filter_map(|f| async move { f })
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
) -> Vec<Failure> {
    if policy.remove {
        return Vec::new();
    }
    let at_once = engine.options().concurrency.max(1);
    let todo = pairs
        .iter()
        .filter(|(_, _, p)| !failed.iter().any(|f| f.image == p.written));
    futures::stream::iter(todo)
        .map(|(from, to, p)| async move {
            let copied = async {
                let mut n = 0;
                for digest in digests(engine, from).await? {
                    for what in Attachment::ALL {
                        let tag = store::attachment_tag(&digest, what)?;
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
