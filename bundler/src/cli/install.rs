//! `olm install`, `olm upgrade`, `olm uninstall`, `olm status`: the install flows of
//! `olm_bundler::deploy::flow` against the user's kubeconfig, with live progress.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use kube::Client;
use olm_bundler::deploy::flow::{self, FlowError, FlowOptions, Progress};
use olm_bundler::deploy::objects::{
    Approval, CatalogSpec, InstallMode, InstallSpec, Targets, parse_go_duration,
};

/// The flags that decide the OLM objects, shared by `olm install` and `olm deploy generate`.
#[derive(Debug, Clone, Args)]
pub struct SpecArgs {
    /// OLM package to subscribe to (the catalog's `olm.package` name).
    #[arg(long)]
    pub package: String,
    /// Namespace of the CatalogSource, OperatorGroup and Subscription [default: the package name].
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Channel to follow [default: the package's default channel].
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

fn parse_timeout(s: &str) -> Result<Duration, String> {
    parse_go_duration(s)
}

impl SpecArgs {
    /// Resolves defaults and checks the combination.
    pub fn to_spec(&self, catalog_image: &str) -> anyhow::Result<InstallSpec> {
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
                image: catalog_image.to_string(),
                display_name: self
                    .display_name
                    .clone()
                    .unwrap_or_else(|| format!("{package} catalog")),
                publisher: self.publisher.clone(),
                poll_interval: Some(self.poll_interval.clone()),
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

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// Catalog image to serve through a grpc CatalogSource (e.g. quay.io/org/catalog:v1).
    #[arg(long = "catalog", visible_alias = "catalog-image")]
    pub catalog: String,
    #[command(flatten)]
    pub spec: SpecArgs,
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
    #[arg(long = "catalog", visible_alias = "catalog-image")]
    pub catalog: Option<String>,
    /// Switch the Subscription to this channel first.
    #[arg(long)]
    pub channel: Option<String>,
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
    let spec = args.spec.to_spec(&args.catalog)?;
    let client = args.cluster.client().await?;
    let mut progress = CliProgress::new();
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
    let client = args.cluster.client().await?;
    let spec = flow::UpgradeSpec {
        namespace: args.namespace.unwrap_or_else(|| args.package.clone()),
        package: args.package,
        catalog_image: args.catalog,
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
