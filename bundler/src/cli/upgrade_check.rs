//! `olm bundle check-upgrade OLD NEW` and `olm catalog check-upgrades <catalog>`: CRD upgrade
//! safety, printed as text or JSON. Exit 1 on a breaking change, 2 on unusable input.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use olm_bundler::bundle::crd_upgrade::{self, CrdSet, Report};
use olm_bundler::bundle::load::BundleDir;
use olm_bundler::catalog::crd_upgrades::{self, CatalogReport, Outcome};
use olm_bundler::catalog::model::{Model, ModelLoadError};

use olm_bundler::ops::bundle_source::{self, LocalBundle};

use super::args::{OutputFormat, RegistryArgs};
use super::progress::Spinner;

/// `olm bundle check-upgrade OLD NEW`.
#[derive(Debug, Args)]
pub struct CheckUpgradeArgs {
    /// The bundle installed today: a directory, or an image (`oci:<dir>[:tag]` or a
    /// registry reference).
    pub old: String,
    /// The bundle that replaces it: a directory or an image.
    pub new: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `olm catalog check-upgrades <catalog>`.
#[derive(Debug, Args)]
pub struct CheckUpgradesArgs {
    /// The catalog directory (or file).
    pub dir: PathBuf,
    /// Only this package.
    #[arg(short = 'p', long = "package")]
    pub package: Option<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// Also fail (exit 1) when an edge could not be checked (olm.csv.metadata catalogs).
    #[arg(long)]
    pub strict: bool,
}

fn usage(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

/// A bundle directory, pulling and unpacking an image first.
async fn local_bundle(arg: &str, registry: &RegistryArgs) -> Result<LocalBundle, ExitCode> {
    let opts = registry.options().map_err(usage)?;
    let _pulling =
        bundle_source::names_an_image(arg).then(|| Spinner::start(format!("Pulling {arg}")));
    bundle_source::fetch(arg, &opts).await.map_err(|e| {
        if e.is_usage() {
            usage(e)
        } else {
            super::report(&anyhow::Error::new(e));
            ExitCode::FAILURE
        }
    })
}

pub async fn check_upgrade(a: CheckUpgradeArgs) -> ExitCode {
    let old_bundle = match local_bundle(&a.old, &a.registry).await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let new_bundle = match local_bundle(&a.new, &a.registry).await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let load = |dir: &Path, arg: &str| {
        BundleDir::load(dir)
            .map(|b| CrdSet::from_bundle(&b))
            .map_err(|e| usage(format!("{arg}: {e}")))
    };
    let old = match load(old_bundle.dir(), &a.old) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let new = match load(new_bundle.dir(), &a.new) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let report = crd_upgrade::compare(&old, &new);
    match a.output {
        OutputFormat::Json => {
            let mut v = serde_json::to_value(&report).unwrap_or_default();
            v["passed"] = report.passed().into();
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
        OutputFormat::Text => print!("{}", report_text(&report, "")),
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Findings, one per line with an indented hint, then a verdict line.
fn report_text(r: &Report, indent: &str) -> String {
    let mut s = String::new();
    for f in &r.findings {
        let _ = writeln!(s, "{indent}{f}");
        let _ = writeln!(s, "{indent}    hint: {}", f.hint);
    }
    let _ = write!(
        s,
        "{indent}{} -> {}: {} CRD(s) compared",
        r.old,
        r.new,
        r.compared.len()
    );
    if !r.added.is_empty() {
        let _ = write!(s, ", {} added", r.added.len());
    }
    if r.passed() {
        let _ = writeln!(s, ": no breaking CRD changes");
    } else {
        let _ = writeln!(s, ": FAILED: {} breaking change(s)", r.findings.len());
    }
    s
}

pub fn check_upgrades(a: CheckUpgradesArgs) -> ExitCode {
    if !a.dir.exists() {
        return usage(format!("{}: no such file or directory", a.dir.display()));
    }
    let model = match Model::load(&a.dir) {
        Ok((m, _)) => m,
        Err(ModelLoadError::Invalid(report)) => {
            eprint!("{}", report.to_text());
            eprintln!(
                "error: {}: the catalog does not validate; fix it first (olm catalog validate)",
                a.dir.display()
            );
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(p) = &a.package
        && model.package(p).is_none()
    {
        return usage(format!("{}: no package {p:?}", a.dir.display()));
    }
    let report = crd_upgrades::check(&model, a.package.as_deref());
    let summary = report.summary();
    match a.output {
        OutputFormat::Json => {
            let v = serde_json::json!({
                "passed": report.passed() && !(a.strict && summary.unverifiable > 0),
                "summary": summary,
                "edges": report.edges,
            });
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        }
        OutputFormat::Text => print!("{}", catalog_text(&report)),
    }
    if !report.passed() || (a.strict && summary.unverifiable > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn catalog_text(r: &CatalogReport) -> String {
    let mut s = String::new();
    for e in &r.edges {
        let via: Vec<String> = e
            .edge
            .via
            .iter()
            .map(|(c, v)| format!("{c} {}", v.name()))
            .collect();
        let _ = write!(
            s,
            "{}: {} -> {} ({}): ",
            e.edge.package,
            e.edge.from,
            e.edge.to,
            via.join(", ")
        );
        match &e.outcome {
            Outcome::Checked { report } if report.passed() => {
                let _ = writeln!(s, "ok ({} CRD(s) compared)", report.compared.len());
            }
            Outcome::Checked { report } => {
                let _ = writeln!(s, "FAILED");
                for f in &report.findings {
                    let _ = writeln!(s, "  {f}");
                    let _ = writeln!(s, "      hint: {}", f.hint);
                }
            }
            Outcome::Unverifiable { reason } => {
                let _ = writeln!(s, "not checked: {reason}");
            }
        }
    }
    let m = r.summary();
    let _ = writeln!(
        s,
        "{} upgrade edge(s): {} checked, {} with breaking CRD changes ({} finding(s)), {} could not be checked",
        m.edges, m.checked, m.breaking, m.findings, m.unverifiable
    );
    s
}
