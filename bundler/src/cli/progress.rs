//! Progress on stderr for the flows that wait on a cluster or a registry.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use olm_bundler::deploy::flow::Progress;

/// Progress on stderr: a spinner per step on a terminal, one line per change otherwise
/// (CI logs, pipes).
pub struct CliProgress {
    bar: Option<ProgressBar>,
    tty: bool,
    title: String,
}

impl CliProgress {
    pub fn new() -> Self {
        Self {
            bar: None,
            tty: std::io::stderr().is_terminal(),
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
            None => eprintln!("    {state}"),
        }
    }

    fn done(&mut self, summary: &str) {
        match self.bar.take() {
            Some(bar) => bar.finish_with_message(format!("✓ {}: {summary}", self.title)),
            None => eprintln!("    {summary}"),
        }
    }
}
