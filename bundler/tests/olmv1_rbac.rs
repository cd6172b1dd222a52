//! The installer RBAC of OLM v1 (`deploy::olmv1::rbac`) on real bundles: reverse-words' own
//! bundle gives exactly the set that worked on a real operator-controller
//! (`../shared/reference/olmv1.md`), and each shape of the shared bundles (clusterPermissions,
//! permissions only, extra manifests, webhooks) gets what OLM v1 renders from it.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use k8s_openapi::api::rbac::v1::PolicyRule;
use olm_bundler::bundle::load::BundleDir;
use olm_bundler::deploy::olmv1::rbac::{InstallerRbac, RbacTarget, installer_rbac};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shared(bundle: &str) -> Option<BundleDir> {
    let dir = repo().join("../shared/data/bundles").join(bundle);
    if !dir.is_dir() {
        prerequisite::missing(&format!("{} (shared bundles)", dir.display()));
        return None;
    }
    Some(BundleDir::load(&dir).unwrap())
}

fn target(ext: &str, ns: &str) -> RbacTarget {
    RbacTarget {
        extension: ext.into(),
        namespace: ns.into(),
        service_account: format!("{ext}-installer"),
        watch_namespace: None,
    }
}

/// One granted permission: (namespace or "" for cluster-wide, group, resource, name or "*", verb).
type Grant = (String, String, String, String, String);

fn expand(ns: &str, rules: &[PolicyRule], out: &mut BTreeSet<Grant>) {
    for r in rules {
        let names = r.resource_names.clone().unwrap_or_else(|| vec!["*".into()]);
        for g in r.api_groups.iter().flatten() {
            for res in r.resources.iter().flatten() {
                for n in &names {
                    for v in &r.verbs {
                        out.insert((ns.into(), g.clone(), res.clone(), n.clone(), v.clone()));
                    }
                }
            }
        }
        for u in r.non_resource_urls.iter().flatten() {
            for v in &r.verbs {
                out.insert((ns.into(), "<url>".into(), u.clone(), "*".into(), v.clone()));
            }
        }
    }
}

fn grants(rbac: &InstallerRbac) -> BTreeSet<Grant> {
    let mut out = BTreeSet::new();
    for cr in &rbac.cluster_roles {
        expand("", cr.rules.as_deref().unwrap_or_default(), &mut out);
    }
    for r in &rbac.roles {
        let ns = r.metadata.namespace.clone().unwrap_or_default();
        expand(&ns, r.rules.as_deref().unwrap_or_default(), &mut out);
    }
    out
}

fn set(ns: &str, group: &str, resources: &[&str], names: &[&str], verbs: &[&str]) -> Vec<Grant> {
    let mut out = Vec::new();
    for r in resources {
        for n in names {
            for v in verbs {
                out.push((
                    ns.into(),
                    group.into(),
                    r.to_string(),
                    n.to_string(),
                    v.to_string(),
                ));
            }
        }
    }
    out
}

/// The ClusterRole OLM v1 generates from the CSV's permissions.
fn generated_cluster_role(rbac: &InstallerRbac) -> String {
    let g = grants(rbac);
    let names: BTreeSet<String> = g
        .iter()
        .filter(|x| x.2 == "clusterroles" && x.3 != "*")
        .map(|x| x.3.clone())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    names.into_iter().next().unwrap()
}

