//! Signing, verifying and attesting one image, as `cosign sign|verify|attest|verify-attestation`
//! do with a key: the signed digest is the one the registry (or layout) serves now, and a
//! signature counts only when it verifies with the key and names that digest.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::Serialize;
use serde_json::Value;

use super::SignError;
use super::key::{PrivateKey, PublicKey};
use super::payload::{self, Envelope, SimpleSigning};
use super::store::{
    self, ANNOTATION_PREDICATE_TYPE, ANNOTATION_SIGNATURE, Attachment, Layer, MEDIA_TYPE_DSSE,
    MEDIA_TYPE_SIMPLE_SIGNING,
};
use crate::image::copy::{Endpoint, Engine, Source};
use crate::image::digest_hex;
use crate::image::model;
use crate::image::reference::Reference;

/// The repository a signature names for `subject`: `registry/repository` as
/// go-containerregistry spells it (Docker Hub is `index.docker.io`). A layout has no
/// repository: the caller names the one the image is meant for (`--identity`), since a
/// directory path would be a signature no verifier of the published image accepts.
pub fn identity_of(subject: &Endpoint) -> Result<String, SignError> {
    match subject {
        Endpoint::Registry(r) if r.registry() == "docker.io" => {
            Ok(format!("index.docker.io/{}", r.repository()))
        }
        Endpoint::Registry(r) => Ok(r.name()),
        Endpoint::Layout { .. } => Err(SignError::Payload {
            detail: format!("{subject}: an OCI layout has no repository: pass --identity REPO"),
        }),
    }
}

/// What to sign with.
pub struct SignOptions<'a> {
    pub key: &'a PrivateKey,
    /// `optional` of the payload (`--annotation k=v`).
    pub annotations: BTreeMap<String, String>,
    /// Also sign each image of an index.
    pub recursive: bool,
    /// The signed identity when not the image's own repository.
    pub identity: Option<String>,
}

/// One signature made.
#[derive(Debug, Clone, Serialize)]
pub struct Signed {
    pub digest: String,
    pub identity: String,
    /// The attachment tag written to.
    pub tag: String,
    /// False when the same signature was already there.
    pub added: bool,
}

/// The digest `subject` names now, and its manifest's media type.
async fn current(
    engine: &Engine,
    subject: &Endpoint,
) -> Result<(String, bytes::Bytes, String), SignError> {
    let m = engine.manifest(Source::Endpoint(subject)).await?;
    Ok((m.digest, m.bytes, m.media_type))
}

async fn sign_digest(
    engine: &Engine,
    subject: &Endpoint,
    digest: &str,
    identity: &str,
    opts: &SignOptions<'_>,
) -> Result<Signed, SignError> {
    let body = SimpleSigning::new(identity, digest, &opts.annotations).to_bytes();
    let signature = STANDARD.encode(opts.key.sign(&body));
    let mut annotations = BTreeMap::new();
    annotations.insert(ANNOTATION_SIGNATURE.to_string(), signature);
    let tag = store::attachment_tag(digest, Attachment::Signature)?;
    let added = store::append(
        engine,
        &store::beside(subject, &tag),
        Attachment::Signature,
        Layer::new(MEDIA_TYPE_SIMPLE_SIGNING, body, annotations),
    )
    .await?;
    Ok(Signed {
        digest: digest.to_string(),
        identity: identity.to_string(),
        tag,
        added,
    })
}

/// `subject`'s repository (or layout) at `digest`: read by digest, so what is read is that
/// image whatever a tag names now.
pub fn at_digest(subject: &Endpoint, digest: &str) -> Endpoint {
    match subject {
        Endpoint::Registry(r) => Endpoint::Registry(Reference::with_digest(
            r.registry().to_string(),
            r.repository().to_string(),
            digest.to_string(),
        )),
        Endpoint::Layout { layout, .. } => Endpoint::Layout {
            layout: layout.clone(),
            tag: Some(digest.to_string()),
        },
    }
}

/// Signs the image `subject` names (an index: the index, and with `recursive` each image).
pub async fn sign(
    engine: &Engine,
    subject: &Endpoint,
    opts: &SignOptions<'_>,
) -> Result<Vec<Signed>, SignError> {
    let (digest, bytes, media_type) = current(engine, subject).await?;
    sign_fetched(engine, subject, &digest, &bytes, &media_type, opts).await
}

