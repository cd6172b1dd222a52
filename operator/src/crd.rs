//! The `ReverseWordsApp` API (`apps.linuxera.org/v1alpha1`), wire-compatible with the Go
//! operator: same group, version, kind, plural and field names, so existing CRs keep working.
//!
//! The CRD is generated from these types (`ReverseWordsApp::crd()`); the schema carries the
//! validation that the Go operator lacked (replica bounds, a valid image tag) so nonsense is
//! rejected by the API server instead of failing later in a pod.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

/// API group of the custom resource.
pub const GROUP: &str = "apps.linuxera.org";
/// API version of the custom resource.
pub const VERSION: &str = "v1alpha1";
/// Most replicas a ReverseWordsApp may ask for; more is almost certainly a typo.
pub const MAX_REPLICAS: i32 = 100;
/// The tag used when `spec.appVersion` is unset.
pub const DEFAULT_APP_VERSION: &str = "latest";
/// Docker/OCI tag grammar: 1-128 chars of `[A-Za-z0-9_.-]`, not starting with `.` or `-`.
pub const TAG_PATTERN: &str = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$";

/// Desired state of a reverse-words application.
// clippy reads the repeated `type_ = "string"` of two printcolumns as a duplicated attribute.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "apps.linuxera.org",
    version = "v1alpha1",
    kind = "ReverseWordsApp",
    plural = "reversewordsapps",
    singular = "reversewordsapp",
    namespaced,
    status = "ReverseWordsAppStatus",
    shortname = "rwa",
    category = "all",
    doc = "A reverse-words web application: a Deployment and a LoadBalancer Service that the operator keeps in the declared state.",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas",
        label_selector_path = ".status.selector"
    ),
    printcolumn(
        name = "Replicas",
        type_ = "integer",
        json_path = ".spec.replicas",
        description = "Desired replicas"
    ),
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type==\"Ready\")].status",
        description = "Whether every replica is ready"
    ),
    printcolumn(
        name = "Version",
        type_ = "string",
        json_path = ".spec.appVersion",
        description = "Application image tag"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct ReverseWordsAppSpec {
    /// Number of application pods. 0 (or unset) means 1.
    #[serde(default)]
    #[schemars(range(min = 0, max = 100))]
    pub replicas: i32,

    /// Tag of the quay.io/mavazque/reversewords image to run. Defaults to `latest`.
    /// Changing it rolls the Deployment to the new version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$"))]
    pub app_version: Option<String>,
}

/// Observed state, written by the operator through the status subresource.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ReverseWordsAppStatus {
    /// Names of the application pods that are Pending or Running and not terminating.
    #[serde(default)]
    pub app_pods: Vec<String>,

    /// `Ready` and `ReverseWordsDeploymentNotReady`, as the Go operator reports them.
    #[serde(default)]
    #[x_kube(merge_strategy = ListMerge::Map(vec!["type".into()]))]
    pub conditions: Vec<Condition>,

    /// Ready replicas of the application Deployment (the scale subresource reads this).
    #[serde(default)]
    pub replicas: i32,

    /// Label selector of the application pods, in string form (for the scale subresource and HPA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,

    /// The `metadata.generation` this status was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl ReverseWordsAppSpec {
    /// Replicas to run: the Go operator treats 0 as 1, and so do we.
    pub fn effective_replicas(&self) -> i32 {
        if self.replicas <= 0 { 1 } else { self.replicas }
    }

    /// The image tag to run.
    pub fn effective_app_version(&self) -> &str {
        self.app_version.as_deref().unwrap_or(DEFAULT_APP_VERSION)
    }
}

/// Whether `tag` is a valid image tag (the same rule the CRD schema enforces).
pub fn is_valid_tag(tag: &str) -> bool {
    let bytes = tag.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && (bytes[0].is_ascii_alphanumeric() || bytes[0] == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::CustomResourceExt;
    use serde_json::json;

    fn crd_json() -> serde_json::Value {
        serde_json::to_value(ReverseWordsApp::crd()).unwrap()
    }

    #[test]
    fn crd_names_match_the_go_operator() {
        let crd = crd_json();
        assert_eq!(
            crd["metadata"]["name"],
            "reversewordsapps.apps.linuxera.org"
        );
        assert_eq!(crd["spec"]["group"], GROUP);
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(crd["spec"]["names"]["kind"], "ReverseWordsApp");
        assert_eq!(crd["spec"]["names"]["plural"], "reversewordsapps");
        assert_eq!(crd["spec"]["names"]["shortNames"], json!(["rwa"]));
        assert_eq!(crd["spec"]["versions"][0]["name"], VERSION);
    }

    #[test]
    fn crd_has_status_scale_and_printer_columns() {
        let crd = crd_json();
        let v = &crd["spec"]["versions"][0];
        assert!(v["subresources"]["status"].is_object());
        assert_eq!(
            v["subresources"]["scale"]["specReplicasPath"],
            ".spec.replicas"
        );
        assert_eq!(
            v["subresources"]["scale"]["statusReplicasPath"],
            ".status.replicas"
        );
        assert_eq!(
            v["subresources"]["scale"]["labelSelectorPath"],
            ".status.selector"
        );
        let cols: Vec<_> = v["additionalPrinterColumns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(cols, ["Replicas", "Ready", "Version", "Age"]);
    }

    #[test]
    fn crd_schema_rejects_nonsense() {
        let crd = crd_json();
        let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
        assert_eq!(spec["replicas"]["minimum"].as_f64(), Some(0.0));
        assert_eq!(
            spec["replicas"]["maximum"].as_f64(),
            Some(f64::from(MAX_REPLICAS))
        );
        assert_eq!(spec["replicas"]["format"], "int32");
        assert_eq!(spec["appVersion"]["pattern"], TAG_PATTERN);
        let status = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
            ["properties"];
        assert_eq!(status["conditions"]["x-kubernetes-list-type"], "map");
    }

    #[test]
    fn zero_replicas_means_one_and_version_defaults_to_latest() {
        let spec = ReverseWordsAppSpec::default();
        assert_eq!(spec.effective_replicas(), 1);
        assert_eq!(spec.effective_app_version(), "latest");
        let spec = ReverseWordsAppSpec {
            replicas: 3,
            app_version: Some("v0.0.2".into()),
        };
        assert_eq!(spec.effective_replicas(), 3);
        assert_eq!(spec.effective_app_version(), "v0.0.2");
    }

    #[test]
    fn go_operator_cr_deserializes() {
        let cr: ReverseWordsApp = serde_json::from_value(json!({
            "apiVersion": "apps.linuxera.org/v1alpha1", "kind": "ReverseWordsApp",
            "metadata": {"name": "example", "namespace": "ns"},
            "spec": {"replicas": 2, "appVersion": "v0.0.1"},
            "status": {"appPods": ["p1"], "conditions": []}
        }))
        .unwrap();
        assert_eq!(cr.spec.replicas, 2);
        assert_eq!(cr.status.unwrap().app_pods, ["p1"]);
    }

    #[test]
    fn tag_rule() {
        for ok in ["latest", "v0.0.1", "1.2.3-rc.1", "_x", &"a".repeat(128)] {
            assert!(is_valid_tag(ok), "{ok}");
        }
        for bad in ["", "-x", ".x", "a:b", "a/b", "a b", &"a".repeat(129)] {
            assert!(!is_valid_tag(bad), "{bad}");
        }
    }
}
