//! `uninstall`: remove what `install` created, in dependency order.

use super::*;

/// What `uninstall` should remove beyond the Subscription and CSV.
#[derive(Debug, Clone, Default)]
pub struct UninstallSpec {
    pub package: String,
    pub namespace: String,
    /// Also delete the CRDs the CSV owns (and with them every custom resource of those kinds).
    pub delete_crds: bool,
    /// Also delete the namespace's OperatorGroup when no other Subscription remains.
    pub delete_operator_group: bool,
}

/// What `uninstall` did, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UninstallOutcome {
    pub deleted: Vec<String>,
    pub kept: Vec<String>,
}

impl UninstallOutcome {
    /// `headline`, then a line per object deleted and kept.
    pub fn summary(&self, headline: &str) -> String {
        let mut s = format!("{headline}\n");
        for d in &self.deleted {
            s.push_str(&format!("  deleted {d}\n"));
        }
        for k in &self.kept {
            s.push_str(&format!("  kept {k}\n"));
        }
        s
    }
}

/// Removes what install created, in dependency order, waiting for each deletion: the
/// Subscription first (so OLM does not reinstall), then the CSV (OLM removes the operator's
/// Deployment and RBAC with it), then optionally the owned CRDs, then our CatalogSource when no
/// other Subscription uses it, then optionally the OperatorGroup.
pub async fn uninstall(
    client: &Client,
    spec: &UninstallSpec,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<UninstallOutcome, FlowError> {
    objects::check_dns_label("--namespace", &spec.namespace)?;
    let wopts = WaitOptions::new(opts.timeout, opts.interval);
    let ns = spec.namespace.as_str();
    progress.step("Checking that OLM is installed");
    check_olm(client).await?;
    progress.done("OLM APIs found");

    let sub = find_subscription(client, ns, &spec.package)
        .await?
        .ok_or_else(|| FlowError::NotInstalled {
            package: spec.package.clone(),
            namespace: ns.to_string(),
        })?;
    let sub_name = sub.metadata.name.clone().unwrap_or_default();
    let status = sub.status.clone().unwrap_or_default();
    let csv = status.installed_csv.or(status.current_csv);
    let csv_api: Api<ClusterServiceVersion> = Api::namespaced(client.clone(), ns);
    let mut out = UninstallOutcome::default();

    let mut crds = Vec::new();
    if spec.delete_crds
        && let Some(csv) = &csv
        && let Some(c) = csv_api
            .get_opt(csv)
            .await
            .map_err(api_err(format!("ClusterServiceVersion {ns}/{csv}")))?
    {
        crds = c
            .spec
            .customresourcedefinitions
            .map(|d| d.owned.into_iter().map(|o| o.name).collect())
            .unwrap_or_default();
        crds.sort();
        crds.dedup();
    }

    let sub_api: Api<Subscription> = Api::namespaced(client.clone(), ns);
    delete_step(
        &sub_api,
        &sub_name,
        "Subscription",
        ns,
        &wopts,
        progress,
        &mut out,
    )
    .await?;
    if let Some(csv) = &csv {
        delete_step(
            &csv_api,
            csv,
            "ClusterServiceVersion",
            ns,
            &wopts,
            progress,
            &mut out,
        )
        .await?;
    }
    let crd_api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in &crds {
        delete_step(
            &crd_api,
            crd,
            "CustomResourceDefinition",
            "",
            &wopts,
            progress,
            &mut out,
        )
        .await?;
    }

    let remaining: Vec<Subscription> = sub_api
        .list(&ListParams::default())
        .await
        .map_err(api_err(format!("listing Subscriptions in {ns}")))?
        .items
        .into_iter()
        .filter(|s| s.metadata.name.as_deref() != Some(sub_name.as_str()))
        .collect();

    let cat_ns = sub.spec.source_namespace.clone();
    let cat_name = sub.spec.source.clone();
    let cs_api: Api<CatalogSource> = Api::namespaced(client.clone(), &cat_ns);
    match cs_api
        .get_opt(&cat_name)
        .await
        .map_err(api_err(format!("CatalogSource {cat_ns}/{cat_name}")))?
    {
        Some(cs) if ours(&cs.metadata) => {
            let users: Vec<&str> = remaining
                .iter()
                .filter(|s| s.spec.source == cat_name && s.spec.source_namespace == cat_ns)
                .filter_map(|s| s.metadata.name.as_deref())
                .collect();
            if users.is_empty() {
                delete_step(
                    &cs_api,
                    &cat_name,
                    "CatalogSource",
                    &cat_ns,
                    &wopts,
                    progress,
                    &mut out,
                )
                .await?;
            } else {
                out.kept.push(format!(
                    "CatalogSource {cat_ns}/{cat_name} (still used by {})",
                    users.join(", ")
                ));
            }
        }
        Some(_) => out.kept.push(format!(
            "CatalogSource {cat_ns}/{cat_name} (not created by olm)"
        )),
        None => {}
    }

    if spec.delete_operator_group {
        let og_api: Api<OperatorGroup> = Api::namespaced(client.clone(), ns);
        let groups = og_api
            .list(&ListParams::default())
            .await
            .map_err(api_err(format!("listing OperatorGroups in {ns}")))?
            .items;
        for og in groups {
            let name = og.metadata.name.clone().unwrap_or_default();
            if remaining.is_empty() {
                delete_step(
                    &og_api,
                    &name,
                    "OperatorGroup",
                    ns,
                    &wopts,
                    progress,
                    &mut out,
                )
                .await?;
            } else {
                out.kept.push(format!(
                    "OperatorGroup {ns}/{name} (still used by Subscriptions {})",
                    remaining
                        .iter()
                        .filter_map(|s| s.metadata.name.as_deref())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    Ok(out)
}

async fn delete_step<K>(
    api: &Api<K>,
    name: &str,
    kind: &str,
    ns: &str,
    opts: &WaitOptions,
    progress: &mut dyn Progress,
    out: &mut UninstallOutcome,
) -> Result<(), FlowError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync,
{
    delete_and_record(api, name, &shown(kind, ns, name), opts, progress, out).await
}

/// `Kind name`, or `Kind ns/name` for a namespaced object.
fn shown(kind: &str, ns: &str, name: &str) -> String {
    match ns.is_empty() {
        true => format!("{kind} {name}"),
        false => format!("{kind} {ns}/{name}"),
    }
}

/// [`delete_step`] for an object that may not be ours: deleted when it exists and carries our
/// label, reported as kept when it is someone else's.
pub(crate) async fn delete_if_ours<K>(
    api: &Api<K>,
    name: &str,
    kind: &str,
    ns: &str,
    opts: &WaitOptions,
    progress: &mut dyn Progress,
    out: &mut UninstallOutcome,
) -> Result<(), FlowError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync,
{
    let what = shown(kind, ns, name);
    match api.get_opt(name).await.map_err(api_err(&what))? {
        None => Ok(()),
        Some(o) if ours(o.meta()) => delete_and_record(api, name, &what, opts, progress, out).await,
        Some(_) => {
            out.kept.push(format!("{what} (not created by olm)"));
            Ok(())
        }
    }
}

/// Deletes `name` (shown as `what`) and waits until it is gone, recording it as deleted
/// unless it was already gone. Both OLM v0's and OLM v1's uninstall go through here.
pub(crate) async fn delete_and_record<K>(
    api: &Api<K>,
    name: &str,
    what: &str,
    opts: &WaitOptions,
    progress: &mut dyn Progress,
    out: &mut UninstallOutcome,
) -> Result<(), FlowError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + Sync,
{
    progress.step(&format!("Deleting {what}"));
    let deleted = wait::delete_and_wait(api, name, what, opts, &mut |s| progress.update(s))
        .await
        .map_err(|source| FlowError::Wait {
            source,
            diagnostics: Vec::new(),
        })?;
    progress.done(if deleted { "deleted" } else { "already gone" });
    if deleted {
        out.deleted.push(what.to_string());
    }
    Ok(())
}
