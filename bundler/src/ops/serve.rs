//! `olm catalog serve`: start-up as opm serve does it (a catalog directory or image, the
//! cache built when missing or stale, or checked when integrity is enforced), then the gRPC
//! registry API and optionally catalogd's HTTP API until shutdown.
//!
//! [`start`] does everything up to listening and returns a [`Server`] with its bound
//! addresses, so tests drive start-up as a library call on port 0 and stop it with their own
//! shutdown signal.

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use thiserror::Error;
use tokio::net::TcpListener;

use crate::confined::{RelPath, Tree};
use crate::hub::SiteError;
use crate::hub::page::content_security_policy;
use crate::image::registry::RegistryOptions;
use crate::ops::catalog_site;
use crate::ops::catalog_source::{self, CatalogSourceError, PulledCatalog};
use crate::scratch::{self, ScratchDir};
use crate::serve::index::cache::{self, CacheError, Durability, Integrity, LoadStats};
use crate::serve::index::catalogd_content::{self, CatalogdError};
use crate::serve::runtime::catalogd::{self, CatalogContent, TlsError};
use crate::serve::runtime::catalogd_files::ContentError;
use crate::serve::runtime::server::{self, ServeError};
use crate::serve::runtime::store::Store;
use crate::serve::runtime::ui::{UI_DIR, UiFiles};

/// catalogd's HTTP API beside the gRPC one.
#[derive(Debug, Clone)]
pub struct HttpApi {
    pub addr: SocketAddr,
    /// The catalog's name in the paths; default: [`default_catalog_name`].
    pub catalog_name: Option<String>,
    /// PEM certificate chain and key: serve over TLS, as catalogd does.
    pub tls: Option<(PathBuf, PathBuf)>,
}

/// Where the cache is built when it has to be.
#[derive(Debug, Clone)]
pub enum CacheBuilder {
    /// In a child process (this executable, `catalog serve <catalog> --cache-dir D
    /// --cache-only`; looked up only when a build is needed: a catalog pod without /proc
    /// still starts from its pre-built cache), so the parser's peak memory never lands in the
    /// long-running server.
    ChildProcess { debug: bool },
    /// In this process (tests, and callers that do not keep running).
    InProcess,
}

/// What to serve and how, as opm serve's flags say it.
#[derive(Debug, Clone)]
pub struct ServeRequest {
    /// A catalog directory or file, or a catalog image pulled at start-up.
    pub catalog: PathBuf,
    /// With `cache_only`: `catalog` is an unpacked image's root, and the catalog is at this
    /// path inside it (`/configs`), read confined to the root. A server that pulled an image
    /// passes it to the child process that builds its cache.
    pub confined_configs: Option<String>,
    pub grpc_addr: SocketAddr,
    pub cache_dir: Option<PathBuf>,
    /// Build the cache in `cache_dir` and stop.
    pub cache_only: bool,
    /// With `cache_only`: a server's temporary cache, not flushed to disk.
    pub cache_scratch: bool,
    /// With `cache_scratch`: for a server without catalogd's HTTP API (its files not written).
    pub cache_grpc_only: bool,
    /// With `cache_only`: the catalog name the catalog browser's pages are rendered for;
    /// without it no pages are rendered (nor for a gRPC-only cache).
    pub cache_site_name: Option<String>,
    /// Fail rather than rebuild a cache that does not match; default: when `cache_dir` is
    /// set without `cache_only`.
    pub cache_enforce_integrity: Option<bool>,
    pub http: Option<HttpApi>,
    pub registry: RegistryOptions,
    pub cache_builder: CacheBuilder,
}

