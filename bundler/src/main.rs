//! `olm`: one daemon-free CLI for OLM packaging.

use std::process::ExitCode;

use clap::Parser;

mod cli;

fn main() -> ExitCode {
    if let Some(code) = olm_bundler::serve::runtime::probe::main_if_invoked_as_probe() {
        return code;
    }
    let args = cli::Cli::parse();
    cli::init_logging(args.verbosity());
    cli::set_quiet(args.quiet);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
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
