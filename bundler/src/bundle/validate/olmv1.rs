//! The OLM v1 suite (`-s olmv1`, `-s olmv1-experimental`): what operator-controller refuses
//! when it installs a registry+v1 bundle through a ClusterExtension, found before the bundle
//! reaches a cluster.
//!
//! Sources, all in operator-framework/operator-controller:
//! - `internal/operator-controller/applier/provider.go`: APIService definitions, webhooks
//!   without a certificate provider, install modes (AllNamespaces only, unless the
//!   `SingleOwnNamespaceInstallSupport` gate is on); the texts are its `unsupported bundle:`
//!   errors.
//! - `internal/operator-controller/rukpak/render/registryv1/validators/validator.go`: the
//!   renderer's bundle validators (deployment and webhook names, owned CRDs, conversion
//!   webhooks, forbidden webhook rules); texts verbatim.
//! - `internal/operator-controller/rukpak/bundle/source/source.go`: how a bundle is read
//!   (CRDs decoded as apiextensions.k8s.io/v1, no subdirectories in `manifests/`,
//!   `metadata/properties.yaml` merged into the CSV's `olm.properties`).
//! - `docs/project/olmv1_limitations.md`: no dependencies (`olm.gvk.required`,
//!   `olm.package.required`, `olm.constraint`), no OperatorConditions API.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::v::{arr_at, str_at};
use super::{Ctx, Finding};
use crate::grammar::k8s_names as names;

const V: &str = "olmv1";

/// Which operator-controller the bundle is checked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Olmv1Options {
    /// The experimental feature set: `SingleOwnNamespaceInstallSupport` on.
    pub experimental: bool,
    /// Only the CSV's metadata is known (a catalog in `olm.csv.metadata` form): skip the
    /// checks that need the deployments, webhooks and CRD manifests.
    pub metadata_only: bool,
    /// Dependencies are judged elsewhere (a catalog's bundle properties, which is where OLM
    /// v1 reads them): skip the bundle's own declarations.
    pub skip_dependencies: bool,
}

/// Property types OLM v1 refuses: it resolves no dependencies.
const DEPENDENCY_PROPERTIES: [&str; 3] =
    ["olm.gvk.required", "olm.package.required", "olm.constraint"];

const DEPENDENCY_HINT: &str = "OLM v1 installs no dependencies: drop the declaration, document that the other operator must be installed first, and let the operator check for the API at run time";

pub fn validate(ctx: &Ctx<'_>, opts: Olmv1Options) -> Vec<Finding> {
    let mut out = Vec::new();
    let csv = ctx.csv_value();
    let csv_file = ctx.csv.map(|m| m.file.clone());
    let on_csv = |f: Finding| match &csv_file {
        Some(p) => f.file(p.clone()),
        None => f,
    };

    install_modes(csv, opts)
        .into_iter()
        .for_each(|f| out.push(on_csv(f)));
    if !arr_at(csv, "/spec/apiservicedefinitions/owned").is_empty() {
        out.push(on_csv(
            Finding::error(V, "apiservice", "unsupported bundle: apiServiceDefintions are not supported")
                .field("spec.apiservicedefinitions.owned")
                .hint("OLM v1 installs no APIServices: serve the API as a CRD, or install the aggregated API server outside OLM"),
        ));
    }
    if !opts.skip_dependencies {
        dependencies(ctx, csv).into_iter().for_each(|f| out.push(f));
    }
    operator_conditions(csv)
        .into_iter()
        .for_each(|f| out.push(on_csv(f)));
    if !opts.metadata_only {
        webhooks(csv).into_iter().for_each(|f| out.push(on_csv(f)));
        renderer(ctx, csv).into_iter().for_each(|f| out.push(f));
        loader(ctx).into_iter().for_each(|f| out.push(f));
    }
    out
}

fn supported_modes(csv: &Value) -> BTreeSet<String> {
    arr_at(csv, "/spec/installModes")
        .iter()
        .filter(|m| m.get("supported").and_then(Value::as_bool) == Some(true))
        .filter_map(|m| m.get("type").and_then(Value::as_str).map(str::to_string))
        .collect()
}

