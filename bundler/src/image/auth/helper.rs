//! Docker's credential helper protocol, the `get` half: the executable
//! `docker-credential-<name>` on PATH reads a server URL on stdin and answers
//! `{"ServerURL","Username","Secret"}` on stdout; a user name of `<token>` means the secret is
//! an identity token; "credentials not found in native keychain" means it holds nothing.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde::Deserialize;

use super::{Credential, Env, Secret};

/// What the helper protocol calls "not found" (docker-credential-helpers'
/// `ErrCredentialsNotFound`), printed by the helper on a failed `get`.
const NOT_FOUND: &str = "credentials not found in native keychain";

/// The user name a helper answers when its secret is an identity token.
const TOKEN_USER: &str = "<token>";

pub(super) enum HelperError {
    /// No executable `docker-credential-<name>` on PATH.
    Missing,
    /// It ran and failed; the detail is its own first line of output (or its exit status).
    Failed(String),
}

#[derive(Deserialize)]
struct Answer {
    #[serde(rename = "Username", default)]
    username: String,
    #[serde(rename = "Secret", default)]
    secret: String,
}

/// The server URL a helper is asked about: what `docker login` stores under (Docker Hub's
/// historical URL, else the registry's `host[:port]`).
fn server_url(registry: &str) -> &str {
    match registry {
        "docker.io" | "index.docker.io" | "registry-1.docker.io" => "https://index.docker.io/v1/",
        other => other,
    }
}

/// `docker-credential-<name>` in the directories of `PATH`, when it is an executable file.
fn program(name: &str, env: &Env) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    if name.is_empty() || name.contains('/') || name.contains('\0') {
        return None;
    }
    let file = format!("docker-credential-{name}");
    std::env::split_paths(env.path.as_deref()?)
        .map(|dir| dir.join(&file))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Asks helper `name` for `registry`'s credential. `Ok(None)`: it holds none.
pub(super) fn get(
    name: &str,
    registry: &str,
    env: &Env,
) -> Result<Option<Credential>, HelperError> {
    let program = program(name, env).ok_or(HelperError::Missing)?;
    let failed = |e: std::io::Error| HelperError::Failed(e.to_string());
    let spawn = || {
        Command::new(&program)
            .arg("get")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    };
    // A helper just written (by an installer, or a test) can be busy for a moment while
    // another process still holds it open for writing.
    let mut child = spawn();
    for _ in 0..20 {
        match &child {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {
                std::thread::sleep(std::time::Duration::from_millis(25));
                child = spawn();
            }
            _ => break,
        }
    }
    let mut child = child.map_err(failed)?;
    if let Some(mut stdin) = child.stdin.take() {
        // A helper that exits without reading its stdin shows up in its exit status.
        let _ = stdin.write_all(server_url(registry).as_bytes());
    }
    let out = child.wait_with_output().map_err(failed)?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        if stdout.trim() == NOT_FOUND || stderr.trim() == NOT_FOUND {
            return Ok(None);
        }
        let said = [stdout.as_ref(), stderr.as_ref()]
            .into_iter()
            .flat_map(str::lines)
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(200).collect::<String>());
        return Err(HelperError::Failed(match said {
            Some(line) => line,
            None => out.status.to_string(),
        }));
    }
    // The answer holds the secret: on a parse error say only that it was not the protocol.
    let answer: Answer = serde_json::from_slice(&out.stdout)
        .map_err(|_| HelperError::Failed("its answer is not the helper protocol's JSON".into()))?;
    if answer.secret.is_empty() {
        return Ok(None);
    }
    Ok(Some(if answer.username == TOKEN_USER {
        Credential::IdentityToken {
            username: String::new(),
            token: Secret::new(answer.secret),
        }
    } else {
        Credential::Basic {
            username: answer.username,
            password: Secret::new(answer.secret),
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// Writes `docker-credential-<name>` running `script` (sh) into `dir`.
    fn helper(dir: &Path, name: &str, script: &str) {
        use std::os::unix::fs::PermissionsExt as _;
        let p = dir.join(format!("docker-credential-{name}"));
        std::fs::write(&p, format!("#!/bin/sh\n{script}\n")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    fn env(dir: &Path) -> Env {
        Env {
            path: Some(dir.as_os_str().to_owned()),
            ..Env::default()
        }
    }

    #[test]
    fn answers_of_the_protocol() {
        let dir = tempfile::tempdir().unwrap();
        let env = env(dir.path());
        // Echoes the server URL it was asked about as the user name.
        helper(
            dir.path(),
            "echo",
            r#"[ "$1" = get ] || exit 3; url=$(cat); printf '{"ServerURL":"%s","Username":"%s","Secret":"pw"}' "$url" "$url""#,
        );
        helper(
            dir.path(),
            "token",
            r#"cat >/dev/null; echo '{"ServerURL":"x","Username":"<token>","Secret":"refresh"}'"#,
        );
        helper(
            dir.path(),
            "none",
            "cat >/dev/null; echo 'credentials not found in native keychain'; exit 1",
        );
        helper(
            dir.path(),
            "broken",
            "cat >/dev/null; echo 'keychain locked' >&2; exit 1",
        );
        helper(
            dir.path(),
            "garbage",
            "cat >/dev/null; echo 'Secret: s3cret'",
        );

        let Ok(Some(c)) = get("echo", "127.0.0.1:5000", &env) else {
            panic!("no answer")
        };
        assert_eq!(c.username(), "127.0.0.1:5000");
        let Ok(Some(c)) = get("echo", "registry-1.docker.io", &env) else {
            panic!("no answer")
        };
        assert_eq!(c.username(), "https://index.docker.io/v1/");
        assert!(matches!(
            get("token", "r", &env),
            Ok(Some(Credential::IdentityToken { .. }))
        ));
        assert!(matches!(get("none", "r", &env), Ok(None)));
        match get("broken", "r", &env) {
            Err(HelperError::Failed(d)) => assert_eq!(d, "keychain locked"),
            _ => panic!("a failing helper is an error"),
        }
        match get("garbage", "r", &env) {
            Err(HelperError::Failed(d)) => assert!(!d.contains("s3cret"), "{d}"),
            _ => panic!("a garbled answer is an error"),
        }
        assert!(matches!(
            get("absent", "r", &env),
            Err(HelperError::Missing)
        ));
        assert!(matches!(get("../x", "r", &env), Err(HelperError::Missing)));
    }
}
