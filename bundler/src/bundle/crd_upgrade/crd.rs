//! One CustomResourceDefinition against its next version: scope, versions, and each
//! version's schema field by field (apiextensions.k8s.io/v1, and v1beta1's `spec.version` /
//! `spec.validation` forms).

use std::cmp::Ordering;

use serde_json::Value;

use super::schema::{self, FlatSchema};
use super::{Finding, Rule};

/// One version of a CRD, whatever the apiextensions version that declared it.
struct CrdVersion<'a> {
    name: String,
    served: bool,
    storage: bool,
    schema: Option<&'a Value>,
}

fn versions(crd: &Value) -> Vec<CrdVersion<'_>> {
    let global = crd.pointer("/spec/validation/openAPIV3Schema");
    let listed: Vec<CrdVersion<'_>> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .map(|v| CrdVersion {
                    name: v
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    served: v.get("served").and_then(Value::as_bool).unwrap_or(false),
                    storage: v.get("storage").and_then(Value::as_bool).unwrap_or(false),
                    schema: v.pointer("/schema/openAPIV3Schema").or(global),
                })
                .collect()
        })
        .unwrap_or_default();
    if !listed.is_empty() {
        return listed;
    }
    // apiextensions v1beta1 with only `spec.version`: served and stored.
    match crd.pointer("/spec/version").and_then(Value::as_str) {
        Some(v) => vec![CrdVersion {
            name: v.to_string(),
            served: true,
            storage: true,
            schema: global,
        }],
        None => Vec::new(),
    }
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr).and_then(Value::as_str)
}

fn flat(v: &CrdVersion<'_>) -> FlatSchema {
    v.schema.map(schema::flatten).unwrap_or_default()
}

/// Compares `old` with `new` (the same CRD name) and returns every breaking change.
pub fn compare(old: &Value, new: &Value) -> Vec<Finding> {
    let name = str_at(new, "/metadata/name").unwrap_or("");
    let mut out = Vec::new();

    // Scope (operator-controller: NoScopeChange). v1beta1 defaults to Namespaced.
    let scope = |c: &Value| str_at(c, "/spec/scope").unwrap_or("Namespaced").to_string();
    let (os, ns) = (scope(old), scope(new));
    if os != ns {
        out.push(Finding::new(
            Rule::Scope,
            name,
            format!("scope changed from {os:?} to {ns:?}"),
        ));
    }

    let old_versions = versions(old);
    let new_versions = versions(new);
    let find = |n: &str| new_versions.iter().find(|v| v.name == n);

    // Stored versions (NoStoredVersionRemoval; a bundle has no status, so the storage
    // version stands in for status.storedVersions, plus whatever status it carries).
    let mut stored: Vec<String> = old_versions
        .iter()
        .filter(|v| v.storage)
        .map(|v| v.name.clone())
        .collect();
    if let Some(list) = old
        .pointer("/status/storedVersions")
        .and_then(Value::as_array)
    {
        stored.extend(list.iter().filter_map(Value::as_str).map(str::to_string));
    }
    stored.sort();
    stored.dedup();
    for s in &stored {
        if find(s).is_none() {
            out.push(
                Finding::new(
                    Rule::StoredVersionRemoval,
                    name,
                    format!("stored version {s:?} removed"),
                )
                .version(s),
            );
        }
    }
    // Served versions removed or no longer served (beyond operator-controller).
    for v in old_versions.iter().filter(|v| v.served) {
        if stored.contains(&v.name) && find(&v.name).is_none() {
            continue; // already reported as a stored version
        }
        let msg = match find(&v.name) {
            None => format!("served version {:?} removed", v.name),
            Some(n) if !n.served => format!("version {:?} is no longer served", v.name),
            Some(_) => continue,
        };
        out.push(Finding::new(Rule::ServedVersionRemoval, name, msg).version(&v.name));
    }

    // Each version on both sides, field by field (ChangeValidator).
    for ov in &old_versions {
        let Some(nv) = find(&ov.name) else {
            continue;
        };
        for (path, rule, message) in diff(&flat(ov), &flat(nv), FieldRemoved::SameVersion) {
            out.push(
                Finding::new(rule, name, message)
                    .version(&ov.name)
                    .path(&path),
            );
        }
    }

    // Served versions of the new CRD against each other (ServedVersionValidator), keeping
    // only what the old CRD did not already have.
    let before = served_pairs(old);
    for f in served_pairs(new) {
        if !before.contains(&f) {
            let mut f = f;
            f.crd = name.to_string();
            out.push(f);
        }
    }
    out
}

