//! A bundle directory as `opm render` reads it (operator-registry `registry.NewImageInput`):
//! which objects it keeps, which CSV it picks, and what it refuses before rendering.
//!
//! - One object per file: the first document (a file decodes to one object).
//! - An object without a `kind` is no object (Kubernetes' unstructured decoder rejects it), so a
//!   package manifest (`*.package.yaml`) left in `manifests/` is not part of the bundle.
//! - The CSV is the first file's, in file-name order, that holds one; other CSVs (the legacy
//!   package-manifest layout keeps every version in one directory; a copy of the CSV) are left
//!   out.
//! - Every CRD the CSV owns must be in the bundle (`AllProvidedAPIsInBundle`).
//! - The install strategy's deployments must decode as Kubernetes `DeploymentSpec`s (opm reads
//!   their images): a number where a string belongs fails.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::bundle::load::{BundleDir, Manifest};

const CSV_KIND: &str = "ClusterServiceVersion";

/// The objects of a bundle that opm renders.
#[derive(Debug)]
pub struct OpmBundle<'a> {
    pub csv: &'a Manifest,
    /// In file-name order, the CSV among them.
    pub objects: Vec<&'a Manifest>,
}

fn kind(m: &Manifest) -> Option<&str> {
    m.object
        .get("kind")
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn arr_at<'a>(v: &'a Value, ptr: &str) -> &'a [Value] {
    v.pointer(ptr)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Picks the objects and the CSV of `bd` as opm does, and applies opm's checks. The error is
/// the message (the caller names the directory).
pub fn read(bd: &BundleDir) -> Result<OpmBundle<'_>, String> {
    // opm skips a file that does not decode, with a warning: so does this, naming the file.
    for (file, why) in &bd.undecoded {
        tracing::warn!(
            "{}: left out of the bundle, as opm leaves it out: {why}",
            bd.root.join(file).display()
        );
    }
    // A file whose first document is not an object with a kind is skipped as a whole.
    let mut seen_files = BTreeSet::new();
    let decoded: Vec<&Manifest> = bd
        .manifests
        .iter()
        .filter(|m| seen_files.insert(&m.file))
        .filter(|m| kind(m).is_some())
        .collect();
    let Some(csv) = decoded.iter().copied().find(|m| kind(m) == Some(CSV_KIND)) else {
        return Err(with_undecoded(
            "no ClusterServiceVersion found in manifests/ (opm reads the first document of each file)"
                .into(),
            bd,
        ));
    };
    // Only the first CSV: another one, even of the same name, is left out.
    let objects: Vec<&Manifest> = decoded
        .into_iter()
        .filter(|m| kind(m) != Some(CSV_KIND) || std::ptr::eq(*m, csv))
        .collect();
    let b = OpmBundle { csv, objects };
    b.check_owned_crds().map_err(|e| with_undecoded(e, bd))?;
    b.check_deployments()?;
    Ok(b)
}

/// `message`, followed by the files left out because they do not decode: the likely cause of
/// a missing CSV or CRD.
fn with_undecoded(message: String, bd: &BundleDir) -> String {
    let left_out: Vec<String> = bd
        .undecoded
        .iter()
        .map(|(file, why)| format!("{} ({why})", file.display()))
        .collect();
    match left_out.is_empty() {
        true => message,
        false => format!(
            "{message}; left out, not decodable: {}",
            left_out.join("; ")
        ),
    }
}

/// An API as opm keys it: group, version, kind and plural.
type ApiKey<'a> = (&'a str, &'a str, &'a str, &'a str);

