//! Bundle validation with the checks and meaning of operator-framework/api's validators (what
//! `operator-sdk bundle validate` and OperatorHub run), reported as typed findings that say
//! what is wrong, in which file and field, and how to fix it.
//!
//! One module per suite. The default suite is [`format`], [`csv`], [`crd`], [`consistency`],
//! [`size`] and [`objects`] (supported kinds and object metadata); the optional suites are
//! selected by name ([`Suite`]). Validators never fail: a bundle they cannot make sense of
//! yields error findings, so one run reports every problem at once.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use super::load::{BundleDir, Manifest};

pub mod capabilities;
pub mod categories;
pub mod community;
pub mod consistency;
pub mod crd;
pub mod csv;
pub mod deprecated_apis;
pub mod format;
pub mod good_practices;
pub mod locate;
pub mod object;
pub mod objects;
pub mod olmv1;
pub mod operatorhub;
pub mod size;

/// How bad a finding is. Errors fail validation; warnings fail it only with `--strict`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Level::Error => "error",
            Level::Warning => "warning",
        })
    }
}

/// One problem found in a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    #[serde(rename = "type")]
    pub level: Level,
    pub message: String,
    /// The suite that produced it (`format`, `csv`, `crd`, `bundle`, ...).
    pub validator: &'static str,
    /// A stable name for the rule, for filtering and tests (`preserve-unknown-fields`, ...).
    pub check: &'static str,
    /// The file, relative to the bundle root, when the problem is in one file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// The 1-based line of `field` (or of its nearest ancestor) in `file`, when found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// The field path inside the object (`spec.installModes`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
    /// How to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Finding {
    pub fn error(validator: &'static str, check: &'static str, message: impl Into<String>) -> Self {
        Self::new(Level::Error, validator, check, message)
    }
    pub fn warning(
        validator: &'static str,
        check: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Self::new(Level::Warning, validator, check, message)
    }
    fn new(
        level: Level,
        validator: &'static str,
        check: &'static str,
        message: impl Into<String>,
    ) -> Self {
        Finding {
            level,
            message: message.into(),
            validator,
            check,
            file: None,
            line: None,
            field: None,
            hint: None,
        }
    }
    pub fn file(mut self, file: impl Into<PathBuf>) -> Self {
        self.file = Some(file.into());
        self
    }
    pub fn in_file(mut self, m: Option<&Manifest>) -> Self {
        self.file = m.map(|m| m.file.clone());
        self
    }
    pub fn field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

