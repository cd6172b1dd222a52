//! Catalog server benchmarks.
//!
//! Criterion part (`cargo bench -p olm-bundler --bench serve`): in-process start-up from files
//! (parse + validate + index + cache write) and from a cache (digest check + index decode), and
//! single-call latency of GetBundle / a whole ListBundles stream over loopback.
//!
//! Load part (runs after criterion unless `OLM_SERVE_LOAD=0`): starts the release `olm catalog
//! serve` process the way a pod does, measures time to SERVING (from files, and from a
//! pre-built cache) and RSS once serving, then drives it with 1, 10 and 100 concurrent clients
//! and prints throughput and p99 latency as a markdown table (copied into BENCHMARKS.md).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;
use futures::StreamExt;
#[path = "../tests/support/synth.rs"]
mod synth;
use olm_bundler::confined::Tree;
use olm_bundler::serve::index::cache::{self, Integrity};
use olm_bundler::serve::proto::api::{self, registry_client::RegistryClient};
use olm_bundler::serve::runtime::server;
use tonic::transport::{Channel, Endpoint};

const OLM: &str = env!("CARGO_BIN_EXE_olm");

fn shared() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_dir())
}

/// The catalogs measured: each shared catalog root plus synthetic catalogs of opm's shape at
/// scale 1 (28 MB of YAML) and 2 (56 MB, the size of the 55 MB reference).
fn datasets(tmp: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    if let Some(s) = shared() {
        for (repo, ver) in [
            ("community-operators-prod", "v4.20"),
            ("community-operators-prod", "v4.16"),
            ("certified-operators", "v4.20"),
            ("certified-operators", "v4.16"),
        ] {
            let p = s.join("catalogs").join(repo).join("catalogs").join(ver);
            if p.is_dir() {
                out.push((format!("{repo}/{ver}"), p));
            }
        }
    }
    // OLM_SERVE_SETS=shared measures only the shared catalogs.
    let scales: &[usize] = if std::env::var("OLM_SERVE_SETS").as_deref() == Ok("shared") {
        &[]
    } else {
        &[1, 2]
    };
    for &scale in scales {
        let dir = tmp.join(format!("synth-x{scale}"));
        let bytes = synth::write(&dir, &synth::Shape::opm(scale), synth::Syntax::Yaml)
            .expect("write synthetic catalog");
        out.push((
            format!("synthetic x{scale} ({} MB YAML)", bytes / 1_000_000),
            dir,
        ));
    }
    out
}

fn dir_bytes(dir: &Path) -> u64 {
    olm_bundler::catalog::load::catalog_files(&Tree::host(dir))
        .map(|fs| {
            fs.iter()
                .filter_map(|f| std::fs::metadata(&f.path).ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

fn criterion_part(c: &mut Criterion, sets: &[(String, PathBuf)], rt: &tokio::runtime::Runtime) {
    let mut g = c.benchmark_group("serve_startup");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    for (name, dir) in sets
        .iter()
        .filter(|(n, _)| n.contains("v4.20") || n.contains("x1"))
    {
        let cache_dir = tempfile::tempdir().expect("tempdir");
        g.bench_function(format!("from_files/{name}"), |b| {
            b.iter(|| {
                let _ = std::fs::remove_dir_all(cache_dir.path());
                cache::build_cache(&Tree::host(dir), cache_dir.path()).expect("build");
                cache::open(&Tree::host(dir), cache_dir.path(), Integrity::Enforce).expect("open")
            })
        });
        cache::build_cache(&Tree::host(dir), cache_dir.path()).expect("build");
        g.bench_function(format!("from_cache/{name}"), |b| {
            b.iter(|| {
                cache::open(&Tree::host(dir), cache_dir.path(), Integrity::Enforce).expect("open")
            })
        });
    }
    g.finish();

    let mut g = c.benchmark_group("serve_rpc");
    g.sample_size(20).measurement_time(Duration::from_secs(10));
    for (name, dir) in sets
        .iter()
        .filter(|(n, _)| n.contains("v4.20") || n.contains("x1"))
    {
        let cache_dir = tempfile::tempdir().expect("tempdir");
        cache::build_cache(&Tree::host(dir), cache_dir.path()).expect("build");
        let (store, _) =
            cache::open(&Tree::host(dir), cache_dir.path(), Integrity::Enforce).expect("open");
        let keys = keys_of(&store);
        let store = Arc::new(store);
        let (addr, stop) = rt.block_on(start_in_process(store));
        let mut client = rt.block_on(connect(addr));
        g.bench_function(format!("list_bundles_stream/{name}"), |b| {
            b.iter(|| rt.block_on(list_bundles(&mut client)))
        });
        let mut i = 0usize;
        g.bench_function(format!("get_bundle/{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % keys.len();
                rt.block_on(get_bundle(&mut client, &keys[i]))
            })
        });
        let _ = stop.send(());
    }
    g.finish();
}

type Key = (String, String, String);

fn keys_of(store: &olm_bundler::serve::runtime::store::Store) -> Vec<Key> {
    store
        .entries()
        .map(|e| {
            (
                e.package.name.clone(),
                e.channel.name.clone(),
                e.bundle_name().to_string(),
            )
        })
        .collect()
}

async fn start_in_process(
    store: Arc<olm_bundler::serve::runtime::store::Store>,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = server::bind("127.0.0.1:0".parse().expect("addr"))
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = server::serve(store, listener, async {
            let _ = rx.await;
        })
        .await;
    });
    (addr, tx)
}

