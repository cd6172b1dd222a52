//! CRD upgrade safety over a catalog: every upgrade edge it offers (`replaces`, `skips`,
//! `skipRange`) checked with [`crate::bundle::crd_upgrade`], and the check a release makes
//! against the version before it.
//!
//! A catalog in `olm.bundle.object` form carries each bundle's manifests, CRDs included; one
//! in `olm.csv.metadata` form carries only the CSV's metadata, so its edges cannot be checked
//! from the catalog: they are reported as unverifiable, with the reason, never as passed.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use semver::Version;
use serde::Serialize;
use serde_json::Value;

use super::declcfg::DeclarativeConfig;
use super::model::{Bundle, Model};
use super::property::{self, TypedProperty};
use crate::bundle::crd_upgrade::{self, CrdSet, Report};
use crate::bundle::load::BundleDir;

/// How a channel offers an upgrade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Via {
    Replaces,
    Skips,
    SkipRange,
}

impl Via {
    pub fn name(self) -> &'static str {
        match self {
            Via::Replaces => "replaces",
            Via::Skips => "skips",
            Via::SkipRange => "skipRange",
        }
    }
}

/// One upgrade a catalog offers: from an installed bundle to another of its package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Edge {
    pub package: String,
    pub from: String,
    pub to: String,
    /// `(channel, how)` for every channel entry that offers it.
    pub via: Vec<(String, Via)>,
}

/// What became of one edge.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "camelCase")]
pub enum Outcome {
    Checked { report: Report },
    Unverifiable { reason: String },
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EdgeResult {
    #[serde(flatten)]
    pub edge: Edge,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Every edge of a catalog with its outcome, in package, `to`, `from` order.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CatalogReport {
    pub edges: Vec<EdgeResult>,
}

/// Counts for a summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub edges: usize,
    pub checked: usize,
    pub breaking: usize,
    pub unverifiable: usize,
    pub findings: usize,
}

impl CatalogReport {
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            edges: self.edges.len(),
            ..Default::default()
        };
        for e in &self.edges {
            match &e.outcome {
                Outcome::Checked { report } => {
                    s.checked += 1;
                    if !report.passed() {
                        s.breaking += 1;
                    }
                    s.findings += report.findings.len();
                }
                Outcome::Unverifiable { .. } => s.unverifiable += 1,
            }
        }
        s
    }

    /// No checked edge breaks anything (unverifiable edges do not fail it).
    pub fn passed(&self) -> bool {
        self.summary().breaking == 0
    }

    /// One line per edge (`ok`, `FAILED` with its findings and hints, `not checked` with the
    /// reason), then a summary line.
    pub fn to_text(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        for e in &self.edges {
            let via: Vec<String> = e
                .edge
                .via
                .iter()
                .map(|(c, v)| format!("{c} {}", v.name()))
                .collect();
            let (package, from, to) = (&e.edge.package, &e.edge.from, &e.edge.to);
            let _ = write!(s, "{package}: {from} -> {to} ({}): ", via.join(", "));
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
        let m = self.summary();
        let _ = writeln!(
            s,
            "{} upgrade edge(s): {} checked, {} with breaking CRD changes ({} finding(s)), {} could not be checked",
            m.edges, m.checked, m.breaking, m.findings, m.unverifiable
        );
        s
    }

    /// The JSON report; with `strict`, an edge that could not be checked fails it too.
    pub fn to_json(&self, strict: bool) -> Value {
        serde_json::json!({
            "passed": self.passed_strict(strict),
            "summary": self.summary(),
            "edges": self.edges,
        })
    }

    /// [`Self::passed`], and with `strict` every edge checked.
    pub fn passed_strict(&self, strict: bool) -> bool {
        self.passed() && !(strict && self.summary().unverifiable > 0)
    }
}

/// A bundle's CRDs, or why the catalog does not have them.
fn crds_of(bundle: &Bundle) -> Result<CrdSet, String> {
    let has_objects = bundle
        .properties
        .iter()
        .any(|p| p.ty == property::TYPE_BUNDLE_OBJECT);
    if !has_objects {
        let form = if bundle
            .properties
            .iter()
            .any(|p| p.ty == property::TYPE_CSV_METADATA)
        {
            "olm.csv.metadata form"
        } else {
            "no olm.bundle.object properties"
        };
        let image = if bundle.image.is_empty() {
            String::new()
        } else {
            format!(" (they are in its bundle image {})", bundle.image)
        };
        return Err(format!(
            "{} is in {form}: the catalog does not carry its CRDs{image}",
            bundle.name
        ));
    }
    let objects = property::bundle_objects(&bundle.properties)
        .into_iter()
        .filter_map(|json| serde_json::from_str::<Value>(&json).ok());
    Ok(CrdSet::from_objects(bundle.name.clone(), objects))
}

/// Every upgrade edge of `model` (of one package when `package` is set).
pub fn edges(model: &Model, package: Option<&str>) -> Vec<Edge> {
    let mut out: BTreeMap<(String, String, String), Edge> = BTreeMap::new();
    for pkg in model.packages() {
        if package.is_some_and(|p| p != pkg.name) {
            continue;
        }
        for ch in pkg.channels.values() {
            for e in &ch.entries {
                let mut add = |from: &str, via: Via| {
                    if from == e.name || pkg.bundle(from).is_none() {
                        return; // OLM allows a replaces/skips of a bundle not in the catalog
                    }
                    out.entry((pkg.name.clone(), e.name.clone(), from.to_string()))
                        .or_insert_with(|| Edge {
                            package: pkg.name.clone(),
                            from: from.to_string(),
                            to: e.name.clone(),
                            via: Vec::new(),
                        })
                        .via
                        .push((ch.name.clone(), via));
                };
                if let Some(r) = &e.replaces {
                    add(r, Via::Replaces);
                }
                for s in &e.skips {
                    add(s, Via::Skips);
                }
                // A skipRange offers the entry to installed versions in range below it.
                let to_version = pkg.bundle(&e.name).map(|b| &b.version);
                if let (Some(range), Some(to_version)) = (&e.skip_range, to_version) {
                    for other in &ch.entries {
                        if let Some(b) = pkg.bundle(&other.name)
                            && range.contains(&b.version)
                            && b.version < *to_version
                        {
                            add(&other.name, Via::SkipRange);
                        }
                    }
                }
            }
        }
    }
    out.into_values().collect()
}

