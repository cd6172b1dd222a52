//! `install`: namespace, CatalogSource, OperatorGroup and Subscription, each created or
//! reused, then the waits.

use super::*;

async fn ensure_namespace(client: &Client, spec: &InstallSpec) -> Result<Action, FlowError> {
    let api: Api<Namespace> = Api::all(client.clone());
    let what = format!("namespace {}", spec.namespace);
    if api
        .get_opt(&spec.namespace)
        .await
        .map_err(api_err(&what))?
        .is_some()
    {
        return Ok(Action::Reused);
    }
    api.create(&PostParams::default(), &objects::namespace(spec))
        .await
        .map_err(api_err(format!("creating {what}")))?;
    Ok(Action::Created)
}

async fn ensure_catalog_source(client: &Client, spec: &InstallSpec) -> Result<Action, FlowError> {
    let api: Api<CatalogSource> = Api::namespaced(client.clone(), &spec.namespace);
    let name = &spec.catalog.name;
    let what = format!("CatalogSource {}/{name}", spec.namespace);
    let serving = &spec.catalog.serving;
    match api.get_opt(name).await.map_err(api_err(&what))? {
        None => {
            api.create(&PostParams::default(), &objects::catalog_source(spec))
                .await
                .map_err(api_err(format!("creating {what}")))?;
            Ok(Action::Created)
        }
        Some(cs) if serves(&cs, serving) => Ok(Action::Reused),
        Some(cs) if ours(&cs.metadata) => {
            api.patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(&serving_patch(serving)),
            )
            .await
            .map_err(api_err(format!("updating the catalog of {what}")))?;
            Ok(Action::Updated)
        }
        Some(cs) => Err(FlowError::Conflict(format!(
            "{what} already exists serving {}, not {}, and was not created by olm; \
             pass --catalog-name to use another name",
            describe_source(&cs),
            serving.describe()
        ))),
    }
}

fn describe_group(og: &OperatorGroup) -> String {
    let name = og.metadata.name.clone().unwrap_or_default();
    match (&og.spec.selector, &og.spec.target_namespaces) {
        (Some(_), _) => format!("{name} (namespace selector)"),
        (None, Some(t)) if t.iter().any(|n| !n.is_empty()) => {
            format!("{name} (targets {})", t.join(", "))
        }
        _ => format!("{name} (AllNamespaces)"),
    }
}

/// Reuses the namespace's OperatorGroup when it selects the namespaces the install mode needs;
/// creates one when there is none. OLM refuses to install into a namespace with two groups, so
/// we never create a second one.
async fn ensure_operator_group(
    client: &Client,
    spec: &InstallSpec,
) -> Result<(String, Action), FlowError> {
    let api: Api<OperatorGroup> = Api::namespaced(client.clone(), &spec.namespace);
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(api_err(format!(
            "listing OperatorGroups in {}",
            spec.namespace
        )))?;
    match list.items.as_slice() {
        [] => {
            api.create(&PostParams::default(), &objects::operator_group(spec))
                .await
                .map_err(api_err(format!(
                    "creating OperatorGroup {}/{}",
                    spec.namespace, spec.operator_group_name
                )))?;
            Ok((spec.operator_group_name.clone(), Action::Created))
        }
        [og] if spec.targets.matches(&og.spec) => {
            Ok((og.metadata.name.clone().unwrap_or_default(), Action::Reused))
        }
        [og] => Err(FlowError::Conflict(format!(
            "namespace {} already has OperatorGroup {}, which does not fit install mode {}{}; \
             choose the matching --install-mode or install into another namespace \
             (a namespace can hold only one OperatorGroup)",
            spec.namespace,
            describe_group(og),
            spec.mode,
            spec.targets
                .namespaces()
                .map(|t| format!(" (targets {})", t.join(", ")))
                .unwrap_or_default()
        ))),
        many => Err(FlowError::Conflict(format!(
            "namespace {} has {} OperatorGroups ({}); OLM installs nothing there until only one \
             remains",
            spec.namespace,
            many.len(),
            many.iter()
                .map(describe_group)
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

async fn ensure_subscription(
    client: &Client,
    spec: &InstallSpec,
) -> Result<(String, Action), FlowError> {
    if let Some(existing) = find_subscription(client, &spec.namespace, &spec.package).await? {
        let name = existing.metadata.name.clone().unwrap_or_default();
        let same_source = existing.spec.source == spec.catalog.name
            && existing.spec.source_namespace == spec.namespace;
        if !same_source {
            return Err(FlowError::Conflict(format!(
                "package {} is already subscribed in {} by Subscription {name} from \
                 CatalogSource {}/{}; run `olm uninstall {}` first or `olm upgrade` to move it",
                spec.package,
                spec.namespace,
                existing.spec.source_namespace,
                existing.spec.source,
                spec.package
            )));
        }
        if spec.channel.is_some() && existing.spec.channel != spec.channel {
            return Err(FlowError::Conflict(format!(
                "Subscription {}/{name} follows channel {:?}, not {:?}; use `olm upgrade {} \
                 --channel ...` to switch",
                spec.namespace,
                existing.spec.channel.unwrap_or_default(),
                spec.channel.clone().unwrap_or_default(),
                spec.package
            )));
        }
        return Ok((name, Action::Reused));
    }
    let api: Api<Subscription> = Api::namespaced(client.clone(), &spec.namespace);
    api.create(&PostParams::default(), &objects::subscription(spec))
        .await
        .map_err(api_err(format!(
            "creating Subscription {}/{}",
            spec.namespace, spec.package
        )))?;
    Ok((spec.package.clone(), Action::Created))
}

/// Installs a package through a Subscription: namespace, CatalogSource, OperatorGroup and
/// Subscription (each created or reused), then waits for the catalog, the InstallPlan
/// (approving it when `approve` and the approval is Manual) and the CSV.
pub async fn install(
    client: &Client,
    spec: &InstallSpec,
    approve: bool,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<InstallOutcome, FlowError> {
    spec.validate()?;
    let wait_opts = WaitOptions::new(opts.timeout, opts.interval);
    progress.step("Checking that OLM is installed");
    check_olm(client).await?;
    progress.done("OLM APIs found");

    progress.step(&format!("Namespace {}", spec.namespace));
    let a = ensure_namespace(client, spec).await?;
    progress.done(a.as_str());

    progress.step(&format!(
        "CatalogSource {}/{} ({})",
        spec.namespace,
        spec.catalog.name,
        spec.catalog.serving.describe()
    ));
    let cs_action = ensure_catalog_source(client, spec).await?;
    progress.done(cs_action.as_str());

    progress.step(&format!("OperatorGroup for {}", spec.mode));
    let (og, og_action) = ensure_operator_group(client, spec).await?;
    progress.done(&format!("{} {og}", og_action.as_str()));

    progress.step(&format!("Subscription to {}", spec.package));
    let (sub, sub_action) = ensure_subscription(client, spec).await?;
    progress.done(&format!("{} {sub}", sub_action.as_str()));

    let mut w = Waiter {
        client,
        namespace: &spec.namespace,
        opts: wait_opts,
        progress,
        install_plan: None,
        csv: None,
    };
    let (install_plan, csv, pending_approval) = follow_subscription(
        &mut w,
        (&spec.namespace, &spec.catalog.name),
        &sub,
        None,
        approve,
    )
    .await?;
    Ok(InstallOutcome {
        namespace: spec.namespace.clone(),
        catalog_source: (spec.catalog.name.clone(), cs_action),
        operator_group: (og, og_action),
        subscription: (sub, sub_action),
        install_plan,
        csv,
        pending_approval,
    })
}
