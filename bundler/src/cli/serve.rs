//! `olm catalog serve`: opm serve's flags and start-up, on our server.

use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use clap::Args;
use olm_bundler::ops::catalog_source;

use olm_bundler::serve::cache::{self, Integrity};
use olm_bundler::serve::{catalogd, server};

const DEFAULT_TERMINATION_LOG: &str = "/dev/termination-log";

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The file-based catalog directory (or single file) to serve, or a catalog image
    /// (registry reference or `oci:DIR[:TAG]`), pulled at start-up.
    pub catalog: PathBuf,
    /// Port to serve the gRPC API on.
    #[arg(short, long, default_value_t = 50051)]
    pub port: u16,
    /// Address to listen on (all interfaces by default, as in a pod).
    #[arg(long, default_value = "0.0.0.0")]
    pub host: IpAddr,
    /// Keep the pre-built index here (and build it when missing or stale). Without it, a
    /// temporary directory is used and removed on exit.
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// Build the cache in --cache-dir and exit (the catalog image build runs this).
    #[arg(long, requires = "cache_dir")]
    pub cache_only: bool,
    /// With --cache-only: the cache is a server's temporary one, not flushed to disk
    /// (internal: the server passes it to the child process that builds its cache).
    #[arg(long, hide = true, requires = "cache_only")]
    pub cache_scratch: bool,
    /// Fail instead of rebuilding when the cache does not match the catalog. Default: true
    /// when --cache-dir is set without --cache-only (a catalog image's cache was built with it).
    #[arg(long, num_args = 0..=1, default_missing_value = "true", value_name = "BOOL")]
    pub cache_enforce_integrity: Option<bool>,
    /// Where a fatal error is written for the kubelet (used when it exists, or when given).
    #[arg(short = 't', long)]
    pub termination_log: Option<PathBuf>,
    /// Also serve catalogd's HTTP API (OLM v1) on this port: `/catalogs/<name>/api/v1/all`
    /// and `/catalogs/<name>/api/v1/metas`, from the same catalog.
    #[arg(long, value_name = "PORT")]
    pub http_port: Option<u16>,
    /// The catalog's name in the HTTP API's paths (a ClusterCatalog's name). Default: the
    /// catalog directory's name, or the image repository's last component.
    #[arg(long, requires = "http_port")]
    pub catalog_name: Option<String>,
    /// Serve the HTTP API over TLS (as catalogd does) with this PEM certificate chain.
    #[arg(long, value_name = "FILE", requires_all = ["http_port", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Debug logging.
    #[arg(long)]
    pub debug: bool,
    /// How to reach the registry when serving a catalog image.
    #[command(flatten)]
    pub registry: super::args::RegistryArgs,
}

pub async fn run(a: ServeArgs) -> anyhow::Result<ExitCode> {
    // `--debug` raises the process's log level (see `Cli::verbosity`).
    let termination_log = termination_log_path(a.termination_log.as_deref());
    let result = serve(a).await;
    if let Err(e) = &result
        && let Some(path) = termination_log
    {
        let mut text = e.to_string();
        for cause in e.chain().skip(1) {
            text.push_str(&format!("\n  caused by: {cause}"));
        }
        if let Err(we) = std::fs::write(&path, text) {
            tracing::warn!(path = %path.display(), error = %we, "cannot write termination log");
        }
    }
    result
}

/// `-t` when given; otherwise the kubelet's file when it exists (opm's default).
fn termination_log_path(flag: Option<&Path>) -> Option<PathBuf> {
    match flag {
        Some(p) => Some(p.to_path_buf()),
        None => {
            let p = Path::new(DEFAULT_TERMINATION_LOG);
            p.exists().then(|| p.to_path_buf())
        }
    }
}

/// A temporary cache directory removed when the server stops.
struct TempCache(PathBuf);

