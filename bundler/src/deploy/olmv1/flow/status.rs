//! `status --olm-v1`: the extension's conditions and installed bundle, its catalog and its
//! Deployments.

use super::*;

/// `olm status --olm-v1`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct V1Status {
    pub extension: String,
    pub package: String,
    pub namespace: String,
    pub service_account: String,
    pub channels: Vec<String>,
    pub version: Option<String>,
    /// `status.install.bundle` (name, version).
    pub installed: Option<(String, String)>,
    pub conditions: Vec<Condition>,
    pub catalog: Option<V1CatalogState>,
    pub deployments: Vec<V1DeploymentState>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct V1CatalogState {
    pub name: String,
    pub image: String,
    /// `status.resolvedSource.image.ref`: the digest catalogd unpacked.
    pub resolved: Option<String>,
    pub conditions: Vec<Condition>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct V1DeploymentState {
    pub name: String,
    pub available: bool,
    pub ready: i32,
    pub replicas: i32,
}

impl V1Status {
    /// Installed, with `Installed=True` and every Deployment Available.
    pub fn healthy(&self) -> bool {
        self.installed.is_some()
            && condition(&self.conditions, "Installed").is_some_and(|c| c.status == "True")
            && !self.deployments.is_empty()
            && self.deployments.iter().all(|d| d.available)
    }

    /// Aligned lines for a terminal.
    pub fn table(&self) -> String {
        let mut out = format!(
            "ClusterExtension {} (package {}, namespace {}, ServiceAccount {})\n",
            self.extension, self.package, self.namespace, self.service_account
        );
        out.push_str(&format!(
            "  channels {}, version {}\n  installed {}\n",
            if self.channels.is_empty() {
                "-".to_string()
            } else {
                self.channels.join(",")
            },
            self.version.as_deref().unwrap_or("-"),
            self.installed
                .as_ref()
                .map_or("-".to_string(), |(n, v)| format!("{n} ({v})"))
        ));
        for c in &self.conditions {
            out.push_str(&format!("  {}\n", describe(c)));
        }
        match &self.catalog {
            Some(c) => {
                out.push_str(&format!(
                    "ClusterCatalog {} (image {}, resolved {})\n",
                    c.name,
                    c.image,
                    c.resolved.as_deref().unwrap_or("-")
                ));
                for cond in &c.conditions {
                    out.push_str(&format!("  {}\n", describe(cond)));
                }
            }
            None => out.push_str("ClusterCatalog: none selected or missing\n"),
        }
        for d in &self.deployments {
            out.push_str(&format!(
                "Deployment {}: {}/{} ready, {}\n",
                d.name,
                d.ready,
                d.replicas,
                if d.available {
                    "Available"
                } else {
                    "not Available"
                }
            ));
        }
        out
    }
}

/// Reads the ClusterExtension `name`, the ClusterCatalog its selector pins (if any) and the
/// Deployments it owns.
pub async fn status(client: &Client, name: &str) -> Result<V1Status, FlowError> {
    check_olmv1(client).await?;
    let ce_api: Api<ClusterExtension> = Api::all(client.clone());
    let ce = ce_api
        .get_opt(name)
        .await
        .map_err(api_err(format!("reading ClusterExtension {name}")))?
        .ok_or_else(|| FlowError::NoExtension {
            name: name.to_string(),
        })?;
    let filter = ce.spec.source.catalog.clone().unwrap_or_default();
    let mut report = V1Status {
        extension: name.to_string(),
        package: filter.package_name.clone(),
        namespace: ce.spec.namespace.clone(),
        service_account: ce.spec.service_account.name.clone(),
        channels: filter.channels.clone(),
        version: filter.version.clone(),
        installed: ce
            .installed_bundle()
            .map(|b| (b.name.clone(), b.version.clone())),
        conditions: ce.conditions().to_vec(),
        ..Default::default()
    };
    let catalog_name = filter.pinned_catalog().map(str::to_string);
    if let Some(cn) = catalog_name {
        let cc_api: Api<ClusterCatalog> = Api::all(client.clone());
        if let Some(cc) = cc_api
            .get_opt(&cn)
            .await
            .map_err(api_err(format!("reading ClusterCatalog {cn}")))?
        {
            report.catalog = Some(V1CatalogState {
                name: cn,
                image: cc
                    .spec
                    .source
                    .image
                    .as_ref()
                    .map(|i| i.ref_.clone())
                    .unwrap_or_default(),
                resolved: cc
                    .status
                    .as_ref()
                    .and_then(|s| s.resolved_source.as_ref())
                    .and_then(|r| r.image.as_ref())
                    .map(|i| i.ref_.clone()),
                conditions: cc.conditions().to_vec(),
            });
        }
    }
    let deps = owned_deployments(client, &report.namespace, name)
        .await
        .map_err(api_err(format!(
            "listing Deployments in {}",
            report.namespace
        )))?;
    for d in deps {
        let available = deployment_available(&d);
        let st = d.status.clone().unwrap_or_default();
        report.deployments.push(V1DeploymentState {
            name: d.metadata.name.clone().unwrap_or_default(),
            available,
            ready: st.ready_replicas.unwrap_or(0),
            replicas: st.replicas.unwrap_or(0),
        });
    }
    Ok(report)
}
