//! `olm` against a real registry (distribution 2.8) in its three variants, checked with skopeo
//! as the independent client: push bundle and operator images, inspect and copy them with
//! skopeo, pull them back with olm, compare digests; re-push uploads nothing; wrong password;
//! a registry killed mid-push.

#[path = "support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use registry::{PASSWORD, Registry, Variant, have, skopeo};
use sha2::{Digest as _, Sha256};

fn olm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
    // Keep the auth lookups away from the developer's own files.
    c.env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env("XDG_RUNTIME_DIR", "/nonexistent")
        .env("HOME", "/nonexistent")
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("OLM_REGISTRY_CREDS");
    c
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/image")
        .join(name)
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn digest_of(pinned: &str) -> String {
    pinned
        .trim()
        .rsplit_once('@')
        .map(|(_, d)| d.to_string())
        .unwrap_or_else(|| panic!("no digest in {pinned:?}"))
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// The digest skopeo's OCI layout records for `tag`.
fn layout_digest(dir: &Path, tag: &str) -> String {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("index.json")).unwrap()).unwrap();
    index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .unwrap_or_else(|| panic!("no {tag} in {index}"))["digest"]
        .as_str()
        .unwrap()
        .to_string()
}

fn push_bundle(reg: &Registry, repo_tag: &str) -> Output {
    olm()
        .args(["bundle", "build"])
        .arg(fixture("bundle"))
        .args(["-t", &reg.image(repo_tag), "--push"])
        .args(reg.olm_args())
        .output()
        .unwrap()
}

/// Checks one pushed image with skopeo (inspect, raw digest, copy to a layout) and with
/// olm (pull back to a layout), all against `digest`.
fn check_with_skopeo_and_pull(reg: &Registry, repo_tag: &str, digest: &str) -> serde_json::Value {
    let tmp = tempfile::tempdir().unwrap();
    let docker_ref = format!("docker://{}", reg.image(repo_tag));

    let mut args = vec!["inspect".to_string(), "--raw".into()];
    args.extend(reg.skopeo_inspect_args());
    args.push(docker_ref.clone());
    let raw = skopeo(&args);
    assert!(
        raw.status.success(),
        "skopeo inspect --raw: {}",
        String::from_utf8_lossy(&raw.stderr)
    );
    assert_eq!(
        sha256(&raw.stdout),
        digest,
        "manifest bytes hash to the digest olm printed"
    );

    let mut args = vec!["inspect".to_string()];
    args.extend(reg.skopeo_inspect_args());
    args.push(docker_ref.clone());
    let info = skopeo(&args);
    assert!(
        info.status.success(),
        "skopeo inspect: {}",
        String::from_utf8_lossy(&info.stderr)
    );
    let info: serde_json::Value = serde_json::from_slice(&info.stdout).unwrap();
    assert_eq!(info["Digest"], digest);

    let sk_layout = tmp.path().join("skopeo");
    let mut args = vec!["copy".to_string()];
    args.extend(reg.skopeo_src_args());
    args.push(docker_ref);
    args.push(format!("oci:{}:copied", sk_layout.display()));
    let copy = skopeo(&args);
    assert!(
        copy.status.success(),
        "skopeo copy: {}",
        String::from_utf8_lossy(&copy.stderr)
    );
    assert_eq!(layout_digest(&sk_layout, "copied"), digest);

    let olm_layout = tmp.path().join("olm");
    let pulled = ok(
        olm()
            .args(["image", "pull", &reg.image(repo_tag)])
            .arg(format!("oci:{}:pulled", olm_layout.display()))
            .args(reg.olm_args())
            .output()
            .unwrap(),
        "olm image pull",
    );
    assert_eq!(digest_of(&pulled), digest);
    assert_eq!(layout_digest(&olm_layout, "pulled"), digest);

    // olm reads skopeo's layout too and gets the same digest.
    let insp = ok(
        olm()
            .args(["image", "inspect"])
            .arg(format!("oci:{}:copied", sk_layout.display()))
            .output()
            .unwrap(),
        "olm image inspect (skopeo layout)",
    );
    let insp: serde_json::Value = serde_json::from_str(&insp).unwrap();
    assert_eq!(insp["Digest"], digest);
    info
}

