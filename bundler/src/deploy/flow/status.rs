//! `status`: the state of every object of an install, as a table or JSON.

use super::*;

/// `olm status`: the state of every object of an install.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusReport {
    pub package: String,
    pub namespace: String,
    pub subscription: SubscriptionState,
    pub catalog_source: Option<CatalogState>,
    pub install_plan: Option<PlanState>,
    pub csv: Option<CsvState>,
    pub deployments: Vec<DeploymentState>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionState {
    pub name: String,
    pub channel: Option<String>,
    pub source: String,
    pub state: Option<String>,
    #[serde(rename = "installedCSV")]
    pub installed_csv: Option<String>,
    #[serde(rename = "currentCSV")]
    pub current_csv: Option<String>,
    /// Conditions that are True (OLM's subscription conditions are abnormal-true).
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CatalogState {
    pub name: String,
    pub image: Option<String>,
    /// `spec.address` of a CatalogSource served by a running registry instead of an image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub state: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlanState {
    pub name: String,
    pub phase: String,
    pub approval: String,
    pub approved: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CsvState {
    pub name: String,
    pub phase: String,
    pub reason: Option<String>,
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeploymentState {
    pub name: String,
    pub replicas: i32,
    pub ready: i32,
    pub available: i32,
}

/// Reads the Subscription of `package` and what it points at. Missing pieces are `None`
/// (an install in progress is a valid state to report).
pub async fn status(
    client: &Client,
    namespace: &str,
    package: &str,
) -> Result<StatusReport, FlowError> {
    objects::check_dns_label("--namespace", namespace)?;
    check_olm(client).await?;
    let sub = find_subscription(client, namespace, package)
        .await?
        .ok_or_else(|| FlowError::NotInstalled {
            package: package.to_string(),
            namespace: namespace.to_string(),
        })?;
    let st = sub.status.clone().unwrap_or_default();
    let mut report = StatusReport {
        package: package.to_string(),
        namespace: namespace.to_string(),
        subscription: SubscriptionState {
            name: sub.metadata.name.clone().unwrap_or_default(),
            channel: sub.spec.channel.clone(),
            source: format!("{}/{}", sub.spec.source_namespace, sub.spec.source),
            state: st.state.clone(),
            installed_csv: st.installed_csv.clone(),
            current_csv: st.current_csv.clone(),
            problems: st
                .conditions
                .iter()
                .filter(|c| c.status == "True")
                .map(|c| {
                    format!(
                        "{}: {}",
                        c.type_,
                        c.message.as_deref().or(c.reason.as_deref()).unwrap_or("")
                    )
                })
                .collect(),
        },
        ..Default::default()
    };
    let cs_api: Api<CatalogSource> = Api::namespaced(client.clone(), &sub.spec.source_namespace);
    if let Some(cs) = cs_api
        .get_opt(&sub.spec.source)
        .await
        .map_err(api_err("reading CatalogSource"))?
    {
        report.catalog_source = Some(CatalogState {
            name: sub.spec.source.clone(),
            image: cs.spec.image.clone(),
            address: cs.spec.address.clone(),
            state: cs.observed_state().map(str::to_string),
        });
    }
    if let Some(ip) = sub.install_plan_name() {
        let api: Api<InstallPlan> = Api::namespaced(client.clone(), namespace);
        if let Some(p) = api
            .get_opt(ip)
            .await
            .map_err(api_err(format!("reading InstallPlan {ip}")))?
        {
            report.install_plan = Some(PlanState {
                name: ip.to_string(),
                phase: p.phase().to_string(),
                approval: p.spec.approval.clone(),
                approved: p.spec.approved,
            });
        }
    }
    if let Some(csv) = st.installed_csv.or(st.current_csv) {
        let api: Api<ClusterServiceVersion> = Api::namespaced(client.clone(), namespace);
        if let Some(c) = api
            .get_opt(&csv)
            .await
            .map_err(api_err(format!("reading ClusterServiceVersion {csv}")))?
        {
            let cst = c.status.clone().unwrap_or_default();
            report.csv = Some(CsvState {
                name: csv.clone(),
                phase: cst.phase,
                reason: cst.reason,
                message: cst.message,
            });
            let deps: Vec<String> = c
                .spec
                .install
                .map(|i| i.spec.deployments.into_iter().map(|d| d.name).collect())
                .unwrap_or_default();
            let dapi: Api<Deployment> = Api::namespaced(client.clone(), namespace);
            for d in deps {
                let dep = dapi
                    .get_opt(&d)
                    .await
                    .map_err(api_err(format!("reading Deployment {d}")))?;
                let (replicas, ready, available) = dep
                    .and_then(|x| x.status)
                    .map(|s| {
                        (
                            s.replicas.unwrap_or(0),
                            s.ready_replicas.unwrap_or(0),
                            s.available_replicas.unwrap_or(0),
                        )
                    })
                    .unwrap_or((0, 0, 0));
                report.deployments.push(DeploymentState {
                    name: d,
                    replicas,
                    ready,
                    available,
                });
            }
        }
    }
    Ok(report)
}

impl StatusReport {
    /// Whether the operator is running: its CSV reached `Succeeded`.
    pub fn healthy(&self) -> bool {
        self.csv.as_ref().is_some_and(|c| c.phase == "Succeeded")
    }

    /// `olm status` as aligned columns: one row per object of the install.
    pub fn table(&self) -> String {
        let r = self;
        let dash = |s: Option<&str>| s.filter(|s| !s.is_empty()).unwrap_or("-").to_string();
        let mut rows: Vec<[String; 4]> = vec![[
            "KIND".into(),
            "NAME".into(),
            "STATUS".into(),
            "DETAIL".into(),
        ]];
        let s = &r.subscription;
        rows.push([
            "Subscription".into(),
            s.name.clone(),
            dash(s.state.as_deref()),
            format!(
                "channel {}, installed {}, current {}",
                dash(s.channel.as_deref()),
                dash(s.installed_csv.as_deref()),
                dash(s.current_csv.as_deref())
            ),
        ]);
        match &r.catalog_source {
            Some(c) => rows.push([
                "CatalogSource".into(),
                c.name.clone(),
                dash(c.state.as_deref()),
                dash(c.image.as_deref().or(c.address.as_deref())),
            ]),
            None => rows.push([
                "CatalogSource".into(),
                s.source.clone(),
                "missing".into(),
                "-".into(),
            ]),
        }
        if let Some(p) = &r.install_plan {
            rows.push([
                "InstallPlan".into(),
                p.name.clone(),
                dash(Some(&p.phase)),
                format!(
                    "{}{}",
                    p.approval,
                    if p.approval == "Manual" && !p.approved {
                        " (not approved)"
                    } else {
                        ""
                    }
                ),
            ]);
        }
        if let Some(c) = &r.csv {
            rows.push([
                "ClusterServiceVersion".into(),
                c.name.clone(),
                dash(Some(&c.phase)),
                dash(c.message.as_deref()),
            ]);
        }
        for d in &r.deployments {
            rows.push([
                "Deployment".into(),
                d.name.clone(),
                format!("{}/{} ready", d.ready, d.replicas),
                format!("{} available", d.available),
            ]);
        }
        let mut widths = [0usize; 3];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row.iter()) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in &rows {
            for (i, cell) in row.iter().enumerate() {
                if i < 3 {
                    out.push_str(&format!("{cell:<w$}  ", w = widths[i]));
                } else {
                    out.push_str(cell);
                }
            }
            out.push('\n');
        }
        for p in &s.problems {
            out.push_str(&format!("problem: {p}\n"));
        }
        out
    }
}
