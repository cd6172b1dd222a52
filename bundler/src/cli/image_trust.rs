//! `olm image generate-key-pair|sign|verify|attest|verify-attestation`: cosign-compatible
//! keys, signatures and attestations for images in registries and OCI layouts.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};

use olm_bundler::image::sign::trust::SignOptions;
use olm_bundler::ops::image_trust::{self, TrustError};

use super::args::RegistryArgs;
use super::output::{json_text, print, usage};

#[derive(Debug, Subcommand)]
pub enum TrustCommand {
    /// Write a new ECDSA P-256 key pair as cosign does: <prefix>.key (encrypted with the
    /// password from COSIGN_PASSWORD, else asked twice without echo) and <prefix>.pub.
    #[command(
        after_help = "Examples:\n  olm image generate-key-pair\n  COSIGN_PASSWORD=... olm image generate-key-pair --output-key-prefix release"
    )]
    GenerateKeyPair(KeyPairArgs),
    /// Sign images as cosign does: a simple-signing payload for the digest the image has now,
    /// stored under sha256-<hex>.sig in its repository (or OCI layout).
    #[command(
        after_help = "Examples:\n  olm image sign quay.io/org/my-operator:v0.1.0 --key cosign.key\n  olm image sign quay.io/org/my-operator:v0.1.0 --key cosign.key --recursive -a git-sha=abc123\n  olm image sign oci:target/operator:v0.1.0 --key cosign.key --identity quay.io/org/my-operator"
    )]
    Sign(SignArgs),
    /// Verify images' signatures with a public key, as `cosign verify --key` does.
    #[command(
        after_help = "Examples:\n  olm image verify quay.io/org/my-operator:v0.1.0 --key cosign.pub\n  olm image verify mirror.local/org/my-operator@sha256:... --key cosign.pub --identity quay.io/org/my-operator -o json"
    )]
    Verify(VerifyArgs),
    /// Attach a signed in-toto attestation (DSSE) with a predicate from a file, as
    /// `cosign attest` does, under sha256-<hex>.att.
    #[command(
        after_help = "Examples:\n  olm image attest quay.io/org/my-operator:v0.1.0 --key cosign.key --predicate sbom.spdx.json --type spdxjson"
    )]
    Attest(AttestArgs),
    /// Verify images' attestations with a public key, as `cosign verify-attestation` does.
    #[command(
        after_help = "Examples:\n  olm image verify-attestation quay.io/org/my-operator:v0.1.0 --key cosign.pub --type spdxjson"
    )]
    VerifyAttestation(VerifyAttestationArgs),
}

#[derive(Debug, Args)]
pub struct KeyPairArgs {
    /// The files' name without extension.
    #[arg(long, value_name = "PREFIX", default_value = "cosign")]
    pub output_key_prefix: String,
    /// Replace existing key files.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct SignArgs {
    /// Images: registry references or oci:<dir>[:tag].
    #[arg(required = true, value_name = "REF")]
    pub images: Vec<String>,
    /// The private key file (cosign.key, or an unencrypted PKCS#8 / EC key).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// An annotation KEY=VALUE in the signed payload (repeat for more).
    #[arg(short = 'a', long = "annotation", value_name = "KEY=VALUE")]
    pub annotations: Vec<String>,
    /// Also sign each platform's image of a multi-platform image.
    #[arg(long)]
    pub recursive: bool,
    /// The repository the signature names [default: the image's own; required for a layout].
    #[arg(long, value_name = "REPO")]
    pub identity: Option<String>,
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: Format,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[arg(required = true, value_name = "REF")]
    pub images: Vec<String>,
    /// The public key file (cosign.pub).
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// Require this signed identity (repository); a mirrored copy keeps the original's.
    #[arg(long, value_name = "REPO")]
    pub identity: Option<String>,
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: Format,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Debug, Args)]
pub struct AttestArgs {
    #[arg(required = true, value_name = "REF")]
    pub images: Vec<String>,
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// The predicate file: any text for custom (wrapped as {"Data","Timestamp"}) and spdx
    /// (tag-value), a JSON document for the other names, a JSON object for a URI type.
    #[arg(long, value_name = "FILE")]
    pub predicate: PathBuf,
    /// spdxjson, cyclonedx, custom, slsaprovenance, openvex, vuln, link, or a predicate URI.
    #[arg(long = "type", value_name = "TYPE", default_value = "custom")]
    pub kind: String,
    /// The repository the statement's subject names [default: the image's own; required for
    /// a layout].
    #[arg(long, value_name = "REPO")]
    pub identity: Option<String>,
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: Format,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Debug, Args)]
pub struct VerifyAttestationArgs {
    #[arg(required = true, value_name = "REF")]
    pub images: Vec<String>,
    #[arg(long, value_name = "FILE")]
    pub key: PathBuf,
    /// Only attestations of this type (as for attest) count.
    #[arg(long = "type", value_name = "TYPE")]
    pub kind: Option<String>,
    #[arg(short = 'o', long, value_enum, default_value = "text")]
    pub output: Format,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub async fn run(cmd: TrustCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        TrustCommand::GenerateKeyPair(a) => {
            let (private, public) = image_trust::generate_key_pair(&a.output_key_prefix, a.force)?;
            eprintln!("Private key written to {}", private.display());
            eprintln!("Public key written to {}", public.display());
            Ok(ExitCode::SUCCESS)
        }
        TrustCommand::Sign(a) => sign(a).await,
        TrustCommand::Verify(a) => verify(a).await,
        TrustCommand::Attest(a) => attest(a).await,
        TrustCommand::VerifyAttestation(a) => verify_attestation(a).await,
    }
}

