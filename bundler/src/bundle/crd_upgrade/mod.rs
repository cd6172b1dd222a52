//! CRD upgrade safety: does moving from one bundle's CRDs to the next break the objects a
//! cluster has stored, or the clients that read them?
//!
//! The rules are operator-controller's CRD upgrade-safety preflight (OLM v1 runs it before
//! every upgrade and refuses the upgrade on any finding;
//! `internal/operator-controller/rukpak/preflights/crdupgradesafety`, texts from
//! kubernetes-sigs/crdify which it wraps): scope changed, stored version removed, existing
//! field removed, and per field enum, required, min/max bounds, default, type, anything
//! else unhandled; plus the served-versions check (with no conversion webhook every served
//! version must be compatible with the ones before it). Beyond it, because a bundle is
//! compared before release and not against a live cluster: a whole CRD removed, a served
//! version removed or no longer served, format, pattern, nullable, uniqueItems, CEL rules
//! added and `x-kubernetes-preserve-unknown-fields` dropped.
//!
//! - [`schema`]: one version's schema as field paths, and the per-field rules.
//! - [`crd`]: one CRD against its next version.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::load::BundleDir;
use super::validate::Level;

pub mod crd;
pub mod schema;

/// What changed, named like operator-controller's (crdify's) validations where it has one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Rule {
    /// The new bundle no longer ships a CRD the old one did.
    CrdRemoval,
    Scope,
    StoredVersionRemoval,
    /// A version clients used is gone or no longer served.
    ServedVersionRemoval,
    ExistingFieldRemoval,
    Enum,
    Required,
    Maximum,
    MaxItems,
    MaxLength,
    MaxProperties,
    Minimum,
    MinItems,
    MinLength,
    MinProperties,
    Default,
    Type,
    Format,
    Nullable,
    Pattern,
    UniqueItems,
    PreserveUnknownFields,
    /// `x-kubernetes-validations` (CEL) rules added.
    Validations,
    /// A change no rule understands: refused, as operator-controller refuses it.
    Unhandled,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::CrdRemoval => "crdRemoval",
            Rule::Scope => "scope",
            Rule::StoredVersionRemoval => "storedVersionRemoval",
            Rule::ServedVersionRemoval => "servedVersionRemoval",
            Rule::ExistingFieldRemoval => "existingFieldRemoval",
            Rule::Enum => "enum",
            Rule::Required => "required",
            Rule::Maximum => "maximum",
            Rule::MaxItems => "maxItems",
            Rule::MaxLength => "maxLength",
            Rule::MaxProperties => "maxProperties",
            Rule::Minimum => "minimum",
            Rule::MinItems => "minItems",
            Rule::MinLength => "minLength",
            Rule::MinProperties => "minProperties",
            Rule::Default => "default",
            Rule::Type => "type",
            Rule::Format => "format",
            Rule::Nullable => "nullable",
            Rule::Pattern => "pattern",
            Rule::UniqueItems => "uniqueItems",
            Rule::PreserveUnknownFields => "preserveUnknownFields",
            Rule::Validations => "validations",
            Rule::Unhandled => "unhandled",
        }
    }

    /// How to fix (or knowingly accept) a finding of this rule.
    pub fn hint(self) -> &'static str {
        match self {
            Rule::CrdRemoval => {
                "keep shipping the CRD: when OLM removes it, the API server deletes every object of it"
            }
            Rule::Scope => {
                "scope cannot change in place: introduce a new CRD (new group or kind) and migrate"
            }
            Rule::StoredVersionRemoval => {
                "keep the version (served: false is fine) until every stored object is migrated to the new storage version and status.storedVersions is trimmed"
            }
            Rule::ServedVersionRemoval => {
                "keep serving the version (mark it deprecated: true) for at least one release, so clients can move first"
            }
            Rule::ExistingFieldRemoval => {
                "keep the field (mark it deprecated in its description) or serve the change in a new CRD version with a conversion webhook"
            }
            Rule::Enum => {
                "allow every value the old schema allowed; stored objects with a removed value can no longer be updated"
            }
            Rule::Required => {
                "make the new field optional (with a default in the controller) or add it in a new CRD version"
            }
            Rule::Maximum
            | Rule::MaxItems
            | Rule::MaxLength
            | Rule::MaxProperties
            | Rule::Minimum
            | Rule::MinItems
            | Rule::MinLength
            | Rule::MinProperties
            | Rule::UniqueItems => {
                "keep the old bound (limits may only loosen); enforce the tighter one in the controller or in a new CRD version"
            }
            Rule::Default => {
                "defaults are applied when objects are read: keep the old default, or change it in a new CRD version"
            }
            Rule::Type => "a field's type cannot change: add a new field and deprecate the old one",
            Rule::Format => {
                "a new or different format rejects values the old schema accepted: keep the old format"
            }
            Rule::Nullable => "keep nullable: true; stored nulls would be rejected on update",
            Rule::Pattern => {
                "a new or different pattern rejects values the old schema accepted: keep the old pattern"
            }
            Rule::PreserveUnknownFields => {
                "keep x-kubernetes-preserve-unknown-fields: true, or declare every field the stored objects hold"
            }
            Rule::Validations => {
                "new CEL rules reject updates of stored objects that break them: validate in the controller, or use optionalOldSelf/transition rules"
            }
            Rule::Unhandled => {
                "operator-controller refuses changes it cannot classify as safe; revert this attribute or ship it in a new CRD version"
            }
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One breaking change, named by CRD, version and field path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    #[serde(rename = "type")]
    pub level: Level,
    #[serde(serialize_with = "rule_name")]
    pub rule: Rule,
    /// The CRD's `metadata.name`.
    pub crd: String,
    /// The CRD version the change is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// For a difference between two served versions of the new CRD (no conversion webhook):
    /// the later version; `version` is the earlier one.
    #[serde(rename = "toVersion", skip_serializing_if = "Option::is_none")]
    pub to_version: Option<String>,
    /// The field, operator-controller style: `^.spec.replicas`, `[*]` for list items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub message: String,
    pub hint: String,
}

