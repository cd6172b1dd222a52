//! Signing and verifying images by reference string: key files and their password
//! (`COSIGN_PASSWORD`, else asked without echo, as cosign does), then one copy engine for
//! every image named. `olm image generate-key-pair|sign|verify|attest|verify-attestation`,
//! the release, the mirror and install all come through here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::atomic_write;
use crate::image::copy::{Endpoint, Engine};
use crate::image::limits;
use crate::image::reference::{ImageRef, RefError};
use crate::image::registry::RegistryOptions;
use crate::image::sign::SignError;
use crate::image::sign::key::{self, MAX_KEY_FILE, PrivateKey, PublicKey};
use crate::image::sign::payload;
use crate::image::sign::trust::{
    self, Attested, SignOptions, Signed, VerifiedAttestation, VerifiedImage,
};
use crate::image::transfer::endpoint;

/// The environment variable cosign reads a key's password from.
pub const PASSWORD_ENV: &str = "COSIGN_PASSWORD";

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {size} bytes is too large for a key file")]
    KeyTooLarge { path: PathBuf, size: u64 },
    #[error("{path}: already exists; remove it or pass --force")]
    Exists { path: PathBuf },
    #[error("no password: set {PASSWORD_ENV} (stdin is not a terminal to ask on)")]
    NoPassword,
    #[error("the passwords do not match")]
    PasswordMismatch,
    #[error("cannot read the password: {0}")]
    Prompt(std::io::Error),
    #[error("{path}: {detail}")]
    Predicate { path: PathBuf, detail: String },
    #[error(transparent)]
    Ref(#[from] RefError),
    #[error(transparent)]
    Sign(#[from] SignError),
    #[error(transparent)]
    Write(#[from] atomic_write::WriteError),
    #[error("reading the catalog to verify its bundle images: {0}")]
    Catalog(String),
}

/// The key's password: `COSIGN_PASSWORD` (even empty), else asked on the terminal (twice for
/// a new key).
pub fn password(confirm: bool) -> Result<Vec<u8>, TrustError> {
    if let Some(p) = std::env::var_os(PASSWORD_ENV) {
        return Ok(p.into_encoded_bytes());
    }
    if !super::prompt::can_ask() {
        return Err(TrustError::NoPassword);
    }
    let first =
        super::prompt::secret("Enter password for private key: ").map_err(TrustError::Prompt)?;
    if confirm {
        let again = super::prompt::secret("Enter password for private key again: ")
            .map_err(TrustError::Prompt)?;
        if again != first {
            return Err(TrustError::PasswordMismatch);
        }
    }
    Ok(first.into_bytes())
}

fn read_key_file(path: &Path) -> Result<Vec<u8>, TrustError> {
    let read = |source| TrustError::Read {
        path: path.to_path_buf(),
        source,
    };
    let size = std::fs::metadata(path).map_err(read)?.len();
    if size > MAX_KEY_FILE {
        return Err(TrustError::KeyTooLarge {
            path: path.to_path_buf(),
            size,
        });
    }
    std::fs::read(path).map_err(read)
}

/// Loads a private key file; the password is asked for only when it is encrypted.
pub fn load_private_key(path: &Path) -> Result<PrivateKey, TrustError> {
    let text = read_key_file(path)?;
    let mut failed = None;
    let loaded = PrivateKey::from_pem(&text, &path.display().to_string(), || {
        password(false).map_err(|e| {
            let msg = e.to_string();
            failed = Some(e);
            SignError::Payload { detail: msg }
        })
    });
    match (loaded, failed) {
        (Ok(k), _) => Ok(k),
        (Err(_), Some(e)) => Err(e),
        (Err(e), None) => Err(e.into()),
    }
}

pub fn load_public_key(path: &Path) -> Result<PublicKey, TrustError> {
    let text = read_key_file(path)?;
    Ok(PublicKey::from_pem(&text, &path.display().to_string())?)
}

/// Writes `<prefix>.key` (encrypted, mode 0600) and `<prefix>.pub`; refuses to replace
/// existing files unless `force`.
pub fn generate_key_pair(prefix: &str, force: bool) -> Result<(PathBuf, PathBuf), TrustError> {
    let private = PathBuf::from(format!("{prefix}.key"));
    let public = PathBuf::from(format!("{prefix}.pub"));
    for p in [&private, &public] {
        if !force && p.exists() {
            return Err(TrustError::Exists { path: p.clone() });
        }
    }
    let files = key::generate_key_pair(&password(true)?)?;
    atomic_write::write_atomic_private(&private, files.private_pem.as_bytes())?;
    atomic_write::write_atomic(&public, files.public_pem.as_bytes())?;
    Ok((private, public))
}

fn endpoints(refs: &[String]) -> Result<Vec<Endpoint>, TrustError> {
    refs.iter()
        .map(|r| Ok(endpoint(&ImageRef::parse(r)?)))
        .collect()
}

/// Signs each image.
pub async fn sign(
    refs: &[String],
    opts: &SignOptions<'_>,
    registry: &RegistryOptions,
) -> Result<Vec<Signed>, TrustError> {
    let engine = Engine::new(registry);
    let mut out = Vec::new();
    for e in endpoints(refs)? {
        out.extend(trust::sign(&engine, &e, opts).await?);
    }
    engine.finish();
    Ok(out)
}

/// Verifies each image; the first that does not verify is the error.
pub async fn verify(
    refs: &[String],
    key: &PublicKey,
    identity: Option<&str>,
    registry: &RegistryOptions,
) -> Result<Vec<VerifiedImage>, TrustError> {
    let engine = Engine::new(registry);
    let mut out = Vec::new();
    for e in endpoints(refs)? {
        out.push(trust::verify(&engine, &e, key, identity).await?);
    }
    engine.finish();
    Ok(out)
}

/// The largest predicate file read: its statement, in base64 inside the DSSE envelope (a third
/// more) and with room for JSON escaping, still fits one attestation layer
/// ([`limits::ATTESTATION_LAYER_BYTES`]); a predicate that does not is refused when attested.
pub const MAX_PREDICATE: u64 = limits::ATTESTATION_LAYER_BYTES * 3 / 8;

/// Reads a predicate file of `kind` (cosign's `--type`), at most [`MAX_PREDICATE`] bytes, and
/// makes the predicate cosign makes of it ([`payload::predicate`]; a `custom` predicate is
/// stamped with `SOURCE_DATE_EPOCH`, so the same inputs give the same attestation).
pub fn read_predicate(path: &Path, kind: &str) -> Result<serde_json::Value, TrustError> {
    let bad = |detail: String| TrustError::Predicate {
        path: path.to_path_buf(),
        detail,
    };
    let text = match limits::read_file(path, "a predicate", MAX_PREDICATE) {
        Ok(t) => t,
        Err(limits::ReadFileError::Io(source)) => {
            return Err(TrustError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
        Err(limits::ReadFileError::TooLarge(e)) => {
            let size = match e {
                crate::image::model::ModelError::TooLarge { size, .. } => size,
                _ => MAX_PREDICATE + 1,
            };
            return Err(bad(format!(
                "{} is over the {} limit for a predicate",
                limits::size_text(size),
                limits::limit_text(MAX_PREDICATE)
            )));
        }
    };
    let epoch = crate::reproducible::source_date_epoch().map_err(|e| bad(e.to_string()))?;
    payload::predicate(kind, &text, &crate::reproducible::rfc3339(epoch)).map_err(|e| match e {
        SignError::Payload { detail } => bad(detail),
        other => bad(other.to_string()),
    })
}

/// Attaches a signed attestation of `kind` (cosign's `--type`: spdxjson, cyclonedx, custom
/// or a URI) with the predicate in `predicate_file` to each image.
pub async fn attest(
    refs: &[String],
    key: &PrivateKey,
    kind: &str,
    predicate_file: &Path,
    identity: Option<&str>,
    registry: &RegistryOptions,
) -> Result<Vec<Attested>, TrustError> {
    let predicate = read_predicate(predicate_file, kind)?;
    let predicate_type = payload::predicate_type(kind);
    let engine = Engine::new(registry);
    let mut out = Vec::new();
    for e in endpoints(refs)? {
        let opts = trust::AttestOptions {
            key,
            predicate_type: &predicate_type,
            predicate: predicate.clone(),
            identity,
            digest: None,
        };
        out.push(trust::attest(&engine, &e, opts).await?);
    }
    engine.finish();
    Ok(out)
}

/// One image's verified attestations.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AttestationReport {
    pub reference: String,
    pub digest: String,
    pub attestations: Vec<VerifiedAttestation>,
}

/// Verifies each image's attestations (of `kind` when given).
pub async fn verify_attestations(
    refs: &[String],
    key: &PublicKey,
    kind: Option<&str>,
    registry: &RegistryOptions,
) -> Result<Vec<AttestationReport>, TrustError> {
    let wanted = kind.map(payload::predicate_type);
    let engine = Engine::new(registry);
    let mut out = Vec::new();
    for (r, e) in refs.iter().zip(endpoints(refs)?) {
        let (digest, attestations) =
            trust::verify_attestations(&engine, &e, key, wanted.as_deref()).await?;
        out.push(AttestationReport {
            reference: r.clone(),
            digest,
            attestations,
        });
    }
    engine.finish();
    Ok(out)
}

/// `k=v` annotations (`--annotation`).
pub fn parse_annotations(items: &[String]) -> Result<BTreeMap<String, String>, String> {
    items
        .iter()
        .map(|a| {
            a.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("--annotation {a:?}: expected KEY=VALUE"))
        })
        .collect()
}

/// The text report of verified images: who signed what.
pub fn verified_text(images: &[VerifiedImage]) -> String {
    let mut out = String::new();
    for i in images {
        out.push_str(&format!(
            "Verified {}: {} signature(s) valid with the key\n",
            i.reference,
            i.signatures.len()
        ));
        for s in &i.signatures {
            out.push_str(&format!("  identity: {}", s.identity));
            if !s.annotations.is_empty() {
                let a: Vec<String> = s
                    .annotations
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{k}={}",
                            v.as_str().map_or_else(|| v.to_string(), str::to_string)
                        )
                    })
                    .collect();
                out.push_str(&format!("  annotations: {}", a.join(", ")));
            }
            out.push('\n');
        }
    }
    out
}

