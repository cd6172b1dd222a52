//! The OLM API objects the deploy area reads and writes, as typed kube resources.
//!
//! Only the fields we set or read are modelled; everything is optional on the way in (OLM
//! fills status over time, and older OLM releases omit newer fields), and `None` fields are left
//! out on the way out so a generated manifest carries exactly what we chose. Field names follow
//! operator-framework/api `pkg/operators/v1alpha1/*_types.go` and `pkg/operators/v1/
//! operatorgroup_types.go`. `schema = "disabled"`: these CRDs belong to OLM, we never publish them.

use std::collections::BTreeMap;

use kube::CustomResource;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// API group of every OLM kind.
pub const GROUP: &str = "operators.coreos.com";

/// `CatalogSource.spec` (operators.coreos.com/v1alpha1).
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "operators.coreos.com",
    version = "v1alpha1",
    kind = "CatalogSource",
    namespaced,
    status = "CatalogSourceStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct CatalogSourceSpec {
    /// `grpc` for an image- or address-backed registry.
    pub source_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_strategy: Option<UpdateStrategy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grpc_pod_config: Option<GrpcPodConfig>,
}

/// `spec.updateStrategy`: only registry polling exists upstream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpdateStrategy {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry_poll: Option<RegistryPoll>,
}

/// `spec.updateStrategy.registryPoll`; `interval` is a Go duration (`10m`, `1h30m`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RegistryPoll {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
}

/// `spec.grpcPodConfig` subset: the pod security mode of the catalog pod.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrpcPodConfig {
    /// `legacy` or `restricted`; `restricted` lets the pod run under Pod Security `restricted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context_config: Option<String>,
}

/// `CatalogSource.status` subset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogSourceStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connection_state: Option<ConnectionState>,
}

/// `status.connectionState`: the gRPC connectivity OLM's catalog operator last saw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectionState {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// gRPC connectivity state name: `READY`, `CONNECTING`, `TRANSIENT_FAILURE`, `IDLE`.
    #[serde(default)]
    pub last_observed_state: String,
}

impl CatalogSource {
    /// The last observed gRPC state, if OLM reported one.
    pub fn observed_state(&self) -> Option<&str> {
        self.status
            .as_ref()
            .and_then(|s| s.connection_state.as_ref())
            .map(|c| c.last_observed_state.as_str())
            .filter(|s| !s.is_empty())
    }
}

/// `OperatorGroup.spec` (operators.coreos.com/v1).
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "operators.coreos.com",
    version = "v1",
    kind = "OperatorGroup",
    namespaced,
    status = "OperatorGroupStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct OperatorGroupSpec {
    /// Absent (and no selector) means AllNamespaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_namespaces: Option<Vec<String>>,
    /// A label selector over namespaces; kept verbatim so we can tell it is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_strategy: Option<Value>,
}

/// `OperatorGroup.status` subset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OperatorGroupStatus {
    /// The namespaces OLM resolved the group to (`[""]` for all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespaces: Option<Vec<String>>,
}

/// `Subscription.spec` (operators.coreos.com/v1alpha1).
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "operators.coreos.com",
    version = "v1alpha1",
    kind = "Subscription",
    namespaced,
    status = "SubscriptionStatus",
    schema = "disabled"
)]
pub struct SubscriptionSpec {
    /// Package name (`spec.name` upstream).
    pub name: String,
    /// CatalogSource name.
    pub source: String,
    #[serde(rename = "sourceNamespace")]
    pub source_namespace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    #[serde(
        rename = "installPlanApproval",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub install_plan_approval: Option<String>,
    #[serde(
        rename = "startingCSV",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub starting_csv: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<Value>,
}

