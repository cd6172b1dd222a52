//! The bundle files around the CSV: manifest file names, `metadata/annotations.yaml`,
//! `bundle.Dockerfile`, the scorecard configuration, and createdAt timestamps.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::bundle::load::keys;

/// The annotation keys this generator owns; any other key found in the committed
/// annotations.yaml (e.g. `com.redhat.openshift.versions`) is kept (operator-sdk #6787).
pub fn is_managed_annotation(key: &str) -> bool {
    key.starts_with("operators.operatorframework.io.bundle.")
        || key.starts_with("operators.operatorframework.io.test.")
}

/// The core annotations in operator-sdk's order.
pub fn core_annotations(
    package: &str,
    channels: &[String],
    default_channel: Option<&str>,
) -> Vec<(String, String)> {
    let mut v = vec![
        (keys::MEDIATYPE.to_string(), "registry+v1".to_string()),
        (keys::MANIFESTS.to_string(), "manifests/".to_string()),
        (keys::METADATA.to_string(), "metadata/".to_string()),
        (keys::PACKAGE.to_string(), package.to_string()),
        (keys::CHANNELS.to_string(), channels.join(",")),
    ];
    if let Some(d) = default_channel {
        v.push((keys::DEFAULT_CHANNEL.to_string(), d.to_string()));
    }
    v
}

pub fn test_annotations() -> Vec<(String, String)> {
    vec![
        (keys::TEST_MEDIATYPE.to_string(), "scorecard+v1".to_string()),
        (
            keys::TEST_CONFIG.to_string(),
            "tests/scorecard/".to_string(),
        ),
    ]
}

/// A YAML scalar for a map value, quoted when YAML would otherwise read something else.
fn scalar(s: &str) -> String {
    crate::yaml::to_yaml(&Value::String(s.to_string()))
        .map(|t| t.trim_end().to_string())
        .unwrap_or_else(|_| format!("{s:?}"))
}

/// `metadata/annotations.yaml` in operator-sdk's layout (comments included).
pub fn annotations_yaml(
    core: &[(String, String)],
    extra: &BTreeMap<String, String>,
    tests: &[(String, String)],
) -> String {
    let mut out = String::from("annotations:\n  # Core bundle annotations.\n");
    for (k, v) in core {
        out.push_str(&format!("  {k}: {}\n", scalar(v)));
    }
    if !extra.is_empty() {
        out.push_str("  # Other annotations (kept from the previous annotations.yaml).\n");
        for (k, v) in extra {
            out.push_str(&format!("  {}: {}\n", scalar(k), scalar(v)));
        }
    }
    if !tests.is_empty() {
        out.push_str("\n  # Annotations for testing.\n");
        for (k, v) in tests {
            out.push_str(&format!("  {k}: {}\n", scalar(v)));
        }
    }
    out
}

/// A Dockerfile LABEL value, quoted when it holds spaces or quotes.
fn label(v: &str) -> String {
    if v.is_empty() || v.contains([' ', '"', '\\', '\t', '$']) {
        format!(
            "\"{}\"",
            v.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('$', "\\$")
        )
    } else {
        v.to_string()
    }
}

/// `bundle.Dockerfile`, written inside the bundle directory so the directory is the build
/// context: `podman build -f bundle/bundle.Dockerfile bundle/`.
pub fn dockerfile(
    core: &[(String, String)],
    extra: &BTreeMap<String, String>,
    tests: &[(String, String)],
) -> String {
    let mut out = String::from("FROM scratch\n\n# Core bundle labels.\n");
    for (k, v) in core {
        out.push_str(&format!("LABEL {k}={}\n", label(v)));
    }
    for (k, v) in extra {
        out.push_str(&format!("LABEL {k}={}\n", label(v)));
    }
    if !tests.is_empty() {
        out.push_str("\n# Labels for testing.\n");
        for (k, v) in tests {
            out.push_str(&format!("LABEL {k}={}\n", label(v)));
        }
    }
    out.push_str("\n# Copy files to locations specified by labels.\nCOPY manifests /manifests/\nCOPY metadata /metadata/\n");
    if !tests.is_empty() {
        out.push_str("COPY tests/scorecard /tests/scorecard/\n");
    }
    out
}

/// The API group of the scorecard `Configuration` every operator-sdk project scaffolds.
pub const SCORECARD_GROUP: &str = "scorecard.operatorframework.io";

