//! OLM v1's API objects (`olm.operatorframework.io/v1`): ClusterCatalog and ClusterExtension.
//!
//! Field names from operator-controller `api/v1/clustercatalog_types.go` and
//! `clusterextension_types.go`. As in [`crate::deploy::types`], only what we set or read is
//! modelled, `None` is left out on the way out (a generated manifest carries exactly what we
//! chose), and `schema = "disabled"`: these CRDs belong to operator-controller.

use kube::CustomResource;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// API group of OLM v1's kinds.
pub const GROUP: &str = "olm.operatorframework.io";
/// The label catalogd puts on every ClusterCatalog with its own name; a ClusterExtension's
/// catalog selector uses it to pin one catalog.
pub const CATALOG_NAME_LABEL: &str = "olm.operatorframework.io/metadata.name";

/// `ClusterCatalog.spec`.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "olm.operatorframework.io",
    version = "v1",
    kind = "ClusterCatalog",
    status = "ClusterCatalogStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterCatalogSpec {
    pub source: CatalogSource,
    /// Ties between catalogs offering the same bundle go to the higher priority (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// `Available` (default) or `Unavailable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability_mode: Option<String>,
}

/// `spec.source`: only `type: Image` exists upstream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CatalogSource {
    #[serde(rename = "type")]
    pub type_: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageSource>,
}

/// `spec.source.image`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageSource {
    #[serde(rename = "ref")]
    pub ref_: String,
    /// Re-pull the tag this often; refused by the API server for a digest reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_minutes: Option<u32>,
}

/// `ClusterCatalog.status` subset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterCatalogStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_source: Option<CatalogSource>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urls: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_unpacked: Option<String>,
}

/// `ClusterExtension.spec`.
#[derive(CustomResource, Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[kube(
    group = "olm.operatorframework.io",
    version = "v1",
    kind = "ClusterExtension",
    status = "ClusterExtensionStatus",
    schema = "disabled"
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterExtensionSpec {
    /// Where the bundle's namespaced objects go.
    pub namespace: String,
    pub service_account: ServiceAccountRef,
    pub source: ExtensionSource,
}

/// `spec.serviceAccount`: the account operator-controller acts as to install the bundle.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServiceAccountRef {
    pub name: String,
}

/// `spec.source`: `sourceType: Catalog` is the only kind upstream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionSource {
    pub source_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<CatalogFilter>,
}

/// `spec.source.catalog`: which bundle of which package, from which catalogs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogFilter {
    pub package_name: String,
    /// A Masterminds semver constraint (`>=1.0.0, <2.0.0`, `1.2.x`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub channels: Vec<String>,
    /// A label selector over ClusterCatalogs, kept verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<Value>,
    /// `CatalogProvided` (default: follow the catalog's upgrade edges) or `SelfCertified`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade_constraint_policy: Option<String>,
}

/// `ClusterExtension.status` subset.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterExtensionStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub install: Option<InstallStatus>,
}

/// `status.install`: the bundle that is installed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InstallStatus {
    #[serde(default)]
    pub bundle: BundleMetadata,
}

/// `status.install.bundle`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleMetadata {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub version: String,
}

/// A `metav1.Condition`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    #[serde(rename = "type", default)]
    pub type_: String,
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The condition of `type_`, if present.
pub fn condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

impl ClusterCatalog {
    pub fn conditions(&self) -> &[Condition] {
        self.status.as_ref().map_or(&[], |s| &s.conditions)
    }
}

impl CatalogFilter {
    /// The ClusterCatalog the selector pins by its name label (how `olm` installs), if any.
    pub fn pinned_catalog(&self) -> Option<&str> {
        self.selector
            .as_ref()
            .and_then(|s| s.pointer("/matchLabels"))
            .and_then(|m| m.get(CATALOG_NAME_LABEL))
            .and_then(Value::as_str)
    }
}

impl ClusterExtension {
    /// [`CatalogFilter::pinned_catalog`] of its catalog source.
    pub fn pinned_catalog(&self) -> Option<&str> {
        self.spec.source.catalog.as_ref()?.pinned_catalog()
    }

    pub fn conditions(&self) -> &[Condition] {
        self.status.as_ref().map_or(&[], |s| &s.conditions)
    }

    /// `status.install.bundle`, once something is installed.
    pub fn installed_bundle(&self) -> Option<&BundleMetadata> {
        self.status
            .as_ref()
            .and_then(|s| s.install.as_ref())
            .map(|i| &i.bundle)
            .filter(|b| !b.name.is_empty())
    }
}