#[test]
fn reverse_words_gets_exactly_the_reference_set() {
    let b = BundleDir::load(&repo().join("bundle")).unwrap();
    let rbac = installer_rbac(&b, &target("reverse-words", "rw-system")).unwrap();
    let generated = generated_cluster_role(&rbac);
    assert!(
        generated.starts_with("reverse-words-oper-") && generated.len() <= 63,
        "{generated}"
    );
    let mut want: BTreeSet<Grant> = BTreeSet::new();
    let all = ["*"];
    // The operator's own rules, cluster-wide (OLM v1 grants them in a ClusterRole).
    want.extend(set(
        "",
        "apps.linuxera.org",
        &["reversewordsapps"],
        &all,
        &["get", "list", "patch", "watch"],
    ));
    want.extend(set(
        "",
        "apps.linuxera.org",
        &["reversewordsapps/status"],
        &all,
        &["get", "patch"],
    ));
    want.extend(set(
        "",
        "apps.linuxera.org",
        &["reversewordsapps/finalizers"],
        &all,
        &["update"],
    ));
    want.extend(set(
        "",
        "coordination.k8s.io",
        &["leases"],
        &all,
        &["create", "get", "list", "patch", "update", "watch"],
    ));
    want.extend(set(
        "",
        "events.k8s.io",
        &["events"],
        &all,
        &["create", "patch"],
    ));
    want.extend(set(
        "",
        "",
        &["services"],
        &all,
        &["create", "delete", "get", "list", "patch", "watch"],
    ));
    want.extend(set(
        "",
        "apps",
        &["deployments"],
        &all,
        &["create", "delete", "get", "list", "patch", "watch"],
    ));
    want.extend(set("", "", &["pods"], &all, &["list", "watch"]));
    want.extend(set(
        "",
        "",
        &["namespaces"],
        &all,
        &["get", "list", "watch"],
    ));
    // What OLM v1 needs to manage the bundle's objects.
    want.extend(set("", "", &["serviceaccounts"], &all, &["list", "watch"]));
    let crd = ["reversewordsapps.apps.linuxera.org"];
    want.extend(set(
        "",
        "apiextensions.k8s.io",
        &["customresourcedefinitions"],
        &all,
        &["create", "list", "watch"],
    ));
    want.extend(set(
        "",
        "apiextensions.k8s.io",
        &["customresourcedefinitions"],
        &crd,
        &["get", "update", "patch", "delete"],
    ));
    let rbac_group = "rbac.authorization.k8s.io";
    let kinds = ["clusterroles", "clusterrolebindings"];
    want.extend(set(
        "",
        rbac_group,
        &kinds,
        &all,
        &["create", "list", "watch"],
    ));
    want.extend(set(
        "",
        rbac_group,
        &kinds,
        &[generated.as_str()],
        &["get", "update", "patch", "delete"],
    ));
    want.extend(set(
        "",
        "olm.operatorframework.io",
        &["clusterextensions/finalizers"],
        &["reverse-words"],
        &["update"],
    ));
    // In the install namespace, by name.
    let op = ["reverse-words-operator"];
    want.extend(set(
        "rw-system",
        "",
        &["serviceaccounts"],
        &all,
        &["create"],
    ));
    want.extend(set(
        "rw-system",
        "",
        &["serviceaccounts"],
        &op,
        &["get", "update", "patch", "delete"],
    ));
    want.extend(set(
        "rw-system",
        "apps",
        &["deployments"],
        &all,
        &["create"],
    ));
    want.extend(set(
        "rw-system",
        "apps",
        &["deployments"],
        &op,
        &["get", "update", "patch", "delete"],
    ));

    let have = grants(&rbac);
    let missing: Vec<_> = want.difference(&have).collect();
    let extra: Vec<_> = have.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:#?}\nextra {extra:#?}"
    );
    assert!(rbac.notes.is_empty(), "{:?}", rbac.notes);
    // Every object is bound to the installer ServiceAccount in the install namespace.
    for b in &rbac.cluster_role_bindings {
        let s = &b.subjects.as_ref().unwrap()[0];
        assert_eq!(
            (s.name.as_str(), s.namespace.as_deref()),
            ("reverse-words-installer", Some("rw-system"))
        );
    }
}

/// What holds for every bundle: each CRD and Deployment is managed by name, every rule the CSV
/// grants the operator is held (cluster-wide: AllNamespaces), and the extension's finalizers.
fn check_common(b: &BundleDir, rbac: &InstallerRbac, ns: &str) {
    let have = grants(rbac);
    let holds = |g: &Grant| {
        have.contains(g)
            || have.contains(&(
                g.0.clone(),
                g.1.clone(),
                g.2.clone(),
                "*".into(),
                g.4.clone(),
            ))
    };
    let csv = &b.csvs().next().unwrap().object;
    for m in b
        .manifests
        .iter()
        .filter(|m| m.kind() == "CustomResourceDefinition")
    {
        for v in ["get", "update", "patch", "delete"] {
            let g = (
                "".into(),
                "apiextensions.k8s.io".into(),
                "customresourcedefinitions".into(),
                m.name().into(),
                v.into(),
            );
            assert!(holds(&g), "{}: {g:?}", b.root.display());
        }
    }
    for d in csv
        .pointer("/spec/install/spec/deployments")
        .and_then(|d| d.as_array())
        .unwrap()
    {
        let name = d["name"].as_str().unwrap();
        for v in ["get", "update", "patch", "delete"] {
            let g = (
                ns.into(),
                "apps".into(),
                "deployments".into(),
                name.into(),
                v.into(),
            );
            assert!(holds(&g), "{}: {g:?}", b.root.display());
        }
    }
    for key in ["permissions", "clusterPermissions"] {
        let perms = csv
            .pointer(&format!("/spec/install/spec/{key}"))
            .and_then(|p| p.as_array());
        for p in perms.into_iter().flatten() {
            let rules: Vec<PolicyRule> = serde_json::from_value(p["rules"].clone()).unwrap();
            let mut want = BTreeSet::new();
            expand("", &rules, &mut want);
            for g in want {
                assert!(
                    have.contains(&g),
                    "{}: {key} rule not held: {g:?}",
                    b.root.display()
                );
            }
        }
    }
    let fin = (
        "".into(),
        "olm.operatorframework.io".into(),
        "clusterextensions/finalizers".into(),
        "ext".into(),
        "update".into(),
    );
    assert!(have.contains(&fin));
}