/// The project's scorecard `Configuration` as operator-sdk writes it to
/// `tests/scorecard/config.yaml`: read into operator-framework/api's v1alpha3 type and
/// written back, so unknown fields are dropped and every `storage` is spelled out
/// (`storage: {spec: {mountPath: {}}}` per test and at the top). `None` when it has no
/// `metadata.name`: operator-sdk skips such a config.
pub fn scorecard_config_from(cfg: &Value) -> Option<Value> {
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let name = cfg
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    if name.is_empty() {
        return None;
    }
    let storage = |v: Option<&Value>| {
        let mut mount = serde_json::Map::new();
        if let Some(p) = v
            .and_then(|s| s.pointer("/spec/mountPath/path"))
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
        {
            mount.insert("path".into(), json!(p));
        }
        json!({"spec": {"mountPath": mount}})
    };
    let non_empty = |v: Option<&Value>| {
        v.filter(|v| {
            !v.is_null()
                && v.as_array().is_none_or(|a| !a.is_empty())
                && v.as_object().is_none_or(|m| !m.is_empty())
        })
        .cloned()
    };
    let stages = cfg.get("stages").and_then(Value::as_array).map(|stages| {
        stages
            .iter()
            .map(|st| {
                let mut out = serde_json::Map::new();
                if st.get("parallel").and_then(Value::as_bool) == Some(true) {
                    out.insert("parallel".into(), json!(true));
                }
                let tests = st.get("tests").and_then(Value::as_array).map(|tests| {
                    tests
                        .iter()
                        .map(|t| {
                            let mut o = serde_json::Map::new();
                            if let Some(e) = non_empty(t.get("entrypoint")) {
                                o.insert("entrypoint".into(), e);
                            }
                            o.insert("image".into(), json!(str_of(t, "image")));
                            if let Some(l) = non_empty(t.get("labels")) {
                                o.insert("labels".into(), l);
                            }
                            o.insert("storage".into(), storage(t.get("storage")));
                            let id = str_of(t, "uniqueID");
                            if !id.is_empty() {
                                o.insert("uniqueID".into(), json!(id));
                            }
                            Value::Object(o)
                        })
                        .collect::<Vec<_>>()
                });
                out.insert("tests".into(), json!(tests));
                Value::Object(out)
            })
            .collect::<Vec<_>>()
    });
    let mut out = serde_json::Map::new();
    for k in ["apiVersion", "kind"] {
        let v = str_of(cfg, k);
        if !v.is_empty() {
            out.insert(k.into(), json!(v));
        }
    }
    out.insert("metadata".into(), json!({"name": name}));
    let sa = str_of(cfg, "serviceaccount");
    if !sa.is_empty() {
        out.insert("serviceaccount".into(), json!(sa));
    }
    out.insert("stages".into(), json!(stages));
    out.insert("storage".into(), storage(cfg.get("storage")));
    Some(Value::Object(out))
}

/// `alm-examples` as operator-sdk writes it: Go's `json.MarshalIndent` (two spaces, keys
/// sorted, `<`, `>`, `&`, U+2028 and U+2029 escaped). Those characters only occur inside
/// JSON strings, so escaping the text is escaping the strings.
pub fn alm_examples(examples: &[Value]) -> String {
    let text = serde_json::to_string_pretty(examples).unwrap_or_else(|_| "[]".into());
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
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

/// operator-sdk's default scorecard configuration: the basic spec check and the five OLM
/// checks, all run in parallel from one image.
pub fn scorecard_config(image: &str) -> Value {
    let test = |entry: &str, suite: &str, name: &str| {
        json!({
            "entrypoint": ["scorecard-test", entry],
            "image": image,
            "labels": {"suite": suite, "test": name},
            "storage": {"spec": {"mountPath": {}}},
        })
    };
    json!({
        "apiVersion": "scorecard.operatorframework.io/v1alpha3",
        "kind": "Configuration",
        "metadata": {"name": "config"},
        "stages": [{
            "parallel": true,
            "tests": [
                test("basic-check-spec", "basic", "basic-check-spec-test"),
                test("olm-bundle-validation", "olm", "olm-bundle-validation-test"),
                test("olm-crds-have-validation", "olm", "olm-crds-have-validation-test"),
                test("olm-crds-have-resources", "olm", "olm-crds-have-resources-test"),
                test("olm-spec-descriptors", "olm", "olm-spec-descriptors-test"),
                test("olm-status-descriptors", "olm", "olm-status-descriptors-test"),
            ],
        }],
        "storage": {"spec": {"mountPath": {}}},
    })
}

/// operator-sdk's manifest file names: CRDs `<group>_<plural>.yaml`, other objects
/// `<name>_<version>_<kind>.yaml` (core group) or `<name>_<group>_<version>_<kind>.yaml`.
pub fn manifest_file_name(obj: &Value) -> String {
    let s = |p: &str| obj.pointer(p).and_then(Value::as_str).unwrap_or("");
    let kind = s("/kind");
    if kind == "CustomResourceDefinition" {
        return format!("{}_{}.yaml", s("/spec/group"), s("/spec/names/plural"));
    }
    let api_version = s("/apiVersion");
    let name = s("/metadata/name");
    let kind = kind.to_lowercase();
    match api_version.rsplit_once('/') {
        Some((group, version)) => format!("{name}_{group}_{version}_{kind}.yaml"),
        None => format!("{name}_{api_version}_{kind}.yaml"),
    }
}

/// Sorts map keys at every level: output independent of input key order.
pub fn sort_keys(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = std::mem::take(map).into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            for (k, mut val) in entries {
                sort_keys(&mut val);
                map.insert(k, val);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(sort_keys),
        _ => {}
    }
}

/// `createdAt` for content that changed: `SOURCE_DATE_EPOCH` when set (reproducible builds,
/// parsed as for image configs), else the current time.
pub fn created_at_for_new_content() -> Result<String, crate::reproducible::EpochError> {
    let set = std::env::var("SOURCE_DATE_EPOCH").is_ok_and(|v| !v.trim().is_empty());
    let secs = if set {
        crate::reproducible::source_date_epoch()?
    } else {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    };
    Ok(crate::reproducible::rfc3339(secs))
}

/// RFC 3339 UTC (`2026-11-21T22:14:01Z`) from seconds since the epoch, without a date crate.
pub fn rfc3339_utc(secs: i64) -> String {
    // Times before 1970 cannot come from SOURCE_DATE_EPOCH or the clock; clamp rather than wrap.
    crate::reproducible::rfc3339(u64::try_from(secs).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_utc(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339_utc(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn file_names_follow_operator_sdk() {
        let crd = json!({"kind": "CustomResourceDefinition", "spec": {"group": "apps.example.com", "names": {"plural": "widgets"}}});
        assert_eq!(manifest_file_name(&crd), "apps.example.com_widgets.yaml");
        let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "m"}});
        assert_eq!(manifest_file_name(&svc), "m_v1_service.yaml");
        let cr = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"}});
        assert_eq!(
            manifest_file_name(&cr),
            "r_rbac.authorization.k8s.io_v1_clusterrole.yaml"
        );
    }
}
