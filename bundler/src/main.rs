//! `olm`: one daemon-free CLI for OLM packaging.

use std::process::ExitCode;

use clap::Parser;

mod cli;
#[cfg(test)]
mod cli_tests;

fn main() -> ExitCode {
    if let Some(code) = olm_bundler::serve::runtime::probe::main_if_invoked_as_probe() {
        return code;
    }
    let args = cli::Cli::parse();
    olm_bundler::ops::progress::set_color(args.color.into());
    init_logging(args.verbosity());
    // Ctrl-C or SIGTERM removes the scratch (unpacked images, staged catalogs) before exiting.
    olm_bundler::scratch::install_signal_cleanup();
    olm_bundler::ops::progress::set_quiet(args.quiet);
    let mut builder = match needs_workers(&args.command) {
        true => tokio::runtime::Builder::new_multi_thread(),
        false => tokio::runtime::Builder::new_current_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(args)) {
        Ok(code) => code,
        Err(err) => {
            cli::report(&err);
            ExitCode::FAILURE
        }
    }
}

/// Whether the command runs on a runtime with worker threads: the server, and everything
/// that talks to clusters or pushes images. Commands that work on catalogs run on the calling
/// thread (their parallel work uses threads of its own; `render` of an image awaits one pull
/// at a time), which spares a process that lives for milliseconds two idle workers.
fn needs_workers(command: &cli::Command) -> bool {
    use cli::{CatalogCommand as C, Command};
    !matches!(
        command,
        Command::Catalog(
            C::Render(_)
                | C::Template(_)
                | C::Validate(_)
                | C::Graph(_)
                | C::UpgradePath(_)
                | C::Add(_)
                | C::CheckUpgrades(_)
                | C::Init(_)
                | C::ConvertTemplate(_)
        ) | Command::Completion { .. }
    )
}

/// Logs go to stderr so stdout stays clean for rendered YAML/JSON; coloured only as
/// `--color` and `NO_COLOR` allow (never into a file or a pipe under `auto`).
fn init_logging(verbose: u8) {
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
        .with_ansi(olm_bundler::ops::progress::stderr_color())
        .with_target(false)
        .without_time()
        .try_init();
}
