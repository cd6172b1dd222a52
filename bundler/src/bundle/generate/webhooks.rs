//! Admission and conversion webhooks: OLM owns webhook configurations, their Service and
//! their certificates, so the operator's `ValidatingWebhookConfiguration`,
//! `MutatingWebhookConfiguration` and CRD conversion settings become CSV
//! `webhookdefinitions`, and the Service and cert-manager objects behind them are dropped.

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

/// The Service port a webhook calls, resolved to (deployment, containerPort, targetPort).
fn resolve_service(
    objects: &[SourceObject],
    deployments: &[&SourceObject],
    service: &Value,
) -> (Option<usize>, String, i64, Value) {
    let name = service.get("name").and_then(Value::as_str).unwrap_or("");
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
    let svc = objects
        .iter()
        .position(|o| o.kind() == "Service" && o.name() == name);
    let mut deployment = deployments
        .first()
        .map(|d| d.name().to_string())
        .unwrap_or_default();
    let mut target = json!(port);
    if let Some(i) = svc {
        let s = &objects[i].object;
        if let Some(sel) = s.pointer("/spec/selector").and_then(Value::as_object)
            && let Some(d) = deployments.iter().find(|d| {
                let labels = d
                    .object
                    .pointer("/spec/template/metadata/labels")
                    .and_then(Value::as_object);
                labels.is_some_and(|l| sel.iter().all(|(k, v)| l.get(k) == Some(v)))
            })
        {
            deployment = d.name().to_string();
        }
        if let Some(p) = s
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .and_then(|ports| {
                ports
                    .iter()
                    .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
                    .or(ports.first())
            })
        {
            target = p.get("targetPort").cloned().unwrap_or_else(|| json!(port));
        }
    }
    (svc, deployment, port, target)
}

pub fn collect(
    objects: &[SourceObject],
    deployments: &[&SourceObject],
) -> Result<Webhooks, GenerateError> {
    let mut out = Webhooks::default();
    for (i, o) in objects.iter().enumerate() {
        let ty = match o.kind() {
            "ValidatingWebhookConfiguration" => "ValidatingAdmissionWebhook",
            "MutatingWebhookConfiguration" => "MutatingAdmissionWebhook",
            "Certificate" | "Issuer" if o.group() == "cert-manager.io" => {
                out.consumed.insert(i);
                out.warnings.push(format!(
                    "{}: cert-manager {} {} dropped: OLM issues webhook certificates itself",
                    o.source,
                    o.kind(),
                    o.name()
                ));
                continue;
            }
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
            let (svc, deployment, port, target) = resolve_service(objects, deployments, service);
            if let Some(s) = svc {
                out.consumed.insert(s);
            }
            let mut d = Map::new();
            d.insert("type".into(), json!(ty));
            d.insert(
                "generateName".into(),
                w.get("name").cloned().unwrap_or(Value::Null),
            );
            d.insert("deploymentName".into(), json!(deployment));
            d.insert("containerPort".into(), json!(port));
            d.insert("targetPort".into(), target);
            for key in [
                "admissionReviewVersions",
                "sideEffects",
                "failurePolicy",
                "matchPolicy",
                "objectSelector",
                "rules",
                "timeoutSeconds",
                "reinvocationPolicy",
            ] {
                if let Some(v) = w.get(key).filter(|v| !v.is_null()) {
                    d.insert(key.into(), v.clone());
                }
            }
            if let Some(path) = service.get("path") {
                d.insert("webhookPath".into(), path.clone());
            }
            out.definitions.push(Value::Object(d));
        }
    }

    // Conversion webhooks, one definition per (service, path) with all its CRDs.
    let mut conversions: BTreeMap<(String, String), (Value, Vec<String>)> = BTreeMap::new();
    for o in objects
        .iter()
        .filter(|o| o.kind() == "CustomResourceDefinition")
    {
        if o.object
            .pointer("/spec/conversion/strategy")
            .and_then(Value::as_str)
            != Some("Webhook")
        {
            continue;
        }
        let webhook = o
            .object
            .pointer("/spec/conversion/webhook")
            .cloned()
            .unwrap_or(Value::Null);
        let service = webhook
            .pointer("/clientConfig/service")
            .cloned()
            .unwrap_or(Value::Null);
        let key = (
            service
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            service
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("/convert")
                .to_string(),
        );
        conversions
            .entry(key)
            .or_insert_with(|| (webhook.clone(), Vec::new()))
            .1
            .push(o.name().to_string());
    }
    for ((_, path), (webhook, crds)) in conversions {
        let service = webhook
            .pointer("/clientConfig/service")
            .cloned()
            .unwrap_or(Value::Null);
        let (svc, deployment, port, target) = resolve_service(objects, deployments, &service);
        if let Some(s) = svc {
            out.consumed.insert(s);
        }
        let plural = crds
            .first()
            .and_then(|c| c.split('.').next())
            .unwrap_or("conversion");
        let versions = webhook
            .get("conversionReviewVersions")
            .cloned()
            .unwrap_or_else(|| json!(["v1"]));
        out.definitions.push(json!({
            "admissionReviewVersions": versions,
            "containerPort": port,
            "conversionCRDs": crds,
            "deploymentName": deployment,
            "generateName": format!("c{plural}.kb.io"),
            "sideEffects": "None",
            "targetPort": target,
            "type": "ConversionWebhook",
            "webhookPath": path,
        }));
    }
    Ok(out)
}