fn roundtrip(variant: Variant) {
    if !have("skopeo") {
        return;
    }
    let Some(reg) = Registry::start(variant) else {
        return;
    };

    // Bundle image.
    let out = push_bundle(&reg, "test/bundle:v1");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let bundle_digest = digest_of(&ok(out, "olm bundle build --push"));
    assert!(stderr.contains("pushed 2 of 2 blobs"), "{stderr}");
    let info = check_with_skopeo_and_pull(&reg, "test/bundle:v1", &bundle_digest);
    assert_eq!(
        info["Labels"]["operators.operatorframework.io.bundle.package.v1"],
        "cockroachdb"
    );

    // Operator image from a dynamic binary, with --digestfile.
    let tmp = tempfile::tempdir().unwrap();
    let digestfile = tmp.path().join("digest");
    let out = olm()
        .args(["image", "build", "--binary", "/bin/true"])
        .args([
            "-t",
            &reg.image("test/operator:v1"),
            "--push",
            "--digestfile",
        ])
        .arg(&digestfile)
        .args(["--source", "https://example.com/op", "--revision", "abc123"])
        .args(reg.olm_args())
        .output()
        .unwrap();
    let op_digest = digest_of(&ok(out, "olm image build --push"));
    assert_eq!(std::fs::read_to_string(&digestfile).unwrap(), op_digest);
    let info = check_with_skopeo_and_pull(&reg, "test/operator:v1", &op_digest);
    assert_eq!(info["Architecture"], "amd64");
    assert_eq!(
        info["Labels"]["org.opencontainers.image.revision"],
        "abc123"
    );

    // An unchanged re-push uploads no blob: the client's report, and the registry's log has
    // no new upload session.
    let uploads_before = reg.log_text().matches("blobs/uploads").count();
    let out = push_bundle(&reg, "test/bundle:v1");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(digest_of(&ok(out, "re-push")), bundle_digest);
    assert!(stderr.contains("pushed 0 of 2 blobs"), "{stderr}");
    assert!(stderr.contains("manifest unchanged"), "{stderr}");
    assert_eq!(
        reg.log_text().matches("blobs/uploads").count(),
        uploads_before
    );

    // olm image copy within the registry keeps the digest.
    let copied = ok(
        olm()
            .args([
                "image",
                "copy",
                &reg.image("test/bundle:v1"),
                &reg.image("other/bundle:v2"),
            ])
            .args(reg.olm_args())
            .output()
            .unwrap(),
        "olm image copy",
    );
    assert_eq!(digest_of(&copied), bundle_digest);
}

#[test]
fn plain_http_registry_roundtrip() {
    roundtrip(Variant::Plain);
}

#[test]
fn htpasswd_registry_roundtrip() {
    roundtrip(Variant::Htpasswd);
}

#[test]
fn tls_registry_roundtrip() {
    roundtrip(Variant::Tls);
}

