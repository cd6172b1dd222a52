//! The distribution API calls, one method each: blobs (HEAD, streaming GET, mount, upload)
//! and manifests (GET, HEAD, PUT). Repositories are names on this client's registry.

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use reqwest::{Body, Response, StatusCode};

use super::super::limits;
use super::super::model::{self, ACCEPTED_MANIFEST_TYPES, ModelError};
use super::super::sha256_digest;
use super::RegistryError;
use super::client::{Access, RegistryClient};

/// A manifest as the registry served it: exact bytes, media type, digest (checked).
#[derive(Debug, Clone)]
pub struct FetchedManifest {
    pub bytes: Bytes,
    pub media_type: String,
    pub digest: String,
}

/// What a cross-repository mount did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mount {
    /// The blob is now linked into the repository.
    Mounted,
    /// The registry refused to mount and opened an upload session instead (its location).
    Upload(String),
}

/// The URL of an upload session location with `digest=` appended.
fn with_digest(location: &str, digest: &str) -> String {
    let sep = if location.contains('?') { '&' } else { '?' };
    format!("{location}{sep}digest={digest}")
}

impl RegistryClient {
    /// Whether `repo` has the blob (distribution links blobs per repository, so a blob in
    /// another repository of the same registry answers 404 here).
    pub async fn head_blob(&self, repo: &str, digest: &str) -> Result<bool, RegistryError> {
        let op = format!("HEAD blob {digest}");
        let url = self.url(&format!("/v2/{repo}/blobs/{digest}"));
        let resp = self
            .send(&op, &Access::Pull(repo), |h| h.head(&url))
            .await?;
        match resp.status() {
            s if s.is_success() => Ok(true),
            StatusCode::NOT_FOUND => Ok(false),
            _ => Err(self.status_error(&op, resp).await),
        }
    }

    /// Starts downloading a blob; the caller streams (and checks) the body.
    pub async fn get_blob(&self, repo: &str, digest: &str) -> Result<Response, RegistryError> {
        let op = format!("GET blob {digest}");
        let url = self.url(&format!("/v2/{repo}/blobs/{digest}"));
        let resp = self.send(&op, &Access::Pull(repo), |h| h.get(&url)).await?;
        match resp.status() {
            s if s.is_success() => Ok(resp),
            StatusCode::NOT_FOUND => Err(RegistryError::NotFound {
                reference: format!("{}/{repo}@{digest}", self.registry()),
            }),
            _ => Err(self.status_error(&op, resp).await),
        }
    }

    /// Asks the registry to link a blob of `from` into `repo` without uploading it.
    pub async fn mount_blob(
        &self,
        repo: &str,
        digest: &str,
        from: &str,
    ) -> Result<Mount, RegistryError> {
        let op = format!("mount blob {digest} from {from}");
        let url = self.url(&format!(
            "/v2/{repo}/blobs/uploads/?mount={digest}&from={from}"
        ));
        let resp = self
            .send(&op, &Access::Mount { to: repo, from }, |h| {
                h.post(&url).header(CONTENT_LENGTH, 0)
            })
            .await?;
        match resp.status() {
            StatusCode::CREATED => Ok(Mount::Mounted),
            StatusCode::ACCEPTED => Ok(Mount::Upload(self.location(&op, &resp)?)),
            _ => Err(self.status_error(&op, resp).await),
        }
    }

    fn location(&self, op: &str, resp: &Response) -> Result<String, RegistryError> {
        resp.headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(|l| self.absolute(l))
            .ok_or_else(|| RegistryError::Protocol {
                registry: self.registry().to_string(),
                op: op.to_string(),
                detail: "the registry opened an upload session without a Location".into(),
            })
    }