fn shape(bundle: &str) -> Option<(BundleDir, InstallerRbac)> {
    let b = shared(bundle)?;
    let rbac = installer_rbac(&b, &target("ext", "ext-system")).unwrap();
    check_common(&b, &rbac, "ext-system");
    Some((b, rbac))
}

#[test]
fn every_shared_bundle_gets_rbac_for_all_it_installs() {
    let root = repo().join("../shared/data/bundles");
    if !root.is_dir() {
        prerequisite::missing("../shared/data/bundles");
        return;
    }
    let mut n = 0;
    for repo_dir in ["certified-operators", "community-operators-prod"] {
        for pkg in std::fs::read_dir(root.join(repo_dir).join("operators"))
            .unwrap()
            .flatten()
        {
            for ver in std::fs::read_dir(pkg.path()).unwrap().flatten() {
                let b = BundleDir::load(&ver.path()).unwrap();
                if b.csvs().next().is_none() {
                    // jupyter-notebook-validator-operator: manifests at the root, no CSV found.
                    assert!(installer_rbac(&b, &target("ext", "ext-system")).is_err());
                    continue;
                }
                let rbac = installer_rbac(&b, &target("ext", "ext-system")).unwrap();
                check_common(&b, &rbac, "ext-system");
                n += 1;
            }
        }
    }
    assert_eq!(n, 19);
}

#[test]
fn permissions_only_become_one_generated_cluster_role() {
    // t8c: only namespaced `permissions`, promoted to a ClusterRole for AllNamespaces.
    let Some((_, rbac)) = shape("community-operators-prod/operators/t8c/7.16.0") else {
        return;
    };
    let name = generated_cluster_role(&rbac);
    assert!(
        name.starts_with("t8c-operator.v42.16.0-t8c-operator-") || name.len() == 63,
        "{name}"
    );
    assert!(grants(&rbac).contains(&(
        "".into(),
        "".into(),
        "namespaces".into(),
        "*".into(),
        "watch".into()
    )));
    assert!(
        rbac.roles
            .iter()
            .all(|r| r.metadata.namespace.as_deref() == Some("ext-system"))
    );
}

#[test]
fn cluster_permissions_and_several_deployments() {
    let Some((b, rbac)) =
        shape("community-operators-prod/operators/multicluster-operators-subscription/0.1.5")
    else {
        return;
    };
    let crds = b
        .manifests
        .iter()
        .filter(|m| m.kind() == "CustomResourceDefinition")
        .count();
    let have = grants(&rbac);
    let named_crds = have
        .iter()
        .filter(|g| g.2 == "customresourcedefinitions" && g.3 != "*" && g.4 == "get")
        .count();
    assert_eq!(named_crds, crds);
    let deployments = have
        .iter()
        .filter(|g| g.2 == "deployments" && g.3 != "*" && g.4 == "get" && g.0 == "ext-system")
        .count();
    assert!(deployments > 1, "{deployments}");
}

