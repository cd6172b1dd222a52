//! Where the auth files are, and what one of them holds for a registry.
//!
//! The file formats are podman's `auth.json` and docker's `config.json`, which share a shape:
//! `{"auths": {KEY: {"auth": base64(user:pass), "identitytoken": ...}}, "credHelpers":
//! {REGISTRY: NAME}, "credsStore": NAME}`. Keys are matched as containers-image matches them:
//! the registry exactly, else any key that normalises to it (`https://host/v1/` → `host`;
//! `docker.io`, `index.docker.io` and `registry-1.docker.io` are one registry).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Deserialize;

use super::helper::{self, HelperError};
use super::{AuthError, Credential, HelperFault, HelperVia, Missed, Secret, Source};

/// An auth file, with the name a user knows it by: `~/.docker/config.json`,
/// `$XDG_RUNTIME_DIR/containers/auth.json`, `--authfile /tmp/auth.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthFile {
    pub path: PathBuf,
    pub shown: String,
}

/// The environment the lookup depends on: read once from the process, or built by a test so
/// that the developer's own files are never read.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub home: Option<PathBuf>,
    pub xdg_runtime_dir: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub docker_config: Option<PathBuf>,
    pub registry_auth_file: Option<PathBuf>,
    /// `PATH`, searched for `docker-credential-<name>`.
    pub path: Option<OsString>,
    /// The user id, for `/run/containers/$UID/auth.json`.
    pub uid: u32,
}

impl Env {
    /// This process's environment; an empty variable counts as unset, as the Go tools read it.
    pub fn from_process() -> Env {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Env {
            home: var("HOME"),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            docker_config: var("DOCKER_CONFIG"),
            registry_auth_file: var("REGISTRY_AUTH_FILE"),
            path: std::env::var_os("PATH"),
            // SAFETY: getuid has no preconditions and cannot fail.
            uid: unsafe { libc::getuid() },
        }
    }

    /// The files a lookup reads, in order: the one the user named (`--authfile`, else
    /// `$REGISTRY_AUTH_FILE`) alone, or podman's two and docker's one.
    pub fn read_files(&self, authfile: Option<&Path>) -> Vec<AuthFile> {
        if let Some(named) = self.named_file(authfile) {
            return vec![named];
        }
        let mut files = vec![self.runtime_file()];
        match (&self.xdg_config_home, &self.home) {
            (Some(dir), _) => files.push(AuthFile {
                path: dir.join("containers/auth.json"),
                shown: "$XDG_CONFIG_HOME/containers/auth.json".into(),
            }),
            (None, Some(home)) => files.push(AuthFile {
                path: home.join(".config/containers/auth.json"),
                shown: "~/.config/containers/auth.json".into(),
            }),
            (None, None) => {}
        }
        if let Some(docker) = self.docker_file() {
            files.push(docker);
        }
        files
    }

    /// The file `olm registry login` writes and `logout` edits, as podman and skopeo choose
    /// it: `--authfile`, else `$REGISTRY_AUTH_FILE`, else `$DOCKER_CONFIG/config.json` when
    /// `DOCKER_CONFIG` is set, else `$XDG_RUNTIME_DIR/containers/auth.json`
    /// (`/run/containers/$UID/auth.json` without it).
    pub fn login_file(&self, authfile: Option<&Path>) -> AuthFile {
        if let Some(named) = self.named_file(authfile) {
            return named;
        }
        if self.docker_config.is_some()
            && let Some(docker) = self.docker_file()
        {
            return docker;
        }
        self.runtime_file()
    }

    fn named_file(&self, authfile: Option<&Path>) -> Option<AuthFile> {
        if let Some(p) = authfile {
            return Some(AuthFile {
                path: p.to_path_buf(),
                shown: format!("--authfile {}", p.display()),
            });
        }
        self.registry_auth_file.as_ref().map(|p| AuthFile {
            path: p.clone(),
            shown: format!("$REGISTRY_AUTH_FILE ({})", p.display()),
        })
    }

