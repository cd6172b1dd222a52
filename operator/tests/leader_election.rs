//! Leader election against a fake API server that enforces server-side-apply ownership the way
//! the real one does (support/fake_lease.rs): replicas started at the same instant never both
//! lead, and a standby takes over within lease duration + grace after the leader dies.

#[path = "support/fake_lease.rs"]
mod fake_lease;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake_lease::FakeLeaseServer;
use reverse_words_operator::leader::{self, LeaseConfig};
use tokio::task::JoinHandle;

/// A leadership change seen on a campaign's channel: (when, replica, leads now).
type Timeline = Arc<Mutex<Vec<(Instant, usize, bool)>>>;

fn config(identity: &str, duration: u64, grace: u64) -> LeaseConfig {
    LeaseConfig {
        name: "reverse-words-operator-lock".into(),
        namespace: "ops".into(),
        identity: identity.into(),
        duration,
        grace,
    }
}

/// One replica: its campaign task, the connection carrying its requests, and the task that
/// records its leadership changes.
struct Replica {
    campaign: JoinHandle<kube_lease_manager::Result<kube_lease_manager::LeaseManager>>,
    connection: JoinHandle<()>,
    observer: JoinHandle<()>,
}

impl Replica {
    /// The process dies: no release, no further requests.
    fn kill(&self, id: usize, timeline: &Timeline) {
        // Cut the connection first: dropping the last receiver makes the campaign release the
        // lease gracefully, which a dead process cannot do.
        self.connection.abort();
        self.campaign.abort();
        self.observer.abort();
        timeline.lock().unwrap().push((Instant::now(), id, false));
    }

    fn stop(self) {
        self.connection.abort();
        self.campaign.abort();
        self.observer.abort();
    }
}

/// Starts `count` replicas at the same instant against one server.
async fn start_together(
    server: &FakeLeaseServer,
    count: usize,
    duration: u64,
    grace: u64,
    timeline: &Timeline,
) -> Vec<Replica> {
    let jitter = Duration::from_millis(2);
    start_with(server, count, duration, grace, timeline, jitter, |_| {
        Duration::ZERO
    })
    .await
}

/// Starts `count` replicas at the same instant; replica `i`'s applies arrive `slow_apply(i)` late.
async fn start_with(
    server: &FakeLeaseServer,
    count: usize,
    duration: u64,
    grace: u64,
    timeline: &Timeline,
    jitter: Duration,
    slow_apply: impl Fn(usize) -> Duration,
) -> Vec<Replica> {
    let starts = (0..count).map(|i| {
        let conn = server.connect_with(jitter, slow_apply(i));
        let cfg = config(&format!("op-{}", i + 1), duration, grace);
        async move {
            let campaign = leader::campaign(conn.client, &cfg)
                .await
                .expect("campaign starts");
            (campaign, conn.task)
        }
    });
    let started = futures::future::join_all(starts).await;
    started
        .into_iter()
        .enumerate()
        .map(|(id, (campaign, connection))| {
            let mut rx = campaign.is_leader.clone();
            let timeline = timeline.clone();
            let observer = tokio::spawn(async move {
                let mut last = false;
                loop {
                    let now = *rx.borrow_and_update();
                    if now != last {
                        timeline.lock().unwrap().push((Instant::now(), id, now));
                        last = now;
                    }
                    if rx.changed().await.is_err() {
                        if last {
                            timeline.lock().unwrap().push((Instant::now(), id, false));
                        }
                        return;
                    }
                }
            });
            Replica {
                campaign: campaign.task,
                connection,
                observer,
            }
        })
        .collect()
}

/// The most replicas that led at the same instant, replaying the recorded changes in order.
fn max_concurrent_leaders(timeline: &Timeline) -> usize {
    let mut events = timeline.lock().unwrap().clone();
    events.sort_by_key(|(t, _, leads)| (*t, *leads)); // at a tie, a loss counts first
    let mut leading = std::collections::BTreeSet::new();
    let mut max = 0;
    for (_, id, leads) in events {
        if leads {
            leading.insert(id);
        } else {
            leading.remove(&id);
        }
        max = max.max(leading.len());
    }
    max
}

fn current_leaders(timeline: &Timeline) -> Vec<usize> {
    let events = timeline.lock().unwrap().clone();
    let mut state = std::collections::BTreeMap::new();
    let mut sorted = events;
    sorted.sort_by_key(|(t, _, _)| *t);
    for (_, id, leads) in sorted {
        state.insert(id, leads);
    }
    state
        .into_iter()
        .filter(|(_, l)| *l)
        .map(|(id, _)| id)
        .collect()
}

