//! One registry: its connection pool, scheme, credentials and the auth flow.
//!
//! The flow is the one docker and containers-image follow: `GET /v2/` once tells whether the
//! registry is open, wants Basic credentials, or hands out Bearer tokens from a realm; tokens
//! are fetched per set of scopes (`repository:<name>:pull[,push]`) and kept for the run. A
//! request answered 401 with a cached token gets one fresh token and one more try.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{RequestBuilder, Response, StatusCode};
use tokio::sync::OnceCell;

use super::super::auth::{self, AuthOptions, Credential, Resolved, Source};
use super::super::token::{self, TokenError};
use super::{RegistryError, RegistryOptions, is_loopback};
use crate::grammar::www_authenticate;

/// What a request needs to be allowed to do, as token scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access<'a> {
    Pull(&'a str),
    Push(&'a str),
    /// Delete manifests of a repository. Asked as `*` (every action), as skopeo does: Quay
    /// refuses a token request naming `delete`.
    Delete(&'a str),
    /// Push to `to`, reading a blob of `from` (a cross-repository mount).
    Mount {
        to: &'a str,
        from: &'a str,
    },
}

impl Access<'_> {
    fn scopes(&self) -> Vec<String> {
        match self {
            Access::Pull(r) => vec![format!("repository:{r}:pull")],
            Access::Push(r) => vec![format!("repository:{r}:pull,push")],
            Access::Delete(r) => vec![format!("repository:{r}:*")],
            Access::Mount { to, from } => vec![
                format!("repository:{to}:pull,push"),
                format!("repository:{from}:pull"),
            ],
        }
    }
}

/// How the registry wants to be authenticated, from its `/v2/` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Challenge {
    /// No authentication asked for.
    Open,
    Basic,
    Bearer {
        realm: String,
        service: Option<String>,
    },
}

/// A connection to one registry (one pool, shared by every repository on it).
pub struct RegistryClient {
    http: reqwest::Client,
    /// `https://host[:port]` or `http://...`.
    base: String,
    /// As references write it (`docker.io`, `127.0.0.1:5000`).
    registry: String,
    /// The credential, where it came from and the files read before it (for a 401's error).
    resolved: Resolved,
    challenge: OnceCell<Challenge>,
    tokens: Mutex<HashMap<String, Arc<str>>>,
    pub(crate) opts: RegistryOptions,
}

