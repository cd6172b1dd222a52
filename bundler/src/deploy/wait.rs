//! Waiting for OLM to act, by polling with a deadline.
//!
//! Polling (a GET every `interval`) instead of a watch: installs take seconds to minutes, a GET
//! per couple of seconds costs nothing, works through every proxy and RBAC setup that allows
//! `get`, and each wait is a plain function that is easy to test. Every wait reports progress
//! through a callback (the CLI draws a spinner or prints lines) and ends in one of three ways:
//! the condition holds, OLM reports a failure, or the shared deadline passes.

use std::fmt::Debug;
use std::time::Duration;

use kube::Api;
use kube::api::{DeleteParams, PropagationPolicy};
use serde::de::DeserializeOwned;
use tokio::time::Instant;

use super::types::{CatalogSource, ClusterServiceVersion, InstallPlan, Subscription};

/// When to give up and how often to look.
#[derive(Debug, Clone, Copy)]
pub struct WaitOptions {
    pub deadline: Instant,
    /// The time budget the deadline came from, for messages.
    pub timeout: Duration,
    pub interval: Duration,
}

impl WaitOptions {
    /// A deadline `timeout` from now, polling every `interval`.
    pub fn new(timeout: Duration, interval: Duration) -> Self {
        Self {
            deadline: Instant::now() + timeout,
            timeout,
            interval,
        }
    }
}

/// Why a wait ended without its condition.
#[derive(Debug, thiserror::Error)]
pub enum WaitError {
    #[error("timed out after {} waiting for {what} (last seen: {last})", fmt_duration(*.timeout))]
    Timeout {
        what: String,
        last: String,
        timeout: Duration,
    },
    #[error("{what} failed: {message}")]
    Failed { what: String, message: String },
    #[error("{what}: {source}")]
    Api {
        what: String,
        #[source]
        source: kube::Error,
    },
}

