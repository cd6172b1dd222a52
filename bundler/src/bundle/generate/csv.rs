//! Assembling the ClusterServiceVersion from the base and the operator's manifests, as
//! operator-sdk's CSV generator does: install strategy from the Deployments, permissions from
//! the RBAC bound to their ServiceAccounts, owned CRDs, `alm-examples`, `relatedImages`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::GenerateError;
use super::input::SourceObject;

/// Where WATCH_NAMESPACE comes from under OLM: the OperatorGroup's target namespaces.
pub const TARGET_NAMESPACES_FIELD: &str = "metadata.annotations['olm.targetNamespaces']";

fn input_err(o: &SourceObject, message: impl Into<String>) -> GenerateError {
    GenerateError::Input {
        origin: o.source.clone(),
        message: message.into(),
    }
}

/// One deployment of the install strategy.
pub fn deployment_spec(d: &SourceObject) -> Result<Value, GenerateError> {
    let name = d.name();
    if name.is_empty() {
        return Err(input_err(d, "Deployment has no metadata.name"));
    }
    let Some(spec) = d.object.get("spec").filter(|s| s.is_object()) else {
        return Err(input_err(
            d,
            format!("Deployment {name}: `spec` must be a map"),
        ));
    };
    let mut spec = spec.clone();
    drop_empty(&mut spec);
    // operator-sdk points WATCH_NAMESPACE of the (non-init) containers at the target namespaces.
    if let Some(Value::Array(containers)) = spec.pointer_mut("/template/spec/containers") {
        for c in containers {
            if let Some(Value::Array(env)) = c.get_mut("env") {
                for e in env.iter_mut() {
                    if e.get("name").and_then(Value::as_str) == Some("WATCH_NAMESPACE") {
                        *e = json!({"name": "WATCH_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": TARGET_NAMESPACES_FIELD}}});
                    }
                }
            }
        }
    }
    let mut entry = Map::new();
    entry.insert("name".into(), Value::String(name.to_string()));
    if let Some(labels) = d
        .object
        .pointer("/metadata/labels")
        .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
    {
        entry.insert("label".into(), labels.clone());
    }
    entry.insert("spec".into(), spec);
    Ok(Value::Object(entry))
}

/// Fields operator-sdk's typed Deployment spec cannot carry: `null` values and empty lists
/// (`ports: []`, `volumes: []` from kustomize patches), all `omitempty` in the Go types.
/// The few lists Kubernetes requires even when empty are kept.
fn drop_empty(v: &mut Value) {
    const REQUIRED_LISTS: [&str; 3] = ["containers", "nodeSelectorTerms", "sources"];
    match v {
        Value::Object(map) => {
            map.retain(|k, v| {
                !(v.is_null()
                    || v.as_array().is_some_and(Vec::is_empty)
                        && !REQUIRED_LISTS.contains(&k.as_str()))
            });
            map.values_mut().for_each(drop_empty);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_empty),
        _ => {}
    }
}

/// The ServiceAccount a Deployment runs as (`default` when unset, as Kubernetes does).
pub fn service_account(d: &SourceObject) -> String {
    d.object
        .pointer("/spec/template/spec/serviceAccountName")
        .or_else(|| d.object.pointer("/spec/template/spec/serviceAccount"))
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or("default")
        .to_string()
}

/// RBAC folded into the CSV, and which input objects it consumed.
#[derive(Debug, Default)]
pub struct Permissions {
    pub permissions: Vec<Value>,
    pub cluster_permissions: Vec<Value>,
    /// Indexes (into the input) of Roles, ClusterRoles and bindings now expressed by the CSV.
    pub consumed: BTreeSet<usize>,
    pub warnings: Vec<String>,
}