impl Finding {
    /// The finding's line, and its hint on an indented line below when it has one.
    pub fn with_hint(&self) -> String {
        match &self.hint {
            Some(h) => format!("{self}\n    hint: {h}"),
            None => self.to_string(),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.level, self.validator)?;
        if let Some(file) = &self.file {
            write!(f, " {}", file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
        }
        if let Some(field) = self
            .field
            .as_ref()
            .filter(|fl| !self.message.starts_with(fl.as_str()))
        {
            write!(f, " {field}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The optional suites, selected by name on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Suite {
    OperatorHub,
    Capabilities,
    Categories,
    GoodPractices,
    DeprecatedApis,
    Object,
    /// The community-operators checks (`olm.maxOpenShiftVersion` for bundles on removed APIs).
    Community,
    /// What operator-controller (OLM v1) refuses, standard feature set.
    OlmV1,
    /// The same with the experimental feature set (SingleOwnNamespaceInstallSupport).
    OlmV1Experimental,
}

impl Suite {
    /// operator-framework/api's optional validators (what `all` selects).
    pub const ALL: [Suite; 7] = [
        Suite::OperatorHub,
        Suite::Capabilities,
        Suite::Categories,
        Suite::GoodPractices,
        Suite::DeprecatedApis,
        Suite::Object,
        Suite::Community,
    ];

    /// operator-sdk's `suite=operatorframework`: all but community.
    pub const OPERATOR_FRAMEWORK: [Suite; 6] = [
        Suite::OperatorHub,
        Suite::Capabilities,
        Suite::Categories,
        Suite::GoodPractices,
        Suite::DeprecatedApis,
        Suite::Object,
    ];

    /// Our own suites: not part of operator-sdk's `all`.
    pub const EXTRA: [Suite; 2] = [Suite::OlmV1, Suite::OlmV1Experimental];

    pub fn name(self) -> &'static str {
        match self {
            Suite::OperatorHub => "operatorhub",
            Suite::Capabilities => "capabilities",
            Suite::Categories => "categories",
            Suite::GoodPractices => "good-practices",
            Suite::DeprecatedApis => "deprecated-apis",
            Suite::Object => "object",
            Suite::Community => "community",
            Suite::OlmV1 => "olmv1",
            Suite::OlmV1Experimental => "olmv1-experimental",
        }
    }

    /// Parses a suite name; accepts operator-sdk's spellings too (`operatorhubv2`,
    /// `alpha-deprecated-apis`, `standardcategories`, ...). `suite=operatorframework` selects
    /// what operator-sdk's label selector selects.
    pub fn parse(s: &str) -> Result<Vec<Suite>, String> {
        let s = s.trim();
        // operator-sdk selects by label: `name=good-practices`.
        let s = s.strip_prefix("name=").unwrap_or(s);
        Ok(match s {
            "operatorhub" | "operatorhubv2" | "operatorhub/v2" => vec![Suite::OperatorHub],
            "capabilities" | "standardcapabilities" => vec![Suite::Capabilities],
            "categories" | "standardcategories" => vec![Suite::Categories],
            "good-practices" | "goodpractices" => vec![Suite::GoodPractices],
            "deprecated-apis" | "alpha-deprecated-apis" => vec![Suite::DeprecatedApis],
            "object" | "objects" => vec![Suite::Object],
            "community" => vec![Suite::Community],
            "olmv1" | "olm-v1" => vec![Suite::OlmV1],
            "olmv1-experimental" | "olm-v1-experimental" => vec![Suite::OlmV1Experimental],
            "all" => Suite::ALL.to_vec(),
            "suite=operatorframework" => Suite::OPERATOR_FRAMEWORK.to_vec(),
            other => {
                return Err(format!(
                    "unknown validator suite {other:?}; known: {}, {}, all",
                    Suite::ALL.map(Suite::name).join(", "),
                    Suite::EXTRA.map(Suite::name).join(", ")
                ));
            }
        })
    }
}

/// What to run and with which settings.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Optional suites to run after the default one.
    pub suites: BTreeSet<Suite>,
    /// Target Kubernetes version for the deprecated-APIs suite (`k8s-version=1.25`).
    pub k8s_version: Option<semver::Version>,
    /// The index image's Dockerfile, whose OpenShift versions label the community suite
    /// checks (`index-path=bundle.Dockerfile`).
    pub index_path: Option<PathBuf>,
    /// A custom category set for the categories suite (from `OPERATOR_BUNDLE_CATEGORIES`);
    /// `None` uses the standard OperatorHub set.
    pub custom_categories: Option<Vec<String>>,
}

/// The result of one validation run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn errors(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.level == Level::Error)
    }
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.level == Level::Warning)
    }
    /// Whether the bundle passes: no errors, and with `strict` no warnings either.
    pub fn passed(&self, strict: bool) -> bool {
        self.errors().next().is_none() && (!strict || self.warnings().next().is_none())
    }
    /// `{"passed":bool,"outputs":[{"type","message",...}]}`, the shape of operator-sdk's
    /// `-o json-alpha1`, with our extra keys (validator, check, file, field, hint).
    pub fn to_json(&self, strict: bool) -> Value {
        serde_json::json!({
            "passed": self.passed(strict),
            "outputs": self.findings,
        })
    }

    /// The text report: findings grouped by validator (the core ones first, in the order
    /// they run), errors before warnings in each group, then a verdict line naming `bundle`.
    pub fn to_text(&self, bundle: &Path, strict: bool) -> String {
        use std::fmt::Write as _;
        let validators: BTreeSet<&str> = self.findings.iter().map(|f| f.validator).collect();
        let order = ["load", "format", "objects", "csv", "crd", "bundle", "size"];
        let mut names: Vec<&str> = order
            .iter()
            .copied()
            .filter(|v| validators.contains(v))
            .collect();
        names.extend(validators.iter().copied().filter(|v| !order.contains(v)));
        let mut s = String::new();
        for v in names {
            let _ = writeln!(s, "{v}:");
            for level in [Level::Error, Level::Warning] {
                for f in self
                    .findings
                    .iter()
                    .filter(|f| f.validator == v && f.level == level)
                {
                    let _ = writeln!(s, "  {}", f.with_hint().replace('\n', "\n  "));
                }
            }
        }
        let (errors, warnings) = (self.errors().count(), self.warnings().count());
        let path = bundle.display();
        let _ = match (self.passed(strict), errors) {
            (true, _) => writeln!(
                s,
                "{path}: all validation tests have completed successfully ({warnings} warning(s))"
            ),
            (false, 0) => writeln!(s, "{path}: FAILED: {warnings} warning(s) with --strict"),
            (false, _) => writeln!(
                s,
                "{path}: FAILED: {errors} error(s), {warnings} warning(s)"
            ),
        };
        s
    }
}

/// Everything the validators look at, resolved once.
pub struct Ctx<'a> {
    pub bundle: &'a BundleDir,
    /// The first CSV (format reports when there is not exactly one).
    pub csv: Option<&'a Manifest>,
    pub crds: Vec<&'a Manifest>,
}

