//! Writing logins into an auth file, for `olm registry login` and `logout`: podman's entry form
//! (`"auths": {"host:port": {"auth": base64(user:pass)}}`), every other entry and field of the
//! file kept, the file replaced atomically with mode 0600 (its directory made 0700).

use std::path::Path;

use base64::Engine as _;
use serde_json::{Map, Value};

use super::file::{json_error, key_registry};
use super::{AuthError, Credentials};

/// Reads the file as a JSON object (an absent file is an empty one), with its `auths` object.
fn read(path: &Path) -> Result<Map<String, Value>, AuthError> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => {
            return Err(AuthError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let format = |reason: String| AuthError::Format {
        path: path.to_path_buf(),
        reason,
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice(&bytes).map_err(|e| format(json_error(&e)))? {
        Value::Object(top) => match top.get("auths") {
            None | Some(Value::Object(_) | Value::Null) => Ok(top),
            Some(_) => Err(format("`auths` is not an object".into())),
        },
        _ => Err(format("not a JSON object".into())),
    }
}

/// Tab-indented, as podman writes it.
fn write(path: &Path, top: &Map<String, Value>) -> Result<(), AuthError> {
    let mut bytes = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"\t");
    let mut ser = serde_json::Serializer::with_formatter(&mut bytes, formatter);
    serde::Serialize::serialize(top, &mut ser).map_err(|e| AuthError::Format {
        path: path.to_path_buf(),
        reason: json_error(&e),
    })?;
    crate::atomic_write::write_atomic_private(path, &bytes)?;
    Ok(())
}

/// Stores `creds` for `registry` (`host[:port]`, see [`super::registry_host`]) in the auth
/// file at `path`, creating it; other registries' entries and other fields are kept.
pub fn store_login(path: &Path, registry: &str, creds: &Credentials) -> Result<(), AuthError> {
    let mut top = read(path)?;
    let auth = base64::engine::general_purpose::STANDARD.encode(format!(
        "{}:{}",
        creds.username,
        creds.password()
    ));
    let auths = top
        .entry("auths")
        .or_insert_with(|| Value::Object(Map::new()));
    if auths.is_null() {
        *auths = Value::Object(Map::new());
    }
    if let Value::Object(auths) = auths {
        let mut entry = Map::new();
        entry.insert("auth".into(), Value::String(auth));
        auths.insert(registry.to_string(), Value::Object(entry));
    }
    write(path, &top)
}

/// Removes every `auths` entry for `registry` (its own key, and keys naming it with a scheme
/// or a `/v1/` path); returns whether there was one. The file is untouched when there was not.
pub fn remove_login(path: &Path, registry: &str) -> Result<bool, AuthError> {
    let mut top = read(path)?;
    let Some(Value::Object(auths)) = top.get_mut("auths") else {
        return Ok(false);
    };
    let want = key_registry(registry);
    let before = auths.len();
    auths.retain(|key, _| key != registry && key_registry(key) != want);
    if auths.len() == before {
        return Ok(false);
    }
    write(path, &top)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn login_keeps_other_entries_and_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new/containers/auth.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(
            &p,
            r#"{"auths":{"quay.io":{"auth":"eDp5"}},"credHelpers":{"gcr.io":"gcloud"},"psFormat":"x"}"#,
        )
        .unwrap();
        store_login(&p, "127.0.0.1:5000", &Credentials::new("me", "pw")).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["auths"]["quay.io"]["auth"], "eDp5");
        assert_eq!(v["auths"]["127.0.0.1:5000"]["auth"], "bWU6cHc=");
        assert_eq!(v["credHelpers"]["gcr.io"], "gcloud");
        assert_eq!(v["psFormat"], "x");
        assert!(text.contains("\n\t\"auths\""), "{text}");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);

        // Written in a directory that did not exist: made private too.
        let q = dir.path().join("fresh/containers/auth.json");
        store_login(&q, "r.example", &Credentials::new("me", "pw")).unwrap();
        let mode = std::fs::metadata(q.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
    }

    #[test]
    fn logout_removes_every_key_for_the_registry_only() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("auth.json");
        std::fs::write(
            &p,
            r#"{"auths":{"127.0.0.1:5000":{"auth":"a"},"https://127.0.0.1:5000/v1/":{"auth":"b"},"quay.io":{"auth":"c"}}}"#,
        )
        .unwrap();
        assert!(remove_login(&p, "127.0.0.1:5000").unwrap());
        let v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        assert_eq!(v["auths"].as_object().unwrap().len(), 1);
        assert!(!remove_login(&p, "127.0.0.1:5000").unwrap());
        assert!(!remove_login(&dir.path().join("absent.json"), "quay.io").unwrap());
    }

    #[test]
    fn a_file_that_is_not_an_auth_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("auth.json");
        std::fs::write(&p, r#"["s3cret"]"#).unwrap();
        let err = store_login(&p, "r", &Credentials::new("u", "p"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a JSON object"), "{err}");
        assert_eq!(std::fs::read(&p).unwrap(), br#"["s3cret"]"#);
    }
}