    /// Opens an upload session; returns its location.
    pub async fn start_upload(&self, repo: &str, digest: &str) -> Result<String, RegistryError> {
        let op = format!("upload blob {digest}");
        let url = self.url(&format!("/v2/{repo}/blobs/uploads/"));
        let resp = self
            .send(&op, &Access::Push(repo), |h| {
                h.post(&url).header(CONTENT_LENGTH, 0)
            })
            .await?;
        match resp.status() {
            StatusCode::ACCEPTED => self.location(&op, &resp),
            _ => Err(self.status_error(&op, resp).await),
        }
    }

    /// Sends the whole blob in the session's closing PUT (a monolithic upload).
    pub async fn put_blob(
        &self,
        repo: &str,
        location: &str,
        digest: &str,
        size: u64,
        body: Body,
    ) -> Result<(), RegistryError> {
        let op = format!("upload blob {digest}");
        let req = self
            .http()
            .put(with_digest(location, digest))
            .header(CONTENT_TYPE, "application/octet-stream")
            .header(CONTENT_LENGTH, size)
            .body(body);
        let resp = self.send_once(&op, &Access::Push(repo), req).await?;
        match resp.status() {
            StatusCode::CREATED | StatusCode::NO_CONTENT | StatusCode::OK => Ok(()),
            _ => Err(self.status_error(&op, resp).await),
        }
    }

    /// Streams the blob in one PATCH, then closes the session with an empty PUT: the upload
    /// docker and containers-image do, for registries that refuse a body on the PUT.
    pub async fn patch_blob(
        &self,
        repo: &str,
        location: &str,
        digest: &str,
        body: Body,
    ) -> Result<(), RegistryError> {
        let op = format!("upload blob {digest}");
        let req = self
            .http()
            .patch(location)
            .header(CONTENT_TYPE, "application/octet-stream")
            .body(body);
        let resp = self.send_once(&op, &Access::Push(repo), req).await?;
        if !resp.status().is_success() {
            return Err(self.status_error(&op, resp).await);
        }
        let next = match resp.headers().get(LOCATION) {
            Some(_) => self.location(&op, &resp)?,
            None => location.to_string(),
        };
        let url = with_digest(&next, digest);
        let resp = self
            .send(&op, &Access::Push(repo), |h| {
                h.put(&url).header(CONTENT_LENGTH, 0)
            })
            .await?;
        match resp.status() {
            StatusCode::CREATED | StatusCode::NO_CONTENT | StatusCode::OK => Ok(()),
            _ => Err(self.status_error(&op, resp).await),
        }
    }

