//! The registry client: the OCI distribution API over HTTP(S), spoken directly.
//!
//! What it adds to plain HTTP, each in one place:
//! - [`client`]: one connection pool per registry, HTTP or HTTPS (plain HTTP only for loopback
//!   registries without TLS, or with `--plain-http`), the CA file, and the auth flow: one
//!   `/v2/` ping learns the registry's challenge, then Basic credentials or Bearer tokens per
//!   scope set (a cross-repository mount needs pull on the source and push on the target in one
//!   token), refreshed once on 401; retries with exponential backoff on 5xx, 429 and dropped
//!   connections;
//! - [`api`]: blobs (HEAD, streaming GET, cross-repository mount, monolithic or chunked
//!   upload from a stream) and manifests (GET, HEAD, PUT of exact bytes);
//! - errors that say what to do (credentials, CA file) without ever showing a secret.

pub mod api;
pub mod client;

use std::path::PathBuf;
use std::time::Duration;

use super::auth::{AuthError, Credentials, Source, Tried};
use super::human_bytes;
use super::model::ModelError;
use super::token::TokenError;

pub use client::RegistryClient;
pub(crate) use client::chain_text;

/// How to reach registries and authenticate.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// `--creds user:pass`; wins over auth files.
    pub creds: Option<Credentials>,
    /// `--authfile`: the only auth file to read instead of the default list.
    pub authfile: Option<PathBuf>,
    /// Speak plain HTTP to any registry (otherwise only to loopback ones without TLS).
    pub plain_http: bool,
    /// A PEM file of extra CA certificates to trust.
    pub ca_file: Option<PathBuf>,
    /// Accept any TLS certificate (self-signed test registries).
    pub insecure_skip_tls_verify: bool,
    /// How many times to retry a failed request (on 5xx and dropped connections).
    pub retries: u32,
    /// The first backoff delay; doubled on each retry.
    pub retry_delay: Duration,
    /// Blobs (and, in a mirror, images) transferred at once.
    pub concurrency: usize,
    /// Draw progress bars (the CLI sets this only when stderr is a terminal and not `--quiet`).
    pub progress: bool,
    /// What one image pulled to a directory may unpack to.
    pub unpack: crate::image::limits::UnpackLimits,
}

/// Parallel blob transfers when no flag says otherwise: containers-image's default.
pub const DEFAULT_CONCURRENCY: usize = 6;

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            creds: None,
            authfile: None,
            plain_http: false,
            ca_file: None,
            insecure_skip_tls_verify: false,
            retries: 4,
            retry_delay: Duration::from_millis(250),
            concurrency: DEFAULT_CONCURRENCY,
            progress: false,
            unpack: Default::default(),
        }
    }
}