/// Signs the image of `digest` in `subject`'s repository (or layout), read by that digest: a
/// caller that made the image (the release) signs what it made, not whatever a tag names by
/// the time it signs.
pub async fn sign_pinned(
    engine: &Engine,
    subject: &Endpoint,
    digest: &str,
    opts: &SignOptions<'_>,
) -> Result<Vec<Signed>, SignError> {
    let (got, bytes, media_type) = current(engine, &at_digest(subject, digest)).await?;
    if got != digest {
        return Err(SignError::Malformed {
            reference: format!("{subject}@{digest}"),
            detail: format!("served as {got}"),
        });
    }
    sign_fetched(engine, subject, digest, &bytes, &media_type, opts).await
}

async fn sign_fetched(
    engine: &Engine,
    subject: &Endpoint,
    digest: &str,
    bytes: &[u8],
    media_type: &str,
    opts: &SignOptions<'_>,
) -> Result<Vec<Signed>, SignError> {
    let identity = match &opts.identity {
        Some(i) => i.clone(),
        None => identity_of(subject)?,
    };
    let mut out = vec![sign_digest(engine, subject, digest, &identity, opts).await?];
    if opts.recursive && model::is_index(media_type) {
        let index =
            model::parse_index(bytes, digest).map_err(crate::image::copy::CopyError::from)?;
        for child in &index.manifests {
            out.push(sign_digest(engine, subject, &child.digest, &identity, opts).await?);
        }
    }
    Ok(out)
}

/// A signature that verified.
#[derive(Debug, Clone, Serialize)]
pub struct VerifiedSignature {
    /// `critical.identity.docker-reference`: the repository the signer named.
    pub identity: String,
    /// `optional`: the signer's annotations.
    pub annotations: BTreeMap<String, Value>,
}

/// An image whose signatures verified.
#[derive(Debug, Clone, Serialize)]
pub struct VerifiedImage {
    pub reference: String,
    pub digest: String,
    pub signatures: Vec<VerifiedSignature>,
}

/// Why one signature layer does not count, or what it proves.
fn check_signature(
    layer: &Layer,
    key: &PublicKey,
    digest: &str,
    identity: Option<&str>,
) -> Result<VerifiedSignature, String> {
    let short = &layer.descriptor.digest;
    if layer.descriptor.media_type != MEDIA_TYPE_SIMPLE_SIGNING {
        return Err(format!(
            "layer {short}: media type {:?} is not a simple-signing payload",
            layer.descriptor.media_type
        ));
    }
    let sig = layer
        .descriptor
        .annotations
        .get(ANNOTATION_SIGNATURE)
        .ok_or_else(|| format!("layer {short}: no {ANNOTATION_SIGNATURE} annotation"))?;
    let sig = STANDARD
        .decode(sig)
        .map_err(|_| format!("layer {short}: the signature is not base64"))?;
    if !key.verify(&layer.data, &sig) {
        return Err(format!(
            "layer {short}: the signature does not verify with the key (another key, or a changed payload or signature)"
        ));
    }
    let p = SimpleSigning::parse(&layer.data).map_err(|e| format!("layer {short}: {e}"))?;
    if p.critical.image.docker_manifest_digest != digest {
        return Err(format!(
            "layer {short}: signs {:?}, not the image's digest {digest}",
            p.critical.image.docker_manifest_digest
        ));
    }
    if let Some(want) = identity
        && !same_repository(&p.critical.identity.docker_reference, want)
    {
        return Err(format!(
            "layer {short}: signed for {:?}, not {want}",
            p.critical.identity.docker_reference
        ));
    }
    Ok(VerifiedSignature {
        identity: p.critical.identity.docker_reference,
        annotations: p.optional.unwrap_or_default(),
    })
}

