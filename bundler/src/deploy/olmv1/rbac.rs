//! Least-privilege RBAC for the ServiceAccount a ClusterExtension installs as, from the bundle.
//!
//! operator-controller acts as that account: it creates, reads, patches and deletes exactly the
//! objects it renders from the bundle (`rukpak/render/registryv1/generators`), lists and watches
//! their kinds cluster-wide (its content manager), and updates `clusterextensions/finalizers`;
//! its `PreflightPermissions` check asks for exactly that (`authorization/rbac.go`). And since
//! Kubernetes forbids granting rules one does not hold, the account must also hold every rule
//! it hands to the operator: the CSV's `clusterPermissions`, its `permissions` (which OLM v1
//! turns into a ClusterRole for AllNamespaces, plus `namespaces get/list/watch`), and the rules
//! of ClusterRoles and Roles shipped in `manifests/`.
//!
//! Names are pinned with `resourceNames` wherever they are known up front, including the
//! ClusterRoles OLM v1 generates from the CSV (their names are reproduced here: see
//! [`generated_name`]). `create`, `list` and `watch` cannot be pinned by name in RBAC.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use serde_json::Value;
use sha2::{Digest, Sha224};

use crate::bundle::load::BundleDir;

/// A bundle whose installer RBAC cannot be derived.
#[derive(Debug, thiserror::Error)]
pub enum RbacError {
    #[error("{root}: {message}")]
    Bundle { root: String, message: String },
}

/// Who installs what, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RbacTarget {
    /// The ClusterExtension's name (for `clusterextensions/finalizers`, and to name our objects).
    pub extension: String,
    /// Install namespace.
    pub namespace: String,
    pub service_account: String,
    /// `None`: AllNamespaces (the standard feature set); `Some(ns)`: the experimental
    /// Single/OwnNamespace install watching `ns`.
    pub watch_namespace: Option<String>,
}

/// The installer's RBAC objects, and what the caller should know about them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct InstallerRbac {
    pub cluster_roles: Vec<ClusterRole>,
    pub cluster_role_bindings: Vec<ClusterRoleBinding>,
    pub roles: Vec<Role>,
    pub role_bindings: Vec<RoleBinding>,
    /// Objects granted by kind rather than by name, and kinds OLM v1 will refuse.
    pub notes: Vec<String>,
}

impl InstallerRbac {
    /// The objects as typed documents (apiVersion and kind set), ClusterRoles, then
    /// ClusterRoleBindings, Roles and RoleBindings: the order they apply in.
    pub fn documents(&self) -> Result<Vec<Value>, serde_json::Error> {
        fn typed<T: serde::Serialize>(kind: &str, o: &T) -> Result<Value, serde_json::Error> {
            let mut v = serde_json::to_value(o)?;
            v["apiVersion"] = Value::from("rbac.authorization.k8s.io/v1");
            v["kind"] = Value::from(kind);
            Ok(v)
        }
        let mut docs = Vec::new();
        for o in &self.cluster_roles {
            docs.push(typed("ClusterRole", o)?);
        }
        for o in &self.cluster_role_bindings {
            docs.push(typed("ClusterRoleBinding", o)?);
        }
        for o in &self.roles {
            docs.push(typed("Role", o)?);
        }
        for o in &self.role_bindings {
            docs.push(typed("RoleBinding", o)?);
        }
        Ok(docs)
    }
}

/// One object operator-controller will manage.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Managed {
    group: String,
    resource: String,
    /// `""`: cluster-scoped.
    namespace: String,
    /// `None`: the name is not known up front (granted by kind).
    name: Option<String>,
}

