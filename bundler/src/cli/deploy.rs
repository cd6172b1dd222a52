//! `olm deploy ...`.

use std::process::ExitCode;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum DeployCommand {}

pub async fn run(cmd: DeployCommand) -> anyhow::Result<ExitCode> {
    match cmd {}
}
