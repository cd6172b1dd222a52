//! `olm install`, `olm upgrade`, `olm uninstall`, `olm status`: the install flows of
//! `olm_bundler::deploy::flow` against the user's kubeconfig, with live progress.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use kube::Client;
use olm_bundler::deploy::bundle_catalog::CatalogBuild;
use olm_bundler::deploy::bundle_flow::{self, BundleInstall, BundleUpgrade};
use olm_bundler::deploy::flow::{self, FlowError, FlowOptions, Progress};
use olm_bundler::deploy::objects::{
    Approval, CatalogAddress, CatalogServing, CatalogSpec, InstallMode, InstallSpec, Targets,
    parse_go_duration,
};

/// The flags that decide the OLM objects, shared by `olm install` and `olm deploy generate`.
#[derive(Debug, Clone, Args)]
pub struct SpecArgs {
    /// OLM package to subscribe to. Not a flag here: each command declares `--package` itself
    /// (`olm install --bundle` learns it from the bundle) and fills this in.
    #[arg(skip)]
    pub package: String,
    /// Namespace of the CatalogSource, OperatorGroup and Subscription [default: the package name].
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Channel to follow [default: the package's default channel; with --bundle, the bundle's
    /// default channel, which the built catalog publishes it in].
    #[arg(long)]
    pub channel: Option<String>,
    /// Namespaces the operator watches: own (its namespace), single, multi, all.
    #[arg(long, default_value = "own", value_parser = parse_mode)]
    pub install_mode: InstallMode,
    /// Target namespaces for --install-mode single|multi (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub target_namespaces: Vec<String>,
    /// installPlanApproval of the Subscription: Automatic or Manual.
    #[arg(long, default_value = "Automatic", value_parser = parse_approval)]
    pub approval: Approval,
    /// CSV to start from instead of the channel head (e.g. to upgrade later).
    #[arg(long)]
    pub starting_csv: Option<String>,
    /// Name of the CatalogSource [default: <package>-catalog].
    #[arg(long)]
    pub catalog_name: Option<String>,
    /// Display name of the CatalogSource [default: "<package> catalog"].
    #[arg(long)]
    pub display_name: Option<String>,
    /// Publisher shown for the CatalogSource.
    #[arg(long)]
    pub publisher: Option<String>,
    /// How often OLM polls the catalog image for a new digest (Go duration).
    #[arg(long, default_value = "10m")]
    pub poll_interval: String,
    /// Name of the OperatorGroup to create when the namespace has none [default: <package>-og].
    #[arg(long)]
    pub operator_group_name: Option<String>,
}

fn parse_mode(s: &str) -> Result<InstallMode, String> {
    InstallMode::parse(s).map_err(|e| e.message)
}

fn parse_approval(s: &str) -> Result<Approval, String> {
    Approval::parse(s).map_err(|e| e.message)
}

fn parse_address(s: &str) -> Result<CatalogAddress, String> {
    CatalogAddress::parse(s).map_err(|e| e.message)
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    parse_go_duration(s)
}

impl SpecArgs {
    /// A copy naming `package`.
    pub fn with_package(&self, package: &str) -> SpecArgs {
        SpecArgs {
            package: package.to_string(),
            ..self.clone()
        }
    }

    /// Resolves defaults and checks the combination, for a catalog served from an image.
    pub fn to_spec(&self, catalog_image: &str) -> anyhow::Result<InstallSpec> {
        self.to_spec_serving(CatalogServing::Image {
            image: catalog_image.to_string(),
            poll_interval: Some(self.poll_interval.clone()),
        })
    }

