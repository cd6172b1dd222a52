//! CustomResourceDefinitions: the Kubernetes API server's own CRD validation
//! (`ValidateCustomResourceDefinition`) as operator-framework/api runs it: v1beta1 CRDs are
//! defaulted and converted first (so a v1beta1 CRD without `preserveUnknownFields: false`
//! fails), and errors about the schema body and status are left out, as upstream does.

use std::collections::BTreeSet;

use serde_json::Value;

use super::v::{arr_at, str_at, type_name};
use super::{Ctx, Finding};
use crate::bundle::load::Manifest;
use crate::grammar::{k8s_names, request_uri};

const V: &str = "crd";
const APPROVAL: &str = "api-approved.kubernetes.io";
const KEP: &str = "see https://github.com/kubernetes/enhancements/pull/1111";

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    ctx.crds.iter().flat_map(|m| validate_crd(m)).collect()
}

/// One CRD version after v1beta1 defaulting: the fields the checks need.
struct Version<'a> {
    name: &'a str,
    storage: bool,
    schema: Option<&'a Value>,
    subresources: Option<&'a Value>,
    columns: Option<&'a Value>,
}

pub fn validate_crd(m: &Manifest) -> Vec<Finding> {
    let crd = &m.object;
    let mut out = Vec::new();
    let name = m.name();
    let err = |field: &str, msg: String| {
        Finding::error(V, "crd", format!("{field}: {msg}"))
            .file(m.file.clone())
            .field(field.to_string())
    };
    let api_version = m.api_version();
    let v1beta1 = match api_version {
        "apiextensions.k8s.io/v1" => false,
        "apiextensions.k8s.io/v1beta1" => true,
        other => {
            out.push(
                Finding::error(
                    V,
                    "crd-version",
                    format!("Unsupported api version of CRD: {other}"),
                )
                .file(m.file.clone())
                .field("apiVersion")
                .hint("CRDs must be apiextensions.k8s.io/v1 (or the deprecated v1beta1)"),
            );
            return out;
        }
    };
    let spec = crd.get("spec").unwrap_or(&Value::Null);
    if !spec.is_object() {
        out.push(err("spec", "Required value".into()));
        return out;
    }
    let group = str_at(spec, "/group").unwrap_or("");
    let plural = str_at(spec, "/names/plural").unwrap_or("");

    // metadata.name
    if name.is_empty() {
        out.push(err(
            "metadata.name",
            "Required value: name or generateName is required".into(),
        ));
    } else {
        for e in k8s_names::dns1123_subdomain(name) {
            out.push(err(
                "metadata.name",
                format!("Invalid value: {name:?}: {e}"),
            ));
        }
        if name != format!("{plural}.{group}") {
            out.push(
                err(
                    "metadata.name",
                    format!("Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"),
                )
                .hint(format!("name the CRD `{plural}.{group}`")),
            );
        }
    }

    // group
    if group.is_empty() {
        out.push(err("spec.group", "Required value".into()));
    } else {
        for e in k8s_names::dns1123_subdomain(group) {
            out.push(err("spec.group", format!("Invalid value: {group:?}: {e}")));
        }
        if !group.contains('.') {
            out.push(err(
                "spec.group",
                format!("Invalid value: {group:?}: should be a domain with at least one dot"),
            ));
        }
    }

    // names
    names_checks(spec, &err, &mut out);

    // scope
    match str_at(spec, "/scope") {
        // v1beta1 defaults an empty scope to Namespaced.
        None | Some("") if v1beta1 => {}
        None | Some("") => out.push(err("spec.scope", "Required value".into())),
        Some("Cluster" | "Namespaced") => {}
        Some(s) => out.push(err(
            "spec.scope",
            format!("Unsupported value: {s:?}: supported values: \"Cluster\", \"Namespaced\""),
        )),
    }

    // versions (v1beta1: `spec.version` alone means one served+storage version)
    let mut versions: Vec<Version<'_>> = arr_at(spec, "/versions")
        .iter()
        .map(|v| Version {
            name: v.get("name").and_then(Value::as_str).unwrap_or(""),
            storage: v.get("storage").and_then(Value::as_bool).unwrap_or(false),
            schema: v.get("schema").filter(|s| !s.is_null()),
            subresources: v.get("subresources").filter(|s| !s.is_null()),
            columns: v.get("additionalPrinterColumns").filter(|s| !s.is_null()),
        })
        .collect();
    if let Some(v) = spec.get("versions")
        && !v.is_array()
        && !v.is_null()
    {
        out.push(err(
            "spec.versions",
            format!("must be a list, found {}", type_name(v)),
        ));
    }
    let single = str_at(spec, "/version").filter(|s| !s.is_empty());
    if v1beta1
        && versions.is_empty()
        && let Some(version) = single
    {
        versions.push(Version {
            name: version,
            storage: true,
            schema: None,
            subresources: None,
            columns: None,
        });
    }
    if let (true, Some(single), Some(first)) = (v1beta1, single, versions.first())
        && first.name != single
    {
        out.push(err(
            "spec.version",
            format!("Invalid value: {single:?}: must match the first version in spec.versions"),
        ));
    }
    if versions.is_empty() {
        out.push(err(
            "spec.versions",
            "Required value: must have exactly one version marked as storage version".into(),
        ));
    } else {
        let mut seen = BTreeSet::new();
        let mut dup = false;
        for (i, v) in versions.iter().enumerate() {
            if v.name.is_empty() {
                out.push(err(
                    &format!("spec.versions[{i}].name"),
                    "Required value".into(),
                ));
            } else {
                for e in k8s_names::dns1035_label(v.name) {
                    out.push(err(
                        &format!("spec.versions[{i}].name"),
                        format!("Invalid value: {:?}: {e}", v.name),
                    ));
                }
            }
            dup |= !seen.insert(v.name);
        }
        if dup {
            out.push(
                err(
                    "spec.versions",
                    "Invalid value: must contain unique version names".into(),
                )
                .hint("each entry of spec.versions needs its own name"),
            );
        }
        let storage = versions.iter().filter(|v| v.storage).count();
        if storage != 1 {
            out.push(
                err("spec.versions", format!("Invalid value: {storage} storage versions: must have exactly one version marked as storage version"))
                    .hint("set `storage: true` on exactly one version"),
            );
        }
        // Top-level and per-version settings are mutually exclusive (v1beta1 only has both).
        if v1beta1 {
            for (top, per, label) in [
                ("validation", "schema", "schemas"),
                ("subresources", "subresources", "subresources"),
                (
                    "additionalPrinterColumns",
                    "additionalPrinterColumns",
                    "additionalPrinterColumns",
                ),
            ] {
                if spec.get(top).is_some_and(|t| !t.is_null()) {
                    for (i, v) in versions.iter().enumerate() {
                        let has = match per {
                            "schema" => v.schema.is_some(),
                            "subresources" => v.subresources.is_some(),
                            _ => v.columns.is_some(),
                        };
                        if has {
                            out.push(err(&format!("spec.versions[{i}].{per}"), format!("Forbidden: top-level and per-version {label} are mutually exclusive")));
                        }
                    }
                }
            }
            if versions.len() > 1 {
                for (per, label) in [
                    ("schema", "schemas"),
                    ("subresources", "subresources"),
                    ("additionalPrinterColumns", "additionalPrinterColumns"),
                ] {
                    let vals: Vec<Option<&Value>> = versions
                        .iter()
                        .map(|v| match per {
                            "schema" => v.schema,
                            "subresources" => v.subresources,
                            _ => v.columns,
                        })
                        .collect();
                    if vals.iter().all(Option::is_some) && vals.windows(2).all(|w| w[0] == w[1]) {
                        out.push(err(
                            "spec.versions",
                            format!("Invalid value: per-version {label} may not all be set to identical values (top-level {} should be used instead)", if per == "schema" { "validation" } else { per }),
                        ));
                    }
                }
            }
        }
        for (i, v) in versions.iter().enumerate() {
            if let Some(cols) = v.columns {
                columns(
                    cols,
                    &format!("spec.versions[{i}].additionalPrinterColumns"),
                    false,
                    &err,
                    &mut out,
                );
            }
            if let Some(sub) = v.subresources {
                scale(
                    sub,
                    &format!("spec.versions[{i}].subresources"),
                    &err,
                    &mut out,
                );
            }
        }
        if v1beta1 {
            if let Some(cols) = spec
                .get("additionalPrinterColumns")
                .filter(|c| !c.is_null())
            {
                columns(cols, "spec.additionalPrinterColumns", true, &err, &mut out);
            }
            if let Some(sub) = spec.get("subresources").filter(|c| !c.is_null()) {
                scale(sub, "spec.subresources", &err, &mut out);
            }
        }
    }

    // conversion
    if let Some(conv) = spec.get("conversion").filter(|c| !c.is_null()) {
        match str_at(conv, "/strategy").unwrap_or("None") {
            "None" => {}
            "Webhook" => {
                let versions = conv
                    .get("conversionReviewVersions")
                    .or_else(|| conv.pointer("/webhook/conversionReviewVersions"));
                // v1beta1 defaults conversionReviewVersions to [v1beta1].
                let empty = versions.and_then(Value::as_array).is_none_or(Vec::is_empty);
                if empty && !v1beta1 {
                    out.push(
                        err(
                            "spec.conversion.conversionReviewVersions",
                            "Required value: must include at least one of v1, v1beta1".into(),
                        )
                        .hint("set spec.conversion.webhook.conversionReviewVersions: [v1]"),
                    );
                }
                for (i, rv) in versions
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or(&[])
                    .iter()
                    .enumerate()
                {
                    if let Some(s) = rv.as_str()
                        && !k8s_names::dns1035_label(s).is_empty()
                    {
                        out.push(err(
                            &format!("spec.conversion.conversionReviewVersions[{i}]"),
                            format!("Invalid value: {s:?}: a DNS-1035 label"),
                        ));
                    }
                }
            }
            other => out.push(err(
                "spec.conversion.strategy",
                format!("Unsupported value: {other:?}: supported values: \"None\", \"Webhook\""),
            )),
        }
    }

    // preserveUnknownFields: v1beta1 defaults it to true, which the API server refuses.
    let preserve = match spec.get("preserveUnknownFields") {
        Some(Value::Bool(b)) => *b,
        _ => v1beta1,
    };
    if preserve {
        out.push(
            Finding::error(V, "preserve-unknown-fields", "spec.preserveUnknownFields: Invalid value: true: cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead")
                .file(m.file.clone())
                .field("spec.preserveUnknownFields")
                .hint(if v1beta1 {
                    "v1beta1 CRDs default preserveUnknownFields to true: migrate to apiextensions.k8s.io/v1 (or set `spec.preserveUnknownFields: false` with a structural schema)"
                } else {
                    "remove spec.preserveUnknownFields and use `x-kubernetes-preserve-unknown-fields: true` in the schema where needed"
                }),
        );
    }

    // Protected groups need an approval annotation.
    if is_protected_group(group) {
        let ann = crd.pointer(&format!("/metadata/annotations/{APPROVAL}"));
        let field = format!("metadata.annotations[{APPROVAL}]");
        match ann.and_then(Value::as_str).filter(|v| !v.is_empty()) {
            None => out.push(
                Finding::error(V, "api-approval", format!("{field}: Required value: protected groups must have approval annotation {APPROVAL:?}, {KEP}"))
                    .file(m.file.clone())
                    .field(field)
                    .hint("groups ending in k8s.io or kubernetes.io belong to Kubernetes: move the CRD to your own domain, or annotate it with the URL of its API review (or a reason starting with \"unapproved\")"),
            ),
            Some(v) if v.starts_with("unapproved") || request_uri::check(v).is_ok() => {}
            Some(v) => out.push(
                Finding::error(V, "api-approval", format!("{field}: Invalid value: {v:?}: protected groups must have approval annotation {APPROVAL:?} with either a URL or a reason starting with \"unapproved\", {KEP}"))
                    .file(m.file.clone())
                    .field(field),
            ),
        }
    }
    out
}

