//! `olm bundle generate`: an operator's manifests and a hand-written CSV base in, a complete
//! registry+v1 bundle out, as a [`FileTree`] (nothing touches the disk here). By default the
//! bundle is what `operator-sdk generate bundle` makes of the same input; what goes further
//! is opt-in ([`GenerateOptions::related_images_from_containers`],
//! [`GenerateOptions::fill_crd_descriptions`]).
//!
//! What lands where:
//! - CRDs become `manifests/<group>_<plural>.yaml` and owned-CRD entries of the CSV;
//! - Deployments become the CSV's install strategy (WATCH_NAMESPACE is mapped to
//!   `metadata.annotations['olm.targetNamespaces']`), their `RELATED_IMAGE_*` variables
//!   `relatedImages`;
//! - Roles and ClusterRoles bound to the Deployments' ServiceAccounts become `permissions`
//!   and `clusterPermissions`; those ServiceAccounts are left to OLM, which creates them;
//! - custom resources of the CRDs become `alm-examples`;
//! - webhook configurations become `webhookdefinitions` (their Service stays a manifest);
//! - the scorecard `Configuration` becomes `tests/scorecard/config.yaml`;
//! - cert-manager objects and Namespaces are dropped and `metadata.namespace` stripped from
//!   the manifests: OLM installs into the OperatorGroup's namespace and issues webhook
//!   serving certificates itself ([`certs`]);
//! - every other object of a kind registry+v1 supports is written as-is; any other kind is an
//!   error naming the file, line and kind.
//!
//! Determinism: keys are sorted, files named from content, and `createdAt` is carried over
//! from the previous output when nothing else changed (see [`GenerateOptions::created_at`]).

use crate::grammar::{k8s_names, semver_range};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::atomic_write::FileTree;
use crate::bundle::kinds;
use crate::bundle::validate::{Finding, Level};
use crate::yaml::{self, YamlError};

pub mod certs;
pub mod config;
pub mod csv;
pub mod diff;
pub mod digests;
pub mod files;
pub mod input;
pub mod webhooks;

pub use input::SourceObject;

/// The directories of a bundle the generator owns: stale files there are removed.
pub const OWNED_DIRS: [&str; 3] = ["manifests", "metadata", "tests/scorecard"];
/// Scorecard test image written to `tests/scorecard/config.yaml` by default.
pub const DEFAULT_SCORECARD_IMAGE: &str = "quay.io/operator-framework/scorecard-test:v1.42.0";

/// Why a bundle could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    #[error(transparent)]
    Yaml(#[from] YamlError),
    #[error("{origin}: {message}")]
    Input { origin: String, message: String },
    #[error("{path}: {field}: {message}")]
    Base {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error("{0}")]
    Options(String),
    #[error("invalid generated ClusterServiceVersion (fix the CSV base or the options):\n{}", .0.iter().map(|f| format!("  - {f}")).collect::<Vec<_>>().join("\n"))]
    InvalidCsv(Vec<Finding>),
    #[error("cannot render {file}: {message}")]
    Render { file: String, message: String },
    #[error("--use-image-digests: {0}")]
    Digests(#[from] digests::DigestsError),
}

/// The package-level settings (flags or config file).
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub package: String,
    pub version: semver::Version,
    pub channels: Vec<String>,
    pub default_channel: Option<String>,
    pub replaces: Option<String>,
    pub skips: Vec<String>,
    pub skip_range: Option<String>,
    pub min_kube_version: Option<String>,
    /// Write `tests/scorecard/config.yaml` with this test image.
    pub scorecard_image: Option<String>,
    /// ServiceAccounts besides the Deployments' whose RBAC goes into the CSV.
    pub extra_service_accounts: Vec<String>,
    /// Beyond operator-sdk: also list every container image in `relatedImages` (named after
    /// the container), keep the base's entries, and set the `containerImage` annotation to the
    /// operator's image. operator-sdk lists only `RELATED_IMAGE_*` variables (and every image
    /// only with `--use-image-digests`, pinned by digest).
    pub related_images_from_containers: bool,
    /// Beyond operator-sdk: fill an owned CRD's empty `displayName` (from its kind) and
    /// `description` (from its schema). `operator-sdk generate bundle` never fills them; its
    /// `generate kustomize manifests` writes them into the base of Go projects.
    pub fill_crd_descriptions: bool,
    /// operator-sdk's `--use-image-digests`: every image of the CSV by digest (image as
    /// written -> `repository@sha256:...`, resolved by the caller from [`digests::to_resolve`])
    /// and `relatedImages` listing them all.
    pub image_digests: Option<std::collections::BTreeMap<String, String>>,
    /// The `createdAt` for a bundle whose content changed (RFC 3339). When the previous
    /// output, re-rendered with its own createdAt, is byte-identical to what we would write,
    /// its createdAt is kept instead, so regenerating an unchanged bundle is a no-op. The CLI
    /// derives this from SOURCE_DATE_EPOCH, else the current time.
    pub created_at: String,
}