fn install_modes(csv: &Value, opts: Olmv1Options) -> Vec<Finding> {
    let modes = supported_modes(csv);
    if modes.contains("AllNamespaces") {
        return Vec::new();
    }
    let single_or_own = modes.contains("SingleNamespace") || modes.contains("OwnNamespace");
    if !opts.experimental {
        let hint = if single_or_own {
            "support AllNamespaces (the operator watches every namespace), or install on an operator-controller with the experimental SingleOwnNamespaceInstallSupport gate and set the ClusterExtension's spec.config.inline.watchNamespace (check with -s olmv1-experimental)"
        } else {
            "support AllNamespaces: OLM v1's standard feature set installs nothing else"
        };
        return vec![
            Finding::error(
                V,
                "all-namespaces",
                "unsupported bundle: bundle does not support AllNamespaces install mode",
            )
            .field("spec.installModes")
            .hint(hint),
        ];
    }
    if !single_or_own {
        return vec![
            Finding::error(
                V,
                "install-modes",
                "unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes",
            )
            .field("spec.installModes")
            .hint("support AllNamespaces; MultiNamespace is not installable by OLM v1"),
        ];
    }
    vec![
        Finding::warning(
            V,
            "single-own-namespace",
            format!(
                "bundle supports only {}: it installs only with the experimental SingleOwnNamespaceInstallSupport gate and a watch namespace",
                modes.iter().cloned().collect::<Vec<_>>().join(", ")
            ),
        )
        .field("spec.installModes")
        .hint("set the ClusterExtension's spec.config: {configType: Inline, inline: {watchNamespace: <ns>}}; support AllNamespaces to install on the standard feature set"),
    ]
}

fn dependency_type(v: &Value) -> Option<&str> {
    v.get("type").and_then(Value::as_str)
}

fn dependencies(ctx: &Ctx<'_>, csv: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let csv_file = ctx.csv.map(|m| m.file.clone());
    let in_csv = |f: Finding| match &csv_file {
        Some(p) => f.file(p.clone()),
        None => f,
    };
    for (ptr, field, what) in [
        (
            "/spec/customresourcedefinitions/required",
            "spec.customresourcedefinitions.required",
            "required CRD",
        ),
        (
            "/spec/apiservicedefinitions/required",
            "spec.apiservicedefinitions.required",
            "required API service",
        ),
    ] {
        for (i, r) in arr_at(csv, ptr).iter().enumerate() {
            let name = str_at(r, "/name").unwrap_or("");
            let gvk = format!(
                "{}/{} {}",
                str_at(r, "/group")
                    .unwrap_or_else(|| name.split_once('.').map(|x| x.1).unwrap_or("")),
                str_at(r, "/version").unwrap_or(""),
                str_at(r, "/kind").unwrap_or("")
            );
            out.push(in_csv(
                Finding::error(
                    V,
                    "dependency",
                    format!("{what} {name} ({gvk}) is a dependency (olm.gvk.required): OLM v1 does not resolve dependencies"),
                )
                .field(format!("{field}[{i}]"))
                .hint(DEPENDENCY_HINT),
            ));
        }
    }
    for (i, d) in ctx.bundle.dependencies.iter().enumerate() {
        let ty = dependency_type(d).unwrap_or("");
        let becomes = match ty {
            "olm.gvk" => "olm.gvk.required",
            "olm.package" => "olm.package.required",
            _ => "olm.constraint",
        };
        out.push(
            Finding::error(
                V,
                "dependency",
                format!("dependency of type {ty:?} (rendered as {becomes}): OLM v1 does not resolve dependencies"),
            )
            .file("metadata/dependencies.yaml")
            .field(format!("dependencies[{i}]"))
            .hint(DEPENDENCY_HINT),
        );
    }
    for (i, p) in ctx.bundle.properties.iter().enumerate() {
        if let Some(ty) = dependency_type(p).filter(|t| DEPENDENCY_PROPERTIES.contains(t)) {
            out.push(
                Finding::error(
                    V,
                    "dependency",
                    format!("property of type {ty:?}: OLM v1 does not resolve dependencies"),
                )
                .file("metadata/properties.yaml")
                .field(format!("properties[{i}]"))
                .hint(DEPENDENCY_HINT),
            );
        }
    }
    if let Some(text) = str_at(csv, "/metadata/annotations/olm.properties")
        && let Ok(Value::Array(props)) = serde_json::from_str::<Value>(text)
    {
        for p in &props {
            if let Some(ty) = dependency_type(p).filter(|t| DEPENDENCY_PROPERTIES.contains(t)) {
                out.push(in_csv(
                    Finding::error(
                        V,
                        "dependency",
                        format!("olm.properties declares a {ty:?} property: OLM v1 does not resolve dependencies"),
                    )
                    .field("metadata.annotations[olm.properties]")
                    .hint(DEPENDENCY_HINT),
                ));
            }
        }
    }
    out
}

