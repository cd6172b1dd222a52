//! Progress on stderr for whatever can take over a second: cluster waits, pulls and pushes,
//! release steps. Drawn only on a terminal and never with `--quiet`; results go to stdout and
//! errors to stderr either way. (The library's terminal, as cargo keeps its `Shell`: the
//! operations themselves report through traits and never draw.)
//!
//! Colour follows cargo's rules: `--color auto` (the default) colours stderr only when it is
//! a terminal and `NO_COLOR` is unset or empty; `always` and `never` decide outright. A log
//! written to a file or a pipe (CI, `2> log.txt`) so carries no escape codes.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::Duration;

use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};

use crate::deploy::flow::Progress;
use crate::ops::release::Reporter;

static QUIET: AtomicBool = AtomicBool::new(false);

/// When stderr gets colour (cargo's `--color WHEN`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set to something.
    #[default]
    Auto,
    Always,
    Never,
}

static COLOR: AtomicU8 = AtomicU8::new(0);

/// `--color`: set once, before logging starts.
pub fn set_color(when: ColorWhen) {
    let v = match when {
        ColorWhen::Auto => 0,
        ColorWhen::Always => 1,
        ColorWhen::Never => 2,
    };
    COLOR.store(v, Ordering::Relaxed);
}

fn color_when() -> ColorWhen {
    match COLOR.load(Ordering::Relaxed) {
        1 => ColorWhen::Always,
        2 => ColorWhen::Never,
        _ => ColorWhen::Auto,
    }
}

/// Whether what is written to stderr (log levels, progress) may carry colour codes.
pub fn stderr_color() -> bool {
    colored(
        color_when(),
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR"),
    )
}

/// The rule of [`stderr_color`]: `always` and `never` win; `auto` wants a terminal and no
/// `NO_COLOR` (an empty one counts as unset, as no-color.org says).
fn colored(when: ColorWhen, terminal: bool, no_color: Option<OsString>) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => terminal && no_color.is_none_or(|v| v.is_empty()),
    }
}

/// `--quiet`: no progress at all, on a terminal or not.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Whether to draw spinners and bars: stderr is a terminal and `--quiet` was not given.
pub fn drawn() -> bool {
    !quiet() && std::io::stderr().is_terminal()
}

/// A spinner for one piece of work, shown only when [`drawn`]; cleared when dropped, so the
/// result printed next stands alone.
pub struct Spinner(Option<ProgressBar>);

impl Spinner {
    pub fn start(message: impl Into<String>) -> Self {
        if !drawn() {
            return Self(None);
        }
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.enable_steady_tick(Duration::from_millis(120));
        bar.set_message(message.into());
        Self(Some(bar))
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

/// Progress on stderr: a spinner per step on a terminal, one line per change otherwise
/// (CI logs, pipes), nothing with `--quiet`.
pub struct CliProgress {
    bar: Option<ProgressBar>,
    tty: bool,
    quiet: bool,
    title: String,
}

impl CliProgress {
    pub fn new() -> Self {
        Self {
            bar: None,
            tty: std::io::stderr().is_terminal(),
            quiet: quiet(),
            title: String::new(),
        }
    }

    pub fn fail(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.abandon_with_message(format!("✗ {}", self.title));
        }
    }
}

impl Progress for CliProgress {
    fn step(&mut self, title: &str) {
        self.title = title.to_string();
        if self.quiet {
            return;
        }
        if self.tty {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar.set_message(title.to_string());
            self.bar = Some(bar);
        } else {
            eprintln!("==> {title}");
        }
    }

    fn update(&mut self, state: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(format!("{}: {state}", self.title)),
            None if self.quiet => {}
            None => eprintln!("    {state}"),
        }
    }

    fn done(&mut self, summary: &str) {
        match self.bar.take() {
            Some(bar) => bar.finish_with_message(format!("✓ {}: {summary}", self.title)),
            None if self.quiet => {}
            None => eprintln!("    {summary}"),
        }
    }
}

/// A release's progress on stderr: one line per step, and a spinner with the step's time on
/// a terminal; nothing but warnings with `--quiet`.
pub struct StepLines {
    quiet: bool,
    spinner: Option<Spinner>,
}

impl StepLines {
    pub fn new() -> Self {
        Self {
            quiet: quiet(),
            spinner: None,
        }
    }
}

impl Default for StepLines {
    fn default() -> Self {
        Self::new()
    }
}

impl Reporter for StepLines {
    fn begin(&mut self, package: &str, version: &str, config: &Path, destination: &str) {
        if !self.quiet {
            let config = config.display();
            eprintln!("releasing {package} {version} ({config}) -> {destination}");
        }
    }
    fn step(&mut self, n: usize, total: usize, name: &str) {
        if !self.quiet {
            eprintln!("[{n}/{total}] {name} ...");
            self.spinner = Some(Spinner::start(name));
        }
    }
    fn done(&mut self, detail: &str) {
        self.spinner = None;
        if !self.quiet {
            eprintln!("      ok: {detail}");
        }
    }
    fn warning(&mut self, text: &str) {
        self.spinner = None;
        eprintln!("      warning: {text}");
    }
    fn file(&mut self, path: &Path, removed: bool) {
        if !self.quiet {
            let verb = if removed { "removed" } else { "wrote" };
            eprintln!("{verb} {}", path.display());
        }
    }
}

impl Default for CliProgress {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::{ColorWhen, colored};

    #[test]
    fn colour_as_cargo_decides_it() {
        let set = |v: &str| Some(v.into());
        assert!(colored(ColorWhen::Auto, true, None));
        assert!(!colored(ColorWhen::Auto, false, None));
        assert!(!colored(ColorWhen::Auto, true, set("1")));
        assert!(colored(ColorWhen::Auto, true, set("")));
        assert!(colored(ColorWhen::Always, false, set("1")));
        assert!(!colored(ColorWhen::Never, true, None));
    }
}
