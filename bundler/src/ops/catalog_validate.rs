//! `olm catalog validate`: every `opm validate` rule plus our warnings, and with `--olmv1`
//! the per-package OLM v1 verdicts.

use std::path::Path;

use crate::catalog::declcfg::DeclarativeConfig;
use crate::catalog::diagnostic::{Diagnostic, Report, Severity};
use crate::catalog::load::{self, LoadErrors};
use crate::catalog::olmv1::{self, PackageVerdict};
use crate::catalog::validate::Checked;

/// Which OLM v1 feature set `--olmv1` judges for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Olmv1 {
    Standard,
    Experimental,
}

impl Olmv1 {
    /// The feature set `--olmv1` and `--olmv1-experimental` ask for (`None`: no OLM v1 report).
    pub fn from_flags(olmv1: bool, experimental: bool) -> Option<Olmv1> {
        match (olmv1, experimental) {
            (false, _) => None,
            (true, false) => Some(Olmv1::Standard),
            (true, true) => Some(Olmv1::Experimental),
        }
    }
}

/// What validation found.
#[derive(Debug)]
pub struct Validated {
    /// The catalog as validated (its bundles' properties and related images dropped); `None`
    /// when it did not load. Handed back so a process about to exit can skip freeing it.
    pub catalog: Option<DeclarativeConfig>,
    pub report: Report,
    /// The OLM v1 verdicts, when asked for and the catalog has no errors.
    pub olmv1: Option<Vec<PackageVerdict>>,
    /// Errors, or with `strict` warnings, or a bundle OLM v1 would refuse.
    pub failed: bool,
}

/// Loads and validates `dir`; load failures become error diagnostics so they print the same
/// way as rule violations.
pub fn validate(dir: &Path, strict: bool, olmv1: Option<Olmv1>) -> Result<Validated, LoadErrors> {
    let (catalog, report) = match Checked::load(dir) {
        Ok(checked) => {
            let (report, cfg) = checked.validate();
            (Some(cfg), report)
        }
        Err(errs) => (None, load_report(errs)),
    };
    let mut failed = report.has_errors() || (strict && report.warnings().next().is_some());
    let verdicts = match olmv1 {
        Some(set) if !report.has_errors() => {
            // Validation drops each bundle's metadata; the verdicts need it.
            let cfg = load::load_dir(dir)?;
            Some(olmv1::check(&cfg, None, set == Olmv1::Experimental))
        }
        _ => None,
    };
    if let Some(v) = &verdicts {
        failed |= olmv1::failed(v);
    }
    Ok(Validated {
        catalog,
        report,
        olmv1: verdicts,
        failed,
    })
}

fn load_report(errs: LoadErrors) -> Report {
    let mut report = Report::default();
    for e in errs.0 {
        let mut d = Diagnostic::new(Severity::Error, "load", &Default::default(), e.to_string());
        d.fix = "fix the file so it parses as YAML/JSON catalog blobs, or list it in .indexignore"
            .into();
        report.push(d);
    }
    report
}

impl Validated {
    /// The JSON report, with the OLM v1 verdicts under `olmv1` when there are any.
    pub fn to_json(&self) -> String {
        let json = self.report.to_json();
        let Some(verdicts) = &self.olmv1 else {
            return json;
        };
        let report = serde_json::from_str(&json).unwrap_or_default();
        let v = olmv1::add_to_json(report, verdicts);
        format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
    }
}
