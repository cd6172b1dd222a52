//! `olm image ...`.

use std::process::ExitCode;

use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum ImageCommand {}

pub async fn run(cmd: ImageCommand) -> anyhow::Result<ExitCode> {
    match cmd {}
}
