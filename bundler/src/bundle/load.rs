//! Reading a registry+v1 bundle directory into memory.
//!
//! A bundle is `manifests/` (Kubernetes objects, one CSV among them), `metadata/annotations.yaml`
//! (the `operators.operatorframework.io.bundle.*` labels) and optionally
//! `metadata/dependencies.yaml`, `metadata/properties.yaml` and `tests/scorecard/`. Anything else
//! at the top level (a Dockerfile, a Makefile) is ignored, as opm and OLM ignore it.
//!
//! `manifests/` is read as operator-registry reads it: every regular file whatever its name
//! (`foo.crd`, `bar.yml`, `baz.json`), hidden files and subdirectories excepted, decoded as a
//! YAML or JSON stream. A file there that does not decode (empty, binary, not YAML) is kept
//! aside in [`BundleDir::undecoded`]: `opm render` skips such a file, operator-framework/api's
//! loader (`operator-sdk bundle validate`) fails on it, and each command here does what the
//! tool it replaces does.
//!
//! Loading is lenient about *content* (validation reports problems later, with context) and
//! strict about the *syntax* of `metadata/annotations.yaml`: an error naming the file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::confined::{EntryKind, RelPath, Tree};
use crate::yaml::{self, YamlError};

/// Annotation keys of `metadata/annotations.yaml` (and the bundle image labels).
pub mod keys {
    pub const MEDIATYPE: &str = "operators.operatorframework.io.bundle.mediatype.v1";
    pub const MANIFESTS: &str = "operators.operatorframework.io.bundle.manifests.v1";
    pub const METADATA: &str = "operators.operatorframework.io.bundle.metadata.v1";
    pub const PACKAGE: &str = "operators.operatorframework.io.bundle.package.v1";
    pub const CHANNELS: &str = "operators.operatorframework.io.bundle.channels.v1";
    pub const DEFAULT_CHANNEL: &str = "operators.operatorframework.io.bundle.channel.default.v1";
    pub const TEST_MEDIATYPE: &str = "operators.operatorframework.io.test.mediatype.v1";
    pub const TEST_CONFIG: &str = "operators.operatorframework.io.test.config.v1";
}

/// One Kubernetes object from `manifests/`, with the file it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// Path relative to the bundle root, e.g. `manifests/foo.clusterserviceversion.yaml`.
    pub file: PathBuf,
    pub object: Value,
}

