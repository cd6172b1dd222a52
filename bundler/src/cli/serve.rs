//! `olm catalog serve` (opm serve's flags, on our server: [`olm_bundler::ops::serve`]) and
//! `olm catalog build` (the image that runs it).

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use olm_bundler::ops::image_output;
use olm_bundler::ops::serve::{self as ops, CacheBuilder, HttpApi, ServeRequest, Started};
use olm_bundler::reproducible::source_date_epoch;
use olm_bundler::serve::image::CatalogImage;
use olm_bundler::serve::runtime::server::shutdown_signal;

use super::args::{OutputArgs, RegistryArgs, UnpackArgs};
use super::output::usage;

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
    /// With --cache-scratch: for a server without --http-port (internal, as above).
    #[arg(long, hide = true, requires = "cache_scratch")]
    pub cache_grpc_only: bool,
    /// With --cache-only: CATALOG is an unpacked image and the catalog is at this path in it,
    /// read confined to the image (internal: a server that pulled an image passes it).
    #[arg(long, hide = true, value_name = "PATH", requires = "cache_only")]
    pub confined_configs: Option<String>,
    /// With --cache-only: also render the catalog browser's pages, for this catalog name (the
    /// server's --catalog-name). Without it no pages are rendered; a server started with
    /// --http-port renders them at start-up when they are missing or made for another name.
    #[arg(long, value_name = "NAME", requires = "cache_only")]
    pub cache_site_name: Option<String>,
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
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
}

pub async fn run(a: ServeArgs) -> anyhow::Result<ExitCode> {
    // `--debug` raises the process's log level (see `Cli::verbosity`).
    let termination_log = ops::termination_log(a.termination_log.as_deref());
    let result = serve(a).await;
    if let (Err(e), Some(path)) = (&result, termination_log) {
        ops::write_termination_log(&path, e.as_ref());
    }
    // Usage mistakes exit 1 here, as `opm serve` exits: scripts and pods written for opm
    // read that code.
    result
}

async fn serve(a: ServeArgs) -> anyhow::Result<ExitCode> {
    let req = ServeRequest {
        grpc_addr: SocketAddr::new(a.host, a.port),
        cache_dir: a.cache_dir,
        cache_only: a.cache_only,
        cache_scratch: a.cache_scratch,
        cache_grpc_only: a.cache_grpc_only,
        cache_site_name: a.cache_site_name,
        cache_enforce_integrity: a.cache_enforce_integrity,
        http: a.http_port.map(|port| HttpApi {
            addr: SocketAddr::new(a.host, port),
            catalog_name: a.catalog_name,
            tls: a.tls_cert.zip(a.tls_key),
        }),
        registry: a.registry.reading(&a.unpack)?,
        cache_builder: CacheBuilder::ChildProcess { debug: a.debug },
        catalog: a.catalog,
        confined_configs: a.confined_configs,
    };
    // Listened for before start-up, so a signal between binding and serving is not lost (the
    // scratch handler leaves signals to the server from the moment it listens).
    let shutdown = shutdown_signal();
    // A cache-only run is done once the cache is built (the library logs it).
    if let Started::Listening(server) = ops::start(req).await? {
        server.run(shutdown).await?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `olm catalog build <dir> -t <ref>`.
#[derive(Debug, Args)]
pub struct CatalogBuildArgs {
    /// The file-based catalog directory.
    pub catalog_dir: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
    /// The olm binary to put in the image as /bin/olm (default: this olm). Repeat with olm
    /// built for other architectures for a multi-platform catalog image (one image per
    /// platform, the catalog and its serve cache the same in each).
    #[arg(long, value_name = "PATH")]
    pub olm_binary: Vec<PathBuf>,
    /// An image label KEY=VALUE (repeat for more).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// CA bundle to copy in (default: the host's /etc/ssl/certs/ca-certificates.crt).
    #[arg(long, value_name = "FILE", conflicts_with = "no_ca_certs")]
    pub ca_certs: Option<PathBuf>,
    /// Leave CA certificates out.
    #[arg(long)]
    pub no_ca_certs: bool,
    /// The image also serves catalogd's HTTP API (OLM v1) on this port.
    #[arg(long, value_name = "PORT")]
    pub http_port: Option<u16>,
    /// The catalog's name in the HTTP API's paths (the ClusterCatalog's name) [default:
    /// configs].
    #[arg(long, requires = "http_port")]
    pub catalog_name: Option<String>,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub async fn catalog_build(args: CatalogBuildArgs) -> anyhow::Result<ExitCode> {
    let dest = match args.output.destination() {
        Ok(d) => d,
        Err(msg) => return Ok(usage(msg)),
    };
    let opts = args.registry.options()?;
    let olm_binaries = match args.olm_binary.is_empty() {
        false => args.olm_binary.clone(),
        true => vec![std::env::current_exe().context("finding the running olm binary")?],
    };
    let image = CatalogImage {
        catalog_dir: args.catalog_dir.clone(),
        olm_binaries,
        labels: image_output::parse_labels(&args.labels).map_err(anyhow::Error::msg)?,
        ca_bundle: image_output::ca_bundle(args.ca_certs.as_deref(), args.no_ca_certs),
        created: source_date_epoch()?,
        http_port: args.http_port,
        catalog_name: args.catalog_name,
        site: Some(olm_bundler::ops::catalog_site::bake),
    }
    .build()
    .with_context(|| {
        format!(
            "building the catalog image for {}",
            args.catalog_dir.display()
        )
    })?;
    args.output.deliver(&image, &dest, &opts).await
}