/// A registry operation that failed, phrased for the user.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error(
        "{registry}: authentication failed ({op}): the registry rejected the credentials from {from}; check the user name and password"
    )]
    BadCredentials {
        registry: String,
        op: String,
        from: Box<Source>,
    },
    #[error(
        "{registry}: authentication required ({op}): {tried}; log in with `olm registry login {registry}` or pass --creds USER:PASSWORD"
    )]
    NoCredentials {
        registry: String,
        op: String,
        tried: Box<Tried>,
    },
    #[error("{registry}: access denied ({op}): the account from {from} may not do this")]
    Denied {
        registry: String,
        op: String,
        from: Box<Source>,
    },
    #[error("{reference}: not found in the registry")]
    NotFound { reference: String },
    #[error(
        "{registry}: TLS certificate not trusted ({detail}); pass --ca-file <ca.pem>, or --insecure-skip-tls-verify for a test registry"
    )]
    Tls { registry: String, detail: String },
    #[error(
        "{registry}: the registry speaks TLS but was reached over plain HTTP; drop --plain-http, and pass --ca-file <ca.pem> or --insecure-skip-tls-verify if its certificate is self-signed"
    )]
    NeedsTls { registry: String },
    #[error("{registry}: {op} failed after {attempts} attempt(s): {detail}")]
    Transport {
        registry: String,
        op: String,
        attempts: u32,
        detail: String,
    },
    #[error("{registry}: {op}: HTTP {code}: {detail}")]
    Server {
        registry: String,
        op: String,
        code: u16,
        detail: String,
    },
    #[error("{registry}: {op}: {detail}")]
    Protocol {
        registry: String,
        op: String,
        detail: String,
    },
    #[error("{path}: cannot read CA file: {source}")]
    CaFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a PEM file of CA certificates: {detail}")]
    BadCaFile { path: PathBuf, detail: String },
    #[error("{0}")]
    Client(String),
    #[error(transparent)]
    Auth(#[from] AuthError),
    #[error("{registry}: {op}: {error}")]
    Token {
        registry: String,
        op: String,
        error: Box<TokenError>,
    },
    #[error(transparent)]
    Model(#[from] ModelError),
}

impl RegistryError {
    /// Worth another attempt: a dropped connection, a 5xx or a 429.
    pub fn retryable(&self) -> bool {
        matches!(self, RegistryError::Transport { .. })
            || matches!(self, RegistryError::Server { code, .. } if *code >= 500 || *code == 429)
    }

    /// Counts the attempts made into a transport error's message.
    pub(crate) fn with_attempts(mut self, n: u32) -> Self {
        if let RegistryError::Transport { attempts, .. } = &mut self {
            *attempts = n;
        }
        self
    }
}

/// What a push did: the digest, and which blobs went over the wire.
#[derive(Debug, Clone, Default)]
pub struct PushReport {
    /// The manifest digest (the image digest).
    pub digest: String,
    /// `registry/repo@digest`.
    pub pinned: String,
    /// Digests and sizes of the blobs uploaded.
    pub uploaded: Vec<(String, u64)>,
    /// Digests of the blobs mounted from another repository of the same registry.
    pub mounted: Vec<String>,
    /// Digests of the blobs the destination already had.
    pub skipped: Vec<String>,
    /// Whether a manifest was written (false when the destination already named these bytes).
    pub manifest_written: bool,
}

impl PushReport {
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded.iter().map(|(_, s)| s).sum()
    }

    /// One line for the log: `pushed 2 of 3 blobs (1.2 MiB), 1 already present`.
    pub fn summary(&self) -> String {
        let total = self.uploaded.len() + self.skipped.len() + self.mounted.len();
        let mounted = if self.mounted.is_empty() {
            String::new()
        } else {
            format!(", {} mounted from another repository", self.mounted.len())
        };
        format!(
            "pushed {} of {total} blobs ({}){mounted}, {} already present; manifest {}",
            self.uploaded.len(),
            human_bytes(self.uploaded_bytes()),
            self.skipped.len(),
            if self.manifest_written {
                "written"
            } else {
                "unchanged"
            }
        )
    }
}

/// Whether `registry` (`host[:port]`) is this machine.
pub fn is_loopback(registry: &str) -> bool {
    let host = if let Some(rest) = registry.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        registry.rsplit_once(':').map_or(registry, |(h, _)| h)
    };
    host == "localhost"
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// This machine's architecture in OCI terms.
pub fn host_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        "x86" => "386",
        "arm" => "arm",
        "powerpc64" => "ppc64le",
        "s390x" => "s390x",
        "riscv64" => "riscv64",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_detection() {
        assert!(is_loopback("localhost:5000"));
        assert!(is_loopback("127.0.0.1:41234"));
        assert!(is_loopback("127.1.2.3"));
        assert!(is_loopback("[::1]:5000"));
        assert!(!is_loopback("quay.io"));
        assert!(!is_loopback("10.0.0.1:5000"));
        assert!(!is_loopback("localhost.example.com"));
    }

    #[test]
    fn summary_counts() {
        let r = PushReport {
            digest: "sha256:x".into(),
            pinned: "r/x@sha256:x".into(),
            uploaded: vec![("a".into(), 2048)],
            mounted: vec![],
            skipped: vec!["b".into(), "c".into()],
            manifest_written: true,
        };
        assert_eq!(
            r.summary(),
            "pushed 1 of 3 blobs (2.0 KiB), 2 already present; manifest written"
        );
    }
}
