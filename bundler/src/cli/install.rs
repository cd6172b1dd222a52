//! `olm install`, `olm upgrade`, `olm uninstall`, `olm status`: the install flows of
//! `olm_bundler::deploy::flow` against the user's kubeconfig, with live progress.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use olm_bundler::deploy::flow::{self, FlowError};
use olm_bundler::deploy::objects::CatalogAddress;
use olm_bundler::deploy::olmv1::flow as v1flow;
use olm_bundler::ops::image_trust;
use olm_bundler::ops::install::{self as ops, BundleSource, Source, UpgradeTo};
use olm_bundler::ops::olmv1;

use olm_bundler::ops::progress::CliProgress;

use super::args::{
    ClusterArgs, PublishArgs, SpecArgs, V1FilterArgs, V1NameArgs, parse_address, v1_inputs,
};
use super::output::print;

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
    /// Before creating anything, verify the catalog image and the package's bundle images
    /// (or the --bundle image) with this public key (cosign.pub); stop if one does not verify.
    #[arg(long, value_name = "FILE", conflicts_with = "catalog_address")]
    pub verify_key: Option<std::path::PathBuf>,
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

/// Prints a flow error with what the cluster reports, and returns exit code 1.
fn failed(progress: &mut CliProgress, err: FlowError) -> anyhow::Result<ExitCode> {
    progress.fail();
    eprint!("{}", err.report());
    Ok(ExitCode::FAILURE)
}

/// Prints a flow's result, or its error.
fn done(progress: &mut CliProgress, r: Result<String, FlowError>) -> anyhow::Result<ExitCode> {
    match r {
        Ok(summary) => {
            print(&summary)?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => failed(progress, e),
    }
}

pub async fn install(mut args: InstallArgs) -> anyhow::Result<ExitCode> {
    if let Some(code) = args.publish.unused_without_bundle(args.bundle.as_ref()) {
        return Ok(code);
    }
    if let Some(key) = &args.verify_key {
        let key = image_trust::load_public_key(key)?;
        let opts = args.publish.registry.reading(&args.publish.unpack)?;
        let (catalog, bundle) = (args.catalog.as_deref(), args.bundle.as_deref());
        match image_trust::verify_install(catalog, bundle, args.package.as_deref(), &key, &opts)
            .await
        {
            Ok(verified) => {
                eprint!("{}", image_trust::verified_text(&verified.images));
                // Installed from the digests that verified, not pulled again by tag.
                args.catalog = verified.catalog.or(args.catalog);
                args.bundle = verified.bundle.or(args.bundle);
            }
            Err(e) => {
                eprintln!("error: {e}; nothing was created on the cluster");
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    if args.olm_v1 {
        return install_v1(args).await;
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
    let (approve, opts) = (args.approve, args.cluster.flow_options());
    let out = ops::install(&client, plan, approve, opts, &mut progress).await;
    done(&mut progress, out.map(|o| o.summary()))
}

async fn install_v1(a: InstallArgs) -> anyhow::Result<ExitCode> {
    let package = a.package.unwrap_or_default();
    let inputs = v1_inputs(&package, &a.v1_names, &a.v1_filter, Some(&a.spec));
    let spec = inputs.to_spec(&a.catalog.unwrap_or_default())?;
    let rbac = match &a.bundle_dir {
        Some(dir) => Some(olmv1::rbac_from_bundle(dir, &spec)?),
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
    let opts = a.cluster.flow_options();
    let out = v1flow::install(&client, &spec, rbac.as_ref(), opts, &mut progress).await;
    done(&mut progress, out.map(|o| o.summary()))
}

pub async fn upgrade(args: UpgradeArgs) -> anyhow::Result<ExitCode> {
    if let Some(code) = args.publish.unused_without_bundle(args.bundle.as_ref()) {
        return Ok(code);
    }
    let mut progress = CliProgress::new();
    if args.olm_v1 {
        let mut inputs = v1_inputs(&args.package, &args.v1_names, &args.v1_filter, None);
        inputs.namespace = args.namespace;
        inputs.channel = args.channel;
        let up = inputs.to_upgrade(args.catalog.as_deref())?;
        let client = args.cluster.client().await?;
        let out = v1flow::upgrade(&client, &up, args.cluster.flow_options(), &mut progress).await;
        return done(&mut progress, out.map(|o| o.summary()));
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
    let (package, opts) = (args.package.clone(), args.cluster.flow_options());
    let outcome = ops::upgrade(
        &client,
        args.package,
        args.namespace,
        to,
        opts,
        &mut progress,
    );
    match outcome.await {
        Ok(out) => {
            let (summary, warning) = out.summary(&package);
            print(&summary)?;
            if let Some(w) = warning {
                eprintln!("{w}");
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => failed(&mut progress, e),
    }
}

pub async fn uninstall(args: UninstallArgs) -> anyhow::Result<ExitCode> {
    let client = args.cluster.client().await?;
    let mut progress = CliProgress::new();
    let opts = args.cluster.flow_options();
    if args.olm_v1 {
        let mut inputs = v1_inputs(&args.package, &args.v1_names, &Default::default(), None);
        inputs.namespace = args.namespace;
        let names = inputs.names();
        let headline = format!("Uninstalled ClusterExtension {}.", names.extension);
        let out = v1flow::uninstall(&client, &names, opts, &mut progress).await;
        return done(&mut progress, out.map(|o| o.summary(&headline)));
    }
    let spec = flow::UninstallSpec {
        namespace: args.namespace.unwrap_or_else(|| args.package.clone()),
        package: args.package,
        delete_crds: args.delete_crds,
        delete_operator_group: args.delete_operator_group,
    };
    let headline = format!(
        "Uninstalled {} from namespace {}.",
        spec.package, spec.namespace
    );
    let out = flow::uninstall(&client, &spec, opts, &mut progress).await;
    done(&mut progress, out.map(|o| o.summary(&headline)))
}

pub async fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let client = args.cluster.client().await?;
    let json = matches!(args.output, OutputFormat::Json);
    let (healthy, text) = if args.olm_v1 {
        let extension = args.v1_names.extension_name.unwrap_or(args.package);
        let report = match v1flow::status(&client, &extension).await {
            Ok(r) => r,
            Err(e) => return failed(&mut CliProgress::new(), e),
        };
        let text = match json {
            true => serde_json::to_string_pretty(&report)? + "\n",
            false => report.table(),
        };
        (report.healthy(), text)
    } else {
        let namespace = args.namespace.unwrap_or_else(|| args.package.clone());
        let report = match flow::status(&client, &namespace, &args.package).await {
            Ok(r) => r,
            Err(e) => return failed(&mut CliProgress::new(), e),
        };
        let text = match json {
            true => serde_json::to_string_pretty(&report)? + "\n",
            false => report.table(),
        };
        (report.healthy(), text)
    };
    Ok(super::output::show(&text, !healthy))
}
