//! FBC to a catalog template, as `opm alpha convert-template` (operator-registry
//! `alpha/template/converter`): every blob of the input is kept as written; a `basic` template
//! shrinks each `olm.bundle` to its `schema` and `image` (rendering the template renders the
//! image again), a `substitutes` template keeps the bundles whole and starts with no
//! substitutions.

use std::path::Path;

use serde_json::{Map, Value};

use super::declcfg::SCHEMA_BUNDLE;
use super::template::{SCHEMA_BASIC, SCHEMA_SUBSTITUTES};

/// The template kinds FBC can be converted to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    Basic,
    Substitutes,
}

#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error(transparent)]
    Yaml(#[from] crate::yaml::YamlError),
    #[error("{path}: blob {index}: {message}")]
    Blob {
        path: String,
        index: usize,
        message: String,
    },
    #[error("cannot write YAML: {0}")]
    Write(#[from] serde_saphyr::SerializeError),
}

/// Reads the blobs of one FBC file (a YAML stream or a stream of JSON objects), in file order.
pub fn read_blobs(path: &Path) -> Result<Vec<Value>, ConvertError> {
    let bytes = crate::yaml::read_file(path)?;
    let blob_err = |index: usize, message: String| ConvertError::Blob {
        path: path.display().to_string(),
        index,
        message,
    };
    let mut blobs = Vec::new();
    // As opm reads it: a JSON stream, or YAML documents (Go's rules for both).
    for chunk in crate::yaml::documents(path, &bytes) {
        let chunk = chunk?;
        let line = chunk.line();
        let v = chunk
            .value()
            .map_err(|e| blob_err(blobs.len() + 1, format!("document at line {line}: {e}")))?;
        if !v.is_null() {
            blobs.push(v);
        }
    }
    for (i, b) in blobs.iter().enumerate() {
        let schema = b.get("schema").and_then(Value::as_str).unwrap_or("");
        if schema.is_empty() {
            return Err(blob_err(
                i + 1,
                "not a catalog blob (no `schema` field)".into(),
            ));
        }
    }
    Ok(blobs)
}

/// The template for `blobs`, as opm's converter builds it (field order: schema, entries,
/// then substitutions).
pub fn to_template(kind: TargetKind, blobs: Vec<Value>) -> Value {
    let mut m = Map::new();
    let entries: Vec<Value> = match kind {
        TargetKind::Basic => blobs
            .into_iter()
            .map(|b| {
                if b.get("schema").and_then(Value::as_str) != Some(SCHEMA_BUNDLE) {
                    return b;
                }
                let mut only = Map::new();
                only.insert("schema".into(), SCHEMA_BUNDLE.into());
                // Go's Bundle.Image has no omitempty: an empty image is written too.
                let image = b.get("image").and_then(Value::as_str).unwrap_or("");
                only.insert("image".into(), image.into());
                Value::Object(only)
            })
            .collect(),
        TargetKind::Substitutes => blobs,
    };
    m.insert(
        "schema".into(),
        match kind {
            TargetKind::Basic => SCHEMA_BASIC,
            TargetKind::Substitutes => SCHEMA_SUBSTITUTES,
        }
        .into(),
    );
    m.insert("entries".into(), Value::Array(entries));
    if kind == TargetKind::Substitutes {
        m.insert("substitutions".into(), Value::Array(Vec::new()));
    }
    Value::Object(m)
}

/// The template as opm prints it with `-o json`: Go's `json.MarshalIndent` with four spaces
/// (blob keys sorted, `<`, `>` and `&` escaped as Go does) and a final newline.
pub fn to_json(template: &Value) -> String {
    let mut out = go_escape_html(&super::declcfg::json_pretty4(&sort_blob_keys(template)));
    out.push('\n');
    out
}

/// The template as opm prints it with `-o yaml`: `---`, the document with sorted keys, and
/// the extra newline of Go's `Println`.
pub fn to_yaml(template: &Value) -> Result<String, ConvertError> {
    // go-yaml v2's emitter, as sigs.k8s.io/yaml drives it (keys in its natural order).
    let doc = super::goyaml::to_string(template);
    Ok(format!("---\n{doc}\n"))
}

/// Blobs come back from opm's YAML-to-JSON step with sorted keys; the template's own fields
/// (and a shrunk bundle's `schema`, `image`) keep their struct order.
fn sort_blob_keys(template: &Value) -> Value {
    let mut t = template.clone();
    if let Some(entries) = t.get_mut("entries").and_then(Value::as_array_mut) {
        for e in entries.iter_mut() {
            let shrunk = e.as_object().is_some_and(|o| {
                o.len() <= 2 && o.get("schema").and_then(Value::as_str) == Some(SCHEMA_BUNDLE)
            }) && template.get("schema").and_then(Value::as_str) == Some(SCHEMA_BASIC);
            if !shrunk {
                *e = super::declcfg::sort_keys(std::mem::take(e));
            }
        }
    }
    t
}

/// Go's `encoding/json` escapes these inside strings (outside strings they cannot occur).
fn go_escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_keeps_bundle_schema_and_image_only() {
        let blobs = vec![
            serde_json::json!({"schema": "olm.package", "name": "a", "defaultChannel": "s"}),
            serde_json::json!({"schema": "olm.bundle", "name": "a.v1", "image": "q/a:1", "properties": []}),
        ];
        let t = to_template(TargetKind::Basic, blobs);
        assert_eq!(
            t["entries"][1],
            serde_json::json!({"schema": "olm.bundle", "image": "q/a:1"})
        );
        let json = to_json(&t);
        assert!(
            json.starts_with("{\n    \"schema\": \"olm.template.basic\",\n    \"entries\": [\n        {\n            \"defaultChannel\": \"s\","),
            "{json}"
        );
        assert!(json.contains("\"schema\": \"olm.bundle\",\n            \"image\": \"q/a:1\""));
    }

    #[test]
    fn substitutes_keep_bundles_and_start_empty() {
        let blobs =
            vec![serde_json::json!({"schema": "olm.bundle", "name": "a.v1", "image": "q/a:1"})];
        let t = to_template(TargetKind::Substitutes, blobs);
        assert_eq!(t["entries"][0]["name"], "a.v1");
        assert!(to_json(&t).ends_with("    \"substitutions\": []\n}\n"));
        assert_eq!(go_escape_html("<a & b>"), "\\u003ca \\u0026 b\\u003e");
    }
}
