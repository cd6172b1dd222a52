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
mod catalog_opm;
mod deploy;
mod image;
mod install;
mod install_v1;
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
    #[command(
        after_help = "Examples:\n  olm install --catalog quay.io/org/my-catalog:latest --package my-operator --channel stable\n  olm install --olm-v1 --catalog quay.io/org/my-catalog:v1 --package my-operator --bundle-dir bundle/\n  olm install --catalog-address 192.168.1.10:50051 --package my-operator\n  olm install --bundle localhost:5000/org/my-operator-bundle:v0.1.0 --index-image localhost:5000/org/one-bundle-catalog"
    )]
    Install(Box<install::InstallArgs>),
    /// Move an installed package to the next version its Subscription resolves.
    #[command(
        after_help = "Examples:\n  olm upgrade my-operator\n  olm upgrade my-operator --catalog quay.io/org/my-catalog:v2\n  olm upgrade my-operator --olm-v1 --version-range 0.3.x"
    )]
    Upgrade(install::UpgradeArgs),
    /// Remove what `olm install` created, in order, waiting for each deletion.
    #[command(
        after_help = "Examples:\n  olm uninstall my-operator\n  olm uninstall my-operator --olm-v1"
    )]
    Uninstall(install::UninstallArgs),
    /// Show the Subscription, InstallPlan, CSV and Deployments of an installed package.
    #[command(
        after_help = "Examples:\n  olm status my-operator\n  olm status my-operator -o json\n  olm status my-operator --olm-v1"
    )]
    Status(install::StatusArgs),
    /// The whole release: manifests, bundle, operator/bundle/catalog images, catalog/, deploy/.
    #[command(disable_version_flag = true)]
    #[command(
        after_help = "Examples:\n  olm release\n  olm release --version 0.3.0 --replaces reverse-words-operator.v0.2.1 --registry localhost:5000"
    )]
    Release(Box<release::ReleaseArgs>),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(
        after_help = "Examples:\n  olm completion bash > ~/.local/share/bash-completion/completions/olm\n  olm completion zsh > \"${fpath[1]}/_olm\"\n  olm completion fish > ~/.config/fish/completions/olm.fish"
    )]
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Bundle(c) => bundle::run(c).await,
        Command::Image(c) => image::run(c).await,
        Command::Catalog(c) => catalog::run(c).await,
        Command::Deploy(c) => deploy::run(c).await,
        Command::Install(a) if a.olm_v1 => {
            let a = *a;
            install_v1::install(install_v1::Install {
                package: a.package.unwrap_or_default(),
                catalog: a.catalog.unwrap_or_default(),
                spec: a.spec,
                names: a.v1_names,
                filter: a.v1_filter,
                bundle_dir: a.bundle_dir,
                cluster: a.cluster,
            })
            .await
        }
        Command::Install(a) => install::install(*a).await,
        Command::Upgrade(a) if a.olm_v1 => {
            install_v1::upgrade(install_v1::Upgrade {
                package: a.package,
                namespace: a.namespace,
                catalog: a.catalog,
                channel: a.channel,
                names: a.v1_names,
                filter: a.v1_filter,
                cluster: a.cluster,
            })
            .await
        }
        Command::Upgrade(a) => install::upgrade(a).await,
        Command::Uninstall(a) if a.olm_v1 => {
            install_v1::uninstall(a.package, a.namespace, a.v1_names, a.cluster).await
        }
        Command::Uninstall(a) => install::uninstall(a).await,
        Command::Status(a) if a.olm_v1 => {
            let json = matches!(a.output, install::OutputFormat::Json);
            install_v1::status(a.package, a.v1_names, json, a.cluster).await
        }
        Command::Status(a) => install::status(a).await,
        Command::Release(a) => release::run(*a).await,
        Command::Completion { shell } => {
            use clap::CommandFactory as _;
            clap_complete::generate(shell, &mut Cli::command(), "olm", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
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

#[cfg(test)]
mod tests {
    use clap::{CommandFactory as _, Parser as _};

    /// Every command a user runs (each leaf of the tree) shows at least one example in its
    /// `--help`.
    #[test]
    fn every_command_has_an_example() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let path = format!("{path} {}", cmd.get_name());
            let subs: Vec<_> = cmd
                .get_subcommands()
                .filter(|c| !c.is_hide_set() && c.get_name() != "help")
                .collect();
            if subs.is_empty() {
                let help = cmd
                    .get_after_help()
                    .or(cmd.get_after_long_help())
                    .map(|h| h.to_string())
                    .unwrap_or_default();
                if !help.contains("Examples:\n  olm ") {
                    missing.push(path.clone());
                }
                // Each example parses as the command it illustrates.
                for line in help
                    .lines()
                    .filter_map(|l| l.split_once("olm ").map(|(_, r)| r))
                {
                    let line = line.split(['|', '>', '#']).next().unwrap_or_default();
                    let argv = std::iter::once("olm").chain(line.split_whitespace());
                    if let Err(e) = super::Cli::try_parse_from(argv) {
                        missing.push(format!("{path}: `olm {line}` does not parse: {e}"));
                    }
                }
            }
            for s in subs {
                walk(s, &path, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&super::Cli::command(), "", &mut missing);
        assert!(
            missing.is_empty(),
            "no example, or a wrong one, in --help: {missing:#?}"
        );
    }

    #[test]
    fn completion_scripts_name_the_commands() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut super::Cli::command(), "olm", &mut out);
            let text = String::from_utf8(out).unwrap();
            for word in ["catalog", "convert-template", "check-upgrades", "release"] {
                assert!(text.contains(word), "{shell}: {word}");
            }
        }
    }
}
