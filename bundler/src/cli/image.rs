//! `olm image ...`, plus the image-building halves of `olm bundle build` and `olm catalog build`.
//!
//! Builds write to an OCI layout (`-t oci:<dir>[:tag]`, the default) or, with `--push`, to the
//! registry `-t` names. The pinned reference (`registry/repo@sha256:...`) goes to stdout, a
//! one-line summary of what was uploaded to the log on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::{Args, Subcommand};

use super::args::RegistryArgs;
use olm_bundler::atomic_write;
use olm_bundler::bundle::image as bundle;
use olm_bundler::image::model::Image;
use olm_bundler::image::operator::{OperatorImage, labels};
use olm_bundler::image::reference::ImageRef;
use olm_bundler::image::registry::RegistryOptions;
use olm_bundler::image::transfer;
use olm_bundler::ops::image_output;
use olm_bundler::reproducible::source_date_epoch;
use olm_bundler::serve::image::CatalogImage;

#[derive(Debug, Subcommand)]
pub enum ImageCommand {
    /// Build an operator image from a Linux binary (like ko, for any language): the binary,
    /// its shared-library closure when dynamic, a non-root user, CA certificates, OCI labels.
    #[command(
        after_help = "Examples:\n  olm image build --binary target/release/my-operator -t oci:target/operator:v0.1.0\n  olm image build --binary target/release/my-operator -t localhost:5000/org/my-operator:v0.1.0 --push"
    )]
    Build(Box<ImageBuildArgs>),
    /// Push an image from an OCI layout to a registry.
    #[command(
        after_help = "Examples:\n  olm image push oci:target/operator:v0.1.0 localhost:5000/org/my-operator:v0.1.0"
    )]
    Push(PushArgs),
    /// Pull an image from a registry into an OCI layout, or unpack its files (--rootfs).
    #[command(
        after_help = "Examples:\n  olm image pull quay.io/org/my-operator:v0.1.0 oci:pulled:v0.1.0\n  olm image pull quay.io/org/my-catalog:latest --rootfs /tmp/catalog-files"
    )]
    Pull(PullArgs),
    /// Show an image's digest, platform, labels and layers as JSON.
    #[command(
        after_help = "Examples:\n  olm image inspect oci:target/olm-release/catalog:0.2.1\n  olm image inspect quay.io/org/my-operator:v0.1.0 --raw"
    )]
    Inspect(InspectArgs),
    /// Copy an image between layouts and registries, keeping its digest.
    #[command(
        after_help = "Examples:\n  olm image copy oci:target/operator:v0.1.0 localhost:5000/org/my-operator:v0.1.0"
    )]
    Copy(CopyArgs),
}

pub async fn run(cmd: ImageCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ImageCommand::Build(a) => image_build(*a).await,
        ImageCommand::Push(a) => image_push(a).await,
        ImageCommand::Pull(a) => image_pull(a).await,
        ImageCommand::Inspect(a) => image_inspect(a).await,
        ImageCommand::Copy(a) => image_copy(a).await,
    }
}

/// Where a build goes: shared by the three build commands.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Where to put the image: `oci:<dir>[:tag]` (default `oci:oci-layout`), or a registry
    /// reference together with --push.
    #[arg(short = 't', long = "tag", value_name = "REF")]
    pub tag: Option<String>,
    /// Push to the registry named by -t.
    #[arg(long)]
    pub push: bool,
    /// Write the image digest (sha256:...) to this file.
    #[arg(long, value_name = "FILE")]
    pub digestfile: Option<PathBuf>,
}

