//! Kubernetes APIs removed in 1.22, 1.25 and 1.26 (operator-framework/api
//! `internal/removed_apis.go`): a warning, or an error when the target Kubernetes version
//! (`k8s-version`) or the CSV's minKubeVersion is at or past the removal.

use std::collections::BTreeMap;

use serde_json::Value;

use super::v::{arr_at, str_at};
use super::{Ctx, Finding};
use crate::grammar::semver_range;

const V: &str = "deprecated-apis";

/// `(apiVersion, kind or "*" for every kind of that group/version, removed in 1.<minor>)`.
const REMOVED: &[(&str, &str, u64)] = &[
    (
        "apiextensions.k8s.io/v1beta1",
        "CustomResourceDefinition",
        22,
    ),
    ("apiregistration.k8s.io/v1beta1", "APIService", 22),
    ("authentication.k8s.io/v1beta1", "TokenReview", 22),
    ("authorization.k8s.io/v1beta1", "*", 22),
    (
        "certificates.k8s.io/v1beta1",
        "CertificateSigningRequest",
        22,
    ),
    ("coordination.k8s.io/v1beta1", "Lease", 22),
    ("admissionregistration.k8s.io/v1beta1", "*", 22),
    ("extensions/v1beta1", "Ingress", 22),
    ("networking.k8s.io/v1beta1", "Ingress", 22),
    ("networking.k8s.io/v1beta1", "IngressClass", 22),
    ("rbac.authorization.k8s.io/v1beta1", "*", 22),
    ("scheduling.k8s.io/v1beta1", "PriorityClass", 22),
    ("storage.k8s.io/v1beta1", "CSIDriver", 22),
    ("storage.k8s.io/v1beta1", "CSINode", 22),
    ("storage.k8s.io/v1beta1", "StorageClass", 22),
    ("storage.k8s.io/v1beta1", "VolumeAttachment", 22),
    ("batch/v1beta1", "CronJob", 25),
    ("discovery.k8s.io/v1beta1", "EndpointSlice", 25),
    ("events.k8s.io/v1beta1", "Event", 25),
    ("autoscaling/v2beta1", "HorizontalPodAutoscaler", 25),
    ("policy/v1beta1", "PodDisruptionBudget", 25),
    ("policy/v1beta1", "PodSecurityPolicy", 25),
    ("node.k8s.io/v1beta1", "RuntimeClass", 25),
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler", 26),
];

fn removed_in(api_version: &str, kind: &str) -> Option<u64> {
    REMOVED
        .iter()
        .find(|(av, k, _)| *av == api_version && (*k == "*" || *k == kind))
        .map(|(_, _, m)| *m)
}

/// The objects of the bundle whose APIs Kubernetes removed, by removal minor version, then
/// kind, with their names; and the files they are in.
pub(super) struct Removed {
    pub found: BTreeMap<u64, BTreeMap<String, Vec<String>>>,
    pub files: BTreeMap<u64, Vec<std::path::PathBuf>>,
}

impl Removed {
    /// `Kind: (["name" ...]),Kind: (...)`: the list operator-framework/api's messages quote.
    pub fn list(&self, minor: u64) -> Option<String> {
        let kinds = self.found.get(&minor)?;
        let list: Vec<String> = kinds
            .iter()
            .map(|(kind, names)| {
                let mut names = names.clone();
                names.sort();
                names.dedup();
                format!(
                    "{kind}: ([{}])",
                    names
                        .iter()
                        .map(|n| format!("{n:?}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                )
            })
            .collect();
        Some(list.join(","))
    }
}

pub(super) fn removed(ctx: &Ctx<'_>) -> Removed {
    // minor -> kind -> names (and the files they are in)
    let mut found: BTreeMap<u64, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut files: BTreeMap<u64, Vec<std::path::PathBuf>> = BTreeMap::new();
    for m in &ctx.bundle.manifests {
        if let Some(minor) = removed_in(m.api_version(), m.kind()) {
            found
                .entry(minor)
                .or_default()
                .entry(m.kind().to_string())
                .or_default()
                .push(m.name().to_string());
            files.entry(minor).or_default().push(m.file.clone());
        }
    }
    // Owned CRDs' `resources` may list removed kinds the operator creates.
    if let Some(csv) = ctx.csv {
        for crd in arr_at(&csv.object, "/spec/customresourcedefinitions/owned") {
            for r in arr_at(crd, "/resources") {
                let kind = r.get("kind").and_then(Value::as_str).unwrap_or("");
                let version = r.get("version").and_then(Value::as_str).unwrap_or("");
                for (av, k, minor) in REMOVED {
                    if *k == kind && av.ends_with(&format!("/{version}")) && !kind.is_empty() {
                        let n = r
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        found
                            .entry(*minor)
                            .or_default()
                            .entry(kind.to_string())
                            .or_default()
                            .push(n);
                    }
                }
            }
        }
    }
    Removed { found, files }
}

pub fn validate(ctx: &Ctx<'_>, k8s_version: Option<&semver::Version>) -> Vec<Finding> {
    let mut out = Vec::new();
    let removed = removed(ctx);
    let min_kube = match ctx
        .csv
        .and_then(|m| str_at(&m.object, "/spec/minKubeVersion"))
        .filter(|s| !s.is_empty())
    {
        None => None,
        Some(s) => match semver_range::parse_version_tolerant(s) {
            Ok(v) => Some(v),
            Err(_) => {
                out.push(
                    Finding::error(V, "min-kube-version", format!("unable to use csv.Spec.MinKubeVersion to verify the CRD/Webhook apis because it has an invalid value: {s}"))
                        .in_file(ctx.csv)
                        .field("spec.minKubeVersion"),
                );
                None
            }
        },
    };
    for &minor in removed.found.keys() {
        let target = semver::Version::new(1, minor, 0);
        let is_error = k8s_version.is_some_and(|v| *v >= target)
            || min_kube.as_ref().is_some_and(|v| *v >= target);
        let msg = format!(
            "this bundle is using APIs which were deprecated and removed in v1.{minor}. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-{minor}. Migrate the API(s) for {},",
            removed.list(minor).unwrap_or_default()
        );
        let f = if is_error {
            Finding::error(V, "removed-api", msg)
        } else {
            Finding::warning(V, "removed-api", msg)
        };
        let mut f = f.hint(format!(
            "move these objects to the API versions served by Kubernetes 1.{minor} and later"
        ));
        if let Some(first) = removed.files.get(&minor).and_then(|v| v.first()) {
            f = f.file(first.clone());
        }
        out.push(f);
    }
    out
}