/// 100 rounds, each two replicas starting together on a fresh lease, run side by side. Each round
/// is watched past the leader's first renewal (duration - grace), where the old shared field
/// manager let a second "leader" run until the first noticed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simultaneous_starts_never_yield_two_leaders() {
    const ROUNDS: usize = 100;
    let (duration, grace) = (3, 1);
    let rounds = (0..ROUNDS).map(|round| async move {
        let server = FakeLeaseServer::new();
        if round % 2 == 0 {
            // A freshly created lease (as in the report); odd rounds race to create it too.
            server.create_empty("ops", "reverse-words-operator-lock");
        }
        let timeline: Timeline = Arc::default();
        let replicas = start_together(&server, 2, duration, grace, &timeline).await;
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let max = max_concurrent_leaders(&timeline);
        let now = current_leaders(&timeline);
        let holder = server.holder();
        let stats = server.stats();
        for r in replicas {
            r.stop();
        }
        (max, now, holder, stats)
    });
    let results = futures::future::join_all(rounds).await;
    let split: Vec<usize> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| r.0 > 1)
        .map(|(i, _)| i)
        .collect();
    let conflicts: usize = results.iter().map(|r| r.3.conflicts).sum();
    let requests: usize = results.iter().map(|r| r.3.requests).sum();
    eprintln!("{ROUNDS} rounds: {requests} lease requests, {conflicts} apply conflicts");
    assert!(
        split.is_empty(),
        "two leaders at once in {} of {ROUNDS} rounds (rounds {split:?})",
        split.len()
    );
    for (i, (_, now, holder, _)) in results.iter().enumerate() {
        assert_eq!(now.len(), 1, "round {i}: exactly one leader, got {now:?}");
        assert_eq!(
            holder.as_deref(),
            Some(format!("op-{}", now[0] + 1).as_str()),
            "round {i}: the leader is the lease holder"
        );
    }
    // Losing replicas were turned away by ownership conflicts (proof the fake enforced it,
    // rather than the race never happening). How many rounds really race depends on the
    // machine's load (24 of 100 on a 2-core machine busy with other tests, 25+ when idle), so
    // the bound asks for a clear share, not a timing-dependent quarter.
    assert!(
        conflicts >= ROUNDS / 10,
        "only {conflicts} apply conflicts in {ROUNDS} rounds"
    );
}

/// The race behind the reported split brain, made certain: both replicas read the fresh lease as
/// free, and the second one's acquire arrives only after the first has written and read back its
/// win. The API server must refuse the late apply (409 Conflict) rather than let it overwrite the
/// holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_acquire_cannot_overwrite_the_holder() {
    const ROUNDS: usize = 10;
    let rounds = (0..ROUNDS).map(|_| async move {
        let server = FakeLeaseServer::new();
        server.create_empty("ops", "reverse-words-operator-lock");
        let timeline: Timeline = Arc::default();
        // Both read the lease as free within a few ms; op-1's apply lands at ~100 ms and it reads
        // back its win right after; op-2's apply lands at ~300 ms.
        let slow = |i: usize| Duration::from_millis(if i == 0 { 100 } else { 300 });
        let replicas = start_with(&server, 2, 3, 1, &timeline, Duration::ZERO, slow).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let max = max_concurrent_leaders(&timeline);
        let now = current_leaders(&timeline);
        let stats = server.stats();
        for r in replicas {
            r.stop();
        }
        (max, now, stats)
    });
    for (i, (max, now, stats)) in futures::future::join_all(rounds)
        .await
        .into_iter()
        .enumerate()
    {
        assert_eq!(max, 1, "round {i}: two leaders at once");
        assert_eq!(now.len(), 1, "round {i}: one leader, got {now:?}");
        assert!(
            stats.conflicts >= 1,
            "round {i}: the late apply was not refused"
        );
    }
}

/// The leader dies without releasing; the standby leads within lease duration + grace of the
/// death, and never while the dead one could still have been leading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standby_takes_over_within_duration_plus_grace_after_the_leader_dies() {
    const ROUNDS: usize = 8;
    let (duration, grace) = (3u64, 2u64);
    let rounds = (0..ROUNDS).map(|_| async move {
        let server = FakeLeaseServer::new();
        let timeline: Timeline = Arc::default();
        let replicas = start_together(&server, 2, duration, grace, &timeline).await;
        let deadline = Instant::now() + Duration::from_secs(5);
        let leader = loop {
            if let [l] = current_leaders(&timeline)[..] {
                break l;
            }
            assert!(Instant::now() < deadline, "no leader within 5 s");
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        // Let it renew at least once, then kill it at an arbitrary point of its renewal cycle.
        tokio::time::sleep(Duration::from_millis(1300)).await;
        let killed_at = Instant::now();
        replicas[leader].kill(leader, &timeline);
        let standby = 1 - leader;
        let limit = Duration::from_secs(duration + grace);
        let took = loop {
            if current_leaders(&timeline) == [standby] {
                break killed_at.elapsed();
            }
            assert!(
                killed_at.elapsed() < limit + Duration::from_secs(2),
                "standby never took over"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let max = max_concurrent_leaders(&timeline);
        let holder = server.holder();
        for r in replicas {
            r.stop();
        }
        (took, limit, max, holder, standby)
    });
    let results = futures::future::join_all(rounds).await;
    let slowest = results.iter().map(|r| r.0).max().unwrap_or_default();
    eprintln!("{ROUNDS} takeovers, slowest {slowest:?} after the kill");
    for (i, (took, limit, max, holder, standby)) in results.into_iter().enumerate() {
        assert!(
            took <= limit,
            "round {i}: takeover took {took:?}, over {limit:?}"
        );
        assert_eq!(max, 1, "round {i}: two leaders at once");
        assert_eq!(holder, Some(format!("op-{}", standby + 1)), "round {i}");
    }
}
