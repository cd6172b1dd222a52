//! operator-sdk scorecard, run in-process: the `scorecard.operatorframework.io/v1alpha3`
//! configuration and results, the six built-in tests of the `scorecard-test` image with
//! operator-sdk's states, errors, suggestions and logs, and the outputs operator-sdk prints
//! (`text`, `json`, `xunit`).
//!
//! - [`config`]: the bundle's `tests/scorecard/config.yaml` (or the default one), selection.
//! - [`builtin`]: the built-in tests, read from the bundle offline.
//! - [`output`]: text, JSON and xunit, as operator-sdk writes them.
//!
//! The cluster run of tests of other images is `deploy::scorecard` (its objects) and
//! `ops::scorecard` (the flow).
//!
//! Where operator-sdk's output depends on Go's map iteration order (which spec keys lack a
//! descriptor, labels in the text output) or on goroutine scheduling (the order of a parallel
//! stage's results), `olm` uses the sorted order and the configuration's order, so the same
//! bundle always gives the same bytes.

use std::path::PathBuf;

use crate::confined::Tree;

use serde::{Deserialize, Serialize};

pub mod builtin;
pub mod config;
pub mod output;

pub use config::{Configuration, StageConfiguration, Storage, TestConfiguration};

/// The API version of every scorecard object.
pub const API_VERSION: &str = "scorecard.operatorframework.io/v1alpha3";

/// A test result's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum State {
    Pass,
    Fail,
    Error,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pass => "pass",
            State::Fail => "fail",
            State::Error => "error",
        }
    }
}

/// One result of a test (operator-framework/api `TestResult`), fields in Go's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestResult {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub log: String,
    pub state: State,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<String>,
    /// A `metav1.Time`: Go writes `null` for the zero time scorecard leaves it at.
    #[serde(rename = "creationTimestamp", default)]
    pub creation_timestamp: Option<String>,
}

impl TestResult {
    /// A passing result named `name`, with empty errors and suggestions (as the tests start).
    pub fn pass(name: &str) -> Self {
        TestResult {
            name: name.to_string(),
            log: String::new(),
            state: State::Pass,
            errors: Vec::new(),
            suggestions: Vec::new(),
            creation_timestamp: None,
        }
    }

    /// operator-sdk's `convertErrorToStatus`: a failed result with one error and a log.
    pub fn from_error(error: impl Into<String>, log: impl Into<String>) -> Self {
        TestResult {
            name: String::new(),
            log: log.into(),
            state: State::Fail,
            errors: vec![error.into()],
            suggestions: Vec::new(),
            creation_timestamp: None,
        }
    }
}

/// The results of one test run (`TestStatus`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<TestResult>,
}

impl TestStatus {
    pub fn one(r: TestResult) -> Self {
        TestStatus { results: vec![r] }
    }
}

/// One test as configured and its results (`Test`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Test {
    pub kind: String,
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub spec: TestConfiguration,
    pub status: TestStatus,
}

impl Test {
    pub fn new(spec: TestConfiguration, status: TestStatus) -> Self {
        Test {
            kind: "Test".into(),
            api_version: API_VERSION.into(),
            spec,
            status,
        }
    }
}

/// Every test run (`TestList`): what `operator-sdk scorecard -o json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestList {
    pub kind: String,
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    /// Go writes `null` for a run that selected no test.
    pub items: Option<Vec<Test>>,
}

impl Default for TestList {
    fn default() -> Self {
        TestList {
            kind: "TestList".into(),
            api_version: API_VERSION.into(),
            items: None,
        }
    }
}

impl TestList {
    pub fn tests(&self) -> &[Test] {
        self.items.as_deref().unwrap_or(&[])
    }
    pub fn push(&mut self, t: Test) {
        self.items.get_or_insert_with(Vec::new).push(t);
    }
    /// operator-sdk exits 1 when any result is not `pass`.
    pub fn has_failing_test(&self) -> bool {
        self.tests()
            .iter()
            .flat_map(|t| &t.status.results)
            .any(|r| r.state != State::Pass)
    }
}

/// Why scorecard could not run at all (a bad config or selector); test failures are results.
#[derive(Debug, thiserror::Error)]
pub enum ScorecardError {
    #[error("{}: {why}", path.display())]
    Config { path: PathBuf, why: String },
    #[error("could not parse selector {selector:?}: {source}")]
    Selector {
        selector: String,
        #[source]
        source: crate::grammar::label_selector::SelectorError,
    },
    #[error("{}: not a bundle directory", .0.display())]
    NotADirectory(PathBuf),
}

/// The error every test of another image gets when no cluster is given.
pub fn needs_a_cluster(test: &TestConfiguration) -> TestStatus {
    let mut r = TestResult::pass(test.labels.get("test").map_or("", String::as_str));
    r.state = State::Error;
    r.errors.push(format!(
        "needs a cluster: image {} runs as a pod; pass --kubeconfig (or set KUBECONFIG) to run it",
        test.image
    ));
    TestStatus::one(r)
}

/// Runs the selected tests of the bundle `tree` holds without a cluster: built-in tests
/// in-process, tests of other images reported in state `error` ("needs a cluster").
/// `selector` is a Kubernetes label selector over the tests' labels (`""` selects all).
pub fn run_offline(tree: &Tree, selector: &str) -> Result<TestList, ScorecardError> {
    let plan = config::Plan::load(tree, selector)?;
    let bundle = builtin::Loaded::load(tree);
    let mut list = TestList::default();
    for test in plan.tests() {
        let status = builtin::run(&bundle, test).unwrap_or_else(|| needs_a_cluster(test));
        list.push(Test::new(test.clone(), status));
    }
    Ok(list)
}
