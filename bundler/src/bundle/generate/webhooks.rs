//! Admission and conversion webhooks, as operator-sdk's CSV generator turns them into
//! `webhookdefinitions`: the `ValidatingWebhookConfiguration` and
//! `MutatingWebhookConfiguration` objects are folded into the CSV (OLM creates them), the
//! webhook Service stays a manifest of its own, and CRD conversion webhooks become
//! `ConversionWebhook` definitions. Definitions are sorted by `generateName`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use super::GenerateError;
use super::input::SourceObject;

/// The webhook definitions and which input objects they replace.
#[derive(Debug, Default)]
pub struct Webhooks {
    pub definitions: Vec<Value>,
    pub consumed: BTreeSet<usize>,
    pub warnings: Vec<String>,
}

/// The Service a webhook's clientConfig names, if it is among the manifests.
fn find_service<'a>(objects: &'a [SourceObject], name: &str) -> Option<&'a SourceObject> {
    objects
        .iter()
        .find(|o| o.kind() == "Service" && o.name() == name)
}

/// The first Deployment whose pod labels match every selector entry of `svc`.
fn deployment_of(svc: &SourceObject, deployments: &[&SourceObject]) -> Option<String> {
    let empty = Map::new();
    let selector = svc
        .object
        .pointer("/spec/selector")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    deployments
        .iter()
        .find(|d| {
            d.object
                .pointer("/spec/template/metadata/labels")
                .and_then(Value::as_object)
                .is_some_and(|l| !l.is_empty() && selector.iter().all(|(k, v)| l.get(k) == Some(v)))
        })
        .map(|d| d.name().to_string())
}

/// `containerPort` and `targetPort` from the Service port the webhook calls (443 unless
/// the reference names one); none when the Service or the port is not there.
fn ports(svc: Option<&SourceObject>, port: i64, out: &mut Map<String, Value>) {
    let Some(p) = svc
        .and_then(|s| s.object.pointer("/spec/ports"))
        .and_then(Value::as_array)
        .and_then(|ports| {
            ports
                .iter()
                .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
        })
    else {
        return;
    };
    out.insert("containerPort".into(), json!(port));
    out.insert(
        "targetPort".into(),
        p.get("targetPort").cloned().unwrap_or_else(|| json!(port)),
    );
}

/// operator-sdk names a webhook's Deployment after the Service's selector, else after the
/// Service (`<name>-service` minus the suffix).
fn deployment_name(
    svc: Option<&SourceObject>,
    deployments: &[&SourceObject],
    name: &str,
) -> String {
    let selects = svc.filter(|s| {
        s.object.pointer("/spec/type").and_then(Value::as_str) != Some("ExternalName")
            && s.object
                .pointer("/spec/selector")
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
    });
    selects
        .and_then(|s| deployment_of(s, deployments))
        .unwrap_or_else(|| name.strip_suffix("-service").unwrap_or(name).to_string())
}

