//! The community-operators checks (operator-framework/api `internal/community.go`, optional
//! validator `community`): a bundle that still uses APIs Kubernetes 1.22 removed must not be
//! offered on OpenShift 4.9 and later, either through `olm.maxOpenShiftVersion` (< 4.9) in
//! the CSV's `olm.properties` annotation, or through the `com.redhat.openshift.versions` label
//! of its index image's Dockerfile (`--optional-values index-path=<file>`).

use std::path::Path;

use serde_json::Value;

use super::{Ctx, Finding};
use crate::grammar::semver_range;

const V: &str = "community";
const MAX_OCP: &str = "olm.maxOpenShiftVersion";
const OCP_LABEL: &str = "com.redhat.openshift.versions";
/// The first OpenShift version without the APIs Kubernetes 1.22 removed.
const OCP_WITHOUT_V1BETA1: &str = "4.9";
const REMOVED_1_22: &str = "using APIs which were deprecated and removed in v1.22. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22";

pub fn validate(ctx: &Ctx<'_>, index_path: Option<&Path>) -> Vec<Finding> {
    let Some(csv) = ctx.csv else {
        return Vec::new();
    };
    let Some(apis) = super::deprecated_apis::removed(ctx).list(22) else {
        return Vec::new();
    };
    let name = csv.name();
    let error = |check: &'static str, msg: String| {
        Finding::error(V, check, format!("({name}) {msg}"))
            .in_file(ctx.csv)
            .field("metadata.annotations[olm.properties]")
    };
    let mut out = Vec::new();
    if let Some(msg) = max_openshift_version(&csv.object, &apis) {
        out.push(error("max-openshift-version", msg).hint(format!(
            "migrate the APIs, or add `olm.properties: '[{{\"type\": \"{MAX_OCP}\", \"value\": \"4.8\"}}]'` to the CSV's annotations"
        )));
    }
    match index_path {
        None => out.push(
            Finding::warning(
                V,
                "openshift-versions-label",
                format!(
                    "({name}) please, inform the path of its index image file via the the optional key values and the key index-path to allow this validator check the labels configuration or migrate the API(s) for {apis}. (e.g. index-path=./mypath/bundle.Dockerfile). This bundle is {REMOVED_1_22} "
                ),
            )
            .in_file(ctx.csv)
            .hint("`--optional-values index-path=bundle.Dockerfile` checks its com.redhat.openshift.versions label"),
        ),
        Some(path) => {
            if let Some(msg) = openshift_versions_label(path, &apis) {
                out.push(
                    Finding::error(V, "openshift-versions-label", format!("({name}) {msg}"))
                        .file(path.to_path_buf())
                        .hint(format!("label the image `{OCP_LABEL}=\"v4.6-v4.8\"`, below 4.9")),
                );
            }
        }
    }
    out
}

fn parse_tolerant(v: &str) -> Option<semver::Version> {
    semver_range::parse_version_tolerant(v).ok()
}

fn ocp_floor() -> semver::Version {
    semver::Version::new(4, 9, 0)
}

/// `checkMaxOpenShiftVersion`: the problem with the CSV's `olm.maxOpenShiftVersion`, if any.
fn max_openshift_version(csv: &Value, apis: &str) -> Option<String> {
    let v = OCP_WITHOUT_V1BETA1;
    let properties = csv
        .pointer("/metadata/annotations/olm.properties")
        .and_then(Value::as_str)
        .unwrap_or("");
    if properties.is_empty() {
        return Some(format!(
            "csv.Annotations not specified {MAX_OCP} for an OCP version < {v}. This annotation is required to prevent the user from upgrading their OCP cluster before they have installed a version of their operator which is compatible with {v}. This bundle is {REMOVED_1_22} which are no longer supported on {v}. Migrate the API(s) for {apis} or use the annotation"
        ));
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        #[serde(rename = "type", default)]
        ty: String,
        #[serde(default)]
        value: String,
    }
    let Ok(list) = serde_json::from_str::<Vec<Entry>>(properties) else {
        return Some(format!(
            "csv.Annotations has an invalid value specified for olm.properties. Please, check the value  ({properties}) and ensure that it is an array such as: \"olm.properties\": '[{{\"type\": \"key name\", \"value\": \"key value\"}}]'"
        ));
    };
    let Some(max) = list.iter().find(|e| e.ty == MAX_OCP) else {
        return Some(format!(
            "csv.Annotations.olm.properties with the key `{MAX_OCP}` and a value with an OCP version which is < {v} is required for any operator bundle that is {REMOVED_1_22}. Migrate the API(s) for {apis} or use the annotation"
        ));
    };
    let Some(parsed) = parse_tolerant(&max.value) else {
        return Some(format!(
            "csv.Annotations.olm.properties has an invalid value.Unable to parse ({}) using semver",
            max.value
        ));
    };
    (parsed >= ocp_floor()).then(|| {
        format!(
            "csv.Annotations.olm.properties with the key and value for {MAX_OCP} has the OCP version value {} which is >= of {v}. This bundle is {REMOVED_1_22}. Migrate the API(s) for {apis} or inform in this property an OCP version which is < {v}",
            max.value
        )
    })
}