    /// Resolves defaults and checks the combination.
    pub fn to_spec_serving(&self, serving: CatalogServing) -> anyhow::Result<InstallSpec> {
        let package = self.package.clone();
        let namespace = self.namespace.clone().unwrap_or_else(|| package.clone());
        let targets = Targets::resolve(self.install_mode, &namespace, &self.target_namespaces)?;
        let spec = InstallSpec {
            channel: self.channel.clone(),
            starting_csv: self.starting_csv.clone(),
            approval: self.approval,
            mode: self.install_mode,
            targets,
            catalog: CatalogSpec {
                name: self
                    .catalog_name
                    .clone()
                    .unwrap_or_else(|| format!("{package}-catalog")),
                serving,
                display_name: self
                    .display_name
                    .clone()
                    .unwrap_or_else(|| format!("{package} catalog")),
                publisher: self.publisher.clone(),
            },
            operator_group_name: self
                .operator_group_name
                .clone()
                .unwrap_or_else(|| format!("{package}-og")),
            namespace,
            package,
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// Which cluster, and how long to wait.
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// Kubeconfig file [default: $KUBECONFIG, then ~/.kube/config, then in-cluster].
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context [default: the current context].
    #[arg(long)]
    pub context: Option<String>,
    /// Give up after this long (Go duration: 90s, 5m, 1h).
    #[arg(long, default_value = "5m", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// How often to poll the cluster while waiting.
    #[arg(long, default_value = "2s", value_parser = parse_timeout, hide = true)]
    pub poll: Duration,
}

impl ClusterArgs {
    async fn client(&self) -> anyhow::Result<Client> {
        Ok(olm_bundler::deploy::cluster::client(
            self.kubeconfig.as_deref(),
            self.context.as_deref(),
        )
        .await?)
    }

    fn flow_options(&self) -> FlowOptions {
        FlowOptions {
            timeout: self.timeout,
            interval: self.poll.max(Duration::from_millis(100)),
        }
    }
}

/// How `--bundle` publishes the catalog it builds: shared by `olm install` and `olm upgrade`.
#[derive(Debug, Clone, Args)]
pub struct PublishArgs {
    /// Where to push the catalog image built for --bundle; a reference without a tag gets the
    /// CSV name as tag [default: the bundle's repository with `-index` appended, tagged with
    /// the CSV name]. The cluster must be able to pull it.
    #[arg(long, value_name = "REF")]
    pub index_image: Option<String>,
    /// The olm binary the catalog image serves the catalog with (Linux, for the cluster's
    /// architecture) [default: this olm].
    #[arg(long, value_name = "PATH")]
    pub olm_binary: Option<PathBuf>,
    #[command(flatten)]
    pub registry: super::image::RegistryArgs,
}

impl PublishArgs {
    /// `--index-image`/`--olm-binary` without `--bundle` is a usage mistake (exit 2): nothing
    /// would be built.
    fn unused_without_bundle(&self, bundle: Option<&String>) -> Option<ExitCode> {
        let flag = match (&self.index_image, &self.olm_binary) {
            (Some(_), _) => "--index-image",
            (None, Some(_)) => "--olm-binary",
            (None, None) => return None,
        };
        if bundle.is_some() {
            return None;
        }
        eprintln!(
            "error: {flag} applies only with --bundle (it names how the bundle's catalog is built)"
        );
        Some(ExitCode::from(2))
    }

    /// The catalog image build of `olm catalog build` (host CA bundle when present,
    /// SOURCE_DATE_EPOCH) and the registry options of `olm image push`.
    fn catalog_build(&self) -> anyhow::Result<CatalogBuild> {
        let mut registry = self.registry.options()?;
        // The step spinners already show the push; per-blob bars would fight with them.
        registry.progress = false;
        let olm_binary = match &self.olm_binary {
            Some(p) => p.clone(),
            None => std::env::current_exe().context("finding the running olm binary")?,
        };
        let host_ca = PathBuf::from(olm_bundler::image::rootfs::HOST_CA_BUNDLE);
        Ok(CatalogBuild {
            olm_binary,
            ca_bundle: host_ca.is_file().then_some(host_ca),
            created: olm_bundler::reproducible::source_date_epoch()?,
            labels: Default::default(),
            registry,
        })
    }
}

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
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

/// Progress on stderr: a spinner per step on a terminal, one line per change otherwise
/// (CI logs, pipes).
struct CliProgress {
    bar: Option<ProgressBar>,
    tty: bool,
    title: String,
}

impl CliProgress {
    fn new() -> Self {
        Self {
            bar: None,
            tty: std::io::stderr().is_terminal(),
            title: String::new(),
        }
    }

    fn fail(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.abandon_with_message(format!("✗ {}", self.title));
        }
    }
}

impl Progress for CliProgress {
    fn step(&mut self, title: &str) {
        self.title = title.to_string();
        if self.tty {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar.set_message(title.to_string());
            self.bar = Some(bar);
        } else {
            eprintln!("==> {title}");
        }
    }

    fn update(&mut self, state: &str) {
        match &self.bar {
            Some(bar) => bar.set_message(format!("{}: {state}", self.title)),
            None => eprintln!("    {state}"),
        }
    }

