//! Bundle consistency (operator-framework/api `internal/bundle.go`): the CSV's owned CRDs and
//! the CRD files agree, no CRD version is duplicated, no ServiceAccount object collides with
//! the one OLM creates for the operator, and relatedImages are pullable references.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::v::{arr_at, str_at};
use super::{Ctx, Finding};
use crate::grammar::image_ref;

const V: &str = "bundle";

/// A CRD version as `group/version, Kind=K` (the Go `GroupVersionKind` string).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct CrdKey {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl std::fmt::Display for CrdKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

/// The versions a CRD object defines (v1 `versions[]`, v1beta1 also `version`).
pub fn crd_keys(crd: &Value) -> Vec<CrdKey> {
    let group = str_at(crd, "/spec/group").unwrap_or("").to_string();
    let kind = str_at(crd, "/spec/names/kind").unwrap_or("").to_string();
    let mut versions: Vec<String> = arr_at(crd, "/spec/versions")
        .iter()
        .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    if let Some(v) = str_at(crd, "/spec/version")
        && !versions.iter().any(|x| x == v)
    {
        versions.push(v.to_string());
    }
    versions
        .into_iter()
        .map(|version| CrdKey {
            group: group.clone(),
            version,
            kind: kind.clone(),
        })
        .collect()
}

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(csv_m) = ctx.csv else {
        return Vec::new();
    };
    let csv = &csv_m.object;
    let bundle = ctx.csv_name();
    let mut out = Vec::new();

    // CRD keys in the bundle, with the file that defines each.
    let mut present: BTreeMap<CrdKey, &std::path::Path> = BTreeMap::new();
    for m in &ctx.crds {
        for key in crd_keys(&m.object) {
            if present.insert(key.clone(), m.file.as_path()).is_some() {
                out.push(
                    Finding::error(V, "duplicate-crd", format!("duplicate CRD \"{key}\" in bundle {bundle:?}"))
                        .file(m.file.clone())
                        .hint("each CRD version may be defined once: remove the duplicate file (a v1 and a v1beta1 copy of one CRD count as duplicates)"),
                );
            }
        }
    }

    let mut owned = BTreeSet::new();
    for (i, o) in arr_at(csv, "/spec/customresourcedefinitions/owned")
        .iter()
        .enumerate()
    {
        let name = o.get("name").and_then(Value::as_str).unwrap_or("");
        let group = name.split_once('.').map(|(_, g)| g).unwrap_or("");
        let key = CrdKey {
            group: group.to_string(),
            version: o
                .get("version")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            kind: o
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        };
        if !present.contains_key(&key) {
            out.push(
                Finding::error(V, "owned-crd-missing", format!("owned CRD \"{key}\" not found in bundle {bundle:?}"))
                    .file(csv_m.file.clone())
                    .field(format!("spec.customresourcedefinitions.owned[{i}]"))
                    .hint(format!("add the CRD `{name}` (with version {}) to manifests/, or remove it from the CSV's owned list", key.version)),
            );
        }
        owned.insert((key.group, key.kind));
    }
    for (key, file) in &present {
        if !owned.contains(&(key.group.clone(), key.kind.clone())) {
            out.push(
                Finding::error(V, "crd-not-owned", format!("CRD \"{key}\" is present in bundle {bundle:?} but not defined in CSV"))
                    .file(file.to_path_buf())
                    .hint("list the CRD under spec.customresourcedefinitions.owned in the CSV (`olm bundle generate` does this), or remove its file"),
            );
        }
    }

    // ServiceAccount objects named like the operator's own account.
    let csv_sas: BTreeSet<&str> = arr_at(csv, "/spec/install/spec/deployments")
        .iter()
        .map(|d| str_at(d, "/spec/template/spec/serviceAccountName").unwrap_or(""))
        .collect();
    for m in &ctx.bundle.manifests {
        if m.kind() == "ServiceAccount" && m.api_version() == "v1" && csv_sas.contains(m.name()) {
            out.push(
                Finding::error(V, "service-account", format!(
                    "invalid service account found in bundle. This service account {} in your bundle is not valid, because a service account with the same name was already specified in your CSV. If this was unintentional, please remove the service account manifest from your bundle. If it was intentional to specify a separate service account, please rename the SA in either the bundle manifest or the CSV.",
                    m.name()
                ))
                .file(m.file.clone())
                .hint("OLM creates the operator's ServiceAccount from the CSV's permissions; delete this file"),
            );
        }
    }

    // relatedImages pull specs.
    for (i, ri) in arr_at(csv, "/spec/relatedImages").iter().enumerate() {
        let field = format!("spec.relatedImages[{i}]");
        match ri.get("image").and_then(Value::as_str).unwrap_or("") {
            "" => out.push(
                Finding::error(
                    V,
                    "related-images",
                    format!("relatedImages[{i}] has an empty image field"),
                )
                .file(csv_m.file.clone())
                .field(format!("{field}.image"))
                .hint("give the full pull spec, preferably by digest"),
            ),
            img => {
                if let Err(e) = image_ref::validate(img) {
                    out.push(
                        Finding::error(
                            V,
                            "related-images",
                            format!(
                                "relatedImages[{i}] has an invalid image pullspec {img:?}: {e}"
                            ),
                        )
                        .file(csv_m.file.clone())
                        .field(format!("{field}.image")),
                    );
                }
            }
        }
    }
    out
}
