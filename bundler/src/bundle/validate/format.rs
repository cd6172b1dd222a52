//! Bundle format: the directory layout and `metadata/` files, as operator-registry's
//! `ValidateBundleFormat` and operator-framework/api's bundle loader check them.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::{Ctx, Finding};
use crate::bundle::load::keys;
use crate::confined::RelPath;
use crate::grammar::semver_range;

const V: &str = "format";
const ANNOTATIONS: &str = "metadata/annotations.yaml";
const DEPENDENCIES: &str = "metadata/dependencies.yaml";

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    let b = ctx.bundle;
    let mut out = Vec::new();
    if !b.has_manifests_dir {
        // A common slip: the objects sit at the bundle root instead of in manifests/.
        let root = RelPath::root();
        let stray = b
            .tree
            .read_dir(&root)
            .map(|entries| {
                entries
                    .into_iter()
                    .filter(|(name, _)| {
                        let n = name.to_string_lossy();
                        (n.ends_with(".yaml") || n.ends_with(".yml") || n.ends_with(".json"))
                            && root.child(name).is_ok_and(|r| b.tree.is_file(&r))
                    })
                    .count()
            })
            .unwrap_or(0);
        let hint = if stray > 0 {
            format!(
                "{stray} YAML/JSON file(s) sit at the bundle root: move the Kubernetes objects into manifests/"
            )
        } else {
            "a registry+v1 bundle keeps its Kubernetes objects (the CSV, CRDs, ...) in manifests/ at the bundle root".to_string()
        };
        out.push(
            Finding::error(
                V,
                "missing-directory",
                "Unable to locate manifests directory",
            )
            .file("manifests/")
            .hint(hint),
        );
    }
    if !b.has_metadata_dir {
        out.push(
            Finding::error(V, "missing-directory", "Unable to locate metadata directory")
                .file("metadata/")
                .hint("create metadata/annotations.yaml with the operators.operatorframework.io.bundle.* annotations (`olm bundle generate` writes it)"),
        );
    }
    if !out.is_empty() {
        return out;
    }

    // What remains aside: subdirectories and hidden files.
    for entry in &b.unexpected_entries {
        let f = if b.is_dir_at(entry) {
            Finding::error(
                V,
                "nested-directory",
                format!(
                    "bundle manifests dir contains directory: {}",
                    entry.display()
                ),
            )
            .hint("manifests/ must be flat: move the files up or out of the bundle")
        } else {
            Finding::error(
                V,
                "hidden-file",
                format!("bundle manifests dir has hidden file: {}", entry.display()),
            )
            .hint("remove the hidden file from manifests/")
        };
        out.push(f.file(entry.clone()));
    }
    // operator-framework/api's loader decodes every file of manifests/ and fails on one that
    // is no object; opm renders without it.
    for (file, why) in &b.undecoded {
        out.push(
            Finding::error(V, "undecodable-file", format!("unable to decode object: {why}"))
                .file(file.clone())
                .hint("manifests/ holds only Kubernetes objects (YAML or JSON, any file name): opm leaves this file out of the bundle; remove it or fix it"),
        );
    }

    for (file, why) in &b.later_documents_undecoded {
        out.push(
            Finding::warning(
                V,
                "undecodable-document",
                format!("only the first document decodes; OLM reads only that one: {why}"),
            )
            .file(file.clone())
            .hint("put each object in its own file, and fix or remove the broken document"),
        );
    }

    if b.manifests.is_empty() {
        out.push(
            Finding::error(
                V,
                "no-manifests",
                "The directory manifests/ contains no yaml files",
            )
            .file("manifests/")
            .hint("a bundle needs at least its ClusterServiceVersion in manifests/"),
        );
    }

    // opm reads only the first document of each file; the rest would silently vanish.
    let mut docs_per_file: BTreeMap<&Path, usize> = BTreeMap::new();
    for m in &b.manifests {
        *docs_per_file.entry(m.file.as_path()).or_default() += 1;
    }
    for (file, n) in docs_per_file {
        if n > 1 {
            out.push(
                Finding::warning(
                    V,
                    "multiple-documents",
                    format!(
                        "found {n} documents inside {}, OLM uses only the first one",
                        file.display()
                    ),
                )
                .file(file)
                .hint("put each object in its own file"),
            );
        }
    }

    let csvs: Vec<_> = b.csvs().collect();
    match csvs.len() {
        0 if !b.manifests.is_empty() => out.push(
            Finding::error(V, "csv-count", "unable to find a csv in bundle directory manifests/")
                .file("manifests/")
                .hint("add the operator's ClusterServiceVersion (kind: ClusterServiceVersion) to manifests/"),
        ),
        0 | 1 => {}
        _ => out.push(
            Finding::error(
                V,
                "csv-count",
                format!(
                    "invalid bundle: contains multiple CSVs ({})",
                    csvs.iter().map(|m| m.file.display().to_string()).collect::<Vec<_>>().join(", ")
                ),
            )
            .file("manifests/")
            .hint("a bundle is one version of one operator: keep exactly one CSV"),
        ),
    }

    let media_type = if csvs.is_empty() {
        "plain"
    } else {
        "registry+v1"
    };
    match &b.annotations {
        None => out.push(
            Finding::error(V, "annotations", "Could not find annotations file")
                .file(ANNOTATIONS)
                .hint("metadata/annotations.yaml must hold an `annotations:` map with the operators.operatorframework.io.bundle.* keys"),
        ),
        Some(ann) => annotations(ann, media_type, &mut out),
    }
    for (file, why) in &b.skipped_metadata {
        out.push(
            Finding::warning(V, "metadata-file", format!("{} cannot be read and is ignored by OLM: {why}", file.display()))
                .file(file.clone())
                .hint("fix the YAML: until then the dependencies or properties it declares are not applied"),
        );
    }
    for (i, dep) in b.dependencies.iter().enumerate() {
        dependency(i, dep, &mut out);
    }
    // operator-framework/api does not read properties.yaml, and published bundles carry
    // entries without a value (or with extra keys): worth a warning, not a failure.
    for (i, p) in b.properties.iter().enumerate() {
        let no_type = p
            .get("type")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        let no_value = p.get("value").is_none();
        if no_type || no_value {
            let what = match (no_type, no_value) {
                (true, true) => "has neither a `type` string nor a `value`",
                (true, false) => "has no `type` string",
                _ => "has no `value`",
            };
            out.push(
                Finding::warning(
                    V,
                    "properties",
                    format!(
                        "property {what}; catalogs carry it as written (a missing value is null)"
                    ),
                )
                .file("metadata/properties.yaml")
                .field(format!("properties[{i}]"))
                .hint("write each property as `{type: <type>, value: <value>}`"),
            );
        }
    }
    out
}