impl OpmBundle<'_> {
    /// The APIs the bundle serves (opm `Bundle.ProvidedAPIs`): every version of every CRD of
    /// `apiextensions` version v1 or v1beta1 (plus v1beta1's `spec.version`), and the owned
    /// APIServices.
    fn provided_apis(&self) -> BTreeSet<ApiKey<'_>> {
        let mut out = BTreeSet::new();
        for m in &self.objects {
            if kind(m) != Some("CustomResourceDefinition") {
                continue;
            }
            let o = &m.object;
            let api_version = str_at(o, "/apiVersion");
            let version = api_version.rsplit('/').next().unwrap_or("");
            if version != "v1" && version != "v1beta1" {
                continue;
            }
            let group = str_at(o, "/spec/group");
            let crd_kind = str_at(o, "/spec/names/kind");
            let plural = str_at(o, "/spec/names/plural");
            for v in arr_at(o, "/spec/versions") {
                out.insert((group, str_at(v, "/name"), crd_kind, plural));
            }
            let legacy = str_at(o, "/spec/version");
            if version == "v1beta1" && !legacy.is_empty() {
                out.insert((group, legacy, crd_kind, plural));
            }
        }
        for a in arr_at(&self.csv.object, "/spec/apiservicedefinitions/owned") {
            out.insert((
                str_at(a, "/group"),
                str_at(a, "/version"),
                str_at(a, "/kind"),
                str_at(a, "/name"),
            ));
        }
        out
    }

    /// opm refuses a bundle whose CSV owns a CRD that is not in it (the lookup is exact,
    /// case included).
    fn check_owned_crds(&self) -> Result<(), String> {
        let provided = self.provided_apis();
        let file = self.csv.file.display();
        for (i, c) in arr_at(&self.csv.object, "/spec/customresourcedefinitions/owned")
            .iter()
            .enumerate()
        {
            let field = format!("spec.customresourcedefinitions.owned[{i}]");
            let name = str_at(c, "/name");
            let Some((plural, group)) = name.split_once('.') else {
                return Err(format!(
                    "{file}: {field}.name {name:?} is not <plural>.<group>; name the CRD as its metadata.name"
                ));
            };
            let (version, crd_kind) = (str_at(c, "/version"), str_at(c, "/kind"));
            if !provided.contains(&(group, version, crd_kind, plural)) {
                return Err(format!(
                    "{file}: {field} owns {group}/{version}/{crd_kind} ({plural}), but no CustomResourceDefinition in manifests/ serves it (opm: couldn't find it in bundle); add the CRD to manifests/, or list the API under spec.customresourcedefinitions.required if another operator provides it"
                ));
            }
        }
        Ok(())
    }

    /// The fields of the install strategy's containers that opm decodes as strings when it
    /// reads the operator images: a number or a map there fails its render.
    fn check_deployments(&self) -> Result<(), String> {
        let file = self.csv.file.display();
        let strategy = "spec.install.spec.deployments";
        for (d, dep) in arr_at(&self.csv.object, "/spec/install/spec/deployments")
            .iter()
            .enumerate()
        {
            let string = |v: Option<&Value>, field: String| -> Result<(), String> {
                match v {
                    None | Some(Value::Null) | Some(Value::String(_)) => Ok(()),
                    Some(other) => Err(format!(
                        "{file}: {field}: must be a string, found {} (quote it); opm cannot read the deployment",
                        crate::bundle::validate::v::type_name(other)
                    )),
                }
            };
            string(dep.get("name"), format!("{strategy}[{d}].name"))?;
            for list in ["initContainers", "containers"] {
                let ptr = format!("/spec/template/spec/{list}");
                for (c, container) in arr_at(dep, &ptr).iter().enumerate() {
                    let at = format!("{strategy}[{d}].spec.template.spec.{list}[{c}]");
                    for key in ["name", "image", "imagePullPolicy", "workingDir"] {
                        string(container.get(key), format!("{at}.{key}"))?;
                    }
                    for key in ["command", "args"] {
                        for (i, v) in arr_at(container, &format!("/{key}")).iter().enumerate() {
                            string(Some(v), format!("{at}.{key}[{i}]"))?;
                        }
                    }
                    for (e, env) in arr_at(container, "/env").iter().enumerate() {
                        string(env.get("name"), format!("{at}.env[{e}].name"))?;
                        string(env.get("value"), format!("{at}.env[{e}].value"))?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn manifest(file: &str, object: Value) -> Manifest {
        Manifest {
            file: PathBuf::from(file),
            object,
        }
    }

    fn csv(name: &str, spec: Value) -> Value {
        serde_json::json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": name}, "spec": spec})
    }

    fn bundle(manifests: Vec<Manifest>) -> BundleDir {
        BundleDir {
            manifests,
            ..Default::default()
        }
    }

    #[test]
    fn the_first_csv_by_file_name_wins_and_objects_without_kind_are_dropped() {
        let bd = bundle(vec![
            manifest(
                "manifests/a.package.yaml",
                serde_json::json!({"packageName": "p"}),
            ),
            manifest(
                "manifests/b.v1.csv.yaml",
                csv("b.v1", serde_json::json!({})),
            ),
            manifest(
                "manifests/b.v2.csv.yaml",
                csv("b.v2", serde_json::json!({})),
            ),
            manifest(
                "manifests/c.yaml",
                serde_json::json!({"kind": "ConfigMap", "metadata": {"name": "x"}}),
            ),
            manifest("manifests/c.yaml", serde_json::json!({"kind": "Secret"})),
        ]);
        let b = read(&bd).unwrap();
        assert_eq!(b.csv.file, PathBuf::from("manifests/b.v1.csv.yaml"));
        let files: Vec<_> = b
            .objects
            .iter()
            .map(|m| m.file.display().to_string())
            .collect();
        assert_eq!(files, ["manifests/b.v1.csv.yaml", "manifests/c.yaml"]);
        assert_eq!(kind(b.objects[1]), Some("ConfigMap"));
    }

    #[test]
    fn an_owned_crd_must_be_in_the_bundle() {
        let owned = serde_json::json!({"customresourcedefinitions": {"owned": [
            {"name": "foos.example.com", "version": "v1", "kind": "Foo"}
        ]}});
        let crd = |plural: &str| {
            manifest(
                "manifests/crd.yaml",
                serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                    "spec": {"group": "example.com", "names": {"kind": "Foo", "plural": plural}, "versions": [{"name": "v1"}]}}),
            )
        };
        let only_csv = bundle(vec![manifest(
            "manifests/csv.yaml",
            csv("foo.v1", owned.clone()),
        )]);
        let e = read(&only_csv).unwrap_err();
        assert!(
            e.contains("spec.customresourcedefinitions.owned[0] owns example.com/v1/Foo (foos)"),
            "{e}"
        );
        let ok = bundle(vec![
            crd("foos"),
            manifest("manifests/csv.yaml", csv("foo.v1", owned.clone())),
        ]);
        assert!(read(&ok).is_ok());
        // Case-sensitive, as opm's map lookup.
        let wrong_case = bundle(vec![
            crd("Foos"),
            manifest("manifests/csv.yaml", csv("foo.v1", owned)),
        ]);
        assert!(read(&wrong_case).is_err());
    }

    #[test]
    fn a_number_where_a_container_string_belongs_is_refused() {
        let spec = serde_json::json!({"install": {"spec": {"deployments": [{"name": "d", "spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": 1.0}]}]}}}}]}}});
        let bd = bundle(vec![manifest("manifests/csv.yaml", csv("x.v1", spec))]);
        let e = read(&bd).unwrap_err();
        assert_eq!(
            e,
            "manifests/csv.yaml: spec.install.spec.deployments[0].spec.template.spec.containers[0].env[0].value: must be a string, found a number (quote it); opm cannot read the deployment"
        );
    }
}
