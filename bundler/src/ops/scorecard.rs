//! `olm bundle scorecard`: the bundle fetched (a directory, or an image pulled and unpacked),
//! its scorecard configuration and the selector applied, the built-in tests run in-process,
//! and the tests of other images either run as pods in a cluster the way operator-sdk runs
//! them (bundle ConfigMap, one Pod per test, the pod log read back as the result, cleanup) or,
//! without a cluster, reported in state `error` ("needs a cluster").

use std::path::PathBuf;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, LogParams, PostParams};
use thiserror::Error;
use tokio::time::Instant;

use crate::bundle::scorecard::{
    self, ScorecardError, Test, TestConfiguration, TestList, TestResult, TestStatus,
    builtin::{self, Loaded},
    config::Plan,
};
use crate::confined::Tree;
use crate::deploy::cluster::{self, ClusterError};
use crate::deploy::scorecard::{self as pod, PodSettings};
use crate::image::registry::RegistryOptions;
use crate::ops::bundle_source::{self, BundleSourceError};

/// What to run, in the command line's words.
#[derive(Debug, Clone, Default)]
pub struct ScorecardRequest {
    /// A bundle directory or image.
    pub bundle: String,
    /// A Kubernetes label selector over the tests' labels.
    pub selector: String,
    /// A configuration file to use instead of the bundle's.
    pub config: Option<PathBuf>,
    /// Only list the selected tests (operator-sdk's `--list`).
    pub list: bool,
    pub registry: RegistryOptions,
    /// Where tests of other images run; `None` reports them as needing a cluster.
    pub cluster: Option<ClusterOptions>,
}

/// operator-sdk's cluster flags.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// The namespace for the pods; else the kubeconfig context's, else `default`.
    pub namespace: Option<String>,
    /// Overridden by the configuration's `serviceaccount`.
    pub service_account: String,
    /// How long all tests together may take.
    pub wait_time: Duration,
    pub skip_cleanup: bool,
    pub untar_image: String,
    pub restricted: bool,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            kubeconfig: None,
            context: None,
            namespace: None,
            service_account: "default".into(),
            wait_time: Duration::from_secs(30),
            skip_cleanup: false,
            untar_image: pod::DEFAULT_UNTAR_IMAGE.into(),
            restricted: false,
        }
    }
}

/// The results, and whether the run hit `--wait-time` or could not clean up.
#[derive(Debug, Clone, Default)]
pub struct ScorecardOutcome {
    pub list: TestList,
    pub timed_out: bool,
    /// Why the ConfigMap or pods could not be deleted.
    pub cleanup_error: Option<String>,
}

