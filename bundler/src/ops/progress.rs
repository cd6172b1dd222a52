//! Progress on stderr for whatever can take over a second: cluster waits, pulls and pushes,
//! release steps. Drawn only on a terminal and never with `--quiet`; results go to stdout and
//! errors to stderr either way. (The library's terminal, as cargo keeps its `Shell`: the
//! operations themselves report through traits and never draw.)

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use std::path::Path;

use indicatif::{ProgressBar, ProgressStyle};

use crate::deploy::flow::Progress;
use crate::ops::release::Reporter;

static QUIET: AtomicBool = AtomicBool::new(false);

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
