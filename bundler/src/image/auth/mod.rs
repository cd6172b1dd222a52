//! Registry credentials, found where podman, skopeo and docker keep them.
//!
//! For a registry (`host[:port]`) the lookup goes, in order:
//! 1. `--creds USER:PASSWORD`;
//! 2. `--authfile FILE`, else `$REGISTRY_AUTH_FILE`: that file only, as containers-image reads
//!    a file the user named;
//! 3. otherwise `$XDG_RUNTIME_DIR/containers/auth.json` (`/run/containers/$UID/auth.json`
//!    without it), `${XDG_CONFIG_HOME:-~/.config}/containers/auth.json`, then docker's
//!    `$DOCKER_CONFIG/config.json` or `~/.docker/config.json`.
//!
//! In each file: `credHelpers[registry]` (a credential helper), then `auths[registry]` (`auth`,
//! `username`/`password`, `identitytoken`), then `credsStore` (a helper for every registry).
//! The first file that yields a credential wins; the files that did not are kept in [`Tried`]
//! for the error a 401 gets.
//!
//! Secrets stay inside [`Secret`], whose `Debug` prints none of them; errors, [`Source`] and
//! [`Tried`] name files, helpers and registries, never a value.

mod file;
mod helper;
mod store;

use std::fmt;
use std::path::PathBuf;

pub use file::{AuthFile, Env, registry_host};
pub use store::{remove_login, store_login};

use crate::atomic_write::WriteError;

/// A password or token. `Debug` shows `<redacted>` and there is no `Display`, so a secret
/// reaches output only through [`Secret::expose`], at the one place that sends it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The value, for an `Authorization` header, a token request or an auth file.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// A user name and password as given to `--creds` (or typed at `olm registry login`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    password: Secret,
}

impl Credentials {
    pub fn new(username: impl Into<String>, password: impl Into<String>) -> Self {
        Credentials {
            username: username.into(),
            password: Secret::new(password),
        }
    }

    pub fn password(&self) -> &str {
        self.password.expose()
    }

    /// Parses `user:pass` as given to `--creds` (the password may contain `:`).
    pub fn parse(text: &str) -> Result<Self, AuthError> {
        match text.split_once(':') {
            Some((u, p)) if !u.is_empty() => Ok(Credentials::new(u, p)),
            _ => Err(AuthError::BadCreds),
        }
    }
}

/// What a registry is shown to prove who we are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// A user name and password (or a token used as one): HTTP basic auth, or sent to the
    /// registry's token server for a bearer token.
    Basic { username: String, password: Secret },
    /// An OAuth2 refresh token (docker's `identitytoken`, or a helper's answer with the user
    /// name `<token>`): the registry's token server trades it for bearer tokens (POST to the
    /// realm with `grant_type=refresh_token`).
    IdentityToken { username: String, token: Secret },
}

impl Credential {
    pub fn username(&self) -> &str {
        match self {
            Credential::Basic { username, .. } | Credential::IdentityToken { username, .. } => {
                username
            }
        }
    }
}

impl From<&Credentials> for Credential {
    fn from(c: &Credentials) -> Self {
        Credential::Basic {
            username: c.username.clone(),
            password: c.password.clone(),
        }
    }
}

/// Which part of an auth file named a credential helper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HelperVia {
    /// `credHelpers[registry]`: this registry's helper.
    CredHelpers,
    /// `credsStore`: the helper for every registry.
    CredsStore,
}

impl fmt::Display for HelperVia {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            HelperVia::CredHelpers => "credHelpers",
            HelperVia::CredsStore => "credsStore",
        })
    }
}

/// Where a credential came from (shown in errors, without the secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `--creds`.
    Flag,
    /// An `auths` entry: the file as the user knows it (`~/.docker/config.json`) and its key.
    Entry { file: String, key: String },
    /// The credential helper `docker-credential-<helper>`, named in `file`.
    Helper {
        helper: String,
        via: HelperVia,
        file: String,
    },
    /// Nothing found: anonymous access.
    Anonymous,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Flag => write!(f, "--creds"),
            Source::Entry { file, key } => write!(f, "{file} (auths entry {key})"),
            Source::Helper { helper, via, file } => {
                write!(f, "docker-credential-{helper} ({via} in {file})")
            }
            Source::Anonymous => write!(f, "no credentials (anonymous)"),
        }
    }
}

/// Why one auth file gave no credential.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missed {
    /// The file does not exist.
    Absent,
    /// Neither `credHelpers`, `auths` nor `credsStore` has anything for the registry.
    NoEntry,
    /// The helper the file names answered that it holds nothing for the registry.
    HelperHadNone { helper: String },
}

/// The auth files a lookup read without finding a credential, in order: what the error for a
/// 401 lists, so a user sees where `olm` looked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tried {
    registry: String,
    files: Vec<(String, Missed)>,
}

impl Tried {
    fn new(registry: &str) -> Self {
        Tried {
            registry: registry.to_string(),
            files: Vec::new(),
        }
    }

    pub fn registry(&self) -> &str {
        &self.registry
    }

