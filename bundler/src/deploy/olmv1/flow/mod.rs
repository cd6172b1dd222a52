//! OLM v1 against a cluster: the ClusterCatalog, the installer's namespace, ServiceAccount and
//! RBAC, the ClusterExtension, and the waits on their conditions.
//!
//! operator-controller never gives up on a ClusterExtension: a failed install stays partly
//! applied and is retried (`Progressing=True/Retrying`). So a wait here ends on `Installed=True`
//! (and, since the standard Helm runtime does not wait for workloads, on the operator's
//! Deployments being Available), on a permission error (which only a change of RBAC fixes;
//! it is shown in full, with the hint), or at the deadline with what the cluster says.
//!
//! One module per flow ([`install()`] with [`upgrade()`], [`status()`], [`uninstall()`]); this
//! file holds what they share.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde::Serialize;
use serde_json::json;

use super::objects::{self, ExtensionSpec, V1Names};
use super::rbac::InstallerRbac;
use super::types::{ClusterCatalog, ClusterExtension, Condition, condition};
use crate::deploy::flow::{Action, FlowError, FlowOptions, Progress, api_err, ours};
use crate::deploy::wait::{self, Check, WaitError, WaitOptions};

mod install;
mod status;
mod uninstall;

pub use install::{V1InstallOutcome, V1UpgradeOutcome, V1UpgradeSpec, install, upgrade};
pub use status::{V1CatalogState, V1DeploymentState, V1Status, status};
pub use uninstall::{V1UninstallOutcome, uninstall};

/// Labels operator-controller puts on every object it renders from a bundle.
pub const OWNER_KIND_LABEL: &str = "olm.operatorframework.io/owner-kind";
pub const OWNER_NAME_LABEL: &str = "olm.operatorframework.io/owner-name";

/// Texts of operator-controller (and the API server) that mean the installer ServiceAccount
/// lacks permissions.
const PERMISSION_ERRORS: [&str; 3] = [
    "pre-authorization failed",
    "is forbidden",
    "attempting to grant RBAC permissions not currently held",
];

/// Whether a condition message says the installer lacks permissions.
pub fn is_permission_error(message: &str) -> bool {
    PERMISSION_ERRORS.iter().any(|p| message.contains(p))
}

/// Checks that OLM v1's API group is served.
pub async fn check_olmv1(client: &Client) -> Result<(), FlowError> {
    let gv = "olm.operatorframework.io/v1";
    let wanted = ["clustercatalogs", "clusterextensions"];
    let missing: Vec<String> = match client.list_api_group_resources(gv).await {
        Ok(list) => wanted
            .iter()
            .filter(|r| !list.resources.iter().any(|x| x.name == **r))
            .map(|r| format!("{r}.{gv}"))
            .collect(),
        Err(kube::Error::Api(s)) if s.code == 404 => {
            wanted.iter().map(|r| format!("{r}.{gv}")).collect()
        }
        Err(e) => return Err(api_err(format!("discovering {gv}"))(e)),
    };
    if missing.is_empty() {
        Ok(())
    } else {
        Err(FlowError::OlmV1Missing { missing })
    }
}

/// `Type=Status/Reason: message` for messages.
pub fn describe(c: &Condition) -> String {
    if c.message.is_empty() {
        format!("{}={}/{}", c.type_, c.status, c.reason)
    } else {
        format!("{}={}/{}: {}", c.type_, c.status, c.reason, c.message)
    }
}

/// Creates `obj` or, when it exists and is ours, merge-patches it to `obj`; a foreign object
/// of that name is left alone and reused (the user made it on purpose).
async fn apply<K>(api: &Api<K>, name: &str, what: &str, obj: &K) -> Result<Action, FlowError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + Serialize + std::fmt::Debug,
{
    match api.get_opt(name).await.map_err(api_err(what))? {
        None => {
            api.create(&PostParams::default(), obj)
                .await
                .map_err(api_err(format!("creating {what}")))?;
            Ok(Action::Created)
        }
        Some(existing) if ours(existing.meta()) => {
            api.patch(name, &PatchParams::default(), &Patch::Merge(obj))
                .await
                .map_err(api_err(format!("updating {what}")))?;
            Ok(Action::Updated)
        }
        Some(_) => Ok(Action::Reused),
    }
}