/// `5m`, `1m30s`, `45s`, `300ms`.
pub fn fmt_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let s = d.as_secs();
    let (h, m, s) = (s / 3600, (s / 60) % 60, s % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

/// What one look at the object says.
#[derive(Debug)]
pub enum Check<T> {
    /// The condition holds.
    Ready(T),
    /// Not yet; the text says what state it is in (shown as progress).
    Pending(String),
    /// It will not get there on its own.
    Failed(String),
}

/// Polls `name` until `check` says ready or failed, or the deadline passes. `check` sees
/// `None` while the object does not exist. Progress is reported only when the state text changes.
pub async fn poll<K, T>(
    api: &Api<K>,
    name: &str,
    what: &str,
    opts: &WaitOptions,
    progress: &mut (dyn FnMut(&str) + Send),
    mut check: impl FnMut(Option<&K>) -> Check<T> + Send,
) -> Result<T, WaitError>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug + Send + Sync,
{
    let mut last = String::from("nothing yet");
    loop {
        let obj = api.get_opt(name).await.map_err(|source| WaitError::Api {
            what: what.to_string(),
            source,
        })?;
        match check(obj.as_ref()) {
            Check::Ready(t) => return Ok(t),
            Check::Failed(message) => {
                return Err(WaitError::Failed {
                    what: what.to_string(),
                    message,
                });
            }
            Check::Pending(state) => {
                if state != last {
                    progress(&state);
                    last = state;
                }
            }
        }
        let now = Instant::now();
        if now >= opts.deadline {
            return Err(WaitError::Timeout {
                what: what.to_string(),
                last,
                timeout: opts.timeout,
            });
        }
        tokio::time::sleep(opts.interval.min(opts.deadline - now)).await;
    }
}

/// Waits for the CatalogSource's registry pod to be serving: `connectionState.lastObservedState`
/// is `READY`. A TRANSIENT_FAILURE is not final (the pod may still be pulling), so only the
/// deadline ends a wait that never gets there.
pub async fn catalog_ready(
    api: &Api<CatalogSource>,
    name: &str,
    opts: &WaitOptions,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(), WaitError> {
    poll(
        api,
        name,
        &format!("CatalogSource {name} to be READY"),
        opts,
        progress,
        |cs| match cs {
            None => Check::Failed("the CatalogSource was deleted".into()),
            Some(cs) => match cs.observed_state() {
                Some("READY") => Check::Ready(()),
                Some(state) => Check::Pending(format!("connection {state}")),
                None => Check::Pending("no connection state yet".into()),
            },
        },
    )
    .await
}

/// Waits until the Subscription names an InstallPlan for a CSV other than `not_csv` (pass the
/// installed CSV when upgrading, so the plan that installed it does not count). Returns the plan
/// name and the CSV it installs (`status.currentCSV`). Resolution failures stay Pending: OLM retries them when the catalog changes.
pub async fn install_plan_created(
    api: &Api<Subscription>,
    name: &str,
    not_csv: Option<&str>,
    opts: &WaitOptions,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(String, String), WaitError> {
    poll(
        api,
        name,
        &format!("Subscription {name} to get an InstallPlan"),
        opts,
        progress,
        |sub| {
            let Some(sub) = sub else {
                return Check::Failed("the Subscription was deleted".into());
            };
            let st = sub.status.clone().unwrap_or_default();
            let current = st.current_csv.as_deref().filter(|c| !c.is_empty());
            match (sub.install_plan_name(), current) {
                (Some(ip), Some(csv)) if Some(csv) != not_csv => {
                    Check::Ready((ip.to_string(), csv.to_string()))
                }
                _ => {
                    let why = st
                        .conditions
                        .iter()
                        .find(|c| c.status == "True" && c.type_ == "ResolutionFailed")
                        .and_then(|c| c.message.clone());
                    match (why, st.state.as_deref()) {
                        (Some(m), _) => Check::Pending(format!("resolution failed: {m}")),
                        (None, Some(s)) if !s.is_empty() => Check::Pending(format!("state {s}")),
                        _ => Check::Pending("resolving".into()),
                    }
                }
            }
        },
    )
    .await
}

/// What an InstallPlan wait ended on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanOutcome {
    Complete,
    /// Manual approval: someone must set `spec.approved`.
    RequiresApproval,
}

/// Waits for an InstallPlan to complete, or to stop at `RequiresApproval`. `Failed` ends the
/// wait with the plan's conditions and bundle unpack errors.
pub async fn install_plan_done(
    api: &Api<InstallPlan>,
    name: &str,
    opts: &WaitOptions,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<PlanOutcome, WaitError> {
    poll(
        api,
        name,
        &format!("InstallPlan {name}"),
        opts,
        progress,
        |ip| {
            let Some(ip) = ip else {
                return Check::Pending("not created yet".into());
            };
            match ip.phase() {
                "Complete" => Check::Ready(PlanOutcome::Complete),
                "RequiresApproval" if !ip.spec.approved => {
                    Check::Ready(PlanOutcome::RequiresApproval)
                }
                "Failed" => Check::Failed(install_plan_errors(ip).join("; ")),
                "" => Check::Pending("phase not set yet".into()),
                p => Check::Pending(format!("phase {p}")),
            }
        },
    )
    .await
}

/// The error texts of an InstallPlan: its message, False conditions and failed bundle lookups.
pub fn install_plan_errors(ip: &InstallPlan) -> Vec<String> {
    let Some(st) = &ip.status else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(m) = st.message.as_deref().filter(|m| !m.is_empty()) {
        out.push(m.to_string());
    }
    for c in &st.conditions {
        if c.status != "True" || c.reason.as_deref() == Some("InstallComponentFailed") {
            out.push(format!(
                "{} {}: {} {}",
                c.type_,
                c.status,
                c.reason.as_deref().unwrap_or(""),
                c.message.as_deref().unwrap_or("")
            ));
        }
    }
    for b in &st.bundle_lookups {
        for c in &b.conditions {
            if c.status == "True" && c.type_ != "BundleLookupPending" {
                out.push(format!(
                    "bundle {}: {} {}",
                    b.path,
                    c.type_,
                    c.message.as_deref().unwrap_or("")
                ));
            }
        }
    }
    if out.is_empty() {
        out.push("no reason given".into());
    }
    out
}

/// Waits for a CSV to reach `Succeeded`; `Failed` ends the wait with its reason and message.
pub async fn csv_succeeded(
    api: &Api<ClusterServiceVersion>,
    name: &str,
    opts: &WaitOptions,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<(), WaitError> {
    poll(
        api,
        name,
        &format!("ClusterServiceVersion {name} to succeed"),
        opts,
        progress,
        |csv| {
            let Some(csv) = csv else {
                return Check::Pending("not created yet".into());
            };
            let st = csv.status.clone().unwrap_or_default();
            let detail = match (st.reason.as_deref(), st.message.as_deref()) {
                (Some(r), Some(m)) => format!("{r}: {m}"),
                (Some(r), None) => r.to_string(),
                (None, Some(m)) => m.to_string(),
                (None, None) => String::new(),
            };
            match st.phase.as_str() {
                "Succeeded" => Check::Ready(()),
                "Failed" => Check::Failed(detail),
                "" => Check::Pending("phase not set yet".into()),
                p if detail.is_empty() => Check::Pending(format!("phase {p}")),
                p => Check::Pending(format!("phase {p} ({detail})")),
            }
        },
    )
    .await
}

/// Deletes an object (foreground, so dependents go first) and waits until it is gone. A missing
/// object is not an error: uninstall must be re-runnable after a partial run.
pub async fn delete_and_wait<K>(
    api: &Api<K>,
    name: &str,
    what: &str,
    opts: &WaitOptions,
    progress: &mut (dyn FnMut(&str) + Send),
) -> Result<bool, WaitError>
where
    K: kube::Resource + Clone + DeserializeOwned + Debug + Send + Sync,
{
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..Default::default()
    };
    match api.delete(name, &dp).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => return Ok(false),
        Err(source) => {
            return Err(WaitError::Api {
                what: format!("deleting {what}"),
                source,
            });
        }
    }
    poll(
        api,
        name,
        &format!("{what} to be deleted"),
        opts,
        progress,
        |o| match o {
            None => Check::Ready(()),
            Some(_) => Check::Pending("deleting".into()),
        },
    )
    .await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_flags() {
        assert_eq!(fmt_duration(Duration::from_secs(300)), "5m");
        assert_eq!(fmt_duration(Duration::from_secs(90)), "1m30s");
        assert_eq!(fmt_duration(Duration::from_secs(3661)), "1h1m1s");
        assert_eq!(fmt_duration(Duration::from_millis(250)), "250ms");
        assert_eq!(fmt_duration(Duration::from_secs(0)), "0ms");
    }
}
