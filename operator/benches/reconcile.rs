//! Reconciling 1,000 ReverseWordsApps through kube's Client over an in-process fake API
//! (tower-test): measures the operator's own cost per reconcile (building objects, serialising
//! apply patches, status computation), not network or API server time.
//!
//! Run: `cargo bench -p reverse-words-operator --bench reconcile`. Prints reconciles/s and the
//! process's peak RSS (VmHWM) after the run.

#[path = "../tests/support/mock.rs"]
mod mock;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use kube::runtime::events::{Recorder, Reporter};
use reverse_words_operator::crd::{ReverseWordsApp, ReverseWordsAppSpec};
use reverse_words_operator::image::OperandImage;
use reverse_words_operator::metrics::Metrics;
use reverse_words_operator::reconcile::{self, Backoff, Context, FINALIZER};

const CRS: usize = 1000;

fn crs() -> Vec<Arc<ReverseWordsApp>> {
    (0..CRS)
        .map(|i| {
            let mut cr = ReverseWordsApp::new(
                &format!("app-{i}"),
                ReverseWordsAppSpec {
                    replicas: (i % 5) as i32,
                    app_version: Some(format!("v0.0.{}", i % 3)),
                },
            );
            cr.metadata.namespace = Some("bench".into());
            cr.metadata.uid = Some(format!("uid-{i}"));
            cr.metadata.generation = Some(1);
            cr.metadata.finalizers = Some(vec![FINALIZER.into()]);
            Arc::new(cr)
        })
        .collect()
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let crs = crs();
    let ctx = rt.block_on(async {
        let (client, handle) = mock::client();
        tokio::spawn(mock::serve_forever(handle));
        Arc::new(Context {
            recorder: Recorder::new(
                client.clone(),
                Reporter {
                    controller: "bench".into(),
                    instance: None,
                },
            ),
            client,
            image: OperandImage::default(),
            metrics: Arc::new(Metrics::new()),
            backoff: Backoff::default(),
            clock: reconcile::now,
            children: Default::default(),
        })
    });
    let run_all = |ctx: Arc<Context>| {
        let crs = crs.clone();
        async move {
            let mut set = tokio::task::JoinSet::new();
            for cr in crs {
                let ctx = ctx.clone();
                set.spawn(async move { reconcile::reconcile(cr, ctx).await.expect("reconcile") });
            }
            while set.join_next().await.is_some() {}
        }
    };

    let mut g = c.benchmark_group("reconcile");
    g.throughput(Throughput::Elements(CRS as u64));
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    g.bench_function("1000_crs_mock_api", |b| {
        b.to_async(&rt).iter(|| run_all(ctx.clone()))
    });
    g.finish();

    let start = Instant::now();
    rt.block_on(run_all(ctx.clone()));
    let secs = start.elapsed().as_secs_f64();
    println!(
        "reconcile: {CRS} CRs in {secs:.3} s = {:.0} reconciles/s; peak RSS {} KiB",
        CRS as f64 / secs,
        peak_rss_kib()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
