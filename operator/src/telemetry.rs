//! Structured logs: JSON in a cluster (one object per line for log collectors), human text on a
//! terminal; level from `RUST_LOG`.

use std::io::IsTerminal;

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// JSON when running in a pod or when stderr is not a terminal, text otherwise.
    Auto,
    Json,
    Text,
}

/// Whether the process runs inside a Kubernetes pod.
pub fn in_cluster() -> bool {
    std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
}

/// Installs the global subscriber. Safe to call more than once (later calls are no-ops).
pub fn init(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,kube=warn,kube_lease_manager=warn"));
    let json = match format {
        LogFormat::Json => true,
        LogFormat::Text => false,
        LogFormat::Auto => in_cluster() || !std::io::stderr().is_terminal(),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .try_init()
    } else {
        builder.try_init()
    };
}
