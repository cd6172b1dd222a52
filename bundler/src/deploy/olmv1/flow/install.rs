//! `install --olm-v1` and `upgrade --olm-v1`.

use super::*;

/// The result of [`install()`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct V1InstallOutcome {
    pub extension: String,
    pub namespace: String,
    pub catalog: (String, Action),
    pub service_account: (String, Action),
    /// One line per RBAC object applied (empty when no RBAC was given).
    pub rbac: Vec<String>,
    /// `status.install.bundle`: name and version.
    pub bundle: (String, String),
    pub deployments: Vec<String>,
}

/// Creates the ClusterCatalog, or points ours at the image; a foreign one with another image
/// is a conflict.
async fn ensure_catalog(client: &Client, spec: &ExtensionSpec) -> Result<Action, FlowError> {
    let api: Api<ClusterCatalog> = Api::all(client.clone());
    let name = &spec.catalog.name;
    let what = format!("ClusterCatalog {name}");
    let want = objects::cluster_catalog(spec);
    match api.get_opt(name).await.map_err(api_err(&what))? {
        None => {
            api.create(&PostParams::default(), &want)
                .await
                .map_err(api_err(format!("creating {what}")))?;
            Ok(Action::Created)
        }
        Some(cc) if cc.spec.source == want.spec.source => Ok(Action::Reused),
        Some(cc) if ours(&cc.metadata) => {
            let patch = json!({"spec": {"source": want.spec.source}});
            api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(api_err(format!("updating {what}")))?;
            Ok(Action::Updated)
        }
        Some(cc) => Err(FlowError::Conflict(format!(
            "{what} already exists serving {}, not {}, and was not created by olm; \
             pass --catalog-name to use another name",
            cc.spec.source.image.map(|i| i.ref_).unwrap_or_default(),
            spec.catalog.image
        ))),
    }
}

/// Runs one wait as a progress step; a failure carries [`diagnose`]'s lines.
async fn step<T>(
    client: &Client,
    spec: &ExtensionSpec,
    progress: &mut dyn Progress,
    title: &str,
    fut: impl AsyncFnOnce(&mut (dyn FnMut(&str) + Send)) -> Result<T, WaitError>,
) -> Result<T, FlowError> {
    progress.step(title);
    let r = {
        let mut update = |s: &str| progress.update(s);
        fut(&mut update).await
    };
    match r {
        Ok(v) => Ok(v),
        Err(source) => Err(FlowError::Wait {
            source,
            diagnostics: diagnose(client, spec).await,
        }),
    }
}

/// Installs through OLM v1: ClusterCatalog (waits until it serves), namespace, installer
/// ServiceAccount and, when given, its RBAC, then the ClusterExtension; waits for
/// `Installed=True` and for the extension's Deployments to be Available.
pub async fn install(
    client: &Client,
    spec: &ExtensionSpec,
    rbac: Option<&InstallerRbac>,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<V1InstallOutcome, FlowError> {
    spec.validate()?;
    let wopts = wait_options(opts);
    progress.step("Checking that OLM v1 is installed");
    check_olmv1(client).await?;
    progress.done("olm.operatorframework.io/v1 found");

    progress.step(&format!(
        "ClusterCatalog {} (image {})",
        spec.catalog.name, spec.catalog.image
    ));
    let cat = ensure_catalog(client, spec).await?;
    progress.done(cat.as_str());
    let cc_api: Api<ClusterCatalog> = Api::all(client.clone());
    let name = spec.catalog.name.clone();
    step(
        client,
        spec,
        progress,
        &format!("Waiting for ClusterCatalog {name} to serve"),
        async |p| catalog_serving(&cc_api, &name, &wopts, p).await,
    )
    .await?;
    progress.done("Serving");

    progress.step(&format!(
        "Namespace {} and ServiceAccount {}",
        spec.namespace, spec.service_account
    ));
    let (ns_action, sa_action) = ensure_account(client, spec).await?;
    progress.done(&format!(
        "namespace {}, ServiceAccount {}",
        ns_action.as_str(),
        sa_action.as_str()
    ));

    let mut rbac_lines = Vec::new();
    if let Some(rbac) = rbac {
        progress.step("Installer RBAC");
        rbac_lines = apply_rbac(client, rbac).await?;
        progress.done(&format!("{} objects applied", rbac_lines.len()));
    }

    progress.step(&format!(
        "ClusterExtension {} ({})",
        spec.name, spec.package
    ));
    let ce_api: Api<ClusterExtension> = Api::all(client.clone());
    let what = format!("ClusterExtension {}", spec.name);
    let ce_action = match ce_api.get_opt(&spec.name).await.map_err(api_err(&what))? {
        None => {
            ce_api
                .create(&PostParams::default(), &objects::cluster_extension(spec))
                .await
                .map_err(api_err(format!("creating {what}")))?;
            Action::Created
        }
        Some(ce) => {
            let package = ce
                .spec
                .source
                .catalog
                .as_ref()
                .map(|c| c.package_name.as_str());
            if package != Some(spec.package.as_str()) || ce.spec.namespace != spec.namespace {
                return Err(FlowError::Conflict(format!(
                    "{what} already installs package {:?} into namespace {:?}; \
                     pass --extension-name to use another name",
                    package.unwrap_or_default(),
                    ce.spec.namespace
                )));
            }
            ce_api
                .patch(
                    &spec.name,
                    &PatchParams::default(),
                    &Patch::Merge(&filter_patch(spec)),
                )
                .await
                .map_err(api_err(format!("updating {what}")))?;
            Action::Updated
        }
    };
    progress.done(ce_action.as_str());

    let ext = spec.name.clone();
    let bundle = step(
        client,
        spec,
        progress,
        &format!("Waiting for ClusterExtension {ext} to be installed"),
        async |p| extension_installed(&ce_api, &ext, &wopts, p).await,
    )
    .await?;
    progress.done(&format!("Installed {} ({})", bundle.0, bundle.1));

    let deployments = step(
        client,
        spec,
        progress,
        &format!("Waiting for the Deployments of {ext} to be Available"),
        async |p| deployments_available(client, &spec.namespace, &ext, &wopts, p).await,
    )
    .await?;
    progress.done(&format!("Available: {}", deployments.join(", ")));

    Ok(V1InstallOutcome {
        extension: spec.name.clone(),
        namespace: spec.namespace.clone(),
        catalog: (spec.catalog.name.clone(), cat),
        service_account: (spec.service_account.clone(), sa_action),
        rbac: rbac_lines,
        bundle,
        deployments,
    })
}

/// The result of [`upgrade()`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct V1UpgradeOutcome {
    pub extension: String,
    /// Bundle installed before (name, version), if any.
    pub from: Option<(String, String)>,
    pub to: (String, String),
    pub deployments: Vec<String>,
}

