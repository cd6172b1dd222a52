//! The ClusterServiceVersion: names, required fields, install modes, minKubeVersion, the
//! `alm-examples` annotation against the owned APIs, and OLM annotations in the wrong case
//! (operator-framework/api `internal/csv.go`, `typecheck.go`, `annotations.go`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::v::{arr_at, is_set, str_at, type_name};
use super::{Ctx, Finding};
use crate::grammar::{k8s_names, semver_range};

const V: &str = "csv";

/// Annotations OLM sets or reads itself; a key differing only in case is a silent no-op.
const OLM_ANNOTATIONS: [&str; 5] = [
    "olm.operatorGroup",
    "olm.operatorNamespace",
    "olm.targetNamespaces",
    "olm.providedAPIs",
    "olm.skipRange",
];

pub const INSTALL_MODES: [&str; 4] = [
    "OwnNamespace",
    "SingleNamespace",
    "MultiNamespace",
    "AllNamespaces",
];

pub const MIN_KUBE_MISSING: &str = "csv.Spec.minKubeVersion is not informed. It is recommended you provide this information. Otherwise, it would mean that your operator project can be distributed and installed in any cluster version available, which is not necessarily the case for all projects.";

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    match ctx.csv {
        Some(m) => validate_csv(&m.object)
            .into_iter()
            .map(|f| f.file(m.file.clone()))
            .collect(),
        None => Vec::new(), // format reports the missing CSV
    }
}

