//! Validation findings: what is wrong, where (file, line, package/channel/bundle) and how to
//! fix it, printable as text or JSON.

use serde::Serialize;

use super::declcfg::Source;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// One finding. `message` carries opm's wording where opm has a message for the rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable rule identifier, e.g. `channel-multiple-heads`.
    pub rule: &'static str,
    /// `file:line` of the blob, or empty.
    pub location: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub package: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub channel: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub bundle: String,
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub fix: String,
}

impl Diagnostic {
    pub fn new(severity: Severity, rule: &'static str, source: &Source, message: String) -> Self {
        Diagnostic {
            severity,
            rule,
            location: if source.file.is_some() {
                source.to_string()
            } else {
                String::new()
            },
            package: String::new(),
            channel: String::new(),
            bundle: String::new(),
            message,
            fix: String::new(),
        }
    }

    pub fn package(mut self, p: &str) -> Self {
        self.package = p.to_string();
        self
    }
    pub fn channel(mut self, c: &str) -> Self {
        self.channel = c.to_string();
        self
    }
    pub fn bundle(mut self, b: &str) -> Self {
        self.bundle = b.to_string();
        self
    }
    pub fn fix(mut self, f: impl Into<String>) -> Self {
        self.fix = f.into();
        self
    }

    /// `package "p", channel "c", bundle "b"` (the parts that are set).
    pub fn subject(&self) -> String {
        let mut parts = Vec::new();
        if !self.package.is_empty() {
            parts.push(format!("package {:?}", self.package));
        }
        if !self.channel.is_empty() {
            parts.push(format!("channel {:?}", self.channel));
        }
        if !self.bundle.is_empty() {
            parts.push(format!("bundle {:?}", self.bundle));
        }
        parts.join(", ")
    }
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        if !self.location.is_empty() {
            write!(f, "{}: ", self.location)?;
        }
        write!(f, "{sev}[{}]: ", self.rule)?;
        let subject = self.subject();
        if !subject.is_empty() {
            write!(f, "{subject}: ")?;
        }
        write!(f, "{}", self.message)?;
        if !self.fix.is_empty() {
            write!(f, "\n  fix: {}", self.fix)?;
        }
        Ok(())
    }
}

/// All findings of one validation run, sorted for stable output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Report {
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    pub fn push(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
    }

    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
    }

    pub fn has_errors(&self) -> bool {
        self.errors().next().is_some()
    }

    /// Sorts by package, channel, bundle, then severity and rule; removes exact duplicates.
    pub fn sort(&mut self) {
        self.diagnostics.sort_by(|a, b| {
            (
                &a.package, &a.channel, &a.bundle, a.severity, a.rule, &a.message,
            )
                .cmp(&(
                    &b.package, &b.channel, &b.bundle, b.severity, b.rule, &b.message,
                ))
        });
        self.diagnostics.dedup();
    }

    /// Human-readable text, one finding per paragraph, with a summary line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for d in &self.diagnostics {
            out.push_str(&d.to_string());
            out.push('\n');
        }
        let e = self.errors().count();
        let w = self.warnings().count();
        if e == 0 {
            out.push_str(&format!("catalog is valid ({w} warning(s))\n"));
        } else {
            out.push_str(&format!(
                "catalog is invalid: {e} error(s), {w} warning(s)\n"
            ));
        }
        out
    }

    /// `{"passed": bool, "errors": n, "warnings": n, "diagnostics": [...]}`.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct Out<'a> {
            passed: bool,
            errors: usize,
            warnings: usize,
            diagnostics: &'a [Diagnostic],
        }
        let out = Out {
            passed: !self.has_errors(),
            errors: self.errors().count(),
            warnings: self.warnings().count(),
            diagnostics: &self.diagnostics,
        };
        let mut s = serde_json::to_string_pretty(&out).unwrap_or_default();
        s.push('\n');
        s
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let errors: Vec<String> = self.errors().map(|d| d.to_string()).collect();
        write!(f, "{}", errors.join("\n"))
    }
}

impl std::error::Error for Report {}