/// Checks every edge of `model`; each bundle's CRDs are decoded once.
pub fn check(model: &Model, package: Option<&str>) -> CatalogReport {
    let mut cache: HashMap<(String, String), Result<CrdSet, String>> = HashMap::new();
    let mut get = |pkg: &str, name: &str| -> Result<CrdSet, String> {
        cache
            .entry((pkg.to_string(), name.to_string()))
            .or_insert_with(|| {
                let b = model
                    .package(pkg)
                    .and_then(|p| p.bundle(name))
                    .ok_or_else(|| format!("{name} is not in package {pkg}"))?;
                crds_of(b)
            })
            .clone()
    };
    let mut report = CatalogReport::default();
    for edge in edges(model, package) {
        let outcome = match (get(&edge.package, &edge.from), get(&edge.package, &edge.to)) {
            (Ok(old), Ok(new)) => Outcome::Checked {
                report: crd_upgrade::compare(&old, &new),
            },
            (Err(reason), _) | (_, Err(reason)) => Outcome::Unverifiable { reason },
        };
        report.edges.push(EdgeResult { edge, outcome });
    }
    report
}

/// What a release found about the version before the one it releases.
#[derive(Debug, Clone, PartialEq)]
pub enum PreviousCheck {
    /// The package has no earlier version in the catalog (a first release).
    NoPrevious,
    Checked {
        previous: String,
        report: Report,
    },
    Unverifiable {
        previous: String,
        reason: String,
    },
}

/// The version of a declcfg bundle, from its `olm.package` property.
fn declcfg_version(b: &super::declcfg::Bundle) -> Option<Version> {
    b.properties
        .iter()
        .enumerate()
        .find_map(|(i, p)| match p.parse(i) {
            Ok(TypedProperty::Package(pp)) => {
                crate::grammar::semver_range::parse_version(&pp.version).ok()
            }
            _ => None,
        })
}

/// Checks `new` (the bundle being released as `version` of `package`) against the highest
/// earlier version of the package in `catalog` as it is before the release: the version
/// users upgrade from. When the catalog does not carry that bundle's CRDs
/// (`olm.csv.metadata`), `previous_bundle` (the last released bundle directory, if it is
/// that version) stands in for it.
pub fn check_against_previous(
    catalog: &DeclarativeConfig,
    package: &str,
    version: &Version,
    new: &CrdSet,
    previous_bundle: Option<&Path>,
) -> PreviousCheck {
    let Some((prev, _)) = catalog
        .bundles
        .iter()
        .filter(|b| b.package == package)
        .filter_map(|b| declcfg_version(b).map(|v| (b, v)))
        .filter(|(_, v)| v < version)
        .max_by(|a, b| a.1.cmp(&b.1))
    else {
        return PreviousCheck::NoPrevious;
    };
    let previous = prev.name.clone();
    let old = if prev
        .properties
        .iter()
        .any(|p| p.ty == property::TYPE_BUNDLE_OBJECT)
    {
        let objects = property::bundle_objects(&prev.properties)
            .into_iter()
            .filter_map(|json| serde_json::from_str::<Value>(&json).ok());
        CrdSet::from_objects(previous.clone(), objects)
    } else {
        let dir = match previous_bundle.map(BundleDir::load_strict) {
            Some(Err(e)) => {
                return PreviousCheck::Unverifiable {
                    reason: e.to_string(),
                    previous,
                };
            }
            Some(Ok(b)) => Some(CrdSet::from_bundle(&b)).filter(|s| s.label == previous),
            None => None,
        };
        match dir {
            Some(s) => s,
            None => {
                return PreviousCheck::Unverifiable {
                    reason: format!(
                        "{previous} is in olm.csv.metadata form in the catalog, which does not carry its CRDs, and no bundle directory of it was found"
                    ),
                    previous,
                };
            }
        }
    };
    PreviousCheck::Checked {
        report: crd_upgrade::compare(&old, new),
        previous,
    }
}

/// Why a release's CRD check could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseCheckError {
    #[error(transparent)]
    Catalog(#[from] super::load::LoadErrors),
    #[error(transparent)]
    Bundle(#[from] crate::bundle::load::LoadError),
}

/// The check `olm release` makes before anything is published or written: the staged
/// bundle at `new_bundle` against the highest earlier version of `package` in the catalog
/// directory `catalog` (nothing to check when it does not exist yet). `previous_bundle` is
/// the bundle directory as last released, used when the catalog lacks the CRDs.
pub fn check_release(
    catalog: &Path,
    package: &str,
    version: &Version,
    new_bundle: &Path,
    previous_bundle: &Path,
) -> Result<PreviousCheck, ReleaseCheckError> {
    if !catalog.exists() {
        return Ok(PreviousCheck::NoPrevious);
    }
    let cfg = super::load::load_dir(catalog)?;
    let new = CrdSet::from_bundle(&BundleDir::load_strict(new_bundle)?);
    Ok(check_against_previous(
        &cfg,
        package,
        version,
        &new,
        previous_bundle.is_dir().then_some(previous_bundle),
    ))
}