/// Applies the installer's RBAC; returns one `kind name: action` line per object.
async fn apply_rbac(client: &Client, rbac: &InstallerRbac) -> Result<Vec<String>, FlowError> {
    let mut done = Vec::new();
    let name = |m: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta| {
        m.name.clone().unwrap_or_default()
    };
    let api: Api<ClusterRole> = Api::all(client.clone());
    for o in &rbac.cluster_roles {
        let n = name(&o.metadata);
        let a = apply(&api, &n, &format!("ClusterRole {n}"), o).await?;
        done.push(format!("ClusterRole {n} {}", a.as_str()));
    }
    let api: Api<ClusterRoleBinding> = Api::all(client.clone());
    for o in &rbac.cluster_role_bindings {
        let n = name(&o.metadata);
        let a = apply(&api, &n, &format!("ClusterRoleBinding {n}"), o).await?;
        done.push(format!("ClusterRoleBinding {n} {}", a.as_str()));
    }
    for o in &rbac.roles {
        let (n, ns) = (
            name(&o.metadata),
            o.metadata.namespace.clone().unwrap_or_default(),
        );
        let api: Api<Role> = Api::namespaced(client.clone(), &ns);
        let a = apply(&api, &n, &format!("Role {ns}/{n}"), o).await?;
        done.push(format!("Role {ns}/{n} {}", a.as_str()));
    }
    for o in &rbac.role_bindings {
        let (n, ns) = (
            name(&o.metadata),
            o.metadata.namespace.clone().unwrap_or_default(),
        );
        let api: Api<RoleBinding> = Api::namespaced(client.clone(), &ns);
        let a = apply(&api, &n, &format!("RoleBinding {ns}/{n}"), o).await?;
        done.push(format!("RoleBinding {ns}/{n} {}", a.as_str()));
    }
    Ok(done)
}

/// Waits for the ClusterCatalog to serve its content (`Serving=True`); `Progressing=Retrying`
/// (an image that cannot be pulled or has no FBC label) shows as the state.
async fn catalog_serving(
    api: &Api<ClusterCatalog>,
    name: &str,
    opts: &WaitOptions,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(), WaitError> {
    wait::poll(
        api,
        name,
        &format!("ClusterCatalog {name} to serve"),
        opts,
        progress,
        |cc| {
            let Some(cc) = cc else {
                return Check::Failed("the ClusterCatalog was deleted".into());
            };
            let conds = cc.conditions();
            match (condition(conds, "Serving"), condition(conds, "Progressing")) {
                (Some(s), _) if s.status == "True" => Check::Ready(()),
                (_, Some(p)) if !p.message.is_empty() => Check::Pending(describe(p)),
                (Some(s), _) => Check::Pending(describe(s)),
                _ => Check::Pending("no conditions yet".into()),
            }
        },
    )
    .await
}

/// Waits for `Installed=True` at the extension's current generation. A permission error ends
/// the wait (operator-controller retries, but only new RBAC can fix it), as does
/// `Progressing=False/Blocked`; other `Retrying` messages show as the state.
async fn extension_installed(
    api: &Api<ClusterExtension>,
    name: &str,
    opts: &WaitOptions,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(String, String), WaitError> {
    wait::poll(
        api,
        name,
        &format!("ClusterExtension {name} to be installed"),
        opts,
        progress,
        |ce| {
            let Some(ce) = ce else {
                return Check::Failed("the ClusterExtension was deleted".into());
            };
            let conds = ce.conditions();
            let generation = ce.metadata.generation;
            let current = |c: &Condition| match (c.observed_generation, generation) {
                (Some(o), Some(g)) => o >= g,
                _ => true,
            };
            let installed = condition(conds, "Installed");
            let progressing = condition(conds, "Progressing");
            if let Some(p) = progressing
                && p.status == "True"
                && p.reason == "Retrying"
                && is_permission_error(&p.message)
            {
                return Check::Failed(describe(p));
            }
            if let Some(p) = progressing
                && p.status == "False"
                && p.reason == "Blocked"
            {
                return Check::Failed(describe(p));
            }
            match (installed, ce.installed_bundle()) {
                (Some(i), Some(b))
                    if i.status == "True"
                        && current(i)
                        && progressing.is_none_or(|p| p.reason != "Retrying") =>
                {
                    Check::Ready((b.name.clone(), b.version.clone()))
                }
                _ => match (progressing, installed) {
                    (Some(p), _) if !p.message.is_empty() && p.reason != "Succeeded" => {
                        Check::Pending(describe(p))
                    }
                    (_, Some(i)) => Check::Pending(describe(i)),
                    _ => Check::Pending("no conditions yet".into()),
                },
            }
        },
    )
    .await
}

/// The Deployments operator-controller made for the extension (by its owner labels).
async fn owned_deployments(
    client: &Client,
    spec_ns: &str,
    extension: &str,
) -> Result<Vec<Deployment>, kube::Error> {
    let api: Api<Deployment> = Api::namespaced(client.clone(), spec_ns);
    let lp = ListParams::default().labels(&format!(
        "{OWNER_KIND_LABEL}=ClusterExtension,{OWNER_NAME_LABEL}={extension}"
    ));
    Ok(api.list(&lp).await?.items)
}

fn deployment_available(d: &Deployment) -> bool {
    d.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Available" && c.status == "True")
        })
}

