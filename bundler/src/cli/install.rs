//! `olm install`, `olm upgrade`, `olm uninstall`, `olm status`: the install flows of
//! `olm_bundler::deploy::flow` against the user's kubeconfig, with live progress.

use std::io::Write;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use olm_bundler::deploy::flow::{self, FlowError};
use olm_bundler::deploy::objects::CatalogAddress;
use olm_bundler::ops::install::{self as ops, BundleSource, Source, UpgradeTo, Upgraded};

use olm_bundler::ops::progress::CliProgress;

use super::args::{ClusterArgs, PublishArgs, SpecArgs, V1FilterArgs, V1NameArgs, parse_address};

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Catalog image to serve through a grpc CatalogSource (e.g. quay.io/org/catalog:v1).
    #[arg(
        long = "catalog",
        visible_alias = "catalog-image",
        required_unless_present_any = ["bundle", "catalog_address"],
        conflicts_with_all = ["bundle", "catalog_address"]
    )]
    pub catalog: Option<String>,
    /// A catalog server already listening at HOST:PORT, reachable from the cluster (e.g.
    /// `olm catalog serve catalog/` on your workstation): a grpc CatalogSource with
    /// `spec.address`, no image and no registry.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_address, conflicts_with = "bundle")]
    pub catalog_address: Option<CatalogAddress>,
    /// A bundle image with no catalog yet (like `operator-sdk run bundle`): a one-bundle
    /// catalog image is built, pushed to --index-image, and installed.
    #[arg(long, value_name = "IMAGE")]
    pub bundle: Option<String>,
    /// OLM package to subscribe to (the catalog's `olm.package` name); with --bundle, taken
    /// from the bundle (and checked when given).
    #[arg(long, required_unless_present = "bundle")]
    pub package: Option<String>,
    #[command(flatten)]
    pub spec: SpecArgs,
    #[command(flatten)]
    pub publish: PublishArgs,
    /// Approve the InstallPlan when --approval Manual (otherwise stop and say how).
    #[arg(long)]
    pub approve: bool,
    /// Install through OLM v1 (operator-controller): a ClusterCatalog for --catalog and a
    /// ClusterExtension, waiting for it and for the operator's Deployments.
    #[arg(long, conflicts_with_all = ["bundle", "catalog_address", "approve"], requires = "catalog")]
    pub olm_v1: bool,
    /// OLM v1: the bundle directory the installer ServiceAccount's least-privilege RBAC is
    /// derived from (and applied); without it the account must already hold it.
    #[arg(long, value_name = "DIR", requires = "olm_v1")]
    pub bundle_dir: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub v1_names: V1NameArgs,
    #[command(flatten)]
    pub v1_filter: V1FilterArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

#[derive(Debug, Args)]
pub struct UpgradeArgs {
    /// Installed package to upgrade.
    pub package: String,
    /// Namespace of its Subscription [default: the package name].
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Point the Subscription's CatalogSource at this catalog image first.
    #[arg(
        long = "catalog",
        visible_alias = "catalog-image",
        conflicts_with_all = ["bundle", "catalog_address"]
    )]
    pub catalog: Option<String>,
    /// Point the Subscription's CatalogSource at the catalog server at HOST:PORT first. For
    /// the same address, restart the server with the new catalog instead: OLM re-resolves when
    /// its connection comes back READY.
    #[arg(long, value_name = "HOST:PORT", value_parser = parse_address, conflicts_with = "bundle")]
    pub catalog_address: Option<CatalogAddress>,
    /// Switch the Subscription to this channel first.
    #[arg(long, conflicts_with = "bundle")]
    pub channel: Option<String>,
    /// Move to this bundle image (like `operator-sdk run bundle-upgrade`): it is added to the
    /// CatalogSource's catalog, replacing the installed CSV, and the new catalog image is
    /// pushed to --index-image and served.
    #[arg(long, value_name = "IMAGE")]
    pub bundle: Option<String>,
    #[command(flatten)]
    pub publish: PublishArgs,
    /// Upgrade a ClusterExtension (OLM v1): --catalog repoints its ClusterCatalog, --channel,
    /// --version-range and --upgrade-constraint-policy change its filters.
    #[arg(long, conflicts_with_all = ["bundle", "catalog_address"])]
    pub olm_v1: bool,
    #[command(flatten)]
    pub v1_names: V1NameArgs,
    #[command(flatten)]
    pub v1_filter: V1FilterArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

#[derive(Debug, Args)]
pub struct UninstallArgs {
    /// Installed package to remove.
    pub package: String,
    /// Namespace of its Subscription [default: the package name].
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Also delete the CRDs the operator owns, and with them all its custom resources.
    #[arg(long)]
    pub delete_crds: bool,
    /// Also delete the namespace's OperatorGroup when no other Subscription uses it.
    #[arg(long)]
    pub delete_operator_group: bool,
    /// Remove an OLM v1 install: the ClusterExtension (and with it the operator), then the
    /// installer RBAC, ServiceAccount, ClusterCatalog and namespace olm created.
    #[arg(long, conflicts_with_all = ["delete_crds", "delete_operator_group"])]
    pub olm_v1: bool,
    #[command(flatten)]
    pub v1_names: V1NameArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Installed package.
    pub package: String,
    /// Namespace of its Subscription [default: the package name].
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value = "table")]
    pub output: OutputFormat,
    /// Show an OLM v1 install: the ClusterExtension's conditions and installed bundle, its
    /// ClusterCatalog and Deployments.
    #[arg(long)]
    pub olm_v1: bool,
    #[command(flatten)]
    pub v1_names: V1NameArgs,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Prints a flow error with its diagnostics and returns exit code 1.