/// RBAC on `operators.coreos.com` in the CSV's permissions: the operator talks to OLM v0.
fn operator_conditions(csv: &Value) -> Vec<Finding> {
    let mut conditions = None;
    let mut other: BTreeSet<String> = BTreeSet::new();
    for (kind, ptr) in [
        ("permissions", "/spec/install/spec/permissions"),
        (
            "clusterPermissions",
            "/spec/install/spec/clusterPermissions",
        ),
    ] {
        for (i, p) in arr_at(csv, ptr).iter().enumerate() {
            for (j, rule) in arr_at(p, "/rules").iter().enumerate() {
                let groups = arr_at(rule, "/apiGroups");
                if !groups
                    .iter()
                    .any(|g| g.as_str() == Some("operators.coreos.com"))
                {
                    continue;
                }
                for r in arr_at(rule, "/resources").iter().filter_map(Value::as_str) {
                    let base = r.split('/').next().unwrap_or(r);
                    if base == "operatorconditions" || base == "*" {
                        conditions
                            .get_or_insert(format!("spec.install.spec.{kind}[{i}].rules[{j}]"));
                    } else {
                        other.insert(base.to_string());
                    }
                }
            }
        }
    }
    let mut out = Vec::new();
    if let Some(field) = conditions {
        out.push(
            Finding::error(
                V,
                "operator-conditions",
                "the operator is granted the OperatorConditions API (operators.coreos.com operatorconditions), which OLM v1 does not support: no OperatorCondition is created for it",
            )
            .field(field)
            .hint("make the operator work without an OperatorCondition (operator-lib's conditions fail when OPERATOR_CONDITION_NAME is unset); report upgrade readiness in the operator's own status"),
        );
    }
    if !other.is_empty() {
        out.push(
            Finding::warning(
                V,
                "olmv0-api",
                format!(
                    "the operator is granted OLM v0 APIs (operators.coreos.com {}): under OLM v1 these objects do not exist for it",
                    other.into_iter().collect::<Vec<_>>().join(", ")
                ),
            )
            .field("spec.install.spec")
            .hint("drop the dependency on OLM v0 objects (Subscriptions, CSVs, InstallPlans) or keep the operator on OLM v0"),
        );
    }
    out
}

fn webhook_defs(csv: &Value) -> Vec<(usize, &Value)> {
    arr_at(csv, "/spec/webhookdefinitions")
        .iter()
        .enumerate()
        .collect()
}

fn wh_type(w: &Value) -> &str {
    str_at(w, "/type").unwrap_or("")
}

fn wh_name(w: &Value) -> &str {
    str_at(w, "/generateName").unwrap_or("")
}

