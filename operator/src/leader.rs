//! Leader election on a `coordination.k8s.io` Lease, so only one replica reconciles.
//!
//! Built on kube-lease-manager. The operator blocks until it holds the lease, reconciles while it
//! does, and exits when it loses it (client-go's behaviour): the pod restarts and campaigns again,
//! which is simpler and safer than trying to resume with possibly stale caches.
//!
//! Mutual exclusion comes from server-side-apply field ownership, not from resourceVersion
//! preconditions: kube-lease-manager takes a free lease with a non-forced apply of
//! `spec.holderIdentity` (`LeaseState::lock`, src/state.rs; `force` is commented out in
//! `LeaseState::patch`) and decides "I am the leader" from a GET after its own writes. The API
//! server refuses that apply (409 Conflict) only when the field is owned by a *different* field
//! manager. So every identity must apply under its own manager name ([`lease_field_manager`]):
//! with one shared name the second replica's apply silently overwrote the first's identity, both
//! read back their own name, and the first found out only at its next renewal
//! (duration - grace later).
//!
//! Known limits of kube-lease-manager 0.13 that a field manager cannot fix (tests:
//! operator/tests/leader_election.rs covers the two-replica start and takeover):
//! - A standby that finds the lease expired clears it with an unconditional strategic patch
//!   (`LeaseManager::watcher_step` -> `LeaseState::release(Force)`), even if the GET inside
//!   `release` has just shown a fresh renewal. A holder renewing at the very end of its lease (or
//!   a third replica racing the takeover) can be displaced while it still leads, until its next
//!   renewal.
//! - `LeaseManager::watch` only logs a failed renewal and backs off; it keeps reporting
//!   "leader" past the lease's expiry if the API server stays unreachable.

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

/// Longest field manager name the API server accepts.
const MAX_FIELD_MANAGER_LEN: usize = 128;

/// The server-side-apply field manager a replica uses on the lease: one per identity, so the API
/// server sees competing replicas as different owners and rejects a second acquire with 409.
/// Identities too long for the API's limit are shortened with a hash of the full identity, so
/// distinct identities still get distinct managers.
pub fn lease_field_manager(identity: &str) -> String {
    let full = format!("{}-lease-{identity}", crate::reconcile::FIELD_MANAGER);
    if full.len() <= MAX_FIELD_MANAGER_LEN {
        return full;
    }
    // FNV-1a: stable across builds and platforms (std's hasher is not).
    let hash = identity.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let mut cut = MAX_FIELD_MANAGER_LEN - 17;
    while !full.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}-{hash:016x}", &full[..cut])
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
        .with_field_manager(lease_field_manager(&cfg.identity))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_identity_gets_its_own_field_manager() {
        assert_eq!(
            lease_field_manager("op-1"),
            "reverse-words-operator-lease-op-1"
        );
        assert_ne!(lease_field_manager("op-1"), lease_field_manager("op-2"));
        assert_ne!(
            lease_field_manager("op-1"),
            crate::reconcile::FIELD_MANAGER,
            "must differ from the manager of the operator's other applies"
        );
    }

    #[test]
    fn long_identities_stay_within_the_api_limit_and_distinct() {
        let a = format!("{}a", "x".repeat(300));
        let b = format!("{}b", "x".repeat(300));
        let (ma, mb) = (lease_field_manager(&a), lease_field_manager(&b));
        assert!(ma.len() <= MAX_FIELD_MANAGER_LEN && mb.len() <= MAX_FIELD_MANAGER_LEN);
        assert_ne!(ma, mb);
        let wide = "é".repeat(100);
        assert!(lease_field_manager(&wide).len() <= MAX_FIELD_MANAGER_LEN);
    }
}
