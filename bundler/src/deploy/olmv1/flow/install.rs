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

impl V1InstallOutcome {
    /// What `olm install --olm-v1` tells the user.
    pub fn summary(&self) -> String {
        format!(
            "Installed {} {} as ClusterExtension {} into namespace {} (ClusterCatalog {} {}, \
             ServiceAccount {} {}); Deployments Available: {}.\n",
            self.bundle.0,
            self.bundle.1,
            self.extension,
            self.namespace,
            self.catalog.0,
            self.catalog.1.as_str(),
            self.service_account.0,
            self.service_account.1.as_str(),
            self.deployments.join(", ")
        )
    }
}

/// Creates the ClusterCatalog, or points ours at the image; a foreign one with another image
/// is a conflict.
async fn ensure_catalog(client: &Client, want: &ClusterCatalog) -> Result<Action, FlowError> {
    let api: Api<ClusterCatalog> = Api::all(client.clone());
    let name = want.metadata.name.clone().unwrap_or_default();
    let name = &name;
    let what = format!("ClusterCatalog {name}");
    match api.get_opt(name).await.map_err(api_err(&what))? {
        None => {
            api.create(&PostParams::default(), want)
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
            want.spec
                .source
                .image
                .as_ref()
                .map(|i| i.ref_.as_str())
                .unwrap_or_default()
        ))),
    }
}

/// Runs one wait as a progress step; a failure carries [`diagnose`]'s lines.
async fn step<T>(
    client: &Client,
    spec: &V1Names,
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

/// Waits for `names.catalog` to serve, as a progress step.
async fn wait_serving(
    client: &Client,
    names: &V1Names,
    wopts: &WaitOptions,
    progress: &mut dyn Progress,
) -> Result<(), FlowError> {
    let cc_api: Api<ClusterCatalog> = Api::all(client.clone());
    let name = &names.catalog;
    let title = format!("Waiting for ClusterCatalog {name} to serve");
    step(client, names, progress, &title, async |p| {
        catalog_serving(&cc_api, name, wopts, p).await
    })
    .await?;
    progress.done("Serving");
    Ok(())
}

/// Waits for the extension to be installed, then for its Deployments to be Available; gives
/// the installed bundle (name, version) and the Deployments.
async fn wait_installed(
    client: &Client,
    names: &V1Names,
    wopts: &WaitOptions,
    progress: &mut dyn Progress,
) -> Result<((String, String), Vec<String>), FlowError> {
    let ce_api: Api<ClusterExtension> = Api::all(client.clone());
    let ext = &names.extension;
    let title = format!("Waiting for ClusterExtension {ext} to be installed");
    let bundle = step(client, names, progress, &title, async |p| {
        extension_installed(&ce_api, ext, wopts, p).await
    })
    .await?;
    progress.done(&format!("Installed {} ({})", bundle.0, bundle.1));
    let title = format!("Waiting for the Deployments of {ext} to be Available");
    let deployments = step(client, names, progress, &title, async |p| {
        deployments_available(client, &names.namespace, ext, wopts, p).await
    })
    .await?;
    progress.done(&format!("Available: {}", deployments.join(", ")));
    Ok((bundle, deployments))
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
    let names = spec.names();
    let cat = ensure_catalog(client, &objects::cluster_catalog(spec)).await?;
    progress.done(cat.as_str());
    wait_serving(client, &names, &wopts, progress).await?;

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
                    &Patch::Merge(&json!({"spec": {
                        "serviceAccount": {"name": spec.service_account},
                        "source": {"catalog": {
                            "channels": spec.channels,
                            "version": spec.version,
                            "selector": objects::catalog_selector(&spec.catalog.name),
                            "upgradeConstraintPolicy": spec.upgrade_policy.as_str(),
                        }}
                    }})),
                )
                .await
                .map_err(api_err(format!("updating {what}")))?;
            Action::Updated
        }
    };
    progress.done(ce_action.as_str());

    let (bundle, deployments) = wait_installed(client, &names, &wopts, progress).await?;

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

/// What `upgrade --olm-v1` changes; `None` leaves a field as it is.
#[derive(Debug, Clone)]
pub struct V1UpgradeSpec {
    pub names: V1Names,
    /// A new catalog image for our ClusterCatalog.
    pub catalog: Option<objects::CatalogImage>,
    pub channel: Option<String>,
    pub version: Option<String>,
    pub upgrade_policy: Option<objects::UpgradePolicy>,
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

impl V1UpgradeOutcome {
    /// What `olm upgrade --olm-v1` tells the user.
    pub fn summary(&self) -> String {
        let (ext, to) = (&self.extension, &self.to);
        match &self.from {
            Some(from) if from == to => format!(
                "{ext} stays at {} {}: nothing newer matches its filters.\n",
                to.0, to.1
            ),
            Some(from) => format!(
                "Upgraded {ext} from {} {} to {} {}.\n",
                from.0, from.1, to.0, to.1
            ),
            None => format!("{ext} installed {} {}.\n", to.0, to.1),
        }
    }
}

/// `olm upgrade --olm-v1`: points our ClusterCatalog at a new image (when given), sets the
/// extension's channel, version range and policy (those given), and waits as install does.
pub async fn upgrade(
    client: &Client,
    up: &V1UpgradeSpec,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<V1UpgradeOutcome, FlowError> {
    let wopts = wait_options(opts);
    progress.step("Checking that OLM v1 is installed");
    check_olmv1(client).await?;
    progress.done("olm.operatorframework.io/v1 found");
    let ce_api: Api<ClusterExtension> = Api::all(client.clone());
    let ext = up.names.extension.clone();
    let what = format!("ClusterExtension {ext}");
    let Some(ce) = ce_api.get_opt(&ext).await.map_err(api_err(&what))? else {
        return Err(FlowError::NoExtension { name: ext });
    };
    // The namespace and catalog the extension was installed with, whatever the defaults of
    // this command's flags say.
    let names = &V1Names::installed(&ce, &up.names);
    let from = ce
        .installed_bundle()
        .map(|b| (b.name.clone(), b.version.clone()));
    if let Some(cat) = &up.catalog {
        let cat = &objects::CatalogImage {
            name: names.catalog.clone(),
            ..cat.clone()
        };
        progress.step(&format!("ClusterCatalog {} -> {}", cat.name, cat.image));
        let spec = ExtensionSpec {
            name: ext.clone(),
            package: String::new(),
            namespace: names.namespace.clone(),
            service_account: names.service_account.clone(),
            channels: Vec::new(),
            version: None,
            upgrade_policy: Default::default(),
            catalog: cat.clone(),
        };
        let a = ensure_catalog(client, &objects::cluster_catalog(&spec)).await?;
        progress.done(a.as_str());
        wait_serving(client, names, &wopts, progress).await?;
    }
    let mut filter = serde_json::Map::new();
    if let Some(c) = &up.channel {
        filter.insert("channels".into(), json!([c]));
    }
    if let Some(v) = &up.version {
        filter.insert("version".into(), json!(v));
    }
    if let Some(p) = up.upgrade_policy {
        filter.insert("upgradeConstraintPolicy".into(), json!(p.as_str()));
    }
    if !filter.is_empty() {
        progress.step(&format!("Updating {what}"));
        let patch = json!({"spec": {"source": {"catalog": filter}}});
        ce_api
            .patch(&ext, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(api_err(format!("updating {what}")))?;
        progress.done("updated");
    }
    let (to, deployments) = wait_installed(client, names, &wopts, progress).await?;
    Ok(V1UpgradeOutcome {
        extension: ext,
        from,
        to,
        deployments,
    })
}