fn webhooks(csv: &Value) -> Vec<Finding> {
    let defs = webhook_defs(csv);
    if defs.is_empty() {
        return Vec::new();
    }
    let mut out = vec![
        Finding::warning(
            V,
            "webhook-certificates",
            "webhookDefinitions need a certificate provider: operator-controller serves them only with cert-manager (gate WebhookProviderCertManager) or OpenShift service-ca (gate WebhookProviderOpenshiftServiceCA); without one it refuses the bundle: \"unsupported bundle: webhookDefinitions are not supported\"",
        )
        .field("spec.webhookdefinitions")
        .hint("install cert-manager on the target clusters (or use OpenShift), or drop the webhooks"),
    ];
    // CheckConversionWebhookSupport.
    let modes = supported_modes(csv);
    let conversion: Vec<&str> = defs
        .iter()
        .filter(|(_, w)| wh_type(w) == "ConversionWebhook")
        .map(|(_, w)| wh_name(w))
        .collect();
    if !conversion.is_empty() && (modes.len() != 1 || !modes.contains("AllNamespaces")) {
        let sorted: Vec<&str> = modes.iter().map(String::as_str).collect();
        for name in &conversion {
            out.push(
                Finding::error(
                    V,
                    "conversion-webhook",
                    format!(
                        "bundle contains conversion webhook {name:?} and supports install modes [{}] - conversion webhooks are only supported for bundles that only support AllNamespaces install mode",
                        sorted.join(" ")
                    ),
                )
                .field("spec.installModes")
                .hint("a conversion webhook serves every namespace: support AllNamespaces only"),
            );
        }
    }
    // CheckWebhookDeploymentReferentialIntegrity.
    let deployments: BTreeSet<&str> = arr_at(csv, "/spec/install/spec/deployments")
        .iter()
        .filter_map(|d| str_at(d, "/name"))
        .collect();
    let mut dangling: Vec<(&str, &str, &str, usize)> = defs
        .iter()
        .map(|(i, w)| {
            (
                str_at(w, "/deploymentName").unwrap_or(""),
                wh_type(w),
                wh_name(w),
                *i,
            )
        })
        .filter(|(d, ..)| !deployments.contains(d))
        .collect();
    dangling.sort();
    for (dep, ty, name, i) in dangling {
        out.push(
            Finding::error(
                V,
                "webhook-deployment",
                format!("webhook of type '{ty}' with name '{name}' references non-existent deployment '{dep}'"),
            )
            .field(format!("spec.webhookdefinitions[{i}].deploymentName"))
            .hint("name one of spec.install.spec.deployments"),
        );
    }
    // CheckWebhookNameUniqueness and CheckWebhookNameIsDNS1123SubDomain.
    let mut seen: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut dupes: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut invalid: BTreeMap<(&str, &str), (usize, Vec<String>)> = BTreeMap::new();
    for (i, w) in &defs {
        let key = (wh_type(w), wh_name(w));
        if seen.insert(key, *i).is_some() {
            dupes.insert(key);
        }
        let mut errs = names::dns1123_subdomain(key.1);
        if !errs.is_empty() {
            errs.sort();
            invalid.insert(key, (*i, errs));
        }
    }
    for (ty, name) in dupes {
        out.push(
            Finding::error(
                V,
                "webhook-name",
                format!("duplicate webhook '{name}' of type '{ty}'"),
            )
            .field("spec.webhookdefinitions")
            .hint("give each webhook of a type its own generateName"),
        );
    }
    for ((ty, name), (i, errs)) in invalid {
        out.push(
            Finding::error(
                V,
                "webhook-name",
                format!(
                    "webhook of type '{ty}' has invalid name '{name}': {}",
                    errs.join(",")
                ),
            )
            .field(format!("spec.webhookdefinitions[{i}].generateName"))
            .hint("use a lowercase RFC 1123 subdomain"),
        );
    }
    // CheckConversionWebhookCRDReferenceUniqueness and ...ReferenceOwnedCRDs.
    let owned: BTreeSet<&str> = arr_at(csv, "/spec/customresourcedefinitions/owned")
        .iter()
        .filter_map(|c| str_at(c, "/name"))
        .collect();
    let mut by_crd: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut conv: Vec<(&str, usize, &Value)> = defs
        .iter()
        .filter(|(_, w)| wh_type(w) == "ConversionWebhook")
        .map(|(i, w)| (wh_name(w), *i, *w))
        .collect();
    conv.sort_by_key(|(n, ..)| *n);
    for (name, i, w) in &conv {
        let mut crds: Vec<&str> = arr_at(w, "/conversionCRDs")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        crds.sort();
        for crd in crds {
            by_crd.entry(crd).or_default().push(name);
            if !owned.contains(crd) {
                out.push(
                    Finding::error(
                        V,
                        "conversion-webhook",
                        format!("conversion webhook '{name}' references custom resource definition '{crd}' not owned bundle"),
                    )
                    .field(format!("spec.webhookdefinitions[{i}].conversionCRDs"))
                    .hint("list the CRD under spec.customresourcedefinitions.owned, or drop it from conversionCRDs"),
                );
            }
        }
    }
    for (crd, mut whs) in by_crd.into_iter().filter(|(_, w)| w.len() > 1) {
        whs.sort();
        out.push(
            Finding::error(
                V,
                "conversion-webhook",
                format!(
                    "conversion webhooks [{}] reference same custom resource definition '{crd}'",
                    whs.join(",")
                ),
            )
            .field("spec.webhookdefinitions")
            .hint("one conversion webhook per CRD"),
        );
    }
    // CheckWebhookRules.
    for (i, w) in &defs {
        if wh_type(w) == "ConversionWebhook" {
            continue;
        }
        let name = wh_name(w);
        for (j, rule) in arr_at(w, "/rules").iter().enumerate() {
            for g in arr_at(rule, "/apiGroups").iter().filter_map(Value::as_str) {
                if g == "olm.operatorframework.io" || g == "*" {
                    out.push(
                        Finding::error(
                            V,
                            "webhook-rules",
                            format!("webhook {name:?} contains forbidden rule: admission webhook rules cannot reference API group {g:?}"),
                        )
                        .field(format!("spec.webhookdefinitions[{i}].rules[{j}].apiGroups"))
                        .hint("name the API groups the webhook serves; a webhook on every group (or on OLM's) can lock the cluster"),
                    );
                }
                if g == "admissionregistration.k8s.io" {
                    for r in arr_at(rule, "/resources").iter().filter_map(Value::as_str) {
                        let lower = r.to_lowercase();
                        if matches!(
                            lower.as_str(),
                            "*" | "mutatingwebhookconfiguration"
                                | "mutatingwebhookconfigurations"
                                | "validatingwebhookconfiguration"
                                | "validatingwebhookconfigurations"
                        ) {
                            out.push(
                                Finding::error(
                                    V,
                                    "webhook-rules",
                                    format!("webhook {name:?} contains forbidden rule: admission webhook rules cannot reference resource {r:?} for API group {g:?}"),
                                )
                                .field(format!("spec.webhookdefinitions[{i}].rules[{j}].resources"))
                                .hint("a webhook on webhook configurations can keep a broken webhook from being removed"),
                            );
                        }
                    }
                }
            }
        }
    }
    out
}

