//! `olm catalog validate --olmv1`: which bundles of each package OLM v1 (operator-controller)
//! could install from this catalog, with the OLM v1 bundle suite
//! ([`crate::bundle::validate::olmv1`]) run on each bundle as the catalog holds it.
//!
//! Dependencies are judged on the bundle's catalog properties (`olm.gvk.required`,
//! `olm.package.required`, `olm.constraint`), which is where OLM v1 reads them. A bundle in
//! `olm.bundle.object` form is checked in full; one in `olm.csv.metadata` form only on what
//! that metadata holds (install modes, APIService definitions, properties): its deployments,
//! webhooks and CRDs are not in the catalog, and the verdict says so.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Value, json};

use super::declcfg::{Bundle, DeclarativeConfig};
use super::property::{self, TypedProperty};
use crate::bundle::load::{BundleDir, Manifest, keys};
use crate::bundle::validate::olmv1::{self, Olmv1Options};
use crate::bundle::validate::{Ctx, Finding, Level};

/// One bundle's verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BundleVerdict {
    pub bundle: String,
    /// Only the CSV metadata could be checked (`olm.csv.metadata` form).
    #[serde(rename = "metadataOnly")]
    pub metadata_only: bool,
    pub findings: Vec<Finding>,
}

impl BundleVerdict {
    pub fn installable(&self) -> bool {
        !self.findings.iter().any(|f| f.level == Level::Error)
    }
}

/// One package's bundles, and its default channel's head (what a ClusterExtension that
/// names only the package installs).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PackageVerdict {
    pub package: String,
    #[serde(rename = "defaultChannelHead", skip_serializing_if = "Option::is_none")]
    pub default_channel_head: Option<String>,
    pub bundles: Vec<BundleVerdict>,
}

impl PackageVerdict {
    pub fn installable(&self) -> usize {
        self.bundles.iter().filter(|b| b.installable()).count()
    }
    /// Whether the default channel's head is installable (`None`: no head known).
    pub fn head_installable(&self) -> Option<bool> {
        let head = self.default_channel_head.as_deref()?;
        self.bundles
            .iter()
            .find(|b| b.bundle == head)
            .map(BundleVerdict::installable)
    }
}

const DEPENDENCIES: [&str; 3] = [
    property::TYPE_GVK_REQUIRED,
    property::TYPE_PACKAGE_REQUIRED,
    property::TYPE_CONSTRAINT,
];

/// The bundle as operator-controller would read it: its manifests (or a CSV made of its
/// metadata) and its package.
fn as_bundle_dir(b: &Bundle) -> (BundleDir, bool) {
    let mut dir = BundleDir {
        annotations: Some(BTreeMap::from([(
            keys::PACKAGE.to_string(),
            b.package.clone(),
        )])),
        has_manifests_dir: true,
        has_metadata_dir: true,
        ..Default::default()
    };
    let objects = property::bundle_objects(&b.properties);
    if !objects.is_empty() {
        for json in objects {
            let Ok(object) = serde_json::from_str::<Value>(&json) else {
                continue;
            };
            let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
            let name = object
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            dir.manifests.push(Manifest {
                file: PathBuf::from(format!("olm.bundle.object {kind}/{name}")),
                object,
            });
        }
        return (dir, false);
    }
    let meta = b
        .properties
        .iter()
        .enumerate()
        .find_map(|(i, p)| match p.parse(i) {
            Ok(TypedProperty::CsvMetadata(m)) => Some(*m),
            _ => None,
        })
        .unwrap_or_default();
    let csv = json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion",
        "metadata": {"name": b.name, "annotations": meta.annotations},
        "spec": {
            "installModes": meta.install_modes,
            "apiservicedefinitions": meta.api_service_definitions,
            "customresourcedefinitions": meta.crd_descriptions,
        },
    });
    dir.manifests.push(Manifest {
        file: PathBuf::from("olm.csv.metadata"),
        object: csv,
    });
    (dir, true)
}