/// Whether two spellings name one repository (`index.docker.io/x` and `docker.io/library/x`);
/// text that is not a reference matches only itself.
fn same_repository(a: &str, b: &str) -> bool {
    match (
        crate::image::reference::normalized_name(a),
        crate::image::reference::normalized_name(b),
    ) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

/// Checks every signature of the image `subject` names against `key` (and `identity`, when
/// given). At least one must verify; the error lists why each one did not.
pub async fn verify(
    engine: &Engine,
    subject: &Endpoint,
    key: &PublicKey,
    identity: Option<&str>,
) -> Result<VerifiedImage, SignError> {
    let (digest, _, _) = current(engine, subject).await?;
    verify_digest(engine, subject, &digest, key, identity).await
}

/// As [`verify`], for a digest already known (an index's image).
pub async fn verify_digest(
    engine: &Engine,
    subject: &Endpoint,
    digest: &str,
    key: &PublicKey,
    identity: Option<&str>,
) -> Result<VerifiedImage, SignError> {
    let tag = store::attachment_tag(digest, Attachment::Signature)?;
    let reference = format!("{subject}@{digest}");
    verify_attached(
        engine,
        &store::beside(subject, &tag),
        &reference,
        digest,
        key,
        identity,
    )
    .await
}

/// Checks the signatures at `at` (wherever they are kept: an archive names them its own way)
/// for the image `reference` of `digest`.
pub async fn verify_attached(
    engine: &Engine,
    at: &Endpoint,
    reference: &str,
    digest: &str,
    key: &PublicKey,
    identity: Option<&str>,
) -> Result<VerifiedImage, SignError> {
    let reference = reference.to_string();
    let Some(layers) = store::read(engine, at, Attachment::Signature).await? else {
        return Err(SignError::NoSignatures {
            reference,
            tag: at.to_string(),
        });
    };
    let mut signatures = Vec::new();
    let mut reasons = Vec::new();
    for layer in &layers {
        match check_signature(layer, key, digest, identity) {
            Ok(v) => signatures.push(v),
            Err(why) => reasons.push(why),
        }
    }
    if signatures.is_empty() {
        if reasons.is_empty() {
            reasons.push(format!("{at} holds no signature"));
        }
        return Err(SignError::NotVerified {
            reference,
            reasons: reasons.join("; "),
        });
    }
    Ok(VerifiedImage {
        reference,
        digest: digest.to_string(),
        signatures,
    })
}

/// One attestation made.
#[derive(Debug, Clone, Serialize)]
pub struct Attested {
    pub digest: String,
    pub predicate_type: String,
    pub tag: String,
    pub added: bool,
}

/// What an attestation says and who signs it.
pub struct AttestOptions<'a> {
    pub key: &'a PrivateKey,
    pub predicate_type: &'a str,
    pub predicate: Value,
    /// The subject's repository when not the image's own (required for a layout).
    pub identity: Option<&'a str>,
    /// The digest to attest, when the caller made the image: read by digest, never by tag.
    pub digest: Option<&'a str>,
}

/// Attaches a signed in-toto statement (`predicate` of `predicate_type`) about the image
/// `subject` names (or the image of `digest` in its repository), in a DSSE envelope under
/// `sha256-<hex>.att`.
pub async fn attest(
    engine: &Engine,
    subject: &Endpoint,
    opts: AttestOptions<'_>,
) -> Result<Attested, SignError> {
    let AttestOptions {
        key,
        predicate_type,
        predicate,
        identity,
        digest: pinned,
    } = opts;
    let repository = match identity {
        Some(i) => i.to_string(),
        None => identity_of(subject)?,
    };
    let digest = match pinned {
        Some(d) => {
            let (got, _, _) = current(engine, &at_digest(subject, d)).await?;
            if got != d {
                return Err(SignError::Malformed {
                    reference: format!("{subject}@{d}"),
                    detail: format!("served as {got}"),
                });
            }
            got
        }
        None => current(engine, subject).await?.0,
    };
    let hex = digest_hex(&digest).unwrap_or_default();
    let statement = payload::statement(&repository, hex, predicate_type, predicate);
    let signature = key.sign(&payload::pae(payload::IN_TOTO_PAYLOAD_TYPE, &statement));
    let envelope = Envelope::new(&statement, &signature).to_bytes();
    let mut annotations = BTreeMap::new();
    annotations.insert(ANNOTATION_SIGNATURE.to_string(), String::new());
    annotations.insert(
        ANNOTATION_PREDICATE_TYPE.to_string(),
        predicate_type.to_string(),
    );
    let tag = store::attachment_tag(&digest, Attachment::Attestation)?;
    let added = store::append(
        engine,
        &store::beside(subject, &tag),
        Attachment::Attestation,
        Layer::new(MEDIA_TYPE_DSSE, envelope, annotations),
    )
    .await?;
    Ok(Attested {
        digest,
        predicate_type: predicate_type.to_string(),
        tag,
        added,
    })
}