/// Folds the rules of (Cluster)Roles bound to the operator's ServiceAccounts into
/// `permissions` (RoleBindings) and `clusterPermissions` (ClusterRoleBindings), as
/// operator-sdk does: one entry per account with rules, sorted by account name, rules in
/// binding order. A bound role is consumed; a binding is consumed only when every subject is
/// one of the accounts (otherwise it stays a manifest, unchanged).
pub fn permissions(
    objects: &[SourceObject],
    accounts: &BTreeSet<String>,
) -> Result<Permissions, GenerateError> {
    let mut roles: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (i, o) in objects.iter().enumerate() {
        if matches!(o.kind(), "Role" | "ClusterRole") {
            roles.entry((o.kind(), o.name())).or_insert(i);
        }
    }
    let mut ns: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut cluster: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    let mut out = Permissions::default();
    for (i, b) in objects.iter().enumerate() {
        let cluster_binding = match b.kind() {
            "RoleBinding" => false,
            "ClusterRoleBinding" => true,
            _ => continue,
        };
        let all_subjects = b
            .object
            .get("subjects")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        let subjects: Vec<String> = all_subjects
            .iter()
            .filter(|s| s.get("kind").and_then(Value::as_str) == Some("ServiceAccount"))
            .filter_map(|s| s.get("name").and_then(Value::as_str))
            .filter(|n| accounts.contains(*n))
            .map(str::to_string)
            .collect();
        if subjects.is_empty() {
            continue;
        }
        let ref_kind = b
            .object
            .pointer("/roleRef/kind")
            .and_then(Value::as_str)
            .unwrap_or("");
        let ref_name = b
            .object
            .pointer("/roleRef/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if cluster_binding && ref_kind != "ClusterRole" {
            return Err(input_err(
                b,
                format!(
                    "ClusterRoleBinding {}: roleRef.kind must be ClusterRole, found {ref_kind:?}",
                    b.name()
                ),
            ));
        }
        let Some(&role_idx) = roles.get(&(ref_kind, ref_name)) else {
            out.warnings.push(format!(
                "{}: {} {} refers to {ref_kind} {ref_name:?}, which is not among the manifests; kept as a separate object",
                b.source,
                b.kind(),
                b.name()
            ));
            continue;
        };
        let role = &objects[role_idx];
        let rules = match role.object.get("rules") {
            Some(Value::Array(r)) => r.clone(),
            None | Some(Value::Null) => Vec::new(),
            Some(_) => {
                return Err(input_err(
                    role,
                    format!("{} {}: `rules` must be a list", role.kind(), role.name()),
                ));
            }
        };
        let target = if cluster_binding {
            &mut cluster
        } else {
            &mut ns
        };
        for sa in subjects.iter() {
            target
                .entry(sa.clone())
                .or_default()
                .extend(rules.iter().cloned());
        }
        if subjects.len() == all_subjects.len() {
            out.consumed.insert(i);
        }
        out.consumed.insert(role_idx);
    }
    let fold = |m: BTreeMap<String, Vec<Value>>| {
        m.into_iter()
            .filter(|(_, rules)| !rules.is_empty())
            .map(|(sa, rules)| json!({"rules": rules, "serviceAccountName": sa}))
            .collect::<Vec<_>>()
    };
    out.permissions = fold(ns);
    out.cluster_permissions = fold(cluster);
    Ok(out)
}

/// `Reverse Words App` from `ReverseWordsApp`: OperatorHub's default display name.
pub fn display_name(kind: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = kind.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
        if i > 0
            && c.is_uppercase()
            && (chars[i - 1].is_lowercase() || next_lower && chars[i - 1].is_uppercase())
        {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// `spec.customresourcedefinitions.owned`, as operator-sdk builds it: one entry per version
/// of every CRD, in input order; the base's entry for the same (name, version, kind) kept as
/// written, else just the three keys. With `fill`, an empty `displayName` becomes the kind
/// split into words and an empty `description` the schema's (or another version's entry's).
pub fn owned_crds(
    crds: &[&SourceObject],
    base_owned: &[Value],
    fill: bool,
) -> (Vec<Value>, Vec<String>) {
    let mut out = Vec::new();
    let mut used = BTreeSet::new();
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    for crd in crds {
        let name = crd.name();
        let kind = crd
            .object
            .pointer("/spec/names/kind")
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut versions: Vec<(String, Option<&Value>)> = crd
            .object
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .filter_map(|v| {
                v.get("name").and_then(Value::as_str).map(|n| {
                    (
                        n.to_string(),
                        v.pointer("/schema/openAPIV3Schema/description"),
                    )
                })
            })
            .collect();
        if versions.is_empty()
            && let Some(v) = crd.object.pointer("/spec/version").and_then(Value::as_str)
        {
            versions.push((
                v.to_string(),
                crd.object
                    .pointer("/spec/validation/openAPIV3Schema/description"),
            ));
        }
        for (version, schema_desc) in versions {
            let base = base_owned.iter().position(|b| {
                s(b, "name") == name && s(b, "version") == version && s(b, "kind") == kind
            });
            let mut entry = match base {
                Some(i) => {
                    used.insert(i);
                    base_owned[i].as_object().cloned().unwrap_or_default()
                }
                None => {
                    let mut m = Map::new();
                    m.insert("kind".into(), json!(kind));
                    m.insert("name".into(), json!(name));
                    m.insert("version".into(), json!(version));
                    m
                }
            };
            if fill {
                let same_name = base_owned.iter().find(|b| s(b, "name") == name);
                if entry
                    .get("displayName")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    let dn = same_name
                        .map(|b| s(b, "displayName"))
                        .filter(|d| !d.is_empty())
                        .unwrap_or_else(|| display_name(kind));
                    entry.insert("displayName".into(), json!(dn));
                }
                if entry
                    .get("description")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    let d = same_name
                        .map(|b| s(b, "description"))
                        .filter(|d| !d.is_empty())
                        .or_else(|| schema_desc.and_then(Value::as_str).map(str::to_string))
                        .unwrap_or_default();
                    if !d.is_empty() {
                        entry.insert("description".into(), json!(d.trim()));
                    }
                }
            }
            out.push(Value::Object(entry));
        }
    }
    let dropped = base_owned
        .iter()
        .enumerate()
        .filter(|(i, _)| !used.contains(i))
        .map(|(_, b)| {
            format!(
                "the CSV base lists owned CRD {} {} ({}), which is not among the manifests' CRDs and versions; dropped",
                s(b, "name"),
                s(b, "version"),
                s(b, "kind")
            )
        })
        .collect();
    (out, dropped)
}