/// Waits until every Deployment of the extension is Available (the Helm runtime reports
/// `Installed=True` before the operator's pods run).
async fn deployments_available(
    client: &Client,
    namespace: &str,
    extension: &str,
    opts: &WaitOptions,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<Vec<String>, WaitError> {
    let mut last = String::new();
    loop {
        let deps = owned_deployments(client, namespace, extension)
            .await
            .map_err(|source| WaitError::Api {
                what: format!("listing Deployments in {namespace}"),
                source,
            })?;
        let waiting: Vec<String> = deps
            .iter()
            .filter(|d| !deployment_available(d))
            .map(|d| d.metadata.name.clone().unwrap_or_default())
            .collect();
        if !deps.is_empty() && waiting.is_empty() {
            return Ok(deps
                .iter()
                .filter_map(|d| d.metadata.name.clone())
                .collect());
        }
        let state = if deps.is_empty() {
            "no Deployment of the extension yet".to_string()
        } else {
            format!("not Available yet: {}", waiting.join(", "))
        };
        if state != last {
            progress(&state);
            last = state;
        }
        let now = tokio::time::Instant::now();
        if now >= opts.deadline {
            return Err(WaitError::Timeout {
                what: format!("the Deployments of {extension} in {namespace} to be Available"),
                last,
                timeout: opts.timeout,
            });
        }
        tokio::time::sleep(opts.interval.min(opts.deadline - now)).await;
    }
}

/// What the cluster says about a failed OLM v1 install: the catalog's and the extension's
/// conditions, the installed bundle, the Deployments' conditions, recent events in the install
/// namespace, and what to do about permission errors. Best effort: a failed read is skipped.
pub async fn diagnose(client: &Client, spec: &V1Names) -> Vec<String> {
    let mut out = Vec::new();
    let cc_api: Api<ClusterCatalog> = Api::all(client.clone());
    if let Ok(Some(cc)) = cc_api.get_opt(&spec.catalog).await {
        out.push(format!("ClusterCatalog {}:", spec.catalog));
        out.extend(cc.conditions().iter().map(|c| format!("  {}", describe(c))));
    }
    let ce_api: Api<ClusterExtension> = Api::all(client.clone());
    let mut permission = false;
    if let Ok(Some(ce)) = ce_api.get_opt(&spec.extension).await {
        out.push(format!("ClusterExtension {}:", spec.extension));
        for c in ce.conditions() {
            permission |= is_permission_error(&c.message);
            out.push(format!("  {}", describe(c)));
        }
        if let Some(b) = ce.installed_bundle() {
            out.push(format!("  installed bundle {} ({})", b.name, b.version));
        }
        out.push(
            "the install is left partly applied: operator-controller keeps retrying it; \
             fix the cause and it continues, or `olm uninstall --olm-v1` removes it"
                .into(),
        );
    }
    if permission {
        out.push(format!(
            "hint: ServiceAccount {}/{} lacks permissions; apply the least-privilege RBAC \
             `olm deploy generate --bundle <dir>` writes to deploy/olmv1/rbac.yaml, or pass \
             --bundle-dir to `olm install --olm-v1`",
            spec.namespace, spec.service_account
        ));
    }
    if let Ok(deps) = owned_deployments(client, &spec.namespace, &spec.extension).await {
        for d in deps {
            let name = d.metadata.name.clone().unwrap_or_default();
            for c in d.status.and_then(|s| s.conditions).unwrap_or_default() {
                out.push(format!(
                    "Deployment {name}: {}={} {}",
                    c.type_,
                    c.status,
                    c.message.unwrap_or_default()
                ));
            }
        }
    }
    out.extend(crate::deploy::flow::recent_events(client, &spec.namespace).await);
    out
}

/// Namespace and ServiceAccount of the installer, each created when absent.
async fn ensure_account(
    client: &Client,
    spec: &ExtensionSpec,
) -> Result<(Action, Action), FlowError> {
    let ns_api: Api<Namespace> = Api::all(client.clone());
    let what = format!("namespace {}", spec.namespace);
    let ns_action = if ns_api
        .get_opt(&spec.namespace)
        .await
        .map_err(api_err(&what))?
        .is_some()
    {
        Action::Reused
    } else {
        ns_api
            .create(&PostParams::default(), &objects::namespace(spec))
            .await
            .map_err(api_err(format!("creating {what}")))?;
        Action::Created
    };
    let sa_api: Api<ServiceAccount> = Api::namespaced(client.clone(), &spec.namespace);
    let what = format!("ServiceAccount {}/{}", spec.namespace, spec.service_account);
    let sa_action = if sa_api
        .get_opt(&spec.service_account)
        .await
        .map_err(api_err(&what))?
        .is_some()
    {
        Action::Reused
    } else {
        sa_api
            .create(&PostParams::default(), &objects::service_account(spec))
            .await
            .map_err(api_err(format!("creating {what}")))?;
        Action::Created
    };
    Ok((ns_action, sa_action))
}

/// Timing shared by the flows.
fn wait_options(opts: FlowOptions) -> WaitOptions {
    WaitOptions::new(opts.timeout, opts.interval)
}
