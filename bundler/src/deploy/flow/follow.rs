//! Following a Subscription to its InstallPlan and CSV, and what the cluster says when that
//! fails.

use super::*;

/// Runs one wait as a progress step, turning its failure into a [`FlowError`] with diagnostics.
pub(super) struct Waiter<'a> {
    pub(super) client: &'a Client,
    pub(super) namespace: &'a str,
    pub(super) opts: WaitOptions,
    pub(super) progress: &'a mut dyn Progress,
    /// Known so far, for diagnostics.
    pub(super) install_plan: Option<String>,
    pub(super) csv: Option<String>,
}

impl Waiter<'_> {
    async fn fail(&self, source: WaitError) -> FlowError {
        let diagnostics = diagnose(
            self.client,
            self.namespace,
            self.install_plan.as_deref(),
            self.csv.as_deref(),
        )
        .await;
        FlowError::Wait {
            source,
            diagnostics,
        }
    }
}

/// Collects what the cluster says about a failed install: CSV phase history, InstallPlan
/// errors and the namespace's recent events. Best effort: a read that fails is skipped.
pub async fn diagnose(
    client: &Client,
    namespace: &str,
    install_plan: Option<&str>,
    csv: Option<&str>,
) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(csv) = csv {
        let api: Api<ClusterServiceVersion> = Api::namespaced(client.clone(), namespace);
        if let Ok(Some(c)) = api.get_opt(csv).await {
            let st = c.status.unwrap_or_default();
            out.push(format!(
                "ClusterServiceVersion {csv}: phase {} {} {}",
                if st.phase.is_empty() { "-" } else { &st.phase },
                st.reason.unwrap_or_default(),
                st.message.unwrap_or_default()
            ));
            for cond in st.conditions.iter().rev().take(5).rev() {
                out.push(format!(
                    "  condition {} {}: {}",
                    cond.phase,
                    cond.reason.as_deref().unwrap_or(""),
                    cond.message.as_deref().unwrap_or("")
                ));
            }
        }
    }
    if let Some(ip) = install_plan {
        let api: Api<InstallPlan> = Api::namespaced(client.clone(), namespace);
        if let Ok(Some(p)) = api.get_opt(ip).await {
            out.push(format!("InstallPlan {ip}: phase {}", p.phase()));
            if p.phase() == "Failed" {
                for e in wait::install_plan_errors(&p) {
                    out.push(format!("  {e}"));
                }
            }
        }
    }
    out.extend(recent_events(client, namespace).await);
    out
}

/// Waits for the catalog, the plan (approving it when `approve`) and the CSV. Returns the plan,
/// the CSV and whether it stopped at a plan awaiting approval.
pub(super) async fn follow_subscription(
    w: &mut Waiter<'_>,
    catalog: (&str, &str),
    subscription: &str,
    not_csv: Option<&str>,
    approve: bool,
) -> Result<(String, String, bool), FlowError> {
    let (cat_ns, cat_name) = catalog;
    let cs_api: Api<CatalogSource> = Api::namespaced(w.client.clone(), cat_ns);
    w.progress.step(&format!(
        "Waiting for CatalogSource {cat_ns}/{cat_name} to be READY"
    ));
    let r = {
        let p = &mut *w.progress;
        wait::catalog_ready(&cs_api, cat_name, &w.opts, &mut |s| p.update(s)).await
    };
    if let Err(e) = r {
        return Err(w.fail(e).await);
    }
    w.progress.done("catalog READY");

    let sub_api: Api<Subscription> = Api::namespaced(w.client.clone(), w.namespace);
    w.progress.step(&format!(
        "Waiting for Subscription {subscription} to resolve"
    ));
    let r = {
        let p = &mut *w.progress;
        wait::install_plan_created(&sub_api, subscription, not_csv, &w.opts, &mut |s| {
            p.update(s)
        })
        .await
    };
    let (ip_name, csv) = match r {
        Ok(v) => v,
        Err(e) => return Err(w.fail(e).await),
    };
    w.install_plan = Some(ip_name.clone());
    w.csv = Some(csv.clone());
    w.progress.done(&format!("InstallPlan {ip_name} for {csv}"));

    let ip_api: Api<InstallPlan> = Api::namespaced(w.client.clone(), w.namespace);
    w.progress
        .step(&format!("Waiting for InstallPlan {ip_name}"));
    let mut outcome = {
        let p = &mut *w.progress;
        wait::install_plan_done(&ip_api, &ip_name, &w.opts, &mut |s| p.update(s)).await
    };
    if matches!(outcome, Ok(PlanOutcome::RequiresApproval)) {
        if !approve {
            w.progress.done("awaiting manual approval");
            return Ok((ip_name, csv, true));
        }
        ip_api
            .patch(
                &ip_name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"spec": {"approved": true}})),
            )
            .await
            .map_err(api_err(format!("approving InstallPlan {ip_name}")))?;
        w.progress.update("approved");
        outcome = {
            let p = &mut *w.progress;
            wait::install_plan_done(&ip_api, &ip_name, &w.opts, &mut |s| p.update(s)).await
        };
    }
    match outcome {
        Ok(_) => w.progress.done("InstallPlan Complete"),
        Err(e) => return Err(w.fail(e).await),
    }

    let csv_api: Api<ClusterServiceVersion> = Api::namespaced(w.client.clone(), w.namespace);
    w.progress.step(&format!(
        "Waiting for ClusterServiceVersion {csv} to succeed"
    ));
    let r = {
        let p = &mut *w.progress;
        wait::csv_succeeded(&csv_api, &csv, &w.opts, &mut |s| p.update(s)).await
    };
    if let Err(e) = r {
        return Err(w.fail(e).await);
    }
    w.progress.done("Succeeded");
    Ok((ip_name, csv, false))
}

/// The last ten events of `namespace`, oldest first, under a `recent events:` line (nothing
/// when there are none or they cannot be read).
pub(crate) async fn recent_events(client: &Client, namespace: &str) -> Vec<String> {
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    let Ok(list) = events.list(&ListParams::default()).await else {
        return Vec::new();
    };
    let mut items = list.items;
    items.sort_by_key(|e| {
        e.last_timestamp
            .as_ref()
            .map(|t| t.0)
            .or(e.event_time.as_ref().map(|t| t.0))
            .or(e.metadata.creation_timestamp.as_ref().map(|t| t.0))
    });
    let recent: Vec<_> = items.iter().rev().take(10).collect();
    let mut out = Vec::new();
    if !recent.is_empty() {
        out.push("recent events:".into());
    }
    for e in recent.into_iter().rev() {
        out.push(format!(
            "  {} {}/{}: {}: {}",
            e.type_.as_deref().unwrap_or("Normal"),
            e.involved_object.kind.as_deref().unwrap_or("?"),
            e.involved_object.name.as_deref().unwrap_or("?"),
            e.reason.as_deref().unwrap_or(""),
            e.message.as_deref().unwrap_or("").trim()
        ));
    }
    out
}
