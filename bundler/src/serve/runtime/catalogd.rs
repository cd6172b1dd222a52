//! catalogd's HTTP API (OLM v1), served beside the gRPC registry API: what operator-controller
//! fetches (`GET|HEAD /catalogs/<name>/api/v1/all`) and catalogd's experimental
//! `/catalogs/<name>/api/v1/metas?schema=&package=&name=`.
//!
//! The body is the catalog as catalogd stores it: one compact JSON object per blob, keys in
//! alphabetical order (catalogd reads YAML through `yaml.YAMLToJSON`, which sorts them), in
//! the order the files are walked. Responses follow Go's `http.ServeContent` as catalogd uses
//! it: `Last-Modified`, `If-Modified-Since` -> 304, one `Range` -> 206 (or 416), gzip when
//! asked, `405` for other methods, `404 page not found` for other paths.
//!
//! Every body streams from the cache's files ([`super::catalogd_files`]): the server holds
//! none of the catalog, whatever its size.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;

use super::catalogd_files::{ContentError, ContentFiles, Spans};
use super::ui::UiFiles;
use crate::grammar::k8s_names;

/// What the HTTP API serves: the catalog's name and its content files in the cache.
#[derive(Debug)]
pub struct CatalogContent {
    name: String,
    files: ContentFiles,
    /// The moment the content was opened (catalogd: when it unpacked the image), whole
    /// seconds as HTTP dates carry.
    last_modified: SystemTime,
}

impl CatalogContent {
    /// The content of catalog `name` from the cache directory `dir` (the index build wrote
    /// it there). Last-Modified is now.
    pub fn open(name: &str, dir: &Path) -> Result<CatalogContent, ContentError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        Ok(CatalogContent {
            name: name.to_string(),
            files: ContentFiles::open(dir)?,
            last_modified: UNIX_EPOCH + Duration::from_secs(now),
        })
    }

    /// The size of `/api/v1/all`'s body.
    pub fn len(&self) -> u64 {
        self.files.all.len
    }

    /// Whether the catalog has no blob.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why the TLS certificate or key could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Pem { path: String, message: String },
    #[error("--tls-cert/--tls-key: {0}")]
    Config(#[from] rustls::Error),
}

/// The PEM blocks of `path`, as (label, DER bytes).
fn pem_blocks(path: &Path) -> Result<Vec<(String, Vec<u8>)>, TlsError> {
    let text = std::fs::read_to_string(path).map_err(|source| TlsError::Read {
        path: path.display().to_string(),
        source,
    })?;
    let bad = |message: &str| TlsError::Pem {
        path: path.display().to_string(),
        message: message.to_string(),
    };
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(label) = line
            .trim()
            .strip_prefix("-----BEGIN ")
            .and_then(|l| l.strip_suffix("-----"))
        else {
            continue;
        };
        let end = format!("-----END {label}-----");
        let mut b64 = String::new();
        loop {
            let l = lines.next().ok_or_else(|| bad(&format!("no {end} line")))?;
            if l.trim() == end {
                break;
            }
            b64.push_str(l.trim());
        }
        let der = crate::grammar::go_base64::decode(&b64)
            .ok_or_else(|| bad(&format!("the {label} block is not base64")))?;
        out.push((label.to_string(), der));
    }
    Ok(out)
}