/// Everything `generate` reads.
#[derive(Debug, Clone)]
pub struct GenerateInput {
    pub manifests: Vec<SourceObject>,
    /// The CSV base (human-written metadata) and the file it came from.
    pub csv_base: Value,
    pub csv_base_path: PathBuf,
    pub options: GenerateOptions,
    /// The current contents of the output directory, if any (for createdAt and for keeping
    /// extra annotations such as `com.redhat.openshift.versions`).
    pub previous: Option<FileTree>,
}

/// A generated bundle.
#[derive(Debug, Clone)]
pub struct Generated {
    pub tree: FileTree,
    /// Non-fatal notes (a binding to a role that is not in the input, a base CRD entry
    /// without its CRD, ...).
    pub warnings: Vec<String>,
    /// The CSV's path inside the tree.
    pub csv_path: PathBuf,
}

fn render(file: &str, v: &Value) -> Result<String, GenerateError> {
    yaml::to_yaml(v).map_err(|e| GenerateError::Render {
        file: file.to_string(),
        message: e.to_string(),
    })
}

/// Checks options before doing any work, so mistakes are reported against the flag.
fn check_options(o: &GenerateOptions) -> Result<(), GenerateError> {
    let bad = |m: String| Err(GenerateError::Options(m));
    if !k8s_names::dns1123_subdomain(&o.package).is_empty() || o.package.contains('.') {
        return bad(format!(
            "--package {:?}: must be a lowercase name of letters, digits and '-' (e.g. reverse-words-operator)",
            o.package
        ));
    }
    if o.channels.is_empty() || o.channels.iter().any(|c| c.trim().is_empty()) {
        return bad(
            "--channels: give one or more channel names, comma-separated (e.g. stable,fast)".into(),
        );
    }
    if let Some(d) = &o.default_channel
        && !o.channels.contains(d)
    {
        return bad(format!(
            "--default-channel {d:?} is not one of --channels {}",
            o.channels.join(",")
        ));
    }
    if let Some(r) = &o.skip_range
        && let Err(e) = semver_range::Range::parse(r)
    {
        return bad(format!("--skip-range {r:?}: invalid version range: {e}"));
    }
    if let Some(k) = &o.min_kube_version
        && semver_range::parse_version(k).is_err()
    {
        return bad(format!(
            "--min-kube-version {k:?}: must be a full semantic version such as 1.25.0"
        ));
    }
    Ok(())
}