/// The `RELATED_IMAGE_<NAME>` variables of a container: (variable, `<NAME>`, env entry).
fn related_image_vars(c: &Value) -> impl Iterator<Item = (&str, &str, &Value)> {
    c.get("env")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .filter_map(|e| {
            let var = e.get("name")?.as_str()?;
            let suffix = var.strip_prefix("RELATED_IMAGE_")?;
            Some((var, suffix, e))
        })
}

/// `relatedImages` as operator-sdk finds them: every `RELATED_IMAGE_<NAME>` variable of the
/// Deployments' containers (then init containers), named `<name>` lowercased with `-`; a name
/// used for several images is prefixed with `<deployment>` (or `<deployment>-<container>` in
/// a pod of several containers); an image listed under several names is listed once, unnamed.
pub fn related_images_from_env(deployments: &[&SourceObject]) -> Result<Vec<Value>, GenerateError> {
    // (name, image, container ref), exact duplicates dropped.
    let mut found: Vec<(String, String, String)> = Vec::new();
    for d in deployments {
        let containers = d.pod_containers();
        for c in &containers {
            let cname = c.get("name").and_then(Value::as_str).unwrap_or("");
            let container_ref = if containers.len() > 1 {
                format!("{}-{cname}", d.name())
            } else {
                d.name().to_string()
            };
            for (var, suffix, e) in related_image_vars(c) {
                if e.get("valueFrom").is_some_and(|v| !v.is_null()) {
                    return Err(input_err(
                        d,
                        format!(
                            "Deployment {}, container {cname}: {var} must have a literal `value` (an image pull spec); valueFrom cannot be resolved when generating the bundle",
                            d.name()
                        ),
                    ));
                }
                let image = e
                    .get("value")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let name = suffix.to_lowercase().replace('_', "-");
                if !found.iter().any(|(n, i, _)| *n == name && *i == image) {
                    found.push((name, image, container_ref.clone()));
                }
            }
        }
    }
    let mut out = Vec::new();
    for (name, image, container_ref) in &found {
        let mut shown = name.clone();
        if found.iter().filter(|(n, _, _)| n == name).count() > 1 {
            shown = format!("{container_ref}-{name}");
        }
        let same_image: Vec<&(String, String, String)> =
            found.iter().filter(|(_, i, _)| i == image).collect();
        if same_image.len() > 1 {
            if same_image[0].0 != *name {
                continue;
            }
            shown = String::new();
        }
        out.push(json!({"image": image, "name": shown}));
    }
    Ok(out)
}