#[derive(Debug, Error)]
pub enum ScorecardOpError {
    #[error(transparent)]
    Source(#[from] BundleSourceError),
    #[error(transparent)]
    Scorecard(#[from] ScorecardError),
    #[error(transparent)]
    Cluster(#[from] ClusterError),
    #[error("error getting bundle data: {0}")]
    Pack(#[from] pod::PackError),
    #[error("error creating ConfigMap: {0}")]
    ConfigMap(#[source] kube::Error),
}

impl ScorecardOpError {
    /// A bad argument, config or selector (exit code 2) rather than a failed run.
    pub fn is_usage(&self) -> bool {
        match self {
            Self::Source(e) => e.is_usage(),
            Self::Scorecard(ScorecardError::Selector { .. } | ScorecardError::NotADirectory(_)) => {
                true
            }
            _ => false,
        }
    }
}

/// Runs scorecard on the bundle `req` names.
pub async fn run(req: &ScorecardRequest) -> Result<ScorecardOutcome, ScorecardOpError> {
    let local = bundle_source::fetch(&req.bundle, &req.registry).await?;
    let tree = local.tree();
    let plan = match &req.config {
        Some(path) => {
            let text = std::fs::read_to_string(path).map_err(|e| ScorecardError::Config {
                path: path.clone(),
                why: e.to_string(),
            })?;
            let config = scorecard::config::parse(path, &text)?;
            let sel = crate::grammar::label_selector::parse(&req.selector).map_err(|source| {
                ScorecardError::Selector {
                    selector: req.selector.clone(),
                    source,
                }
            })?;
            Plan::new(config, Some(path.clone()), &sel)
        }
        None => Plan::load(tree, &req.selector)?,
    };
    if req.list {
        return Ok(ScorecardOutcome {
            list: list(&plan),
            ..Default::default()
        });
    }
    let loaded = Loaded::load(tree);
    let needs_cluster = plan.tests().any(|t| !builtin::is_builtin(t));
    match (&req.cluster, needs_cluster) {
        (Some(opts), true) => {
            let client =
                cluster::client(opts.kubeconfig.as_deref(), opts.context.as_deref()).await?;
            run_in_cluster(client, &plan, &loaded, tree, opts).await
        }
        _ => {
            let mut list = TestList::default();
            for t in plan.tests() {
                let status =
                    builtin::run(&loaded, t).unwrap_or_else(|| scorecard::needs_a_cluster(t));
                list.push(Test::new(t.clone(), status));
            }
            Ok(ScorecardOutcome {
                list,
                ..Default::default()
            })
        }
    }
}

/// operator-sdk's `--list`: the selected tests' image, entrypoint and labels, no results.
pub fn list(plan: &Plan) -> TestList {
    let mut list = TestList::default();
    for t in plan.tests() {
        let spec = TestConfiguration {
            image: t.image.clone(),
            entrypoint: t.entrypoint.clone(),
            labels: t.labels.clone(),
            ..Default::default()
        };
        list.push(Test::new(spec, TestStatus::default()));
    }
    list
}

fn random_name() -> String {
    let b = crate::scratch::random_u64().to_le_bytes();
    pod::object_name([b[0], b[1], b[2], b[3]])
}

/// The cluster run: the bundle ConfigMap, the built-in tests in-process and a pod per other
/// test (a parallel stage's pods at once), all within `wait_time`; then the cleanup.
pub async fn run_in_cluster(
    client: Client,
    plan: &Plan,
    loaded: &Loaded<'_>,
    tree: &Tree,
    opts: &ClusterOptions,
) -> Result<ScorecardOutcome, ScorecardOpError> {
    let namespace = opts
        .namespace
        .clone()
        .unwrap_or_else(|| client.default_namespace().to_string());
    let settings = PodSettings {
        namespace: namespace.clone(),
        service_account: if plan.config.service_account.is_empty() {
            opts.service_account.clone()
        } else {
            plan.config.service_account.clone()
        },
        untar_image: opts.untar_image.clone(),
        restricted: opts.restricted,
    };
    let tarball = pod::bundle_tarball(tree)?;
    let cm_name = random_name();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
    let cm: ConfigMap = serde_json::from_value(pod::config_map(&cm_name, &namespace, &tarball))
        .expect("the ConfigMap builder writes a ConfigMap");
    cms.create(&PostParams::default(), &cm)
        .await
        .map_err(ScorecardOpError::ConfigMap)?;
    tracing::info!(configmap = %cm_name, %namespace, "bundle stored for the test pods");

    let pods: Api<Pod> = Api::namespaced(client.clone(), &namespace);
    let deadline = Instant::now() + opts.wait_time;
    let mut out = ScorecardOutcome::default();
    for stage in &plan.stages {
        let mut statuses: Vec<Option<TestStatus>> = stage
            .tests
            .iter()
            .map(|t| builtin::run(loaded, t))
            .collect();
        let custom: Vec<usize> = (0..stage.tests.len())
            .filter(|&i| statuses[i].is_none())
            .collect();
        let run_one = |i: usize| {
            let pods = pods.clone();
            let settings = &settings;
            let cm_name = &cm_name;
            let test = &stage.tests[i];
            async move { (i, run_pod(&pods, test, cm_name, settings, deadline).await) }
        };
        let results: Vec<(usize, (TestStatus, bool))> = if stage.parallel {
            futures::future::join_all(custom.iter().map(|&i| run_one(i))).await
        } else {
            let mut v = Vec::new();
            for &i in &custom {
                v.push(run_one(i).await);
            }
            v
        };
        for (i, (status, timed_out)) in results {
            out.timed_out |= timed_out;
            statuses[i] = Some(status);
        }
        for (t, s) in stage.tests.iter().zip(statuses) {
            out.list
                .push(Test::new(t.clone(), s.expect("every test has a status")));
        }
    }
    if !opts.skip_cleanup {
        out.cleanup_error = cleanup(&pods, &cms, &cm_name).await.err();
    }
    Ok(out)
}

/// One test pod: created, polled each second until its test container terminates, its log
/// read back as the result. Any failure becomes a failed result, as operator-sdk's
/// `convertErrorToStatus` makes it; the flag says the deadline passed.
async fn run_pod(
    pods: &Api<Pod>,
    test: &TestConfiguration,
    cm_name: &str,
    settings: &PodSettings,
    deadline: Instant,
) -> (TestStatus, bool) {
    let fail = |e: String, log: String| TestStatus::one(TestResult::from_error(e, log));
    let name = random_name();
    let spec: Pod = match serde_json::from_value(pod::test_pod(&name, cm_name, test, settings)) {
        Ok(p) => p,
        Err(e) => return (fail(e.to_string(), String::new()), false),
    };
    if let Err(e) = pods.create(&PostParams::default(), &spec).await {
        return (fail(e.to_string(), String::new()), false);
    }
    loop {
        if Instant::now() >= deadline {
            return (
                fail("context deadline exceeded".into(), String::new()),
                true,
            );
        }
        match pods.get(&name).await {
            Err(e) => {
                return (
                    fail(format!("error getting pod {name} {e}"), String::new()),
                    false,
                );
            }
            Ok(p) => {
                let done = p
                    .status
                    .as_ref()
                    .and_then(|s| s.container_statuses.as_ref())
                    .into_iter()
                    .flatten()
                    .any(|c| {
                        c.name == pod::TEST_CONTAINER
                            && c.state.as_ref().is_some_and(|s| s.terminated.is_some())
                    });
                if done {
                    break;
                }
            }
        }
        tokio::time::sleep_until((Instant::now() + Duration::from_secs(1)).min(deadline)).await;
    }
    let params = LogParams {
        container: Some(pod::TEST_CONTAINER.into()),
        ..Default::default()
    };
    match pods.logs(&name, &params).await {
        Err(e) => (fail(e.to_string(), String::new()), false),
        Ok(log) => match serde_json::from_str::<TestStatus>(&log) {
            Ok(s) => (s, false),
            Err(e) => (fail(e.to_string(), log), false),
        },
    }
}

/// Deletes the run's pods (by their `testrun` label) and its ConfigMap.
async fn cleanup(pods: &Api<Pod>, cms: &Api<ConfigMap>, cm_name: &str) -> Result<(), String> {
    let selector = pod::run_selector(cm_name);
    pods.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels(&selector),
    )
    .await
    .map_err(|e| format!("error deleting pods (label selector {selector:?}): {e}"))?;
    cms.delete(cm_name, &DeleteParams::default())
        .await
        .map_err(|e| format!("error deleting configMap {cm_name} {e}"))?;
    Ok(())
}
