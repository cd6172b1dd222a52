//! End-to-end leader election on a real cluster (only when `E2E_KUBECONFIG` is set; skips
//! visibly otherwise, CI included: CI has no cluster). Starts two `reverse-words-operator`
//! processes at the same instant on one fresh Lease, checks that exactly one leads and that it is
//! the Lease's holder, kills it (SIGKILL: no release), and checks that the other takes over within
//! lease duration + grace.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kube::{CustomResourceExt, ResourceExt};
use reverse_words_operator::crd::ReverseWordsApp;

const DURATION: u64 = 6;
const GRACE: u64 = 3;

/// A running operator process; killed when dropped.
struct Operator {
    identity: String,
    child: Child,
}

impl Drop for Operator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts one operator; its log lines go to `lines` as (identity, line).
fn start(
    kubeconfig: &std::path::Path,
    namespace: &str,
    lease: &str,
    identity: &str,
    lines: mpsc::Sender<(String, String)>,
) -> Operator {
    let mut child = Command::new(env!("CARGO_BIN_EXE_reverse-words-operator"))
        .args([
            "run",
            "--leader-elect=true",
            "--leader-election-id",
            lease,
            "--leader-election-namespace",
            namespace,
            "--identity",
            identity,
            "--lease-duration",
            &DURATION.to_string(),
            "--lease-renew-grace",
            &GRACE.to_string(),
            "--watch-namespace",
            namespace,
            "--metrics-bind-address",
            "127.0.0.1:0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--log-format",
            "text",
        ])
        .env("KUBECONFIG", kubeconfig)
        .env("RUST_LOG", "info,kube=warn,kube_lease_manager=warn")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start reverse-words-operator");
    let stderr = child.stderr.take().expect("stderr");
    let id = identity.to_string();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[{id}] {line}");
            if lines.send((id.clone(), line)).is_err() {
                return;
            }
        }
    });
    Operator {
        identity: identity.to_string(),
        child,
    }
}

/// Waits for the next "became leader" line within `within`; other lines are skipped.
fn next_leader(lines: &mpsc::Receiver<(String, String)>, within: Duration) -> Option<String> {
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        match lines.recv_timeout(left) {
            Ok((id, line)) if line.contains("became leader") => return Some(id),
            Ok((id, line)) if line.contains("operator stopped") => {
                panic!("{id} stopped: {line}")
            }
            Ok(_) => {}
            Err(_) => return None,
        }
    }
}

async fn client_for(path: &std::path::Path) -> kube::Client {
    reverse_words_operator::install_crypto_provider();
    let kc = kube::config::Kubeconfig::read_from(path).expect("E2E_KUBECONFIG readable");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .expect("E2E_KUBECONFIG usable");
    kube::Client::try_from(cfg).expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_operator_processes_never_both_lead_and_hand_over_when_the_leader_dies() {
    let Some(kubeconfig) = std::env::var_os("E2E_KUBECONFIG").filter(|p| !p.is_empty()) else {
        eprintln!(
            "SKIP leader election e2e: E2E_KUBECONFIG is not set (point it at a kind/k3d/any cluster to run)"
        );
        return;
    };
    let kubeconfig = std::path::PathBuf::from(kubeconfig);
    let namespace = std::env::var("E2E_NAMESPACE").unwrap_or_else(|_| "default".into());
    let client = client_for(&kubeconfig).await;

    // The operator checks that its CRD is served before it campaigns.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = ReverseWordsApp::crd();
    crds.patch(
        &crd.name_any(),
        &PatchParams::apply("reverse-words-e2e").force(),
        &Patch::Apply(&crd),
    )
    .await
    .expect("apply the CRD");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = crds.get(&crd.name_any()).await.expect("read the CRD");
        let established = got
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        if established {
            break;
        }
        assert!(Instant::now() < deadline, "CRD not established within 60 s");
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let lease_name = format!("rw-e2e-lock-{}-{nanos:x}", std::process::id());
    let leases: Api<Lease> = Api::namespaced(client.clone(), &namespace);

    let (tx, lines) = mpsc::channel();
    let mut ops: Vec<Option<Operator>> = ["op-1", "op-2"]
        .iter()
        .map(|id| Some(start(&kubeconfig, &namespace, &lease_name, id, tx.clone())))
        .collect();
    drop(tx);

    let first = next_leader(&lines, Duration::from_secs(60)).expect("a leader within 60 s");
    // The other must not lead while the first lives: watch past two renewals.
    let second = next_leader(&lines, Duration::from_secs(2 * (DURATION - GRACE) + 1));
    assert_eq!(second, None, "{first} and {second:?} both became leader");
    let lease = leases.get(&lease_name).await.expect("the lease exists");
    let holder = lease.spec.and_then(|s| s.holder_identity);
    assert_eq!(
        holder.as_deref(),
        Some(first.as_str()),
        "leader holds the lease"
    );

    // Kill the leader without letting it release the lease.
    let idx = ops
        .iter()
        .position(|o| o.as_ref().is_some_and(|o| o.identity == first))
        .expect("leader process");
    let killed_at = Instant::now();
    drop(ops[idx].take());
    let limit = Duration::from_secs(DURATION + GRACE);
    let next = next_leader(&lines, limit)
        .unwrap_or_else(|| panic!("no takeover within {limit:?} after {first} was killed"));
    assert_ne!(next, first);
    eprintln!(
        "takeover by {next} {:?} after killing {first}",
        killed_at.elapsed()
    );

    drop(ops);
    let _ = leases.delete(&lease_name, &DeleteParams::default()).await;
}
