//! The parts of the distribution auth flow that oci-client does not do, on plain reqwest so
//! they port to any HTTP client:
//! - trading an identity token (docker's `identitytoken`, an OAuth2 refresh token) for a
//!   bearer token: POST to the token server's realm with `grant_type=refresh_token`,
//!   `refresh_token`, `service`, `scope` and `client_id`;
//! - checking credentials against the registry's API root (`GET /v2/` through whatever it
//!   asks for: basic auth, or a bearer token from its token server), as `docker login` does.
//!
//! Errors never carry a secret, nor a token server's successful answer (which holds one).

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, WWW_AUTHENTICATE};
use reqwest::{Client, RequestBuilder, StatusCode, Url};
use serde::Deserialize;

use super::auth::{Credential, Secret};
use super::registry::chain_text;
use crate::grammar::www_authenticate::{self, Challenge};

/// The `client_id` sent with OAuth2 token requests (distribution requires one).
const CLIENT_ID: &str = "olm";

#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// The registry or its token server refused the credentials.
    #[error("the credentials were rejected ({0})")]
    Rejected(String),
    /// No answer; the detail (the HTTP client's error chain) names the URL.
    #[error("{detail}")]
    Http { url: String, detail: String },
    #[error("{url}: HTTP {status}{detail}")]
    Status {
        url: String,
        status: u16,
        detail: String,
    },
    #[error("{url}: {what}")]
    Protocol { url: String, what: String },
    #[error("cannot set up TLS: {0}")]
    Tls(String),
}

/// A registry's API root and how far to trust its certificate.
#[derive(Clone)]
pub struct Endpoint {
    base: String,
    ca_pem: Option<Vec<u8>>,
    insecure: bool,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("base", &self.base)
            .finish()
    }
}

/// The bearer challenge of a registry: where its token server is and what it calls itself.
struct Bearer {
    realm: String,
    service: Option<String>,
}

#[derive(Deserialize)]
struct TokenAnswer {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    access_token: Option<String>,
}

async fn send(req: RequestBuilder, url: &str) -> Result<reqwest::Response, TokenError> {
    req.send().await.map_err(|e| TokenError::Http {
        url: url.to_string(),
        detail: chain_text(&e),
    })
}