/// Every message in an error's source chain, joined; used to classify transport failures.
pub(crate) fn chain_text(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut cur = err.source();
    while let Some(e) = cur {
        let s = e.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
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

/// The host an API request goes to for `registry` (Docker Hub's API is not at `docker.io`).
fn api_host(registry: &str) -> &str {
    match registry {
        "docker.io" | "index.docker.io" => "registry-1.docker.io",
        other => other,
    }
}

impl Challenge {
    fn from_headers(headers: &HeaderMap) -> Option<Challenge> {
        let parsed: Vec<www_authenticate::Challenge> = headers
            .get_all(WWW_AUTHENTICATE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(www_authenticate::parse)
            .collect();
        // A bearer challenge first: it names the token server.
        if let Some(c) = parsed.iter().find(|c| c.scheme == "bearer") {
            return Some(Challenge::Bearer {
                realm: c.param("realm")?.to_string(),
                service: c.param("service").map(str::to_string),
            });
        }
        parsed
            .iter()
            .any(|c| c.scheme == "basic")
            .then_some(Challenge::Basic)
    }
}

/// The `errors` envelope of a distribution error body, as one line.
pub(crate) fn error_detail(body: &[u8]) -> String {
    #[derive(serde::Deserialize)]
    struct Envelope {
        errors: Vec<Entry>,
    }
    #[derive(serde::Deserialize)]
    struct Entry {
        #[serde(default)]
        code: String,
        #[serde(default)]
        message: String,
    }
    match serde_json::from_slice::<Envelope>(body) {
        Ok(e) if !e.errors.is_empty() => e
            .errors
            .iter()
            .map(|e| match (e.code.is_empty(), e.message.is_empty()) {
                (false, false) => format!("{} ({})", e.message, e.code),
                (true, _) => e.message.clone(),
                (false, true) => e.code.clone(),
            })
            .collect::<Vec<_>>()
            .join("; "),
        _ => String::from_utf8_lossy(body)
            .trim()
            .chars()
            .take(300)
            .collect(),
    }
}

impl RegistryClient {
    /// Connects to `registry` (`host[:port]` as references write it): picks HTTP or HTTPS,
    /// loads the CA file and the credentials, and asks `/v2/` how to authenticate.
    pub async fn connect(registry: &str, opts: &RegistryOptions) -> Result<Self, RegistryError> {
        // kube picked ring for the process; reqwest is built without a provider of its own.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .user_agent(concat!("olm/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(15))
            .read_timeout(Duration::from_secs(120))
            .pool_max_idle_per_host(opts.concurrency.max(1) * 2)
            .tls_danger_accept_invalid_certs(opts.insecure_skip_tls_verify);
        if let Some(path) = &opts.ca_file {
            let pem = std::fs::read(path).map_err(|source| RegistryError::CaFile {
                path: path.clone(),
                source,
            })?;
            let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                RegistryError::BadCaFile {
                    path: path.clone(),
                    detail: chain_text(&e),
                }
            })?;
            builder = builder.tls_certs_merge(certs);
        }
        let http = builder
            .build()
            .map_err(|e| RegistryError::Client(chain_text(&e)))?;
        let resolved = auth::resolve(
            registry,
            &AuthOptions {
                creds: opts.creds.clone(),
                authfile: opts.authfile.clone(),
            },
        )?;
        let host = api_host(registry);
        let mut client = RegistryClient {
            http,
            base: format!("https://{host}"),
            registry: registry.to_string(),
            resolved,
            challenge: OnceCell::new(),
            tokens: Mutex::new(HashMap::new()),
            opts: opts.clone(),
        };
        if opts.plain_http {
            client.base = format!("http://{host}");
        } else if is_loopback(registry) {
            // A loopback registry may speak plain HTTP (docker allows it for localhost):
            // asking over HTTPS tells, and a plain-HTTP server makes the handshake fail. The
            // CA file applies when it does speak TLS (a copy may join a plain registry and a
            // TLS one).
            match client.ping().await {
                Ok(ch) => {
                    let _ = client.challenge.set(ch);
                }
                Err(e @ RegistryError::Tls { .. }) => return Err(e),
                Err(e) => {
                    tracing::debug!(registry, error = %e, "no TLS on the loopback registry; using HTTP");
                    client.base = format!("http://{host}");
                }
            }
        }
        tracing::debug!(registry, credentials = %client.resolved.source, base = %client.base, "connected");
        Ok(client)
    }

    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// Whether the registry is spoken to over plain HTTP (what node configurations must use).
    pub fn plain_http(&self) -> bool {
        self.base.starts_with("http://")
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// An absolute URL for a `Location` header, which may be relative to the registry.
    pub(crate) fn absolute(&self, location: &str) -> String {
        if location.starts_with("http://") || location.starts_with("https://") {
            location.to_string()
        } else if location.starts_with('/') {
            format!("{}{location}", self.base)
        } else {
            format!("{}/{location}", self.base)
        }
    }

    /// `GET /v2/`: how the registry wants to be authenticated.
    async fn ping(&self) -> Result<Challenge, RegistryError> {
        let resp = self
            .http
            .get(self.url("/v2/"))
            .send()
            .await
            .map_err(|e| self.transport("GET /v2/", &e))?;
        match resp.status() {
            s if s.is_success() => Ok(Challenge::Open),
            StatusCode::UNAUTHORIZED => {
                Ok(Challenge::from_headers(resp.headers()).unwrap_or(Challenge::Basic))
            }
            s if s == StatusCode::BAD_REQUEST => {
                let body = resp.bytes().await.unwrap_or_default();
                if String::from_utf8_lossy(&body).contains("HTTP request to an HTTPS server") {
                    Err(RegistryError::NeedsTls {
                        registry: self.registry.clone(),
                    })
                } else {
                    Err(self.server("GET /v2/", 400, error_detail(&body)))
                }
            }
            // A registry that answers /v2/ oddly may still serve the API; authenticate lazily.
            _ => Ok(Challenge::Open),
        }
    }

    async fn challenge(&self) -> Result<&Challenge, RegistryError> {
        self.challenge.get_or_try_init(|| self.ping()).await
    }

    fn transport(&self, op: &str, err: &reqwest::Error) -> RegistryError {
        let text = chain_text(err);
        if is_cert_problem(&text) {
            RegistryError::Tls {
                registry: self.registry.clone(),
                detail: text,
            }
        } else {
            RegistryError::Transport {
                registry: self.registry.clone(),
                op: op.to_string(),
                attempts: 1,
                detail: text,
            }
        }
    }

    fn server(&self, op: &str, code: u16, detail: String) -> RegistryError {
        RegistryError::Server {
            registry: self.registry.clone(),
            op: op.to_string(),
            code,
            detail,
        }
    }

    /// A 401: no credentials (listing where they were looked for), or the ones found were
    /// refused.
    fn unauthorized(&self, op: &str) -> RegistryError {
        match self.resolved.source {
            Source::Anonymous => RegistryError::NoCredentials {
                registry: self.registry.clone(),
                op: op.to_string(),
                tried: Box::new(self.resolved.tried.clone()),
            },
            _ => RegistryError::BadCredentials {
                registry: self.registry.clone(),
                op: op.to_string(),
                from: Box::new(self.resolved.source.clone()),
            },
        }
    }

    /// A failed token exchange: a refusal is bad credentials (or none), a certificate problem
    /// the TLS error with its fix.
    fn token_error(&self, op: &str, err: TokenError) -> RegistryError {
        match err {
            TokenError::Rejected(_) => self.unauthorized(op),
            TokenError::Http { detail, .. } if is_cert_problem(&detail) => RegistryError::Tls {
                registry: self.registry.clone(),
                detail,
            },
            TokenError::Http { detail, .. } => RegistryError::Transport {
                registry: self.registry.clone(),
                op: format!("{op}: token"),
                attempts: 1,
                detail,
            },
            error => RegistryError::Token {
                registry: self.registry.clone(),
                op: op.to_string(),
                error: Box::new(error),
            },
        }
    }

    /// Turns a failed answer into an error, reading (a bounded part of) its body.
    pub(crate) async fn status_error(&self, op: &str, resp: Response) -> RegistryError {
        let code = resp.status().as_u16();
        let body = resp.bytes().await.unwrap_or_default();
        let body = &body[..body.len().min(16 * 1024)];
        let detail = error_detail(body);
        match code {
            401 => self.unauthorized(op),
            403 => RegistryError::Denied {
                registry: self.registry.clone(),
                op: op.to_string(),
                from: Box::new(self.resolved.source.clone()),
            },
            400 if detail.contains("HTTP request to an HTTPS server") => RegistryError::NeedsTls {
                registry: self.registry.clone(),
            },
            _ => self.server(op, code, detail),
        }
    }

    /// A Bearer token for `access`, from the cache or the realm.
    async fn token(
        &self,
        access: &Access<'_>,
        realm: &str,
        service: Option<&str>,
        op: &str,
    ) -> Result<Arc<str>, RegistryError> {
        let scopes = access.scopes();
        let key = scopes.join(" ");
        if let Some(t) = self.tokens.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(t);
        }
        let secret = token::fetch_token(
            &self.http,
            realm,
            service,
            self.resolved.credential.as_ref(),
            &scopes,
        )
        .await
        .map_err(|e| self.token_error(op, e))?;
        let token: Arc<str> = secret.expose().into();
        if let Ok(mut m) = self.tokens.lock() {
            m.insert(key, token.clone());
        }
        Ok(token)
    }

    fn forget_token(&self, access: &Access<'_>) {
        if let Ok(mut m) = self.tokens.lock() {
            m.remove(&access.scopes().join(" "));
        }
    }

    /// Adds the Authorization header `access` needs.
    async fn authorize(
        &self,
        req: RequestBuilder,
        access: &Access<'_>,
        op: &str,
    ) -> Result<RequestBuilder, RegistryError> {
        Ok(match self.challenge().await? {
            Challenge::Open => req,
            Challenge::Basic => match &self.resolved.credential {
                Some(Credential::Basic { username, password }) => {
                    req.basic_auth(username, Some(password.expose()))
                }
                // An identity token is for token servers; a Basic registry gets nothing.
                _ => req,
            },
            Challenge::Bearer { realm, service } => {
                let token = self.token(access, realm, service.as_deref(), op).await?;
                let mut value =
                    HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
                        RegistryError::Protocol {
                            registry: self.registry.clone(),
                            op: op.to_string(),
                            detail: "the token endpoint answered a token that is no header value"
                                .into(),
                        }
                    })?;
                value.set_sensitive(true);
                req.header(reqwest::header::AUTHORIZATION, value)
            }
        })
    }

    /// Sends one request (no retry), authorized for `access`. A 401 with a cached token gets
    /// a fresh token and one more try when `make` can build the request again.
    async fn send_authorized(
        &self,
        op: &str,
        access: &Access<'_>,
        make: &mut dyn FnMut() -> Option<RequestBuilder>,
    ) -> Result<Response, RegistryError> {
        let Some(req) = make() else {
            return Err(RegistryError::Client(format!("{op}: request built twice")));
        };
        let resp = self
            .authorize(req, access, op)
            .await?
            .send()
            .await
            .map_err(|e| self.transport(op, &e))?;
        if resp.status() != StatusCode::UNAUTHORIZED {
            return Ok(resp);
        }
        if let Challenge::Bearer { .. } = self.challenge().await? {
            self.forget_token(access);
            if let Some(req) = make() {
                return self
                    .authorize(req, access, op)
                    .await?
                    .send()
                    .await
                    .map_err(|e| self.transport(op, &e));
            }
        }
        Ok(resp)
    }

    /// Sends a request built by `make` (called again for each attempt), retrying transport
    /// failures, 5xx and 429 with exponential backoff. Other statuses are the caller's.
    pub(crate) async fn send(
        &self,
        op: &str,
        access: &Access<'_>,
        make: impl Fn(&reqwest::Client) -> RequestBuilder,
    ) -> Result<Response, RegistryError> {
        let mut attempt = 0u32;
        loop {
            let result = self
                .send_authorized(op, access, &mut || Some(make(&self.http)))
                .await;
            let err = match result {
                Ok(resp) if resp.status().is_server_error() || resp.status().as_u16() == 429 => {
                    self.status_error(op, resp).await
                }
                Ok(resp) => return Ok(resp),
                Err(e) => e,
            };
            if err.retryable() && attempt < self.opts.retries {
                let delay = self.opts.retry_delay * 2u32.saturating_pow(attempt);
                tracing::warn!("{err}; retrying in {} ms", delay.as_millis());
                tokio::time::sleep(delay).await;
                attempt += 1;
                continue;
            }
            return Err(err.with_attempts(attempt + 1));
        }
    }

    /// Sends a request whose body can be sent only once (a stream): one attempt. Callers
    /// retry the whole transfer, reopening the source.
    pub(crate) async fn send_once(
        &self,
        op: &str,
        access: &Access<'_>,
        req: RequestBuilder,
    ) -> Result<Response, RegistryError> {
        let mut req = Some(req);
        let resp = self.send_authorized(op, access, &mut || req.take()).await?;
        if resp.status().is_server_error() || resp.status().as_u16() == 429 {
            return Err(self.status_error(op, resp).await);
        }
        Ok(resp)
    }

    /// A request builder on this client's pool.
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Checks the credentials against the registry's API root (`GET /v2/` through its auth
    /// flow), as `docker login` does. Without credentials it fails as a 401 does, listing
    /// where they were looked for.
    pub async fn check_login(&self) -> Result<(), RegistryError> {
        let op = "GET /v2/";
        if self.resolved.credential.is_none() {
            return Err(self.unauthorized(op));
        }
        let req = self.http.get(self.url("/v2/"));
        let req = match self.challenge().await? {
            Challenge::Open => return Ok(()),
            Challenge::Basic => match &self.resolved.credential {
                Some(Credential::Basic { username, password }) => {
                    req.basic_auth(username, Some(password.expose()))
                }
                _ => {
                    return Err(RegistryError::Protocol {
                        registry: self.registry.clone(),
                        op: op.to_string(),
                        detail: "the registry asks for a password; an identity token needs a token server".into(),
                    });
                }
            },
            Challenge::Bearer { realm, service } => {
                // A token for no repository proves the token server takes the credentials.
                let secret = token::fetch_token(
                    &self.http,
                    realm,
                    service.as_deref(),
                    self.resolved.credential.as_ref(),
                    &[],
                )
                .await
                .map_err(|e| self.token_error(op, e))?;
                req.bearer_auth(secret.expose())
            }
        };
        let resp = req.send().await.map_err(|e| self.transport(op, &e))?;
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(self.status_error(op, resp).await)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mount_scopes_name_both_repositories() {
        assert_eq!(
            Access::Mount {
                to: "a/x",
                from: "b/y"
            }
            .scopes(),
            ["repository:a/x:pull,push", "repository:b/y:pull"]
        );
    }

    #[test]
    fn a_delete_asks_for_every_action_as_quay_accepts() {
        assert_eq!(Access::Delete("a/x").scopes(), ["repository:a/x:*"]);
    }

    #[test]
    fn error_bodies_become_one_line() {
        assert_eq!(
            error_detail(
                br#"{"errors":[{"code":"BLOB_UNKNOWN","message":"blob unknown to registry"}]}"#
            ),
            "blob unknown to registry (BLOB_UNKNOWN)"
        );
        assert_eq!(error_detail(b"plain text\n"), "plain text");
    }
}