#[derive(Debug, Error)]
pub enum ServeStartError {
    /// The flags do not fit together, or name nothing to serve (`olm catalog serve` exits 1
    /// with it, as `opm serve` does).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Pull(#[from] CatalogSourceError),
    #[error("build cache for {catalog}")]
    BuildCache {
        catalog: PathBuf,
        #[source]
        source: CacheError,
    },
    #[error("check cache {dir}")]
    CheckCache {
        dir: PathBuf,
        #[source]
        source: CacheError,
    },
    #[error("load catalog {catalog}")]
    Load {
        catalog: PathBuf,
        #[source]
        source: CacheError,
    },
    #[error("building the cache for {catalog} failed ({status}); the error is printed above")]
    Child { catalog: PathBuf, status: String },
    #[error("create the server's temporary cache directory: {0}")]
    TempDir(std::io::Error),
    #[error("run the cache builder process: {0}")]
    Spawn(std::io::Error),
    #[error("prepare catalogd's API for {catalog}")]
    Catalogd {
        catalog: PathBuf,
        #[source]
        source: CatalogdError,
    },
    #[error("open catalogd's content in the cache {dir}")]
    CatalogdContent {
        dir: PathBuf,
        #[source]
        source: ContentError,
    },
    #[error("render the catalog browser into the cache {dir}")]
    Site {
        dir: PathBuf,
        #[source]
        source: SiteError,
    },
    #[error(transparent)]
    Tls(#[from] TlsError),
    #[error("listen on {addr} (--http-port)")]
    HttpBind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("start-up task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// What [`start`] made.
pub enum Started {
    /// `cache_only`: the cache is built.
    CacheBuilt { dir: PathBuf, stats: LoadStats },
    /// Listening; [`Server::run`] serves.
    Listening(Box<Server>),
}

/// A catalog server, bound and ready to serve.
pub struct Server {
    pub grpc_addr: SocketAddr,
    pub http_addr: Option<SocketAddr>,
    pub stats: LoadStats,
    /// The cache was built (or rebuilt) by this start-up.
    pub cache_rebuilt: bool,
    pub entries: usize,
    pub catalog: PathBuf,
    store: Arc<Store>,
    grpc: TcpListener,
    http: Option<(TcpListener, axum::Router, Option<rustls::ServerConfig>)>,
    _pulled: Option<PulledCatalog>,
    /// A temporary cache, removed when the server stops (or on an interrupt before).
    _temp: Option<ScratchDir>,
}

/// The catalog's name in catalogd's paths when none is given: the directory's name, or for
/// an image the repository's last component.
pub fn default_catalog_name(catalog: &Path) -> String {
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

/// Pulls, builds or checks the cache, loads the index and binds the ports.
pub async fn start(mut req: ServeRequest) -> Result<Started, ServeStartError> {
    let started = Instant::now();
    let enforce = match req.cache_enforce_integrity {
        Some(true) if req.cache_dir.is_none() => {
            let msg = "--cache-dir must be specified with --cache-enforce-integrity";
            return Err(ServeStartError::Usage(msg.into()));
        }
        Some(v) => v,
        None => req.cache_dir.is_some() && !req.cache_only,
    };
    let catalog_name = req.http.as_ref().map(|h| {
        h.catalog_name
            .clone()
            .unwrap_or_else(|| default_catalog_name(&req.catalog))
    });
    // What the HTTP API needs is checked before a pull or a cache build, which can take long.
    if let Some(name) = &catalog_name {
        catalogd_content::check_name(name).map_err(|source| ServeStartError::Catalogd {
            catalog: req.catalog.clone(),
            source,
        })?;
    }
    let tls = match req.http.as_ref().and_then(|h| h.tls.as_ref()) {
        Some((cert, key)) => Some(catalogd::tls_config(cert, key)?),
        None => None,
    };
    // A catalog image is pulled and unpacked for the life of the server; its pre-built cache
    // is used when no cache directory is given (rebuilt in place if it does not match).
    let (tree, pulled) = match &req.confined_configs {
        Some(configs) => (confined_catalog(&req.catalog, configs)?, None),
        None => match catalog_source::resolve(&req.catalog, &req.registry).await {
            Err(e @ CatalogSourceError::Missing(_)) => {
                return Err(ServeStartError::Usage(e.to_string()));
            }
            r => r?,
        },
    };
    // How a child process that builds the cache names the catalog.
    let child_args: Vec<std::ffi::OsString> = match &pulled {
        Some(p) => vec![
            p.root.clone().into(),
            "--confined-configs".into(),
            format!("/{}", p.configs_path).into(),
        ],
        None => vec![tree.shown_root().into()],
    };
    let catalog_at = CatalogAt { tree, child_args };
    req.catalog = catalog_at.tree.shown_root();
    // Whether the cache is the image's own: its browser pages are then the image's data.
    let mut image_cache = false;
    if let Some(pulled) = &pulled
        && req.cache_dir.is_none()
    {
        req.cache_dir = pulled.cache.clone();
        image_cache = req.cache_dir.is_some();
    }

    if req.cache_only {
        let Some(dir) = req.cache_dir.clone() else {
            return Err(ServeStartError::Usage(
                "--cache-only requires --cache-dir".into(),
            ));
        };
        let durability = match (req.cache_scratch, req.cache_grpc_only) {
            (true, true) => Durability::ScratchGrpcOnly,
            (true, false) => Durability::Scratch,
            (false, _) => Durability::Durable,
        };
        // As opm's `--cache-only` loads or rebuilds: a cache that matches the catalog is kept
        // (a server whose cache lacks only the browser's pages runs this to render them).
        let (catalog, d) = (catalog_at.tree.clone(), dir.clone());
        let stats = tokio::task::spawn_blocking(move || {
            if cache::cached_digest(&d).is_some() && cache::is_fresh(&catalog, &d)? {
                return cache::open_checked(&d, false).map(|(_, stats)| stats);
            }
            cache::build_cache_with(&catalog, &d, durability)
        })
        .await?
        .map_err(|source| ServeStartError::BuildCache {
            catalog: req.catalog.clone(),
            source,
        })?;
        // Pages only for a server that will show them under a name it gave: a catalog image
        // build without the browser pays neither the time nor the bytes.
        if let Some(name) = req.cache_site_name.clone()
            && durability != Durability::ScratchGrpcOnly
        {
            let d = dir.clone();
            tokio::task::spawn_blocking(move || catalog_site::ensure(&d, &name))
                .await?
                .map_err(|source| ServeStartError::Site {
                    dir: dir.clone(),
                    source,
                })?;
        }
        tracing::info!(
            cache_dir = %dir.display(),
            digest = %stats.digest,
            packages = stats.packages,
            entries = stats.entries,
            elapsed_ms = stats.millis,
            "cache built"
        );
        return Ok(Started::CacheBuilt { dir, stats });
    }

    let (cache_dir, temp) = match &req.cache_dir {
        Some(d) => (d.clone(), None),
        None => {
            // Private and unguessable (`$TMPDIR/olm-serve-cache-XXXXXX`, mode 0700, made
            // exclusively): no other local user can make it first or swap what it serves.
            let d = ScratchDir::named("olm-serve-cache-").map_err(ServeStartError::TempDir)?;
            (d.path().to_path_buf(), Some(d))
        }
    };
    let integrity = if enforce {
        Integrity::Enforce
    } else {
        Integrity::Rebuild
    };
    // With integrity enforced there is nothing to build: `open` checks and fails instead.
    let mut built = false;
    if integrity == Integrity::Rebuild {
        // A temporary cache dir is new and empty: nothing to check.
        let fresh = temp.is_none() && {
            let (catalog, dir) = (catalog_at.tree.clone(), cache_dir.clone());
            tokio::task::spawn_blocking(move || cache::is_fresh(&catalog, &dir))
                .await?
                .map_err(|source| ServeStartError::CheckCache {
                    dir: cache_dir.clone(),
                    source,
                })?
        };
        if !fresh {
            tracing::info!(cache_dir = %cache_dir.display(), "building cache");
            build_cache(
                &req,
                &catalog_at,
                &cache_dir,
                temp.is_some(),
                catalog_name.as_deref(),
            )
            .await?;
            built = true;
        }
    }
    let (catalog, dir) = (catalog_at.tree.clone(), cache_dir.clone());
    let (store, stats) = tokio::task::spawn_blocking(move || match integrity {
        // Just built, or just found fresh: the catalog was hashed once already.
        Integrity::Rebuild => cache::open_checked(&dir, built),
        Integrity::Enforce => cache::open(&catalog, &dir, integrity),
    })
    .await?
    .map_err(|source| ServeStartError::Load {
        catalog: req.catalog.clone(),
        source,
    })?;
    let entries = store.entry_count();

    let grpc = server::bind(req.grpc_addr).await?;
    // From the moment it listens, a signal is the server's `shutdown` (calls drain, then the
    // scratch is dropped), not the scratch handler's.
    scratch::leave_signals_to_caller();
    let grpc_addr = grpc.local_addr().unwrap_or(req.grpc_addr);
    tracing::info!(
        configs = %req.catalog.display(),
        addr = %grpc_addr,
        packages = stats.packages,
        bundles = entries,
        cache_rebuilt = built || stats.rebuilt,
        startup_ms = started.elapsed().as_millis() as u64,
        "serving registry"
    );
    let mut http = None;
    let mut http_addr = None;
    if let (Some(api), Some(name)) = (&req.http, catalog_name) {
        // The content was written by the index build: nothing of the catalog is read here.
        // The browser's pages too, unless the cache predates them or was made for another
        // name: then they are rendered now, from the cache, by the cache builder (a child
        // process, so the rendering's memory never lands in the server). Pages that came in
        // an image are never served, whatever their `site.json` claims: they are removed from
        // the unpacked copy and this olm renders its own.
        if image_cache {
            let ui = cache::content_dir(&cache_dir).join(UI_DIR);
            match std::fs::remove_dir_all(&ui) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    tracing::warn!(dir = %ui.display(), error = %e, "cannot remove the image's own pages");
                }
                _ => {}
            }
        }
        let mut failure = None;
        let (d, n) = (cache_dir.clone(), name.clone());
        if !tokio::task::spawn_blocking(move || catalog_site::is_current(&d, &n)).await? {
            tracing::info!(cache_dir = %cache_dir.display(), "rendering the catalog browser");
            let rendered = match req.cache_builder {
                CacheBuilder::ChildProcess { .. } => {
                    build_cache(&req, &catalog_at, &cache_dir, temp.is_some(), Some(&name)).await
                }
                CacheBuilder::InProcess => {
                    let (d, n) = (cache_dir.clone(), name.clone());
                    tokio::task::spawn_blocking(move || catalog_site::ensure(&d, &n))
                        .await?
                        .map_err(|source| ServeStartError::Site {
                            dir: cache_dir.clone(),
                            source,
                        })
                }
            };
            if let Err(e) = rendered {
                failure = Some(e.to_string());
            }
        }
        // Only pages this olm made for this cache and name, with the binary's own policy.
        let (d, n) = (cache_dir.clone(), name.clone());
        let current = tokio::task::spawn_blocking(move || catalog_site::is_current(&d, &n)).await?;
        let dir = cache::content_dir(&cache_dir);
        let ui = match current {
            true => UiFiles::open(&dir, &content_security_policy()).map(Arc::new),
            false => None,
        };
        if ui.is_none() {
            let why = failure.unwrap_or_else(|| "no pages were rendered".into());
            tracing::warn!(
                error = %why,
                "the catalog browser is off: olm could not render its pages from this cache; catalogd's API is served without it"
            );
        }
        let content = CatalogContent::open(&name, &dir)
            .map_err(|source| ServeStartError::CatalogdContent { dir, source })?;
        let listener =
            TcpListener::bind(api.addr)
                .await
                .map_err(|source| ServeStartError::HttpBind {
                    addr: api.addr,
                    source,
                })?;
        let addr = listener.local_addr().unwrap_or(api.addr);
        tracing::info!(
            addr = %addr,
            catalog = %name,
            bytes = content.len(),
            "serving catalogd's HTTP API at /catalogs/{name}/api/v1/all"
        );
        http_addr = Some(addr);
        if ui.is_some() {
            tracing::info!(addr = %addr, "serving the catalog browser at /");
        }
        http = Some((listener, catalogd::router(Arc::new(content), ui), tls));
    }
    Ok(Started::Listening(Box::new(Server {
        grpc_addr,
        http_addr,
        cache_rebuilt: built || stats.rebuilt,
        stats,
        entries,
        catalog: req.catalog,
        store: Arc::new(store),
        grpc,
        http,
        _pulled: pulled,
        _temp: temp,
    })))
}

impl Server {
    /// Serves until `shutdown` resolves, then drains in-flight calls (the HTTP API stops with
    /// the gRPC server).
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> Result<(), ServeError> {
        let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
        let stopped = move |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        if let Some((listener, router, tls)) = self.http {
            let stop = stopped(stop_rx.clone());
            match tls {
                Some(config) => {
                    tokio::spawn(catalogd::serve_tls(listener, router, config, stop));
                }
                None => {
                    tokio::spawn(async move {
                        let served = axum::serve(listener, router)
                            .with_graceful_shutdown(stop)
                            .await;
                        if let Err(e) = served {
                            tracing::error!(error = %e, "catalogd HTTP API stopped");
                        }
                    });
                }
            }
        }
        let signal = async move {
            shutdown.await;
            let _ = stop_tx.send(true);
        };
        server::serve(self.store, self.grpc, signal).await?;
        drop(self._temp);
        tracing::info!("stopped");
        Ok(())
    }
}

/// The catalog a start-up reads: its tree, and how a child process building the cache names
/// it (`<dir>`, or `<unpacked image> --confined-configs /configs`).
struct CatalogAt {
    tree: Tree,
    child_args: Vec<std::ffi::OsString>,
}

/// The catalog at `configs` inside the unpacked image at `root`, read confined to it.
fn confined_catalog(root: &Path, configs: &str) -> Result<Tree, ServeStartError> {
    let rel = RelPath::in_image(configs)
        .map_err(|why| ServeStartError::Usage(format!("--confined-configs {configs:?}: {why}")))?;
    let tree = Tree::confined(root)
        .map_err(|e| ServeStartError::Usage(format!("{}: cannot open: {e}", root.display())))?;
    Ok(tree.subtree(&rel))
}

/// Builds the cache for `catalog` in `cache_dir` where `req.cache_builder` says (a fresh
/// cache is kept); a child process also renders the browser's pages for `site_name`.
async fn build_cache(
    req: &ServeRequest,
    catalog_at: &CatalogAt,
    cache_dir: &Path,
    scratch: bool,
    site_name: Option<&str>,
) -> Result<(), ServeStartError> {
    let catalog = req.catalog.clone();
    match &req.cache_builder {
        CacheBuilder::InProcess => {
            let dir = cache_dir.to_path_buf();
            let durability = match (scratch, req.http.is_none()) {
                (true, true) => Durability::ScratchGrpcOnly,
                (true, false) => Durability::Scratch,
                (false, _) => Durability::Durable,
            };
            let tree = catalog_at.tree.clone();
            tokio::task::spawn_blocking(move || cache::build_cache_with(&tree, &dir, durability))
                .await?
                .map_err(|source| ServeStartError::BuildCache {
                    catalog: req.catalog.clone(),
                    source,
                })?;
            Ok(())
        }
        CacheBuilder::ChildProcess { debug } => {
            let exe = std::env::current_exe().map_err(ServeStartError::Spawn)?;
            let mut cmd = tokio::process::Command::new(exe);
            cmd.arg("catalog")
                .arg("serve")
                .args(&catalog_at.child_args)
                .arg("--cache-dir")
                .arg(cache_dir)
                .arg("--cache-only")
                // The parent owns the termination log.
                .arg("-t")
                .arg("/dev/null");
            if scratch {
                cmd.arg("--cache-scratch");
                // A temporary cache for gRPC alone: catalogd's files would go unread.
                if req.http.is_none() {
                    cmd.arg("--cache-grpc-only");
                }
            }
            if let Some(name) = site_name {
                cmd.arg("--cache-site-name").arg(name);
            }
            if *debug {
                cmd.arg("--debug");
            }
            let status = cmd.status().await.map_err(ServeStartError::Spawn)?;
            if !status.success() {
                return Err(ServeStartError::Child {
                    catalog,
                    status: status.to_string(),
                });
            }
            Ok(())
        }
    }
}

/// Writes a fatal error and its causes, one per line, where the kubelet reads it; a failure
/// to write is only logged (the error itself is reported anyway).
pub fn write_termination_log(path: &Path, err: &(dyn std::error::Error + 'static)) {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        text.push_str(&format!("\n  caused by: {c}"));
        cause = c.source();
    }
    if let Err(we) = std::fs::write(path, text) {
        tracing::warn!(path = %path.display(), error = %we, "cannot write termination log");
    }
}

/// Where a fatal start-up error is written for the kubelet: `flag` when given, else the
/// kubelet's `/dev/termination-log` when it exists (opm's default).
pub fn termination_log(flag: Option<&Path>) -> Option<PathBuf> {
    match flag {
        Some(p) => Some(p.to_path_buf()),
        None => {
            let p = Path::new("/dev/termination-log");
            p.exists().then(|| p.to_path_buf())
        }
    }
}