async fn sign(a: SignArgs) -> anyhow::Result<ExitCode> {
    let annotations = match image_trust::parse_annotations(&a.annotations) {
        Ok(x) => x,
        Err(msg) => return Ok(usage(msg)),
    };
    let key = image_trust::load_private_key(&a.key)?;
    let opts = SignOptions {
        key: &key,
        annotations,
        recursive: a.recursive,
        identity: a.identity,
    };
    let signed = image_trust::sign(&a.images, &opts, &a.registry.options()?).await?;
    match a.output {
        Format::Json => print(&json_text(&signed))?,
        Format::Text => {
            for s in &signed {
                let state = if s.added { "signed" } else { "already signed" };
                print(&format!(
                    "{state} {} as {} ({})\n",
                    s.digest, s.identity, s.tag
                ))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Verification failures are reported as such (exit 1), not as crashes.
fn verdict<T>(r: Result<T, TrustError>) -> anyhow::Result<Result<T, ExitCode>> {
    match r {
        Ok(v) => Ok(Ok(v)),
        Err(TrustError::Sign(e)) => {
            eprintln!("error: {e}");
            Ok(Err(ExitCode::FAILURE))
        }
        Err(e) => Err(e.into()),
    }
}

async fn verify(a: VerifyArgs) -> anyhow::Result<ExitCode> {
    let key = image_trust::load_public_key(&a.key)?;
    let opts = a.registry.options()?;
    let images =
        match verdict(image_trust::verify(&a.images, &key, a.identity.as_deref(), &opts).await)? {
            Ok(v) => v,
            Err(code) => return Ok(code),
        };
    match a.output {
        Format::Json => print(&json_text(&images))?,
        Format::Text => print(&image_trust::verified_text(&images))?,
    }
    Ok(ExitCode::SUCCESS)
}

async fn attest(a: AttestArgs) -> anyhow::Result<ExitCode> {
    let key = image_trust::load_private_key(&a.key)?;
    let done = image_trust::attest(
        &a.images,
        &key,
        &a.kind,
        &a.predicate,
        a.identity.as_deref(),
        &a.registry.options()?,
    )
    .await?;
    match a.output {
        Format::Json => print(&json_text(&done))?,
        Format::Text => {
            for d in &done {
                let state = if d.added {
                    "attested"
                } else {
                    "already attested"
                };
                print(&format!(
                    "{state} {} ({}) in {}\n",
                    d.digest, d.predicate_type, d.tag
                ))?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn verify_attestation(a: VerifyAttestationArgs) -> anyhow::Result<ExitCode> {
    let key = image_trust::load_public_key(&a.key)?;
    let opts = a.registry.options()?;
    let reports = match verdict(
        image_trust::verify_attestations(&a.images, &key, a.kind.as_deref(), &opts).await,
    )? {
        Ok(v) => v,
        Err(code) => return Ok(code),
    };
    match a.output {
        Format::Json => print(&json_text(&reports))?,
        Format::Text => {
            for r in &reports {
                print(&format!(
                    "Verified {}@{}: {} attestation(s) valid with the key\n",
                    r.reference,
                    r.digest,
                    r.attestations.len()
                ))?;
                for at in &r.attestations {
                    print(&format!("  {} about {}\n", at.predicate_type, at.subject))?;
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