    fn runtime_file(&self) -> AuthFile {
        match &self.xdg_runtime_dir {
            Some(dir) => AuthFile {
                path: dir.join("containers/auth.json"),
                shown: "$XDG_RUNTIME_DIR/containers/auth.json".into(),
            },
            None => {
                let path = PathBuf::from(format!("/run/containers/{}/auth.json", self.uid));
                let shown = path.display().to_string();
                AuthFile { path, shown }
            }
        }
    }

    fn docker_file(&self) -> Option<AuthFile> {
        match (&self.docker_config, &self.home) {
            (Some(dir), _) => Some(AuthFile {
                path: dir.join("config.json"),
                shown: "$DOCKER_CONFIG/config.json".into(),
            }),
            (None, Some(home)) => Some(AuthFile {
                path: home.join(".docker/config.json"),
                shown: "~/.docker/config.json".into(),
            }),
            (None, None) => None,
        }
    }
}

/// The registry a user typed (`https://quay.io/`, `127.0.0.1:5000`, `https://index.docker.io/v1/`)
/// as the `host[:port]` auth files key it by; Docker Hub's names become `docker.io`.
pub fn registry_host(input: &str) -> Result<String, AuthError> {
    let bad = || AuthError::BadRegistry {
        input: input.to_string(),
    };
    let trimmed = input.trim();
    let bare = strip_scheme(trimmed).unwrap_or(trimmed);
    let bare = bare.trim_end_matches('/');
    let bare = bare
        .strip_suffix("/v1")
        .or_else(|| bare.strip_suffix("/v2"))
        .unwrap_or(bare);
    if bare.is_empty() || bare.contains('/') || bare.chars().any(char::is_whitespace) {
        return Err(bad());
    }
    Ok(canonical_host(bare).to_string())
}

fn strip_scheme(key: &str) -> Option<&str> {
    key.strip_prefix("https://")
        .or_else(|| key.strip_prefix("http://"))
}

/// Docker Hub's three names are one registry.
fn canonical_host(host: &str) -> &str {
    match host {
        "docker.io" | "index.docker.io" | "registry-1.docker.io" => "docker.io",
        other => other,
    }
}

/// The registry a key names: `https://host/v1/` and `http://host` → `host`; a key without a
/// scheme but with a path names a repository, not a registry (`None`).
pub(super) fn key_registry(key: &str) -> Option<&str> {
    let host = match strip_scheme(key) {
        Some(rest) => rest.split('/').next().unwrap_or(rest),
        None if key.contains('/') => return None,
        None => key,
    };
    Some(canonical_host(host))
}

/// The value for `registry` in a map keyed by registry: the exact key first, then any key
/// naming the same registry.
fn find<'a, V>(map: &'a BTreeMap<String, V>, registry: &str) -> Option<(&'a String, &'a V)> {
    map.get_key_value(registry).or_else(|| {
        let want = canonical_host(registry);
        map.iter().find(|(k, _)| key_registry(k) == Some(want))
    })
}

#[derive(Deserialize, Default)]
struct ConfigFile {
    #[serde(default)]
    auths: Option<BTreeMap<String, Entry>>,
    #[serde(default, rename = "credHelpers")]
    cred_helpers: Option<BTreeMap<String, String>>,
    #[serde(default, rename = "credsStore")]
    creds_store: Option<String>,
}

#[derive(Deserialize, Default)]
struct Entry {
    #[serde(default)]
    auth: Option<String>,
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    password: Option<String>,
    #[serde(default)]
    identitytoken: Option<String>,
}

