//! Asking a registry's token server (the realm of its Bearer challenge) for a token, the two
//! ways distribution's client does:
//! - a user and password: basic auth on a GET with `service`, `scope` (repeated) and
//!   `account`; without a credential the same GET, anonymous;
//! - an identity token (docker's `identitytoken`, an OAuth2 refresh token): a POST with
//!   `grant_type=refresh_token`, `refresh_token`, `service`, `scope` and `client_id`.
//!
//! Errors never carry a secret, nor a token server's successful answer (which holds one).

use reqwest::header::CONTENT_TYPE;
use reqwest::{Client, RequestBuilder, StatusCode, Url};
use serde::Deserialize;

use super::auth::{Credential, Secret};
use super::registry::chain_text;

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

/// Asks the token server at `realm` for a token covering `scopes`
/// (`repository:<name>:pull,push`).
pub(crate) async fn fetch_token(
    http: &Client,
    realm: &str,
    service: Option<&str>,
    credential: Option<&Credential>,
    scopes: &[String],
) -> Result<Secret, TokenError> {
    let service = service.unwrap_or_default();
    let req = match credential {
        Some(Credential::IdentityToken { token, .. }) => {
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
        basic => {
            let mut url = Url::parse(realm).map_err(|e| TokenError::Protocol {
                url: realm.to_string(),
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
                if let Some(Credential::Basic { username, .. }) = basic
                    && !username.is_empty()
                {
                    q.append_pair("account", username);
                }
            }
            match basic {
                Some(Credential::Basic { username, password }) => {
                    http.get(url).basic_auth(username, Some(password.expose()))
                }
                _ => http.get(url),
            }
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
            url: realm.to_string(),
            status: status.as_u16(),
            detail: body_detail(res).await,
        });
    }
    let no_token = || TokenError::Protocol {
        url: realm.to_string(),
        what: "the token server's answer holds no token".into(),
    };
    let bytes = res.bytes().await.map_err(|e| TokenError::Http {
        url: realm.to_string(),
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
}
