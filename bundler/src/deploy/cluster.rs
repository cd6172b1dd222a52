//! Connecting to the user's cluster from a kubeconfig.

use std::path::{Path, PathBuf};

use kube::Client;
use kube::config::{Config, KubeConfigOptions, Kubeconfig};

/// Why no client could be made; names the kubeconfig or context.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("{path}: cannot read kubeconfig: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("{origin}: unusable kubeconfig: {source}")]
    Config {
        origin: String,
        #[source]
        source: kube::config::KubeconfigError,
    },
    #[error("no cluster configured: set KUBECONFIG or pass --kubeconfig ({source})")]
    Infer {
        #[source]
        source: kube::config::InferConfigError,
    },
    #[error("cannot create a Kubernetes client: {0}")]
    Client(#[source] kube::Error),
}

/// Builds a client from `kubeconfig` (or `$KUBECONFIG`, `~/.kube/config`, in-cluster) and an
/// optional context.
///
/// Installs rustls' ring provider as the process default first: the binary links both ring
/// (kube) and aws-lc-rs (reqwest, for registries), and rustls panics rather than pick one when
/// kube asks for the default.
pub async fn client(
    kubeconfig: Option<&Path>,
    context: Option<&str>,
) -> Result<Client, ClusterError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let options = KubeConfigOptions {
        context: context.map(str::to_string),
        ..Default::default()
    };
    let config = match (kubeconfig, context) {
        (Some(path), _) => {
            let kc = Kubeconfig::read_from(path).map_err(|source| ClusterError::Read {
                path: path.to_path_buf(),
                source,
            })?;
            Config::from_custom_kubeconfig(kc, &options)
                .await
                .map_err(|source| ClusterError::Config {
                    origin: path.display().to_string(),
                    source,
                })?
        }
        (None, Some(ctx)) => {
            Config::from_kubeconfig(&options)
                .await
                .map_err(|source| ClusterError::Config {
                    origin: format!("context {ctx:?}"),
                    source,
                })?
        }
        (None, None) => Config::infer()
            .await
            .map_err(|source| ClusterError::Infer { source })?,
    };
    Client::try_from(config).map_err(ClusterError::Client)
}