/// `validateImageFile`: the problem with the index image's `com.redhat.openshift.versions`
/// label, read line by line from its Dockerfile as the reference reads it.
fn openshift_versions_label(path: &Path, apis: &str) -> Option<String> {
    let shown = path.display();
    // host: index-path, a file the user named
    if path.is_dir() {
        return Some(format!(
            "the index image in the path ({shown}) is not file. Please, inform the path of its index image via the the optional key values and the key index-path. (e.g. index-path=./mypath/bundle.Dockerfile). The value informed is a diretory and not a file"
        ));
    }
    // host: as above
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return Some(format!(
                "the index image in the path ({shown}) was not found. Please, inform the path of the bundle operator index image via the the optional key values and the key index-path. (e.g. index-path=./mypath/bundle.Dockerfile). Error : {e}"
            ));
        }
    };
    let Some(line) = text.split('\n').find(|l| l.contains(OCP_LABEL)) else {
        return Some(format!(
            "this bundle is {REMOVED_1_22}. Migrate the APIs for {apis} or provide compatible version(s) via the labels. (e.g. LABEL {OCP_LABEL}='4.6-4.8')"
        ));
    };
    if !line.contains('=') {
        return Some(format!(
            "invalid syntax ({line}) on the LABEL {OCP_LABEL}. Migrate the API(s) for {apis} or use the OCP labels. (e.g. LABEL {OCP_LABEL}='4.6-4.8')"
        ));
    }
    let range = line
        .split('=')
        .nth(1)
        .unwrap_or("")
        .replace(['\'', '"'], "");
    if range.len() <= 1 {
        return Some(format!("unable to get the range informed on {OCP_LABEL}"));
    }
    let (version, dashed) = if range.contains('=') {
        (range.split('=').nth(1).unwrap_or(""), false)
    } else if let Some(v) = range.split('-').nth(1) {
        (v, true)
    } else {
        return Some(format!(
            "this bundle is {apis}. The {range} allows to distribute it on >= {OCP_WITHOUT_V1BETA1}. Migrate the API(s) for {apis} or provide comatible version(s) via the labels. (e.g. LABEL {OCP_LABEL}='4.6-4.8')"
        ));
    };
    let Some(parsed) = parse_tolerant(version) else {
        return Some(format!(
            "unable to parse the value ({version}) on ({OCP_LABEL})"
        ));
    };
    (parsed >= ocp_floor()).then(|| {
        if dashed {
            format!(
                "this bundle is {REMOVED_1_22}. Upgrade the APIs from (v1beta1) to (v1) for {apis} or provide com[atible version(s) via the labels. (e.g. LABEL {OCP_LABEL}='4.6-4.8')"
            )
        } else {
            format!(
                "this bundle is {REMOVED_1_22}. Migrate the API(s) for {apis} or use the OCP labels for compatible version(s). (e.g. LABEL {OCP_LABEL}='=v4.8')"
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(annotation: Option<&str>) -> Value {
        match annotation {
            Some(a) => serde_json::json!({"metadata": {"annotations": {"olm.properties": a}}}),
            None => serde_json::json!({"metadata": {}}),
        }
    }

    #[test]
    fn max_openshift_version_must_be_below_4_9() {
        let apis = "CRD: ([\"a.b\"])";
        let none = max_openshift_version(&csv(None), apis).unwrap();
        assert!(
            none.starts_with(
                "csv.Annotations not specified olm.maxOpenShiftVersion for an OCP version < 4.9."
            ),
            "{none}"
        );
        assert!(none.ends_with("Migrate the API(s) for CRD: ([\"a.b\"]) or use the annotation"));
        let ok = r#"[{"type": "olm.maxOpenShiftVersion", "value": "4.8"}]"#;
        assert_eq!(max_openshift_version(&csv(Some(ok)), apis), None);
        let high = r#"[{"type": "olm.maxOpenShiftVersion", "value": "4.9"}]"#;
        assert!(
            max_openshift_version(&csv(Some(high)), apis)
                .unwrap()
                .contains("has the OCP version value 4.9 which is >= of 4.9")
        );
        let other = r#"[{"type": "x", "value": "y"}]"#;
        assert!(
            max_openshift_version(&csv(Some(other)), apis)
                .unwrap()
                .contains("with the key `olm.maxOpenShiftVersion`")
        );
        assert!(
            max_openshift_version(&csv(Some("[1]")), apis)
                .unwrap()
                .contains("invalid value specified")
        );
    }

    #[test]
    fn the_index_image_label_must_stop_before_4_9() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("bundle.Dockerfile");
        let check = |text: &str| {
            std::fs::write(&file, text).unwrap();
            openshift_versions_label(&file, "CRD: ([\"a.b\"])")
        };
        assert_eq!(
            check("LABEL com.redhat.openshift.versions=\"v4.6-v4.8\"\n"),
            None
        );
        assert!(
            check("LABEL com.redhat.openshift.versions=\"v4.6-v4.9\"\n")
                .unwrap()
                .contains("Upgrade the APIs")
        );
        assert!(
            check("LABEL com.redhat.openshift.versions=\"v4.6\"\n")
                .unwrap()
                .contains("allows to distribute it on >= 4.9")
        );
        assert!(
            check("LABEL other=1\n")
                .unwrap()
                .contains("provide compatible version(s) via the labels")
        );
        assert!(
            openshift_versions_label(dir.path(), "x")
                .unwrap()
                .contains("is not file")
        );
    }
}
