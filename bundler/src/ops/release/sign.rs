//! The release's signing step: every image it made (the operator image, as an index and
//! each platform's image; the bundle image; the catalog image and its platforms) signed with
//! the release key where it was stored, cosign's way, under the repository it is published
//! to; and the operator image's SBOM, when its build wrote one, attached as a signed SPDX
//! attestation.

use anyhow::Context as _;

use super::Plan;
use super::publish::MadeImage;
use crate::image::copy::{Endpoint, Engine};
use crate::image::reference::ImageRef;
use crate::image::reference::Reference;
use crate::image::sign::payload;
use crate::image::sign::trust::{self, SignOptions};
use crate::image::transfer::endpoint;
use crate::release::config;

/// A signature (or attestation) the release made.
#[derive(Debug, Clone)]
pub struct SignedImage {
    /// `operator`, `bundle` or `catalog`.
    pub what: &'static str,
    pub digest: String,
    /// The signed identity: the repository the image is published to.
    pub identity: String,
    /// `signature` or the attestation's predicate type.
    pub kind: String,
    /// Where it is stored.
    pub tag: String,
}

/// Signs `images` with the plan's key; `operator_sbom` is the operator image's SPDX JSON SBOM,
/// attached to it as a signed attestation. Each image is signed at the digest the release
/// made (read by digest where it was stored), never at whatever its tag names by now.
pub(super) async fn sign_images(
    plan: &Plan,
    images: &[MadeImage],
    operator_sbom: Option<&[u8]>,
) -> anyhow::Result<(Vec<SignedImage>, String)> {
    let Some((key_file, key)) = &plan.signer else {
        return Ok((Vec::new(), "no signing key".into()));
    };
    let engine = Engine::new(&plan.publisher.opts);
    let mut out = Vec::new();
    for image in images {
        let at = endpoint(
            &ImageRef::parse(&image.location)
                .with_context(|| format!("the {} image's location", image.what))?,
        );
        let (_, digest) = image
            .pinned
            .rsplit_once('@')
            .with_context(|| format!("the {} image {} has no digest", image.what, image.pinned))?;
        // The identity cosign would sign for the published repository (Docker Hub as
        // `index.docker.io/...`).
        let identity = match image.pinned.parse::<Reference>() {
            Ok(r) => trust::identity_of(&Endpoint::Registry(r))?,
            Err(_) => config::repository_of(&image.pinned).to_string(),
        };
        let opts = SignOptions {
            key,
            annotations: Default::default(),
            recursive: true,
            identity: Some(identity.clone()),
        };
        let signed = trust::sign_pinned(&engine, &at, digest, &opts)
            .await
            .with_context(|| format!("signing the {} image {}", image.what, image.location))?;
        out.extend(signed.into_iter().map(|s| SignedImage {
            what: image.what,
            digest: s.digest,
            identity: s.identity,
            kind: "signature".into(),
            tag: s.tag,
        }));
        if image.what == "operator"
            && let Some(sbom) = operator_sbom
        {
            let predicate: serde_json::Value =
                serde_json::from_slice(sbom).context("the operator image's SBOM")?;
            let predicate_type = payload::predicate_type("spdxjson");
            let opts = trust::AttestOptions {
                key,
                predicate_type: &predicate_type,
                predicate,
                identity: Some(&identity),
                digest: Some(digest),
            };
            let attested = trust::attest(&engine, &at, opts)
                .await
                .context("attaching the SBOM to the operator image")?;
            out.push(SignedImage {
                what: image.what,
                digest: attested.digest,
                identity,
                kind: attested.predicate_type,
                tag: attested.tag,
            });
        }
    }
    engine.finish();
    let detail = format!(
        "{} signature(s), {} attestation(s) with {}",
        out.iter().filter(|s| s.kind == "signature").count(),
        out.iter().filter(|s| s.kind != "signature").count(),
        key_file.display()
    );
    Ok((out, detail))
}

/// The summary's table of signatures: image, digest, what, identity.
pub fn table(signed: &[SignedImage]) -> String {
    use std::fmt::Write as _;
    let mut s = format!(
        "{:<9} {:<20} {:<26} identity\n",
        "image", "digest", "signed"
    );
    for x in signed {
        let short = x.digest.get(..19).unwrap_or(&x.digest);
        let _ = writeln!(s, "{:<9} {short:<20} {:<26} {}", x.what, x.kind, x.identity);
    }
    s
}
