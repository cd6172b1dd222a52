//! The scorecard `Configuration` (operator-framework/api v1alpha3): read from the directory
//! the bundle's `operators.operatorframework.io.test.config.v1` annotation names (default
//! `tests/scorecard/`), file `config.yaml`, as operator-sdk reads it (YAML to JSON, keys
//! matched case-insensitively as Go's encoding/json matches them, unknown keys ignored); or
//! operator-sdk's scaffolded default when the bundle has none. Then the label selector picks
//! the tests of each stage.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::ScorecardError;
use crate::bundle::generate::{DEFAULT_SCORECARD_IMAGE, files};
use crate::bundle::load::{self, keys};
use crate::confined::{RelPath, Tree};
use crate::grammar::label_selector::{self, Selector};

/// The default directory of the configuration inside a bundle.
pub const DEFAULT_CONFIG_DIR: &str = "tests/scorecard/";
/// The configuration's file name.
pub const CONFIG_FILE: &str = "config.yaml";

/// `storage.spec.mountPath.path`: where a test pod mounts a directory gathered afterwards.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Storage {
    pub spec: StorageSpec,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StorageSpec {
    #[serde(rename = "mountPath", default)]
    pub mount_path: MountPath,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountPath {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
}

/// One configured test (`TestConfiguration`), serialized in Go's field order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestConfiguration {
    pub image: String,
    #[serde(rename = "uniqueID", default, skip_serializing_if = "String::is_empty")]
    pub unique_id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entrypoint: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub storage: Storage,
}

/// A stage: its tests run one after the other, or all at once when `parallel`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StageConfiguration {
    pub parallel: bool,
    pub tests: Vec<TestConfiguration>,
}

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Configuration {
    pub name: String,
    pub stages: Vec<StageConfiguration>,
    pub storage: Storage,
    /// The service account test pods run as, when the configuration names one.
    pub service_account: String,
}

/// A key of a Go JSON object as encoding/json finds it: exact, else case-insensitive.
fn field<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    obj.get(key).or_else(|| {
        obj.iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(key))
            .map(|(_, v)| v)
            .next_back()
    })
}

struct Reader<'a> {
    path: &'a Path,
}