/// What `olm install --verify-key` verified, and what to install from: the catalog and
/// bundle images pinned to the digests that verified, so a tag moved after the check installs
/// nothing unverified.
#[derive(Debug, Clone)]
pub struct VerifiedInstall {
    pub images: Vec<VerifiedImage>,
    /// `registry/repository@sha256:...` of the verified catalog image.
    pub catalog: Option<String>,
    /// The same for a bundle image installed directly.
    pub bundle: Option<String>,
}

/// Verifies `reference` and names it by the digest that verified (a layout keeps its name:
/// it is read from disk, not pulled again by tag).
async fn verify_one(
    engine: &Engine,
    reference: &str,
    key: &PublicKey,
) -> Result<(VerifiedImage, String), TrustError> {
    let parsed = ImageRef::parse(reference)?;
    let verified = trust::verify(engine, &endpoint(&parsed), key, None).await?;
    let pinned = match &parsed {
        ImageRef::Registry(r) => crate::image::reference::pinned(r, &verified.digest),
        ImageRef::Layout { .. } => reference.to_string(),
    };
    Ok((verified, pinned))
}

/// What `olm install --verify-key` checks before it creates anything: the catalog image first,
/// then, read from the digest that verified and loaded for `package` only, the image of every
/// bundle of that package it lists (several at once); and a bundle image installed directly.
pub async fn verify_install(
    catalog: Option<&str>,
    bundle: Option<&str>,
    package: Option<&str>,
    key: &PublicKey,
    registry: &RegistryOptions,
) -> Result<VerifiedInstall, TrustError> {
    use futures::StreamExt as _;
    let engine = Engine::new(registry);
    let mut out = VerifiedInstall {
        images: Vec::new(),
        catalog: None,
        bundle: None,
    };
    if let Some(bundle) = bundle {
        let (v, pinned) = verify_one(&engine, bundle, key).await?;
        out.images.push(v);
        out.bundle = Some(pinned);
    }
    if let Some(catalog) = catalog {
        let (v, pinned) = verify_one(&engine, catalog, key).await?;
        out.images.push(v);
        let spec = match package {
            Some(p) => Some(
                crate::catalog::filter::FilterSpec::new(
                    true,
                    vec![crate::catalog::filter::PackageFilter {
                        name: p.to_string(),
                        default_channel: None,
                        select: Default::default(),
                        channels: Vec::new(),
                    }],
                )
                .map_err(|e| TrustError::Catalog(e.to_string()))?,
            ),
            None => None,
        };
        let cfg = super::catalog_filter::read_catalog(&pinned, registry, spec.as_ref())
            .await
            .map_err(|e| TrustError::Catalog(e.to_string()))?;
        let mut bundles: Vec<String> = cfg
            .bundles
            .iter()
            .filter(|b| package.is_none_or(|p| b.package == p))
            .map(|b| b.image.clone())
            .filter(|i| !i.is_empty())
            .collect();
        bundles.sort();
        bundles.dedup();
        out.catalog = Some(pinned);
        let at_once = registry.concurrency.max(1);
        let checked: Vec<Result<(VerifiedImage, String), TrustError>> =
            futures::stream::iter(bundles.iter())
                .map(|b| verify_one(&engine, b, key))
                .buffered(at_once)
                .collect()
                .await;
        for c in checked {
            out.images.push(c?.0);
        }
    }
    engine.finish();
    Ok(out)
}