fn annotations(ann: &BTreeMap<String, String>, media_type: &str, out: &mut Vec<Finding>) {
    let f = |check, msg: String| Finding::error(V, check, msg).file(ANNOTATIONS);
    for key in [
        keys::MEDIATYPE,
        keys::MANIFESTS,
        keys::METADATA,
        keys::PACKAGE,
        keys::CHANNELS,
    ] {
        if !ann.contains_key(key) {
            out.push(
                f("annotations", format!("Missing annotation {key:?}"))
                    .field(format!("annotations[{key}]"))
                    .hint("`olm bundle generate` writes every required annotation"),
            );
        }
    }
    // A missing media type is also the wrong one (opm compares it as empty), as opm says.
    let mt = ann.get(keys::MEDIATYPE).map(String::as_str).unwrap_or("");
    if mt != media_type {
        out.push(
            f(
                "annotations",
                format!(
                    "Expecting annotation {:?} to have value {media_type:?} instead of {mt:?}",
                    keys::MEDIATYPE
                ),
            )
            .field(format!("annotations[{}]", keys::MEDIATYPE))
            .hint(if media_type == "registry+v1" {
                "a bundle with a ClusterServiceVersion is registry+v1".to_string()
            } else {
                "registry+v1 needs a ClusterServiceVersion in manifests/".to_string()
            }),
        );
    }
    // opm does not compare these (its check is dead code) and OLM always uses /manifests/ and
    // /metadata/, so a different value is misleading rather than fatal.
    for (key, want) in [
        (keys::MANIFESTS, "manifests/"),
        (keys::METADATA, "metadata/"),
    ] {
        if let Some(got) = ann.get(key)
            && got != want
        {
            out.push(
                Finding::warning(
                    V,
                    "annotations",
                    format!("annotation {key:?} is {got:?}; OLM always reads {want:?}"),
                )
                .file(ANNOTATIONS)
                .field(format!("annotations[{key}]"))
                .hint(format!("set it to {want:?}")),
            );
        }
    }
    if let Some(pkg) = ann.get(keys::PACKAGE)
        && pkg.is_empty()
    {
        out.push(
            f(
                "annotations",
                format!(
                    "Expecting annotation {:?} to have non-empty value",
                    keys::PACKAGE
                ),
            )
            .field(format!("annotations[{}]", keys::PACKAGE)),
        );
    }
    let channels = ann.get(keys::CHANNELS);
    for key in [keys::CHANNELS, keys::DEFAULT_CHANNEL] {
        if let Some(v) = ann.get(key)
            && v.is_empty()
        {
            out.push(
                f(
                    "annotations",
                    format!("Expecting annotation {key:?} to have non-empty value"),
                )
                .field(format!("annotations[{key}]")),
            );
        }
    }
    if let Some(ch) = channels.filter(|c| !c.is_empty()) {
        let list: Vec<&str> = ch.split(',').collect();
        if list.iter().any(|c| c.is_empty()) {
            out.push(
                f(
                    "annotations",
                    format!("invalid channels are provided: {ch}"),
                )
                .field(format!("annotations[{}]", keys::CHANNELS))
                .hint("channels are comma-separated with no empty entries, e.g. `stable,fast`"),
            );
        } else if let Some(def) = ann.get(keys::DEFAULT_CHANNEL).filter(|d| !d.is_empty())
            && !list.contains(&def.as_str())
        {
            // Legal (another bundle of the package may define that channel), but usually a slip.
            out.push(
                Finding::warning(V, "annotations", format!("the channel list {ch:?} doesn't contain channelDefault {def:?}"))
                    .file(ANNOTATIONS)
                    .field(format!("annotations[{}]", keys::DEFAULT_CHANNEL))
                    .hint("unless another bundle of the package puts itself in that channel, add it to the channels annotation or pick one of them as the default"),
            );
        }
    }
}

