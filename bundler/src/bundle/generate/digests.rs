//! operator-sdk's `generate bundle --use-image-digests`: every image the CSV names, pinned by
//! digest, and `spec.relatedImages` listing them all. operator-sdk does it with
//! operator-manifest-tools (`pkg/pullspec`, `pkg/image`); the pull specs, their names and the
//! conflict rule are theirs. The digests come from a registry, so they are an input here (the
//! caller resolves [`to_resolve`] first); this module only reads and rewrites the CSV.
//!
//! Differences on purpose: operator-manifest-tools writes `relatedImages` in Go map order
//! (a different order on every run) and re-encodes the whole CSV with yaml.v3; here they are
//! sorted by name and the CSV keeps the generator's format, so the output is reproducible.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::grammar::image_ref;

/// One image the CSV names, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PullSpec {
    /// Its `relatedImages` name (operator-manifest-tools' `Name()`).
    pub name: String,
    pub image: String,
    /// Where it was found, for messages.
    pub place: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DigestsError {
    #[error("{place}: \"valueFrom\" references are not supported with --use-image-digests")]
    ValueFrom { place: String },
    /// `first` and `second`: each image with where it is used.
    #[error("relatedImages: the name {name:?} is used for two images: {first} and {second}")]
    Conflict {
        name: String,
        first: String,
        second: String,
    },
    #[error("{place}: no digest was resolved for {image}")]
    Unresolved { place: String, image: String },
}

