//! DeployableByOLM's plan, as preflight's `operatorMetadata` and `generateOperatorGroupData`
//! make it: the package and channel from the bundle's annotations (a `--channel` overrides),
//! an app name that is a DNS-1035 label (`p-` in front when the package is not one), an
//! install namespace and a target namespace, and the install mode picked in the order
//! OwnNamespace, SingleNamespace, MultiNamespace, AllNamespaces with its OperatorGroup
//! targets. The namespaces carry a random suffix here (preflight reuses `<app>` and deletes it
//! afterwards, even when it was there before).

use serde_json::Value;

use crate::bundle::load::{BundleDir, keys};
use crate::grammar::k8s_names;

/// An install mode a CSV declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    OwnNamespace,
    SingleNamespace,
    MultiNamespace,
    AllNamespaces,
}

impl Mode {
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::OwnNamespace => "OwnNamespace",
            Mode::SingleNamespace => "SingleNamespace",
            Mode::MultiNamespace => "MultiNamespace",
            Mode::AllNamespaces => "AllNamespaces",
        }
    }
}

/// preflight's `prioritizedInstallModes`.
pub const PRIORITY: [Mode; 4] = [
    Mode::OwnNamespace,
    Mode::SingleNamespace,
    Mode::MultiNamespace,
    Mode::AllNamespaces,
];

/// What DeployableByOLM creates and waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub package: String,
    /// The channel to subscribe to; `None` lets OLM take the package's default.
    pub channel: Option<String>,
    /// The bundle's CSV name.
    pub csv: String,
    pub app: String,
    pub install_namespace: String,
    pub target_namespace: String,
    pub mode: Mode,
    /// The OperatorGroup's targetNamespaces (empty: all namespaces).
    pub target_namespaces: Vec<String>,
    /// The CSV's deployments, whose state is reported when the CSV does not succeed.
    pub deployments: Vec<String>,
}

/// The plan for `bundle`; `suffix` (lowercase letters and digits) makes the namespaces new.
pub fn plan(bundle: &BundleDir, channel: Option<&str>, suffix: &str) -> Result<Plan, String> {
    let package = bundle
        .annotation(keys::PACKAGE)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| format!("metadata/annotations.yaml: {} is missing", keys::PACKAGE))?
        .to_string();
    let csv = bundle
        .csvs()
        .next()
        .ok_or("manifests/: no ClusterServiceVersion")?;
    let channel = channel
        .map(str::to_string)
        .or_else(|| bundle.annotation(keys::DEFAULT_CHANNEL).map(str::to_string))
        .filter(|c| !c.is_empty());
    let app = if k8s_names::dns1035_label(&package).is_empty() {
        package.clone()
    } else {
        format!("p-{package}")
    };
    // `<app>-<suffix>-target` must stay a label (63 characters).
    let room = 63usize.saturating_sub(suffix.len() + 1 + "-target".len());
    let stem: String = app.chars().take(room).collect();
    let stem = stem.trim_end_matches('-');
    let install_namespace = format!("{stem}-{suffix}");
    let target_namespace = format!("{install_namespace}-target");
    let supported = |m: Mode| {
        csv.object
            .pointer("/spec/installModes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|im| {
                im.get("type").and_then(Value::as_str) == Some(m.as_str())
                    && im.get("supported").and_then(Value::as_bool) == Some(true)
            })
    };
    let mode = PRIORITY
        .into_iter()
        .find(|m| supported(*m))
        .ok_or_else(|| {
            format!(
                "{}: spec.installModes: no install mode is supported; mark at least one \
             (OwnNamespace, SingleNamespace, MultiNamespace or AllNamespaces) supported: true",
                csv.file.display()
            )
        })?;
    let target_namespaces = match mode {
        Mode::OwnNamespace => vec![install_namespace.clone()],
        Mode::SingleNamespace => vec![target_namespace.clone()],
        Mode::MultiNamespace => vec![target_namespace.clone(), install_namespace.clone()],
        Mode::AllNamespaces => vec![],
    };
    let deployments = csv
        .object
        .pointer("/spec/install/spec/deployments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    Ok(Plan {
        package,
        channel,
        csv: csv.name().to_string(),
        app,
        install_namespace,
        target_namespace,
        mode,
        target_namespaces,
        deployments,
    })
}
