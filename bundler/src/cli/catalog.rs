//! `olm catalog ...`.

use std::process::ExitCode;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {}

pub async fn run(cmd: CatalogCommand) -> anyhow::Result<ExitCode> {
    match cmd {}
}