/// Kinds a registry+v1 bundle may carry in `manifests/` besides the CSV and CRDs: group,
/// resource, namespaced, and whether OLM v1 installs it (operator-registry's
/// `pkg/lib/bundle/supported_resources.go`; the others are OLM v0 extras it refuses).
const KINDS: &[(&str, &str, &str, bool, bool)] = &[
    (
        "ClusterRole",
        "rbac.authorization.k8s.io",
        "clusterroles",
        false,
        true,
    ),
    (
        "ClusterRoleBinding",
        "rbac.authorization.k8s.io",
        "clusterrolebindings",
        false,
        true,
    ),
    ("Role", "rbac.authorization.k8s.io", "roles", true, true),
    (
        "RoleBinding",
        "rbac.authorization.k8s.io",
        "rolebindings",
        true,
        true,
    ),
    ("Service", "", "services", true, true),
    ("ServiceAccount", "", "serviceaccounts", true, true),
    ("Secret", "", "secrets", true, true),
    ("ConfigMap", "", "configmaps", true, true),
    (
        "PrometheusRule",
        "monitoring.coreos.com",
        "prometheusrules",
        true,
        true,
    ),
    (
        "ServiceMonitor",
        "monitoring.coreos.com",
        "servicemonitors",
        true,
        true,
    ),
    (
        "PodDisruptionBudget",
        "policy",
        "poddisruptionbudgets",
        true,
        false,
    ),
    (
        "PriorityClass",
        "scheduling.k8s.io",
        "priorityclasses",
        false,
        false,
    ),
    (
        "VerticalPodAutoscaler",
        "autoscaling.k8s.io",
        "verticalpodautoscalers",
        true,
        false,
    ),
    (
        "ConsoleYAMLSample",
        "console.openshift.io",
        "consoleyamlsamples",
        false,
        false,
    ),
    (
        "ConsoleQuickStart",
        "console.openshift.io",
        "consolequickstarts",
        false,
        false,
    ),
    (
        "ConsoleCLIDownload",
        "console.openshift.io",
        "consoleclidownloads",
        false,
        false,
    ),
    (
        "ConsoleLink",
        "console.openshift.io",
        "consolelinks",
        false,
        false,
    ),
];

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// What OLM v1 needs on an object it manages by name, and on its kind.
const OBJECT_VERBS: [&str; 4] = ["delete", "get", "patch", "update"];

