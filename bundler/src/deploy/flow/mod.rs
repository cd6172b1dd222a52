//! Install, upgrade, uninstall and status against a cluster with OLM: the API calls around the
//! pure builders in [`super::objects`] and the waits in [`super::wait`].
//!
//! What `operator-sdk run bundle`, `run bundle-upgrade` and `cleanup` do, through a
//! Subscription the way OperatorHub does: CatalogSource -> OperatorGroup -> Subscription ->
//! InstallPlan -> CSV. Every step says what it did (created, reused, updated) so a re-run is
//! safe and readable.
//!
//! One module per flow ([`install()`], [`upgrade()`], [`uninstall()`], [`status()`]), `follow` for
//! the wait on a Subscription shared by install and upgrade (and the diagnosis when it fails);
//! this file holds what they share: progress, options, errors and the CatalogSource helpers.

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
    #[error(
        "OLM v1 is not installed on this cluster: the API server does not serve {}.\n\
         Install operator-controller and catalogd first, for example:\n  \
         curl -L -s https://github.com/operator-framework/operator-controller/releases/latest/download/install.sh | bash -s",
        .missing.join(", ")
    )]
    OlmV1Missing { missing: Vec<String> },
    #[error(transparent)]
    Invalid(#[from] InvalidInput),
    #[error("{0}")]
    Conflict(String),
    #[error(
        "package {package:?} is not installed in namespace {namespace:?} (no Subscription for it)"
    )]
    NotInstalled { package: String, namespace: String },
    /// OLM v1: no ClusterExtension of that name.
    #[error(
        "no ClusterExtension {name:?} in the cluster (pass the name it was installed with as --extension-name; `kubectl get clusterextensions` lists them)"
    )]
    NoExtension { name: String },
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

    /// The error and, under it, what the cluster reports.
    pub fn report(&self) -> String {
        let mut s = format!("error: {self}\n");
        if !self.diagnostics().is_empty() {
            s.push_str("what the cluster reports:\n");
            for line in self.diagnostics() {
                s.push_str(&format!("  {line}\n"));
            }
        }
        s
    }
}

pub(in crate::deploy) fn api_err(what: impl Into<String>) -> impl FnOnce(kube::Error) -> FlowError {
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

impl InstallOutcome {
    /// What `olm install` tells the user: what it made, or how to approve a waiting plan.
    pub fn summary(&self) -> String {
        let (ns, ip, csv) = (&self.namespace, &self.install_plan, &self.csv);
        if self.pending_approval {
            return format!(
                "InstallPlan {ns}/{ip} for {csv} waits for manual approval. Approve it with\n  \
                 kubectl -n {ns} patch installplan {ip} --type merge -p '{{\"spec\":{{\"approved\":true}}}}'\n\
                 or re-run with --approve.\n"
            );
        }
        let made = |(name, action): &(String, Action)| format!("{name} {}", action.as_str());
        format!(
            "Installed {csv} in namespace {ns} (CatalogSource {}, OperatorGroup {}, Subscription {}).\n",
            made(&self.catalog_source),
            made(&self.operator_group),
            made(&self.subscription)
        )
    }
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

pub(in crate::deploy) fn ours(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> bool {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(MANAGED_BY_LABEL))
        .is_some_and(|v| v == MANAGED_BY_VALUE)
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

mod follow;
pub(crate) use follow::recent_events;
pub(crate) use uninstall::{delete_and_record, delete_if_ours};
mod install;
mod status;
mod uninstall;
mod upgrade;

pub use follow::diagnose;
use follow::{Waiter, follow_subscription};
pub use install::install;
pub use status::{
    CatalogState, CsvState, DeploymentState, PlanState, StatusReport, SubscriptionState, status,
};
pub use uninstall::{UninstallOutcome, UninstallSpec, uninstall};
pub(in crate::deploy) use upgrade::upgrade_subscription;
pub use upgrade::{CatalogTarget, UpgradeOutcome, UpgradeSpec, upgrade};