fn report_flow_error(progress: &mut CliProgress, err: FlowError) -> anyhow::Result<ExitCode> {
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

pub async fn install(args: InstallArgs) -> anyhow::Result<ExitCode> {
    if let Some(code) = args.publish.unused_without_bundle(args.bundle.as_ref()) {
        return Ok(code);
    }
    let mut progress = CliProgress::new();
    let source = match (args.bundle, args.catalog, args.catalog_address) {
        (Some(image), _, _) => Source::Bundle(Box::new(BundleSource {
            image,
            index_image: args.publish.index_image.clone(),
            build: args.publish.catalog_build()?,
        })),
        (None, Some(image), _) => Source::Catalog(image),
        (None, None, Some(address)) => Source::Address(address),
        // clap requires one of them.
        (None, None, None) => anyhow::bail!(
            "pass --catalog <image> or --catalog-address <host:port> with --package <name>, \
             or --bundle <image>"
        ),
    };
    // The flags are checked before the cluster is reached, and both before anything is built.
    let package = args.package.clone().unwrap_or_default();
    let plan = ops::plan(args.spec.inputs(&package), args.package, source)?;
    let client = args.cluster.client().await?;
    match ops::install(
        &client,
        plan,
        args.approve,
        args.cluster.flow_options(),
        &mut progress,
    )
    .await
    {
        Ok(out) if out.pending_approval => {
            println!(
                "InstallPlan {ns}/{ip} for {csv} waits for manual approval. Approve it with\n  \
                 kubectl -n {ns} patch installplan {ip} --type merge -p '{{\"spec\":{{\"approved\":true}}}}'\n\
                 or re-run with --approve.",
                ns = out.namespace,
                ip = out.install_plan,
                csv = out.csv
            );
            Ok(ExitCode::SUCCESS)
        }
        Ok(out) => {
            println!(
                "Installed {} in namespace {} (CatalogSource {} {}, OperatorGroup {} {}, Subscription {} {}).",
                out.csv,
                out.namespace,
                out.catalog_source.0,
                out.catalog_source.1.as_str(),
                out.operator_group.0,
                out.operator_group.1.as_str(),
                out.subscription.0,
                out.subscription.1.as_str()
            );
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => report_flow_error(&mut progress, e),
    }
}

pub async fn upgrade(args: UpgradeArgs) -> anyhow::Result<ExitCode> {
    if let Some(code) = args.publish.unused_without_bundle(args.bundle.as_ref()) {
        return Ok(code);
    }
    let to = match args.bundle {
        Some(image) => UpgradeTo::Bundle(Box::new(BundleSource {
            image,
            index_image: args.publish.index_image.clone(),
            build: args.publish.catalog_build()?,
        })),
        None => UpgradeTo::Next {
            catalog: match (args.catalog, args.catalog_address) {
                (Some(image), _) => Some(flow::CatalogTarget::Image(image)),
                (None, Some(address)) => Some(flow::CatalogTarget::Address(address)),
                (None, None) => None,
            },
            channel: args.channel,
        },
    };
    let client = args.cluster.client().await?;
    let mut progress = CliProgress::new();
    let package = args.package.clone();
    let outcome = ops::upgrade(
        &client,
        args.package,
        args.namespace,
        to,
        args.cluster.flow_options(),
        &mut progress,
    )
    .await;
    match outcome {
        Ok(Upgraded::Next(out)) => {
            match &out.install_plan {
                None => println!(
                    "{package} is at the latest version its catalog offers: {}.",
                    out.from
                ),
                Some(ip) => println!(
                    "Upgraded {package} from {} to {} (InstallPlan {ip}).",
                    out.from, out.to
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
        Ok(Upgraded::Bundle(out)) => {
            println!(
                "Upgraded {package} from {} to {} (InstallPlan {}; CatalogSource {} now serves {}).",
                out.from, out.to, out.install_plan, out.catalog_source, out.catalog_image
            );
            if out.to != out.bundle_csv {
                eprintln!(
                    "warning: OLM installed {}, not the bundle's {}: another entry of channel {} \
                     replaces {}",
                    out.to, out.bundle_csv, out.channel, out.from
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => report_flow_error(&mut progress, e),
    }
}

pub async fn uninstall(args: UninstallArgs) -> anyhow::Result<ExitCode> {
    let client = args.cluster.client().await?;
    let spec = flow::UninstallSpec {
        namespace: args.namespace.unwrap_or_else(|| args.package.clone()),
        package: args.package,
        delete_crds: args.delete_crds,
        delete_operator_group: args.delete_operator_group,
    };
    let mut progress = CliProgress::new();
    match flow::uninstall(&client, &spec, args.cluster.flow_options(), &mut progress).await {
        Ok(out) => {
            println!(
                "Uninstalled {} from namespace {}.",
                spec.package, spec.namespace
            );
            for d in &out.deleted {
                println!("  deleted {d}");
            }
            for k in &out.kept {
                println!("  kept {k}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => report_flow_error(&mut progress, e),
    }
}

pub async fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let client = args.cluster.client().await?;
    let namespace = args.namespace.unwrap_or_else(|| args.package.clone());
    let report = match flow::status(&client, &namespace, &args.package).await {
        Ok(r) => r,
        Err(e) => return report_flow_error(&mut CliProgress::new(), e),
    };
    let mut out = std::io::stdout().lock();
    match args.output {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &report)?;
            writeln!(out)?;
        }
        OutputFormat::Table => out.write_all(report.table().as_bytes())?,
    }
    let healthy = report.csv.as_ref().is_some_and(|c| c.phase == "Succeeded");
    Ok(if healthy {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