/// `olm upgrade --olm-v1`: points our ClusterCatalog at a new image (when given), sets the
/// extension's channels, version range and policy, and waits as install does.
pub async fn upgrade(
    client: &Client,
    spec: &ExtensionSpec,
    new_catalog_image: bool,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<V1UpgradeOutcome, FlowError> {
    spec.validate()?;
    let wopts = wait_options(opts);
    progress.step("Checking that OLM v1 is installed");
    check_olmv1(client).await?;
    progress.done("olm.operatorframework.io/v1 found");
    let ce_api: Api<ClusterExtension> = Api::all(client.clone());
    let what = format!("ClusterExtension {}", spec.name);
    let Some(ce) = ce_api.get_opt(&spec.name).await.map_err(api_err(&what))? else {
        return Err(FlowError::NotInstalled {
            package: spec.package.clone(),
            namespace: spec.namespace.clone(),
        });
    };
    let from = ce
        .installed_bundle()
        .map(|b| (b.name.clone(), b.version.clone()));
    if new_catalog_image {
        progress.step(&format!(
            "ClusterCatalog {} -> {}",
            spec.catalog.name, spec.catalog.image
        ));
        let a = ensure_catalog(client, spec).await?;
        progress.done(a.as_str());
        let cc_api: Api<ClusterCatalog> = Api::all(client.clone());
        let name = spec.catalog.name.clone();
        step(
            client,
            spec,
            progress,
            &format!("Waiting for ClusterCatalog {name} to serve"),
            async |p| catalog_serving(&cc_api, &name, &wopts, p).await,
        )
        .await?;
        progress.done("Serving");
    }
    progress.step(&format!("Updating {what}"));
    ce_api
        .patch(
            &spec.name,
            &PatchParams::default(),
            &Patch::Merge(&filter_patch(spec)),
        )
        .await
        .map_err(api_err(format!("updating {what}")))?;
    progress.done("updated");
    let ext = spec.name.clone();
    let to = step(
        client,
        spec,
        progress,
        &format!("Waiting for ClusterExtension {ext} to be installed"),
        async |p| extension_installed(&ce_api, &ext, &wopts, p).await,
    )
    .await?;
    progress.done(&format!("Installed {} ({})", to.0, to.1));
    let deployments = step(
        client,
        spec,
        progress,
        &format!("Waiting for the Deployments of {ext} to be Available"),
        async |p| deployments_available(client, &spec.namespace, &ext, &wopts, p).await,
    )
    .await?;
    progress.done(&format!("Available: {}", deployments.join(", ")));
    Ok(V1UpgradeOutcome {
        extension: spec.name.clone(),
        from,
        to,
        deployments,
    })
}