impl<'a> Ctx<'a> {
    pub fn new(bundle: &'a BundleDir) -> Self {
        Ctx {
            bundle,
            csv: bundle.csvs().next(),
            crds: bundle
                .manifests
                .iter()
                .filter(|m| m.kind() == "CustomResourceDefinition")
                .collect(),
        }
    }
    /// The CSV object, or `Null` when the bundle has none.
    pub fn csv_value(&self) -> &'a Value {
        static NULL: Value = Value::Null;
        self.csv.map(|m| &m.object).unwrap_or(&NULL)
    }
    pub fn csv_name(&self) -> &'a str {
        self.csv.map(Manifest::name).unwrap_or("")
    }
}

/// Runs the default suite and the selected optional ones.
pub fn validate(bundle: &BundleDir, opts: &Options) -> Report {
    let ctx = Ctx::new(bundle);
    let mut findings = format::validate(&ctx);
    // Without manifests/ or metadata/ nothing else is meaningful (operator-sdk stops here too).
    let structural = findings.iter().any(|f| f.check == "missing-directory");
    if !structural {
        findings.extend(objects::validate(&ctx));
        findings.extend(csv::validate(&ctx));
        findings.extend(crd::validate(&ctx));
        findings.extend(consistency::validate(&ctx));
        findings.extend(size::validate(&ctx));
        for suite in &opts.suites {
            findings.extend(match suite {
                Suite::OperatorHub => operatorhub::validate(&ctx),
                Suite::Capabilities => capabilities::validate(&ctx),
                Suite::Categories => categories::validate(&ctx, opts.custom_categories.as_deref()),
                Suite::GoodPractices => good_practices::validate(&ctx),
                Suite::DeprecatedApis => deprecated_apis::validate(&ctx, opts.k8s_version.as_ref()),
                Suite::Object => object::validate(&ctx),
                Suite::Community => community::validate(&ctx, opts.index_path.as_deref()),
                Suite::OlmV1 => olmv1::validate(&ctx, olmv1::Olmv1Options::default()),
                Suite::OlmV1Experimental => olmv1::validate(
                    &ctx,
                    olmv1::Olmv1Options {
                        experimental: true,
                        ..Default::default()
                    },
                ),
            });
        }
    }
    add_lines(bundle, &mut findings);
    Report { findings }
}

/// Fills in [`Finding::line`] from the field path, reading each file once.
fn add_lines(bundle: &BundleDir, findings: &mut [Finding]) {
    let mut texts: std::collections::BTreeMap<PathBuf, Option<String>> = Default::default();
    for f in findings.iter_mut() {
        let (Some(file), Some(field)) = (&f.file, &f.field) else {
            continue;
        };
        let text = texts
            .entry(file.clone())
            .or_insert_with(|| bundle.read_text(file));
        if let Some(text) = text {
            f.line = locate::line_of(text, field);
        }
    }
}

/// Loads and validates a bundle directory in one step.
pub fn validate_dir(root: &Path, opts: &Options) -> Result<Report, super::load::LoadError> {
    Ok(validate(&BundleDir::load(root)?, opts))
}

/// Reads a custom category set: either the JSON itself (`{"categories":[...]}`) or a path to a
/// file holding it, as `OPERATOR_BUNDLE_CATEGORIES` may be either.
pub fn load_custom_categories(spec: &str) -> Result<Vec<String>, String> {
    let text = if spec.trim_start().starts_with('{') {
        spec.to_string()
    } else {
        // host: a file the user named (--optional-values, OPERATOR_BUNDLE_CATEGORIES)
        std::fs::read_to_string(spec).map_err(|e| format!("{spec}: cannot read: {e}"))?
    };
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{spec}: not JSON of the form {{\"categories\":[...]}}: {e}"))?;
    let Some(list) = v.get("categories").and_then(Value::as_array) else {
        return Err(format!("{spec}: `categories` must be a list of strings"));
    };
    list.iter()
        .map(|c| {
            c.as_str()
                .map(|s| s.trim().to_string())
                .ok_or_else(|| format!("{spec}: `categories` must be a list of strings"))
        })
        .collect()
}

/// Small accessors over `serde_json::Value` so validators read like the fields they check.
pub(crate) mod v {
    use serde_json::Value;

    pub fn str_at<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
        v.pointer(ptr).and_then(Value::as_str)
    }
    pub fn arr_at<'a>(v: &'a Value, ptr: &str) -> &'a [Value] {
        v.pointer(ptr)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
    /// The JSON type name, for "wrong type" messages.
    pub fn type_name(v: &Value) -> &'static str {
        match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "a list",
            Value::Object(_) => "a map",
        }
    }
    /// Non-empty string, list or map: what Go's zero-value checks treat as "set".
    pub fn is_set(v: Option<&Value>) -> bool {
        match v {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Array(a)) => !a.is_empty(),
            Some(Value::Object(o)) => !o.is_empty(),
            Some(_) => true,
        }
    }
}
