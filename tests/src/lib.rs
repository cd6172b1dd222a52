//! Shared helpers for the workspace integration tests.

use std::path::PathBuf;
use std::time::Duration;

/// True under CI: `CI` is `true` (any case) or `1`, as CI services set it.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// A required prerequisite (a tool, a variable, a data folder) is missing: panics under CI
/// (`CI=true`), where a skipped test is a test that cannot fail; elsewhere prints a visible
/// `SKIP` line (straight to stderr, past the harness's capture) and the caller returns.
///
/// Cluster tests are the exception: `E2E_KUBECONFIG` (and other `E2E_*` variables) are opt-in
/// and skip under CI too, since CI has no cluster: see [`skip_opt_in`] and [`e2e_kubeconfig`].
#[track_caller]
pub fn missing(test: &str, what: &str) {
    if in_ci() {
        panic!("{test}: test prerequisite missing under CI=true: {what} (outside CI it skips)");
    }
    skip_opt_in(test, what);
}

/// An opt-in prerequisite (a cluster) is not set: prints a `SKIP` line, under CI too.
pub fn skip_opt_in(test: &str, what: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIP {test}: {what}");
}

/// The kubeconfig of the cluster for end-to-end tests, from `E2E_KUBECONFIG`. `None` (and a
/// SKIP line on stderr, under CI too: cluster tests are opt-in) when unset, so the suites pass
/// on machines without a cluster.
pub fn e2e_kubeconfig(test: &str) -> Option<PathBuf> {
    match std::env::var_os("E2E_KUBECONFIG") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            skip_opt_in(
                test,
                "E2E_KUBECONFIG is not set (point it at a kind/k3d/any cluster to run)",
            );
            None
        }
    }
}

/// A client for the kubeconfig at `path`.
pub async fn client_for(path: &std::path::Path) -> anyhow::Result<kube::Client> {
    reverse_words_operator::install_crypto_provider();
    let kc = kube::config::Kubeconfig::read_from(path)?;
    let cfg = kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
        .await?;
    Ok(kube::Client::try_from(cfg)?)
}

/// Polls `check` until it returns `Some`, or fails after `timeout` with `what` in the message.
pub async fn eventually<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Option<T>>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut last_err = None;
    loop {
        match check().await {
            Ok(Some(v)) => return Ok(v),
            Ok(None) => {}
            Err(e) => last_err = Some(e),
        }
        if tokio::time::Instant::now() >= deadline {
            anyhow::bail!(
                "timed out after {timeout:?} waiting for {what}{}",
                last_err
                    .map(|e| format!(" (last error: {e:#})"))
                    .unwrap_or_default()
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// A unique, valid namespace name for one test run.
pub fn unique_namespace(prefix: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}-{}-{nanos:x}", std::process::id())
}
