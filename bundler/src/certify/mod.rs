//! Certification checks: preflight's operator and container policies
//! (redhat-openshift-ecosystem/openshift-preflight `internal/policy`), by preflight's check
//! names, levels, texts and rules, run offline on a bundle directory and an image's files.
//!
//! Each check is a pure function of what it reads (the loaded bundle, the image's config and
//! layers) returning a [`Verdict`] and, for a failure, the changes that would make it pass
//! (file, field, label). The workflows that pull, unpack, talk to a cluster and write the
//! artifacts are in `ops::check`; the report formats (preflight's `results.json`, its JUnit
//! file, our text summary) are in [`report`].

use std::time::Duration;

pub mod container;
pub mod operator;
pub mod report;

/// preflight's check levels (`internal/check`): `optional` checks never appear in the results,
/// `warn` failures are warnings, the others fail the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Best,
    Better,
    Good,
    Warn,
    Optional,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Best => "best",
            Level::Better => "better",
            Level::Good => "good",
            Level::Warn => "warn",
            Level::Optional => "optional",
        }
    }
}

/// A check's fixed metadata and help, as preflight's `Metadata()` and `Help()` give them.
#[derive(Debug, PartialEq, Eq)]
pub struct Check {
    pub name: &'static str,
    pub description: &'static str,
    pub level: Level,
    pub knowledge_base_url: &'static str,
    pub check_url: &'static str,
    pub help: &'static str,
    pub suggestion: &'static str,
}

/// What a check concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Passed,
    /// The image or bundle breaks the rule; [`CheckResult::fixes`] says what to change.
    Failed,
    /// The check ran and could not decide (preflight's `err != nil`), with why.
    Error(String),
    /// The check did not run here (no cluster, needs Red Hat's online API), with why.
    NotRun(String),
}

/// One check's outcome.
#[derive(Debug, Clone)]
pub struct CheckResult {
    pub check: &'static Check,
    pub verdict: Verdict,
    /// For a failure: each change that would make it pass, naming the file and field or the
    /// label ("manifests/x.csv.yaml: metadata.annotations[...]: set to \"true\" or \"false\"").
    pub fixes: Vec<String>,
    /// What the check saw that is worth knowing even when it passed (the SCC requested, the
    /// images missing from relatedImages, why a verdict was reached offline).
    pub notes: Vec<String>,
    pub elapsed: Duration,
}

impl CheckResult {
    pub fn new(check: &'static Check, verdict: Verdict) -> Self {
        CheckResult {
            check,
            verdict,
            fixes: Vec::new(),
            notes: Vec::new(),
            elapsed: Duration::ZERO,
        }
    }
    pub fn passed(check: &'static Check) -> Self {
        Self::new(check, Verdict::Passed)
    }
    /// Failed with `fixes` (never empty: a failure always says what to change).
    pub fn failed(check: &'static Check, fixes: Vec<String>) -> Self {
        let fixes = if fixes.is_empty() {
            vec![check.suggestion.to_string()]
        } else {
            fixes
        };
        CheckResult {
            fixes,
            ..Self::new(check, Verdict::Failed)
        }
    }
    pub fn error(check: &'static Check, why: impl Into<String>) -> Self {
        Self::new(check, Verdict::Error(why.into()))
    }
    pub fn not_run(check: &'static Check, why: impl Into<String>) -> Self {
        Self::new(check, Verdict::NotRun(why.into()))
    }
    /// Passed or failed by `fixes` being empty.
    pub fn by_fixes(check: &'static Check, fixes: Vec<String>) -> Self {
        if fixes.is_empty() {
            Self::passed(check)
        } else {
            Self::failed(check, fixes)
        }
    }
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
    pub fn with_notes(mut self, notes: impl IntoIterator<Item = String>) -> Self {
        self.notes.extend(notes);
        self
    }
    /// Where preflight's engine files this result.
    pub fn bucket(&self) -> Bucket {
        match (&self.verdict, self.check.level) {
            (_, Level::Optional) => Bucket::Informational,
            (Verdict::Passed, _) => Bucket::Passed,
            (Verdict::Failed, Level::Warn) => Bucket::Warned,
            (Verdict::Failed, _) => Bucket::Failed,
            (Verdict::Error(_) | Verdict::NotRun(_), _) => Bucket::Errors,
        }
    }
}

/// The lists of preflight's results (`appendUnlessOptional`: optional checks are in none of
/// them; we still show them in the text summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    Passed,
    Failed,
    Errors,
    Warned,
    Informational,
}

/// Runs `f`, timing it into the result, as preflight's engine times `Validate`.
pub fn timed(f: impl FnOnce() -> CheckResult) -> CheckResult {
    let start = std::time::Instant::now();
    let mut r = f();
    r.elapsed = start.elapsed();
    r
}
