//! `upgrade`: point the CatalogSource at a new catalog and/or switch channel, then follow the
//! Subscription to the next CSV.

use super::*;

/// What `upgrade` should change before waiting for the new version.
#[derive(Debug, Clone, Default)]
pub struct UpgradeSpec {
    pub package: String,
    pub namespace: String,
    /// Where the Subscription's CatalogSource should serve from next: a new catalog image, or
    /// a registry address (poll settings of an image CatalogSource are kept).
    pub catalog: Option<CatalogTarget>,
    /// A new channel for the Subscription.
    pub channel: Option<String>,
}

/// A new source for an installed package's CatalogSource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CatalogTarget {
    Image(String),
    Address(CatalogAddress),
}

/// The result of `upgrade`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UpgradeOutcome {
    pub from: String,
    /// Equal to `from` when there was nothing to upgrade to.
    pub to: String,
    /// The plan that installed `to`; `None` when already at the latest version.
    pub install_plan: Option<String>,
}

impl UpgradeOutcome {
    pub fn up_to_date(&self) -> bool {
        self.install_plan.is_none()
    }
}

/// Moves an installed package to the next version OLM resolves: optionally points its
/// CatalogSource at a new image and/or switches channel, then waits for an InstallPlan for a
/// CSV other than the installed one, approves it (asking for the upgrade is the approval) and
/// waits for the new CSV to succeed.
pub async fn upgrade(
    client: &Client,
    spec: &UpgradeSpec,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<UpgradeOutcome, FlowError> {
    objects::check_dns_label("--namespace", &spec.namespace)?;
    let wait_opts = WaitOptions::new(opts.timeout, opts.interval);
    progress.step("Checking that OLM is installed");
    check_olm(client).await?;
    progress.done("OLM APIs found");

    let sub = find_subscription(client, &spec.namespace, &spec.package)
        .await?
        .ok_or_else(|| FlowError::NotInstalled {
            package: spec.package.clone(),
            namespace: spec.namespace.clone(),
        })?;
    upgrade_subscription(client, spec, sub, wait_opts, progress).await
}

/// [`upgrade`] once OLM is known to be there and the package's Subscription `sub` was found
/// (`olm upgrade --bundle` has both by then).
pub(in crate::deploy) async fn upgrade_subscription(
    client: &Client,
    spec: &UpgradeSpec,
    sub: Subscription,
    wait_opts: WaitOptions,
    progress: &mut dyn Progress,
) -> Result<UpgradeOutcome, FlowError> {
    let sub_name = sub.metadata.name.clone().unwrap_or_default();
    let from = sub
        .status
        .as_ref()
        .and_then(|s| s.installed_csv.clone())
        .ok_or_else(|| {
            FlowError::Conflict(format!(
                "Subscription {}/{sub_name} has no installed CSV yet; finish the install \
                 (`olm status {}`) before upgrading",
                spec.namespace, spec.package
            ))
        })?;
    let cat_ns = sub.spec.source_namespace.clone();
    let cat_name = sub.spec.source.clone();

    // Nothing to change and OLM says there is nothing newer: done, rather than wait out the
    // timeout for a plan that will not come.
    let st = sub.status.clone().unwrap_or_default();
    let changes_requested = spec.catalog.is_some()
        || spec
            .channel
            .as_ref()
            .is_some_and(|c| sub.spec.channel.as_ref() != Some(c));
    if !changes_requested
        && st.state.as_deref() == Some("AtLatestKnown")
        && st.current_csv.as_deref() == Some(from.as_str())
    {
        return Ok(UpgradeOutcome {
            to: from.clone(),
            from,
            install_plan: None,
        });
    }

    if let Some(target) = &spec.catalog {
        let serving = match target {
            CatalogTarget::Image(image) => {
                objects::ImageRef::parse(image).map_err(|m| InvalidInput {
                    field: "--catalog",
                    message: m,
                })?;
                CatalogServing::Image {
                    image: image.clone(),
                    poll_interval: None,
                }
            }
            CatalogTarget::Address(a) => CatalogServing::Address(a.clone()),
        };
        progress.step(&format!(
            "CatalogSource {cat_ns}/{cat_name} {}",
            serving.describe()
        ));
        let api: Api<CatalogSource> = Api::namespaced(client.clone(), &cat_ns);
        let cs = api
            .get(&cat_name)
            .await
            .map_err(api_err(format!("CatalogSource {cat_ns}/{cat_name}")))?;
        if serves(&cs, &serving) {
            // The same address: OLM re-resolves by itself when its connection to the server
            // comes back READY (a restarted `olm catalog serve`); nothing to patch.
            progress.done("unchanged");
        } else {
            api.patch(
                &cat_name,
                &PatchParams::default(),
                &Patch::Merge(&serving_patch(&serving)),
            )
            .await
            .map_err(api_err(format!(
                "updating CatalogSource {cat_ns}/{cat_name}"
            )))?;
            progress.done("updated");
        }
    }
    if let Some(channel) = &spec.channel
        && sub.spec.channel.as_ref() != Some(channel)
    {
        progress.step(&format!("Subscription {sub_name} channel {channel}"));
        let api: Api<Subscription> = Api::namespaced(client.clone(), &spec.namespace);
        api.patch(
            &sub_name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"channel": channel}})),
        )
        .await
        .map_err(api_err(format!(
            "switching channel of Subscription {sub_name}"
        )))?;
        progress.done("updated");
    }

    let mut w = Waiter {
        client,
        namespace: &spec.namespace,
        opts: wait_opts,
        progress,
        install_plan: None,
        csv: Some(from.clone()),
    };
    let (install_plan, to, _) =
        follow_subscription(&mut w, (&cat_ns, &cat_name), &sub_name, Some(&from), true).await?;
    Ok(UpgradeOutcome {
        from,
        to,
        install_plan: Some(install_plan),
    })
}
