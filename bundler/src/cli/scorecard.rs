//! `olm bundle scorecard DIR|IMAGE`.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, ValueEnum};
use olm_bundler::bundle::scorecard::output;
use olm_bundler::ops::scorecard::{self, ClusterOptions, ScorecardRequest};

use super::args::{RegistryArgs, UnpackArgs};
use super::output::{failure, print, usage};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
    Xunit,
}

/// `olm bundle scorecard <bundle>`.
#[derive(Debug, Args)]
pub struct ScorecardArgs {
    /// The bundle: a directory, or an image (`oci:<dir>[:tag]` or a registry reference).
    pub bundle: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
    /// Label selector over the tests' labels: `suite=olm`, `test=basic-check-spec-test`,
    /// `suite in (olm)`, `!x`.
    #[arg(long, short = 'l', default_value = "")]
    pub selector: String,
    /// A configuration to use instead of the bundle's tests/scorecard/config.yaml.
    #[arg(long, short = 'c')]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = Format::Text)]
    pub output: Format,
    /// Only list the tests that would run.
    #[arg(long, short = 'L')]
    pub list: bool,
    /// Kubeconfig for tests of other images (custom tests, kuttl), which run as pods;
    /// without it (or $KUBECONFIG) they are reported as needing a cluster.
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Namespace for the test pods (default: the kubeconfig context's).
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Service account the test pods run as (the configuration's wins).
    #[arg(long, short = 's', default_value = "default")]
    pub service_account: String,
    /// How long the tests may take in all, as a Go duration (`30s`, `2m`).
    #[arg(long, short = 'w', default_value = "30s")]
    pub wait_time: String,
    /// Leave the test pods and the bundle ConfigMap in the cluster.
    #[arg(long, short = 'x')]
    pub skip_cleanup: bool,
    /// Image of the init container that unpacks the bundle in each test pod.
    #[arg(long, short = 'u', default_value = olm_bundler::deploy::scorecard::DEFAULT_UNTAR_IMAGE)]
    pub untar_image: String,
    /// `restricted` runs the pods non-root with all capabilities dropped; `legacy` as is.
    #[arg(long, default_value = "legacy", value_parser = ["legacy", "restricted"])]
    pub pod_security: String,
}

pub async fn scorecard(args: ScorecardArgs) -> ExitCode {
    let registry = match args.registry.reading(&args.unpack) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let wait: Duration =
        match olm_bundler::grammar::go_duration::parse_non_negative(&args.wait_time) {
            Ok(d) => d,
            Err(e) => return usage(format!("--wait-time {:?}: {e}", args.wait_time)),
        };
    let kubeconfig = args
        .kubeconfig
        .clone()
        .or_else(|| std::env::var_os("KUBECONFIG").map(PathBuf::from));
    let cluster = kubeconfig.is_some().then(|| ClusterOptions {
        kubeconfig,
        namespace: args.namespace.clone(),
        service_account: args.service_account.clone(),
        wait_time: wait,
        skip_cleanup: args.skip_cleanup,
        untar_image: args.untar_image.clone(),
        restricted: args.pod_security == "restricted",
        ..Default::default()
    });
    let req = ScorecardRequest {
        bundle: args.bundle,
        selector: args.selector,
        config: args.config,
        list: args.list,
        registry,
        cluster,
    };
    let out = match scorecard::run(&req).await {
        Ok(o) => o,
        Err(e) if e.is_usage() => return usage(e),
        Err(e) => return failure(e),
    };
    let text = match args.output {
        Format::Text => output::text(&out.list, std::io::stdout().is_terminal()),
        Format::Json => output::json(&out.list),
        Format::Xunit => output::xunit(&out.list),
    };
    if let Err(e) = print(&text) {
        return failure(e);
    }
    if out.timed_out {
        return failure(anyhow::anyhow!(
            "error running tests context deadline exceeded"
        ));
    }
    if let Some(e) = out.cleanup_error {
        return failure(anyhow::anyhow!(e));
    }
    ExitCode::from(u8::from(!args.list && out.list.has_failing_test()))
}
