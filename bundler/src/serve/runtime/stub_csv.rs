//! The stub ClusterServiceVersion opm serves for a bundle that carries `olm.csv.metadata`
//! instead of its manifests (operator-registry `pkg/api/model_to_api.go`).
//!
//! OLM's packageserver shows these CSVs in the console and the catalog-operator only installs
//! bundles with a `bundlePath` from their image, so the stub has to carry the display fields,
//! the package icon, the version and related images, plus an install strategy named
//! `deployment` (packageserver writes into the strategy's map and would crash on a missing one).
//! Keys follow the Go struct order of `v1alpha1.ClusterServiceVersion` so clients that diff CSV
//! JSON see what opm sends.

use serde_json::{Map, Value, json};

use crate::catalog::property::CsvMetadata;
use crate::serve::proto::cache::{PackageStub, RelatedImage};

/// What one stub CSV is made of: the bundle's name, version, `olm.csv.metadata` and related
/// images, and its package's description and icon.
#[derive(Debug, Clone, Copy)]
pub struct StubSource<'a> {
    pub name: &'a str,
    pub version: &'a str,
    pub meta: &'a CsvMetadata,
    pub related_images: &'a [RelatedImage],
    pub package: &'a PackageStub,
}

/// The CSV JSON opm synthesises for a bundle that has only `olm.csv.metadata`.
pub fn synthesize(s: &StubSource<'_>) -> String {
    let meta = s.meta;
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::String(s.name.to_string()));
    metadata.insert("creationTimestamp".into(), Value::Null);
    if !meta.labels.is_empty() {
        metadata.insert("labels".into(), Value::Object(meta.labels.clone()));
    }
    if !meta.annotations.is_empty() {
        metadata.insert(
            "annotations".into(),
            Value::Object(meta.annotations.clone()),
        );
    }

    let mut spec = Map::new();
    spec.insert(
        "install".into(),
        json!({"strategy": "deployment", "spec": {"deployments": null}}),
    );
    spec.insert("version".into(), Value::String(s.version.to_string()));
    if !meta.maturity.is_empty() {
        spec.insert("maturity".into(), Value::String(meta.maturity.clone()));
    }
    spec.insert(
        "customresourcedefinitions".into(),
        meta.crd_descriptions.clone(),
    );
    spec.insert(
        "apiservicedefinitions".into(),
        meta.api_service_definitions.clone(),
    );
    if !meta.native_apis.is_empty() {
        spec.insert("nativeAPIs".into(), Value::Array(meta.native_apis.clone()));
    }
    if !meta.min_kube_version.is_empty() {
        spec.insert(
            "minKubeVersion".into(),
            Value::String(meta.min_kube_version.clone()),
        );
    }
    spec.insert(
        "displayName".into(),
        Value::String(meta.display_name.clone()),
    );
    // opm falls back to the package description when the CSV has none.
    let description = if meta.description.is_empty() {
        s.package.description.clone()
    } else {
        meta.description.clone()
    };
    if !description.is_empty() {
        spec.insert("description".into(), Value::String(description));
    }
    if !meta.keywords.is_empty() {
        spec.insert("keywords".into(), json!(meta.keywords));
    }
    if !meta.maintainers.is_empty() {
        spec.insert("maintainers".into(), Value::Array(meta.maintainers.clone()));
    }
    spec.insert("provider".into(), meta.provider.clone());
    if !meta.links.is_empty() {
        spec.insert("links".into(), Value::Array(meta.links.clone()));
    }
    if let Some(icon) = &s.package.icon {
        spec.insert(
            "icon".into(),
            json!([{"base64data": icon.base64data, "mediatype": icon.mediatype}]),
        );
    }
    spec.insert(
        "installModes".into(),
        if meta.install_modes.is_empty() {
            Value::Null
        } else {
            Value::Array(meta.install_modes.clone())
        },
    );
    spec.insert("cleanup".into(), json!({"enabled": false}));
    if !s.related_images.is_empty() {
        let imgs: Vec<Value> = s
            .related_images
            .iter()
            .map(|r| json!({"name": r.name, "image": r.image}))
            .collect();
        spec.insert("relatedImages".into(), Value::Array(imgs));
    }

    let csv = json!({
        "kind": "ClusterServiceVersion",
        "apiVersion": "operators.coreos.com/v1alpha1",
        "metadata": Value::Object(metadata),
        "spec": Value::Object(spec),
        "status": {"cleanup": {}},
    });
    serde_json::to_string(&csv).unwrap_or_default()
}