/// Every pull spec of the CSV, in operator-manifest-tools' order: `relatedImages`, the
/// Deployments' containers, their init containers, `RELATED_IMAGE_*` variables, the
/// `containerImage` annotation, then image references in other annotations.
pub fn pull_specs(csv: &Value) -> Result<Vec<PullSpec>, DigestsError> {
    let mut out = Vec::new();
    for (i, r) in array(csv.pointer("/spec/relatedImages")).iter().enumerate() {
        if let Some(image) = r.get("image").and_then(Value::as_str) {
            out.push(PullSpec {
                name: str_of(r, "name"),
                image: image.to_string(),
                place: format!("spec.relatedImages[{i}]"),
            });
        }
    }
    let deployments = array(csv.pointer("/spec/install/spec/deployments"));
    let mut all_containers = Vec::new();
    for kind in ["containers", "initContainers"] {
        for d in deployments {
            let deployment = str_of(d, "name");
            for c in array(d.pointer(&format!("/spec/template/spec/{kind}"))) {
                let place = format!("deployment {deployment}, {kind} {}", str_of(c, "name"));
                if let Some(image) = c.get("image").and_then(Value::as_str) {
                    out.push(PullSpec {
                        name: str_of(c, "name"),
                        image: image.to_string(),
                        place: place.clone(),
                    });
                }
                all_containers.push((c, place));
            }
        }
    }
    for (c, place) in &all_containers {
        for e in array(c.get("env")) {
            let var = str_of(e, "name");
            let Some(suffix) = var.strip_prefix("RELATED_IMAGE_") else {
                continue;
            };
            let place = format!("{place}, env {var}");
            if e.get("valueFrom").is_some() {
                return Err(DigestsError::ValueFrom { place });
            }
            if let Some(image) = e.get("value").and_then(Value::as_str) {
                out.push(PullSpec {
                    name: suffix.trim().to_lowercase(),
                    image: image.to_string(),
                    place,
                });
            }
        }
    }
    let annotation_maps = annotation_maps(csv);
    for only_container_image in [true, false] {
        for (map, at) in &annotation_maps {
            for (key, value) in map.iter() {
                if (key == "containerImage") != only_container_image {
                    continue;
                }
                let Some(text) = value.as_str() else { continue };
                for image in images_in(text) {
                    out.push(PullSpec {
                        name: annotation_name(image),
                        image: image.to_string(),
                        place: format!("{at}[{key}]"),
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The images to ask a registry for: every pull spec not already pinned by digest, once.
pub fn to_resolve(specs: &[PullSpec]) -> Vec<String> {
    let mut images: Vec<String> = specs
        .iter()
        .filter(|s| !s.image.contains('@'))
        .map(|s| s.image.clone())
        .collect();
    images.sort();
    images.dedup();
    images
}

/// Rewrites every image reference of the CSV that `digests` resolves (image as written ->
/// `repository@sha256:...`), in the pull specs and wherever else it appears as a word, then
/// sets `relatedImages` to every pull spec by name (the first of a name wins; one name for
/// two images is an error), sorted by name.
pub fn apply(csv: &mut Value, digests: &BTreeMap<String, String>) -> Result<(), DigestsError> {
    for spec in pull_specs(csv)? {
        if !spec.image.contains('@') && !digests.contains_key(&spec.image) {
            return Err(DigestsError::Unresolved {
                place: spec.place,
                image: spec.image,
            });
        }
    }
    replace_everywhere(csv, digests);
    let mut by_name: BTreeMap<String, PullSpec> = BTreeMap::new();
    for spec in pull_specs(csv)? {
        match by_name.get(&spec.name) {
            None => {
                by_name.insert(spec.name.clone(), spec);
            }
            Some(first) if first.image == spec.image => {}
            Some(first) => {
                return Err(DigestsError::Conflict {
                    name: spec.name,
                    first: format!("{} ({})", first.image, first.place),
                    second: format!("{} ({})", spec.image, spec.place),
                });
            }
        }
    }
    if by_name.is_empty() {
        return Ok(());
    }
    let related: Vec<Value> = by_name
        .values()
        .map(|s| json!({"name": s.name, "image": s.image}))
        .collect();
    if let Some(spec) = csv.get_mut("spec").and_then(Value::as_object_mut) {
        spec.insert("relatedImages".into(), Value::Array(related));
    }
    Ok(())
}

fn array(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The annotation maps operator-manifest-tools searches: the CSV's, and each Deployment
/// template's.
fn annotation_maps(csv: &Value) -> Vec<(&serde_json::Map<String, Value>, String)> {
    let mut out = Vec::new();
    if let Some(m) = csv
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
    {
        out.push((m, "metadata.annotations".to_string()));
    }
    for d in array(csv.pointer("/spec/install/spec/deployments")) {
        if let Some(m) = d
            .pointer("/spec/template/metadata/annotations")
            .and_then(Value::as_object)
        {
            out.push((m, format!("deployment {} annotations", str_of(d, "name"))));
        }
    }
    out
}

/// Words of `text` that are image references with a registry host and a tag or digest
/// (`quay.io/org/op:v1`): what an annotation can name an image by without being mistaken
/// for prose.
fn images_in(text: &str) -> Vec<&str> {
    text.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | '[' | ']' | '{' | '}'))
        .filter(|w| looks_like_image(w))
        .collect()
}

fn looks_like_image(word: &str) -> bool {
    let (name, tag, digest) = image_ref::split(word);
    image_ref::registry_host(name).is_some()
        && (tag.is_some() || digest.is_some())
        && image_ref::validate(word).is_ok()
}

/// operator-manifest-tools' name of an annotation pull spec: `<repo>-<tag>-annotation`, the
/// repository's last component and the tag (or the digest's hex).
fn annotation_name(image: &str) -> String {
    let (name, tag, digest) = image_ref::split(image);
    let repo = name.rsplit('/').next().unwrap_or(name);
    let tag = tag
        .or_else(|| digest.map(|d| d.strip_prefix("sha256:").unwrap_or(d)))
        .unwrap_or("latest");
    format!("{repo}-{tag}-annotation")
}

/// Replaces every word of every string in `v` that `digests` maps.
fn replace_everywhere(v: &mut Value, digests: &BTreeMap<String, String>) {
    match v {
        Value::String(s) => {
            if let Some(pinned) = digests.get(s.as_str()) {
                *s = pinned.clone();
            } else if s.contains(' ') || s.contains('"') || s.contains(',') {
                let mut out = s.clone();
                for (from, to) in digests {
                    out = replace_word(&out, from, to);
                }
                *s = out;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|i| replace_everywhere(i, digests)),
        Value::Object(m) => m.values_mut().for_each(|i| replace_everywhere(i, digests)),
        _ => {}
    }
}

/// `text` with each occurrence of `from` that stands as a word (not part of a longer
/// reference) replaced by `to`.
fn replace_word(text: &str, from: &str, to: &str) -> String {
    let boundary = |c: Option<char>| {
        c.is_none_or(|c| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | '[' | ']' | '{' | '}'))
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(from) {
        let before = if i > 0 {
            rest[..i].chars().last()
        } else {
            out.chars().last()
        };
        let after = rest[i + from.len()..].chars().next();
        out.push_str(&rest[..i]);
        if boundary(before) && boundary(after) {
            out.push_str(to);
        } else {
            out.push_str(from);
        }
        rest = &rest[i + from.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv() -> Value {
        json!({
            "kind": "ClusterServiceVersion",
            "metadata": {"annotations": {
                "containerImage": "quay.io/org/op:v1",
                "alm-examples": "[{\"spec\": {\"image\": \"quay.io/org/app:2.0\"}}]",
                "description": "not an image: v1, org/op"
            }},
            "spec": {
                "install": {"spec": {"deployments": [{
                    "name": "op-controller",
                    "spec": {"template": {"spec": {
                        "containers": [{
                            "name": "manager",
                            "image": "quay.io/org/op:v1",
                            "env": [
                                {"name": "RELATED_IMAGE_APP", "value": "quay.io/org/app:2.0"},
                                {"name": "OTHER", "value": "x"}
                            ]
                        }],
                        "initContainers": [{"name": "init", "image": "docker.io/library/busybox:1.36"}]
                    }}}
                }]}},
                "relatedImages": [{"name": "app", "image": "quay.io/org/app:2.0"}]
            }
        })
    }

    /// `sha256:` and 64 times `c`.
    fn d(c: char) -> String {
        format!("sha256:{}", c.to_string().repeat(64))
    }

    fn digests() -> BTreeMap<String, String> {
        [
            ("quay.io/org/op:v1", format!("quay.io/org/op@{}", d('a'))),
            ("quay.io/org/app:2.0", format!("quay.io/org/app@{}", d('b'))),
            (
                "docker.io/library/busybox:1.36",
                format!("docker.io/library/busybox@{}", d('c')),
            ),
        ]
        .into_iter()
        .map(|(a, b)| (a.to_string(), b))
        .collect()
    }

    #[test]
    fn finds_pull_specs_in_operator_manifest_tools_order() {
        let specs = pull_specs(&csv()).unwrap();
        let names: Vec<(&str, &str)> = specs
            .iter()
            .map(|s| (s.name.as_str(), s.image.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("app", "quay.io/org/app:2.0"),
                ("manager", "quay.io/org/op:v1"),
                ("init", "docker.io/library/busybox:1.36"),
                ("app", "quay.io/org/app:2.0"),
                ("op-v1-annotation", "quay.io/org/op:v1"),
                ("app-2.0-annotation", "quay.io/org/app:2.0"),
            ]
        );
        assert_eq!(
            to_resolve(&specs),
            [
                "docker.io/library/busybox:1.36",
                "quay.io/org/app:2.0",
                "quay.io/org/op:v1"
            ]
        );
    }

    #[test]
    fn pins_everywhere_and_lists_every_image_once_by_name() {
        let mut v = csv();
        apply(&mut v, &digests()).unwrap();
        let op = format!("quay.io/org/op@{}", d('a'));
        let app = format!("quay.io/org/app@{}", d('b'));
        let busybox = format!("docker.io/library/busybox@{}", d('c'));
        assert_eq!(
            v.pointer("/spec/install/spec/deployments/0/spec/template/spec/containers/0/image"),
            Some(&json!(op))
        );
        assert_eq!(
            v.pointer("/metadata/annotations/alm-examples"),
            Some(&json!(format!("[{{\"spec\": {{\"image\": \"{app}\"}}}}]")))
        );
        assert_eq!(
            v.pointer("/metadata/annotations/description"),
            Some(&json!("not an image: v1, org/op"))
        );
        let hex = |c: char| c.to_string().repeat(64);
        assert_eq!(
            v["spec"]["relatedImages"],
            json!([
                {"name": "app", "image": app},
                {"name": format!("app-{}-annotation", hex('b')), "image": app},
                {"name": "init", "image": busybox},
                {"name": "manager", "image": op},
                {"name": format!("op-{}-annotation", hex('a')), "image": op},
            ])
        );
        // Applying again changes nothing.
        let once = v.clone();
        apply(&mut v, &digests()).unwrap();
        assert_eq!(v, once);
    }

    #[test]
    fn errors_name_the_place() {
        let mut v = csv();
        v["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"]
            [0]["env"][0] = json!({"name": "RELATED_IMAGE_X", "valueFrom": {}});
        assert_eq!(
            pull_specs(&v).unwrap_err().to_string(),
            "deployment op-controller, containers manager, env RELATED_IMAGE_X: \"valueFrom\" references are not supported with --use-image-digests"
        );
        let mut v = csv();
        v["spec"]["relatedImages"][0]["image"] = json!("quay.io/org/other:1");
        let e = apply(&mut v, &digests()).unwrap_err().to_string();
        assert!(
            e.contains("no digest was resolved for quay.io/org/other:1"),
            "{e}"
        );
        let mut more = digests();
        more.insert(
            "quay.io/org/other:1".into(),
            format!("quay.io/org/other@{}", d('d')),
        );
        let e = apply(&mut v, &more).unwrap_err().to_string();
        assert!(e.contains("the name \"app\" is used for two images"), "{e}");
    }
}
