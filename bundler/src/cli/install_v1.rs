//! `olm install|upgrade|uninstall|status --olm-v1`: the OLM v1 flows of
//! `olm_bundler::ops::olmv1` against the user's kubeconfig, with live progress. `mod.rs` routes
//! here when `--olm-v1` is given.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use olm_bundler::deploy::flow::FlowError;
use olm_bundler::ops::olmv1 as ops;

use super::args::{ClusterArgs, SpecArgs, V1FilterArgs, V1NameArgs, v1_inputs};
use olm_bundler::ops::progress::CliProgress;

fn report(progress: &mut CliProgress, err: FlowError) -> anyhow::Result<ExitCode> {
    progress.fail();
    eprintln!("error: {err}");
    let diagnostics = err.diagnostics();
    if !diagnostics.is_empty() {
        eprintln!("what the cluster reports:");
        for line in diagnostics {
            eprintln!("  {line}");
        }
    }
    Ok(ExitCode::FAILURE)
}

/// What `olm install --olm-v1` takes from its flags.
pub struct Install {
    pub package: String,
    pub catalog: String,
    pub spec: SpecArgs,
    pub names: V1NameArgs,
    pub filter: V1FilterArgs,
    pub bundle_dir: Option<PathBuf>,
    pub cluster: ClusterArgs,
}

pub async fn install(a: Install) -> anyhow::Result<ExitCode> {
    let spec = v1_inputs(&a.package, &a.names, &a.filter, Some(&a.spec)).to_spec(&a.catalog)?;
    let rbac = match &a.bundle_dir {
        Some(dir) => Some(ops::rbac_from_bundle(dir, &spec)?),
        None => {
            eprintln!(
                "note: no --bundle-dir: ServiceAccount {}/{} gets no RBAC from olm; it must \
                 already hold what the bundle needs (olm deploy generate --bundle writes it)",
                spec.namespace, spec.service_account
            );
            None
        }
    };
    for n in rbac.iter().flat_map(|r| &r.notes) {
        eprintln!("note: {n}");
    }
    let client = a.cluster.client().await?;
    let mut progress = CliProgress::new();
    match ops::install(
        &client,
        &spec,
        rbac.as_ref(),
        a.cluster.flow_options(),
        &mut progress,
    )
    .await
    {
        Ok(out) => {
            println!(
                "Installed {} {} as ClusterExtension {} into namespace {} (ClusterCatalog {} {}, \
                 ServiceAccount {} {}); Deployments Available: {}.",
                out.bundle.0,
                out.bundle.1,
                out.extension,
                out.namespace,
                out.catalog.0,
                out.catalog.1.as_str(),
                out.service_account.0,
                out.service_account.1.as_str(),
                out.deployments.join(", ")
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => report(&mut progress, e),
    }
}

/// What `olm upgrade --olm-v1` takes from its flags.
pub struct Upgrade {
    pub package: String,
    pub namespace: Option<String>,
    pub catalog: Option<String>,
    pub channel: Option<String>,
    pub names: V1NameArgs,
    pub filter: V1FilterArgs,
    pub cluster: ClusterArgs,
}

pub async fn upgrade(a: Upgrade) -> anyhow::Result<ExitCode> {
    let mut inputs = v1_inputs(&a.package, &a.names, &a.filter, None);
    inputs.namespace = a.namespace;
    inputs.channel = a.channel;
    let up = inputs.to_upgrade(a.catalog.as_deref())?;
    let client = a.cluster.client().await?;
    let mut progress = CliProgress::new();
    match ops::upgrade(&client, &up, a.cluster.flow_options(), &mut progress).await {
        Ok(out) => {
            match &out.from {
                Some(from) if *from == out.to => println!(
                    "{} stays at {} {}: nothing newer matches its filters.",
                    out.extension, out.to.0, out.to.1
                ),
                Some(from) => println!(
                    "Upgraded {} from {} {} to {} {}.",
                    out.extension, from.0, from.1, out.to.0, out.to.1
                ),
                None => println!("{} installed {} {}.", out.extension, out.to.0, out.to.1),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => report(&mut progress, e),
    }
}

pub async fn uninstall(
    package: String,
    namespace: Option<String>,
    names: V1NameArgs,
    cluster: ClusterArgs,
) -> anyhow::Result<ExitCode> {
    let mut inputs = v1_inputs(&package, &names, &V1FilterArgs::default(), None);
    inputs.namespace = namespace;
    let names = inputs.names();
    let client = cluster.client().await?;
    let mut progress = CliProgress::new();
    match ops::uninstall(&client, &names, cluster.flow_options(), &mut progress).await {
        Ok(out) => {
            println!("Uninstalled ClusterExtension {}.", names.extension);
            for d in &out.deleted {
                println!("  deleted {d}");
            }
            for k in &out.kept {
                println!("  kept {k}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => report(&mut progress, e),
    }
}

pub async fn status(
    package: String,
    names: V1NameArgs,
    json: bool,
    cluster: ClusterArgs,
) -> anyhow::Result<ExitCode> {
    let extension = names.extension_name.unwrap_or(package);
    let client = cluster.client().await?;
    let report_ = match ops::status(&client, &extension).await {
        Ok(r) => r,
        Err(e) => return report(&mut CliProgress::new(), e),
    };
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &report_)?;
        writeln!(out)?;
    } else {
        out.write_all(report_.table().as_bytes())?;
    }
    Ok(if report_.healthy() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