/// An attestation that verified.
#[derive(Debug, Clone, Serialize)]
pub struct VerifiedAttestation {
    pub predicate_type: String,
    pub subject: String,
    /// The statement's predicate, as `cosign verify-attestation` shows the payload.
    pub predicate: Value,
}

fn check_attestation(
    layer: &Layer,
    key: &PublicKey,
    hex: &str,
    wanted_type: Option<&str>,
) -> Result<VerifiedAttestation, String> {
    let short = &layer.descriptor.digest;
    let env = Envelope::parse(&layer.data).map_err(|e| format!("layer {short}: {e}"))?;
    if env.payload_type != payload::IN_TOTO_PAYLOAD_TYPE {
        return Err(format!(
            "layer {short}: payloadType {:?} is not in-toto",
            env.payload_type
        ));
    }
    let body = STANDARD
        .decode(&env.payload)
        .map_err(|_| format!("layer {short}: the payload is not base64"))?;
    let pae = payload::pae(&env.payload_type, &body);
    let signed = env
        .signatures
        .iter()
        .filter_map(|s| STANDARD.decode(&s.sig).ok())
        .any(|s| key.verify(&pae, &s));
    if !signed {
        return Err(format!(
            "layer {short}: no envelope signature verifies with the key"
        ));
    }
    let st = payload::parse_statement(&body).map_err(|e| format!("layer {short}: {e}"))?;
    let Some((name, _)) = st.subjects.iter().find(|(_, d)| d == hex) else {
        return Err(format!(
            "layer {short}: the statement is about another image (no subject has digest sha256:{hex})"
        ));
    };
    if let Some(w) = wanted_type
        && st.predicate_type != w
    {
        return Err(format!(
            "layer {short}: predicate type {}, not {w}",
            st.predicate_type
        ));
    }
    Ok(VerifiedAttestation {
        predicate_type: st.predicate_type,
        subject: name.clone(),
        predicate: st.predicate,
    })
}

/// Checks the attestations of the image `subject` names; at least one (of `predicate_type`,
/// when given) must verify with `key`.
pub async fn verify_attestations(
    engine: &Engine,
    subject: &Endpoint,
    key: &PublicKey,
    predicate_type: Option<&str>,
) -> Result<(String, Vec<VerifiedAttestation>), SignError> {
    let (digest, _, _) = current(engine, subject).await?;
    let reference = format!("{subject}@{digest}");
    let tag = store::attachment_tag(&digest, Attachment::Attestation)?;
    let Some(layers) = store::read(
        engine,
        &store::beside(subject, &tag),
        Attachment::Attestation,
    )
    .await?
    else {
        return Err(SignError::NoAttestations { reference, tag });
    };
    let hex = digest_hex(&digest).unwrap_or_default();
    let (ok, reasons): (Vec<_>, Vec<_>) = layers
        .iter()
        .map(|l| check_attestation(l, key, hex, predicate_type))
        .partition(Result::is_ok);
    let ok: Vec<_> = ok.into_iter().filter_map(Result::ok).collect();
    if ok.is_empty() {
        let mut reasons: Vec<String> = reasons.into_iter().filter_map(Result::err).collect();
        if reasons.is_empty() {
            reasons.push(format!("{tag} holds no attestation"));
        }
        return Err(SignError::NotVerified {
            reference,
            reasons: reasons.join("; "),
        });
    }
    Ok((digest, ok))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_compare_as_repositories() {
        assert!(same_repository(
            "index.docker.io/library/busybox",
            "busybox"
        ));
        assert!(same_repository(
            "index.docker.io/org/app",
            "docker.io/org/app"
        ));
        assert!(same_repository("quay.io/org/app", "quay.io/org/app"));
        assert!(!same_repository("quay.io/org/app", "quay.io/org/other"));
        assert!(!same_repository("quay.io/org/app", "docker.io/org/app"));
        assert!(!same_repository("/tmp/lay", "quay.io/org/app"));
    }
}