fn dependency(i: usize, dep: &Value, out: &mut Vec<Finding>) {
    let field = format!("dependencies[{i}]");
    let err = |msg: String| {
        Finding::error(V, "dependencies", msg)
            .file(DEPENDENCIES)
            .field(field.clone())
    };
    let ty = dep.get("type").and_then(Value::as_str).unwrap_or("");
    let value = dep.get("value").unwrap_or(&Value::Null);
    let s = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or("");
    match ty {
        "olm.gvk" => {
            if !value.is_object() {
                out.push(err(format!("couldn't parse dependency of type {ty}")));
                return;
            }
            for (k, what) in [("group", "Group"), ("version", "Version"), ("kind", "Kind")] {
                if s(k).is_empty() {
                    out.push(err(format!("API {what} is empty")));
                }
            }
        }
        "olm.package" => {
            if !value.is_object() {
                out.push(err(format!("couldn't parse dependency of type {ty}")));
                return;
            }
            if s("packageName").is_empty() {
                out.push(err("Package name is empty".into()));
            }
            let version = s("version");
            if version.is_empty() {
                out.push(err("Package version is empty".into()));
            } else if let Err(e) = semver_range::Range::parse(version) {
                out.push(
                    err(format!("Invalid semver format version: {e}"))
                        .hint("use a semver range such as `>=1.2.0 <2.0.0`"),
                );
            }
        }
        "olm.label" => {
            if s("label").is_empty() {
                out.push(err("Label information is missing".into()));
            }
        }
        "olm.constraint" => {
            if !value.is_object() {
                out.push(err(format!("couldn't parse dependency of type {ty}")));
                return;
            }
            if let Some(cel) = value.get("cel") {
                if cel
                    .get("rule")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    out.push(err("The CEL expression is missing".into()));
                }
            } else if !["gvk", "package", "all", "any", "not"]
                .iter()
                .any(|k| value.get(k).is_some())
            {
                out.push(err(
                    "constraint must have one of cel, gvk, package, all, any or not".into(),
                ));
            }
            if serde_json::to_vec(value).map(|b| b.len()).unwrap_or(0) > 2 << 16 {
                out.push(err(
                    "olm.constraint value is greater than max constraint size 131072 bytes".into(),
                ));
            }
        }
        "" => out.push(
            err("dependency has no `type`".into())
                .hint("use olm.package, olm.gvk, olm.label or olm.constraint"),
        ),
        other => out.push(
            err(format!("couldn't parse dependency of type {other}")).hint(
                "OLM knows the dependency types olm.package, olm.gvk, olm.label and olm.constraint",
            ),
        ),
    }
}
