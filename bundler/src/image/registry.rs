//! The registry client: push and pull whole images over the distribution API.
//!
//! oci-client does the HTTP; this module adds what a crane-like tool needs on top of it:
//! - a HEAD per blob before uploading, so an unchanged re-push uploads nothing;
//! - parallel blob uploads, and the manifest last (pushed as the exact bytes we hashed), so a
//!   tag never points at a manifest whose blobs are missing;
//! - retries with exponential backoff on 5xx answers and dropped connections;
//! - plain HTTP only for loopback registries that do not speak TLS, or with `--plain-http`;
//! - explicit `Accept` headers for OCI and Docker manifest types;
//! - errors that say what to do (credentials, CA file) without ever showing a secret.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use indicatif::{ProgressBar, ProgressStyle};
use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::errors::OciDistributionError;
use oci_client::manifest::OciDescriptor;
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use super::auth::{self, AuthError, AuthOptions, Credential, Credentials, Resolved, Source, Tried};
use super::model::{
    self, ACCEPTED_MANIFEST_TYPES, Blob, Descriptor, Image, Index, MEDIA_TYPE_DOCKER_LIST,
    MEDIA_TYPE_OCI_INDEX, ModelError,
};
use super::token::{Endpoint, TokenError};
use super::{human_bytes, sha256_digest};

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
    /// Blobs uploaded or downloaded at once.
    pub concurrency: usize,
    /// Draw progress bars (the CLI sets this only when stderr is a terminal).
    pub progress: bool,
}

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
            concurrency: 4,
            progress: false,
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
    #[error("{path}: cannot read CA file: {source}")]
    CaFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
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
    #[error("{reference}: {what}")]
    Unsupported { reference: String, what: String },
}

impl RegistryError {
    fn retryable(&self) -> bool {
        matches!(self, RegistryError::Transport { .. })
            || matches!(self, RegistryError::Server { code, .. } if *code >= 500 || *code == 429)
    }
}

/// What a push did: the digest, and which blobs went over the wire.
#[derive(Debug, Clone)]
pub struct PushReport {
    /// The manifest digest (the image digest).
    pub digest: String,
    /// `registry/repo@digest`.
    pub pinned: String,
    /// Digests and sizes of the blobs uploaded.
    pub uploaded: Vec<(String, u64)>,
    /// Digests of the blobs the registry already had.
    pub skipped: Vec<String>,
    /// Whether the manifest was written (false when the tag already pointed at it).
    pub manifest_written: bool,
}

