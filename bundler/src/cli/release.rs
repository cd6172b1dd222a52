//! `olm release`: the whole pipeline in one command, from `release.yaml`
//! ([`olm_bundler::ops::release`]); this file prints its progress, summary and graph.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use olm_bundler::catalog::graph;
use olm_bundler::ops::release::{self, ReleaseError, ReleaseRequest, Reporter, StepRow, human};

use super::args::RegistryArgs;
use super::progress::{self, Spinner};

#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum GraphFormat {
    #[default]
    Mermaid,
    Dot,
    None,
}

/// `olm release [--config release.yaml] [--registry HOST]`.
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// The release config file.
    #[arg(long, default_value = "release.yaml")]
    pub config: PathBuf,
    /// Release this version instead of the bundle config's (e.g. to cut an older release).
    #[arg(long)]
    pub version: Option<String>,
    /// The CSV this version replaces, instead of the bundle config's.
    #[arg(long, conflicts_with = "no_replaces")]
    pub replaces: Option<String>,
    /// No `replaces` (the first release).
    #[arg(long)]
    pub no_replaces: bool,
    /// `olm.skipRange`, instead of the bundle config's.
    #[arg(long, conflicts_with = "no_skip_range")]
    pub skip_range: Option<String>,
    /// No skipRange.
    #[arg(long)]
    pub no_skip_range: bool,
    /// The catalog channels to add the bundle to (semver templates: the archetypes candidate,
    /// fast, stable), comma-separated, instead of the config's `catalog-channels`. The bundle's
    /// own channel annotations stay those of the bundle config.
    #[arg(long, value_delimiter = ',')]
    pub channels: Vec<String>,
    /// The operator binary, instead of the config's `operator-binary`.
    #[arg(long, value_name = "PATH")]
    pub operator_binary: Option<PathBuf>,
    /// Push every image to this registry host (same repository paths) instead of writing
    /// OCI layouts.
    #[arg(long, value_name = "HOST")]
    pub registry: Option<String>,
    #[command(flatten)]
    pub registry_args: RegistryArgs,
    /// How to print the upgrade graph at the end.
    #[arg(long, value_enum, default_value_t = GraphFormat::Mermaid)]
    pub graph: GraphFormat,
}

/// Progress on stderr: one line per step, and a spinner with the step's time on a terminal;
/// nothing but warnings with `--quiet`.
struct StderrReporter {
    quiet: bool,
    spinner: Option<Spinner>,
}

impl Reporter for StderrReporter {
    fn begin(&mut self, package: &str, version: &str, config: &Path, destination: &str) {
        if !self.quiet {
            eprintln!(
                "releasing {package} {version} ({}) -> {destination}",
                config.display()
            );
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

fn print_table(rows: &[StepRow]) {
    let width = rows.iter().map(|r| r.step.len()).max().unwrap_or(4);
    eprintln!();
    eprintln!(
        "{:<3} {:<width$}  {:<6} {:>8}  detail",
        "#", "step", "result", "time"
    );
    for (i, r) in rows.iter().enumerate() {
        eprintln!(
            "{:<3} {:<width$}  {:<6} {:>6}ms  {}",
            i + 1,
            r.step,
            if r.ok { "ok" } else { "FAILED" },
            r.millis,
            r.detail
        );
    }
}

pub async fn run(a: ReleaseArgs) -> anyhow::Result<ExitCode> {
    let req = ReleaseRequest {
        config: a.config.clone(),
        version: a.version.clone(),
        replaces: a.replaces.clone(),
        no_replaces: a.no_replaces,
        skip_range: a.skip_range.clone(),
        no_skip_range: a.no_skip_range,
        channels: a.channels.clone(),
        operator_binary: a.operator_binary.clone(),
        registry: a.registry.clone(),
        registry_opts: a.registry_args.options()?,
        olm_binary: std::env::current_exe()?,
    };
    let quiet = progress::quiet();
    let mut reporter = StderrReporter {
        quiet,
        spinner: None,
    };
    let result = release::release(&req, &mut reporter).await;
    drop(reporter);
    let out = match result {
        Ok(out) => out,
        Err(e) => {
            if let ReleaseError::Stopped { rows, .. } = &e {
                print_table(rows);
            }
            return Err(e.into());
        }
    };
    if !quiet {
        print_table(&out.rows);
        let mut roots = out.roots.iter().map(|p| p.display().to_string());
        let first = roots.next().unwrap_or_default();
        let rest: String = roots.map(|r| format!(", {r}")).collect();
        eprintln!(
            "\nfiles: {} written, {} removed, {} unchanged ({first}{rest})",
            out.written, out.removed, out.unchanged
        );
    }

    let mut text = String::new();
    let _ = writeln!(text, "{:<9} {:>10}  reference", "image", "size");
    for m in &out.images {
        let _ = writeln!(text, "{:<9} {:>10}  {}", m.what, human(m.size), m.pinned);
        let _ = writeln!(text, "{:<9} {:>10}  {}", "", "", m.stored);
    }
    let fmt = match a.graph {
        GraphFormat::Mermaid => Some(graph::Format::Mermaid),
        GraphFormat::Dot => Some(graph::Format::Dot),
        GraphFormat::None => None,
    };
    if let Some(fmt) = fmt {
        let g = graph::render(
            &out.catalog,
            fmt,
            &graph::Options {
                package: Some(out.package.clone()),
                ..Default::default()
            },
        )?;
        let _ = writeln!(text, "\nupgrade graph of {}:\n{g}", out.package);
    }
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