/// The renderer's bundle validators that are not about webhooks.
fn renderer(ctx: &Ctx<'_>, csv: &Value) -> Vec<Finding> {
    let mut out = Vec::new();
    let csv_file = ctx.csv.map(|m| m.file.clone());
    let in_csv = |f: Finding| match &csv_file {
        Some(p) => f.file(p.clone()),
        None => f,
    };
    // CheckDeploymentSpecUniqueness, CheckDeploymentNameIsDNS1123SubDomain.
    let deployments = arr_at(csv, "/spec/install/spec/deployments");
    let mut seen = BTreeSet::new();
    let mut dupes = BTreeSet::new();
    let mut invalid: BTreeMap<&str, (usize, Vec<String>)> = BTreeMap::new();
    for (i, d) in deployments.iter().enumerate() {
        let name = str_at(d, "/name").unwrap_or("");
        if !seen.insert(name) {
            dupes.insert(name);
        }
        let mut errs = names::dns1123_subdomain(name);
        if !errs.is_empty() {
            errs.sort();
            invalid.insert(name, (i, errs));
        }
    }
    for d in dupes {
        out.push(in_csv(
            Finding::error(
                V,
                "deployment-name",
                format!(
                    "cluster service version contains duplicate strategy deployment spec '{d}'"
                ),
            )
            .field("spec.install.spec.deployments")
            .hint("give each deployment its own name"),
        ));
    }
    for (d, (i, errs)) in invalid {
        out.push(in_csv(
            Finding::error(
                V,
                "deployment-name",
                format!(
                    "invalid cluster service version strategy deployment name '{d}': {}",
                    errs.join(", ")
                ),
            )
            .field(format!("spec.install.spec.deployments[{i}].name"))
            .hint("use a lowercase RFC 1123 subdomain"),
        ));
    }
    // CheckCRDResourceUniqueness, CheckOwnedCRDExistence.
    let mut names_seen: BTreeMap<&str, &Path> = BTreeMap::new();
    let mut dup_crds: BTreeMap<&str, &Path> = BTreeMap::new();
    for m in &ctx.crds {
        if names_seen.insert(m.name(), m.file.as_path()).is_some() {
            dup_crds.insert(m.name(), m.file.as_path());
        }
    }
    for (name, file) in dup_crds {
        out.push(
            Finding::error(
                V,
                "crd",
                format!("bundle contains duplicate custom resource definition '{name}'"),
            )
            .file(file)
            .hint("ship each CRD once"),
        );
    }
    let mut missing: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, c) in arr_at(csv, "/spec/customresourcedefinitions/owned")
        .iter()
        .enumerate()
    {
        let name = str_at(c, "/name").unwrap_or("");
        if !names_seen.contains_key(name) {
            missing.entry(name).or_insert(i);
        }
    }
    for (name, i) in missing {
        out.push(in_csv(
            Finding::error(
                V,
                "crd",
                format!("cluster service definition references owned custom resource definition '{name}' not found in bundle"),
            )
            .field(format!("spec.customresourcedefinitions.owned[{i}]"))
            .hint("add the CRD's manifest to manifests/, or drop it from the owned list"),
        ));
    }
    // CheckPackageNameNotEmpty.
    if ctx.bundle.package().unwrap_or("").is_empty() {
        out.push(
            Finding::error(V, "package", "package name is empty")
                .file("metadata/annotations.yaml")
                .field(format!(
                    "annotations[{}]",
                    crate::bundle::load::keys::PACKAGE
                ))
                .hint("set the package annotation"),
        );
    }
    out
}