    fn done(&mut self, summary: &str) {
        match self.bar.take() {
            Some(bar) => bar.finish_with_message(format!("✓ {}: {summary}", self.title)),
            None => eprintln!("    {summary}"),
        }
    }
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
    // Check the flags before reaching the cluster, and both before building anything. With
    // --bundle and no --package the package is not known yet: the check uses a stand-in name
    // (it only feeds defaults, never what the user typed).
    let spec_args = args
        .spec
        .with_package(args.package.as_deref().unwrap_or("bundle-package"));
    let checked = match (&args.bundle, &args.catalog, &args.catalog_address) {
        (Some(image), _, _) | (None, Some(image), _) => spec_args.to_spec(image)?,
        (None, None, Some(address)) => {
            spec_args.to_spec_serving(CatalogServing::Address(address.clone()))?
        }
        // clap requires one of them.
        (None, None, None) => anyhow::bail!(
            "pass --catalog <image> or --catalog-address <host:port> with --package <name>, \
             or --bundle <image>"
        ),
    };
    let client = args.cluster.client().await?;
    let spec = match (&args.bundle, &args.package) {
        (Some(bundle), package) => {
            // Quietly: the install below shows this step once OLM is known to be there.
            if let Err(e) = flow::check_olm(&client).await {
                return report_flow_error(&mut progress, e);
            }
            let req = BundleInstall {
                bundle_image: bundle.clone(),
                index_image: args.publish.index_image.clone(),
                channel: args.spec.channel.clone(),
                package: package.clone(),
                build: args.publish.catalog_build()?,
            };
            let prepared = match bundle_flow::prepare_install(&req, &mut progress).await {
                Ok(p) => p,
                Err(e) => return report_flow_error(&mut progress, e),
            };
            let mut spec = args
                .spec
                .with_package(&prepared.package)
                .to_spec(&prepared.catalog_image)?;
            spec.channel = Some(prepared.channel.clone());
            if spec.starting_csv.is_none() {
                spec.starting_csv = Some(prepared.csv.clone());
            }
            spec
        }
        (None, Some(_)) => checked,
        // clap requires --package unless --bundle is given.
        (None, None) => anyhow::bail!("pass --package <name> with --catalog or --catalog-address"),
    };
    match flow::install(
        &client,
        &spec,
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
    if let Some(bundle) = &args.bundle {
        return upgrade_bundle(&args, bundle).await;
    }
    let client = args.cluster.client().await?;
    let spec = flow::UpgradeSpec {
        namespace: args.namespace.unwrap_or_else(|| args.package.clone()),
        package: args.package,
        catalog: match (args.catalog, args.catalog_address) {
            (Some(image), _) => Some(flow::CatalogTarget::Image(image)),
            (None, Some(address)) => Some(flow::CatalogTarget::Address(address)),
            (None, None) => None,
        },
        channel: args.channel,
    };
    let mut progress = CliProgress::new();
    match flow::upgrade(&client, &spec, args.cluster.flow_options(), &mut progress).await {
        Ok(out) => {
            match &out.install_plan {
                None => println!(
                    "{} is at the latest version its catalog offers: {}.",
                    spec.package, out.from
                ),
                Some(ip) => println!(
                    "Upgraded {} from {} to {} (InstallPlan {ip}).",
                    spec.package, out.from, out.to
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => report_flow_error(&mut progress, e),
    }
}

async fn upgrade_bundle(args: &UpgradeArgs, bundle: &str) -> anyhow::Result<ExitCode> {
    let client = args.cluster.client().await?;
    let req = BundleUpgrade {
        namespace: args
            .namespace
            .clone()
            .unwrap_or_else(|| args.package.clone()),
        package: args.package.clone(),
        bundle_image: bundle.to_string(),
        index_image: args.publish.index_image.clone(),
        build: args.publish.catalog_build()?,
    };
    let mut progress = CliProgress::new();
    match bundle_flow::upgrade_bundle(&client, &req, args.cluster.flow_options(), &mut progress)
        .await
    {
        Ok(out) => {
            println!(
                "Upgraded {} from {} to {} (InstallPlan {}; CatalogSource {} now serves {}).",
                req.package,
                out.from,
                out.to,
                out.install_plan,
                out.catalog_source,
                out.catalog_image
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
