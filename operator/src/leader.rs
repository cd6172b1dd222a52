//! Leader election on a `coordination.k8s.io` Lease, so only one replica reconciles.
//!
//! Built on kube-lease-manager. The operator blocks until it holds the lease, reconciles while it
//! does, and exits when it loses it (client-go's behaviour): the pod restarts and campaigns again,
//! which is simpler and safer than trying to resume with possibly stale caches.

use kube::Client;
use kube_lease_manager::LeaseManagerBuilder;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Lease settings.
#[derive(Debug, Clone)]
pub struct LeaseConfig {
    pub name: String,
    pub namespace: String,
    pub identity: String,
    /// Seconds a lease is valid without renewal.
    pub duration: u64,
    /// Seconds before expiry at which the holder renews.
    pub grace: u64,
}

/// Errors from leader election.
#[derive(Debug, thiserror::Error)]
pub enum LeaderError {
    #[error("cannot set up the leader-election lease {namespace}/{name}: {source}")]
    Setup {
        name: String,
        namespace: String,
        #[source]
        source: kube_lease_manager::LeaseManagerError,
    },
    #[error("lease timing: need 0 < renew grace ({grace}s) < lease duration ({duration}s)")]
    Timing { duration: u64, grace: u64 },
    #[error("the leader-election task stopped")]
    TaskEnded,
}

/// A running campaign: `is_leader` flips to true once the lease is held.
pub struct Campaign {
    pub is_leader: watch::Receiver<bool>,
    pub task: JoinHandle<kube_lease_manager::Result<kube_lease_manager::LeaseManager>>,
}

/// Starts campaigning for the lease.
pub async fn campaign(client: Client, cfg: &LeaseConfig) -> Result<Campaign, LeaderError> {
    // kube-lease-manager panics on inconsistent timings; reject them as a configuration error.
    if cfg.grace == 0 || cfg.grace >= cfg.duration {
        return Err(LeaderError::Timing {
            duration: cfg.duration,
            grace: cfg.grace,
        });
    }
    let manager = LeaseManagerBuilder::new(client, &cfg.name)
        .with_namespace(&cfg.namespace)
        .with_identity(&cfg.identity)
        .with_duration(cfg.duration)
        .with_grace(cfg.grace)
        .with_field_manager(crate::reconcile::FIELD_MANAGER)
        .build()
        .await
        .map_err(|source| LeaderError::Setup {
            name: cfg.name.clone(),
            namespace: cfg.namespace.clone(),
            source,
        })?;
    let (is_leader, task) = manager.watch().await;
    Ok(Campaign { is_leader, task })
}

impl Campaign {
    /// Waits until this instance holds the lease.
    pub async fn acquired(&mut self) -> Result<(), LeaderError> {
        self.is_leader
            .wait_for(|l| *l)
            .await
            .map(|_| ())
            .map_err(|_| LeaderError::TaskEnded)
    }

    /// A future that resolves when leadership is lost (or the campaign task ends).
    pub fn lost(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut rx = self.is_leader.clone();
        async move {
            let _ = rx.wait_for(|l| !*l).await;
        }
    }
}