async fn connect(addr: SocketAddr) -> RegistryClient<Channel> {
    let ch = Endpoint::from_shared(format!("http://{addr}"))
        .expect("endpoint")
        .connect()
        .await
        .expect("connect");
    RegistryClient::new(ch).max_decoding_message_size(64 << 20)
}

async fn list_bundles(c: &mut RegistryClient<Channel>) -> usize {
    let s = c
        .list_bundles(api::ListBundlesRequest {})
        .await
        .expect("ListBundles")
        .into_inner();
    s.fold(0usize, |n, r| async move {
        r.expect("bundle");
        n + 1
    })
    .await
}

async fn get_bundle(c: &mut RegistryClient<Channel>, k: &Key) -> usize {
    c.get_bundle(api::GetBundleRequest {
        pkg_name: k.0.clone(),
        channel_name: k.1.clone(),
        csv_name: k.2.clone(),
    })
    .await
    .expect("GetBundle")
    .into_inner()
    .csv_json
    .len()
}

struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Starts `olm catalog serve` and returns it once the health check says SERVING.
async fn spawn_serving(dir: &Path, cache_dir: Option<&Path>) -> (Proc, SocketAddr, Duration) {
    let port = free_port();
    let mut cmd = Command::new(OLM);
    cmd.args(["catalog", "serve"])
        .arg(dir)
        .args([
            "--host",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-t",
            "/dev/null",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(c) = cache_dir {
        cmd.arg("--cache-dir").arg(c);
    }
    let started = Instant::now();
    let child = Proc(cmd.spawn().expect("spawn olm"));
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
    loop {
        if let Ok(ch) = Endpoint::from_shared(format!("http://{addr}"))
            .expect("endpoint")
            .connect()
            .await
        {
            let mut h = tonic_health::pb::health_client::HealthClient::new(ch);
            if let Ok(r) = h
                .check(tonic_health::pb::HealthCheckRequest {
                    service: String::new(),
                })
                .await
                && r.into_inner().status == 1
            {
                return (child, addr, started.elapsed());
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "never SERVING"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[derive(Clone, Copy)]
enum Rpc {
    ListBundles,
    GetBundle,
}

/// `clients` connections calling `rpc` in a loop for `dur`; returns (calls/s, p99).
async fn load(
    addr: SocketAddr,
    keys: Arc<Vec<Key>>,
    rpc: Rpc,
    clients: usize,
    dur: Duration,
) -> (f64, Duration, usize) {
    let deadline = Instant::now() + dur;
    let mut tasks = Vec::new();
    for w in 0..clients {
        let keys = keys.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = connect(addr).await;
            let mut lat = Vec::new();
            let mut items = 0usize;
            let mut i = w * 7919;
            while Instant::now() < deadline {
                let t = Instant::now();
                match rpc {
                    Rpc::ListBundles => items += list_bundles(&mut c).await,
                    Rpc::GetBundle => {
                        i = (i + 1) % keys.len();
                        get_bundle(&mut c, &keys[i]).await;
                        items += 1;
                    }
                }
                lat.push(t.elapsed());
            }
            (lat, items)
        }));
    }
    let started = Instant::now();
    let mut all = Vec::new();
    let mut items = 0;
    for t in tasks {
        let (l, n) = t.await.expect("client task");
        all.extend(l);
        items += n;
    }
    let secs = started.elapsed().as_secs_f64().max(dur.as_secs_f64());
    all.sort();
    let p99 = all
        .get(((all.len() as f64) * 0.99) as usize)
        .or(all.last())
        .copied()
        .unwrap_or_default();
    (all.len() as f64 / secs, p99, items)
}

fn load_part(sets: &[(String, PathBuf)], rt: &tokio::runtime::Runtime) {
    println!("\n### start-up and memory (release `olm catalog serve` process)\n");
    println!(
        "| catalog | FBC bytes | bundles (entries) | start-up to SERVING, from files | start-up to SERVING, from cache | RSS after start-up (from cache) | RSS (from files) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, dir) in sets {
        rt.block_on(async {
            let (p, _, from_files) = spawn_serving(dir, None).await;
            let rss_files = rss_kb(p.0.id());
            drop(p);
            let cache_dir = tempfile::tempdir().expect("tempdir");
            cache::build_cache(&Tree::host(dir), cache_dir.path()).expect("build cache");
            let (store, _) =
                cache::open(&Tree::host(dir), cache_dir.path(), Integrity::Enforce).expect("open");
            let entries = store.entry_count();
            drop(store);
            // Best of three: the first start pays for cold page cache.
            let mut best = Duration::MAX;
            let mut rss = 0;
            for _ in 0..3 {
                let (p, _, t) = spawn_serving(dir, Some(cache_dir.path())).await;
                best = best.min(t);
                rss = rss_kb(p.0.id());
            }
            println!(
                "| {name} | {} | {entries} | {} ms | {} ms | {:.1} MB | {:.1} MB |",
                dir_bytes(dir),
                from_files.as_millis(),
                best.as_millis(),
                rss as f64 / 1024.0,
                rss_files as f64 / 1024.0,
            );
        });
    }

    println!(
        "\n### throughput and p99 latency (5 s per row, client and server on the same 2 cores)\n"
    );
    println!("| catalog | RPC | clients | calls/s | bundles/s | p99 latency | RSS after load |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (name, dir) in sets
        .iter()
        .filter(|(n, _)| n.contains("v4.20") || n.contains("x"))
    {
        rt.block_on(async {
            let cache_dir = tempfile::tempdir().expect("tempdir");
            cache::build_cache(&Tree::host(dir), cache_dir.path()).expect("build cache");
            let (store, _) =
                cache::open(&Tree::host(dir), cache_dir.path(), Integrity::Enforce).expect("open");
            let keys = Arc::new(keys_of(&store));
            drop(store);
            let (p, addr, _) = spawn_serving(dir, Some(cache_dir.path())).await;
            for rpc in [Rpc::ListBundles, Rpc::GetBundle] {
                for clients in [1usize, 10, 100] {
                    let (cps, p99, items) =
                        load(addr, keys.clone(), rpc, clients, Duration::from_secs(5)).await;
                    println!(
                        "| {name} | {} | {clients} | {cps:.1} | {:.0} | {:.2} ms | {:.1} MB |",
                        match rpc {
                            Rpc::ListBundles => "ListBundles (whole stream)",
                            Rpc::GetBundle => "GetBundle",
                        },
                        items as f64 / 5.0,
                        p99.as_secs_f64() * 1000.0,
                        rss_kb(p.0.id()) as f64 / 1024.0
                    );
                }
            }
        });
    }
}

fn main() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sets = datasets(tmp.path());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut c = Criterion::default().configure_from_args();
    criterion_part(&mut c, &sets, &rt);
    c.final_summary();
    if std::env::var("OLM_SERVE_LOAD").as_deref() != Ok("0") {
        load_part(&sets, &rt);
    }
}