/// Validates one CSV object; findings carry field paths but no file (the caller adds it).
/// The generator runs this on every CSV it writes.
pub fn validate_csv(csv: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let name = str_at(csv, "/metadata/name").unwrap_or("");
    let err = |check, msg: String| Finding::error(V, check, format!("({name}) {msg}"));
    let warn = |check, msg: String| Finding::warning(V, check, format!("({name}) {msg}"));

    if !is_set(csv.get("apiVersion")) {
        out.push(err("type-meta", "'apiVersion' is missing".into()).field("apiVersion"));
    }
    if !is_set(csv.get("kind")) {
        out.push(err("type-meta", "'kind' is missing".into()).field("kind"));
    }
    type_checks(csv, &mut out, name);

    let name_errs = k8s_names::dns1123_subdomain(name)
        .into_iter()
        .chain(k8s_names::label_value(name))
        .collect::<Vec<_>>();
    if !name_errs.is_empty() {
        out.push(
            err("name", format!("metadata.name {name:?} is invalid: {}", name_errs.join(", ")))
                .field("metadata.name")
                .hint("name the CSV `<package>.v<version>`, e.g. `my-operator.v1.2.3`, at most 63 characters"),
        );
    }
    if let Some(replaces) = str_at(csv, "/spec/replaces").filter(|r| !r.is_empty()) {
        let errs = k8s_names::dns1123_subdomain(replaces)
            .into_iter()
            .chain(k8s_names::label_value(replaces))
            .collect::<Vec<_>>();
        if !errs.is_empty() {
            out.push(
                err(
                    "name",
                    format!("spec.replaces {replaces:?} is invalid: {}", errs.join(", ")),
                )
                .field("spec.replaces")
                .hint(
                    "spec.replaces names the CSV this one upgrades from, e.g. `my-operator.v1.2.2`",
                ),
            );
        }
    }

    // Required fields (the Go struct fields without omitempty).
    if !is_set(csv.get("metadata")) {
        out.push(err("required-field", "required field missing".into()).field("metadata"));
    }
    if !is_set(csv.get("spec")) {
        out.push(err("required-field", "required field missing".into()).field("spec"));
    }
    if !is_set(csv.pointer("/spec/displayName")) {
        out.push(
            err("required-field", "required field missing".into())
                .field("spec.displayName")
                .hint("set the name shown in the OperatorHub tile, e.g. `displayName: Reverse Words Operator`"),
        );
    }
    let install = csv.pointer("/spec/install");
    if !is_set(install) {
        out.push(
            err("required-field", "required field missing".into())
                .field("spec.install")
                .hint("spec.install.strategy: deployment with spec.install.spec.deployments (`olm bundle generate` fills it from the Deployment)"),
        );
    } else {
        if !is_set(csv.pointer("/spec/install/strategy")) {
            out.push(
                err("required-field", "required field missing".into())
                    .field("spec.install.strategy")
                    .hint("set `strategy: deployment`"),
            );
        }
        if is_set(csv.pointer("/spec/install/spec"))
            && !is_set(csv.pointer("/spec/install/spec/deployments"))
        {
            out.push(
                err("required-field", "required field missing".into())
                    .field("spec.install.spec.deployments"),
            );
        }
    }

    // Annotations.
    let annotations = csv
        .pointer("/metadata/annotations")
        .and_then(Value::as_object);
    match annotations {
        None => out.push(
            warn("annotations", "annotations not found".into()).field("metadata.annotations"),
        ),
        Some(ann) => {
            for key in ann.keys() {
                for want in OLM_ANNOTATIONS {
                    if key != want && key.eq_ignore_ascii_case(want) {
                        out.push(
                            err("annotation-case", format!("provided annotation {key} uses wrong case and should be {want} instead"))
                                .field(format!("metadata.annotations[{key}]")),
                        );
                    }
                }
            }
            if ann.contains_key("olm.properties") {
                out.push(
                    warn("properties-annotation", "found olm.properties annotation, please define these properties in metadata/properties.yaml instead".into())
                        .field("metadata.annotations[olm.properties]"),
                );
            }
            if let Some(range) = ann.get("olm.skipRange") {
                match range.as_str() {
                    Some(r) => {
                        if let Err(e) = semver_range::Range::parse(r) {
                            out.push(
                                err(
                                    "skip-range",
                                    format!("olm.skipRange {r:?} is not a valid semver range: {e}"),
                                )
                                .field("metadata.annotations[olm.skipRange]")
                                .hint("use a range such as `>=1.0.0 <1.3.0`"),
                            );
                        }
                    }
                    None => out.push(
                        err("skip-range", "olm.skipRange must be a string".into())
                            .field("metadata.annotations[olm.skipRange]"),
                    ),
                }
            }
        }
    }
    examples(csv, annotations, &mut out, name);

    // Install modes.
    let modes = csv.pointer("/spec/installModes");
    let modes_list = modes
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if modes_list.is_empty() {
        out.push(
            err("install-modes", "install modes not found".into())
                .field("spec.installModes")
                .hint("list all four install modes (OwnNamespace, SingleNamespace, MultiNamespace, AllNamespaces) with `supported: true|false`"),
        );
    } else {
        let mut supported = BTreeSet::new();
        for (i, m) in modes_list.iter().enumerate() {
            let ty = m.get("type").and_then(Value::as_str).unwrap_or("");
            if !INSTALL_MODES.contains(&ty) {
                out.push(
                    err(
                        "install-modes",
                        format!(
                            "install mode type {ty:?} is not one of {}",
                            INSTALL_MODES.join(", ")
                        ),
                    )
                    .field(format!("spec.installModes[{i}].type")),
                );
            }
            match m.get("supported") {
                Some(Value::Bool(true)) => {
                    supported.insert(ty);
                }
                Some(Value::Bool(false)) => {}
                other => out.push(
                    err(
                        "install-modes",
                        format!(
                            "`supported` must be true or false, found {}",
                            other.map(type_name).unwrap_or("nothing")
                        ),
                    )
                    .field(format!("spec.installModes[{i}].supported")),
                ),
            }
        }
        if supported.is_empty() {
            out.push(
                err(
                    "install-modes",
                    "none of InstallModeTypes are supported".into(),
                )
                .field("spec.installModes"),
            );
        }
        let conversion = arr_at(csv, "/spec/webhookdefinitions")
            .iter()
            .any(|w| w.get("type").and_then(Value::as_str) == Some("ConversionWebhook"));
        if conversion && (!supported.contains("AllNamespaces") || supported.len() > 1) {
            out.push(
                err("install-modes", "only AllNamespaces InstallModeType is supported when conversionCRDs is present".into())
                    .field("spec.installModes")
                    .hint("a conversion webhook serves the whole cluster: support only AllNamespaces"),
            );
        }
    }

    // minKubeVersion.
    match csv.pointer("/spec/minKubeVersion") {
        None | Some(Value::Null) => out.push(min_kube_missing(name)),
        Some(Value::String(s)) if s.is_empty() => out.push(min_kube_missing(name)),
        Some(Value::String(s)) => {
            if let Err(e) = semver_range::parse_version(s) {
                out.push(
                    err(
                        "min-kube-version",
                        format!("csv.Spec.MinKubeVersion has an invalid value: {s}"),
                    )
                    .field("spec.minKubeVersion")
                    .hint(format!(
                        "use a full semantic version such as `1.25.0` ({e})"
                    )),
                );
            }
        }
        Some(other) => out.push(
            err(
                "min-kube-version",
                format!(
                    "csv.Spec.MinKubeVersion must be a string, found {}",
                    type_name(other)
                ),
            )
            .field("spec.minKubeVersion"),
        ),
    }
    out
}