fn strs(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// A CSV `permissions`/`clusterPermissions` entry as Go decodes it.
#[derive(Debug, Clone)]
struct Permission {
    service_account: String,
    /// The raw rules (`null` when absent), as the hash must see them.
    rules: Value,
}

impl Permission {
    fn from_value(v: &Value) -> Self {
        Self {
            service_account: str_at(v, "/serviceAccountName").to_string(),
            rules: v.get("rules").cloned().unwrap_or(Value::Null),
        }
    }

    fn sa_or_default(&self) -> &str {
        if self.service_account.is_empty() {
            "default"
        } else {
            &self.service_account
        }
    }

    /// The permission promoted to cluster scope for AllNamespaces, as OLM v1 does it.
    fn with_namespaces_rule(&self) -> Self {
        let mut rules = self.rules.as_array().cloned().unwrap_or_default();
        rules.push(serde_json::json!({
            "verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["namespaces"]
        }));
        Self {
            service_account: self.service_account.clone(),
            rules: Value::Array(rules),
        }
    }

    fn policy_rules(&self) -> Vec<PolicyRule> {
        self.rules
            .as_array()
            .map(|rs| rs.iter().map(policy_rule).collect())
            .unwrap_or_default()
    }
}

fn policy_rule(v: &Value) -> PolicyRule {
    let opt = |k: &str| Some(strs(v.get(k))).filter(|l| !l.is_empty());
    PolicyRule {
        api_groups: opt("apiGroups"),
        resources: opt("resources"),
        resource_names: opt("resourceNames"),
        non_resource_urls: opt("nonResourceURLs"),
        verbs: strs(v.get("verbs")),
    }
}

/// Go's `encoding/json` text of a string list (HTML characters escaped as Go escapes them).
fn go_json_strings(v: &Value) -> String {
    let text = serde_json::to_string(v).unwrap_or_else(|_| "null".into());
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// `json.Encoder` output for a `v1alpha1.StrategyDeploymentPermissions`: fields in struct
/// order, `verbs` always present, the other rule fields `omitempty`, and a trailing newline.
fn go_json_permission(p: &Permission) -> String {
    let mut out = format!(
        "{{\"serviceAccountName\":{},\"rules\":",
        go_json_strings(&Value::String(p.service_account.clone()))
    );
    match p.rules.as_array() {
        None => out.push_str("null"),
        Some(rules) => {
            out.push('[');
            for (i, r) in rules.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                let list = |k: &str| -> Value {
                    Value::Array(strs(r.get(k)).into_iter().map(Value::String).collect())
                };
                let verbs = match r.get("verbs") {
                    Some(Value::Array(_)) => go_json_strings(&list("verbs")),
                    _ => "null".to_string(),
                };
                out.push_str(&format!("{{\"verbs\":{verbs}"));
                for k in ["apiGroups", "resources", "resourceNames", "nonResourceURLs"] {
                    let l = list(k);
                    if l.as_array().is_some_and(|a| !a.is_empty()) {
                        out.push_str(&format!(",\"{k}\":{}", go_json_strings(&l)));
                    }
                }
                out.push('}');
            }
            out.push(']');
        }
    }
    out.push_str("}\n");
    out
}

/// `big.Int.Text(36)` of a big-endian number.
fn base36(bytes: &[u8]) -> String {
    let mut digits: Vec<u8> = Vec::new();
    let mut num: Vec<u8> = bytes.iter().copied().skip_while(|b| *b == 0).collect();
    while !num.is_empty() {
        let mut rem = 0u32;
        let mut next = Vec::with_capacity(num.len());
        for b in &num {
            let acc = rem * 256 + u32::from(*b);
            let q = acc / 36;
            rem = acc % 36;
            if !(next.is_empty() && q == 0) {
                next.push(q as u8);
            }
        }
        digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[rem as usize]);
        num = next;
    }
    if digits.is_empty() {
        return "0".into();
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// The name OLM v1 gives the Role/ClusterRole (and binding) it makes from one CSV permission:
/// `DefaultUniqueNameGenerator("<csv>-<sa>", permission)`, i.e. base36(sha224(json)) appended
/// to the base, the base cut so the whole fits in 63 characters
/// (`util.ObjectNameForBaseAndSuffix`).
fn generated_name(csv: &str, p: &Permission) -> String {
    let hash = base36(&Sha224::digest(go_json_permission(p).as_bytes()));
    let mut base = format!("{csv}-{}", p.sa_or_default());
    if base.len() + hash.len() > 63 {
        base.truncate(63usize.saturating_sub(hash.len() + 1));
    }
    format!("{base}-{hash}")
}

fn rule(group: &str, resource: &str, names: Vec<String>, verbs: &[&str]) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_string()]),
        resources: Some(vec![resource.to_string()]),
        resource_names: Some(names).filter(|n| !n.is_empty()),
        non_resource_urls: None,
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
    }
}

/// Whether `rules` grant `verb` on every object of `group`/`resource`.
fn covers(rules: &[PolicyRule], group: &str, resource: &str, verb: &str) -> bool {
    let has = |l: &Option<Vec<String>>, x: &str| {
        l.as_ref()
            .is_some_and(|l| l.iter().any(|v| v == x || v == "*"))
    };
    rules.iter().any(|r| {
        r.resource_names.as_ref().is_none_or(Vec::is_empty)
            && has(&r.api_groups, group)
            && has(&r.resources, resource)
            && r.verbs.iter().any(|v| v == verb || v == "*")
    })
}

fn push_unique(rules: &mut Vec<PolicyRule>, r: PolicyRule) {
    if !rules.contains(&r) {
        rules.push(r);
    }
}