#[test]
fn extra_manifests_are_managed_by_name_in_the_install_namespace() {
    // eventing-kogito: a ClusterRole (whose rules the installer must hold), ConfigMaps, a Service.
    let Some((b, rbac)) = shape("community-operators-prod/operators/eventing-kogito/1.1.0") else {
        return;
    };
    let have = grants(&rbac);
    for m in &b.manifests {
        let (group, res, ns) = match m.kind() {
            "ConfigMap" => ("", "configmaps", "ext-system"),
            "Service" => ("", "services", "ext-system"),
            "ClusterRole" => ("rbac.authorization.k8s.io", "clusterroles", ""),
            _ => continue,
        };
        let g: Grant = (
            ns.into(),
            group.into(),
            res.into(),
            m.name().into(),
            "delete".into(),
        );
        assert!(
            have.contains(&g)
                || have.contains(&(
                    ns.into(),
                    group.into(),
                    res.into(),
                    "*".into(),
                    "delete".into()
                )),
            "{g:?}"
        );
        if m.kind() == "ClusterRole" {
            let rules: Vec<PolicyRule> = serde_json::from_value(m.object["rules"].clone()).unwrap();
            let mut want = BTreeSet::new();
            expand("", &rules, &mut want);
            assert!(
                want.is_subset(&have),
                "the shipped ClusterRole's rules are held"
            );
        }
    }
}

#[test]
fn webhooks_add_configurations_services_and_certificates() {
    let Some((_, rbac)) = shape("community-operators-prod/operators/observability-operator/0.0.22")
    else {
        return;
    };
    let have = grants(&rbac);
    let wh: Vec<_> = have
        .iter()
        .filter(|g| g.2.ends_with("webhookconfigurations") && g.3 != "*")
        .collect();
    assert!(!wh.is_empty(), "{have:#?}");
    assert!(
        have.iter()
            .any(|g| g.2 == "services" && g.3.ends_with("-service") && g.0 == "ext-system")
    );
    assert!(
        have.iter()
            .any(|g| g.1 == "cert-manager.io" && g.2 == "certificates")
    );
    // PodDisruptionBudget is an OLM v0 extra OLM v1 refuses: said, not hidden.
    assert!(
        rbac.notes.iter().any(|n| n.contains("PodDisruptionBudget")),
        "{:?}",
        rbac.notes
    );
    // A RoleBinding to a role the bundle does not ship: `bind` on it instead of its rules.
    assert!(have.iter().any(|g| g.4 == "bind"), "{have:#?}");
}

#[test]
fn bundle_roles_and_bindings_are_held_where_they_go() {
    // stackgres: ClusterRoles, a ClusterRoleBinding and Roles among the manifests.
    let Some((b, rbac)) = shape("community-operators-prod/operators/stackgres-community/1.18.8")
    else {
        return;
    };
    let have = grants(&rbac);
    for m in b.manifests.iter().filter(|m| m.kind() == "Role") {
        let rules: Vec<PolicyRule> =
            serde_json::from_value(m.object["rules"].clone()).unwrap_or_default();
        let mut want = BTreeSet::new();
        expand("ext-system", &rules, &mut want);
        assert!(
            want.is_subset(&have),
            "Role {} rules held in the install namespace",
            m.name()
        );
    }
}

#[test]
fn single_namespace_installs_get_roles_in_the_watched_namespace() {
    let b = BundleDir::load(&repo().join("bundle")).unwrap();
    let mut t = target("rw", "rw-system");
    t.watch_namespace = Some("rw-watch".into());
    let rbac = installer_rbac(&b, &t).unwrap();
    let have = grants(&rbac);
    assert!(have.iter().any(|g| g.0 == "rw-watch"
        && g.2 == "roles"
        && g.3.starts_with("reverse-words-oper")
        && g.4 == "delete"));
    assert!(have.contains(&(
        "rw-watch".into(),
        "apps.linuxera.org".into(),
        "reversewordsapps".into(),
        "*".into(),
        "watch".into()
    )));
    assert!(!have.iter().any(|g| g.2 == "clusterroles" && g.3 != "*"));
}

#[test]
fn a_bundle_with_two_csvs_is_refused_naming_both_files() {
    let mut bundle = BundleDir::load(&repo().join("bundle")).unwrap();
    let mut copy = bundle
        .manifests
        .iter()
        .find(|m| m.kind() == "ClusterServiceVersion")
        .unwrap()
        .clone();
    copy.file = PathBuf::from("manifests/copy.clusterserviceversion.yaml");
    bundle.manifests.push(copy);
    let err = installer_rbac(&bundle, &target("rw", "rw-system"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("manifests/reverse-words-operator.clusterserviceversion.yaml")
            && err.contains("manifests/copy.clusterserviceversion.yaml"),
        "{err}"
    );
}
