//! The copy engine against real registries (several at once), with skopeo as the independent
//! reader and the registries' own access logs as the witness of what went over the wire:
//! cross-repository mounts instead of uploads, the blob-locations record across runs, a
//! second copy that moves nothing, and memory that does not grow with the image.

#[path = "support/registry.rs"]
mod registry;

use std::path::Path;
use std::process::{Command, Output};

use registry::{Registry, Variant, have, skopeo};

fn olm(cache: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
    c.env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env_remove("OLM_BLOB_LOCATIONS")
        .env("XDG_RUNTIME_DIR", "/nonexistent")
        .env("HOME", "/nonexistent")
        .env("XDG_CACHE_HOME", cache)
        .env_remove("SOURCE_DATE_EPOCH")
        .env_remove("OLM_REGISTRY_CREDS");
    c
}

fn run(out: Output, what: &str) -> (String, String) {
    assert!(
        out.status.success(),
        "{what} failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn digest_of(pinned: &str) -> String {
    pinned
        .trim()
        .rsplit_once('@')
        .expect("pinned")
        .1
        .to_string()
}

/// Blob uploads the registry's access log shows into `repo` (POSTs opening a session, not
/// counting mounts).
fn uploads_into(reg: &Registry, repo: &str) -> usize {
    let needle = format!("\"POST /v2/{repo}/blobs/uploads/ ");
    reg.log_text().matches(&needle).count()
}

fn mounts_into(reg: &Registry, repo: &str) -> usize {
    let needle = format!("\"POST /v2/{repo}/blobs/uploads/?mount=");
    reg.log_text().matches(&needle).count()
}

fn skopeo_digest(reg: &Registry, image: &str) -> String {
    let mut args = vec!["inspect".to_string()];
    args.extend(reg.skopeo_inspect_args());
    args.push(format!("docker://{image}"));
    let out = skopeo(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["Digest"].as_str().unwrap().to_string()
}

#[test]
fn copies_mount_across_repositories_and_remember_where_blobs_are() {
    if !have("skopeo") {
        return;
    }
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let layout = format!("oci:{}:v1", tmp.path().join("layout").display());
    let binary = tmp.path().join("bigbin");
    registry::big_binary(&binary, 4);
    let (pinned, _) = run(
        olm(&cache)
            .args(["image", "build", "--no-ca-certs", "--binary"])
            .arg(&binary)
            .args(["-t", &layout])
            .output()
            .unwrap(),
        "build",
    );
    let digest = digest_of(&pinned);

    // First push: every blob is uploaded (base, libraries of /bin/true, binary, config).
    let (_, err) = run(
        olm(&cache)
            .args(["image", "push", &layout, &reg.image("team/one:v1")])
            .args(reg.olm_args())
            .output()
            .unwrap(),
        "first push",
    );
    let n = uploads_into(&reg, "team/one");
    assert!(n >= 3, "{n} uploads");
    assert!(err.contains(&format!("pushed {n} of {n} blobs")), "{err}");

    // Copy within the registry: the source repository is known, every blob is mounted.
    let (out, err) = run(
        olm(&cache)
            .args([
                "image",
                "copy",
                &reg.image("team/one:v1"),
                &reg.image("team/two:v1"),
            ])
            .args(reg.olm_args())
            .output()
            .unwrap(),
        "copy within the registry",
    );
    assert_eq!(digest_of(&out), digest);
    assert!(
        err.contains(&format!("{n} mounted from another repository")),
        "{err}"
    );
    assert_eq!(uploads_into(&reg, "team/two"), 0);
    assert_eq!(mounts_into(&reg, "team/two"), n);
    assert_eq!(skopeo_digest(&reg, &reg.image("team/two:v1")), digest);

    // A push from the layout to a third repository: the record of where blobs were seen
    // (kept in XDG_CACHE_HOME across runs) names a repository to mount from.
    let (_, err) = run(
        olm(&cache)
            .args(["image", "push", &layout, &reg.image("team/three:v1")])
            .args(reg.olm_args())
            .output()
            .unwrap(),
        "push to a new repository",
    );
    assert!(
        err.contains(&format!("{n} mounted from another repository")),
        "{err}"
    );
    assert_eq!(uploads_into(&reg, "team/three"), 0);
    assert!(cache.join("olm/blob-locations.json").is_file());

    // Without the record, the same push uploads.
    let (_, err) = run(
        olm(&cache)
            .env("OLM_BLOB_LOCATIONS", "off")
            .args(["image", "push", &layout, &reg.image("team/four:v1")])
            .args(reg.olm_args())
            .output()
            .unwrap(),
        "push without the record",
    );
    assert!(err.contains(&format!("pushed {n} of {n} blobs")), "{err}");
    assert_eq!(uploads_into(&reg, "team/four"), n);

    // A second copy of anything moves nothing.
    let (_, err) = run(
        olm(&cache)
            .args([
                "image",
                "copy",
                &reg.image("team/one:v1"),
                &reg.image("team/two:v1"),
            ])
            .args(reg.olm_args())
            .output()
            .unwrap(),
        "second copy",
    );
    assert!(err.contains(&format!("pushed 0 of {n} blobs")), "{err}");
    assert!(err.contains("manifest unchanged"), "{err}");
}

#[test]
fn copies_between_registries_stream_in_bounded_memory() {
    if !have("skopeo") || !Path::new("/usr/bin/time").is_file() {
        if !Path::new("/usr/bin/time").is_file() {
            registry::prerequisite::missing("/usr/bin/time (Debian package time) not installed");
        }
        return;
    }
    let (Some(a), Some(b)) = (
        Registry::start(Variant::Plain),
        Registry::start(Variant::Tls),
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    // 160 MiB of incompressible layer: an engine that held it would show it in its RSS.
    let binary = tmp.path().join("bigbin");
    registry::big_binary(&binary, 160);
    let src = a.image("big/image:v1");
    let (pinned, _) = run(
        olm(&cache)
            .args(["image", "build", "--no-ca-certs", "--binary"])
            .arg(&binary)
            .args(["-t", &src, "--push"])
            .output()
            .unwrap(),
        "build and push",
    );
    let digest = digest_of(&pinned);
    std::fs::remove_file(&binary).unwrap();

    // Peak RSS (KiB) of an olm run, from /usr/bin/time.
    let peak = |args: &[String], what: &str| -> u64 {
        let out = Command::new("/usr/bin/time")
            .args(["-f", "PEAK=%M"])
            .arg(env!("CARGO_BIN_EXE_olm"))
            .args(args)
            .env("HOME", "/nonexistent")
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{what}: {stderr}");
        stderr
            .lines()
            .find_map(|l| l.strip_prefix("PEAK="))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("{what}: no peak in {stderr}"))
    };
    let dst = b.image("mirror/image:v1");
    let mut args: Vec<String> = ["image", "copy", &src, &dst].map(String::from).to_vec();
    args.extend(b.olm_args());
    let copy_kib = peak(&args, "copy A -> B");
    assert_eq!(skopeo_digest(&b, &dst), digest);
    let layout = format!("oci:{}:v1", tmp.path().join("pulled").display());
    let pull_kib = peak(
        &["image".into(), "pull".into(), src.clone(), layout.clone()],
        "pull to a layout",
    );
    let dst2 = b.image("mirror/pushed:v1");
    let mut args: Vec<String> = ["image", "push", &layout, &dst2].map(String::from).to_vec();
    args.extend(b.olm_args());
    let push_kib = peak(&args, "push from the layout");
    assert_eq!(skopeo_digest(&b, &dst2), digest);
    // The image is 160 MiB; every move stays far below (a debug build, so a loose budget).
    for (what, kib) in [("copy", copy_kib), ("pull", pull_kib), ("push", push_kib)] {
        assert!(kib < 80 * 1024, "{what} peaked at {} MiB", kib / 1024);
    }
}
