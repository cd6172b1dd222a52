//! `olm check operator BUNDLE`: preflight's operator policy on a bundle directory or image.

use std::collections::BTreeMap;

use md5::{Digest as _, Md5};

use super::deploy::{self, ClusterSettings};
use super::{ArtifactOptions, CheckError};
use crate::bundle::load::BundleDir;
use crate::certify::CheckResult;
use crate::certify::operator::{self, POLICY, scorecard};
use crate::certify::report::Report;
use crate::confined::{EntryKind, RelPath, Tree};
use crate::deploy::flow::Progress;
use crate::image::registry::RegistryOptions;
use crate::ops::bundle_source;

/// What to check and how.
#[derive(Debug, Clone)]
pub struct OperatorRequest {
    /// A bundle directory or image.
    pub bundle: String,
    pub registry: RegistryOptions,
    /// The cluster for DeployableByOLM; `None` reports it as not run, with why.
    pub cluster: Option<ClusterSettings>,
    /// Why there is no cluster (`--offline`, or no kubeconfig), for the not-run reason.
    pub no_cluster_reason: String,
    pub artifacts: ArtifactOptions,
}

/// Why DeployableByOLM did not run when no cluster was given.
pub fn no_cluster_reason(offline: bool) -> String {
    if offline {
        "--offline: needs a cluster with OLM (pass --kubeconfig or set KUBECONFIG to run it)".into()
    } else {
        "no cluster: pass --kubeconfig or set KUBECONFIG (any Kubernetes with OLM), or --offline to leave it out".into()
    }
}

/// preflight's `generateBundleHash`: the md5 of each file it extracts from a bundle image
/// (`manifests/*`, `metadata/annotations.yaml`), one `<md5>  ./<path>` line per distinct
/// content in md5 order (`hashes.txt`), and the md5 of those lines.
pub fn bundle_hash(tree: &Tree) -> (String, String) {
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    let mut paths: Vec<RelPath> = Vec::new();
    let manifests = RelPath::parse("manifests").expect("a constant relative path");
    if let Ok(entries) = tree.read_dir(&manifests) {
        paths.extend(
            entries
                .into_iter()
                .filter(|(_, kind)| *kind == EntryKind::File)
                .filter_map(|(name, _)| manifests.child(&name).ok()),
        );
    }
    let annotations = RelPath::parse("metadata/annotations.yaml").expect("a constant path");
    if tree
        .symlink_metadata(&annotations)
        .is_ok_and(|m| m.kind == EntryKind::File)
    {
        paths.push(annotations);
    }
    for p in paths {
        if p.file_name().is_some_and(|n| n == "Dockerfile") {
            continue;
        }
        if let Ok(Some(bytes)) = tree.read_bounded(&p, 64 << 20) {
            files.insert(
                hex::encode(Md5::digest(&bytes)),
                format!("./{}", p.to_string_lossy()),
            );
        }
    }
    let text: String = files
        .iter()
        .map(|(sum, path)| format!("{sum}  {path}\n"))
        .collect();
    (text.clone(), hex::encode(Md5::digest(text.as_bytes())))
}

/// The scorecard tests a selector picks, run in-process on `dir` (operator-sdk scorecard's
/// built-in tests; tests of other images are in state `error`, "needs a cluster"), and
/// operator-sdk's `-o json` output for the artifact; `Err` when scorecard cannot run at all
/// (its config or the selector), preflight's fatal error.
async fn run_scorecard(
    tree: &Tree,
    selector: &str,
) -> Result<(Vec<scorecard::TestOutcome>, Vec<u8>), String> {
    use crate::bundle::scorecard as sdk;
    let list = sdk::run_offline(tree, selector).map_err(|e| e.to_string())?;
    let outcomes = list
        .tests()
        .iter()
        .flat_map(|t| &t.status.results)
        .map(|r| scorecard::TestOutcome {
            name: r.name.clone(),
            state: r.state.as_str().to_string(),
            log: r.log.clone(),
            errors: r.errors.clone(),
            suggestions: r.suggestions.clone(),
        })
        .collect();
    Ok((outcomes, sdk::output::json(&list).into_bytes()))
}

/// Runs the policy and writes the artifacts.
pub async fn check(
    req: &OperatorRequest,
    progress: &mut dyn Progress,
) -> Result<Report, CheckError> {
    let local = bundle_source::fetch(&req.bundle, &req.registry).await?;
    let loaded = BundleDir::load_tree(local.tree());
    let bundle = match loaded {
        Ok(b) => b,
        Err(e) => {
            let why = format!("could not load bundle from path: {e}");
            let results = POLICY
                .iter()
                .map(|c| CheckResult::error(c, why.clone()))
                .collect();
            return Ok(Report {
                image: req.bundle.clone(),
                results,
                certification_hash: None,
            });
        }
    };
    let mut results = Vec::new();
    let mut extra: Vec<(String, Vec<u8>)> = Vec::new();
    for (check, selector, artifact) in scorecard::CHECKS {
        let start = std::time::Instant::now();
        let mut r = match run_scorecard(local.tree(), selector).await {
            Ok((outcomes, json)) => {
                extra.push((artifact.to_string(), json));
                scorecard::judge(check, &outcomes)
            }
            Err(why) => CheckResult::not_run(check, why),
        };
        r.elapsed = start.elapsed();
        results.push(r);
    }
    let deployable = match &req.cluster {
        Some(settings) => {
            let start = std::time::Instant::now();
            let mut r =
                deploy::deployable_by_olm(&req.bundle, &bundle, settings, &req.registry, progress)
                    .await;
            r.elapsed = start.elapsed();
            r
        }
        None => CheckResult::not_run(&operator::DEPLOYABLE_BY_OLM, req.no_cluster_reason.clone()),
    };
    results.push(deployable);
    results.extend(operator::offline(&bundle));
    let (hashes, hash) = bundle_hash(local.tree());
    extra.push(("hashes.txt".into(), hashes.into_bytes()));
    let report = Report {
        image: req.bundle.clone(),
        results,
        certification_hash: Some(hash),
    };
    if let Some(dir) = &req.artifacts.dir {
        super::write_artifacts(dir, &report, req.artifacts.junit, &extra)?;
    }
    Ok(report)
}
