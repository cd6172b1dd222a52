//! `olm image ...`, plus the image-building halves of `olm bundle build` and `olm catalog build`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

#[derive(Debug, Subcommand)]
pub enum ImageCommand {}

pub async fn run(cmd: ImageCommand) -> anyhow::Result<ExitCode> {
    match cmd {}
}

/// `olm bundle build <bundle dir> -t <ref>`.
#[derive(Debug, Args)]
pub struct BundleBuildArgs {
    /// The bundle directory (holding manifests/ and metadata/).
    pub bundle_dir: PathBuf,
    /// Where to put the image: `oci:<dir>[:tag]` or a registry reference.
    #[arg(short = 't', long = "tag")]
    pub tag: Option<String>,
}

pub async fn bundle_build(args: BundleBuildArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "building bundle images is not available in this build ({})",
        args.bundle_dir.display()
    )
}

/// `olm catalog build <dir> -t <ref>`.
#[derive(Debug, Args)]
pub struct CatalogBuildArgs {
    /// The file-based catalog directory.
    pub catalog_dir: PathBuf,
    /// Where to put the image: `oci:<dir>[:tag]` or a registry reference.
    #[arg(short = 't', long = "tag")]
    pub tag: Option<String>,
}

pub async fn catalog_build(args: CatalogBuildArgs) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "building catalog images is not available in this build ({})",
        args.catalog_dir.display()
    )
}
