//! `olm catalog ...`.

use std::process::ExitCode;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Build the catalog image: FBC under /configs, served by `olm catalog serve` on :50051.
    Build(super::image::CatalogBuildArgs),
}

pub async fn run(cmd: CatalogCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CatalogCommand::Build(args) => super::image::catalog_build(args).await,
    }
}