/// The start of an error answer's body, for the message (never called on a 2xx token answer).
async fn body_detail(res: reqwest::Response) -> String {
    let text = res.text().await.unwrap_or_default();
    let text: String = text.trim().chars().take(200).collect();
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

/// `application/x-www-form-urlencoded` text of `pairs` (reqwest's `Url` encodes query strings
/// that way).
fn form(pairs: &[(&str, &str)]) -> String {
    let mut url = Url::parse("http://form.invalid/").expect("a constant URL parses");
    url.query_pairs_mut().extend_pairs(pairs);
    url.query().unwrap_or_default().to_string()
}

/// The challenges of a 401: a bearer one first (it names the token server), else basic.
enum Asked {
    Basic,
    Bearer(Bearer),
}

fn asked(res: &reqwest::Response, url: &str) -> Result<Asked, TokenError> {
    let challenges: Vec<Challenge> = res
        .headers()
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(www_authenticate::parse)
        .collect();
    if let Some(c) = challenges.iter().find(|c| c.scheme == "bearer") {
        let realm = c.param("realm").ok_or_else(|| TokenError::Protocol {
            url: url.to_string(),
            what: "bearer challenge without a realm".into(),
        })?;
        return Ok(Asked::Bearer(Bearer {
            realm: realm.to_string(),
            service: c.param("service").map(str::to_string),
        }));
    }
    if challenges.iter().any(|c| c.scheme == "basic") {
        return Ok(Asked::Basic);
    }
    Err(TokenError::Protocol {
        url: url.to_string(),
        what: "401 without a basic or bearer challenge".into(),
    })
}

impl Endpoint {
    /// `scheme` is `http` or `https`; `ca_pem` holds extra CA certificates to trust. Docker
    /// Hub's names reach its API host, `registry-1.docker.io`.
    pub fn new(scheme: &str, registry: &str, ca_pem: Option<Vec<u8>>, insecure: bool) -> Self {
        let host = match registry {
            "docker.io" | "index.docker.io" => "registry-1.docker.io",
            other => other,
        };
        Endpoint {
            base: format!("{scheme}://{host}"),
            ca_pem,
            insecure,
        }
    }

    fn client(&self) -> Result<Client, TokenError> {
        let mut builder = Client::builder()
            .danger_accept_invalid_certs(self.insecure)
            .connect_timeout(Duration::from_secs(15))
            .timeout(Duration::from_secs(60))
            .user_agent(concat!("olm/", env!("CARGO_PKG_VERSION")));
        if let Some(pem) = &self.ca_pem {
            let certs = reqwest::Certificate::from_pem_bundle(pem)
                .map_err(|e| TokenError::Tls(chain_text(&e)))?;
            builder = builder.tls_certs_merge(certs);
        }
        builder.build().map_err(|e| TokenError::Tls(chain_text(&e)))
    }

    /// `GET /v2/` as `credential`: `Ok` when the registry lets it in (or needs no login).
    pub async fn check_login(&self, credential: &Credential) -> Result<(), TokenError> {
        let http = self.client()?;
        let url = format!("{}/v2/", self.base);
        let res = send(http.get(&url), &url).await?;
        let asked = match res.status() {
            s if s.is_success() => return Ok(()),
            StatusCode::UNAUTHORIZED => asked(&res, &url)?,
            s => {
                return Err(TokenError::Status {
                    url,
                    status: s.as_u16(),
                    detail: body_detail(res).await,
                });
            }
        };
        let req = match (asked, credential) {
            (Asked::Basic, Credential::Basic { username, password }) => {
                http.get(&url).basic_auth(username, Some(password.expose()))
            }
            (Asked::Basic, Credential::IdentityToken { .. }) => {
                return Err(TokenError::Protocol {
                    url,
                    what:
                        "the registry asks for a password; an identity token needs a token server"
                            .into(),
                });
            }
            (Asked::Bearer(bearer), credential) => {
                let token = fetch_token(&http, &bearer, credential, &[]).await?;
                http.get(&url).bearer_auth(token.expose())
            }
        };
        let res = send(req, &url).await?;
        match res.status() {
            s if s.is_success() => Ok(()),
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Err(TokenError::Rejected(format!(
                "GET {url}: HTTP {}",
                res.status().as_u16()
            ))),
            s => Err(TokenError::Status {
                url,
                status: s.as_u16(),
                detail: body_detail(res).await,
            }),
        }
    }

    /// A bearer token for `scopes` (`repository:<name>:pull,push`) from the token server the
    /// registry's `/v2/` challenge names.
    pub async fn bearer_token(
        &self,
        credential: &Credential,
        scopes: &[String],
    ) -> Result<Secret, TokenError> {
        let http = self.client()?;
        let url = format!("{}/v2/", self.base);
        let res = send(http.get(&url), &url).await?;
        if res.status() != StatusCode::UNAUTHORIZED {
            return Err(TokenError::Protocol {
                url,
                what: format!(
                    "answered HTTP {} where a token challenge was expected",
                    res.status().as_u16()
                ),
            });
        }
        match asked(&res, &url)? {
            Asked::Bearer(bearer) => fetch_token(&http, &bearer, credential, scopes).await,
            Asked::Basic => Err(TokenError::Protocol {
                url,
                what: "the registry asks for a password; an identity token needs a token server"
                    .into(),
            }),
        }
    }
}

/// Asks the token server for a token, the two ways distribution's client does: an identity
/// token as an OAuth2 refresh-token grant (POST), a user and password as basic auth on a GET
/// with `service`, `scope` (repeated) and `account`.
async fn fetch_token(
    http: &Client,
    bearer: &Bearer,
    credential: &Credential,
    scopes: &[String],
) -> Result<Secret, TokenError> {
    let realm = &bearer.realm;
    let service = bearer.service.as_deref().unwrap_or_default();
    let req = match credential {
        Credential::IdentityToken { token, .. } => {
            let scope = scopes.join(" ");
            let body = form(&[
                ("grant_type", "refresh_token"),
                ("refresh_token", token.expose()),
                ("service", service),
                ("scope", &scope),
                ("client_id", CLIENT_ID),
            ]);
            http.post(realm)
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(body)
        }
        Credential::Basic { username, password } => {
            let mut url = Url::parse(realm).map_err(|e| TokenError::Protocol {
                url: realm.clone(),
                what: format!("the challenge's realm is not a URL: {e}"),
            })?;
            {
                let mut q = url.query_pairs_mut();
                if !service.is_empty() {
                    q.append_pair("service", service);
                }
                for s in scopes {
                    q.append_pair("scope", s);
                }
                if !username.is_empty() {
                    q.append_pair("account", username);
                }
            }
            http.get(url).basic_auth(username, Some(password.expose()))
        }
    };
    let res = send(req, realm).await?;
    let status = res.status();
    if matches!(
        status,
        StatusCode::BAD_REQUEST | StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN
    ) {
        return Err(TokenError::Rejected(format!(
            "token server {realm}: HTTP {}{}",
            status.as_u16(),
            body_detail(res).await
        )));
    }
    if !status.is_success() {
        return Err(TokenError::Status {
            url: realm.clone(),
            status: status.as_u16(),
            detail: body_detail(res).await,
        });
    }
    let no_token = || TokenError::Protocol {
        url: realm.clone(),
        what: "the token server's answer holds no token".into(),
    };
    let bytes = res.bytes().await.map_err(|e| TokenError::Http {
        url: realm.clone(),
        detail: chain_text(&e),
    })?;
    let answer: TokenAnswer = serde_json::from_slice(&bytes).map_err(|_| no_token())?;
    answer
        .token
        .filter(|t| !t.is_empty())
        .or(answer.access_token.filter(|t| !t.is_empty()))
        .map(Secret::new)
        .ok_or_else(no_token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding() {
        assert_eq!(
            form(&[("scope", "repository:a/b:pull,push x"), ("k", "a&b=c")]),
            "scope=repository%3Aa%2Fb%3Apull%2Cpush+x&k=a%26b%3Dc"
        );
    }

    #[test]
    fn debug_shows_no_more_than_the_address() {
        let e = Endpoint::new("https", "r.example", Some(b"pem".to_vec()), false);
        assert_eq!(
            format!("{e:?}"),
            r#"Endpoint { base: "https://r.example" }"#
        );
        let hub = Endpoint::new("https", "docker.io", None, false);
        assert_eq!(hub.base, "https://registry-1.docker.io");
    }
}
