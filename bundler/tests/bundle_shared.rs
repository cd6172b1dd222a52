//! Acceptance: the default suite over every real bundle in shared/data/bundles gives the verdict
//! operator-framework/api's validators give.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};

use olm_bundler::bundle::validate::{Options, validate_dir};

/// shared/data/bundles beside the checkout (CI clones the repo beside shared/; a git worktree
/// sits one level deeper, so look in every ancestor).
fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/data/bundles"))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("shared/data/bundles"))
}

/// Every bundle directory (`<repo>/operators/<package>/<version>`).
fn bundles() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for repo in ["community-operators-prod", "certified-operators"] {
        let ops = shared().join(repo).join("operators");
        let Ok(pkgs) = std::fs::read_dir(&ops) else {
            continue;
        };
        for pkg in pkgs.flatten() {
            for ver in std::fs::read_dir(pkg.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if ver.path().is_dir() {
                    out.push(ver.path());
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn default_suite_verdicts_match_upstream() {
    let all = bundles();
    if all.is_empty() {
        prerequisite::missing("shared/data/bundles not found beside this checkout");
        return;
    }
    assert_eq!(all.len(), 20, "expected the 20 shared bundles");
    let crd_failures = [
        "cockroachdb/2.1.1",
        "jaeger/1.11.0",
        "multicluster-operators-subscription/0.1.5",
        "t8c/7.16.0",
    ];
    let format_failure = "jupyter-notebook-validator-operator/1.0.7";
    let mut passed = 0;
    let mut wrong = Vec::new();
    for dir in &all {
        let rel = dir
            .strip_prefix(shared())
            .unwrap()
            .to_string_lossy()
            .to_string();
        let report =
            validate_dir(dir, &Options::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for f in &report.findings {
            println!("{rel}: {f}");
        }
        let validators: std::collections::BTreeSet<&str> =
            report.errors().map(|f| f.validator).collect();
        let expected: std::collections::BTreeSet<&str> =
            if crd_failures.iter().any(|c| rel.ends_with(c)) {
                ["crd"].into()
            } else if rel.ends_with(format_failure) {
                ["format"].into()
            } else {
                passed += 1;
                Default::default()
            };
        if validators != expected || report.passed(false) != expected.is_empty() {
            wrong.push(format!(
                "{rel}: expected errors from {expected:?}, got {validators:?}"
            ));
        }
        // And for the reasons upstream gives.
        let checks: std::collections::BTreeSet<&str> = report.errors().map(|f| f.check).collect();
        let reasons: std::collections::BTreeSet<&str> = if ["cockroachdb", "t8c", "multicluster"]
            .iter()
            .any(|p| rel.contains(p))
        {
            ["api-approval", "preserve-unknown-fields"].into()
        } else if rel.contains("jaeger") {
            ["preserve-unknown-fields"].into()
        } else if rel.ends_with(format_failure) {
            ["missing-directory"].into()
        } else {
            Default::default()
        };
        if checks != reasons {
            wrong.push(format!(
                "{rel}: expected failing checks {reasons:?}, got {checks:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    assert_eq!(passed, 15);
}
