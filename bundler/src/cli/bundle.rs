//! `olm bundle ...`.

use std::process::ExitCode;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum BundleCommand {}

pub async fn run(cmd: BundleCommand) -> anyhow::Result<ExitCode> {
    match cmd {}
}
