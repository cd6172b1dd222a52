//! `reverse-words-operator`: runs the controller (default), or prints the manifests to run it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use reverse_words_operator::{
    controller, image, leader, manifests, metrics, namespace, reconcile, server, telemetry,
};

#[derive(Debug, Parser)]
#[command(
    name = "reverse-words-operator",
    version,
    about = "Kubernetes operator for ReverseWordsApp (apps.linuxera.org/v1alpha1)"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the operator against the current kubeconfig or in-cluster config (the default).
    Run(RunArgs),
    /// Print (or write to --output) every manifest needed to run the operator.
    Manifests(ManifestArgs),
}

#[derive(Debug, Clone, Args)]
struct RunArgs {
    /// Namespaces to reconcile: empty for all, one name, or a comma-separated list.
    #[arg(long, env = "WATCH_NAMESPACE", default_value = "")]
    watch_namespace: String,
    /// Address of the Prometheus metrics endpoint.
    #[arg(long, env = "METRICS_BIND_ADDRESS", default_value = "0.0.0.0:8080")]
    metrics_bind_address: SocketAddr,
    /// Address of the /healthz and /readyz probes.
    #[arg(
        long,
        env = "HEALTH_PROBE_BIND_ADDRESS",
        default_value = "0.0.0.0:8081"
    )]
    health_probe_bind_address: SocketAddr,
    /// Leader election: on by default in a cluster, off when run locally.
    #[arg(long, env = "LEADER_ELECT", num_args = 0..=1, default_missing_value = "true")]
    leader_elect: Option<bool>,
    /// Name of the leader-election Lease.
    #[arg(
        long,
        env = "LEADER_ELECTION_ID",
        default_value = "reverse-words-operator-lock"
    )]
    leader_election_id: String,
    /// Namespace of the Lease (defaults to the pod's namespace).
    #[arg(long, env = "POD_NAMESPACE")]
    leader_election_namespace: Option<String>,
    /// Seconds a lease is valid without renewal.
    #[arg(long, default_value_t = 15)]
    lease_duration: u64,
    /// Seconds before expiry at which the leader renews.
    #[arg(long, default_value_t = 5)]
    lease_renew_grace: u64,
    /// Identity in the lease (defaults to the pod name, then the host name).
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
    /// Log format.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value = "auto")]
    log_format: telemetry::LogFormat,
}

#[derive(Debug, Args)]
struct ManifestArgs {
    /// Write one file per object into this directory instead of printing a YAML stream.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Namespace the operator runs in.
    #[arg(long, default_value = manifests::DEFAULT_NAMESPACE)]
    namespace: String,
    /// Namespaces the operator reconciles (empty: all, with a ClusterRole; else Roles in each).
    #[arg(long, default_value = "")]
    watch_namespace: String,
    /// Operator image.
    #[arg(long, default_value_t = manifests::default_image())]
    image: String,
    /// Also emit the Namespace object (plain installs; never in an OLM bundle).
    #[arg(long)]
    include_namespace: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Manifests(args)) => manifests_cmd(args),
        Some(Command::Run(args)) => run_cmd(args),
        None => run_cmd(cli.run),
    }
}

fn manifests_cmd(args: ManifestArgs) -> ExitCode {
    let result = (|| -> anyhow::Result<()> {
        let watch = namespace::WatchNamespaces::parse(&args.watch_namespace)?;
        if !namespace::is_dns_label(&args.namespace) {
            anyhow::bail!(
                "--namespace: {:?} is not a valid namespace name",
                args.namespace
            );
        }
        let opts = manifests::Options {
            namespace: args.namespace,
            watch,
            image: args.image,
            include_namespace: args.include_namespace,
        };
        let all = manifests::all(&opts);
        match args.output {
            None => print!("{}", manifests::to_yaml_stream(&all)?),
            Some(dir) => {
                std::fs::create_dir_all(&dir)
                    .map_err(|e| anyhow::anyhow!("{}: cannot create: {e}", dir.display()))?;
                for m in &all {
                    let text = manifests::to_yaml_stream(std::slice::from_ref(m))?;
                    write_atomic(&dir.join(&m.file), text.as_bytes())?;
                }
            }
        }
        Ok(())
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Temp file + rename, so an interrupted run never leaves a half-written manifest.
fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            anyhow::anyhow!("{}: cannot write: {e}", path.display())
        })
}

