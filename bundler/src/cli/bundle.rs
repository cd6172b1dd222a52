//! `olm bundle ...`.

use std::process::ExitCode;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum BundleCommand {
    /// Build the bundle image (one layer: manifests/, metadata/, tests/scorecard/).
    Build(super::image::BundleBuildArgs),
}

pub async fn run(cmd: BundleCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BundleCommand::Build(args) => super::image::bundle_build(args).await,
    }
}
