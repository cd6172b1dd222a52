//! Install, upgrade, uninstall and status against a cluster with OLM: the API calls around the
//! pure builders in [`super::objects`] and the waits in [`super::wait`].
//!
//! What `operator-sdk run bundle`, `run bundle-upgrade` and `cleanup` do, through a
//! Subscription the way OperatorHub does: CatalogSource -> OperatorGroup -> Subscription ->
//! InstallPlan -> CSV. Every step says what it did (created, reused, updated) so a re-run is
//! safe and readable.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Event, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde::Serialize;
use serde_json::json;

use super::objects::{self, CatalogAddress, CatalogServing, InstallSpec, InvalidInput};
use super::types::{
    CatalogSource, ClusterServiceVersion, InstallPlan, MANAGED_BY_LABEL, MANAGED_BY_VALUE,
    OperatorGroup, Subscription,
};
use super::wait::{self, PlanOutcome, WaitError, WaitOptions};

/// How an install reports what it is doing. The CLI draws spinners on a terminal and plain
/// lines otherwise; tests record the calls.
pub trait Progress: Send {
    /// A step starts (`Waiting for CatalogSource x to be READY`).
    fn step(&mut self, title: &str);
    /// The running step's state changed (`connection TRANSIENT_FAILURE`).
    fn update(&mut self, state: &str);
    /// The running step finished.
    fn done(&mut self, summary: &str);
}

/// Progress that goes nowhere.
pub struct Silent;

impl Progress for Silent {
    fn step(&mut self, _: &str) {}
    fn update(&mut self, _: &str) {}
    fn done(&mut self, _: &str) {}
}

/// Timing of a flow.
#[derive(Debug, Clone, Copy)]
pub struct FlowOptions {
    /// Budget for the whole flow, shared by its waits.
    pub timeout: Duration,
    /// How often to poll.
    pub interval: Duration,
}

impl Default for FlowOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(300),
            interval: Duration::from_secs(2),
        }
    }
}

/// Why a flow stopped.
#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    #[error(
        "OLM is not installed on this cluster: the API server does not serve {}.\n\
         Install OLM first, for example with `operator-sdk olm install`, or:\n  \
         kubectl create -f https://github.com/operator-framework/operator-lifecycle-manager/releases/latest/download/crds.yaml\n  \
         kubectl create -f https://github.com/operator-framework/operator-lifecycle-manager/releases/latest/download/olm.yaml",
        .missing.join(", ")
    )]
    OlmMissing { missing: Vec<String> },
    #[error(transparent)]
    Invalid(#[from] InvalidInput),
    #[error("{0}")]
    Conflict(String),
    #[error(
        "package {package:?} is not installed in namespace {namespace:?} (no Subscription for it)"
    )]
    NotInstalled { package: String, namespace: String },
    #[error("{what}: {source}")]
    Api {
        what: String,
        #[source]
        source: kube::Error,
    },
    /// Building or publishing the catalog of a `--bundle` install or upgrade failed.
    #[error(transparent)]
    Bundle(#[from] super::bundle_catalog::BundleCatalogError),
    /// A wait failed or timed out; `diagnostics` has what the cluster says about why.
    #[error("{source}")]
    Wait {
        #[source]
        source: WaitError,
        diagnostics: Vec<String>,
    },
}

impl FlowError {
    /// Lines that explain a failed wait (CSV conditions, InstallPlan errors, recent events).
    pub fn diagnostics(&self) -> &[String] {
        match self {
            FlowError::Wait { diagnostics, .. } => diagnostics,
            _ => &[],
        }
    }
}

fn api_err(what: impl Into<String>) -> impl FnOnce(kube::Error) -> FlowError {
    let what = what.into();
    move |source| FlowError::Api { what, source }
}

/// What happened to an object we need.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Created,
    Reused,
    Updated,
}

impl Action {
    pub fn as_str(&self) -> &'static str {
        match self {
            Action::Created => "created",
            Action::Reused => "reused",
            Action::Updated => "updated",
        }
    }
}

/// The result of `install`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallOutcome {
    pub namespace: String,
    pub catalog_source: (String, Action),
    pub operator_group: (String, Action),
    pub subscription: (String, Action),
    pub install_plan: String,
    pub csv: String,
    /// Set when the plan waits for manual approval and we were not asked to approve it.
    pub pending_approval: bool,
}

