//! The catalog browser's pages, served from the files the index build rendered into the cache
//! (`<cache>/olm-serve.v1/ui/`): `/` (the grid), `/packages/<name>.html`, `/search.json`.
//! Each request streams one file from disk; the server holds none of them.
//!
//! Pages are data to this server, not code it vouches for: which pages it may serve (only
//! those this `olm` rendered itself) is decided by its caller, and the Content-Security-Policy
//! sent with them is the one compiled into the binary, handed in by the caller. Nothing in the
//! cache (`site.json` included) can loosen it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::Response;

use super::catalogd_files::Spans;

/// The pages' directory in the cache's own directory.
pub const UI_DIR: &str = "ui";
/// The file recording what the pages were made with.
pub const MARKER_FILE: &str = "site.json";
/// The search index.
pub const SEARCH_FILE: &str = "search.json";
/// The key in [`MARKER_FILE`] recording the pages' Content-Security-Policy (so pages made
/// under another policy count as stale); never read back as the policy to send.
pub const CSP_KEY: &str = "contentSecurityPolicy";

/// Whether `name` is a package page's file name as written (without `.html`): lowercase
/// letters, digits, `-`, `_` and `.`, not leading with `.`, at most 200 bytes. The one rule
/// both for naming pages and for which request paths can reach a file.
pub fn is_page_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

/// The rendered pages of one cache.
#[derive(Debug, Clone)]
pub struct UiFiles {
    dir: PathBuf,
    /// Sent with every page (a header also covers what a meta element cannot, and a page
    /// saved without it): the binary's policy, never one read from the cache.
    csp: HeaderValue,
}

impl UiFiles {
    /// The pages in the cache's own directory `content_dir`, sent with the policy `csp` (the
    /// binary's own); `None` when there are none or the policy is not a header value.
    pub fn open(content_dir: &Path, csp: &str) -> Option<UiFiles> {
        let dir = content_dir.join(UI_DIR);
        if !dir.join(MARKER_FILE).is_file() {
            return None;
        }
        let csp = HeaderValue::from_str(csp).ok()?;
        Some(UiFiles { dir, csp })
    }

    /// The file and content type of a request path, when it names a page.
    fn file(&self, path: &str) -> Option<(PathBuf, &'static str)> {
        const HTML: &str = "text/html; charset=utf-8";
        match path {
            "/" | "/index.html" => return Some((self.dir.join("index.html"), HTML)),
            "/search.json" => return Some((self.dir.join(SEARCH_FILE), "application/json")),
            _ => {}
        }
        let name = path.strip_prefix("/packages/")?.strip_suffix(".html")?;
        is_page_name(name).then(|| (self.dir.join("packages").join(format!("{name}.html")), HTML))
    }

    /// Answers a request outside catalogd's paths; `None` when it names no page.
    pub async fn answer(&self, method: &Method, path: &str) -> Option<Response> {
        let (file, content_type) = self.file(path)?;
        if method != Method::GET && method != Method::HEAD {
            let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed\n");
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
            return Some(r);
        }
        // Streamed from the file a chunk at a time, as catalogd's bodies are: a large grid
        // page is never held whole.
        let opened = std::fs::File::open(&file).and_then(|f| Ok((f.metadata()?.len(), f)));
        let (len, opened) = match opened {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::error!(file = %file.display(), error = %e, "catalog browser: reading a page");
                return Some(plain(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Internal Server Error\n",
                ));
            }
        };
        let mut r = match method == Method::HEAD {
            true => Response::new(Body::empty()),
            false => Response::new(Spans::whole(len).body(Arc::new(opened))),
        };
        let h = r.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
        h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        h.insert(
            "x-content-type-options",
            HeaderValue::from_static("nosniff"),
        );
        h.insert("x-frame-options", HeaderValue::from_static("DENY"));
        h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
        h.insert(header::CONTENT_SECURITY_POLICY, self.csp.clone());
        Some(r)
    }
}

fn plain(status: StatusCode, body: &'static str) -> Response {
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_page_paths_map_to_files() {
        let ui = UiFiles {
            dir: PathBuf::from("/c/ui"),
            csp: HeaderValue::from_static("default-src 'none'"),
        };
        let f = |p: &str| ui.file(p).map(|(f, _)| f);
        assert_eq!(f("/"), Some(PathBuf::from("/c/ui/index.html")));
        assert_eq!(
            f("/packages/etcd.html"),
            Some(PathBuf::from("/c/ui/packages/etcd.html"))
        );
        for bad in [
            "/packages/../site.json.html",
            "/packages/.x.html",
            "/packages/a/b.html",
            "/packages/%2e%2e.html",
            "/packages/.html",
            "/packages/A.html",
            "/site.json",
            "/catalogs/x",
            "/packages/etcd",
        ] {
            assert_eq!(f(bad), None, "{bad}");
        }
        let long = format!("/packages/{}.html", "a".repeat(201));
        assert_eq!(f(&long), None, "longer than any page written");
        assert!(f(&format!("/packages/{}.html", "a".repeat(200))).is_some());
    }
}