fn min_kube_missing(name: &str) -> Finding {
    Finding::warning(
        V,
        "min-kube-version",
        format!("({name}) {MIN_KUBE_MISSING}"),
    )
    .field("spec.minKubeVersion")
    .hint("set spec.minKubeVersion, e.g. `1.25.0` (`--min-kube-version` when generating)")
}

/// Field types that Go's decoder would reject: reported as errors with the path instead of a
/// single decode failure.
fn type_checks(csv: &Value, out: &mut Vec<Finding>, name: &str) {
    let want = |ptr: &str, ok: fn(&Value) -> bool, what: &str, out: &mut Vec<Finding>| {
        if let Some(v) = csv.pointer(ptr)
            && !v.is_null()
            && !ok(v)
        {
            out.push(
                Finding::error(
                    V,
                    "field-type",
                    format!("({name}) must be {what}, found {}", type_name(v)),
                )
                .field(ptr.trim_start_matches('/').replace('/', ".")),
            );
        }
    };
    let s: fn(&Value) -> bool = Value::is_string;
    let a: fn(&Value) -> bool = Value::is_array;
    let o: fn(&Value) -> bool = Value::is_object;
    want("/metadata", o, "a map", out);
    want("/metadata/name", s, "a string", out);
    want("/metadata/annotations", o, "a map", out);
    want("/spec", o, "a map", out);
    for f in [
        "displayName",
        "description",
        "version",
        "replaces",
        "maturity",
    ] {
        want(&format!("/spec/{f}"), s, "a string", out);
    }
    for f in [
        "keywords",
        "maintainers",
        "links",
        "icon",
        "installModes",
        "skips",
        "relatedImages",
        "webhookdefinitions",
    ] {
        want(&format!("/spec/{f}"), a, "a list", out);
    }
    want("/spec/provider", o, "a map", out);
    want("/spec/install", o, "a map", out);
    want("/spec/install/spec/deployments", a, "a list", out);
    want("/spec/customresourcedefinitions/owned", a, "a list", out);
    want("/spec/customresourcedefinitions/required", a, "a list", out);
    if let Some(Value::Object(ann)) = csv.pointer("/metadata/annotations") {
        for (k, v) in ann {
            if !v.is_string() {
                out.push(
                    Finding::error(
                        V,
                        "field-type",
                        format!(
                            "({name}) annotation values must be strings, found {} (quote it)",
                            type_name(v)
                        ),
                    )
                    .field(format!("metadata.annotations[{k}]")),
                );
            }
        }
    }
    if let Some(Value::String(v)) = csv.pointer("/spec/version")
        && let Err(e) = semver_range::parse_version_tolerant(v)
    {
        out.push(
            Finding::error(
                V,
                "version",
                format!("({name}) spec.version {v:?} is not a semantic version: {e}"),
            )
            .field("spec.version")
            .hint("use MAJOR.MINOR.PATCH, e.g. `0.2.1`"),
        );
    }
}

/// A provided API: CRD `plural.group` name, version and kind (or an API service).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Gvk {
    group: String,
    version: String,
    kind: String,
}

impl std::fmt::Display for Gvk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}, Kind={}", self.group, self.version, self.kind)
    }
}