impl Reader<'_> {
    fn err(&self, why: String) -> ScorecardError {
        ScorecardError::Config {
            path: self.path.to_path_buf(),
            why,
        }
    }
    fn object<'v>(
        &self,
        v: &'v Value,
        at: &str,
    ) -> Result<Option<&'v Map<String, Value>>, ScorecardError> {
        match v {
            Value::Null => Ok(None),
            Value::Object(m) => Ok(Some(m)),
            other => Err(self.err(format!("{at}: expected an object, found {}", kind(other)))),
        }
    }
    fn string(
        &self,
        obj: &Map<String, Value>,
        key: &str,
        at: &str,
    ) -> Result<String, ScorecardError> {
        match field(obj, key) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(other) => Err(self.err(format!(
                "{at}.{key}: expected a string, found {}",
                kind(other)
            ))),
        }
    }
    fn array<'v>(
        &self,
        obj: &'v Map<String, Value>,
        key: &str,
        at: &str,
    ) -> Result<&'v [Value], ScorecardError> {
        match field(obj, key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(other) => Err(self.err(format!(
                "{at}.{key}: expected a list, found {}",
                kind(other)
            ))),
        }
    }
    fn storage(&self, obj: &Map<String, Value>, at: &str) -> Result<Storage, ScorecardError> {
        let at = format!("{at}.storage");
        let Some(s) = field(obj, "storage") else {
            return Ok(Storage::default());
        };
        let Some(s) = self.object(s, &at)? else {
            return Ok(Storage::default());
        };
        let Some(spec) = field(s, "spec") else {
            return Ok(Storage::default());
        };
        let Some(spec) = self.object(spec, &format!("{at}.spec"))? else {
            return Ok(Storage::default());
        };
        let Some(mp) = field(spec, "mountPath") else {
            return Ok(Storage::default());
        };
        let Some(mp) = self.object(mp, &format!("{at}.spec.mountPath"))? else {
            return Ok(Storage::default());
        };
        Ok(Storage {
            spec: StorageSpec {
                mount_path: MountPath {
                    path: self.string(mp, "path", &format!("{at}.spec.mountPath"))?,
                },
            },
        })
    }
    fn test(&self, v: &Value, at: &str) -> Result<TestConfiguration, ScorecardError> {
        let Some(t) = self.object(v, at)? else {
            return Ok(TestConfiguration::default());
        };
        let mut entrypoint = Vec::new();
        for (i, e) in self.array(t, "entrypoint", at)?.iter().enumerate() {
            match e {
                Value::String(s) => entrypoint.push(s.clone()),
                Value::Null => entrypoint.push(String::new()),
                other => {
                    return Err(self.err(format!(
                        "{at}.entrypoint[{i}]: expected a string, found {}",
                        kind(other)
                    )));
                }
            }
        }
        let mut labels = BTreeMap::new();
        if let Some(l) = field(t, "labels")
            && let Some(l) = self.object(l, &format!("{at}.labels"))?
        {
            for (k, v) in l {
                match v {
                    Value::String(s) => {
                        labels.insert(k.clone(), s.clone());
                    }
                    Value::Null => {
                        labels.insert(k.clone(), String::new());
                    }
                    other => {
                        return Err(self.err(format!(
                            "{at}.labels.{k}: expected a string, found {}",
                            kind(other)
                        )));
                    }
                }
            }
        }
        Ok(TestConfiguration {
            image: self.string(t, "image", at)?,
            unique_id: self.string(t, "uniqueID", at)?,
            entrypoint,
            labels,
            storage: self.storage(t, at)?,
        })
    }
    fn configuration(&self, v: &Value) -> Result<Configuration, ScorecardError> {
        let Some(c) = self.object(v, "configuration")? else {
            return Ok(Configuration::default());
        };
        let name = match field(c, "metadata") {
            Some(m) => match self.object(m, "metadata")? {
                Some(m) => self.string(m, "name", "metadata")?,
                None => String::new(),
            },
            None => String::new(),
        };
        let mut stages = Vec::new();
        for (i, s) in self.array(c, "stages", "configuration")?.iter().enumerate() {
            let at = format!("stages[{i}]");
            let Some(s) = self.object(s, &at)? else {
                stages.push(StageConfiguration::default());
                continue;
            };
            let parallel = match field(s, "parallel") {
                None | Some(Value::Null) => false,
                Some(Value::Bool(b)) => *b,
                Some(other) => {
                    return Err(self.err(format!(
                        "{at}.parallel: expected true or false, found {}",
                        kind(other)
                    )));
                }
            };
            let mut tests = Vec::new();
            for (j, t) in self.array(s, "tests", &at)?.iter().enumerate() {
                tests.push(self.test(t, &format!("{at}.tests[{j}]"))?);
            }
            stages.push(StageConfiguration { parallel, tests });
        }
        let mut service_account = self.string(c, "serviceaccount", "configuration")?;
        if service_account.is_empty() {
            // operator-framework/api tags the field `json:"string"`.
            service_account = self.string(c, "string", "configuration")?;
        }
        Ok(Configuration {
            name,
            stages,
            storage: self.storage(c, "configuration")?,
            service_account,
        })
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Reads a configuration from its YAML text; `path` names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<Configuration, ScorecardError> {
    let value = crate::yaml::parse_value(path, text).map_err(|e| ScorecardError::Config {
        path: path.to_path_buf(),
        why: e.to_string(),
    })?;
    Reader { path }.configuration(&value)
}

/// operator-sdk's scaffolded configuration (`olm bundle generate --scorecard` writes the same).
pub fn default_config() -> Configuration {
    let value = files::scorecard_config(DEFAULT_SCORECARD_IMAGE);
    Reader {
        path: Path::new("(default)"),
    }
    .configuration(&value)
    .expect("the default configuration reads back")
}

/// Where a bundle keeps its configuration, relative to the bundle root: the directory its
/// annotation names (read as a path inside the bundle: plain names only), or the default.
pub fn config_path(tree: &Tree) -> Result<RelPath, ScorecardError> {
    let annotations_rel = RelPath::parse(ANNOTATIONS_FILE).expect("a constant relative path");
    let annotations = tree.shown(&annotations_rel);
    let dir = match tree.read_bounded(&annotations_rel, MAX_CONFIG_FILE) {
        Ok(Some(bytes)) => load::annotations_of(&annotations, &bytes)
            .ok()
            .and_then(|a| a.get(keys::TEST_CONFIG).cloned()),
        _ => None,
    };
    let dir = match dir {
        Some(d) => confined(&d).ok_or_else(|| ScorecardError::Config {
            path: annotations,
            why: format!(
                "{}: {d:?} must be a relative path inside the bundle",
                keys::TEST_CONFIG
            ),
        })?,
        None => RelPath::parse(DEFAULT_CONFIG_DIR.trim_end_matches('/'))
            .expect("a constant relative path"),
    };
    Ok(dir.join(&RelPath::parse(CONFIG_FILE).expect("a constant relative path")))
}

/// The configuration directory a bundle's annotation names, as a path inside the bundle:
/// `./tests/scorecard/` as written by hand is read, never an absolute or climbing path.
fn confined(dir: &str) -> Option<RelPath> {
    (!dir.starts_with('/'))
        .then(|| RelPath::in_image(dir).ok())
        .flatten()
        .filter(|rel| !rel.is_root())
}

/// The metadata file that may name the configuration directory.
const ANNOTATIONS_FILE: &str = "metadata/annotations.yaml";
/// A configuration (or annotations) file larger than this is refused.
const MAX_CONFIG_FILE: u64 = 4 << 20;

/// Loads the bundle's configuration, or the default when it has none. The file is read
/// through the bundle's tree (confined to it for an unpacked image).
pub fn load(tree: &Tree) -> Result<(Configuration, Option<PathBuf>), ScorecardError> {
    let rel = config_path(tree)?;
    let shown = tree.shown(&rel);
    match tree.read_bounded(&rel, MAX_CONFIG_FILE) {
        Ok(Some(bytes)) => {
            let text = String::from_utf8(bytes).map_err(|_| ScorecardError::Config {
                path: shown.clone(),
                why: "not valid UTF-8".into(),
            })?;
            Ok((parse(&shown, &text)?, Some(shown)))
        }
        Ok(None) => Err(ScorecardError::Config {
            path: shown,
            why: format!("larger than {MAX_CONFIG_FILE} bytes"),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((default_config(), None)),
        Err(e) => Err(ScorecardError::Config {
            path: shown,
            why: e.to_string(),
        }),
    }
}

/// The tests to run: each stage's selected tests, with the configuration's storage path
/// filled in where a test has none (operator-sdk's `setTestDefaults`).
#[derive(Debug, Clone)]
pub struct Plan {
    pub config: Configuration,
    /// Where the configuration came from; `None` for the default.
    pub source: Option<PathBuf>,
    pub stages: Vec<StageConfiguration>,
}

impl Plan {
    pub fn new(config: Configuration, source: Option<PathBuf>, selector: &Selector) -> Self {
        let stages = config
            .stages
            .iter()
            .map(|st| StageConfiguration {
                parallel: st.parallel,
                tests: st
                    .tests
                    .iter()
                    .filter(|t| selector.is_empty() || selector.matches(&t.labels))
                    .map(|t| {
                        let mut t = t.clone();
                        if t.storage.spec.mount_path.path.is_empty() {
                            t.storage.spec.mount_path.path =
                                config.storage.spec.mount_path.path.clone();
                        }
                        t
                    })
                    .collect(),
            })
            .filter(|st: &StageConfiguration| !st.tests.is_empty())
            .collect();
        Plan {
            config,
            source,
            stages,
        }
    }

    /// The bundle's configuration (or the default) and `selector` applied.
    pub fn load(tree: &Tree, selector: &str) -> Result<Self, ScorecardError> {
        if !tree.is_dir(&RelPath::root()) {
            return Err(ScorecardError::NotADirectory(tree.shown_root()));
        }
        let sel = label_selector::parse(selector).map_err(|source| ScorecardError::Selector {
            selector: selector.to_string(),
            source,
        })?;
        let (config, source) = load(tree)?;
        Ok(Plan::new(config, source, &sel))
    }

    /// Every selected test, stage by stage in configuration order.
    pub fn tests(&self) -> impl Iterator<Item = &TestConfiguration> {
        self.stages.iter().flat_map(|s| &s.tests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_configuration_is_operator_sdks_six_tests_in_one_parallel_stage() {
        let c = default_config();
        assert_eq!(c.stages.len(), 1);
        assert!(c.stages[0].parallel);
        let names: Vec<&str> = c.stages[0]
            .tests
            .iter()
            .map(|t| t.labels["test"].as_str())
            .collect();
        assert_eq!(
            names,
            [
                "basic-check-spec-test",
                "olm-bundle-validation-test",
                "olm-crds-have-validation-test",
                "olm-crds-have-resources-test",
                "olm-spec-descriptors-test",
                "olm-status-descriptors-test"
            ]
        );
    }

    #[test]
    fn keys_match_case_insensitively_and_unknown_keys_are_ignored() {
        let text = "kind: Configuration\napiversion: scorecard.operatorframework.io/v1alpha3\nmetadata:\n  name: config\nstages:\n- Parallel: true\n  tests:\n  - image: img\n    Entrypoint: [a, b]\n    labels: {suite: custom}\n    extra: 1\nstorage:\n  spec:\n    mountPath:\n      path: /out\n";
        let c = parse(Path::new("c.yaml"), text).unwrap();
        assert!(c.stages[0].parallel);
        assert_eq!(c.stages[0].tests[0].entrypoint, ["a", "b"]);
        assert_eq!(c.storage.spec.mount_path.path, "/out");
        let plan = Plan::new(c, None, &Selector::default());
        assert_eq!(
            plan.tests().next().unwrap().storage.spec.mount_path.path,
            "/out"
        );
    }

    #[test]
    fn wrong_types_name_the_field() {
        let e = parse(Path::new("c.yaml"), "stages:\n- tests: 3\n").unwrap_err();
        assert!(e.to_string().contains("stages[0].tests"), "{e}");
        let e = parse(
            Path::new("c.yaml"),
            "stages:\n- tests:\n  - labels: {a: [1]}\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("labels.a"), "{e}");
    }

    #[test]
    fn an_annotation_cannot_point_outside_the_bundle() {
        assert!(confined("../etc").is_none());
        assert!(confined("/etc").is_none());
        assert!(confined("").is_none());
        assert_eq!(
            confined("tests/sc/").unwrap(),
            RelPath::parse("tests/sc").unwrap()
        );
        assert_eq!(
            confined("./tests/sc").unwrap(),
            RelPath::parse("tests/sc").unwrap()
        );
    }
}