/// Checks one catalog bundle.
pub fn check_bundle(b: &Bundle, experimental: bool) -> BundleVerdict {
    let (dir, metadata_only) = as_bundle_dir(b);
    let ctx = Ctx::new(&dir);
    let mut findings = olmv1::validate(
        &ctx,
        Olmv1Options {
            experimental,
            metadata_only,
            skip_dependencies: true,
        },
    );
    for (i, p) in b.properties.iter().enumerate() {
        if DEPENDENCIES.contains(&p.ty.as_str()) {
            findings.push(
                Finding::error(
                    "olmv1",
                    "dependency",
                    format!(
                        "property {} {}: OLM v1 does not resolve dependencies",
                        p.ty,
                        p.raw()
                    ),
                )
                .field(format!("properties[{i}]"))
                .hint("OLM v1 installs no dependencies: drop the declaration from the bundle (CSV required CRDs, metadata/dependencies.yaml, properties.yaml) and document the prerequisite"),
            );
        }
    }
    BundleVerdict {
        bundle: b.name.clone(),
        metadata_only,
        findings,
    }
}

/// Checks every bundle of every package (or of `package`), in catalog order.
pub fn check(
    cfg: &DeclarativeConfig,
    package: Option<&str>,
    experimental: bool,
) -> Vec<PackageVerdict> {
    let mut out: Vec<PackageVerdict> = Vec::new();
    for p in &cfg.packages {
        if package.is_some_and(|n| n != p.name) {
            continue;
        }
        let head = cfg
            .channels
            .iter()
            .find(|c| c.package == p.name && c.name == p.default_channel)
            .and_then(|c| {
                // The head: the entry no other entry replaces or skips.
                c.entries
                    .iter()
                    .find(|e| {
                        !c.entries
                            .iter()
                            .any(|o| o.replaces == e.name || o.skips.iter().any(|s| s == &e.name))
                    })
                    .map(|e| e.name.clone())
            });
        out.push(PackageVerdict {
            package: p.name.clone(),
            default_channel_head: head,
            bundles: cfg
                .bundles
                .iter()
                .filter(|b| b.package == p.name)
                .map(|b| check_bundle(b, experimental))
                .collect(),
        });
    }
    out
}

/// Whether any bundle of `verdicts` has an error.
pub fn failed(verdicts: &[PackageVerdict]) -> bool {
    verdicts
        .iter()
        .any(|p| p.bundles.iter().any(|b| !b.installable()))
}

/// The verdicts as text: a line per package (with its default channel head), then each
/// bundle that has findings, with the findings and their hints.
pub fn to_text(verdicts: &[PackageVerdict], experimental: bool) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let set = if experimental {
        "experimental"
    } else {
        "standard"
    };
    let _ = writeln!(s, "OLM v1 ({set} feature set):");
    for p in verdicts {
        let _ = write!(
            s,
            "package {}: {} of {} bundle(s) installable",
            p.package,
            p.installable(),
            p.bundles.len()
        );
        let _ = match (&p.default_channel_head, p.head_installable()) {
            (Some(h), Some(true)) => writeln!(s, "; default channel head {h}: installable"),
            (Some(h), Some(false)) => writeln!(s, "; default channel head {h}: NOT installable"),
            _ => writeln!(s),
        };
        for b in p.bundles.iter().filter(|b| !b.findings.is_empty()) {
            let partial = if b.metadata_only {
                " (olm.csv.metadata only: deployments, webhooks and CRDs not in the catalog)"
            } else {
                ""
            };
            let verdict = if b.installable() {
                "installable"
            } else {
                "not installable"
            };
            let _ = writeln!(s, "  {}{partial}: {verdict}", b.bundle);
            for f in &b.findings {
                let _ = writeln!(s, "    {f}");
                if let Some(h) = &f.hint {
                    let _ = writeln!(s, "        hint: {h}");
                }
            }
        }
    }
    s
}

/// A validation report's JSON with the verdicts added under `olmv1`.
pub fn add_to_json(report: Value, verdicts: &[PackageVerdict]) -> Value {
    let olmv1 = serde_json::to_value(verdicts).unwrap_or_default();
    match report {
        Value::Object(mut o) => {
            o.insert("olmv1".into(), olmv1);
            Value::Object(o)
        }
        v => json!({ "validate": v, "olmv1": olmv1 }),
    }
}