#[test]
fn wrong_password_is_a_clear_error_without_the_secret() {
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let wrong = "not-the-Password-42";
    let out = olm()
        .args(["bundle", "build"])
        .arg(fixture("bundle"))
        .args(["-t", &reg.image("test/bundle:v1"), "--push"])
        .args(["--creds", &format!("{}:{wrong}", registry::USER)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("authentication failed"), "{stderr}");
    assert!(stderr.contains("--creds"), "{stderr}");
    assert!(
        !stderr.contains(wrong) && !stderr.contains(PASSWORD),
        "{stderr}"
    );

    let out = olm()
        .args(["bundle", "build"])
        .arg(fixture("bundle"))
        .args(["-t", &reg.image("test/bundle:v1"), "--push"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("authentication required"), "{stderr}");
}

#[test]
fn tls_registry_without_its_ca_is_refused_with_the_fix() {
    let Some(reg) = Registry::start(Variant::Tls) else {
        return;
    };
    let out = push_bundle_with(&reg, &[]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--ca-file"), "{stderr}");
    let out = push_bundle_with(&reg, &["--insecure-skip-tls-verify"]);
    ok(out, "push with --insecure-skip-tls-verify");
}

fn push_bundle_with(reg: &Registry, extra: &[&str]) -> Output {
    olm()
        .args(["bundle", "build"])
        .arg(fixture("bundle"))
        .args(["-t", &reg.image("test/bundle:v1"), "--push"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn registry_killed_mid_push_fails_then_retry_succeeds_and_no_tag_is_broken() {
    if !have("skopeo") {
        return;
    }
    let Some(mut reg) = Registry::start(Variant::Plain) else {
        return;
    };
    // A large, incompressible "binary": /bin/true with random bytes appended (still a valid
    // ELF for the loader, which ignores trailing data).
    let tmp = tempfile::tempdir().unwrap();
    let big = tmp.path().join("bigbin");
    registry::big_binary(&big, 48);
    let target = reg.image("test/big:v1");
    let push = || {
        olm()
            .args(["image", "build", "--binary"])
            .arg(&big)
            .args(["-t", &target, "--push", "--retries", "2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };

    let child = push();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !reg.uploading() {
        assert!(Instant::now() < deadline, "no upload ever started");
        std::thread::sleep(Duration::from_millis(2));
    }
    reg.kill();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "push must fail when the registry dies"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("failed after"), "{stderr}");

    // Back up: the tag must not exist (no manifest was pushed over missing blobs).
    reg.restart();
    let mut args = vec!["inspect".to_string(), "--raw".into()];
    args.extend(reg.skopeo_inspect_args());
    args.push(format!("docker://{target}"));
    let inspect = skopeo(&args);
    assert!(!inspect.status.success(), "tag exists after a failed push");

    // The retry succeeds and the tag names a complete image.
    let out = push().wait_with_output().unwrap();
    let digest = digest_of(&ok(out, "push retry"));
    let inspect = skopeo(&args);
    assert!(inspect.status.success());
    assert_eq!(sha256(&inspect.stdout), digest);
    let mut args = vec!["copy".to_string()];
    args.extend(reg.skopeo_src_args());
    args.push(format!("docker://{target}"));
    args.push(format!("oci:{}:big", tmp.path().join("copy").display()));
    let copy = skopeo(&args);
    assert!(
        copy.status.success(),
        "{}",
        String::from_utf8_lossy(&copy.stderr)
    );
}

#[test]
fn credentials_come_from_auth_files() {
    use base64::Engine as _;
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let auth =
        base64::engine::general_purpose::STANDARD.encode(format!("{}:{PASSWORD}", registry::USER));
    // docker's config.json, base64 `auth`, key with a scheme.
    std::fs::write(
        tmp.path().join("config.json"),
        format!(
            r#"{{"auths":{{"https://{}":{{"auth":"{auth}"}}}}}}"#,
            reg.addr
        ),
    )
    .unwrap();
    let out = olm()
        .env("DOCKER_CONFIG", tmp.path())
        .args(["bundle", "build"])
        .arg(fixture("bundle"))
        .args(["-t", &reg.image("test/bundle:docker"), "--push"])
        .output()
        .unwrap();
    ok(out, "push with ~/.docker/config.json credentials");

    // podman's auth.json via REGISTRY_AUTH_FILE, bare host:port key.
    let podman = tmp.path().join("auth.json");
    std::fs::write(
        &podman,
        format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, reg.addr),
    )
    .unwrap();
    let out = olm()
        .env("REGISTRY_AUTH_FILE", &podman)
        .args(["image", "inspect", &reg.image("test/bundle:docker")])
        .output()
        .unwrap();
    ok(out, "inspect with REGISTRY_AUTH_FILE credentials");
}