/// Checks the OLM API groups are served. Discovery is readable by every authenticated user,
/// unlike the CRDs themselves.
pub async fn check_olm(client: &Client) -> Result<(), FlowError> {
    let wanted: [(&str, &[&str]); 2] = [
        (
            "operators.coreos.com/v1alpha1",
            &[
                "catalogsources",
                "subscriptions",
                "installplans",
                "clusterserviceversions",
            ],
        ),
        ("operators.coreos.com/v1", &["operatorgroups"]),
    ];
    let mut missing = Vec::new();
    for (gv, resources) in wanted {
        match client.list_api_group_resources(gv).await {
            Ok(list) => {
                for r in resources {
                    if !list.resources.iter().any(|x| x.name == *r) {
                        missing.push(format!("{r}.{gv}"));
                    }
                }
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {
                missing.extend(resources.iter().map(|r| format!("{r}.{gv}")));
            }
            Err(e) => return Err(api_err(format!("discovering {gv}"))(e)),
        }
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(FlowError::OlmMissing { missing })
    }
}

fn ours(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> bool {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(MANAGED_BY_LABEL))
        .is_some_and(|v| v == MANAGED_BY_VALUE)
}

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

/// Whether an existing CatalogSource already serves the catalog from `serving`.
fn serves(cs: &CatalogSource, serving: &CatalogServing) -> bool {
    match serving {
        CatalogServing::Image { image, .. } => cs.spec.image.as_deref() == Some(image.as_str()),
        CatalogServing::Address(a) => {
            cs.spec.image.is_none() && cs.spec.address.as_deref() == Some(a.as_str())
        }
    }
}

/// The merge patch that points a CatalogSource at `serving`, clearing what belongs to the other
/// way of serving (an image CatalogSource with an address, or the reverse, is ambiguous to OLM).
fn serving_patch(serving: &CatalogServing) -> serde_json::Value {
    match serving {
        CatalogServing::Image { image, .. } => json!({"spec": {"image": image, "address": null}}),
        CatalogServing::Address(a) => json!({"spec": {
            "address": a.as_str(),
            "image": null,
            "updateStrategy": null,
            "grpcPodConfig": null,
        }}),
    }
}

/// What an existing CatalogSource serves from, for messages.
fn describe_source(cs: &CatalogSource) -> String {
    match (&cs.spec.image, &cs.spec.address) {
        (Some(image), _) => format!("image {image}"),
        (None, Some(address)) => format!("address {address}"),
        (None, None) => "no image or address".to_string(),
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

/// The Subscription of `package` in `namespace`, whatever its name.
pub async fn find_subscription(
    client: &Client,
    namespace: &str,
    package: &str,
) -> Result<Option<Subscription>, FlowError> {
    let api: Api<Subscription> = Api::namespaced(client.clone(), namespace);
    let list = api
        .list(&ListParams::default())
        .await
        .map_err(api_err(format!("listing Subscriptions in {namespace}")))?;
    Ok(list.items.into_iter().find(|s| s.spec.name == package))
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

/// Runs one wait as a progress step, turning its failure into a [`FlowError`] with diagnostics.
struct Waiter<'a> {
    client: &'a Client,
    namespace: &'a str,
    opts: WaitOptions,
    progress: &'a mut dyn Progress,
    /// Known so far, for diagnostics.
    install_plan: Option<String>,
    csv: Option<String>,
}

impl Waiter<'_> {
    async fn fail(&self, source: WaitError) -> FlowError {
        let diagnostics = diagnose(
            self.client,
            self.namespace,
            self.install_plan.as_deref(),
            self.csv.as_deref(),
        )
        .await;
        FlowError::Wait {
            source,
            diagnostics,
        }
    }
}

/// Collects what the cluster says about a failed install: CSV phase history, InstallPlan
/// errors and the namespace's recent events. Best effort: a read that fails is skipped.
pub async fn diagnose(
    client: &Client,
    namespace: &str,
    install_plan: Option<&str>,
    csv: Option<&str>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(csv) = csv {
        let api: Api<ClusterServiceVersion> = Api::namespaced(client.clone(), namespace);
        if let Ok(Some(c)) = api.get_opt(csv).await {
            let st = c.status.unwrap_or_default();
            out.push(format!(
                "ClusterServiceVersion {csv}: phase {} {} {}",
                if st.phase.is_empty() { "-" } else { &st.phase },
                st.reason.unwrap_or_default(),
                st.message.unwrap_or_default()
            ));
            for cond in st.conditions.iter().rev().take(5).rev() {
                out.push(format!(
                    "  condition {} {}: {}",
                    cond.phase,
                    cond.reason.as_deref().unwrap_or(""),
                    cond.message.as_deref().unwrap_or("")
                ));
            }
        }
    }
    if let Some(ip) = install_plan {
        let api: Api<InstallPlan> = Api::namespaced(client.clone(), namespace);
        if let Ok(Some(p)) = api.get_opt(ip).await {
            out.push(format!("InstallPlan {ip}: phase {}", p.phase()));
            if p.phase() == "Failed" {
                for e in wait::install_plan_errors(&p) {
                    out.push(format!("  {e}"));
                }
            }
        }
    }
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    if let Ok(list) = events.list(&ListParams::default()).await {
        let mut items = list.items;
        items.sort_by_key(|e| {
            e.last_timestamp
                .as_ref()
                .map(|t| t.0)
                .or(e.event_time.as_ref().map(|t| t.0))
                .or(e.metadata.creation_timestamp.as_ref().map(|t| t.0))
        });
        let recent: Vec<_> = items.iter().rev().take(10).collect();
        if !recent.is_empty() {
            out.push("recent events:".into());
        }
        for e in recent.into_iter().rev() {
            out.push(format!(
                "  {} {}/{}: {}: {}",
                e.type_.as_deref().unwrap_or("Normal"),
                e.involved_object.kind.as_deref().unwrap_or("?"),
                e.involved_object.name.as_deref().unwrap_or("?"),
                e.reason.as_deref().unwrap_or(""),
                e.message.as_deref().unwrap_or("").trim()
            ));
        }
    }
    out
}

/// Waits for the catalog, the plan (approving it when `approve`) and the CSV. Returns the plan,
/// the CSV and whether it stopped at a plan awaiting approval.
async fn follow_subscription(
    w: &mut Waiter<'_>,
    catalog: (&str, &str),
    subscription: &str,
    not_csv: Option<&str>,
    approve: bool,
) -> Result<(String, String, bool), FlowError> {
    let (cat_ns, cat_name) = catalog;
    let cs_api: Api<CatalogSource> = Api::namespaced(w.client.clone(), cat_ns);
    w.progress.step(&format!(
        "Waiting for CatalogSource {cat_ns}/{cat_name} to be READY"
    ));
    let r = {
        let p = &mut *w.progress;
        wait::catalog_ready(&cs_api, cat_name, &w.opts, &mut |s| p.update(s)).await
    };
    if let Err(e) = r {
        return Err(w.fail(e).await);
    }
    w.progress.done("catalog READY");

    let sub_api: Api<Subscription> = Api::namespaced(w.client.clone(), w.namespace);
    w.progress.step(&format!(
        "Waiting for Subscription {subscription} to resolve"
    ));
    let r = {
        let p = &mut *w.progress;
        wait::install_plan_created(&sub_api, subscription, not_csv, &w.opts, &mut |s| {
            p.update(s)
        })
        .await
    };
    let (ip_name, csv) = match r {
        Ok(v) => v,
        Err(e) => return Err(w.fail(e).await),
    };
    w.install_plan = Some(ip_name.clone());
    w.csv = Some(csv.clone());
    w.progress.done(&format!("InstallPlan {ip_name} for {csv}"));

    let ip_api: Api<InstallPlan> = Api::namespaced(w.client.clone(), w.namespace);
    w.progress
        .step(&format!("Waiting for InstallPlan {ip_name}"));
    let mut outcome = {
        let p = &mut *w.progress;
        wait::install_plan_done(&ip_api, &ip_name, &w.opts, &mut |s| p.update(s)).await
    };
    if matches!(outcome, Ok(PlanOutcome::RequiresApproval)) {
        if !approve {
            w.progress.done("awaiting manual approval");
            return Ok((ip_name, csv, true));
        }
        ip_api
            .patch(
                &ip_name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"spec": {"approved": true}})),
            )
            .await
            .map_err(api_err(format!("approving InstallPlan {ip_name}")))?;
        w.progress.update("approved");
        outcome = {
            let p = &mut *w.progress;
            wait::install_plan_done(&ip_api, &ip_name, &w.opts, &mut |s| p.update(s)).await
        };
    }
    match outcome {
        Ok(_) => w.progress.done("InstallPlan Complete"),
        Err(e) => return Err(w.fail(e).await),
    }

    let csv_api: Api<ClusterServiceVersion> = Api::namespaced(w.client.clone(), w.namespace);
    w.progress.step(&format!(
        "Waiting for ClusterServiceVersion {csv} to succeed"
    ));
    let r = {
        let p = &mut *w.progress;
        wait::csv_succeeded(&csv_api, &csv, &w.opts, &mut |s| p.update(s)).await
    };
    if let Err(e) = r {
        return Err(w.fail(e).await);
    }
    w.progress.done("Succeeded");
    Ok((ip_name, csv, false))
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
pub(super) async fn upgrade_subscription(
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
    let what = if ns.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {ns}/{name}")
    };
    progress.step(&format!("Deleting {what}"));
    let deleted = wait::delete_and_wait(api, name, &what, opts, &mut |s| progress.update(s))
        .await
        .map_err(|source| FlowError::Wait {
            source,
            diagnostics: Vec::new(),
        })?;
    progress.done(if deleted { "deleted" } else { "already gone" });
    if deleted {
        out.deleted.push(what);
    }
    Ok(())
}

