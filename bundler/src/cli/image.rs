//! `olm image ...`: build an operator image, push, pull, inspect, copy.
//!
//! Builds write to an OCI layout (`-t oci:<dir>[:tag]`, the default) or, with `--push`, to the
//! registry `-t` names. The pinned reference (`registry/repo@sha256:...`) goes to stdout, a
//! one-line summary of what was uploaded to the log on stderr.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use olm_bundler::image::model::Platform;
use olm_bundler::image::reference::ImageRef;
use olm_bundler::image::registry::RegistryOptions;
use olm_bundler::image::transfer;
use olm_bundler::ops::image_output::{
    self, Direction, MoveError, OperatorImageError, OperatorImageRequest,
};

use super::args::{OutputArgs, RegistryArgs, UnpackArgs};
use super::output::{print, usage};

#[derive(Debug, Subcommand)]
pub enum ImageCommand {
    /// Build an operator image from a Linux binary (like ko, for any language): the binary,
    /// its shared-library closure when dynamic, a non-root user, CA certificates, OCI labels.
    /// Several --binary (one per platform) make a multi-platform image (an OCI index).
    /// Writes the image's SPDX SBOM beside a layout (or to --sbom).
    #[command(
        after_help = "Examples:\n  olm image build --binary target/release/my-operator -t oci:target/operator:v0.1.0\n  olm image build --binary target/release/my-operator -t localhost:5000/org/my-operator:v0.1.0 --push\n  olm image build --binary target/x86_64-unknown-linux-musl/release/op --binary target/aarch64-unknown-linux-musl/release/op -t oci:target/operator:v0.1.0"
    )]
    Build(Box<ImageBuildArgs>),
    /// Push an image from an OCI layout to a registry.
    #[command(
        after_help = "Examples:\n  olm image push oci:target/operator:v0.1.0 localhost:5000/org/my-operator:v0.1.0"
    )]
    Push(MoveArgs),
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
    Copy(MoveArgs),
}

pub async fn run(cmd: ImageCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        ImageCommand::Build(a) => image_build(*a).await,
        ImageCommand::Push(a) => image_move(Direction::Push, a).await,
        ImageCommand::Pull(a) => image_pull(a).await,
        ImageCommand::Inspect(a) => image_inspect(a).await,
        ImageCommand::Copy(a) => image_move(Direction::Copy, a).await,
    }
}