    /// Fetches the manifest (or index) `reference` (a tag or digest) names, exactly as
    /// served, and checks its digest.
    pub async fn get_manifest(
        &self,
        repo: &str,
        reference: &str,
    ) -> Result<FetchedManifest, RegistryError> {
        let op = format!("GET manifest {repo}{}{reference}", sep(reference));
        let url = self.url(&format!("/v2/{repo}/manifests/{reference}"));
        let accept = ACCEPTED_MANIFEST_TYPES.join(", ");
        let resp = self
            .send(&op, &Access::Pull(repo), |h| {
                h.get(&url).header(ACCEPT, &accept)
            })
            .await?;
        if resp.status() == StatusCode::NOT_FOUND {
            return Err(RegistryError::NotFound {
                reference: format!("{}/{repo}{}{reference}", self.registry(), sep(reference)),
            });
        }
        if !resp.status().is_success() {
            return Err(self.status_error(&op, resp).await);
        }
        let header_type = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(';').next().unwrap_or(v).trim().to_string());
        let header_digest = resp
            .headers()
            .get("docker-content-digest")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let what = format!(
            "manifest {}/{repo}{}{reference}",
            self.registry(),
            sep(reference)
        );
        let bytes = self.bounded_body(&op, &what, resp).await?;
        let digest = sha256_digest(&bytes);
        let expected = if reference.starts_with("sha256:") {
            Some(reference.to_string())
        } else {
            header_digest.filter(|d| d.starts_with("sha256:"))
        };
        if let Some(expected) = expected
            && expected != digest
        {
            return Err(ModelError::DigestMismatch {
                what: format!(
                    "manifest {}/{repo}{}{reference}",
                    self.registry(),
                    sep(reference)
                ),
                expected,
                actual: digest,
            }
            .into());
        }
        let media_type = model::media_type_of(&bytes, header_type.as_deref());
        Ok(FetchedManifest {
            bytes,
            media_type,
            digest,
        })
    }

    /// A manifest response's body, refused past [`limits::MANIFEST_BYTES`]: at once when the
    /// server announces a larger length, else as soon as the stream passes the limit.
    async fn bounded_body(
        &self,
        op: &str,
        what: &str,
        mut resp: Response,
    ) -> Result<Bytes, RegistryError> {
        let limit = limits::MANIFEST_BYTES;
        if let Some(announced) = resp.content_length() {
            model::check_size(what, "a manifest", announced, limit)?;
        }
        let transport = |e: reqwest::Error| RegistryError::Transport {
            registry: self.registry().to_string(),
            op: op.to_string(),
            attempts: 1,
            detail: super::client::chain_text(&e),
        };
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(transport)? {
            body.extend_from_slice(&chunk);
            model::check_size(what, "a manifest", body.len() as u64, limit)?;
        }
        Ok(Bytes::from(body))
    }

    /// The digest `reference` currently names in `repo`, or `None` when it names nothing.
    pub async fn head_manifest(
        &self,
        repo: &str,
        reference: &str,
    ) -> Result<Option<String>, RegistryError> {
        let op = format!("HEAD manifest {repo}{}{reference}", sep(reference));
        let url = self.url(&format!("/v2/{repo}/manifests/{reference}"));
        let accept = ACCEPTED_MANIFEST_TYPES.join(", ");
        let resp = self
            .send(&op, &Access::Pull(repo), |h| {
                h.head(&url).header(ACCEPT, &accept)
            })
            .await?;
        match resp.status() {
            StatusCode::NOT_FOUND => Ok(None),
            s if s.is_success() => {
                let digest = resp
                    .headers()
                    .get("docker-content-digest")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string);
                match digest {
                    Some(d) => Ok(Some(d)),
                    // Without the header only a GET tells.
                    None => Ok(Some(self.get_manifest(repo, reference).await?.digest)),
                }
            }
            _ => Err(self.status_error(&op, resp).await),
        }
    }

    /// The tags of `repo` (empty when the repository does not exist), page after page as the
    /// registry's `Link` header leads, each page bounded like a manifest.
    pub async fn list_tags(&self, repo: &str) -> Result<Vec<String>, RegistryError> {
        /// Pages followed at most: a registry that keeps linking is refused, not followed.
        const PAGES: usize = 1000;
        #[derive(serde::Deserialize)]
        struct Page {
            #[serde(default)]
            tags: Option<Vec<String>>,
        }
        let op = format!("GET tags {repo}");
        let mut url = self.url(&format!("/v2/{repo}/tags/list?n=1000"));
        let mut tags = Vec::new();
        for _ in 0..PAGES {
            let resp = self.send(&op, &Access::Pull(repo), |h| h.get(&url)).await?;
            if resp.status() == StatusCode::NOT_FOUND {
                return Ok(tags);
            }
            if !resp.status().is_success() {
                return Err(self.status_error(&op, resp).await);
            }
            let next = resp
                .headers()
                .get(reqwest::header::LINK)
                .and_then(|v| v.to_str().ok())
                .and_then(next_link)
                .map(|l| self.absolute(&l));
            // Credentials go to this registry only: a link elsewhere is not followed.
            if let Some(n) = &next
                && !n.starts_with(&format!("{}/", self.url("")))
            {
                return Err(RegistryError::Protocol {
                    registry: self.registry().to_string(),
                    op,
                    detail: format!("the tag list links to another server: {n}"),
                });
            }
            let what = format!("tag list of {}/{repo}", self.registry());
            let body = self.bounded_body(&op, &what, resp).await?;
            let page: Page =
                serde_json::from_slice(&body).map_err(|e| RegistryError::Protocol {
                    registry: self.registry().to_string(),
                    op: op.clone(),
                    detail: format!("the tag list is not JSON of the distribution API: {e}"),
                })?;
            tags.extend(page.tags.unwrap_or_default());
            match next {
                Some(n) => url = n,
                None => return Ok(tags),
            }
        }
        Err(RegistryError::Protocol {
            registry: self.registry().to_string(),
            op,
            detail: format!("the tag list goes on past {PAGES} pages"),
        })
    }

    /// Deletes the manifest `digest` from `repo` (the registry drops the tags naming it too).
    /// `false` when it was not there.
    pub async fn delete_manifest(&self, repo: &str, digest: &str) -> Result<bool, RegistryError> {
        let op = format!("DELETE manifest {repo}@{digest}");
        let url = self.url(&format!("/v2/{repo}/manifests/{digest}"));
        let resp = self
            .send(&op, &Access::Delete(repo), |h| h.delete(&url))
            .await?;
        match resp.status() {
            StatusCode::NOT_FOUND => Ok(false),
            s if s.is_success() => Ok(true),
            StatusCode::METHOD_NOT_ALLOWED => Err(RegistryError::Protocol {
                registry: self.registry().to_string(),
                op,
                detail: "the registry does not allow deleting (HTTP 405); a distribution registry needs storage.delete.enabled: true (REGISTRY_STORAGE_DELETE_ENABLED=true)".into(),
            }),
            _ => Err(self.status_error(&op, resp).await),
        }
    }

    /// Writes manifest bytes (exactly as hashed) under `reference` (a tag or their digest).
    pub async fn put_manifest(
        &self,
        repo: &str,
        reference: &str,
        bytes: &Bytes,
        media_type: &str,
    ) -> Result<(), RegistryError> {
        let op = format!("push manifest {repo}{}{reference}", sep(reference));
        let url = self.url(&format!("/v2/{repo}/manifests/{reference}"));
        let resp = self
            .send(&op, &Access::Push(repo), |h| {
                h.put(&url)
                    .header(CONTENT_TYPE, media_type)
                    .body(bytes.clone())
            })
            .await?;
        if resp.status().is_success() {
            Ok(())
        } else {
            Err(self.status_error(&op, resp).await)
        }
    }
}

