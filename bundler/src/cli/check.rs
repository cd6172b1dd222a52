//! `olm check operator|container`: preflight's policies, offline, with every failure's fix.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use olm_bundler::certify::container::Policy;
use olm_bundler::certify::report::Report;
use olm_bundler::ops::check::deploy::{CatalogMode, ClusterSettings};
use olm_bundler::ops::check::{self, ArtifactOptions, CheckError};
use olm_bundler::ops::progress::CliProgress;

use super::args::RegistryArgs;
use super::output::{failure, show, usage};

#[derive(Debug, Subcommand)]
pub enum CheckCommand {
    /// preflight's operator policy on a bundle (directory or image): bundle validation,
    /// scorecard, feature annotations, related images, SCCs, restricted-network readiness,
    /// and with a cluster DeployableByOLM.
    #[command(
        after_help = "Examples:\n  olm check operator bundle/ --offline\n  olm check operator quay.io/org/op-bundle:v0.1.0 --kubeconfig ~/.kube/config --artifacts artifacts --junit"
    )]
    Operator(OperatorArgs),
    /// preflight's container policy on an image (registry or oci:<dir>[:tag]): license,
    /// tag, layers, packages, labels, user, modified files, base image, name.
    #[command(
        after_help = "Examples:\n  olm check container quay.io/org/op:v0.1.0\n  olm check container oci:target/operator:v0.1.0 --policy scratch-nonroot -o json"
    )]
    Container(ContainerArgs),
}

/// What every check command shares.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Print preflight's results.json instead of the summary.
    #[arg(short, long, value_enum, default_value = "text")]
    pub output: Format,
    /// Write preflight's artifacts (results.json, checks.log, ...) into this directory.
    #[arg(long, value_name = "DIR")]
    pub artifacts: Option<PathBuf>,
    /// Also write results-junit.xml into the artifacts directory.
    #[arg(long, requires = "artifacts")]
    pub junit: bool,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct OperatorArgs {
    /// The bundle: a directory, oci:<dir>[:tag], or a registry reference.
    pub bundle: String,
    /// Leave out the checks that need a cluster (DeployableByOLM is then "not run", and the
    /// exit code reflects the checks that ran).
    #[arg(long, conflicts_with_all = ["kubeconfig", "context"])]
    pub offline: bool,
    /// Kubeconfig for DeployableByOLM [default: $KUBECONFIG].
    #[arg(long, env = "KUBECONFIG")]
    pub kubeconfig: Option<PathBuf>,
    #[arg(long)]
    pub context: Option<String>,
    /// The channel DeployableByOLM subscribes to [default: the bundle's default channel].
    #[arg(long)]
    pub channel: Option<String>,
    /// Where to push the one-bundle catalog image [default: the bundle's repository + -index].
    #[arg(long, value_name = "REF")]
    pub index_image: Option<String>,
    /// Serve the catalog from here instead (HOST:PORT the cluster dials; olm listens on
    /// --catalog-listen), as `olm install --catalog-address`.
    #[arg(long, value_name = "HOST:PORT")]
    pub catalog_address: Option<String>,
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:50051")]
    pub catalog_listen: SocketAddr,
    /// How long DeployableByOLM waits for the CSV (preflight: 180s + 180s).
    #[arg(long, default_value = "6m", value_parser = super::args::parse_timeout)]
    pub timeout: Duration,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct ContainerArgs {
    /// The image: a registry reference or oci:<dir>[:tag].
    pub image: String,
    /// The certification project's policy (Red Hat sets it per project).
    #[arg(long, default_value = "container", value_parser = Policy::parse)]
    pub policy: Policy,
    /// One platform of a multi-platform image (OS/ARCH) [default: this machine's].
    #[arg(long, value_parser = |s: &str| s.parse::<olm_bundler::image::model::Platform>())]
    pub platform: Option<olm_bundler::image::model::Platform>,
    /// The repository the image is published to, when checking a layout (container name).
    #[arg(long, value_name = "REPO")]
    pub repository: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

pub async fn run(cmd: CheckCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CheckCommand::Operator(a) => operator(a).await,
        CheckCommand::Container(a) => container(a).await,
    }
}

fn artifacts(c: &CommonArgs) -> ArtifactOptions {
    ArtifactOptions {
        dir: c.artifacts.clone(),
        junit: c.junit,
    }
}

fn finish(r: Result<Report, CheckError>, format: Format, title: &str, offline: bool) -> ExitCode {
    match r {
        Ok(report) => {
            let passed = if offline {
                report.passed_what_ran()
            } else {
                report.passed()
            };
            let text = match format {
                Format::Json => report.to_json(),
                Format::Text => report.to_text(title),
            };
            show(&text, !passed)
        }
        Err(e) if e.is_usage() => usage(e),
        Err(e) => failure(e),
    }
}

async fn operator(a: OperatorArgs) -> anyhow::Result<ExitCode> {
    let catalog = match &a.catalog_address {
        Some(address) => CatalogMode::Serve {
            listen: a.catalog_listen,
            address: address.clone(),
        },
        None => CatalogMode::Image {
            index_image: a.index_image.clone(),
            olm_binary: std::env::current_exe()?,
        },
    };
    let cluster = (!a.offline && a.kubeconfig.is_some()).then(|| ClusterSettings {
        kubeconfig: a.kubeconfig.clone(),
        context: a.context.clone(),
        channel: a.channel.clone(),
        catalog,
        timeout: a.timeout,
    });
    let no_cluster_reason = if a.offline {
        "--offline: needs a cluster with OLM (pass --kubeconfig or set KUBECONFIG to run it)"
    } else {
        "no cluster: pass --kubeconfig or set KUBECONFIG (any Kubernetes with OLM), or --offline to leave it out"
    };
    let req = check::operator::OperatorRequest {
        bundle: a.bundle.clone(),
        registry: a.common.registry.options()?,
        cluster,
        no_cluster_reason: no_cluster_reason.into(),
        artifacts: artifacts(&a.common),
    };
    let mut progress = CliProgress::new();
    let r = check::operator::check(&req, &mut progress).await;
    let title = format!(
        "olm check operator {} (preflight's operator policy)",
        a.bundle
    );
    Ok(finish(r, a.common.output, &title, a.offline))
}

async fn container(a: ContainerArgs) -> anyhow::Result<ExitCode> {
    let req = check::container::ContainerRequest {
        image: a.image.clone(),
        policy: a.policy,
        platform: a.platform,
        repository: a.repository,
        registry: a.common.registry.options()?,
        artifacts: artifacts(&a.common),
    };
    let r = check::container::check(&req).await;
    let title = format!(
        "olm check container {} (preflight's {} policy)",
        a.image,
        a.policy.as_str()
    );
    Ok(finish(r, a.common.output, &title, false))
}
