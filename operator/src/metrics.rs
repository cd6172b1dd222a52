//! Prometheus metrics: reconcile counts, failures by error kind, reconcile duration, and process
//! metrics (resident memory, CPU, threads, open files) refreshed from /proc at scrape time.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};

/// Label set of the failure counter.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ErrorLabels {
    pub error: String,
}

/// Process metrics (Linux), refreshed on scrape.
#[derive(Default)]
struct ProcessMetrics {
    resident_memory: Gauge,
    virtual_memory: Gauge,
    cpu_seconds: Gauge<f64, std::sync::atomic::AtomicU64>,
    threads: Gauge,
    open_fds: Gauge,
    start_time: Gauge,
}

/// All metrics of the operator.
pub struct Metrics {
    registry: Registry,
    pub reconciles: Counter,
    pub failures: Family<ErrorLabels, Counter>,
    pub duration: Histogram,
    process: ProcessMetrics,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let reconciles = Counter::default();
        let failures = Family::<ErrorLabels, Counter>::default();
        // 1 ms .. ~16 s
        let duration = Histogram::new(exponential_buckets(0.001, 2.0, 15));
        let ops = registry.sub_registry_with_prefix("reverse_words");
        ops.register("reconcile", "Reconciliations run", reconciles.clone());
        ops.register(
            "reconcile_errors",
            "Reconciliations that failed, by error kind",
            failures.clone(),
        );
        ops.register_with_unit(
            "reconcile_duration",
            "Time spent in a reconciliation",
            Unit::Seconds,
            duration.clone(),
        );

        let process = ProcessMetrics::default();
        let p = registry.sub_registry_with_prefix("process");
        p.register_with_unit(
            "resident_memory",
            "Resident memory size",
            Unit::Bytes,
            process.resident_memory.clone(),
        );
        p.register_with_unit(
            "virtual_memory",
            "Virtual memory size",
            Unit::Bytes,
            process.virtual_memory.clone(),
        );
        p.register_with_unit(
            "cpu",
            "Total user and system CPU time",
            Unit::Seconds,
            process.cpu_seconds.clone(),
        );
        p.register("threads", "Number of OS threads", process.threads.clone());
        p.register(
            "open_fds",
            "Number of open file descriptors",
            process.open_fds.clone(),
        );
        p.register_with_unit(
            "start_time",
            "Start time of the process since the Unix epoch",
            Unit::Seconds,
            process.start_time.clone(),
        );
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        process.start_time.set(i64::try_from(now).unwrap_or(0));

        Self {
            registry,
            reconciles,
            failures,
            duration,
            process,
        }
    }

    /// Starts timing one reconciliation; the duration is recorded when the guard drops.
    pub fn reconcile_started(&self) -> ReconcileTimer<'_> {
        self.reconciles.inc();
        ReconcileTimer {
            metrics: self,
            start: Instant::now(),
        }
    }

    /// Counts a failed reconciliation.
    pub fn reconcile_failed(&self, error_kind: &str) {
        self.failures
            .get_or_create(&ErrorLabels {
                error: error_kind.to_string(),
            })
            .inc();
    }

    /// The OpenMetrics text exposition, with process metrics freshly read.
    pub fn encode(&self) -> String {
        self.refresh_process();
        let mut out = String::new();
        // Encoding into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }

    fn refresh_process(&self) {
        let Some(stat) = read_proc_stat() else { return };
        self.process.resident_memory.set(stat.rss_bytes);
        self.process.virtual_memory.set(stat.vsize_bytes);
        self.process.cpu_seconds.set(stat.cpu_seconds);
        self.process.threads.set(stat.threads);
        if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
            self.process.open_fds.set(fds.count() as i64);
        }
    }
}

/// Records the reconcile duration on drop.
pub struct ReconcileTimer<'a> {
    metrics: &'a Metrics,
    start: Instant,
}

impl Drop for ReconcileTimer<'_> {
    fn drop(&mut self) {
        self.metrics
            .duration
            .observe(self.start.elapsed().as_secs_f64());
    }
}

struct ProcStat {
    rss_bytes: i64,
    vsize_bytes: i64,
    cpu_seconds: f64,
    threads: i64,
}

/// Parses /proc/self/stat (fields after the parenthesised command name, see proc(5)).
fn read_proc_stat() -> Option<ProcStat> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_proc_stat(&text)
}

fn parse_proc_stat(text: &str) -> Option<ProcStat> {
    const CLK_TCK: f64 = 100.0;
    const PAGE: i64 = 4096;
    let rest = &text[text.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // rest starts at field 3 (state); utime=14, stime=15, num_threads=20, vsize=23, rss=24.
    let field = |n: usize| f.get(n - 3).and_then(|s| s.parse::<i64>().ok());
    Some(ProcStat {
        cpu_seconds: (field(14)? + field(15)?) as f64 / CLK_TCK,
        threads: field(20)?,
        vsize_bytes: field(23)?,
        rss_bytes: field(24)? * PAGE,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposition_has_operator_and_process_metrics() {
        let m = Metrics::new();
        {
            let _t = m.reconcile_started();
        }
        m.reconcile_failed("kube");
        let text = m.encode();
        for name in [
            "reverse_words_reconcile_total 1",
            "reverse_words_reconcile_errors_total{error=\"kube\"} 1",
            "reverse_words_reconcile_duration_seconds_count 1",
            "process_resident_memory_bytes",
            "process_cpu_seconds",
            "process_threads",
        ] {
            assert!(text.contains(name), "{name} missing from:\n{text}");
        }
    }

    #[test]
    fn parses_proc_stat_with_spaces_in_comm() {
        let line = "42 (my (odd) name) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 7 0 123 1000000 300 18446744073709551615";
        let s = parse_proc_stat(line).unwrap();
        assert_eq!(s.cpu_seconds, 3.0);
        assert_eq!(s.threads, 7);
        assert_eq!(s.vsize_bytes, 1_000_000);
        assert_eq!(s.rss_bytes, 300 * 4096);
    }
}