/// `@` before a digest, `:` before a tag.
/// The target of a `Link: <url>; rel="next"` header.
fn next_link(header: &str) -> Option<String> {
    header.split(',').find_map(|part| {
        let (target, params) = part.trim().split_once(';')?;
        params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"")
            .then(|| {
                target
                    .trim()
                    .trim_start_matches('<')
                    .trim_end_matches('>')
                    .to_string()
            })
    })
}

fn sep(reference: &str) -> char {
    if reference.contains(':') { '@' } else { ':' }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_page_is_the_link_marked_next() {
        assert_eq!(
            next_link(r#"</v2/a/tags/list?last=x&n=2>; rel="next""#).as_deref(),
            Some("/v2/a/tags/list?last=x&n=2")
        );
        assert_eq!(
            next_link(r#"</p>; rel="prev", </n>; rel = "next""#).as_deref(),
            Some("/n")
        );
        assert_eq!(next_link(r#"</p>; rel="prev""#), None);
    }

    #[test]
    fn digest_goes_after_existing_query() {
        assert_eq!(
            with_digest("http://r/v2/a/blobs/uploads/u1?_state=x", "sha256:ab"),
            "http://r/v2/a/blobs/uploads/u1?_state=x&digest=sha256:ab"
        );
        assert_eq!(
            with_digest("http://r/v2/a/blobs/uploads/u1", "sha256:ab"),
            "http://r/v2/a/blobs/uploads/u1?digest=sha256:ab"
        );
    }
}
