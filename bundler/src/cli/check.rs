//! `olm check operator|container`: preflight's policies, offline, with every failure's fix.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use olm_bundler::certify::container::Policy;
use olm_bundler::certify::report::Report;
use olm_bundler::image::model::Platform;
use olm_bundler::ops::check::deploy::{CatalogMode, ClusterSettings};
use olm_bundler::ops::check::{ArtifactOptions, CheckError, container, operator};

use super::args::{ClusterArgs, RegistryArgs, UnpackArgs};
use super::output::{failure, show, usage};

#[derive(Debug, Subcommand)]
pub enum CheckCommand {
    /// preflight's operator policy on a bundle (directory or image); DeployableByOLM needs a
    /// cluster (--kubeconfig or KUBECONFIG).
    #[command(
        after_help = "Examples:\n  olm check operator bundle/ --offline\n  olm check operator quay.io/org/op-bundle:v0.1.0 --kubeconfig ~/.kube/config --artifacts artifacts --junit"
    )]
    Operator(OperatorArgs),
    /// preflight's container policy on an image (registry or oci:<dir>[:tag]).
    #[command(
        after_help = "Examples:\n  olm check container quay.io/org/op:v0.1.0\n  olm check container oci:target/operator:v0.1.0 --policy scratch-nonroot --json"
    )]
    Container(ContainerArgs),
}

/// What both commands share.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Print preflight's results.json instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// Write preflight's artifacts (results.json, checks.log, ...) into this directory.
    #[arg(long, value_name = "DIR")]
    pub artifacts: Option<PathBuf>,
    /// Also write results-junit.xml there.
    #[arg(long, requires = "artifacts")]
    pub junit: bool,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
}

#[derive(Debug, Args)]
pub struct OperatorArgs {
    /// A bundle directory, oci:<dir>[:tag], or a registry reference.
    pub bundle: String,
    /// Leave out DeployableByOLM (reported as not run; the exit code counts what ran).
    #[arg(long, conflicts_with_all = ["kubeconfig", "context"])]
    pub offline: bool,
    /// DeployableByOLM's channel [default: the bundle's default channel].
    #[arg(long)]
    pub channel: Option<String>,
    /// Where to push the one-bundle catalog image [default: the bundle's repository + -index].
    #[arg(long, value_name = "REF")]
    pub index_image: Option<String>,
    /// Serve the catalog from this machine instead, at HOST:PORT as the cluster dials it.
    #[arg(long, value_name = "HOST:PORT")]
    pub catalog_address: Option<String>,
    #[command(flatten)]
    pub cluster: ClusterArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Args)]
pub struct ContainerArgs {
    /// A registry reference or oci:<dir>[:tag].
    pub image: String,
    /// The certification project's policy: container, root, scratch-nonroot, scratch-root.
    #[arg(long, default_value = "container", value_parser = Policy::parse)]
    pub policy: Policy,
    /// One platform of a multi-platform image (OS/ARCH) [default: this machine's].
    #[arg(long, value_parser = |s: &str| s.parse::<Platform>())]
    pub platform: Option<Platform>,
    /// The repository a layout's image is published to (its last part is the container name).
    #[arg(long, value_name = "REPO")]
    pub repository: Option<String>,
    #[command(flatten)]
    pub common: CommonArgs,
}

pub async fn run(cmd: CheckCommand) -> anyhow::Result<ExitCode> {
    let (r, c, title, offline) = match cmd {
        CheckCommand::Operator(a) => {
            let kubeconfig = a
                .cluster
                .kubeconfig
                .clone()
                .or_else(|| std::env::var_os("KUBECONFIG").map(PathBuf::from));
            let catalog = match a.catalog_address.clone() {
                Some(address) => CatalogMode::serving(&address).map_err(anyhow::Error::msg)?,
                None => CatalogMode::Image {
                    index_image: a.index_image.clone(),
                    olm_binary: std::env::current_exe()?,
                },
            };
            let cluster = (!a.offline && kubeconfig.is_some()).then(|| ClusterSettings {
                kubeconfig,
                context: a.cluster.context.clone(),
                channel: a.channel.clone(),
                catalog,
                timeout: a.cluster.timeout,
            });
            let req = operator::OperatorRequest {
                no_cluster_reason: operator::no_cluster_reason(a.offline),
                bundle: a.bundle.clone(),
                registry: a.common.registry.reading(&a.common.unpack)?,
                cluster,
                artifacts: artifacts(&a.common),
            };
            let mut progress = olm_bundler::ops::progress::CliProgress::new();
            let r = operator::check(&req, &mut progress).await;
            (
                r,
                a.common,
                format!(
                    "olm check operator {} (preflight's operator policy)",
                    a.bundle
                ),
                a.offline,
            )
        }
        CheckCommand::Container(a) => {
            let req = container::ContainerRequest {
                image: a.image.clone(),
                policy: a.policy,
                platform: a.platform,
                repository: a.repository,
                registry: a.common.registry.reading(&a.common.unpack)?,
                artifacts: artifacts(&a.common),
            };
            let title = format!(
                "olm check container {} (preflight's {} policy)",
                a.image,
                a.policy.as_str()
            );
            (container::check(&req).await, a.common, title, false)
        }
    };
    Ok(finish(r, c.json, &title, offline))
}

fn artifacts(c: &CommonArgs) -> ArtifactOptions {
    ArtifactOptions {
        dir: c.artifacts.clone(),
        junit: c.junit,
    }
}

/// The summary or results.json; exit 1 unless it passed (with --offline: what ran passed).
fn finish(r: Result<Report, CheckError>, json: bool, title: &str, offline: bool) -> ExitCode {
    match r {
        Ok(report) => {
            let passed = if offline {
                report.passed_what_ran()
            } else {
                report.passed()
            };
            show(
                &if json {
                    report.to_json()
                } else {
                    report.to_text(title)
                },
                !passed,
            )
        }
        Err(e) if e.is_usage() => usage(e),
        Err(e) => failure(e),
    }
}