/// Builds the bundle. Pure: same input, same tree.
pub fn generate(input: &GenerateInput) -> Result<Generated, GenerateError> {
    let o = &input.options;
    check_options(o)?;
    let base_err = |field: &str, message: String| GenerateError::Base {
        path: input.csv_base_path.clone(),
        field: field.into(),
        message,
    };
    let base = input.csv_base.as_object().ok_or_else(|| {
        base_err(
            "(document)",
            "the CSV base must be a ClusterServiceVersion (a map)".into(),
        )
    })?;
    if let Some(k) = base.get("kind").and_then(Value::as_str)
        && k != "ClusterServiceVersion"
    {
        return Err(base_err(
            "kind",
            format!("expected ClusterServiceVersion, found {k}"),
        ));
    }
    for (field, want_map) in [("metadata", true), ("spec", true)] {
        if let Some(v) = base.get(field)
            && !v.is_null()
            && v.is_object() != want_map
        {
            return Err(base_err(field, "must be a map".into()));
        }
    }

    let mut warnings = Vec::new();
    let objects = &input.manifests;

    // Classify.
    let mut crds = Vec::new();
    let mut deployments = Vec::new();
    let mut scorecard: Option<usize> = None;
    for (i, o) in objects.iter().enumerate() {
        if o.kind().is_empty() || o.api_version().is_empty() {
            return Err(GenerateError::Input {
                origin: o.source.clone(),
                message: "object has no apiVersion or kind".into(),
            });
        }
        match o.kind() {
            "ClusterServiceVersion" => {
                return Err(GenerateError::Input {
                    origin: o.source.clone(),
                    message: format!(
                        "a second ClusterServiceVersion ({}) besides the CSV base {}: give the base once, either in the manifests or with --csv-base",
                        o.name(),
                        input.csv_base_path.display()
                    ),
                });
            }
            "CustomResourceDefinition" => crds.push(o),
            "Deployment" => deployments.push(o),
            "Configuration" if o.group() == files::SCORECARD_GROUP => {
                if let Some(first) = scorecard {
                    return Err(GenerateError::Input {
                        origin: o.source.clone(),
                        message: format!(
                            "a second scorecard Configuration (the first is {}); keep one (config/scorecard)",
                            objects[first].source
                        ),
                    });
                }
                scorecard = Some(i);
            }
            _ => {}
        }
    }
    if deployments.is_empty() {
        return Err(GenerateError::Options(
            "the manifests hold no Deployment: the operator's Deployment becomes the CSV's install strategy".into(),
        ));
    }
    let crd_kinds: BTreeSet<(String, String)> = crds
        .iter()
        .map(|c| {
            let s = |p: &str| {
                c.object
                    .pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            (s("/spec/group"), s("/spec/names/kind"))
        })
        .collect();

    let mut accounts: BTreeSet<String> = deployments
        .iter()
        .map(|d| csv::service_account(d))
        .collect();
    accounts.extend(o.extra_service_accounts.iter().cloned());
    let perms = csv::permissions(objects, &accounts)?;
    warnings.extend(perms.warnings.iter().cloned());
    let hooks = webhooks::collect(objects, &deployments)?;
    warnings.extend(hooks.warnings.iter().cloned());
    let dropped_certs = certs::drop_cert_manager(objects);

    // Everything that is not folded into the CSV.
    let mut examples = Vec::new();
    let mut manifests: BTreeMap<String, (String, Value)> = BTreeMap::new();
    for (i, obj) in objects.iter().enumerate() {
        let kind = obj.kind();
        if perms.consumed.contains(&i)
            || hooks.consumed.contains(&i)
            || dropped_certs.consumed.contains(&i)
            || scorecard == Some(i)
            || matches!(
                kind,
                "Deployment" | "Namespace" | "CustomResourceDefinition"
            )
        {
            continue;
        }
        if kind == "ServiceAccount" && accounts.contains(obj.name()) {
            continue; // OLM creates it from the CSV's permissions
        }
        if crd_kinds.contains(&(obj.group().to_string(), kind.to_string())) {
            let mut ex = obj.object.clone();
            files::sort_keys(&mut ex);
            examples.push(ex);
            continue;
        }
        if !kinds::is_supported(kind) || kind == "ClusterServiceVersion" {
            return Err(GenerateError::Input {
                origin: obj.source.clone(),
                message: format!(
                    "{kind} {:?} cannot go into a registry+v1 bundle; supported kinds: {}{}",
                    obj.name(),
                    kinds::supported_list(),
                    hint_for_kind(kind)
                ),
            });
        }
        if obj.name().is_empty() {
            return Err(GenerateError::Input {
                origin: obj.source.clone(),
                message: format!("{kind} has no metadata.name"),
            });
        }
        let mut v = obj.object.clone();
        strip_namespace(&mut v);
        files::sort_keys(&mut v);
        let file = format!("manifests/{}", files::manifest_file_name(&v));
        if let Some((other, _)) = manifests.get(&file) {
            return Err(GenerateError::Input {
                origin: obj.source.clone(),
                message: format!(
                    "{kind} {:?} is defined twice (also in {other}); both would be written to {file}",
                    obj.name()
                ),
            });
        }
        manifests.insert(file, (obj.source.clone(), v));
    }

    // Secret volumes that would keep the operator's pod from starting under OLM.
    let bundle_secrets: BTreeSet<&str> = manifests
        .values()
        .filter(|(_, v)| v.get("kind").and_then(Value::as_str) == Some("Secret"))
        .filter_map(|(_, v)| v.pointer("/metadata/name").and_then(Value::as_str))
        .collect();
    let webhook_deployments: BTreeSet<&str> = hooks
        .definitions
        .iter()
        .filter_map(|d| d.get("deploymentName").and_then(Value::as_str))
        .collect();
    warnings.extend(certs::check_secret_volumes(
        &deployments,
        &bundle_secrets,
        &dropped_certs,
        &webhook_deployments,
    )?);
    warnings.extend(dropped_certs.notes(&deployments, &webhook_deployments));

    // The CSV.
    let base_owned = base
        .get("spec")
        .and_then(|s| s.pointer("/customresourcedefinitions/owned"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let (owned, dropped) = csv::owned_crds(&crds, &base_owned, o.fill_crd_descriptions);
    warnings.extend(dropped);
    let base_related = base
        .get("spec")
        .and_then(|s| s.get("relatedImages"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let related = if o.related_images_from_containers {
        csv::related_images(&base_related, &deployments)?
    } else {
        if !base_related.is_empty() {
            warnings.push(format!(
                "{}: spec.relatedImages of the CSV base replaced by the RELATED_IMAGE_* variables of the Deployments, as operator-sdk does (--related-images-from-containers keeps them)",
                input.csv_base_path.display()
            ));
        }
        csv::related_images_from_env(&deployments)?
    };
    let install_deployments = deployments
        .iter()
        .map(|d| csv::deployment_spec(d))
        .collect::<Result<Vec<_>, _>>()?;

    let mut csv = Value::Object(base.clone());
    csv["apiVersion"] = json!("operators.coreos.com/v1alpha1");
    csv["kind"] = json!("ClusterServiceVersion");
    if !csv.get("metadata").is_some_and(Value::is_object) {
        csv["metadata"] = json!({});
    }
    let csv_name = format!("{}.v{}", o.package, o.version);
    {
        let meta = csv["metadata"]
            .as_object_mut()
            .expect("metadata was just made a map");
        meta.insert("name".into(), json!(csv_name));
        meta.remove("creationTimestamp");
        let ann = meta.entry("annotations").or_insert_with(|| json!({}));
        if !ann.is_object() {
            return Err(base_err("metadata.annotations", "must be a map".into()));
        }
        let ann = ann.as_object_mut().expect("checked above");
        for (k, v) in ann.iter() {
            if !v.is_string() {
                return Err(base_err(
                    &format!("metadata.annotations[{k}]"),
                    "annotation values must be strings (quote it)".into(),
                ));
            }
        }
        // operator-sdk replaces alm-examples with the samples of the stream, `[]` when none.
        ann.insert("alm-examples".into(), json!(files::alm_examples(&examples)));
        if o.related_images_from_containers
            && let Some(img) = csv::operator_image(&deployments)
        {
            ann.insert("containerImage".into(), json!(img));
        }
        if let Some(r) = &o.skip_range {
            ann.insert("olm.skipRange".into(), json!(r));
        }
        ann.insert(
            "operators.operatorframework.io/builder".into(),
            json!(format!("olm-v{}", env!("CARGO_PKG_VERSION"))),
        );
        ann.remove("createdAt");
    }
    if !csv.get("spec").is_some_and(Value::is_object) {
        csv["spec"] = json!({});
    }
    {
        let spec = csv["spec"]
            .as_object_mut()
            .expect("spec was just made a map");
        spec.insert("version".into(), json!(o.version.to_string()));
        if let Some(r) = &o.replaces {
            spec.insert("replaces".into(), json!(r));
        }
        if !o.skips.is_empty() {
            spec.insert("skips".into(), json!(o.skips));
        }
        if let Some(k) = &o.min_kube_version {
            spec.insert("minKubeVersion".into(), json!(k));
        }
        if spec
            .get("installModes")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            spec.insert("installModes".into(), default_install_modes());
        }
        let mut install_spec = Map::new();
        if !perms.cluster_permissions.is_empty() {
            install_spec.insert(
                "clusterPermissions".into(),
                json!(perms.cluster_permissions),
            );
        }
        install_spec.insert("deployments".into(), json!(install_deployments));
        if !perms.permissions.is_empty() {
            install_spec.insert("permissions".into(), json!(perms.permissions));
        }
        spec.insert(
            "install".into(),
            json!({"spec": install_spec, "strategy": "deployment"}),
        );
        // Both sections are structs in operator-sdk's CSV type: always written, `{}` when empty.
        if !spec
            .get("apiservicedefinitions")
            .is_some_and(Value::is_object)
        {
            spec.insert("apiservicedefinitions".into(), json!({}));
        }
        let crd_section = spec
            .entry("customresourcedefinitions")
            .or_insert_with(|| json!({}));
        if crd_section.is_null() {
            *crd_section = json!({});
        }
        if !crd_section.is_object() {
            return Err(base_err(
                "spec.customresourcedefinitions",
                "must be a map".into(),
            ));
        }
        if owned.is_empty() {
            crd_section
                .as_object_mut()
                .expect("checked")
                .remove("owned");
        } else {
            crd_section["owned"] = json!(owned);
        }
        if hooks.definitions.is_empty() {
            spec.remove("webhookdefinitions");
        } else {
            spec.insert("webhookdefinitions".into(), json!(hooks.definitions));
        }
        if related.is_empty() {
            spec.remove("relatedImages");
        } else {
            spec.insert("relatedImages".into(), json!(related));
        }
    }

    if let Some(digests) = &o.image_digests {
        digests::apply(&mut csv, digests)?;
    }

    // Validate before writing anything.
    let problems: Vec<Finding> = crate::bundle::validate::csv::validate_csv(&csv)
        .into_iter()
        .filter(|f| f.level == Level::Error)
        .collect();
    if !problems.is_empty() {
        return Err(GenerateError::InvalidCsv(problems));
    }

    // The scorecard configuration: the project's own (config/scorecard in the stream), else
    // the default one when asked for.
    let scorecard_config = match scorecard {
        Some(i) => {
            if o.scorecard_image.is_some() {
                warnings.push(format!(
                    "{}: the manifests' scorecard Configuration is written; --scorecard/--scorecard-image ignored",
                    objects[i].source
                ));
            }
            files::scorecard_config_from(&objects[i].object)
        }
        None => o.scorecard_image.as_deref().map(files::scorecard_config),
    };

    // The tree, first with the previous createdAt (if any), to see whether anything changed.
    let csv_path = PathBuf::from(format!(
        "manifests/{}.clusterserviceversion.yaml",
        o.package
    ));
    let previous = input.previous.as_ref();
    let prev_created = previous.and_then(|p| previous_created_at(p, &csv_path));
    let extra = previous.map(previous_extra_annotations).unwrap_or_default();
    let mut tree = FileTree::new();
    for (file, (_, v)) in &manifests {
        tree.insert(file, render(file, v)?);
    }
    for crd in &crds {
        let mut v = crd.object.clone();
        strip_namespace(&mut v);
        files::sort_keys(&mut v);
        let file = format!("manifests/{}", files::manifest_file_name(&v));
        if tree.get(Path::new(&file)).is_some() {
            return Err(GenerateError::Input {
                origin: crd.source.clone(),
                message: format!("CRD {} is defined twice ({file})", crd.name()),
            });
        }
        tree.insert(&file, render(&file, &v)?);
    }
    let core = files::core_annotations(&o.package, &o.channels, o.default_channel.as_deref());
    let tests = if scorecard_config.is_some() {
        files::test_annotations()
    } else {
        Vec::new()
    };
    tree.insert(
        "metadata/annotations.yaml",
        files::annotations_yaml(&core, &extra, &tests),
    );
    tree.insert(
        "bundle.Dockerfile",
        files::dockerfile(&core, &extra, &tests),
    );
    if let Some(config) = &scorecard_config {
        tree.insert(
            "tests/scorecard/config.yaml",
            render("tests/scorecard/config.yaml", config)?,
        );
    }

    let with_created = |created: &str| -> Result<Vec<u8>, GenerateError> {
        let mut c = csv.clone();
        c["metadata"]["annotations"]["createdAt"] = json!(created);
        files::sort_keys(&mut c);
        Ok(render(&csv_path.display().to_string(), &c)?.into_bytes())
    };
    let mut final_tree = tree.clone();
    let unchanged = match (previous, &prev_created) {
        (Some(prev), Some(created)) => {
            final_tree.insert(&csv_path, with_created(created)?);
            same_tree(&final_tree, prev)
        }
        _ => false,
    };
    if !unchanged {
        final_tree = tree;
        final_tree.insert(&csv_path, with_created(&o.created_at)?);
    }
    Ok(Generated {
        tree: final_tree,
        warnings,
        csv_path,
    })
}

/// Takes the CSV base out of the manifests when it came with them (`kustomize build
/// config/manifests` includes `bases/<package>.clusterserviceversion.yaml`). Returns `None`
/// when the manifests hold no CSV; more than one is an error.
pub fn take_csv_base(
    manifests: &mut Vec<SourceObject>,
) -> Result<Option<SourceObject>, GenerateError> {
    let mut csvs: Vec<usize> = manifests
        .iter()
        .enumerate()
        .filter(|(_, o)| o.kind() == "ClusterServiceVersion")
        .map(|(i, _)| i)
        .collect();
    match csvs.len() {
        0 => Ok(None),
        1 => Ok(csvs.pop().map(|i| manifests.remove(i))),
        _ => Err(GenerateError::Input {
            origin: csvs
                .iter()
                .map(|&i| manifests[i].source.clone())
                .collect::<Vec<_>>()
                .join(", "),
            message:
                "the manifests hold more than one ClusterServiceVersion; keep only the CSV base"
                    .into(),
        }),
    }
}

fn hint_for_kind(kind: &str) -> &'static str {
    match kind {
        "StatefulSet" | "DaemonSet" | "Pod" | "Job" | "CronJob" | "ReplicaSet" => {
            ". Only Deployments can be installed, through the CSV's install strategy"
        }
        _ => "",
    }
}

/// OLM installs into the OperatorGroup's namespace: a namespace in the object would fight it.
fn strip_namespace(v: &mut Value) {
    if let Some(Value::Object(meta)) = v.get_mut("metadata") {
        meta.remove("namespace");
    }
}

/// All four modes, as operator-sdk's base has them; most operators support each one.
fn default_install_modes() -> Value {
    json!([
        {"supported": true, "type": "OwnNamespace"},
        {"supported": true, "type": "SingleNamespace"},
        {"supported": false, "type": "MultiNamespace"},
        {"supported": true, "type": "AllNamespaces"},
    ])
}

fn previous_created_at(prev: &FileTree, csv_path: &Path) -> Option<String> {
    let bytes = prev.get(csv_path)?;
    let text = std::str::from_utf8(bytes).ok()?;
    let v: Value = yaml::parse_one(csv_path, text).ok()?;
    v.pointer("/metadata/annotations/createdAt")?
        .as_str()
        .map(str::to_string)
}

fn previous_extra_annotations(prev: &FileTree) -> BTreeMap<String, String> {
    let path = Path::new("metadata/annotations.yaml");
    let Some(text) = prev.get(path).and_then(|b| std::str::from_utf8(b).ok()) else {
        return BTreeMap::new();
    };
    let Ok(v) = yaml::parse_one::<Value>(path, text) else {
        return BTreeMap::new();
    };
    v.get("annotations")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter(|(k, _)| !files::is_managed_annotation(k))
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `tree` equals the previous output (same files, same bytes).
fn same_tree(tree: &FileTree, prev: &FileTree) -> bool {
    tree.len() == prev.len() && tree.iter().all(|(p, b)| prev.get(p) == Some(b.as_slice()))
}

/// Reads the current output directory as a tree (the files the generator owns plus
/// `bundle.Dockerfile`), for [`GenerateInput::previous`].
pub fn read_previous(root: &Path) -> Option<FileTree> {
    if !root.is_dir() {
        return None;
    }
    let mut tree = FileTree::new();
    for dir in OWNED_DIRS {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            if e.file_type().is_ok_and(|t| t.is_file())
                && let Ok(bytes) = std::fs::read(e.path())
            {
                tree.insert(Path::new(dir).join(e.file_name()), bytes);
            }
        }
    }
    if let Ok(bytes) = std::fs::read(root.join("bundle.Dockerfile")) {
        tree.insert("bundle.Dockerfile", bytes);
    }
    Some(tree)
}
