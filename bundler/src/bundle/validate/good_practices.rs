//! Good practices (operator-framework/api `internal/good_practices.go`): resource requests,
//! CRD descriptions, channel names, operators that create CRDs, the CSV name convention.
//! Unlike operator-sdk we read the channels from annotations.yaml, so the channel-naming
//! check actually runs (operator-sdk issue #5586).

use serde_json::Value;

use super::v::arr_at;
use super::{Ctx, Finding};
use crate::bundle::load::keys;
use crate::grammar::semver_range;

const V: &str = "good-practices";

pub const RESOURCES_MSG: &str = "It is recommended to ensure the resource request for CPU and Memory. Be aware that for some clusters configurations it is required to specify requests or limits for those values. Otherwise, the system or quota may reject Pod creation. More info: https://master.sdk.operatorframework.io/docs/best-practices/managing-resources/";
pub const CRD_PERMISSION_MSG: &str = "CSV contains permissions to create CRD. An Operator shouldn't deploy or manage other operators (such patterns are known as meta or super operators or include CRDs in its Operands). It's the Operator Lifecycle Manager's job to manage the deployment and lifecycle of operators.  Please, review the design of your solution and if you should not be using Dependency Resolution from OLM instead. More info: https://sdk.operatorframework.io/docs/best-practices/common-recommendation/";

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    let Some(m) = ctx.csv else { return Vec::new() };
    let csv = &m.object;
    let name = ctx.csv_name();
    let mut out = Vec::new();
    let warn = |check, msg: String| {
        Finding::warning(V, check, format!("Value {name}: {msg}")).file(m.file.clone())
    };

    let deployments = arr_at(csv, "/spec/install/spec/deployments");
    if deployments.is_empty() {
        out.push(
            Finding::error(
                V,
                "deployment",
                format!("Value {name}: unable to find a deployment to install in the CSV"),
            )
            .file(m.file.clone())
            .field("spec.install.spec.deployments"),
        );
    }
    for (d, dep) in deployments.iter().enumerate() {
        for (c, container) in arr_at(dep, "/spec/template/spec/containers")
            .iter()
            .enumerate()
        {
            if container
                .pointer("/resources/requests")
                .is_none_or(|r| r.as_object().is_none_or(|o| o.is_empty()))
            {
                let cname = container.get("name").and_then(Value::as_str).unwrap_or("");
                out.push(
                    warn("resource-requests", format!("unable to find the resource requests for the container: ({cname}). {RESOURCES_MSG}"))
                        .field(format!("spec.install.spec.deployments[{d}].spec.template.spec.containers[{c}].resources.requests"))
                        .hint("set resources.requests.cpu and resources.requests.memory on every container"),
                );
            }
        }
    }
    for kind in ["owned", "required"] {
        for (i, crd) in arr_at(csv, &format!("/spec/customresourcedefinitions/{kind}"))
            .iter()
            .enumerate()
        {
            if crd
                .get("description")
                .and_then(Value::as_str)
                .is_none_or(|d| d.trim().is_empty())
            {
                let n = crd.get("name").and_then(Value::as_str).unwrap_or("");
                out.push(
                    warn(
                        "crd-description",
                        format!("{kind} CRD {n:?} has an empty description"),
                    )
                    .field(format!(
                        "spec.customresourcedefinitions.{kind}[{i}].description"
                    ))
                    .hint(
                        "describe what the custom resource is for; the OperatorHub page shows it",
                    ),
                );
            }
        }
    }

    // Channel naming.
    let mut channels: Vec<&str> = ctx
        .bundle
        .annotation(keys::CHANNELS)
        .map(|c| c.split(',').filter(|c| !c.is_empty()).collect())
        .unwrap_or_default();
    if let Some(d) = ctx
        .bundle
        .annotation(keys::DEFAULT_CHANNEL)
        .filter(|d| !d.is_empty())
        && !channels.contains(&d)
    {
        channels.push(d);
    }
    let bad: Vec<String> = channels
        .iter()
        .filter(|c| {
            !["candidate", "stable", "fast"]
                .iter()
                .any(|p| c.starts_with(p))
        })
        .map(|c| format!("{c:?}"))
        .collect();
    if !bad.is_empty() {
        out.push(
            warn("channel-naming", format!("channel(s) [{}] are not following the recommended naming convention: https://olm.operatorframework.io/docs/best-practices/channel-naming", bad.join(" ")))
                .file("metadata/annotations.yaml")
                .field(format!("annotations[{}]", keys::CHANNELS))
                .hint("name channels candidate-*, stable-* or fast-* (e.g. stable-v1)"),
        );
    }

    // Permissions to create CRDs.
    let creates_crds = ["permissions", "clusterPermissions"].iter().any(|k| {
        arr_at(csv, &format!("/spec/install/spec/{k}"))
            .iter()
            .flat_map(|p| arr_at(p, "/rules"))
            .any(|r| {
                let has = |key: &str, wanted: &[&str]| {
                    arr_at(r, &format!("/{key}"))
                        .iter()
                        .any(|v| v.as_str().is_some_and(|s| wanted.contains(&s)))
                };
                has("apiGroups", &["apiextensions.k8s.io", "*"])
                    && has("resources", &["customresourcedefinitions", "*"])
                    && has("verbs", &["create", "patch", "*"])
            })
    });
    if creates_crds {
        out.push(
            warn("crd-permissions", CRD_PERMISSION_MSG.to_string()).field("spec.install.spec"),
        );
    }

    // Name convention: <operator-name>.v<semver>.
    match name.split_once(".v") {
        Some((_, version)) if !name[name.find(".v").map(|i| i + 2).unwrap_or(0)..].contains(".v") => {
            if semver_range::parse_version(version).is_err() {
                out.push(
                    warn("name-convention", format!("csv.metadata.Name {name} is not following the versioning convention (MAJOR.MINOR.PATCH e.g 0.0.1): https://semver.org/"))
                        .field("metadata.name"),
                );
            }
        }
        _ => out.push(
            warn("name-convention", format!("csv.metadata.Name {name} is not following the recommended naming convention: <operator-name>.v<semver> e.g. memcached-operator.v0.0.1"))
                .field("metadata.name"),
        ),
    }
    out
}