pub fn collect(
    objects: &[SourceObject],
    deployments: &[&SourceObject],
) -> Result<Webhooks, GenerateError> {
    let mut out = Webhooks::default();
    for (i, o) in objects.iter().enumerate() {
        let (ty, mutating) = match o.kind() {
            "ValidatingWebhookConfiguration" => ("ValidatingAdmissionWebhook", false),
            "MutatingWebhookConfiguration" => ("MutatingAdmissionWebhook", true),
            _ => continue,
        };
        out.consumed.insert(i);
        let hooks = o
            .object
            .get("webhooks")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for (j, w) in hooks.iter().enumerate() {
            let Some(service) = w.pointer("/clientConfig/service") else {
                return Err(GenerateError::Input {
                    origin: o.source.clone(),
                    message: format!(
                        "{} {} webhooks[{j}]: only clientConfig.service is supported (OLM routes webhooks to the operator's Deployment)",
                        o.kind(),
                        o.name()
                    ),
                });
            };
            let name = service.get("name").and_then(Value::as_str).unwrap_or("");
            let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
            let svc = find_service(objects, name);
            let mut d = Map::new();
            d.insert("type".into(), json!(ty));
            d.insert(
                "generateName".into(),
                w.get("name").cloned().unwrap_or(Value::Null),
            );
            let mut keys = vec![
                "rules",
                "failurePolicy",
                "matchPolicy",
                "objectSelector",
                "sideEffects",
                "timeoutSeconds",
                "admissionReviewVersions",
            ];
            if mutating {
                keys.push("reinvocationPolicy");
            }
            for key in keys {
                if let Some(v) = w
                    .get(key)
                    .filter(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
                {
                    d.insert(key.into(), v.clone());
                }
            }
            // operator-sdk's defaults for what the webhook leaves out.
            d.entry("admissionReviewVersions")
                .or_insert_with(|| json!(["v1beta1"]));
            d.entry("sideEffects").or_insert_with(|| json!("None"));
            ports(svc, port, &mut d);
            d.insert(
                "deploymentName".into(),
                json!(deployment_name(svc, deployments, name)),
            );
            if let Some(path) = service.get("path") {
                d.insert("webhookPath".into(), path.clone());
            }
            out.definitions.push(Value::Object(d));
        }
    }

    // Conversion webhooks: per Service among the manifests, one definition per (port, path)
    // with all the CRDs converted there.
    let mut served = BTreeSet::new();
    for svc in objects.iter().filter(|o| o.kind() == "Service") {
        let mut groups: BTreeMap<(i64, String), (Value, Vec<String>)> = BTreeMap::new();
        for crd in objects
            .iter()
            .filter(|o| o.kind() == "CustomResourceDefinition")
        {
            let Some((service, review)) = conversion_service(crd) else {
                continue;
            };
            if service.get("name").and_then(Value::as_str) != Some(svc.name()) {
                continue;
            }
            served.insert(crd.name().to_string());
            let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
            let path = service
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            groups
                .entry((port, path))
                .or_insert_with(|| (review, Vec::new()))
                .1
                .push(crd.name().to_string());
        }
        for ((port, path), (review, mut crds)) in groups {
            crds.sort();
            let generate_name = format!(
                "c{}.kb.io",
                crds.iter()
                    .filter(|c| !c.is_empty())
                    .map(|c| c.split('.').next().unwrap_or(""))
                    .collect::<String>()
            );
            let mut d = Map::new();
            d.insert("type".into(), json!("ConversionWebhook"));
            d.insert("conversionCRDs".into(), json!(crds));
            if review.as_array().is_some_and(|a| !a.is_empty()) {
                d.insert("admissionReviewVersions".into(), review);
            }
            d.insert("generateName".into(), json!(generate_name));
            d.insert("sideEffects".into(), json!("None"));
            ports(Some(svc), port, &mut d);
            d.insert(
                "deploymentName".into(),
                json!(deployment_of(svc, deployments).unwrap_or_else(|| {
                    svc.name()
                        .strip_suffix("-service")
                        .unwrap_or(svc.name())
                        .to_string()
                })),
            );
            d.insert("webhookPath".into(), json!(path));
            out.definitions.push(Value::Object(d));
        }
    }
    for crd in objects
        .iter()
        .filter(|o| o.kind() == "CustomResourceDefinition" && !served.contains(o.name()))
    {
        if let Some((service, _)) = conversion_service(crd) {
            out.warnings.push(format!(
                "{}: CRD {} converts through Service {:?}, which is not among the manifests; no ConversionWebhook definition written (as operator-sdk)",
                crd.source,
                crd.name(),
                service.get("name").and_then(Value::as_str).unwrap_or("")
            ));
        }
    }
    out.definitions.sort_by(|a, b| {
        let n = |v: &Value| {
            v.get("generateName")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        n(a).cmp(&n(b))
    });
    Ok(out)
}

/// The Service reference and review versions of a CRD's conversion webhook (v1 and v1beta1).
fn conversion_service(crd: &SourceObject) -> Option<(Value, Value)> {
    let conv = crd.object.pointer("/spec/conversion")?;
    let v1 = conv
        .pointer("/webhook/clientConfig/service")
        .map(|s| (s, conv.pointer("/webhook/conversionReviewVersions")));
    let v1beta1 = conv
        .pointer("/webhookClientConfig/service")
        .map(|s| (s, conv.get("conversionReviewVersions")));
    let (service, review) = v1.or(v1beta1)?;
    Some((service.clone(), review.cloned().unwrap_or(Value::Null)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> SourceObject {
        SourceObject {
            source: "s.yaml:1".into(),
            object: v,
        }
    }

    fn crd(name: &str) -> SourceObject {
        obj(
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": name},
            "spec": {"conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": {"service": {"name": "op-webhook-service", "path": "/convert"}},
                "conversionReviewVersions": ["v1"]}}}}),
        )
    }

    #[test]
    fn definitions_follow_operator_sdk() {
        let dep = obj(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "op-controller-manager"},
            "spec": {"template": {"metadata": {"labels": {"control-plane": "controller-manager"}}}}}),
        );
        let objects = vec![
            crd("zebras.example.com"),
            crd("apples.example.com"),
            obj(
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "op-webhook-service"},
                "spec": {"ports": [{"port": 443, "targetPort": 9443}], "selector": {"control-plane": "controller-manager"}}}),
            ),
            obj(
                json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": "v"},
                "webhooks": [{"name": "vzebra.kb.io", "clientConfig": {"service": {"name": "other-service", "port": 8443}}}]}),
            ),
            dep.clone(),
        ];
        let hooks = collect(&objects, &[&dep]).unwrap();
        assert_eq!(hooks.consumed.len(), 1, "only the webhook configuration");
        assert_eq!(
            hooks.definitions,
            vec![
                // Sorted by generateName; every CRD converted at one (port, path) in one entry.
                json!({"type": "ConversionWebhook", "conversionCRDs": ["apples.example.com", "zebras.example.com"],
                    "admissionReviewVersions": ["v1"], "generateName": "cappleszebras.kb.io",
                    "sideEffects": "None", "containerPort": 443, "targetPort": 9443,
                    "deploymentName": "op-controller-manager", "webhookPath": "/convert"}),
                // No such Service: defaults, no ports, the Deployment named after the Service.
                json!({"type": "ValidatingAdmissionWebhook", "generateName": "vzebra.kb.io",
                    "admissionReviewVersions": ["v1beta1"], "sideEffects": "None", "deploymentName": "other"}),
            ]
        );
    }
}