fn is_protected_group(group: &str) -> bool {
    group == "k8s.io"
        || group == "kubernetes.io"
        || group.ends_with(".k8s.io")
        || group.ends_with(".kubernetes.io")
}

type Err<'a> = dyn Fn(&str, String) -> Finding + 'a;

fn names_checks(spec: &Value, err: &Err<'_>, out: &mut Vec<Finding>) {
    let n = |k: &str| str_at(spec, &format!("/names/{k}")).unwrap_or("");
    let plural = n("plural");
    if plural.is_empty() {
        out.push(err("spec.names.plural", "Required value".into()));
    } else {
        for e in k8s_names::dns1035_label(plural) {
            out.push(err(
                "spec.names.plural",
                format!("Invalid value: {plural:?}: {e}"),
            ));
        }
    }
    let singular = n("singular");
    if !singular.is_empty() {
        for e in k8s_names::dns1035_label(singular) {
            out.push(err(
                "spec.names.singular",
                format!("Invalid value: {singular:?}: {e}"),
            ));
        }
    }
    let kind = n("kind");
    if kind.is_empty() {
        out.push(err("spec.names.kind", "Required value".into()));
    } else {
        for e in k8s_names::dns1035_label(&kind.to_lowercase()) {
            out.push(err(
                "spec.names.kind",
                format!("Invalid value: {kind:?}: {e}"),
            ));
        }
    }
    let list_kind = n("listKind");
    if !list_kind.is_empty() {
        for e in k8s_names::dns1035_label(&list_kind.to_lowercase()) {
            out.push(err(
                "spec.names.listKind",
                format!("Invalid value: {list_kind:?}: {e}"),
            ));
        }
        if list_kind == kind {
            out.push(err(
                "spec.names.listKind",
                format!("Invalid value: {list_kind:?}: kind and listKind may not be the same"),
            ));
        }
    }
    for key in ["shortNames", "categories"] {
        for (i, s) in arr_at(spec, &format!("/names/{key}")).iter().enumerate() {
            let s = s.as_str().unwrap_or("");
            for e in k8s_names::dns1035_label(s) {
                out.push(err(
                    &format!("spec.names.{key}[{i}]"),
                    format!("Invalid value: {s:?}: {e}"),
                ));
            }
        }
    }
}