/// What the bundle reader itself refuses or silently changes.
fn loader(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for entry in &ctx.bundle.unexpected_entries {
        if ctx.bundle.is_dir_at(entry) {
            out.push(
                Finding::error(
                    V,
                    "manifests-layout",
                    format!(
                        "subdirectories are not allowed within the \"manifests\" directory of the bundle image filesystem: found {:?}",
                        entry.display().to_string()
                    ),
                )
                .file(entry.clone())
                .hint("move the files up into manifests/"),
            );
        }
    }
    for (file, err) in &ctx.bundle.skipped_metadata {
        if file == Path::new("metadata/properties.yaml") {
            out.push(
                Finding::error(
                    V,
                    "properties",
                    format!("failed to unmarshal metadata/properties.yaml: {err}"),
                )
                .file(PathBuf::from(file))
                .hint("properties.yaml must be `properties: [{type: ..., value: ...}]`"),
            );
        }
    }
    for m in &ctx.crds {
        if m.api_version() == "apiextensions.k8s.io/v1beta1" {
            out.push(
                Finding::error(
                    V,
                    "crd-api-version",
                    format!(
                        "CustomResourceDefinition {} is apiextensions.k8s.io/v1beta1: operator-controller applies the bundle's CRDs as they are, and Kubernetes has not served apiextensions.k8s.io/v1beta1 since 1.22",
                        m.name()
                    ),
                )
                .in_file(Some(m))
                .field("apiVersion")
                .hint("convert the CRD to apiextensions.k8s.io/v1 (a schema per version)"),
            );
        }
    }
    out
}