fn examples(
    csv: &Value,
    ann: Option<&serde_json::Map<String, Value>>,
    out: &mut Vec<Finding>,
    name: &str,
) {
    let err = |check, msg: String| Finding::error(V, check, format!("({name}) {msg}"));
    let mut provided = BTreeSet::new();
    for (i, crd) in arr_at(csv, "/spec/customresourcedefinitions/owned")
        .iter()
        .enumerate()
    {
        let crd_name = crd.get("name").and_then(Value::as_str).unwrap_or("");
        match crd_name.split_once('.') {
            Some((plural, group)) if !plural.is_empty() && !group.is_empty() => {
                provided.insert(Gvk {
                    group: group.to_string(),
                    version: crd
                        .get("version")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    kind: crd
                        .get("kind")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                });
            }
            _ => out.push(
                err(
                    "owned-crd",
                    format!("couldn't parse plural.group from crd name: {crd_name}"),
                )
                .field(format!("spec.customresourcedefinitions.owned[{i}].name"))
                .hint("owned CRD names are `<plural>.<group>`, the CRD's metadata.name"),
            ),
        }
    }
    for api in arr_at(csv, "/spec/apiservicedefinitions/owned") {
        let g = |k: &str| api.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        provided.insert(Gvk {
            group: g("group"),
            version: g("version"),
            kind: g("kind"),
        });
    }

    let Some(ann) = ann else { return };
    let alm = ann.get("alm-examples");
    let olm = ann.get("olm.examples");
    let (key, raw) = match (alm, olm) {
        (Some(a), Some(_)) => {
            out.push(
                Finding::warning(V, "examples", format!("({name}) both `alm-examples` and `olm.examples` are present. Checking only `alm-examples`"))
                    .field("metadata.annotations"),
            );
            ("alm-examples", a)
        }
        (Some(a), None) => ("alm-examples", a),
        (None, Some(o)) => ("olm.examples", o),
        (None, None) => {
            out.push(
                Finding::warning(V, "examples", format!("({name}) example annotations not found"))
                    .field("metadata.annotations[alm-examples]")
                    .hint("add sample custom resources as a JSON list in the alm-examples annotation (`olm bundle generate` does this from your samples)"),
            );
            return;
        }
    };
    let field = format!("metadata.annotations[{key}]");
    let Some(text) = raw.as_str() else { return }; // type_checks reported it
    if text.trim().is_empty() {
        return;
    }
    let parsed: Vec<Value> = match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => items,
        Ok(other) => {
            out.push(
                err(
                    "examples",
                    format!(
                        "invalid example: must be a JSON list of objects, found {}",
                        type_name(&other)
                    ),
                )
                .field(field),
            );
            return;
        }
        Err(e) => {
            out.push(
                err("examples", format!("invalid example: {e}"))
                    .field(field)
                    .hint("alm-examples must be a JSON list of custom resources"),
            );
            return;
        }
    };
    let mut seen = BTreeSet::new();
    for (i, ex) in parsed.iter().enumerate() {
        let (Some(api_version), Some(kind)) = (
            ex.get("apiVersion").and_then(Value::as_str),
            ex.get("kind").and_then(Value::as_str),
        ) else {
            out.push(
                err(
                    "examples",
                    "error decoding example CustomResource: apiVersion and kind are required"
                        .into(),
                )
                .field(format!("{field}[{i}]")),
            );
            continue;
        };
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let gvk = Gvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        };
        if !provided.contains(&gvk) {
            out.push(
                err("examples", format!("example must have a provided API: {gvk}"))
                    .field(format!("{field}[{i}]"))
                    .hint("every example's apiVersion/kind must be an owned CRD version (spec.customresourcedefinitions.owned)"),
            );
        }
        seen.insert(gvk);
    }
    for gvk in provided.difference(&seen) {
        out.push(
            Finding::warning(
                V,
                "examples",
                format!("({name}) provided API should have an example annotation: {gvk}"),
            )
            .field(field.clone())
            .hint("add a sample of this kind to alm-examples so users see how to create one"),
        );
    }
}