impl PushReport {
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded.iter().map(|(_, s)| s).sum()
    }

    /// One line for the log: `pushed 2 of 3 blobs (1.2 MiB), 1 already present`.
    pub fn summary(&self) -> String {
        let total = self.uploaded.len() + self.skipped.len();
        format!(
            "pushed {} of {total} blobs ({}), {} already present; manifest {}",
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

/// A connection to one registry.
pub struct RegistryClient {
    client: Client,
    auth: RegistryAuth,
    /// The credential, where it came from and the files read before it (for a 401's error).
    resolved: Resolved,
    /// The registry's API root, for what oci-client does not do (identity tokens, login).
    endpoint: Endpoint,
    /// Scopes an identity token has been traded for (oci-client caches the bearer tokens).
    authorized: tokio::sync::Mutex<HashSet<String>>,
    registry: String,
    opts: RegistryOptions,
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

/// Every message in an error's source chain, joined; used to classify transport failures.
pub(super) fn chain_text(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut cur = err.source();
    while let Some(e) = cur {
        let s = e.to_string();
        if !parts.contains(&s) {
            parts.push(s);
        }
        cur = e.source();
    }
    parts.join(": ")
}

fn is_cert_problem(text: &str) -> bool {
    let t = text.to_ascii_lowercase();
    t.contains("certificate") || t.contains("unknownissuer") || t.contains("unknown issuer")
}

impl RegistryClient {
    /// Connects to `registry` (`host[:port]`): picks HTTP or HTTPS, loads the CA file and the
    /// credentials. No request is made except, for a loopback registry, one probe of `/v2/`
    /// over HTTPS to learn whether it speaks TLS.
    pub async fn connect(registry: &str, opts: &RegistryOptions) -> Result<Self, RegistryError> {
        let mut extra = Vec::new();
        if let Some(path) = &opts.ca_file {
            let data = std::fs::read(path).map_err(|source| RegistryError::CaFile {
                path: path.clone(),
                source,
            })?;
            extra.push(Certificate {
                encoding: CertificateEncoding::Pem,
                data,
            });
        }
        let ca_pem = extra.first().map(|c| c.data.clone());
        let make = |protocol: ClientProtocol| -> Result<Client, RegistryError> {
            let config = ClientConfig {
                protocol,
                accept_invalid_certificates: opts.insecure_skip_tls_verify,
                use_monolithic_push: true,
                extra_root_certificates: extra.clone(),
                connect_timeout: Some(Duration::from_secs(15)),
                read_timeout: Some(Duration::from_secs(120)),
                platform_resolver: None,
                ..Default::default()
            };
            Client::try_from(config).map_err(|e| RegistryError::Client(chain_text(&e)))
        };

        let protocol = if opts.plain_http {
            ClientProtocol::Http
        } else if is_loopback(registry) && opts.ca_file.is_none() {
            Self::probe(registry, make(ClientProtocol::Https)?).await?
        } else {
            ClientProtocol::Https
        };
        let scheme = match &protocol {
            ClientProtocol::Http => "http",
            ClientProtocol::HttpsExcept(plain) if plain.iter().any(|r| r == registry) => "http",
            _ => "https",
        };
        let endpoint = Endpoint::new(scheme, registry, ca_pem, opts.insecure_skip_tls_verify);
        let client = make(protocol)?;

        let auth_opts = AuthOptions {
            creds: opts.creds.clone(),
            authfile: opts.authfile.clone(),
        };
        let resolved = auth::resolve(registry, &auth_opts)?;
        // An identity token is traded for bearer tokens per repository (`authorize`);
        // oci-client's own flow sees no credential.
        let auth = match &resolved.credential {
            Some(Credential::Basic { username, password }) => {
                RegistryAuth::Basic(username.clone(), password.expose().to_string())
            }
            Some(Credential::IdentityToken { .. }) | None => RegistryAuth::Anonymous,
        };
        client.store_auth_if_needed(registry, &auth).await;
        tracing::debug!(registry, credentials = %resolved.source, "connected");
        Ok(RegistryClient {
            client,
            auth,
            resolved,
            endpoint,
            authorized: tokio::sync::Mutex::new(HashSet::new()),
            registry: registry.to_string(),
            opts: opts.clone(),
        })
    }

    /// Checks the credentials against the registry's API root (`GET /v2/` through the
    /// registry's auth flow), as `docker login` does. Without credentials it fails as a
    /// 401 does, listing where they were looked for.
    pub async fn check_login(&self) -> Result<(), RegistryError> {
        let op = "GET /v2/";
        let Some(credential) = &self.resolved.credential else {
            return Err(self.auth_failure(op.into()));
        };
        self.endpoint
            .check_login(credential)
            .await
            .map_err(|e| self.token_error(op, e))
    }

    /// With an identity token, trades it for a bearer token scoped to `reference` and `op`
    /// and hands that to oci-client's token cache (which cannot do the exchange itself).
    /// Nothing to do for other credentials.
    async fn authorize(
        &self,
        reference: &Reference,
        op: RegistryOperation,
    ) -> Result<(), RegistryError> {
        let Some(credential @ Credential::IdentityToken { .. }) = &self.resolved.credential else {
            return Ok(());
        };
        let actions = match op {
            RegistryOperation::Pull => "pull",
            RegistryOperation::Push => "pull,push",
        };
        let scope = format!("repository:{}:{actions}", reference.repository());
        let mut done = self.authorized.lock().await;
        if done.contains(&scope) {
            return Ok(());
        }
        let what = format!("token for {scope}");
        let token = self
            .endpoint
            .bearer_token(credential, std::slice::from_ref(&scope))
            .await
            .map_err(|e| self.token_error(&what, e))?;
        let bearer = RegistryAuth::Bearer(token.expose().to_string());
        // A push token also serves the HEADs and GETs of the push.
        let ops: &[RegistryOperation] = match op {
            RegistryOperation::Pull => &[RegistryOperation::Pull],
            RegistryOperation::Push => &[RegistryOperation::Push, RegistryOperation::Pull],
        };
        for op in ops {
            self.client
                .auth(reference, &bearer, *op)
                .await
                .map_err(|e| self.classify(&what, e))?;
        }
        done.insert(scope);
        Ok(())
    }

    /// A failed token exchange or login check: a refusal is bad credentials, a certificate
    /// problem the TLS error with its fix.
    fn token_error(&self, op: &str, err: TokenError) -> RegistryError {
        match err {
            TokenError::Rejected(_) => RegistryError::BadCredentials {
                registry: self.registry.clone(),
                op: op.to_string(),
                from: Box::new(self.resolved.source.clone()),
            },
            TokenError::Http { detail, .. } if is_cert_problem(&detail) => RegistryError::Tls {
                registry: self.registry.clone(),
                detail,
            },
            error => RegistryError::Token {
                registry: self.registry.clone(),
                op: op.to_string(),
                error: Box::new(error),
            },
        }
    }

    /// A 401: no credentials (listing the files tried), or the ones found were refused.
    fn auth_failure(&self, op: String) -> RegistryError {
        match self.resolved.source {
            Source::Anonymous => RegistryError::NoCredentials {
                registry: self.registry.clone(),
                op,
                tried: Box::new(self.resolved.tried.clone()),
            },
            _ => RegistryError::BadCredentials {
                registry: self.registry.clone(),
                op,
                from: Box::new(self.resolved.source.clone()),
            },
        }
    }

    /// Asks a loopback registry for `/v2/` over HTTPS. A TLS answer (any status) keeps HTTPS;
    /// an untrusted certificate is an error with the fix; anything else (a plain-HTTP server,
    /// nothing listening) falls back to HTTP, as docker does for localhost.
    async fn probe(registry: &str, https: Client) -> Result<ClientProtocol, RegistryError> {
        let probe = Reference::with_tag(registry.to_string(), "v2-probe".into(), "latest".into());
        match https
            .auth(&probe, &RegistryAuth::Anonymous, RegistryOperation::Pull)
            .await
        {
            Ok(_) => Ok(ClientProtocol::Https),
            Err(e) => {
                let text = chain_text(&e);
                if is_cert_problem(&text) {
                    Err(RegistryError::Tls {
                        registry: registry.into(),
                        detail: text,
                    })
                } else {
                    tracing::debug!(registry, %text, "no TLS on the loopback registry; using HTTP");
                    Ok(ClientProtocol::HttpsExcept(vec![registry.to_string()]))
                }
            }
        }
    }

    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// Turns an oci-client error into ours, deciding what is worth retrying.
    fn classify(&self, op: &str, err: OciDistributionError) -> RegistryError {
        let registry = self.registry.clone();
        let op = op.to_string();
        match &err {
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_) => self.auth_failure(op),
            OciDistributionError::RequestError(e) => {
                if let Some(status) = e.status() {
                    return self.status_error(op, status.as_u16(), chain_text(&err));
                }
                let text = chain_text(&err);
                if is_cert_problem(&text) {
                    RegistryError::Tls {
                        registry,
                        detail: text,
                    }
                } else {
                    RegistryError::Transport {
                        registry,
                        op,
                        attempts: 1,
                        detail: text,
                    }
                }
            }
            OciDistributionError::ServerError { code, message, .. } => {
                self.status_error(op, *code, message.clone())
            }
            OciDistributionError::RegistryError { envelope, .. } => {
                let codes: Vec<String> = envelope
                    .errors
                    .iter()
                    .map(|e| format!("{:?}", e.code))
                    .collect();
                let detail = envelope
                    .errors
                    .iter()
                    .map(|e| e.message.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                if codes.iter().any(|c| c == "Unauthorized") {
                    self.auth_failure(op)
                } else if codes.iter().any(|c| c == "Denied") {
                    RegistryError::Denied {
                        registry,
                        op,
                        from: Box::new(self.resolved.source.clone()),
                    }
                } else if codes
                    .iter()
                    .any(|c| c == "ManifestUnknown" || c == "NameUnknown" || c == "NotFound")
                {
                    RegistryError::Server {
                        registry,
                        op,
                        code: 404,
                        detail,
                    }
                } else {
                    RegistryError::Server {
                        registry,
                        op,
                        code: 400,
                        detail: format!("{} ({})", detail, codes.join(", ")),
                    }
                }
            }
            OciDistributionError::IoError(_) => RegistryError::Transport {
                registry,
                op,
                attempts: 1,
                detail: chain_text(&err),
            },
            _ => RegistryError::Server {
                registry,
                op,
                code: 0,
                detail: chain_text(&err),
            },
        }
    }

    fn status_error(&self, op: String, code: u16, detail: String) -> RegistryError {
        match code {
            401 => self.auth_failure(op),
            403 => RegistryError::Denied {
                registry: self.registry.clone(),
                op,
                from: Box::new(self.resolved.source.clone()),
            },
            400 if detail.contains("HTTP request to an HTTPS server") => RegistryError::NeedsTls {
                registry: self.registry.clone(),
            },
            _ => RegistryError::Server {
                registry: self.registry.clone(),
                op,
                code,
                detail: detail.chars().take(300).collect(),
            },
        }
    }

    /// Runs `f` until it succeeds, fails for good, or the retries are spent; waits
    /// `retry_delay * 2^n` between attempts.
    async fn retry<T, F, Fut>(&self, op: &str, mut f: F) -> Result<T, RegistryError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, OciDistributionError>>,
    {
        let mut attempt = 0u32;
        loop {
            match f().await {
                Ok(v) => return Ok(v),
                Err(e) => {
                    let mut err = self.classify(op, e);
                    if err.retryable() && attempt < self.opts.retries {
                        let delay = self.opts.retry_delay * 2u32.saturating_pow(attempt);
                        tracing::warn!("{err}; retrying in {} ms", delay.as_millis());
                        tokio::time::sleep(delay).await;
                        attempt += 1;
                        continue;
                    }
                    if let RegistryError::Transport { attempts, .. } = &mut err {
                        *attempts = attempt + 1;
                    }
                    return Err(err);
                }
            }
        }
    }

    fn bar(&self, total: u64, what: &str) -> Option<ProgressBar> {
        if !self.opts.progress {
            return None;
        }
        let bar = ProgressBar::new(total);
        if let Ok(style) = ProgressStyle::with_template(
            "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(what.to_string());
        Some(bar)
    }

    /// Uploads one blob unless the registry has it. Returns whether it was uploaded.
    async fn push_blob(
        &self,
        reference: &Reference,
        blob: &Blob,
        bar: Option<&ProgressBar>,
    ) -> Result<bool, RegistryError> {
        let exists = self
            .retry(&format!("HEAD blob {}", blob.digest), || {
                self.client.blob_exists(reference, &blob.digest)
            })
            .await?;
        if exists {
            if let Some(b) = bar {
                b.inc(blob.size());
            }
            return Ok(false);
        }
        const CHUNK: usize = 256 * 1024;
        self.retry(&format!("upload blob {}", blob.digest), || {
            let data = blob.data.clone();
            let bar = bar.cloned();
            let chunks: Vec<Bytes> = (0..data.len())
                .step_by(CHUNK)
                .map(|start| data.slice(start..(start + CHUNK).min(data.len())))
                .collect();
            let stream = futures::stream::iter(chunks).map(move |c| {
                if let Some(b) = &bar {
                    b.inc(c.len() as u64);
                }
                Ok::<Bytes, OciDistributionError>(c)
            });
            self.client
                .push_blob_stream(reference, stream, &blob.digest, Some(blob.size()))
        })
        .await?;
        Ok(true)
    }

    /// Pushes `image` to `reference`: blobs first (skipping those the registry has), in
    /// parallel, then the manifest bytes exactly as hashed.
    pub async fn push(
        &self,
        reference: &Reference,
        image: &Image,
    ) -> Result<PushReport, RegistryError> {
        self.authorize(reference, RegistryOperation::Push).await?;
        let total: u64 = image.blobs().map(Blob::size).sum();
        let bar = self.bar(total, &format!("pushing {}", reference.whole()));
        let results: Vec<(String, u64, bool)> = futures::stream::iter(image.blobs())
            .map(|blob| {
                let bar = bar.as_ref();
                async move {
                    let uploaded = self.push_blob(reference, blob, bar).await?;
                    Ok::<_, RegistryError>((blob.digest.clone(), blob.size(), uploaded))
                }
            })
            .buffered(self.opts.concurrency.max(1))
            .try_collect()
            .await?;
        if let Some(b) = &bar {
            b.finish_and_clear();
        }

        // The manifest goes last, and only when the tag does not already name these bytes.
        let current = if reference.digest().is_none() {
            self.client
                .fetch_manifest_digest(reference, &self.auth)
                .await
                .ok()
        } else {
            None
        };
        let manifest_written = current.as_deref() != Some(image.digest.as_str());
        if manifest_written {
            let content_type =
                image
                    .manifest_media_type
                    .parse()
                    .map_err(|_| RegistryError::Unsupported {
                        reference: reference.whole(),
                        what: format!("media type {:?}", image.manifest_media_type),
                    })?;
            self.retry(&format!("push manifest {}", image.digest), || {
                self.client.push_manifest_raw(
                    reference,
                    image.manifest.clone(),
                    // HeaderValue clones are cheap.
                    Clone::clone(&content_type),
                )
            })
            .await?;
        }

        let mut report = PushReport {
            digest: image.digest.clone(),
            pinned: super::reference::pinned(reference, &image.digest),
            uploaded: Vec::new(),
            skipped: Vec::new(),
            manifest_written,
        };
        for (digest, size, uploaded) in results {
            if uploaded {
                report.uploaded.push((digest, size));
            } else {
                report.skipped.push(digest);
            }
        }
        Ok(report)
    }

    /// Fetches the manifest `reference` names. An index is resolved to its `os`/`arch` entry
    /// (default: linux and this machine's architecture). Returns the bytes, digest and
    /// media type.
    pub async fn fetch_manifest(
        &self,
        reference: &Reference,
        platform: Option<(&str, &str)>,
    ) -> Result<(Bytes, String, String), RegistryError> {
        let (bytes, digest) = self
            .fetch_manifest_raw(reference)
            .await
            .map_err(|e| self.not_found(reference, e))?;
        let media_type = media_type_of(&bytes);
        if media_type != MEDIA_TYPE_OCI_INDEX && media_type != MEDIA_TYPE_DOCKER_LIST {
            return Ok((bytes, digest, media_type));
        }
        let index: Index = serde_json::from_slice(&bytes).map_err(|source| ModelError::Json {
            what: format!("index {digest}"),
            source,
        })?;
        let (os, arch) = platform.unwrap_or(("linux", host_arch()));
        let Some(child) = index.manifests.iter().find(|d| {
            d.platform
                .as_ref()
                .is_some_and(|p| p.os == os && p.architecture == arch)
        }) else {
            return Err(RegistryError::Unsupported {
                reference: reference.whole(),
                what: format!("the image index has no {os}/{arch} image"),
            });
        };
        let child_ref = Reference::with_digest(
            reference.registry().to_string(),
            reference.repository().to_string(),
            child.digest.clone(),
        );
        let (bytes, digest) = self.fetch_manifest_raw(&child_ref).await?;
        let media_type = media_type_of(&bytes);
        Ok((bytes, digest, media_type))
    }

    /// The digest of the manifest `reference` names, as a registry serves it: for a
    /// multi-platform image the index's own digest (what `crane digest` prints, and what
    /// operator-sdk's `--use-image-digests` pins), not one platform's.
    pub async fn resolve_digest(&self, reference: &Reference) -> Result<String, RegistryError> {
        self.fetch_manifest_raw(reference)
            .await
            .map(|(_, digest)| digest)
            .map_err(|e| self.not_found(reference, e))
    }

    async fn fetch_manifest_raw(
        &self,
        reference: &Reference,
    ) -> Result<(Bytes, String), RegistryError> {
        self.authorize(reference, RegistryOperation::Pull).await?;
        let (bytes, digest) = self
            .retry(&format!("GET manifest {}", reference.whole()), || {
                self.client
                    .pull_manifest_raw(reference, &self.auth, ACCEPTED_MANIFEST_TYPES)
            })
            .await?;
        let actual = sha256_digest(&bytes);
        if digest.starts_with("sha256:") && digest != actual {
            return Err(ModelError::DigestMismatch {
                what: format!("manifest {}", reference.whole()),
                expected: digest,
                actual,
            }
            .into());
        }
        Ok((bytes, actual))
    }

    fn not_found(&self, reference: &Reference, err: RegistryError) -> RegistryError {
        match err {
            RegistryError::Server { code: 404, .. } => RegistryError::NotFound {
                reference: reference.whole(),
            },
            other => other,
        }
    }

    /// Downloads one blob, checking its digest.
    pub async fn fetch_blob(
        &self,
        reference: &Reference,
        desc: &Descriptor,
        bar: Option<&ProgressBar>,
    ) -> Result<Bytes, RegistryError> {
        self.authorize(reference, RegistryOperation::Pull).await?;
        let oci_desc = OciDescriptor {
            media_type: desc.media_type.clone(),
            digest: desc.digest.clone(),
            size: desc.size as i64,
            ..Default::default()
        };
        let data = self
            .retry(&format!("GET blob {}", desc.digest), || {
                let oci_desc = oci_desc.clone();
                async move {
                    let mut out = Vec::with_capacity(desc.size.min(1 << 30) as usize);
                    self.client
                        .pull_blob(reference, &oci_desc, &mut out)
                        .await?;
                    Ok(out)
                }
            })
            .await?;
        if let Some(b) = bar {
            b.inc(data.len() as u64);
        }
        Ok(Bytes::from(data))
    }

    /// Pulls a whole single-platform image (resolving an index to `platform`).
    pub async fn pull(
        &self,
        reference: &Reference,
        platform: Option<(&str, &str)>,
    ) -> Result<Image, RegistryError> {
        let (manifest, digest, media_type) = self.fetch_manifest(reference, platform).await?;
        let parsed = model::parse_manifest(&manifest, &digest)?;
        let descs: Vec<Descriptor> = std::iter::once(parsed.config.clone())
            .chain(parsed.layers.iter().cloned())
            .collect();
        let total = descs.iter().map(|d| d.size).sum();
        let bar = self.bar(total, &format!("pulling {}", reference.whole()));
        let fetched: Vec<(String, Bytes)> = futures::stream::iter(descs.iter())
            .map(|d| {
                let bar = bar.as_ref();
                async move {
                    let data = self.fetch_blob(reference, d, bar).await?;
                    Ok::<_, RegistryError>((d.digest.clone(), data))
                }
            })
            .buffered(self.opts.concurrency.max(1))
            .try_collect()
            .await?;
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        let blobs: HashMap<String, Bytes> = fetched.into_iter().collect();
        Image::assemble(
            manifest,
            Some(&media_type),
            |d| {
                blobs.get(&d.digest).cloned().ok_or_else(|| {
                    RegistryError::Client(format!("blob {} was not downloaded", d.digest))
                })
            },
            RegistryError::Model,
        )
    }
}

/// The `mediaType` field of a manifest or index, defaulting to an OCI manifest.
fn media_type_of(bytes: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(rename = "mediaType")]
        media_type: Option<String>,
        manifests: Option<serde_json::Value>,
    }
    match serde_json::from_slice::<Probe>(bytes) {
        Ok(Probe {
            media_type: Some(m),
            ..
        }) => m,
        Ok(Probe {
            manifests: Some(_), ..
        }) => MEDIA_TYPE_OCI_INDEX.into(),
        _ => model::MEDIA_TYPE_OCI_MANIFEST.into(),
    }
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
    fn media_type_detection() {
        assert_eq!(
            media_type_of(br#"{"schemaVersion":2,"manifests":[]}"#),
            MEDIA_TYPE_OCI_INDEX
        );
        assert_eq!(
            media_type_of(
                br#"{"mediaType":"application/vnd.docker.distribution.manifest.v2+json"}"#
            ),
            model::MEDIA_TYPE_DOCKER_MANIFEST
        );
    }

    #[test]
    fn summary_counts() {
        let r = PushReport {
            digest: "sha256:x".into(),
            pinned: "r/x@sha256:x".into(),
            uploaded: vec![("a".into(), 2048)],
            skipped: vec!["b".into(), "c".into()],
            manifest_written: true,
        };
        assert_eq!(
            r.summary(),
            "pushed 1 of 3 blobs (2.0 KiB), 2 already present; manifest written"
        );
    }
}