/// `olm status`: the state of every object of an install.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    pub package: String,
    pub namespace: String,
    pub subscription: SubscriptionState,
    pub catalog_source: Option<CatalogState>,
    pub install_plan: Option<PlanState>,
    pub csv: Option<CsvState>,
    pub deployments: Vec<DeploymentState>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionState {
    pub name: String,
    pub channel: Option<String>,
    pub source: String,
    pub state: Option<String>,
    #[serde(rename = "installedCSV")]
    pub installed_csv: Option<String>,
    #[serde(rename = "currentCSV")]
    pub current_csv: Option<String>,
    /// Conditions that are True (OLM's subscription conditions are abnormal-true).
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CatalogState {
    pub name: String,
    pub image: Option<String>,
    /// `spec.address` of a CatalogSource served by a running registry instead of an image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub state: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlanState {
    pub name: String,
    pub phase: String,
    pub approval: String,
    pub approved: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CsvState {
    pub name: String,
    pub phase: String,
    pub reason: Option<String>,
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentState {
    pub name: String,
    pub replicas: i32,
    pub ready: i32,
    pub available: i32,
}

/// Reads the Subscription of `package` and what it points at. Missing pieces are `None`
/// (an install in progress is a valid state to report).
pub async fn status(
    client: &Client,
    namespace: &str,
    package: &str,
) -> Result<StatusReport, FlowError> {
    objects::check_dns_label("--namespace", namespace)?;
    check_olm(client).await?;
    let sub = find_subscription(client, namespace, package)
        .await?
        .ok_or_else(|| FlowError::NotInstalled {
            package: package.to_string(),
            namespace: namespace.to_string(),
        })?;
    let st = sub.status.clone().unwrap_or_default();
    let mut report = StatusReport {
        package: package.to_string(),
        namespace: namespace.to_string(),
        subscription: SubscriptionState {
            name: sub.metadata.name.clone().unwrap_or_default(),
            channel: sub.spec.channel.clone(),
            source: format!("{}/{}", sub.spec.source_namespace, sub.spec.source),
            state: st.state.clone(),
            installed_csv: st.installed_csv.clone(),
            current_csv: st.current_csv.clone(),
            problems: st
                .conditions
                .iter()
                .filter(|c| c.status == "True")
                .map(|c| {
                    format!(
                        "{}: {}",
                        c.type_,
                        c.message.as_deref().or(c.reason.as_deref()).unwrap_or("")
                    )
                })
                .collect(),
        },
        ..Default::default()
    };
    let cs_api: Api<CatalogSource> = Api::namespaced(client.clone(), &sub.spec.source_namespace);
    if let Some(cs) = cs_api
        .get_opt(&sub.spec.source)
        .await
        .map_err(api_err("reading CatalogSource"))?
    {
        report.catalog_source = Some(CatalogState {
            name: sub.spec.source.clone(),
            image: cs.spec.image.clone(),
            address: cs.spec.address.clone(),
            state: cs.observed_state().map(str::to_string),
        });
    }
    if let Some(ip) = sub.install_plan_name() {
        let api: Api<InstallPlan> = Api::namespaced(client.clone(), namespace);
        if let Some(p) = api
            .get_opt(ip)
            .await
            .map_err(api_err(format!("reading InstallPlan {ip}")))?
        {
            report.install_plan = Some(PlanState {
                name: ip.to_string(),
                phase: p.phase().to_string(),
                approval: p.spec.approval.clone(),
                approved: p.spec.approved,
            });
        }
    }
    if let Some(csv) = st.installed_csv.or(st.current_csv) {
        let api: Api<ClusterServiceVersion> = Api::namespaced(client.clone(), namespace);
        if let Some(c) = api
            .get_opt(&csv)
            .await
            .map_err(api_err(format!("reading ClusterServiceVersion {csv}")))?
        {
            let cst = c.status.clone().unwrap_or_default();
            report.csv = Some(CsvState {
                name: csv.clone(),
                phase: cst.phase,
                reason: cst.reason,
                message: cst.message,
            });
            let deps: Vec<String> = c
                .spec
                .install
                .map(|i| i.spec.deployments.into_iter().map(|d| d.name).collect())
                .unwrap_or_default();
            let dapi: Api<Deployment> = Api::namespaced(client.clone(), namespace);
            for d in deps {
                let dep = dapi
                    .get_opt(&d)
                    .await
                    .map_err(api_err(format!("reading Deployment {d}")))?;
                let (replicas, ready, available) = dep
                    .and_then(|x| x.status)
                    .map(|s| {
                        (
                            s.replicas.unwrap_or(0),
                            s.ready_replicas.unwrap_or(0),
                            s.available_replicas.unwrap_or(0),
                        )
                    })
                    .unwrap_or((0, 0, 0));
                report.deployments.push(DeploymentState {
                    name: d,
                    replicas,
                    ready,
                    available,
                });
            }
        }
    }
    Ok(report)
}

impl StatusReport {
    /// `olm status` as aligned columns: one row per object of the install.
    pub fn table(&self) -> String {
        let r = self;
        let dash = |s: Option<&str>| s.filter(|s| !s.is_empty()).unwrap_or("-").to_string();
        let mut rows: Vec<[String; 4]> = vec![[
            "KIND".into(),
            "NAME".into(),
            "STATUS".into(),
            "DETAIL".into(),
        ]];
        let s = &r.subscription;
        rows.push([
            "Subscription".into(),
            s.name.clone(),
            dash(s.state.as_deref()),
            format!(
                "channel {}, installed {}, current {}",
                dash(s.channel.as_deref()),
                dash(s.installed_csv.as_deref()),
                dash(s.current_csv.as_deref())
            ),
        ]);
        match &r.catalog_source {
            Some(c) => rows.push([
                "CatalogSource".into(),
                c.name.clone(),
                dash(c.state.as_deref()),
                dash(c.image.as_deref().or(c.address.as_deref())),
            ]),
            None => rows.push([
                "CatalogSource".into(),
                s.source.clone(),
                "missing".into(),
                "-".into(),
            ]),
        }
        if let Some(p) = &r.install_plan {
            rows.push([
                "InstallPlan".into(),
                p.name.clone(),
                dash(Some(&p.phase)),
                format!(
                    "{}{}",
                    p.approval,
                    if p.approval == "Manual" && !p.approved {
                        " (not approved)"
                    } else {
                        ""
                    }
                ),
            ]);
        }
        if let Some(c) = &r.csv {
            rows.push([
                "ClusterServiceVersion".into(),
                c.name.clone(),
                dash(Some(&c.phase)),
                dash(c.message.as_deref()),
            ]);
        }
        for d in &r.deployments {
            rows.push([
                "Deployment".into(),
                d.name.clone(),
                format!("{}/{} ready", d.ready, d.replicas),
                format!("{} available", d.available),
            ]);
        }
        let mut widths = [0usize; 3];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row.iter()) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in &rows {
            for (i, cell) in row.iter().enumerate() {
                if i < 3 {
                    out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
                } else {
                    out.push_str(cell);
                }
            }
            out.push('\n');
        }
        for p in &s.problems {
            out.push_str(&format!("problem: {p}\n"));
        }
        out
    }
}