/// `Subscription.status` subset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionStatus {
    #[serde(
        rename = "currentCSV",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub current_csv: Option<String>,
    #[serde(
        rename = "installedCSV",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub installed_csv: Option<String>,
    /// `UpgradePending`, `AtLatestKnown`, `UpgradeAvailable`, `UpgradeFailed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install_plan_ref: Option<ObjectRef>,
    /// The deprecated reference, still written by OLM; used when `installPlanRef` is absent.
    #[serde(
        rename = "installplan",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub installplan: Option<ObjectRef>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// The parts of an object reference we follow.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ObjectRef {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

/// A condition as OLM writes it on Subscriptions and InstallPlans.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Condition {
    #[serde(rename = "type", default)]
    pub type_: String,
    #[serde(default)]
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Subscription {
    /// Name of the InstallPlan OLM made for this subscription's current CSV.
    pub fn install_plan_name(&self) -> Option<&str> {
        let st = self.status.as_ref()?;
        st.install_plan_ref
            .as_ref()
            .or(st.installplan.as_ref())
            .map(|r| r.name.as_str())
            .filter(|n| !n.is_empty())
    }
}

/// `InstallPlan.spec` (operators.coreos.com/v1alpha1).
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "operators.coreos.com",
    version = "v1alpha1",
    kind = "InstallPlan",
    namespaced,
    status = "InstallPlanStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct InstallPlanSpec {
    #[serde(default)]
    pub cluster_service_version_names: Vec<String>,
    /// `Automatic` or `Manual`.
    #[serde(default)]
    pub approval: String,
    #[serde(default)]
    pub approved: bool,
}

/// `InstallPlan.status` subset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InstallPlanStatus {
    /// `Planning`, `RequiresApproval`, `Installing`, `Complete`, `Failed`.
    #[serde(default)]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Bundle unpack jobs; their conditions carry unpack failures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bundle_lookups: Vec<BundleLookup>,
}

/// `status.bundleLookups[]` subset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BundleLookup {
    #[serde(default)]
    pub path: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

impl InstallPlan {
    pub fn phase(&self) -> &str {
        self.status.as_ref().map_or("", |s| s.phase.as_str())
    }
}

/// `ClusterServiceVersion.spec` subset: what uninstall and status need.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "operators.coreos.com",
    version = "v1alpha1",
    kind = "ClusterServiceVersion",
    namespaced,
    status = "CsvStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct CsvSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub customresourcedefinitions: Option<CsvCrds>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<CsvInstall>,
}

/// `spec.customresourcedefinitions`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CsvCrds {
    #[serde(default)]
    pub owned: Vec<CrdDescription>,
}

/// One owned CRD: `name` is `<plural>.<group>`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CrdDescription {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub version: String,
}

/// `spec.install`: the deployment strategy; only deployment names are read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CsvInstall {
    #[serde(default)]
    pub spec: CsvInstallSpec,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CsvInstallSpec {
    #[serde(default)]
    pub deployments: Vec<NamedDeployment>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NamedDeployment {
    #[serde(default)]
    pub name: String,
}

/// `ClusterServiceVersion.status` subset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CsvStatus {
    /// `Pending`, `InstallReady`, `Installing`, `Succeeded`, `Failed`, `Replacing`, `Deleting`.
    #[serde(default)]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Phase history: each entry is a phase the CSV went through, with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<CsvCondition>,
}

/// `status.conditions[]` of a CSV (phase transitions, not the usual type/status pair).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CsvCondition {
    #[serde(default)]
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<String>,
}

impl ClusterServiceVersion {
    pub fn phase(&self) -> &str {
        self.status.as_ref().map_or("", |s| s.phase.as_str())
    }
}

/// Labels put on every object we create, so uninstall knows what is ours to remove.
pub fn managed_labels() -> BTreeMap<String, String> {
    BTreeMap::from([(MANAGED_BY_LABEL.to_string(), MANAGED_BY_VALUE.to_string())])
}

/// `app.kubernetes.io/managed-by`, the standard label for the tool that manages an object.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";
/// Our value of [`MANAGED_BY_LABEL`].
pub const MANAGED_BY_VALUE: &str = "olm-bundler";