impl Manifest {
    pub fn kind(&self) -> &str {
        self.object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    pub fn api_version(&self) -> &str {
        self.object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    pub fn name(&self) -> &str {
        self.object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

/// A bundle directory as read from disk, before validation.
#[derive(Debug, Clone, Default)]
pub struct BundleDir {
    /// The bundle's root as messages show it.
    pub root: PathBuf,
    /// Where its files are read from (confined to the image for a pulled bundle image).
    pub tree: Tree,
    /// `metadata/annotations.yaml` `annotations:` map; `None` when the file is missing.
    pub annotations: Option<BTreeMap<String, String>>,
    /// Every object of every file in `manifests/`, in file-name order then document order.
    pub manifests: Vec<Manifest>,
    /// `metadata/dependencies.yaml` `dependencies:` list, verbatim.
    pub dependencies: Vec<Value>,
    /// `metadata/properties.yaml` `properties:` list, verbatim.
    pub properties: Vec<Value>,
    /// Whether `manifests/` exists at all (a bundle without it is malformed, not empty).
    pub has_manifests_dir: bool,
    /// Whether `metadata/` exists.
    pub has_metadata_dir: bool,
    /// Entries inside manifests/ that are not loadable files: subdirectories and hidden files.
    pub unexpected_entries: Vec<PathBuf>,
    /// Files of manifests/ that hold no decodable document (empty, binary, not YAML, too
    /// large, not a regular file), with the reason: opm leaves them out of the bundle.
    pub undecoded: Vec<(PathBuf, String)>,
    /// Files of manifests/ whose first document decodes but a later one does not, with the
    /// reason: opm and operator-framework/api read only the first, so it is kept.
    pub later_documents_undecoded: Vec<(PathBuf, String)>,
    /// Other files under `tests/scorecard/` (relative paths), for image builds.
    pub scorecard_files: Vec<PathBuf>,
    /// `metadata/dependencies.yaml` or `properties.yaml` files that could not be read and were
    /// skipped, with the reason: opm and OLM skip undecodable metadata files too, so this is
    /// for validation to report, not a load failure.
    pub skipped_metadata: Vec<(PathBuf, String)>,
}

/// A bundle directory that could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{0}: not a directory")]
    NotADirectory(PathBuf),
    #[error(transparent)]
    Yaml(#[from] YamlError),
    #[error("{}: not a bundle manifest: {why} (fix or remove the file)", file.display())]
    Undecodable { file: PathBuf, why: String },
    #[error("{}: more than {limit_mib} MiB of manifests; a bundle this large is refused", dir.display())]
    TooLarge { dir: PathBuf, limit_mib: u64 },
    #[error("{path}: `{field}` must be {expected}")]
    Shape {
        path: PathBuf,
        field: String,
        expected: &'static str,
    },
}

/// The entries of `dir` in `tree`, sorted by name, as a path in the bundle and its kind
/// (a link not followed).
fn sorted_entries(tree: &Tree, dir: &RelPath) -> Result<Vec<(RelPath, EntryKind)>, YamlError> {
    let entries = tree.read_dir(dir).map_err(|source| YamlError::Io {
        path: tree.shown(dir),
        source,
    })?;
    Ok(entries
        .into_iter()
        .filter_map(|(name, kind)| Some((dir.child(&name).ok()?, kind)))
        .collect())
}

/// A fixed path of a bundle (`manifests`, `metadata/annotations.yaml`).
fn at(path: &str) -> RelPath {
    RelPath::parse(path).unwrap_or_default()
}

/// The largest manifests/ file read (a bundle image holds a few MB; a Kubernetes object is
/// at most 1.5 MB in etcd): a bigger one is kept aside as undecodable.
pub const MAX_MANIFEST_FILE: u64 = 32 << 20;

/// All of manifests/ together: past this the bundle is refused, so a directory of many large
/// files cannot make a load hold them all.
const MAX_MANIFESTS_TOTAL: u64 = 128 << 20;

/// What one manifests/ file decodes to.
struct Decoded {
    docs: Vec<Value>,
    /// Why the documents after the first do not decode, when only the first does (opm and
    /// operator-framework/api read only that one).
    later: Option<String>,
    /// Bytes read.
    size: u64,
}

/// The documents of one manifests/ file, or why it holds none (naming `rel`, its path in the
/// bundle, and the line).
fn decode_manifest_file(tree: &Tree, file: &RelPath, rel: &Path) -> Result<Decoded, String> {
    // Follows a symbolic link (inside the image for a pulled one), as opm opens the file it
    // names; the read itself is bounded.
    let bytes =
        crate::image::limits::read_tree_file(tree, file, "a bundle manifest", MAX_MANIFEST_FILE)
            .map_err(|e| e.to_string())?;
    let size = bytes.len() as u64;
    // Read as operator-framework/api reads it: the Go decoder's documents in order; where a
    // later document fails, the ones before it stand (opm and the api read only the first).
    match yaml::parse_documents_partial(rel, &bytes) {
        (docs, None) if docs.is_empty() => {
            Err("no YAML or JSON document in it (an empty file)".into())
        }
        (docs, None) => Ok(Decoded {
            docs,
            later: None,
            size,
        }),
        (docs, Some(e)) if !docs.is_empty() => Ok(Decoded {
            docs: docs.into_iter().take(1).collect(),
            later: Some(e.to_string()),
            size,
        }),
        (_, Some(e)) => Err(e.to_string()),
    }
}

impl BundleDir {
    /// Reads the bundle rooted at `root`, a directory the user named.
    pub fn load(root: &Path) -> Result<Self, LoadError> {
        Self::load_tree(&Tree::host(root))
    }

    /// Reads the bundle `tree` holds (an unpacked bundle image, read confined to it).
    pub fn load_tree(tree: &Tree) -> Result<Self, LoadError> {
        let root = tree.shown_root();
        if !tree.is_dir(&RelPath::root()) {
            return Err(LoadError::NotADirectory(root));
        }
        let mut b = BundleDir {
            root,
            tree: tree.clone(),
            ..Default::default()
        };

        let manifests_dir = at("manifests");
        if tree.is_dir(&manifests_dir) {
            b.has_manifests_dir = true;
            let mut total = 0u64;
            for (file, kind) in sorted_entries(tree, &manifests_dir)? {
                let name = file
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                let rel = file.as_relative_path();
                if kind == EntryKind::Dir || name.starts_with('.') {
                    b.unexpected_entries.push(rel);
                    continue;
                }
                match decode_manifest_file(tree, &file, &rel) {
                    Ok(d) => {
                        total += d.size;
                        if total > MAX_MANIFESTS_TOTAL {
                            return Err(LoadError::TooLarge {
                                dir: tree.shown(&manifests_dir),
                                limit_mib: MAX_MANIFESTS_TOTAL >> 20,
                            });
                        }
                        if let Some(why) = d.later {
                            b.later_documents_undecoded.push((rel.clone(), why));
                        }
                        b.manifests
                            .extend(d.docs.into_iter().map(|object| Manifest {
                                file: rel.clone(),
                                object,
                            }));
                    }
                    Err(why) => b.undecoded.push((rel, why)),
                }
            }
        }

        if tree.is_dir(&at("metadata")) {
            b.has_metadata_dir = true;
            let ann = at("metadata/annotations.yaml");
            if tree.is_file(&ann) {
                b.annotations = Some(annotations_of(&tree.shown(&ann), &read(tree, &ann)?)?);
            }
            for (file, key) in [
                ("metadata/dependencies.yaml", "dependencies"),
                ("metadata/properties.yaml", "properties"),
            ] {
                match load_list(tree, &at(file), key) {
                    Ok(list) if key == "dependencies" => b.dependencies = list,
                    Ok(list) => b.properties = list,
                    Err(e) => b.skipped_metadata.push((file.into(), e.to_string())),
                }
            }
        }

        let scorecard = at("tests/scorecard");
        if tree.is_dir(&scorecard) {
            for (file, kind) in sorted_entries(tree, &scorecard)? {
                if kind == EntryKind::File {
                    b.scorecard_files.push(file.as_relative_path());
                }
            }
        }
        Ok(b)
    }

    /// Whether `rel` (a path in the bundle, as [`BundleDir::unexpected_entries`] holds them)
    /// is a directory.
    pub fn is_dir_at(&self, rel: &Path) -> bool {
        RelPath::parse_os(rel.as_os_str()).is_ok_and(|r| self.tree.is_dir(&r))
    }

    /// The text of the file `rel` of the bundle, when it can be read.
    pub fn read_text(&self, rel: &Path) -> Option<String> {
        let rel = RelPath::parse_os(rel.as_os_str()).ok()?;
        String::from_utf8(self.tree.read(&rel).ok()?).ok()
    }

    /// Reads the bundle rooted at `root`, refusing a manifests/ file that does not decode.
    /// For the commands with no opm counterpart to match (CRD upgrade checks, OLM v1's
    /// verdicts): leaving out a CRD that does not parse would check nothing and pass.
    pub fn load_strict(root: &Path) -> Result<Self, LoadError> {
        Self::load_tree_strict(&Tree::host(root))
    }

    /// [`BundleDir::load_strict`] of the bundle `tree` holds.
    pub fn load_tree_strict(tree: &Tree) -> Result<Self, LoadError> {
        let b = Self::load_tree(tree)?;
        match b.undecoded.first() {
            Some((file, why)) => Err(LoadError::Undecodable {
                // host: for the message only (the file was read through the tree)
                file: b.root.join(file),
                why: why.clone(),
            }),
            None => Ok(b),
        }
    }

    /// The annotation value for `key`, if annotations.yaml exists and has it.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.get(key).map(String::as_str)
    }

    /// The ClusterServiceVersions among the manifests (a valid bundle has exactly one).
    pub fn csvs(&self) -> impl Iterator<Item = &Manifest> {
        self.manifests
            .iter()
            .filter(|m| m.kind() == "ClusterServiceVersion")
    }

    /// The package name from annotations.yaml.
    pub fn package(&self) -> Option<&str> {
        self.annotation(keys::PACKAGE)
    }
}

/// The whole file `rel` of `tree`.
fn read(tree: &Tree, rel: &RelPath) -> Result<Vec<u8>, YamlError> {
    tree.read(rel).map_err(|source| YamlError::Io {
        path: tree.shown(rel),
        source,
    })
}

/// Reads `annotations.yaml`: a top-level `annotations` map of strings. Non-string scalars are
/// kept as their YAML text (validation flags them), nested values are an error.
pub fn load_annotations(path: &Path) -> Result<BTreeMap<String, String>, LoadError> {
    annotations_of(path, &yaml::read_file(path)?)
}

/// [`load_annotations`] of the bytes of the file `path`.
pub fn annotations_of(path: &Path, bytes: &[u8]) -> Result<BTreeMap<String, String>, LoadError> {
    let doc: Value = yaml::parse_one(path, yaml::utf8(path, bytes)?)?;
    let Some(map) = doc.get("annotations").and_then(Value::as_object) else {
        return Err(LoadError::Shape {
            path: path.to_path_buf(),
            field: "annotations".into(),
            expected: "a map of label keys to string values",
        });
    };
    let mut out = BTreeMap::new();
    for (k, v) in map {
        let s = match v {
            Value::String(s) => s.clone(),
            Value::Bool(_) | Value::Number(_) => v.to_string(),
            Value::Null => String::new(),
            _ => {
                return Err(LoadError::Shape {
                    path: path.to_path_buf(),
                    field: format!("annotations.{k}"),
                    expected: "a string",
                });
            }
        };
        out.insert(k.clone(), s);
    }
    Ok(out)
}

fn load_list(tree: &Tree, rel: &RelPath, key: &str) -> Result<Vec<Value>, LoadError> {
    if !tree.is_file(rel) {
        return Ok(Vec::new());
    }
    let path = tree.shown(rel);
    let doc: Value = yaml::parse_one(&path, yaml::utf8(&path, &read(tree, rel)?)?)?;
    let path = path.as_path();
    match doc.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => Ok(items.clone()),
        Some(_) => Err(LoadError::Shape {
            path: path.to_path_buf(),
            field: key.into(),
            expected: "a list",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/data/bundles")
            .join(rel)
    }

    #[test]
    fn loads_a_real_bundle() {
        let root = shared("community-operators-prod/operators/cockroachdb/2.1.1");
        if !root.exists() {
            return; // shared data not beside this checkout
        }
        let b = BundleDir::load(&root).unwrap();
        assert!(b.has_manifests_dir);
        assert_eq!(b.csvs().count(), 1);
        assert_eq!(b.package(), Some("cockroachdb"));
    }

    #[test]
    fn missing_directory_is_an_error() {
        let err = BundleDir::load(Path::new("/nonexistent/bundle")).unwrap_err();
        assert_eq!(err.to_string(), "/nonexistent/bundle: not a directory");
    }

    #[test]
    fn subdirectories_and_hidden_files_are_recorded() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("manifests/nested")).unwrap();
        std::fs::write(dir.path().join("manifests/.hidden.yaml"), "a: 1").unwrap();
        std::fs::write(dir.path().join("manifests/cm.yaml"), "kind: ConfigMap\n").unwrap();
        let b = BundleDir::load(dir.path()).unwrap();
        assert_eq!(b.manifests.len(), 1);
        assert_eq!(b.unexpected_entries.len(), 2);
        assert!(!b.has_metadata_dir);
    }

    #[test]
    fn every_regular_file_is_read_whatever_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let m = dir.path().join("manifests");
        std::fs::create_dir_all(&m).unwrap();
        std::fs::write(m.join("a.crd"), "kind: CustomResourceDefinition\n").unwrap();
        std::fs::write(m.join("b.yml"), "kind: ConfigMap\n").unwrap();
        std::fs::write(m.join("c"), "{\"kind\": \"Secret\"}").unwrap();
        std::fs::write(m.join("d.empty"), "").unwrap();
        std::fs::write(m.join("e.png"), [0x89, b'P', b'N', b'G', 0xff, 0xfe, 0]).unwrap();
        std::fs::write(m.join("f.txt"), "key: [unclosed\n").unwrap();
        std::fs::write(m.join("g.list"), "- a\n- b\n").unwrap();
        let b = BundleDir::load(dir.path()).unwrap();
        let kinds: Vec<(String, &str)> = b
            .manifests
            .iter()
            .map(|m| (m.file.display().to_string(), m.kind()))
            .collect();
        assert_eq!(
            kinds,
            [
                ("manifests/a.crd".to_string(), "CustomResourceDefinition"),
                ("manifests/b.yml".to_string(), "ConfigMap"),
                ("manifests/c".to_string(), "Secret"),
                // Not an object: kept for validation to name, left out by render.
                ("manifests/g.list".to_string(), ""),
            ]
        );
        let undecoded: Vec<String> = b
            .undecoded
            .iter()
            .map(|(f, _)| f.display().to_string())
            .collect();
        assert_eq!(
            undecoded,
            ["manifests/d.empty", "manifests/e.png", "manifests/f.txt"]
        );
        assert!(b.undecoded[0].1.contains("empty"), "{:?}", b.undecoded[0]);
        assert!(b.undecoded[1].1.contains("UTF-8"), "{:?}", b.undecoded[1]);
        assert!(b.unexpected_entries.is_empty());
    }
}