impl Entry {
    /// The credential the entry holds: an identity token wins (with the user from `auth` or
    /// `username`), else a user and password from `auth` (docker, podman) or from
    /// `username`/`password`. An empty entry (docker writes `{}` when `credsStore` holds the
    /// secret) holds none.
    fn credential(&self, path: &Path, key: &str) -> Result<Option<Credential>, AuthError> {
        let (username, password) = match self.auth.as_deref().filter(|a| !a.is_empty()) {
            Some(auth) => decode_auth(auth).ok_or_else(|| AuthError::BadAuthField {
                path: path.to_path_buf(),
                key: key.to_string(),
            })?,
            None => (
                self.username.clone().unwrap_or_default(),
                self.password.clone().unwrap_or_default(),
            ),
        };
        if let Some(token) = self.identitytoken.as_deref().filter(|t| !t.is_empty()) {
            return Ok(Some(Credential::IdentityToken {
                username,
                token: Secret::new(token),
            }));
        }
        Ok(
            (!username.is_empty() && !password.is_empty()).then(|| Credential::Basic {
                username,
                password: Secret::new(password),
            }),
        )
    }
}

/// `base64(user:pass)`; the password keeps its colons, loses trailing NULs (as
/// containers-image reads it).
fn decode_auth(auth: &str) -> Option<(String, String)> {
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(auth.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (u, p) = text.split_once(':')?;
    Some((u.to_string(), p.trim_end_matches('\0').to_string()))
}

/// What a file gave for a registry.
pub(super) enum Lookup {
    Found(Credential, Source),
    Missed(Missed),
}

/// Reads `registry`'s credential from one auth file: `credHelpers`, then `auths`, then
/// `credsStore`. A missing file is [`Missed::Absent`]; an unreadable or malformed one, a
/// missing or failing helper, is an error.
pub(super) fn lookup(file: &AuthFile, registry: &str, env: &Env) -> Result<Lookup, AuthError> {
    let bytes = match std::fs::read(&file.path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Lookup::Missed(Missed::Absent));
        }
        Err(source) => {
            return Err(AuthError::Read {
                path: file.path.clone(),
                source,
            });
        }
    };
    let config: ConfigFile = serde_json::from_slice(&bytes).map_err(|e| AuthError::Format {
        path: file.path.clone(),
        reason: json_error(&e),
    })?;
    let run = |helper: &str, via: HelperVia| -> Result<Lookup, AuthError> {
        match helper::get(helper, registry, env) {
            Ok(Some(credential)) => Ok(Lookup::Found(
                credential,
                Source::Helper {
                    helper: helper.to_string(),
                    via,
                    file: file.shown.clone(),
                },
            )),
            Ok(None) => Ok(Lookup::Missed(Missed::HelperHadNone {
                helper: helper.to_string(),
            })),
            Err(e) => Err(AuthError::Helper(Box::new(HelperFault {
                helper: helper.to_string(),
                registry: registry.to_string(),
                via,
                file: file.shown.clone(),
                detail: match e {
                    HelperError::Missing => None,
                    HelperError::Failed(detail) => Some(detail),
                },
            }))),
        }
    };
    if let Some((_, helper)) = config.cred_helpers.as_ref().and_then(|h| find(h, registry)) {
        return run(helper, HelperVia::CredHelpers);
    }
    if let Some((key, entry)) = config.auths.as_ref().and_then(|a| find(a, registry))
        && let Some(credential) = entry.credential(&file.path, key)?
    {
        return Ok(Lookup::Found(
            credential,
            Source::Entry {
                file: file.shown.clone(),
                key: key.clone(),
            },
        ));
    }
    if let Some(store) = config.creds_store.as_deref().filter(|s| !s.is_empty()) {
        return run(store, HelperVia::CredsStore);
    }
    Ok(Lookup::Missed(Missed::NoEntry))
}