fn run_cmd(args: RunArgs) -> ExitCode {
    telemetry::init(args.log_format);
    reverse_words_operator::install_crypto_provider();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(args)) {
        Ok(code) => code,
        Err(e) => {
            tracing::error!(error = format!("{e:#}"), "operator stopped");
            ExitCode::FAILURE
        }
    }
}

/// Resolves on SIGTERM or Ctrl-C.
async fn termination() {
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(s) => s,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

async fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let watch = namespace::WatchNamespaces::parse(&args.watch_namespace)?;
    let operand = image::OperandImage::from_override(
        std::env::var(image::RELATED_IMAGE_ENV).ok().as_deref(),
    )?;
    let client = kube::Client::try_default().await.map_err(|e| {
        anyhow::anyhow!("cannot configure the Kubernetes client (kubeconfig or in-cluster): {e}")
    })?;
    tracing::info!(version = env!("CARGO_PKG_VERSION"), watch = %watch, operand = %operand.for_app_version(None), "starting");

    let metrics = Arc::new(metrics::Metrics::new());
    let health = Arc::new(server::Health::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = {
        let rx = stop_rx.clone();
        move || {
            let mut rx = rx.clone();
            async move {
                let _ = rx.wait_for(|s| *s).await;
            }
        }
    };
    let servers = tokio::spawn({
        let (h, m, hs, ms) = (health.clone(), metrics.clone(), stopped(), stopped());
        async move {
            tokio::try_join!(
                server::serve(args.health_probe_bind_address, server::health_router(h), hs),
                server::serve(args.metrics_bind_address, server::metrics_router(m), ms),
            )
        }
    });

    controller::check_crd(&client, &watch).await?;

    let identity = args.identity.clone().unwrap_or_else(|| {
        std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "reverse-words-operator".into())
    });
    let elect = args.leader_elect.unwrap_or_else(telemetry::in_cluster);
    let mut lost_leadership: Option<
        std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>,
    > = None;
    let mut _campaign = None;
    if elect {
        let namespace = args.leader_election_namespace.clone().ok_or_else(|| anyhow::anyhow!("leader election needs the lease namespace: set POD_NAMESPACE or --leader-election-namespace (or --leader-elect=false)"))?;
        let cfg = leader::LeaseConfig {
            name: args.leader_election_id.clone(),
            namespace,
            identity: identity.clone(),
            duration: args.lease_duration,
            grace: args.lease_renew_grace,
        };
        let mut campaign = leader::campaign(client.clone(), &cfg).await?;
        tracing::info!(lease = %cfg.name, namespace = %cfg.namespace, %identity, "waiting to become leader");
        tokio::select! {
            r = campaign.acquired() => r?,
            _ = termination() => {
                let _ = stop_tx.send(true);
                return Ok(ExitCode::SUCCESS);
            }
        }
        tracing::info!("became leader");
        lost_leadership = Some(Box::pin(campaign.lost()));
        _campaign = Some(campaign);
    }

    let ctx = Arc::new(reconcile::Context::new(
        client.clone(),
        operand,
        metrics,
        Some(identity),
    ));
    let shutdown = {
        let tx = stop_tx.clone();
        let stop = stopped();
        async move {
            tokio::select! {
                _ = termination() => tracing::info!("termination signal; draining"),
                _ = stop => {}
            }
            let _ = tx.send(true);
        }
    };
    tokio::spawn(shutdown);
    let lost = Arc::new(std::sync::atomic::AtomicBool::new(false));
    if let Some(fut) = lost_leadership {
        let (tx, lost) = (stop_tx.clone(), lost.clone());
        tokio::spawn(async move {
            fut.await;
            tracing::error!("lost leadership; stopping");
            lost.store(true, std::sync::atomic::Ordering::SeqCst);
            let _ = tx.send(true);
        });
    }
    let stop_future = stopped();
    let shared = futures::FutureExt::shared(stop_future);
    controller::run(client, ctx, &watch, health, shared).await;
    let _ = stop_tx.send(true);
    match servers.await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => anyhow::bail!("HTTP server failed: {e}"),
        Err(e) => anyhow::bail!("HTTP server task failed: {e}"),
    }
    if lost.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(ExitCode::FAILURE);
    }
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}