/// A TLS server configuration from PEM files: the certificate chain and its private key
/// (PKCS#8, PKCS#1 RSA or SEC1 EC). HTTP/1.1 only, as catalogd (it disables h2).
pub fn tls_config(cert: &Path, key: &Path) -> Result<rustls::ServerConfig, TlsError> {
    use rustls::pki_types::{
        CertificateDer, PrivateKeyDer, PrivatePkcs1KeyDer, PrivatePkcs8KeyDer, PrivateSec1KeyDer,
    };
    let chain: Vec<CertificateDer<'static>> = pem_blocks(cert)?
        .into_iter()
        .filter(|(label, _)| label == "CERTIFICATE")
        .map(|(_, der)| CertificateDer::from(der))
        .collect();
    if chain.is_empty() {
        return Err(TlsError::Pem {
            path: cert.display().to_string(),
            message: "no CERTIFICATE block".into(),
        });
    }
    let key_der: PrivateKeyDer<'static> = pem_blocks(key)?
        .into_iter()
        .find_map(|(label, der)| match label.as_str() {
            "PRIVATE KEY" => Some(PrivatePkcs8KeyDer::from(der).into()),
            "RSA PRIVATE KEY" => Some(PrivatePkcs1KeyDer::from(der).into()),
            "EC PRIVATE KEY" => Some(PrivateSec1KeyDer::from(der).into()),
            _ => None,
        })
        .ok_or_else(|| TlsError::Pem {
            path: key.display().to_string(),
            message: "no PRIVATE KEY, RSA PRIVATE KEY or EC PRIVATE KEY block".into(),
        })?;
    // The provider named here rather than the process default, which may not be installed
    // yet in this process (ring, the one rustls is built with here).
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(chain, key_der)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// Serves `router` over TLS on `listener` until `shutdown` completes: each connection is a
/// TLS handshake, then HTTP/1.1. A failed handshake (plain HTTP to the port, a client that
/// distrusts the certificate) ends that connection only.
pub async fn serve_tls(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    config: rustls::ServerConfig,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    tokio::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    tracing::debug!(error = %e, "accept");
                    continue;
                }
            },
            () = &mut shutdown => return,
        };
        let acceptor = acceptor.clone();
        let router = router.clone();
        tokio::spawn(async move {
            let tls = match acceptor.accept(tcp).await {
                Ok(t) => t,
                Err(e) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
            };
            let service = hyper_util::service::TowerToHyperService::new(router);
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "connection");
            }
        });
    }
}

/// The HTTP API's router: every request goes through [`handle`].
/// Paths outside `/catalogs/` are the catalog browser's pages when the cache has them.
pub fn router(content: Arc<CatalogContent>, ui: Option<Arc<UiFiles>>) -> axum::Router {
    axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap| {
        let (content, ui) = (content.clone(), ui.clone());
        async move {
            if let Some(ui) = ui.filter(|_| !uri.path().starts_with("/catalogs/"))
                && let Some(r) = ui.answer(&method, uri.path()).await
            {
                return r;
            }
            handle(content, &method, &uri, &headers).await
        }
    })
}

/// Answers one request as catalogd does.
pub async fn handle(
    c: Arc<CatalogContent>,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Response {
    let path = uri.path();
    let Some(rest) = path.strip_prefix("/catalogs/") else {
        return text(StatusCode::NOT_FOUND, "404 page not found\n");
    };
    let Some((name, endpoint)) = rest.split_once('/') else {
        return text(StatusCode::NOT_FOUND, "404 page not found\n");
    };
    let metas = match endpoint {
        "api/v1/all" => false,
        "api/v1/metas" => true,
        _ => return text(StatusCode::NOT_FOUND, "404 page not found\n"),
    };
    if method != Method::GET && method != Method::HEAD {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed\n");
        r.headers_mut()
            .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        return r;
    }
    let problems = k8s_names::dns1123_subdomain(name);
    if !problems.is_empty() {
        return text(
            StatusCode::BAD_REQUEST,
            &format!("{}\n", problems.join("; ")),
        );
    }
    if name != c.name {
        return text(StatusCode::NOT_FOUND, "404 Not Found\n");
    }
    let want = match metas {
        true => match wanted(uri.query().unwrap_or_default()) {
            Ok(w) => Some(w),
            Err(()) => return text(StatusCode::BAD_REQUEST, "Bad Request\n"),
        },
        false => None,
    };
    let head = method == Method::HEAD;
    match serve_content(c, want, head, headers).await {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "catalogd API: reading the content");
            text(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error\n")
        }
    }
}