/// Where a JSON file went wrong, without quoting it: serde_json's own message may quote the
/// value it choked on, which in an auth file may be a secret.
pub(super) fn json_error(e: &serde_json::Error) -> String {
    let what = match e.classify() {
        serde_json::error::Category::Syntax => "invalid JSON",
        serde_json::error::Category::Eof => "unexpected end of the file",
        serde_json::error::Category::Data => "a field of the wrong type",
        serde_json::error::Category::Io => "read error",
    };
    format!("{what} at line {} column {}", e.line(), e.column())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_in(dir: &Path) -> Env {
        Env {
            home: Some(dir.join("home")),
            xdg_runtime_dir: Some(dir.join("run")),
            path: Some(OsString::new()),
            uid: 1000,
            ..Env::default()
        }
    }

    fn found(l: Lookup) -> (Credential, Source) {
        match l {
            Lookup::Found(c, s) => (c, s),
            Lookup::Missed(m) => panic!("nothing found: {m:?}"),
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn files_in_podman_and_docker_order() {
        let env = Env {
            home: Some("/h".into()),
            xdg_runtime_dir: Some("/run/user/7".into()),
            uid: 7,
            ..Env::default()
        };
        let shown: Vec<String> = env.read_files(None).into_iter().map(|f| f.shown).collect();
        assert_eq!(
            shown,
            [
                "$XDG_RUNTIME_DIR/containers/auth.json",
                "~/.config/containers/auth.json",
                "~/.docker/config.json"
            ]
        );
        let paths: Vec<PathBuf> = env.read_files(None).into_iter().map(|f| f.path).collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("/run/user/7/containers/auth.json"),
                PathBuf::from("/h/.config/containers/auth.json"),
                PathBuf::from("/h/.docker/config.json")
            ]
        );
        let bare = Env {
            uid: 7,
            xdg_config_home: Some("/c".into()),
            docker_config: Some("/d".into()),
            ..Env::default()
        };
        let paths: Vec<PathBuf> = bare.read_files(None).into_iter().map(|f| f.path).collect();
        assert_eq!(
            paths,
            [
                PathBuf::from("/run/containers/7/auth.json"),
                PathBuf::from("/c/containers/auth.json"),
                PathBuf::from("/d/config.json")
            ]
        );
        // A file the user names is the only one read, as in podman and skopeo.
        let named = Env {
            registry_auth_file: Some("/a.json".into()),
            ..env.clone()
        };
        assert_eq!(named.read_files(None).len(), 1);
        assert_eq!(
            named.read_files(Some(Path::new("/b.json")))[0].shown,
            "--authfile /b.json"
        );
    }

    #[test]
    fn login_file_follows_podman() {
        let mut env = Env {
            home: Some("/h".into()),
            xdg_runtime_dir: Some("/run/user/7".into()),
            uid: 7,
            ..Env::default()
        };
        assert_eq!(
            env.login_file(None).path,
            PathBuf::from("/run/user/7/containers/auth.json")
        );
        env.docker_config = Some("/d".into());
        assert_eq!(env.login_file(None).path, PathBuf::from("/d/config.json"));
        env.registry_auth_file = Some("/r.json".into());
        assert_eq!(env.login_file(None).path, PathBuf::from("/r.json"));
        assert_eq!(
            env.login_file(Some(Path::new("/f.json"))).path,
            PathBuf::from("/f.json")
        );
        env.xdg_runtime_dir = None;
        env.docker_config = None;
        env.registry_auth_file = None;
        assert_eq!(
            env.login_file(None).path,
            PathBuf::from("/run/containers/7/auth.json")
        );
    }

    #[test]
    fn keys_normalise_as_containers_image_does() {
        assert_eq!(
            key_registry("https://127.0.0.1:5000"),
            Some("127.0.0.1:5000")
        );
        assert_eq!(key_registry("http://quay.io/v2/"), Some("quay.io"));
        assert_eq!(
            key_registry("https://index.docker.io/v1/"),
            Some("docker.io")
        );
        assert_eq!(key_registry("registry-1.docker.io"), Some("docker.io"));
        assert_eq!(key_registry("quay.io/org/repo"), None);
        assert_eq!(registry_host("https://quay.io/").unwrap(), "quay.io");
        assert_eq!(
            registry_host("https://index.docker.io/v1/").unwrap(),
            "docker.io"
        );
        assert_eq!(registry_host("127.0.0.1:5000").unwrap(), "127.0.0.1:5000");
        assert!(registry_host("quay.io/org").is_err());
        assert!(registry_host("").is_err());
    }

    #[test]
    fn auths_entries_in_every_form() {
        let dir = tempfile::tempdir().unwrap();
        let env = env_in(dir.path());
        let p = dir.path().join("config.json");
        let auth = base64::engine::general_purpose::STANDARD.encode("u1:s3:cret");
        write(
            &p,
            &format!(
                r#"{{"auths":{{"https://127.0.0.1:5000":{{"auth":"{auth}"}},
                "quay.io":{{"username":"u2","password":"p2"}},
                "ghcr.io":{{"auth":"{auth}","identitytoken":"refresh-xyz"}},
                "https://index.docker.io/v1/":{{"auth":"{auth}"}},
                "empty.example":{{}}}}}}"#
            ),
        );
        let file = AuthFile {
            path: p.clone(),
            shown: "F".into(),
        };
        let (c, s) = found(lookup(&file, "127.0.0.1:5000", &env).unwrap());
        assert_eq!(
            c,
            Credential::Basic {
                username: "u1".into(),
                password: Secret::new("s3:cret")
            }
        );
        assert_eq!(s.to_string(), "F (auths entry https://127.0.0.1:5000)");
        let (c, _) = found(lookup(&file, "quay.io", &env).unwrap());
        assert_eq!(c.username(), "u2");
        let (c, _) = found(lookup(&file, "ghcr.io", &env).unwrap());
        assert_eq!(
            c,
            Credential::IdentityToken {
                username: "u1".into(),
                token: Secret::new("refresh-xyz")
            }
        );
        let (c, _) = found(lookup(&file, "registry-1.docker.io", &env).unwrap());
        assert_eq!(c.username(), "u1");
        assert!(matches!(
            lookup(&file, "empty.example", &env).unwrap(),
            Lookup::Missed(Missed::NoEntry)
        ));
        let absent = AuthFile {
            path: dir.path().join("none.json"),
            shown: "N".into(),
        };
        assert!(matches!(
            lookup(&absent, "x", &env).unwrap(),
            Lookup::Missed(Missed::Absent)
        ));
    }

    #[test]
    fn bad_files_name_the_file_never_the_secret() {
        let dir = tempfile::tempdir().unwrap();
        let env = env_in(dir.path());
        let p = dir.path().join("auth.json");
        let file = AuthFile {
            path: p.clone(),
            shown: "F".into(),
        };
        write(&p, r#"{"auths":{"r.example":{"auth":"!!notbase64!!"}}}"#);
        let err = lookup(&file, "r.example", &env).err().unwrap().to_string();
        assert!(
            err.contains("auth.json") && err.contains("r.example"),
            "{err}"
        );
        assert!(!err.contains("notbase64"), "{err}");
        // A wrong type: serde_json would quote the value; we do not.
        write(&p, r#"{"auths":"s3cret"}"#);
        let err = lookup(&file, "r.example", &env).err().unwrap().to_string();
        assert!(err.contains("line 1 column"), "{err}");
        assert!(!err.contains("s3cret"), "{err}");
    }

    #[test]
    fn a_missing_helper_is_an_error_naming_it_and_the_registry() {
        let dir = tempfile::tempdir().unwrap();
        let env = env_in(dir.path());
        let p = dir.path().join("config.json");
        write(&p, r#"{"credHelpers":{"127.0.0.1:5000":"nosuch"}}"#);
        let file = AuthFile {
            path: p,
            shown: "~/.docker/config.json".into(),
        };
        let err = lookup(&file, "127.0.0.1:5000", &env)
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            err,
            "127.0.0.1:5000: credential helper docker-credential-nosuch (credHelpers in \
             ~/.docker/config.json) is not on PATH"
        );
        // Another registry does not need the helper.
        assert!(matches!(
            lookup(&file, "quay.io", &env).unwrap(),
            Lookup::Missed(Missed::NoEntry)
        ));
    }
}