/// Prints one result line on stdout; a closed pipe (`| head`) is not an error.
fn emit(line: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{line}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// A usage mistake: reported like clap's (exit code 2).
fn usage(msg: impl std::fmt::Display) -> anyhow::Result<ExitCode> {
    eprintln!("error: {msg}");
    Ok(ExitCode::from(2))
}

/// Checks `-t`/`--push` before building, so a usage mistake costs no build time.
fn destination(out: &OutputArgs) -> Result<ImageRef, String> {
    image_output::destination(out.tag.as_deref(), out.push)
}

/// Stores a built or loaded image, writes --digestfile and prints the pinned reference.
async fn deliver(
    image: &Image,
    dest: &ImageRef,
    digestfile: Option<&PathBuf>,
    opts: &RegistryOptions,
) -> anyhow::Result<ExitCode> {
    let stored = image_output::deliver(image, dest, digestfile.map(PathBuf::as_path), opts).await?;
    emit(&stored.pinned)?;
    Ok(ExitCode::SUCCESS)
}

/// `olm image build --binary <path> -t <ref>`.
#[derive(Debug, Args)]
pub struct ImageBuildArgs {
    /// The Linux binary to package (static, or dynamic: its libraries are packed too).
    #[arg(long, value_name = "PATH")]
    pub binary: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Where the binary goes in the image (default /usr/local/bin/<file name>).
    #[arg(long, value_name = "PATH")]
    pub install_path: Option<String>,
    /// An argument after the entrypoint (repeat for more).
    #[arg(long = "arg", value_name = "ARG", allow_hyphen_values = true)]
    pub args: Vec<String>,
    /// An environment variable KEY=VALUE (repeat for more).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    pub env: Vec<String>,
    /// An image label KEY=VALUE (repeat for more).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// org.opencontainers.image.source (the repository URL).
    #[arg(long)]
    pub source: Option<String>,
    /// org.opencontainers.image.revision (the commit).
    #[arg(long)]
    pub revision: Option<String>,
    /// org.opencontainers.image.version.
    #[arg(long = "image-version", value_name = "VERSION")]
    pub image_version: Option<String>,
    /// org.opencontainers.image.licenses (an SPDX expression).
    #[arg(long)]
    pub licenses: Option<String>,
    /// CA bundle to copy in (default: the host's /etc/ssl/certs/ca-certificates.crt).
    #[arg(long, value_name = "FILE", conflicts_with = "no_ca_certs")]
    pub ca_certs: Option<PathBuf>,
    /// Leave CA certificates out.
    #[arg(long)]
    pub no_ca_certs: bool,
    /// Extra directory to search for shared libraries (repeat for more).
    #[arg(long = "library-path", value_name = "DIR")]
    pub library_path: Vec<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

async fn image_build(a: ImageBuildArgs) -> anyhow::Result<ExitCode> {
    let dest = match destination(&a.output) {
        Ok(d) => d,
        Err(msg) => return usage(msg),
    };
    let opts = a.registry.options()?;
    let mut spec = OperatorImage::for_binary(a.binary.clone())?;
    if let Some(p) = &a.install_path {
        if !p.starts_with('/') {
            return usage(format!("--install-path {p:?}: must be absolute"));
        }
        spec.binary.install_path = p.clone();
    }
    spec.binary.library_path = a.library_path.clone();
    spec.args = a.args.clone();
    for e in &a.env {
        if !e.contains('=') {
            return usage(format!("--env {e:?}: expected KEY=VALUE"));
        }
    }
    spec.env = a.env.clone();
    spec.ca_bundle = image_output::ca_bundle(a.ca_certs.as_deref(), a.no_ca_certs);
    spec.labels = image_output::parse_labels(&a.labels).map_err(anyhow::Error::msg)?;
    for (key, value) in [
        (labels::SOURCE, &a.source),
        (labels::REVISION, &a.revision),
        (labels::VERSION, &a.image_version),
        (labels::LICENSES, &a.licenses),
    ] {
        if let Some(v) = value {
            spec.labels.insert(key.to_string(), v.clone());
        }
    }
    let image = spec
        .build()
        .with_context(|| format!("building the image for {}", a.binary.display()))?;
    deliver(&image, &dest, a.output.digestfile.as_ref(), &opts).await
}

/// `olm image push <oci:dir[:tag]> <registry ref>`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The image to push: `oci:<dir>[:tag]`.
    pub source: String,
    /// The registry reference to push to.
    pub destination: String,
    /// Write the image digest to this file.
    #[arg(long, value_name = "FILE")]
    pub digestfile: Option<PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

async fn image_push(a: PushArgs) -> anyhow::Result<ExitCode> {
    let src = ImageRef::parse(&a.source)?;
    let dst = ImageRef::parse(&a.destination)?;
    if src.is_registry() {
        return usage(format!(
            "{}: push reads a local OCI layout (oci:<dir>[:tag]); use `olm image copy` between registries",
            a.source
        ));
    }
    if !dst.is_registry() {
        return usage(format!(
            "{}: push needs a registry reference as destination",
            a.destination
        ));
    }
    let opts = a.registry.options()?;
    let image = transfer::load(&src, &opts).await?;
    deliver(&image, &dst, a.digestfile.as_ref(), &opts).await
}

/// `olm image pull <ref> oci:<dir>[:tag]` or `olm image pull <ref> --rootfs <dir>`.
#[derive(Debug, Args)]
pub struct PullArgs {
    /// The image to pull (registry reference or oci:<dir>[:tag]).
    pub source: String,
    /// The OCI layout to write: `oci:<dir>[:tag]`.
    #[arg(required_unless_present = "rootfs")]
    pub destination: Option<String>,
    /// Unpack the image's files into this directory instead of (or as well as) a layout.
    #[arg(long, value_name = "DIR")]
    pub rootfs: Option<PathBuf>,
    /// Write the image digest to this file.
    #[arg(long, value_name = "FILE")]
    pub digestfile: Option<PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

async fn image_pull(a: PullArgs) -> anyhow::Result<ExitCode> {
    let src = ImageRef::parse(&a.source)?;
    let dst = a.destination.as_deref().map(ImageRef::parse).transpose()?;
    if let Some(d) = &dst
        && d.is_registry()
    {
        return usage(format!(
            "{}: pull writes a local OCI layout (oci:<dir>[:tag]); use `olm image copy` between registries",
            d
        ));
    }
    let opts = a.registry.options()?;
    let image = transfer::load(&src, &opts).await?;
    if let Some(root) = &a.rootfs {
        olm_bundler::image::unpack::unpack_image(&image, root)?;
        tracing::info!("{}: unpacked {} into {}", src, image.digest, root.display());
    }
    match &dst {
        Some(d) => deliver(&image, d, a.digestfile.as_ref(), &opts).await,
        None => {
            if let Some(path) = &a.digestfile {
                atomic_write::write_atomic(path, image.digest.as_bytes())?;
            }
            emit(&image.digest)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `olm image inspect <ref>`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The image (registry reference or oci:<dir>[:tag]).
    pub image: String,
    /// Print only the raw manifest.
    #[arg(long)]
    pub raw: bool,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

async fn image_inspect(a: InspectArgs) -> anyhow::Result<ExitCode> {
    let src = ImageRef::parse(&a.image)?;
    let opts = a.registry.options()?;
    let info = transfer::inspect(&src, &opts).await?;
    let out = if a.raw {
        serde_json::to_string(&info["Manifest"])?
    } else {
        serde_json::to_string_pretty(&info)?
    };
    emit(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// `olm image copy <src> <dst>`.
#[derive(Debug, Args)]
pub struct CopyArgs {
    /// Source: registry reference or oci:<dir>[:tag].
    pub source: String,
    /// Destination: registry reference or oci:<dir>[:tag].
    pub destination: String,
    /// Write the image digest to this file.
    #[arg(long, value_name = "FILE")]
    pub digestfile: Option<PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

async fn image_copy(a: CopyArgs) -> anyhow::Result<ExitCode> {
    let src = ImageRef::parse(&a.source)?;
    let dst = ImageRef::parse(&a.destination)?;
    let opts = a.registry.options()?;
    let image = transfer::load(&src, &opts).await?;
    deliver(&image, &dst, a.digestfile.as_ref(), &opts).await
}

/// `olm bundle build <bundle dir> -t <ref>`.
#[derive(Debug, Args)]
pub struct BundleBuildArgs {
    /// The bundle directory (holding manifests/ and metadata/).
    pub bundle_dir: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub async fn bundle_build(args: BundleBuildArgs) -> anyhow::Result<ExitCode> {
    let dest = match destination(&args.output) {
        Ok(d) => d,
        Err(msg) => return usage(msg),
    };
    let opts = args.registry.options()?;
    let image = bundle::build_bundle_image(&args.bundle_dir, source_date_epoch()?)?;
    deliver(&image, &dest, args.output.digestfile.as_ref(), &opts).await
}

/// `olm catalog build <dir> -t <ref>`.
#[derive(Debug, Args)]
pub struct CatalogBuildArgs {
    /// The file-based catalog directory.
    pub catalog_dir: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The olm binary to put in the image as /bin/olm (default: this olm).
    #[arg(long, value_name = "PATH")]
    pub olm_binary: Option<PathBuf>,
    /// An image label KEY=VALUE (repeat for more).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// CA bundle to copy in (default: the host's /etc/ssl/certs/ca-certificates.crt).
    #[arg(long, value_name = "FILE", conflicts_with = "no_ca_certs")]
    pub ca_certs: Option<PathBuf>,
    /// Leave CA certificates out.
    #[arg(long)]
    pub no_ca_certs: bool,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub async fn catalog_build(args: CatalogBuildArgs) -> anyhow::Result<ExitCode> {
    let dest = match destination(&args.output) {
        Ok(d) => d,
        Err(msg) => return usage(msg),
    };
    let opts = args.registry.options()?;
    let olm_binary = match &args.olm_binary {
        Some(p) => p.clone(),
        None => std::env::current_exe().context("finding the running olm binary")?,
    };
    let image = CatalogImage {
        catalog_dir: args.catalog_dir.clone(),
        olm_binary,
        labels: image_output::parse_labels(&args.labels).map_err(anyhow::Error::msg)?,
        ca_bundle: image_output::ca_bundle(args.ca_certs.as_deref(), args.no_ca_certs),
        created: source_date_epoch()?,
    }
    .build()
    .with_context(|| {
        format!(
            "building the catalog image for {}",
            args.catalog_dir.display()
        )
    })?;
    deliver(&image, &dest, args.output.digestfile.as_ref(), &opts).await
}
