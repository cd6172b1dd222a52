//! `uninstall --olm-v1`: the ClusterExtension first (operator-controller removes what it
//! installed), then what install created for it, when it is ours.

use super::*;
use crate::deploy::flow::{delete_and_record, delete_if_ours};

/// What `uninstall --olm-v1` did, in order: the same record as OLM v0's uninstall.
pub type V1UninstallOutcome = crate::deploy::flow::UninstallOutcome;

/// Removes the ClusterExtension `spec.extension` and waits until it is gone (operator-controller
/// deletes the operator, its CRDs and RBAC with it), then the installer RBAC, ServiceAccount,
/// ClusterCatalog (unless another ClusterExtension pins it) and namespace that olm created.
pub async fn uninstall(
    client: &Client,
    spec: &V1Names,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<V1UninstallOutcome, FlowError> {
    let wopts = wait_options(opts);
    progress.step("Checking that OLM v1 is installed");
    check_olmv1(client).await?;
    progress.done("olm.operatorframework.io/v1 found");
    let mut out = V1UninstallOutcome::default();
    let ce_api: Api<ClusterExtension> = Api::all(client.clone());
    let ext = &spec.extension;
    let existing = ce_api
        .get_opt(ext)
        .await
        .map_err(api_err(format!("ClusterExtension {ext}")))?;
    // What the extension used, so a re-run after a partial uninstall still cleans up.
    let (namespace, account, catalog) = match &existing {
        Some(ce) => (
            ce.spec.namespace.clone(),
            ce.spec.service_account.name.clone(),
            ce.pinned_catalog()
                .map_or_else(|| spec.catalog.clone(), str::to_string),
        ),
        None => (
            spec.namespace.clone(),
            spec.service_account.clone(),
            spec.catalog.clone(),
        ),
    };
    delete_and_record(
        &ce_api,
        ext,
        &format!("ClusterExtension {ext}"),
        &wopts,
        progress,
        &mut out,
    )
    .await?;

    let installer = format!("{ext}-installer");
    for name in [installer.clone(), format!("{ext}-installer-grants")] {
        let api: Api<ClusterRoleBinding> = Api::all(client.clone());
        delete_if_ours(
            &api,
            &name,
            "ClusterRoleBinding",
            "",
            &wopts,
            progress,
            &mut out,
        )
        .await?;
        let api: Api<ClusterRole> = Api::all(client.clone());
        delete_if_ours(&api, &name, "ClusterRole", "", &wopts, progress, &mut out).await?;
    }
    let rb_api: Api<RoleBinding> = Api::all(client.clone());
    let mut namespaced: Vec<String> = rb_api
        .list(&ListParams::default())
        .await
        .map_err(api_err("listing RoleBindings"))?
        .items
        .into_iter()
        .filter(|rb| rb.metadata.name.as_deref() == Some(installer.as_str()) && ours(&rb.metadata))
        .filter_map(|rb| rb.metadata.namespace)
        .collect();
    namespaced.sort();
    for ns in namespaced {
        let api: Api<RoleBinding> = Api::namespaced(client.clone(), &ns);
        delete_if_ours(
            &api,
            &installer,
            "RoleBinding",
            &ns,
            &wopts,
            progress,
            &mut out,
        )
        .await?;
        let api: Api<Role> = Api::namespaced(client.clone(), &ns);
        delete_if_ours(&api, &installer, "Role", &ns, &wopts, progress, &mut out).await?;
    }
    let sa_api: Api<ServiceAccount> = Api::namespaced(client.clone(), &namespace);
    delete_if_ours(
        &sa_api,
        &account,
        "ServiceAccount",
        &namespace,
        &wopts,
        progress,
        &mut out,
    )
    .await?;

    let others: Vec<String> = ce_api
        .list(&ListParams::default())
        .await
        .map_err(api_err("listing ClusterExtensions"))?
        .items
        .into_iter()
        .filter(|ce| {
            ce.metadata.name.as_deref() != Some(ext.as_str())
                && ce.pinned_catalog() == Some(catalog.as_str())
        })
        .filter_map(|ce| ce.metadata.name)
        .collect();
    let cc_api: Api<ClusterCatalog> = Api::all(client.clone());
    if others.is_empty() {
        delete_if_ours(
            &cc_api,
            &catalog,
            "ClusterCatalog",
            "",
            &wopts,
            progress,
            &mut out,
        )
        .await?;
    } else {
        out.kept.push(format!(
            "ClusterCatalog {catalog} (still used by {})",
            others.join(", ")
        ));
    }
    let ns_api: Api<Namespace> = Api::all(client.clone());
    delete_if_ours(
        &ns_api,
        &namespace,
        "Namespace",
        "",
        &wopts,
        progress,
        &mut out,
    )
    .await?;
    if existing.is_none() && out.deleted.is_empty() {
        // Nothing of that name was ever here: most likely a mistyped --extension-name.
        return Err(FlowError::NoExtension { name: ext.clone() });
    }
    Ok(out)
}