/// The `schema`, `package` and `name` a `/api/v1/metas` query asks for (each blob must match
/// every one given); any other parameter is a bad request.
type Wanted = [Option<String>; 3];

fn wanted(query: &str) -> Result<Wanted, ()> {
    let mut want: Wanted = [None, None, None];
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let slot = match k {
            "schema" => 0,
            "package" => 1,
            "name" => 2,
            _ => return Err(()),
        };
        want[slot] = Some(percent_decode(v));
    }
    Ok(want)
}

/// `%XX` and `+` as in a query string.
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            // The two bytes after `%`, not a slice of the text: a character after `%` may be
            // more than a byte long.
            b'%' => match (
                b.get(i + 1).and_then(hex_digit),
                b.get(i + 2).and_then(hex_digit),
            ) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_digit(b: &u8) -> Option<u8> {
    char::from(*b).to_digit(16).map(|d| d as u8)
}

fn text(status: StatusCode, body: &str) -> Response {
    let mut r = Response::new(Body::from(body.to_string()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// Go's `http.ServeContent` for `/api/v1/all` (`want` is `None`) or the blobs a
/// `/api/v1/metas` query selects, plus catalogd's gzip (`all`'s compressed form is a file of
/// the cache; a selection is compressed per request). Bodies stream from the cache's files.
async fn serve_content(
    c: Arc<CatalogContent>,
    want: Option<Wanted>,
    head: bool,
    headers: &HeaderMap,
) -> Result<Response, ContentError> {
    let last_modified = http_date(c.last_modified);
    let base = |status: StatusCode| {
        let mut r = Response::new(Body::empty());
        *r.status_mut() = status;
        let h = r.headers_mut();
        h.insert(
            header::LAST_MODIFIED,
            HeaderValue::from_str(&last_modified).expect("an HTTP date is a header value"),
        );
        h.insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
        r
    };
    if let Some(since) = headers
        .get(header::IF_MODIFIED_SINCE)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_http_date)
        && c.last_modified <= since
    {
        return Ok(base(StatusCode::NOT_MODIFIED));
    }
    let whole = want.is_none();
    let spans = match want {
        None => Spans::whole(c.files.all.len),
        Some(want) => {
            let content = c.clone();
            blocking(move || {
                content.files.select(|m| {
                    let fields = [&m.schema, &m.package, &m.name];
                    want.iter()
                        .zip(fields)
                        .all(|(w, f)| w.as_ref().is_none_or(|w| w == f))
                })
            })
            .await?
        }
    };
    let len = spans.len();
    let range = headers.get(header::RANGE).and_then(|v| v.to_str().ok());
    let gzip = range.is_none()
        && headers
            .get(header::ACCEPT_ENCODING)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.split(',').any(|e| e.trim().starts_with("gzip")));
    let (status, spans, content_range) = match range {
        None => (StatusCode::OK, spans, None),
        Some(spec) => match byte_range(spec, len) {
            Some((a, b)) => (
                StatusCode::PARTIAL_CONTENT,
                spans.slice(a, b),
                Some(format!("bytes {a}-{b}/{len}")),
            ),
            None => {
                let mut r = base(StatusCode::RANGE_NOT_SATISFIABLE);
                r.headers_mut().insert(
                    header::CONTENT_RANGE,
                    HeaderValue::from_str(&format!("bytes */{len}"))
                        .expect("digits are a header value"),
                );
                return Ok(r);
            }
        },
    };
    let all = c.files.all.file.clone();
    let (length, body) = match (gzip, whole) {
        (false, _) => (spans.len(), spans.body(all)),
        (true, true) => {
            let gz = &c.files.gzip;
            (gz.len, Spans::whole(gz.len).body(gz.file.clone()))
        }
        (true, false) => {
            let spool = blocking(move || spans.gzip(&all).map_err(io_error)).await?;
            (spool.len(), spool.body())
        }
    };
    let mut r = base(status);
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/jsonl"),
    );
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    if gzip {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    if let Some(cr) = content_range {
        h.insert(
            header::CONTENT_RANGE,
            HeaderValue::from_str(&cr).expect("digits are a header value"),
        );
    }
    if !head {
        *r.body_mut() = body;
    }
    Ok(r)
}

/// Runs file work off the async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, ContentError> + Send + 'static,
) -> Result<T, ContentError> {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|e| Err(io_error(std::io::Error::other(e))))
}