    /// Each file as the user knows it, and why it gave nothing.
    pub fn files(&self) -> &[(String, Missed)] {
        &self.files
    }
}

/// `no credentials for 127.0.0.1:5000 in $XDG_RUNTIME_DIR/containers/auth.json (absent),
/// ~/.docker/config.json (credHelpers/auths/credsStore)`.
impl fmt::Display for Tried {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no credentials for {}", self.registry)?;
        for (i, (file, missed)) in self.files.iter().enumerate() {
            f.write_str(if i == 0 { " in " } else { ", " })?;
            match missed {
                Missed::Absent => write!(f, "{file} (absent)")?,
                Missed::NoEntry => write!(f, "{file} (credHelpers/auths/credsStore)")?,
                Missed::HelperHadNone { helper } => {
                    write!(f, "{file} (docker-credential-{helper} has none)")?
                }
            }
        }
        Ok(())
    }
}

/// A credential helper that is missing or failed: which one, named where, for which registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelperFault {
    pub helper: String,
    pub registry: String,
    pub via: HelperVia,
    pub file: String,
    /// The helper's own first line of output; `None`: it is not on PATH.
    pub detail: Option<String>,
}

impl fmt::Display for HelperFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let HelperFault {
            helper,
            registry,
            via,
            file,
            detail,
        } = self;
        write!(
            f,
            "{registry}: credential helper docker-credential-{helper} ({via} in {file}) "
        )?;
        match detail {
            None => write!(f, "is not on PATH"),
            Some(d) => write!(f, "failed: {d}"),
        }
    }
}

/// What the user passed: `--creds` and `--authfile`.
#[derive(Debug, Clone, Default)]
pub struct AuthOptions {
    pub creds: Option<Credentials>,
    pub authfile: Option<PathBuf>,
}

/// The outcome of a lookup: the credential (none: anonymous), where it came from, and the
/// files read before it.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub credential: Option<Credential>,
    pub source: Source,
    pub tried: Tried,
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
    #[error("{path}: auths entry {key}: `auth` is not base64 of USER:PASSWORD")]
    BadAuthField { path: PathBuf, key: String },
    #[error("{0}")]
    Helper(Box<HelperFault>),
    #[error("{input:?}: expected a registry as host[:port] (no repository path)")]
    BadRegistry { input: String },
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Looks up the credential for `registry` (`host[:port]`) in this process's environment.
pub fn resolve(registry: &str, opts: &AuthOptions) -> Result<Resolved, AuthError> {
    resolve_in(registry, opts, &Env::from_process())
}

/// [`resolve`] with the environment given (tests pass their own, never the developer's).
pub fn resolve_in(registry: &str, opts: &AuthOptions, env: &Env) -> Result<Resolved, AuthError> {
    let mut tried = Tried::new(registry);
    if let Some(c) = &opts.creds {
        return Ok(Resolved {
            credential: Some(c.into()),
            source: Source::Flag,
            tried,
        });
    }
    for auth_file in env.read_files(opts.authfile.as_deref()) {
        match file::lookup(&auth_file, registry, env)? {
            file::Lookup::Found(credential, source) => {
                tracing::debug!(registry, %source, "credentials found");
                return Ok(Resolved {
                    credential: Some(credential),
                    source,
                    tried,
                });
            }
            file::Lookup::Missed(missed) => tried.files.push((auth_file.shown, missed)),
        }
    }
    Ok(Resolved {
        credential: None,
        source: Source::Anonymous,
        tried,
    })
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
        assert!(!format!("{:?}", Credential::from(&c)).contains("pa:ss"));
        assert!(Credentials::parse("nocolon").is_err());
        assert!(Credentials::parse(":pass").is_err());
    }

    #[test]
    fn tried_reads_as_a_sentence() {
        let mut t = Tried::new("127.0.0.1:5000");
        assert_eq!(t.to_string(), "no credentials for 127.0.0.1:5000");
        t.files.push((
            "$XDG_RUNTIME_DIR/containers/auth.json".into(),
            Missed::Absent,
        ));
        t.files
            .push(("~/.docker/config.json".into(), Missed::NoEntry));
        t.files.push((
            "--authfile a.json".into(),
            Missed::HelperHadNone {
                helper: "pass".into(),
            },
        ));
        assert_eq!(
            t.to_string(),
            "no credentials for 127.0.0.1:5000 in $XDG_RUNTIME_DIR/containers/auth.json (absent), \
             ~/.docker/config.json (credHelpers/auths/credsStore), \
             --authfile a.json (docker-credential-pass has none)"
        );
    }

    #[test]
    fn the_flag_wins_and_reads_no_file() {
        let env = Env {
            registry_auth_file: Some("/nonexistent/auth.json".into()),
            ..Env::default()
        };
        let opts = AuthOptions {
            creds: Some(Credentials::new("u", "p")),
            authfile: None,
        };
        let r = resolve_in("r.example", &opts, &env).unwrap();
        assert_eq!(r.source, Source::Flag);
        assert!(r.tried.files().is_empty());
    }
}
