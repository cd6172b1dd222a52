//! Registry credentials: `--creds user:pass`, then the podman/skopeo auth file
//! (`--authfile`, `REGISTRY_AUTH_FILE`, `${XDG_RUNTIME_DIR}/containers/auth.json`), then
//! docker's `~/.docker/config.json` (or `$DOCKER_CONFIG/config.json`).
//!
//! Secrets stay inside [`Credentials`], whose `Debug` prints no password; errors name the file
//! and the registry, never the value.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

/// A username and password (or token as password).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field("password", &"<redacted>")
            .finish()
    }
}

impl Credentials {
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials {
            username: username.into(),
            password: password.into(),
        }
    }

    pub fn password(&self) -> &str {
        &self.password
    }

    /// Parses `user:pass` as given to `--creds` (the password may contain `:`).
    pub fn parse(text: &str) -> Result<Self, AuthError> {
        match text.split_once(':') {
            Some((u, p)) if !u.is_empty() => Ok(Credentials::new(u, p)),
            _ => Err(AuthError::BadCreds),
        }
    }
}

/// Where the credentials for a registry came from (shown in errors, without the secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Flag,
    File(PathBuf),
    Anonymous,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag => write!(f, "--creds"),
            Source::File(p) => write!(f, "{}", p.display()),
            Source::Anonymous => write!(f, "no credentials (anonymous)"),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("--creds: expected USER:PASSWORD")]
    BadCreds,
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a valid auth file: {reason}")]
    Format { path: PathBuf, reason: String },
    #[error("{path}: auths.{registry}.auth: not base64 of USER:PASSWORD")]
    BadAuthField { path: PathBuf, registry: String },
}

#[derive(Deserialize, Default)]
struct AuthFile {
    #[serde(default)]
    auths: BTreeMap<String, AuthEntry>,
}

#[derive(Deserialize, Default)]
struct AuthEntry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
}

/// The auth files to look in, in order, from the environment.
pub fn default_auth_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    if let Ok(p) = std::env::var("REGISTRY_AUTH_FILE")
        && !p.is_empty()
    {
        files.push(PathBuf::from(p));
    }
    if let Ok(dir) = std::env::var("XDG_RUNTIME_DIR")
        && !dir.is_empty()
    {
        files.push(Path::new(&dir).join("containers/auth.json"));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if let Some(home) = &home {
        files.push(home.join(".config/containers/auth.json"));
    }
    match std::env::var_os("DOCKER_CONFIG") {
        Some(d) if !d.is_empty() => files.push(PathBuf::from(d).join("config.json")),
        _ => {
            if let Some(home) = &home {
                files.push(home.join(".docker/config.json"));
            }
        }
    }
    files
}

/// The keys an auth file may use for `registry` (`host:port`): bare, with a scheme, and
/// docker.io's historical names.
fn candidate_keys(registry: &str) -> Vec<String> {
    let mut keys = vec![
        registry.to_string(),
        format!("https://{registry}"),
        format!("http://{registry}"),
        format!("https://{registry}/v1/"),
        format!("https://{registry}/v2/"),
    ];
    if matches!(
        registry,
        "docker.io" | "index.docker.io" | "registry-1.docker.io"
    ) {
        keys.push("https://index.docker.io/v1/".into());
        keys.push("docker.io".into());
        keys.push("index.docker.io".into());
    }
    keys
}

/// Looks up `registry` in one auth file. A missing file is `Ok(None)`.
pub fn lookup_file(path: &Path, registry: &str) -> Result<Option<Credentials>, AuthError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(AuthError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let file: AuthFile = serde_json::from_slice(&bytes).map_err(|e| AuthError::Format {
        path: path.to_path_buf(),
        // serde_json's message names line and column only, never the content.
        reason: e.to_string(),
    })?;
    for key in candidate_keys(registry) {
        let Some(entry) = file.auths.get(&key) else {
            continue;
        };
        if let (Some(u), Some(p)) = (&entry.username, &entry.password)
            && !u.is_empty()
        {
            return Ok(Some(Credentials::new(u.clone(), p.clone())));
        }
        if let Some(auth) = entry.auth.as_deref().filter(|a| !a.is_empty()) {
            let bad = || AuthError::BadAuthField {
                path: path.to_path_buf(),
                registry: key.clone(),
            };
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(auth.trim())
                .map_err(|_| bad())?;
            let text = String::from_utf8(decoded).map_err(|_| bad())?;
            let (u, p) = text.split_once(':').ok_or_else(bad)?;
            return Ok(Some(Credentials::new(u, p)));
        }
    }
    Ok(None)
}

/// Resolves the credentials for `registry`: the flag first, then each auth file in order.
pub fn resolve(
    registry: &str,
    creds: Option<&Credentials>,
    authfile: Option<&Path>,
) -> Result<(Option<Credentials>, Source), AuthError> {
    if let Some(c) = creds {
        return Ok((Some(c.clone()), Source::Flag));
    }
    let files = match authfile {
        Some(p) => vec![p.to_path_buf()],
        None => default_auth_files(),
    };
    for file in files {
        if let Some(c) = lookup_file(&file, registry)? {
            return Ok((Some(c), Source::File(file)));
        }
    }
    Ok((None, Source::Anonymous))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creds_flag_keeps_colons_in_passwords_and_hides_them() {
        let c = Credentials::parse("me:pa:ss").unwrap();
        assert_eq!(c.username, "me");
        assert_eq!(c.password(), "pa:ss");
        assert!(!format!("{c:?}").contains("pa:ss"));
        assert!(Credentials::parse("nocolon").is_err());
    }

    #[test]
    fn docker_config_base64_auth_and_podman_fields() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.json");
        let auth = base64::engine::general_purpose::STANDARD.encode("u1:s3cret");
        std::fs::write(
            &p,
            format!(
                r#"{{"auths":{{"https://127.0.0.1:5000":{{"auth":"{auth}"}},"quay.io":{{"username":"u2","password":"p2"}}}}}}"#
            ),
        )
        .unwrap();
        let c = lookup_file(&p, "127.0.0.1:5000").unwrap().unwrap();
        assert_eq!((c.username.as_str(), c.password()), ("u1", "s3cret"));
        let c = lookup_file(&p, "quay.io").unwrap().unwrap();
        assert_eq!(c.username, "u2");
        assert!(lookup_file(&p, "ghcr.io").unwrap().is_none());
        assert!(
            lookup_file(&dir.path().join("none.json"), "x")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn bad_auth_field_names_file_not_secret() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("auth.json");
        std::fs::write(&p, r#"{"auths":{"r.example":{"auth":"!!notbase64!!"}}}"#).unwrap();
        let err = lookup_file(&p, "r.example").unwrap_err().to_string();
        assert!(
            err.contains("auth.json") && err.contains("r.example"),
            "{err}"
        );
        assert!(!err.contains("notbase64"), "{err}");
    }
}