impl Drop for TempCache {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn serve(mut a: ServeArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let enforce = match a.cache_enforce_integrity {
        Some(true) if a.cache_dir.is_none() => {
            bail!("--cache-dir must be specified with --cache-enforce-integrity")
        }
        Some(v) => v,
        None => a.cache_dir.is_some() && !a.cache_only,
    };
    let catalog_name = a
        .catalog_name
        .clone()
        .unwrap_or_else(|| default_catalog_name(&a.catalog));
    // A catalog image is pulled and unpacked for the life of the server; its pre-built cache
    // is used when no --cache-dir is given (rebuilt in place if it does not match).
    let _pulled = if a.catalog.exists() {
        None
    } else {
        let reference = a.catalog.to_string_lossy().into_owned();
        let is_path = reference.starts_with(['/', '.', '~']);
        if is_path || !catalog_source::is_image_ref(&reference) {
            bail!("{reference}: no such catalog directory or file (nor an image reference)");
        }
        let pulled = catalog_source::pull_catalog(&reference, &a.registry.options()?).await?;
        tracing::info!(image = %reference, configs = %pulled.configs.display(), "pulled catalog image");
        a.catalog = pulled.configs.clone();
        if a.cache_dir.is_none() {
            a.cache_dir = pulled.cache.clone();
        }
        Some(pulled)
    };

    if a.cache_only {
        let Some(dir) = &a.cache_dir else {
            bail!("--cache-only requires --cache-dir");
        };
        let catalog = a.catalog.clone();
        let dir2 = dir.clone();
        let durability = if a.cache_scratch {
            cache::Durability::Scratch
        } else {
            cache::Durability::Durable
        };
        let stats = tokio::task::spawn_blocking(move || {
            cache::build_cache_with(&catalog, &dir2, durability)
        })
        .await
        .context("cache build task")?
        .with_context(|| format!("build cache for {}", a.catalog.display()))?;
        tracing::info!(
            cache_dir = %dir.display(),
            digest = %stats.digest,
            packages = stats.packages,
            entries = stats.entries,
            elapsed_ms = stats.millis,
            "cache built"
        );
        return Ok(ExitCode::SUCCESS);
    }

    let (cache_dir, temp) = match &a.cache_dir {
        Some(d) => (d.clone(), None),
        None => {
            let d = std::env::temp_dir().join(format!("olm-serve-cache-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            (d.clone(), Some(TempCache(d)))
        }
    };
    let integrity = if enforce {
        Integrity::Enforce
    } else {
        Integrity::Rebuild
    };

    // Building the cache parses every YAML blob; doing it in a child process keeps the
    // parser's peak memory out of the long-running server, whose RSS is then only the index.
    // (With integrity enforced there is nothing to build: `open` checks and fails instead.)
    let mut built = false;
    if integrity == Integrity::Rebuild {
        // A temporary cache dir is new and empty: nothing to check.
        let fresh = if temp.is_some() {
            false
        } else {
            let catalog = a.catalog.clone();
            let dir = cache_dir.clone();
            tokio::task::spawn_blocking(move || cache::is_fresh(&catalog, &dir))
                .await
                .context("cache check task")?
                .with_context(|| format!("check cache {}", cache_dir.display()))?
        };
        if !fresh {
            tracing::info!(cache_dir = %cache_dir.display(), "building cache");
            build_in_child(&a.catalog, &cache_dir, temp.is_some(), a.debug).await?;
            built = true;
        }
    }
    let catalog = a.catalog.clone();
    let dir = cache_dir.clone();
    let (store, stats) = tokio::task::spawn_blocking(move || {
        if built {
            cache::open_just_built(&dir)
        } else {
            cache::open(&catalog, &dir, integrity)
        }
    })
    .await
    .context("cache load task")?
    .with_context(|| format!("load catalog {}", a.catalog.display()))?;
    let entries = store.entry_count();
    let store = Arc::new(store);

    let addr = SocketAddr::new(a.host, a.port);
    let listener = server::bind(addr).await?;
    let local = listener.local_addr().unwrap_or(addr);
    tracing::info!(
        configs = %a.catalog.display(),
        addr = %local,
        packages = stats.packages,
        bundles = entries,
        cache_rebuilt = built || stats.rebuilt,
        startup_ms = started.elapsed().as_millis() as u64,
        "serving registry"
    );
    if let Some(port) = a.http_port {
        let root = a.catalog.clone();
        let name = catalog_name.clone();
        let content =
            tokio::task::spawn_blocking(move || catalogd::CatalogContent::read(&root, &name))
                .await
                .context("catalogd content task")?
                .with_context(|| format!("prepare catalogd's API for {}", a.catalog.display()))?;
        let http_addr = SocketAddr::new(a.host, port);
        let http = tokio::net::TcpListener::bind(http_addr)
            .await
            .with_context(|| format!("listen on {http_addr} (--http-port)"))?;
        tracing::info!(
            addr = %http.local_addr().unwrap_or(http_addr),
            catalog = %catalog_name,
            bytes = content.len(),
            "serving catalogd's HTTP API at /catalogs/{catalog_name}/api/v1/all"
        );
        let router = catalogd::router(Arc::new(content));
        match (&a.tls_cert, &a.tls_key) {
            (Some(cert), Some(key)) => {
                let config = catalogd::tls_config(cert, key)?;
                tokio::spawn(catalogd::serve_tls(
                    http,
                    router,
                    config,
                    server::shutdown_signal(),
                ));
            }
            _ => {
                tokio::spawn(async move {
                    let served = axum::serve(http, router)
                        .with_graceful_shutdown(server::shutdown_signal())
                        .await;
                    if let Err(e) = served {
                        tracing::error!(error = %e, "catalogd HTTP API stopped");
                    }
                });
            }
        }
    }
    server::serve(store, listener, server::shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(ExitCode::SUCCESS)
}

/// The catalog's name in catalogd's paths when `--catalog-name` is not given: the directory's
/// name, or for an image the repository's last component.
fn default_catalog_name(catalog: &Path) -> String {
    let text = catalog.to_string_lossy();
    let last = text
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default();
    let last = last.split(['@', ':']).next().unwrap_or_default();
    if last.is_empty() {
        "catalog".into()
    } else {
        last.to_lowercase()
    }
}

/// Runs `olm catalog serve <catalog> --cache-dir <dir> --cache-only` as a child process
/// (`--cache-scratch` for a temporary cache).
async fn build_in_child(
    catalog: &Path,
    cache_dir: &Path,
    scratch: bool,
    debug: bool,
) -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("locate the olm executable")?;
    let mut cmd = tokio::process::Command::new(exe);
    cmd.arg("catalog")
        .arg("serve")
        .arg(catalog)
        .arg("--cache-dir")
        .arg(cache_dir)
        .arg("--cache-only")
        // The parent owns the termination log.
        .arg("-t")
        .arg("/dev/null");
    if scratch {
        cmd.arg("--cache-scratch");
    }
    if debug {
        cmd.arg("--debug");
    }
    let status = cmd
        .status()
        .await
        .context("run the cache builder process")?;
    if !status.success() {
        bail!(
            "building the cache for {} failed ({status}); the error is printed above",
            catalog.display()
        );
    }
    Ok(())
}