fn rule_name<S: serde::Serializer>(r: &Rule, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.name())
}

impl Finding {
    pub(crate) fn new(rule: Rule, crd: &str, message: impl Into<String>) -> Self {
        Finding {
            level: Level::Error,
            rule,
            crd: crd.to_string(),
            version: None,
            to_version: None,
            path: None,
            message: message.into(),
            hint: rule.hint().to_string(),
        }
    }
    pub(crate) fn version(mut self, v: &str) -> Self {
        self.version = Some(v.to_string());
        self
    }
    pub(crate) fn path(mut self, p: &str) -> Self {
        self.path = Some(p.to_string());
        self
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}] {}", self.level, self.rule, self.crd)?;
        match (&self.version, &self.to_version) {
            (Some(a), Some(b)) => write!(f, " served versions {a} -> {b}")?,
            (Some(v), None) => write!(f, " version {v}")?,
            _ => {}
        }
        if let Some(p) = &self.path {
            write!(f, " {p}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// The CRDs of one side of an upgrade, by name.
#[derive(Debug, Clone, Default)]
pub struct CrdSet {
    /// What the set is (a bundle directory, a CSV name), for reports.
    pub label: String,
    pub crds: BTreeMap<String, Value>,
}

impl CrdSet {
    /// The CRDs among `objects` (other kinds are ignored).
    pub fn from_objects(
        label: impl Into<String>,
        objects: impl IntoIterator<Item = Value>,
    ) -> Self {
        let crds = objects
            .into_iter()
            .filter(|o| o.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition"))
            .map(|o| {
                let name = o
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                (name, o)
            })
            .collect();
        CrdSet {
            label: label.into(),
            crds,
        }
    }

    /// The CRDs of a bundle directory, labelled with its CSV name (or its path).
    pub fn from_bundle(bundle: &BundleDir) -> Self {
        let label = bundle
            .csvs()
            .next()
            .map(|c| c.name().to_string())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| bundle.root.display().to_string());
        CrdSet::from_objects(label, bundle.manifests.iter().map(|m| m.object.clone()))
    }
}

/// The result of comparing two CRD sets.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub old: String,
    pub new: String,
    /// CRDs present on both sides (compared field by field).
    pub compared: Vec<String>,
    /// CRDs only the new side has (nothing to break).
    pub added: Vec<String>,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn passed(&self) -> bool {
        !self.findings.iter().any(|f| f.level == Level::Error)
    }

    /// Findings, one per line with an indented hint, then a verdict line; every line starts
    /// with `indent`.
    pub fn to_text(&self, indent: &str) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        for f in &self.findings {
            let _ = writeln!(s, "{indent}{f}");
            let _ = writeln!(s, "{indent}    hint: {}", f.hint);
        }
        let _ = write!(
            s,
            "{indent}{} -> {}: {} CRD(s) compared",
            self.old,
            self.new,
            self.compared.len()
        );
        if !self.added.is_empty() {
            let _ = write!(s, ", {} added", self.added.len());
        }
        if self.passed() {
            let _ = writeln!(s, ": no breaking CRD changes");
        } else {
            let _ = writeln!(s, ": FAILED: {} breaking change(s)", self.findings.len());
        }
        s
    }

    /// The JSON report: the findings and CRD lists with `passed`.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        v["passed"] = self.passed().into();
        v
    }
}

/// Compares every CRD of `old` with the same CRD in `new`.
pub fn compare(old: &CrdSet, new: &CrdSet) -> Report {
    let mut r = Report {
        old: old.label.clone(),
        new: new.label.clone(),
        ..Default::default()
    };
    for (name, o) in &old.crds {
        match new.crds.get(name) {
            Some(n) => {
                r.compared.push(name.clone());
                r.findings.extend(crd::compare(o, n));
            }
            None => r.findings.push(Finding::new(
                Rule::CrdRemoval,
                name,
                format!("{} ships this CRD, {} does not", old.label, new.label),
            )),
        }
    }
    r.added = new
        .crds
        .keys()
        .filter(|n| !old.crds.contains_key(*n))
        .cloned()
        .collect();
    r
}

/// Loads two bundle directories and compares their CRDs.
pub fn compare_dirs(
    old: &std::path::Path,
    new: &std::path::Path,
) -> Result<Report, super::load::LoadError> {
    let o = CrdSet::from_bundle(&BundleDir::load_strict(old)?);
    let n = CrdSet::from_bundle(&BundleDir::load_strict(new)?);
    Ok(compare(&o, &n))
}