fn io_error(source: std::io::Error) -> ContentError {
    ContentError::Request(source)
}

/// One `bytes=` range of a body of `len` bytes (`a-b`, `a-`, `-n`), inclusive; `None` when it
/// is not satisfiable or not a single byte range.
fn byte_range(spec: &str, len: u64) -> Option<(u64, u64)> {
    let r = spec.strip_prefix("bytes=")?.trim();
    if r.contains(',') || len == 0 {
        return None;
    }
    let (a, b) = r.split_once('-')?;
    let (a, b) = (a.trim(), b.trim());
    if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        if n == 0 {
            return None;
        }
        return Some((len.saturating_sub(n), len - 1));
    }
    let a: u64 = a.parse().ok()?;
    if a >= len {
        return None;
    }
    let b = if b.is_empty() {
        len - 1
    } else {
        b.parse::<u64>().ok()?.min(len - 1)
    };
    (a <= b).then_some((a, b))
}

const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110 IMF-fixdate).
pub fn http_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    let days = secs / 86_400;
    let (y, m, d) = crate::grammar::calendar::civil_from_days(days as i64);
    let rem = secs % 86_400;
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        DAYS[(days % 7) as usize],
        d,
        MONTHS[(m - 1) as usize],
        y,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The IMF-fixdate form of an HTTP date (what clients send back from `Last-Modified`).
pub fn parse_http_date(s: &str) -> Option<SystemTime> {
    let mut it = s.split_whitespace();
    let _day = it.next()?;
    let d: u32 = it.next()?.parse().ok()?;
    let month = it.next()?;
    let m = MONTHS.iter().position(|x| *x == month)? as u32 + 1;
    let y: i64 = it.next()?.parse().ok()?;
    let mut hms = it.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, mi, se) = (hms.next()??, hms.next()??, hms.next()??);
    if it.next()? != "GMT" {
        return None;
    }
    let days = crate::grammar::calendar::days_from_civil(y, m, d);
    let secs = u64::try_from(days).ok()? * 86_400 + h * 3600 + mi * 60 + se;
    Some(UNIX_EPOCH + Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_round_trip() {
        let t = UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(http_date(t), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(t));
        assert_eq!(parse_http_date("yesterday"), None);
        let now = UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        assert_eq!(parse_http_date(&http_date(now)), Some(now));
    }

    #[test]
    fn byte_ranges_as_serve_content() {
        assert_eq!(byte_range("bytes=0-99", 5039), Some((0, 99)));
        assert_eq!(byte_range("bytes=5000-", 5039), Some((5000, 5038)));
        assert_eq!(byte_range("bytes=-10", 5039), Some((5029, 5038)));
        assert_eq!(byte_range("bytes=0-99999", 5039), Some((0, 5038)));
        assert_eq!(byte_range("bytes=6000-", 5039), None);
        assert_eq!(byte_range("bytes=0-1,5-6", 5039), None);
        assert_eq!(byte_range("lines=1-2", 5039), None);
    }

    #[test]
    fn query_strings_decode() {
        assert_eq!(percent_decode("olm.bundle"), "olm.bundle");
        assert_eq!(percent_decode("a%2Fb+c"), "a/b c");
        // A `%` before a character of more than one byte, or at the end, stays as it is.
        assert_eq!(percent_decode("%a\u{e9}x"), "%a\u{e9}x");
        assert_eq!(percent_decode("%\u{e9}"), "%\u{e9}");
        assert_eq!(percent_decode("x%4"), "x%4");
        assert_eq!(percent_decode("%41%c3%a9"), "A\u{e9}");
    }
}
