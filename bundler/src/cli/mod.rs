//! Command-line surface of `olm`. Each area has its own module with its clap arguments and a
//! `run` that calls into the library; this file only wires them together.
//!
//! Exit codes: 0 success, 1 failure (including validation errors), 2 usage errors (clap) and
//! the I/O failures a command chooses to report as such.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod args;
mod bundle;
mod catalog;
mod deploy;
mod image;
mod install;
mod olmv1;
mod progress;
mod release;
mod serve;
mod upgrade_check;

#[derive(Debug, Parser)]
#[command(
    name = "olm",
    version,
    about = "Package operators for OLM: bundles, daemon-free images, file-based catalogs, installs",
    propagate_version = true
)]
pub struct Cli {
    /// More log output (-v debug, -vv trace). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// No progress (spinners, bars, step lines); results and errors are printed as always.
    /// Progress is drawn only when stderr is a terminal anyway.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// registry+v1 bundles: generate, validate, build.
    #[command(subcommand)]
    Bundle(bundle::BundleCommand),
    /// OCI images: build an operator image, push, pull, inspect, copy.
    #[command(subcommand)]
    Image(image::ImageCommand),
    /// File-based catalogs: render, template, validate, graph, serve, build.
    #[command(subcommand)]
    Catalog(catalog::CatalogCommand),
    /// Install manifests for OLM and for plain clusters.
    #[command(subcommand)]
    Deploy(deploy::DeployCommand),
    /// Install a package from a catalog image through a Subscription, and wait for it.
    Install(Box<install::InstallArgs>),
    /// Move an installed package to the next version its Subscription resolves.
    Upgrade(install::UpgradeArgs),
    /// Remove what `olm install` created, in order, waiting for each deletion.
    Uninstall(install::UninstallArgs),
    /// Show the Subscription, InstallPlan, CSV and Deployments of an installed package.
    Status(install::StatusArgs),
    /// The whole release: manifests, bundle, operator/bundle/catalog images, catalog/, deploy/.
    #[command(disable_version_flag = true)]
    Release(Box<release::ReleaseArgs>),
}

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Bundle(c) => bundle::run(c).await,
        Command::Image(c) => image::run(c).await,
        Command::Catalog(c) => catalog::run(c).await,
        Command::Deploy(c) => deploy::run(c).await,
        Command::Install(a) => install::install(*a).await,
        Command::Upgrade(a) => install::upgrade(a).await,
        Command::Uninstall(a) => install::uninstall(a).await,
        Command::Status(a) => install::status(a).await,
        Command::Release(a) => release::run(*a).await,
    }
}

impl Cli {
    /// The log level: `-v` count, at least debug under `catalog serve --debug` (opm's flag).
    /// Set once for the process, so the server's blocking tasks and connections log too.
    pub fn verbosity(&self) -> u8 {
        match &self.command {
            Command::Catalog(catalog::CatalogCommand::Serve(a)) if a.debug => self.verbose.max(1),
            _ => self.verbose,
        }
    }
}

/// `--quiet` for every command.
pub fn set_quiet(quiet: bool) {
    progress::set_quiet(quiet);
}

/// Logs go to stderr so stdout stays clean for rendered YAML/JSON.
pub fn init_logging(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let default = match verbose {
        0 => "warn,olm=info,olm_bundler=info",
        1 => "info,olm=debug,olm_bundler=debug",
        _ => "debug,olm=trace,olm_bundler=trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .without_time()
        .try_init();
}

/// Prints an error with its causes, one per line.
pub fn report(err: &anyhow::Error) {
    eprintln!("error: {err}");
    for cause in err.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
}