/// `olm image build --binary <path> -t <ref>`.
#[derive(Debug, Args)]
pub struct ImageBuildArgs {
    /// The Linux binary to package (static, or dynamic: its libraries are packed too). Repeat
    /// with the same program built for other architectures for a multi-platform image; the
    /// platform of each is read from its ELF header.
    #[arg(long, value_name = "PATH", required = true)]
    pub binary: Vec<PathBuf>,
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
    /// A license file to copy into /licenses/ (repeat for more; certification asks for it).
    #[arg(long = "license", value_name = "FILE")]
    pub license_files: Vec<PathBuf>,
    /// CA bundle to copy in (default: the host's /etc/ssl/certs/ca-certificates.crt).
    #[arg(long, value_name = "FILE", conflicts_with = "no_ca_certs")]
    pub ca_certs: Option<PathBuf>,
    /// Leave CA certificates out.
    #[arg(long)]
    pub no_ca_certs: bool,
    /// Extra directory to search for shared libraries (repeat for more).
    #[arg(long = "library-path", value_name = "DIR")]
    pub library_path: Vec<String>,
    /// Write the image's SPDX 2.3 JSON SBOM here (default: beside an OCI layout,
    /// `<dir>.spdx.json`; with --push only when given).
    #[arg(long, value_name = "PATH", conflicts_with = "no_sbom")]
    pub sbom: Option<PathBuf>,
    /// Write no SBOM.
    #[arg(long)]
    pub no_sbom: bool,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

async fn image_build(a: ImageBuildArgs) -> anyhow::Result<ExitCode> {
    let dest = match a.output.destination() {
        Ok(d) => d,
        Err(msg) => return Ok(usage(msg)),
    };
    let opts = a.registry.options()?;
    let first = a.binary.first().cloned().unwrap_or_default();
    let req = OperatorImageRequest {
        binaries: a.binary,
        install_path: a.install_path,
        library_path: a.library_path,
        args: a.args,
        env: a.env,
        labels: a.labels,
        source: a.source,
        revision: a.revision,
        version: a.image_version,
        licenses: a.licenses,
        license_files: a.license_files,
        ca_certs: a.ca_certs,
        no_ca_certs: a.no_ca_certs,
    };
    let image = match image_output::operator_image(&req) {
        Ok(image) => image,
        Err(OperatorImageError::Usage(msg)) => return Ok(usage(msg)),
        Err(e) => return Err(e.into()),
    };
    let code = a.output.deliver(&image, &dest, &opts).await?;
    // Only for an image that was stored: no SBOM of an image a failed push never made.
    image_output::write_build_sbom(&image, &dest, &first, a.sbom.as_deref(), a.no_sbom)?;
    Ok(code)
}

/// `olm image push <oci:dir[:tag]> <registry ref>` and `olm image copy <src> <dst>`.
#[derive(Debug, Args)]
pub struct MoveArgs {
    /// The image: `oci:<dir>[:tag]` (push), or that or a registry reference (copy).
    pub source: String,
    /// Where to: a registry reference (push), or that or `oci:<dir>[:tag]` (copy).
    pub destination: String,
    /// Write the image digest to this file.
    #[arg(long, value_name = "FILE")]
    pub digestfile: Option<PathBuf>,
    /// Move only this platform's image of a multi-platform image (OS/ARCH[/VARIANT], e.g.
    /// linux/arm64); by default an index moves whole, every image and the index itself.
    #[arg(long, value_name = "OS/ARCH", value_parser = parse_platform)]
    pub platform: Option<Platform>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

async fn image_move(direction: Direction, a: MoveArgs) -> anyhow::Result<ExitCode> {
    let (dst, file) = (Some(a.destination.as_str()), a.digestfile.as_deref());
    moved(
        direction,
        &a.source,
        dst,
        None,
        file,
        a.platform.as_ref(),
        a.registry.options()?,
    )
    .await
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
    /// Move only this platform's image of a multi-platform image (OS/ARCH[/VARIANT], e.g.
    /// linux/arm64); by default an index moves whole, every image and the index itself.
    #[arg(long, value_name = "OS/ARCH", value_parser = parse_platform)]
    pub platform: Option<Platform>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
}

async fn image_pull(a: PullArgs) -> anyhow::Result<ExitCode> {
    let (dst, file) = (a.destination.as_deref(), a.digestfile.as_deref());
    moved(
        Direction::Pull,
        &a.source,
        dst,
        a.rootfs.as_deref(),
        file,
        a.platform.as_ref(),
        a.registry.reading(&a.unpack)?,
    )
    .await
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
    print(&format!("{out}\n"))?;
    Ok(ExitCode::SUCCESS)
}

/// Moves an image and prints its pinned reference (or its digest when only unpacked).
async fn moved(
    direction: Direction,
    source: &str,
    destination: Option<&str>,
    rootfs: Option<&Path>,
    digestfile: Option<&Path>,
    platform: Option<&Platform>,
    opts: RegistryOptions,
) -> anyhow::Result<ExitCode> {
    let (src, dst) = (source, destination);
    match image_output::move_image(direction, src, dst, rootfs, digestfile, platform, &opts).await {
        Ok((_, Some(stored))) => print(&format!("{}\n", stored.pinned))?,
        Ok((digest, None)) => print(&format!("{digest}\n"))?,
        Err(MoveError::Usage(msg)) => return Ok(usage(msg)),
        Err(e) => return Err(e.into()),
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_platform(s: &str) -> Result<Platform, String> {
    s.parse()
}
