//! What every command prints with: results to stdout (a closed pipe is not an error),
//! errors to stderr with their causes, and the exit codes (1 failure, 2 usage).

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use olm_bundler::ops::catalog_source::CatalogModelError;

/// Writes `text` to stdout; `olm ... | head` closing the pipe is not an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    written(out.write_all(text.as_bytes()).and_then(|_| out.flush()))
}

/// The outcome of writing to stdout: a reader that went away (`| head`) is no error.
pub fn written(r: std::io::Result<()>) -> anyhow::Result<()> {
    match r {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write to stdout")
        }
        _ => Ok(()),
    }
}

/// Writes `text` to the file `out` (atomically), or to stdout.
pub fn emit(text: &str, out: Option<&Path>) -> anyhow::Result<()> {
    match out {
        Some(p) => {
            olm_bundler::atomic_write::write_atomic(p, text.as_bytes())?;
            Ok(())
        }
        None => print(text),
    }
}

/// `value` as indented JSON and a newline, as JSON reports print.
pub fn json_text(value: &impl serde::Serialize) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// Prints an error with its causes, one per line.
pub fn report(err: &anyhow::Error) {
    eprintln!("error: {err}");
    for cause in err.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
}

/// A usage mistake, reported like clap's: exit code 2.
pub fn usage(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// A failure: the error and its causes, exit code 1.
pub fn failure(err: impl Into<anyhow::Error>) -> ExitCode {
    report(&err.into());
    ExitCode::FAILURE
}

/// Writes `text` to stdout, then exits with `failed`'s code; a failed write (other than a
/// closed pipe) is the failure.
pub fn show(text: &str, failed: bool) -> ExitCode {
    match print(text) {
        Ok(()) => exit(failed),
        Err(e) => failure(e),
    }
}

/// Exit code 1 when `failed`.
pub fn exit(failed: bool) -> ExitCode {
    ExitCode::from(u8::from(failed))
}

/// The error of a catalog that could not be had; one that does not validate prints its
/// report first.
pub fn model_error(e: CatalogModelError) -> anyhow::Error {
    if let CatalogModelError::Invalid { report, .. } = &e {
        eprint!("{}", report.to_text());
    }
    e.into()
}