#[derive(Clone, Copy)]
enum FieldRemoved {
    SameVersion,
    /// Between two served versions: `(earlier, later)`.
    Between,
}

/// The breaking differences from `old` to `new`: `(path, rule, message)`. A removed field is
/// reported once, at its topmost path.
fn diff(old: &FlatSchema, new: &FlatSchema, kind: FieldRemoved) -> Vec<(String, Rule, String)> {
    let mut out = Vec::new();
    let mut removed: Vec<&str> = Vec::new();
    for (path, o) in old {
        match new.get(path) {
            None => {
                let under_removed = removed.iter().any(|r| {
                    path.len() > r.len()
                        && path.starts_with(r)
                        && matches!(path.as_bytes()[r.len()], b'.' | b'[')
                });
                if !under_removed {
                    removed.push(path);
                    let message = match kind {
                        FieldRemoved::SameVersion => "field may not be removed".to_string(),
                        FieldRemoved::Between => {
                            "field is missing from the later served version".to_string()
                        }
                    };
                    out.push((path.clone(), Rule::ExistingFieldRemoval, message));
                }
            }
            Some(n) => {
                for c in schema::compare_field(o, n) {
                    out.push((path.clone(), c.rule, c.message));
                }
            }
        }
    }
    out
}

/// Kubernetes' version priority (apimachinery `CompareKubeAwareVersionStrings`): GA above
/// beta above alpha, then by major and minor number; names that are not `vN[alpha|betaM]`
/// sort below all of them, in reverse lexical order.
pub fn compare_kube_versions(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u64, u8, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        if major == 0 {
            return None;
        }
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((major, 2, 0));
        }
        let (kind, minor) = if let Some(m) = tail.strip_prefix("alpha") {
            (0, m)
        } else if let Some(m) = tail.strip_prefix("beta") {
            (1, m)
        } else {
            return None;
        };
        if minor.is_empty() || !minor.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        Some((major, kind, minor.parse().ok()?))
    }
    if a == b {
        return Ordering::Equal;
    }
    match (parse(a), parse(b)) {
        (None, None) => b.cmp(a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((am, at, an)), Some((bm, bt, bn))) => at.cmp(&bt).then(am.cmp(&bm)).then(an.cmp(&bn)),
    }
}

/// Differences between the served versions of one CRD that has no conversion webhook: the
/// API server returns the same stored object under every served version, so each later
/// version must accept what the earlier ones did.
fn served_pairs(crd: &Value) -> Vec<Finding> {
    if str_at(crd, "/spec/conversion/strategy") == Some("Webhook") {
        return Vec::new();
    }
    let mut served: Vec<CrdVersion<'_>> = versions(crd).into_iter().filter(|v| v.served).collect();
    served.sort_by(|a, b| compare_kube_versions(&a.name, &b.name));
    let flats: Vec<FlatSchema> = served.iter().map(flat).collect();
    let mut out = Vec::new();
    for i in 0..served.len() {
        for j in i + 1..served.len() {
            for (path, rule, message) in diff(&flats[i], &flats[j], FieldRemoved::Between) {
                let mut f = Finding::new(rule, "", message)
                    .version(&served[i].name)
                    .path(&path);
                f.to_version = Some(served[j].name.clone());
                f.hint = "with no conversion webhook every served version serves the same stored objects: make the schemas compatible, or set spec.conversion.strategy: Webhook".into();
                out.push(f);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_version_priority() {
        let mut v = vec![
            "v1",
            "v10",
            "v2",
            "v1beta1",
            "v1alpha1",
            "v2beta3",
            "foo1",
            "foo10",
            "v11alpha2",
        ];
        v.sort_by(|a, b| compare_kube_versions(a, b));
        assert_eq!(
            v,
            [
                "foo10",
                "foo1",
                "v1alpha1",
                "v11alpha2",
                "v1beta1",
                "v2beta3",
                "v1",
                "v2",
                "v10"
            ]
        );
    }
}