/// `relatedImages`: the base's entries, then every container image (named after the
/// container) and every `RELATED_IMAGE_<NAME>` variable (named `<name>` lowercased with `-`),
/// without repeating a (name, image) pair; a name reused for another image is prefixed with
/// the deployment name.
pub fn related_images(
    base: &[Value],
    deployments: &[&SourceObject],
) -> Result<Vec<Value>, GenerateError> {
    let mut out: Vec<(String, String)> = base
        .iter()
        .filter_map(|r| {
            Some((
                r.get("name")?.as_str()?.to_string(),
                r.get("image")?.as_str()?.to_string(),
            ))
        })
        .collect();
    let mut add = |dep: &str, name: String, image: String| {
        if out.iter().any(|(n, i)| *n == name && *i == image) {
            return;
        }
        let name = if out.iter().any(|(n, _)| *n == name) {
            format!("{dep}-{name}")
        } else {
            name
        };
        if !out.iter().any(|(n, i)| *n == name && *i == image) {
            out.push((name, image));
        }
    };
    for d in deployments {
        for key in ["initContainers", "containers"] {
            for c in d
                .object
                .pointer(&format!("/spec/template/spec/{key}"))
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[])
            {
                let cname = c.get("name").and_then(Value::as_str).unwrap_or("");
                if let Some(image) = c
                    .get("image")
                    .and_then(Value::as_str)
                    .filter(|i| !i.is_empty())
                {
                    add(d.name(), cname.to_string(), image.to_string());
                }
                for (var, suffix, e) in related_image_vars(c) {
                    match e.get("value").and_then(Value::as_str) {
                        Some(image) if !image.is_empty() => add(
                            d.name(),
                            suffix.to_lowercase().replace('_', "-"),
                            image.to_string(),
                        ),
                        _ => {
                            return Err(input_err(
                                d,
                                format!(
                                    "Deployment {}, container {cname}: {var} must have a literal `value` (an image pull spec); valueFrom cannot be resolved when generating the bundle",
                                    d.name()
                                ),
                            ));
                        }
                    }
                }
            }
        }
    }
    Ok(out
        .into_iter()
        .map(|(name, image)| json!({"image": image, "name": name}))
        .collect())
}

/// The operator image: the container named `manager` (kubebuilder's name) of the first
/// Deployment, else its first container.
pub fn operator_image(deployments: &[&SourceObject]) -> Option<String> {
    let d = deployments.first()?;
    let containers = d
        .object
        .pointer("/spec/template/spec/containers")?
        .as_array()?;
    containers
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some("manager"))
        .or_else(|| containers.first())?
        .get("image")?
        .as_str()
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(name: &str, containers: Value) -> SourceObject {
        SourceObject {
            source: format!("{name}.yaml:1"),
            object: json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                "spec": {"template": {"spec": {"containers": containers}}}}),
        }
    }

    #[test]
    fn related_images_follow_operator_sdk_naming() {
        let env = |pairs: &[(&str, &str)]| {
            pairs
                .iter()
                .map(|(n, v)| json!({"name": n, "value": v}))
                .collect::<Vec<_>>()
        };
        let a = deployment(
            "a",
            json!([{"name": "manager", "image": "op:1", "env": env(&[("RELATED_IMAGE_DB_SERVER", "db:1"), ("RELATED_IMAGE_CACHE", "cache:1"), ("OTHER", "x")])},
                   {"name": "sidecar", "image": "side:1", "env": env(&[("RELATED_IMAGE_CACHE", "cache:2")])}]),
        );
        let b = deployment(
            "b",
            json!([{"name": "manager", "env": env(&[("RELATED_IMAGE_DB_SERVER", "db:1"), ("RELATED_IMAGE_PROXY", "db:1")])}]),
        );
        let got = related_images_from_env(&[&a, &b]).unwrap();
        assert_eq!(
            got,
            vec![
                // db:1 also listed as `proxy`: listed once, unnamed.
                json!({"image": "db:1", "name": ""}),
                // `cache` names two images: prefixed with <deployment>-<container>.
                json!({"image": "cache:1", "name": "a-manager-cache"}),
                json!({"image": "cache:2", "name": "a-sidecar-cache"}),
            ]
        );
        assert!(
            related_images_from_env(&[&deployment("c", json!([{"name": "m", "image": "i"}]))])
                .unwrap()
                .is_empty(),
            "container images are not listed"
        );
    }

    #[test]
    fn display_names_split_camel_case() {
        assert_eq!(display_name("ReverseWordsApp"), "Reverse Words App");
        assert_eq!(display_name("DNSRecord"), "DNS Record");
        assert_eq!(display_name("Memcached"), "Memcached");
    }
}