const COLUMN_TYPES: [&str; 5] = ["integer", "number", "string", "boolean", "date"];
const COLUMN_FORMATS: [&str; 8] = [
    "int32",
    "int64",
    "float",
    "double",
    "byte",
    "date",
    "date-time",
    "password",
];

fn columns(cols: &Value, base: &str, v1beta1: bool, err: &Err<'_>, out: &mut Vec<Finding>) {
    let Some(list) = cols.as_array() else {
        out.push(err(
            base,
            format!("must be a list, found {}", type_name(cols)),
        ));
        return;
    };
    let path_key = if v1beta1 { "JSONPath" } else { "jsonPath" };
    for (i, c) in list.iter().enumerate() {
        let f = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("");
        if f("name").is_empty() {
            out.push(err(&format!("{base}[{i}].name"), "Required value".into()));
        }
        let ty = f("type");
        if ty.is_empty() {
            out.push(err(&format!("{base}[{i}].type"), "Required value".into()));
        } else if !COLUMN_TYPES.contains(&ty) {
            out.push(err(
                &format!("{base}[{i}].type"),
                format!(
                    "Unsupported value: {ty:?}: supported values: {}",
                    COLUMN_TYPES.map(|t| format!("{t:?}")).join(", ")
                ),
            ));
        }
        let format = f("format");
        if !format.is_empty() && !COLUMN_FORMATS.contains(&format) {
            out.push(err(
                &format!("{base}[{i}].format"),
                format!(
                    "Unsupported value: {format:?}: supported values: {}",
                    COLUMN_FORMATS.map(|t| format!("{t:?}")).join(", ")
                ),
            ));
        }
        if f(path_key).is_empty() {
            out.push(err(
                &format!("{base}[{i}].{path_key}"),
                "Required value".into(),
            ));
        }
    }
}

fn scale(sub: &Value, base: &str, err: &Err<'_>, out: &mut Vec<Finding>) {
    let Some(scale) = sub.get("scale").filter(|s| !s.is_null()) else {
        return;
    };
    let spec_path = scale
        .get("specReplicasPath")
        .and_then(Value::as_str)
        .unwrap_or("");
    let field = format!("{base}.scale.specReplicasPath");
    if spec_path.is_empty() {
        out.push(err(&field, "Required value".into()));
    } else if !spec_path.starts_with(".spec.") {
        out.push(err(
            &field,
            format!("Invalid value: {spec_path:?}: should be a json path under .spec"),
        ));
    }
}
