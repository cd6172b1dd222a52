//! `olm release`: the whole pipeline in one command, from `release.yaml`
//! ([`olm_bundler::ops::release`]); this file prints its progress, summary and graph.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use olm_bundler::catalog::graph;
use olm_bundler::ops::progress::{self, StepLines};
use olm_bundler::ops::release::{self, ReleaseError, ReleaseRequest, StepRow};

use super::args::RegistryArgs;
use super::output::print;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// The picture's path and one line per channel (the SVG is always written).
    #[default]
    Summary,
    /// Also the graph as Mermaid text (what `opm alpha render-graph` writes).
    Mermaid,
    /// Also the graph as Graphviz DOT.
    Dot,
    /// Nothing about the graph.
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
    /// Sign every image the release makes with this cosign key (instead of release.yaml's
    /// `signing.key`); the password comes from COSIGN_PASSWORD or is asked without echo.
    #[arg(long, value_name = "FILE")]
    pub sign_key: Option<PathBuf>,
    /// Skip the certification checks (preflight's policies) this once.
    #[arg(long)]
    pub skip_checks: bool,
    #[command(flatten)]
    pub registry_args: RegistryArgs,
    /// What to print about the upgrade graph at the end (its picture is always written to
    /// `<layouts>/graph.svg`).
    #[arg(long, value_enum, default_value_t = GraphFormat::Summary)]
    pub graph: GraphFormat,
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
        sign_key: a.sign_key.clone(),
        skip_checks: a.skip_checks,
    };
    let result = release::release(&req, &mut StepLines::new()).await;
    let out = match result {
        Ok(out) => out,
        Err(e) => {
            if let ReleaseError::Stopped { rows, .. } = &e {
                eprint!("\n{}", StepRow::table(rows));
            }
            return Err(e.into());
        }
    };
    if !progress::quiet() {
        eprint!("\n{}\n{}\n", StepRow::table(&out.rows), out.files_line());
    }
    let mut text = out.images_table();
    if !out.signatures.is_empty() {
        text.push_str(&format!("\n{}", out.signatures_table()));
    }
    if a.graph != GraphFormat::None {
        text.push_str(&format!("\n{}", out.graph_summary()));
    }
    let fmt = match a.graph {
        GraphFormat::Mermaid => Some(graph::Format::Mermaid),
        GraphFormat::Dot => Some(graph::Format::Dot),
        GraphFormat::Summary | GraphFormat::None => None,
    };
    if let Some(fmt) = fmt {
        text.push_str(&format!("\n{}\n", out.graph_text(fmt)?));
    }
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}