/// Derives the installer RBAC for `bundle` installed as `target`.
pub fn installer_rbac(bundle: &BundleDir, target: &RbacTarget) -> Result<InstallerRbac, RbacError> {
    let fail = |message: String| RbacError::Bundle {
        root: bundle.root.display().to_string(),
        message,
    };
    let csvs: Vec<_> = bundle.csvs().collect();
    let (csv, csv_file) = match csvs.as_slice() {
        [one] => (&one.object, one.file.display()),
        [] => return Err(fail("no ClusterServiceVersion in manifests/".into())),
        many => {
            let files: Vec<String> = many.iter().map(|m| m.file.display().to_string()).collect();
            return Err(fail(format!(
                "more than one ClusterServiceVersion in manifests/ ({}): a bundle holds one",
                files.join(", ")
            )));
        }
    };
    let csv_name = str_at(csv, "/metadata/name");
    if csv_name.is_empty() {
        return Err(fail(format!(
            "{csv_file}: the ClusterServiceVersion has no metadata.name"
        )));
    }
    let install = csv
        .pointer("/spec/install/spec")
        .cloned()
        .unwrap_or(Value::Null);
    let perms = |key: &str| -> Vec<Permission> {
        install
            .get(key)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(Permission::from_value).collect())
            .unwrap_or_default()
    };
    let permissions = perms("permissions");
    let cluster_permissions = perms("clusterPermissions");
    let ns = target.namespace.as_str();

    let mut managed: BTreeSet<Managed> = BTreeSet::new();
    let mut add = |group: &str, resource: &str, namespace: &str, name: Option<&str>| {
        managed.insert(Managed {
            group: group.into(),
            resource: resource.into(),
            namespace: namespace.into(),
            name: name.map(str::to_string),
        });
    };
    // Rules the account must hold because it grants them: cluster-wide, and per namespace.
    let mut grants: Vec<PolicyRule> = Vec::new();
    let mut ns_grants: BTreeMap<String, Vec<PolicyRule>> = BTreeMap::new();
    let mut notes = Vec::new();

    for d in install
        .get("deployments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        add("apps", "deployments", ns, Some(str_at(d, "/name")));
    }
    for p in permissions.iter().chain(&cluster_permissions) {
        if p.sa_or_default() != "default" {
            add("", "serviceaccounts", ns, Some(p.sa_or_default()));
        }
    }
    let mut cluster_scoped = cluster_permissions.clone();
    match &target.watch_namespace {
        None => cluster_scoped.extend(permissions.iter().map(Permission::with_namespaces_rule)),
        Some(watch) => {
            for p in &permissions {
                let name = generated_name(csv_name, p);
                add(RBAC_GROUP, "roles", watch, Some(&name));
                add(RBAC_GROUP, "rolebindings", watch, Some(&name));
                let g = ns_grants.entry(watch.clone()).or_default();
                for r in p.policy_rules() {
                    push_unique(g, r);
                }
            }
        }
    }
    for p in &cluster_scoped {
        let name = generated_name(csv_name, p);
        add(RBAC_GROUP, "clusterroles", "", Some(&name));
        add(RBAC_GROUP, "clusterrolebindings", "", Some(&name));
        for r in p.policy_rules() {
            push_unique(&mut grants, r);
        }
    }

    let mut bundle_roles: BTreeSet<(String, String)> = BTreeSet::new();
    let mut bindings: Vec<(String, String, String)> = Vec::new();
    for m in &bundle.manifests {
        let (kind, name) = (m.kind(), m.name());
        match kind {
            "ClusterServiceVersion" => continue,
            "CustomResourceDefinition" => {
                add(
                    "apiextensions.k8s.io",
                    "customresourcedefinitions",
                    "",
                    Some(name),
                );
                continue;
            }
            _ => {}
        }
        let Some(&(_, group, resource, namespaced, supported)) = KINDS.iter().find(|k| k.0 == kind)
        else {
            return Err(fail(format!(
                "{}: OLM v1 cannot install kind {kind:?} ({name}): \
                 bundle contains unsupported resource",
                m.file.display()
            )));
        };
        if !supported {
            notes.push(format!(
                "{}: {kind} {name}: OLM v1 refuses this kind (\"bundle contains unsupported \
                 resource\"); its RBAC is included for when it does not",
                m.file.display()
            ));
        }
        let obj_ns = if namespaced { ns } else { "" };
        add(group, resource, obj_ns, Some(name));
        let rules = || -> Vec<PolicyRule> {
            m.object
                .get("rules")
                .and_then(Value::as_array)
                .map(|rs| rs.iter().map(policy_rule).collect())
                .unwrap_or_default()
        };
        match kind {
            "ClusterRole" => {
                bundle_roles.insert(("ClusterRole".into(), name.into()));
                for r in rules() {
                    push_unique(&mut grants, r);
                }
            }
            "Role" => {
                bundle_roles.insert(("Role".into(), name.into()));
                let g = ns_grants.entry(ns.to_string()).or_default();
                for r in rules() {
                    push_unique(g, r);
                }
            }
            "ClusterRoleBinding" | "RoleBinding" => bindings.push((
                obj_ns.to_string(),
                str_at(&m.object, "/roleRef/kind").to_string(),
                str_at(&m.object, "/roleRef/name").to_string(),
            )),
            _ => {}
        }
    }
    // A binding to a role the bundle does not ship: RBAC lets `bind` on that role stand in for
    // holding its rules.
    for (bns, kind, role) in bindings {
        if bundle_roles.contains(&(kind.clone(), role.clone())) || role.is_empty() {
            continue;
        }
        let (resource, scope) = match kind.as_str() {
            "ClusterRole" => ("clusterroles", &mut grants),
            _ => ("roles", ns_grants.entry(bns).or_default()),
        };
        push_unique(scope, rule(RBAC_GROUP, resource, vec![role], &["bind"]));
    }

    // Webhooks: OLM v1 renders their configurations and a Service per deployment; a certificate
    // provider (cert-manager) adds objects whose names we do not pin.
    let webhooks = csv
        .pointer("/spec/webhookdefinitions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for w in &webhooks {
        let name = str_at(w, "/generateName").trim_end_matches('-').to_string();
        match str_at(w, "/type") {
            "ValidatingAdmissionWebhook" => add(
                "admissionregistration.k8s.io",
                "validatingwebhookconfigurations",
                "",
                Some(&name),
            ),
            "MutatingAdmissionWebhook" => add(
                "admissionregistration.k8s.io",
                "mutatingwebhookconfigurations",
                "",
                Some(&name),
            ),
            _ => {}
        }
        add(
            "",
            "services",
            ns,
            Some(&format!("{}-service", str_at(w, "/deploymentName"))),
        );
    }
    if !webhooks.is_empty() {
        add("cert-manager.io", "issuers", ns, None);
        add("cert-manager.io", "certificates", ns, None);
        notes.push(
            "webhooks: the cert-manager Issuer and Certificate OLM v1 creates for them are \
             granted by kind in the install namespace, not by name"
                .into(),
        );
    }

    // Management rules, as the preflight asks: per kind, create in each namespace (cluster-wide
    // for cluster-scoped kinds), list/watch cluster-wide, the object verbs by name.
    let mut by_kind: BTreeMap<(String, String), Vec<&Managed>> = BTreeMap::new();
    for m in &managed {
        by_kind
            .entry((m.group.clone(), m.resource.clone()))
            .or_default()
            .push(m);
    }
    let mut manage: Vec<PolicyRule> = Vec::new();
    let mut ns_manage: BTreeMap<String, Vec<PolicyRule>> = BTreeMap::new();
    for ((group, resource), objs) in &by_kind {
        let mut cluster_verbs: Vec<&str> = Vec::new();
        let namespaces: BTreeSet<&str> = objs.iter().map(|m| m.namespace.as_str()).collect();
        if namespaces.contains("") {
            cluster_verbs.push("create");
        }
        cluster_verbs.extend(["list", "watch"]);
        cluster_verbs.retain(|v| !covers(&grants, group, resource, v));
        if !cluster_verbs.is_empty() {
            manage.push(rule(group, resource, vec![], &cluster_verbs));
        }
        for n in namespaces {
            let here: Vec<&&Managed> = objs.iter().filter(|m| m.namespace == n).collect();
            let names: Vec<String> = here.iter().filter_map(|m| m.name.clone()).collect();
            let by_kind_only = here.iter().any(|m| m.name.is_none());
            let target_rules = if n.is_empty() {
                &mut manage
            } else {
                ns_manage.entry(n.to_string()).or_default()
            };
            if !n.is_empty() {
                target_rules.push(rule(group, resource, vec![], &["create"]));
            }
            if by_kind_only {
                target_rules.push(rule(group, resource, vec![], &OBJECT_VERBS));
            } else if !names.is_empty() {
                target_rules.push(rule(group, resource, names, &OBJECT_VERBS));
            }
        }
    }
    manage.push(rule(
        super::types::GROUP,
        "clusterextensions/finalizers",
        vec![target.extension.clone()],
        &["update"],
    ));

    let installer = format!("{}-installer", target.extension);
    let grants_name = format!("{}-installer-grants", target.extension);
    let meta = crate::deploy::objects::meta;
    let subject = || {
        Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: target.service_account.clone(),
            namespace: Some(ns.to_string()),
            api_group: None,
        }])
    };
    let role_ref = |kind: &str, name: &str| RoleRef {
        api_group: RBAC_GROUP.into(),
        kind: kind.into(),
        name: name.into(),
    };
    let mut out = InstallerRbac {
        notes,
        ..Default::default()
    };
    for (name, rules) in [(&installer, manage), (&grants_name, grants)] {
        if rules.is_empty() {
            continue;
        }
        out.cluster_roles.push(ClusterRole {
            metadata: meta(name, None),
            rules: Some(rules),
            aggregation_rule: None,
        });
        out.cluster_role_bindings.push(ClusterRoleBinding {
            metadata: meta(name, None),
            role_ref: role_ref("ClusterRole", name),
            subjects: subject(),
        });
    }
    let namespaces: BTreeSet<String> = ns_manage.keys().chain(ns_grants.keys()).cloned().collect();
    for n in namespaces {
        let mut rules = ns_manage.remove(&n).unwrap_or_default();
        for r in ns_grants.remove(&n).unwrap_or_default() {
            push_unique(&mut rules, r);
        }
        out.roles.push(Role {
            metadata: meta(&installer, Some(&n)),
            rules: Some(rules),
        });
        out.role_bindings.push(RoleBinding {
            metadata: meta(&installer, Some(&n)),
            role_ref: role_ref("Role", &installer),
            subjects: subject(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base36_matches_go_big_int_text() {
        assert_eq!(base36(&[]), "0");
        assert_eq!(base36(&[0, 35]), "z");
        assert_eq!(base36(&[1, 0]), "74");
        assert_eq!(base36(&[0xff, 0xff, 0xff, 0xff]), "1z141z3");
    }

    #[test]
    fn names_fit_in_63_characters_and_keep_the_hash() {
        let p = Permission {
            service_account: "reverse-words-operator".into(),
            rules: serde_json::json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
        };
        let n = generated_name("reverse-words-operator.v0.2.1", &p.with_namespaces_rule());
        assert!(n.len() <= 63, "{n}");
        assert!(n.starts_with("reverse-words-oper"), "{n}");
        // A base and hash that fit are kept whole (the hash is 43 or 44 base-36 digits).
        let sa = Permission {
            service_account: "sa".into(),
            rules: p.rules.clone(),
        };
        let short = generated_name("a.v1", &sa);
        // Pinned: the hash part computed independently (Python's hashlib.sha224 of this JSON,
        // written in base 36 as Go's big.Int.Text(36) writes it). Not yet compared with a name
        // a live operator-controller gave (docs/olmv1.md says so).
        assert_eq!(
            go_json_permission(&sa),
            "{\"serviceAccountName\":\"sa\",\"rules\":[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]}]}\n"
        );
        assert_eq!(short, "a.v1-sa-3wviurxqrxqx9tcfeq9i80qbm0stl686z1sd97orsyx");
        assert_eq!(
            n,
            "reverse-words-oper-1by4pngk0tahzom7lwtoml75civp8nfbb2gq1da6i4c6"
        );
        assert!(short.starts_with("a.v1-sa-"), "{short}");
        assert_eq!(
            short.len(),
            "a.v1-sa-".len() + base36(&Sha224::digest(go_json_permission(&sa).as_bytes())).len()
        );
    }

    #[test]
    fn go_json_omits_empty_fields_but_not_verbs() {
        let p = Permission {
            service_account: String::new(),
            rules: serde_json::json!([{"apiGroups": [], "resources": ["a<b"]}]),
        };
        assert_eq!(
            go_json_permission(&p),
            "{\"serviceAccountName\":\"\",\"rules\":[{\"verbs\":null,\"resources\":[\"a\\u003cb\"]}]}\n"
        );
    }
}
