//! Supported kinds and object metadata: every object in manifests/ must be a kind OLM can
//! install from a registry+v1 bundle, and must be applicable (`kubectl`-able) as written.

use serde_json::Value;

use super::{Ctx, Finding};
use crate::bundle::kinds;
use crate::grammar::k8s_names;

const V: &str = "objects";

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for m in &ctx.bundle.manifests {
        let f = |check, msg: String| Finding::error(V, check, msg).file(m.file.clone());
        if !m.object.is_object() {
            out.push(f(
                "object",
                format!(
                    "expected a Kubernetes object (a map), found {}",
                    super::v::type_name(&m.object)
                ),
            ));
            continue;
        }
        match m.object.get("apiVersion") {
            Some(Value::String(s)) if !s.is_empty() => {}
            _ => out.push(f("object", "'apiVersion' is missing".into()).field("apiVersion")),
        }
        let kind = match m.object.get("kind") {
            Some(Value::String(s)) if !s.is_empty() => s.as_str(),
            _ => {
                out.push(f("object", "'kind' is missing".into()).field("kind"));
                continue;
            }
        };
        if !kinds::is_supported(kind) {
            out.push(
                f("supported-kinds", format!("{kind} is not supported type for registryV1 bundle: {}", m.file.display()))
                    .field("kind")
                    .hint(format!(
                        "OLM installs only these kinds from a bundle: {}. Workloads belong in the CSV's install strategy; other objects must be created by the operator",
                        kinds::supported_list()
                    )),
            );
            continue;
        }
        if kind != "ClusterServiceVersion" && kind != "CustomResourceDefinition" {
            // The reference reads a namespace that is not a string as none: OLM then installs
            // the object into the operator's namespace. Worth a warning, not a failure.
            if let Some(ns) = m
                .object
                .pointer("/metadata/namespace")
                .filter(|v| !v.is_string() && !v.is_null())
            {
                out.push(
                    Finding::warning(
                        V,
                        "object-metadata",
                        format!(
                            "metadata.namespace is {}, not a string: OLM reads it as no namespace and installs the object into the operator's",
                            super::v::type_name(ns)
                        ),
                    )
                    .file(m.file.clone())
                    .field("metadata.namespace")
                    .hint("quote the namespace, or leave it out (OLM sets it)"),
                );
            }
            out.extend(object_meta(&m.object).into_iter().map(|(field, msg)| {
                f(
                    "object-metadata",
                    format!("error validating object metadata: {msg}"),
                )
                .field(field)
            }));
        }
    }
    out
}

/// Kubernetes `ValidateObjectMeta` for objects applied as-is: name present, namespace a DNS
/// label, label and annotation keys qualified names, label values valid.
pub fn object_meta(obj: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let meta = obj.get("metadata").unwrap_or(&Value::Null);
    if !meta.is_object() {
        out.push((
            "metadata".into(),
            "metadata: Required value: a map with at least `name`".into(),
        ));
        return out;
    }
    let name = meta.get("name").and_then(Value::as_str).unwrap_or("");
    let generate_name = meta
        .get("generateName")
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() && generate_name.is_empty() {
        out.push((
            "metadata.name".into(),
            "metadata.name: Required value: name or generateName is required".into(),
        ));
    }
    // A non-string namespace is read as none (a warning of the objects suite).
    for key in ["name", "generateName"] {
        if let Some(v) = meta.get(key)
            && !v.is_string()
            && !v.is_null()
        {
            out.push((
                format!("metadata.{key}"),
                format!(
                    "metadata.{key}: must be a string, found {}",
                    super::v::type_name(v)
                ),
            ));
        }
    }
    if let Some(ns) = meta.get("namespace").and_then(Value::as_str)
        && !ns.is_empty()
    {
        for e in k8s_names::dns1123_label(ns) {
            out.push((
                "metadata.namespace".into(),
                format!("metadata.namespace: Invalid value: {ns:?}: {e}"),
            ));
        }
    }
    for (key, check_values) in [("labels", true), ("annotations", false)] {
        match meta.get(key) {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (k, v) in map {
                    for e in k8s_names::qualified_name(k) {
                        out.push((
                            format!("metadata.{key}"),
                            format!("metadata.{key}: Invalid value: {k:?}: {e}"),
                        ));
                    }
                    match v {
                        Value::String(s) if check_values => {
                            for e in k8s_names::label_value(s) {
                                out.push((
                                    format!("metadata.{key}[{k}]"),
                                    format!("metadata.{key}: Invalid value: {s:?}: {e}"),
                                ));
                            }
                        }
                        Value::String(_) => {}
                        other => out.push((
                            format!("metadata.{key}[{k}]"),
                            format!(
                                "metadata.{key}[{k}]: must be a string, found {} (quote it)",
                                super::v::type_name(other)
                            ),
                        )),
                    }
                }
            }
            Some(other) => out.push((
                format!("metadata.{key}"),
                format!(
                    "metadata.{key}: must be a map, found {}",
                    super::v::type_name(other)
                ),
            )),
        }
    }
    out
}
