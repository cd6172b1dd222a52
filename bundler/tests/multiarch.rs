//! Multi-platform images with real foreign binaries (Debian's static busybox for arm64
//! and s390x) and a real registry, checked with skopeo as the independent reader
//! (`--override-arch` picks an index's image as a node of that architecture would):
//! `olm image build` with several binaries, `olm catalog build` with several olm binaries,
//! and `olm image copy|pull` keeping an index whole or taking one platform.

#[path = "support/foreign_elf.rs"]
mod foreign_elf;
#[path = "support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use registry::{Registry, Variant, have, skopeo};
use serde_json::Value;
use sha2::{Digest as _, Sha256};

fn olm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
    c.env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env("XDG_RUNTIME_DIR", "/nonexistent")
        .env("HOME", "/nonexistent")
        .env("OLM_BLOB_LOCATIONS", "off")
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .env_remove("OLM_REGISTRY_CREDS");
    c
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
        .expect("a pinned reference")
        .1
        .to_string()
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

fn json_blob(layout: &Path, digest: &str) -> Value {
    let hex = digest.strip_prefix("sha256:").unwrap();
    serde_json::from_slice(&std::fs::read(layout.join("blobs/sha256").join(hex)).unwrap()).unwrap()
}

/// The index entry a layout's index.json has for `tag`.
fn layout_entry(layout: &Path, tag: &str) -> Value {
    let index: Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .unwrap_or_else(|| panic!("no {tag} in {index}"))
        .clone()
}

fn platforms(index: &Value) -> Vec<String> {
    index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["platform"]["architecture"].as_str().unwrap().to_string())
        .collect()
}

fn binaries() -> Option<(PathBuf, PathBuf, PathBuf)> {
    let arm = foreign_elf::busybox("arm64")?;
    let s390 = foreign_elf::busybox("s390x")?;
    Some((PathBuf::from(env!("CARGO_BIN_EXE_olm")), arm, s390))
}

#[test]
fn image_build_with_several_binaries_is_an_index_every_platform_can_pull() {
    let Some((host, arm, s390)) = binaries() else {
        return;
    };
    if !have("skopeo") {
        return;
    }
    let Some(reg) = Registry::start(Variant::Plain) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let target = reg.image("test/multi:v1");
    let build = |extra: &[&Path]| {
        let mut c = olm();
        c.args(["image", "build", "--no-ca-certs", "-t", &target, "--push"])
            .arg("--binary")
            .arg(&host);
        for b in extra {
            c.arg("--binary").arg(b);
        }
        c.output().unwrap()
    };
    let pinned = ok(build(&[&arm, &s390]), "olm image build with three binaries");
    let digest = digest_of(&pinned);
    // Reproducible: the same binaries give the same index.
    assert_eq!(digest_of(&ok(build(&[&arm, &s390]), "rebuild")), digest);

    let mut args = vec!["inspect".to_string(), "--raw".into()];
    args.extend(reg.skopeo_inspect_args());
    args.push(format!("docker://{target}"));
    let raw = skopeo(&args);
    assert!(
        raw.status.success(),
        "{}",
        String::from_utf8_lossy(&raw.stderr)
    );
    assert_eq!(
        sha256(&raw.stdout),
        digest,
        "the index bytes hash to the printed digest"
    );
    let index: Value = serde_json::from_slice(&raw.stdout).unwrap();
    assert_eq!(
        index["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    assert_eq!(platforms(&index), ["amd64", "arm64", "s390x"]);

    // A node of each architecture gets its own image: skopeo resolves the index as it would.
    for (arch, binary) in [("arm64", &arm), ("s390x", &s390)] {
        let info = reg.inspect_as(&target, arch);
        assert_eq!(info["Architecture"], arch);
        assert_eq!(info["Os"], "linux");

        // Its files are that architecture's binary, installed where the first binary's name
        // says (every platform runs the same entrypoint).
        let root = tmp.path().join(format!("rootfs-{arch}"));
        let out = olm()
            .args(["image", "pull", &target, "--rootfs"])
            .arg(&root)
            .args(["--platform", &format!("linux/{arch}")])
            .output()
            .unwrap();
        ok(out, "olm image pull --rootfs --platform");
        assert_eq!(
            std::fs::read(root.join("usr/local/bin/olm")).unwrap(),
            std::fs::read(binary).unwrap()
        );
    }

    // Two binaries of one platform: refused before anything is built, naming both files.
    let twin = tmp.path().join("busybox-again");
    std::fs::copy(&arm, &twin).unwrap();
    let out = build(&[&arm, &twin]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&arm.display().to_string())
            && stderr.contains(&twin.display().to_string())
            && stderr.contains("linux/arm64"),
        "{stderr}"
    );
}

#[test]
fn copies_keep_an_index_whole_or_take_one_platform() {
    let Some((host, arm, s390)) = binaries() else {
        return;
    };
    if !have("skopeo") {
        return;
    }
    let (Some(a), Some(b)) = (
        Registry::start(Variant::Htpasswd),
        Registry::start(Variant::Plain),
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let layout = tmp.path().join("built");
    let out = olm()
        .args(["image", "build", "--no-ca-certs"])
        .arg("--binary")
        .arg(&host)
        .arg("--binary")
        .arg(&arm)
        .arg("--binary")
        .arg(&s390)
        .arg("-t")
        .arg(format!("oci:{}:v1", layout.display()))
        .output()
        .unwrap();
    let digest = digest_of(&ok(out, "build into a layout"));
    let entry = layout_entry(&layout, "v1");
    assert_eq!(
        entry["mediaType"],
        "application/vnd.oci.image.index.v1+json"
    );
    assert_eq!(entry["digest"], digest.as_str());
    let index = json_blob(&layout, &digest);
    let arm_digest = index["manifests"][1]["digest"]
        .as_str()
        .unwrap()
        .to_string();

    // Layout -> registry A -> registry B: the index digest never changes.
    let in_a = a.image("test/multi:v1");
    let out = olm()
        .args([
            "image",
            "push",
            &format!("oci:{}:v1", layout.display()),
            &in_a,
        ])
        .args(a.olm_args())
        .output()
        .unwrap();
    assert_eq!(digest_of(&ok(out, "push the index")), digest);
    let in_b = b.image("mirror/multi:v1");
    let out = olm()
        .args(["image", "copy", &in_a, &in_b])
        .args(a.olm_args())
        .output()
        .unwrap();
    assert_eq!(digest_of(&ok(out, "copy A -> B")), digest);
    // skopeo reads every platform of the copy.
    for arch in ["amd64", "arm64", "s390x"] {
        assert_eq!(b.inspect_as(&in_b, arch)["Architecture"], arch);
    }
    // skopeo copies our layout's index whole, to the same digest.
    let mut args = vec![
        "copy".to_string(),
        "--all".into(),
        "--dest-tls-verify=false".into(),
    ];
    args.push(format!("oci:{}:v1", layout.display()));
    args.push(format!("docker://{}", b.image("skopeo/multi:v1")));
    let out = skopeo(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut args = vec!["inspect".to_string(), "--raw".into()];
    args.extend(b.skopeo_inspect_args());
    args.push(format!("docker://{}", b.image("skopeo/multi:v1")));
    assert_eq!(sha256(&skopeo(&args).stdout), digest);

    // --platform takes one image: its own digest, pulled into a layout as a plain image.
    let one = tmp.path().join("one");
    let out = olm()
        .args([
            "image",
            "pull",
            &in_b,
            &format!("oci:{}:arm", one.display()),
        ])
        .args(["--platform", "linux/arm64"])
        .output()
        .unwrap();
    assert_eq!(digest_of(&ok(out, "pull one platform")), arm_digest);
    let entry = layout_entry(&one, "arm");
    assert_eq!(
        entry["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    // A platform the index lacks is a clear error naming what it has.
    let out = olm()
        .args(["image", "copy", &in_b, &b.image("mirror/none:v1")])
        .args(["--platform", "linux/riscv64"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("linux/riscv64") && stderr.contains("linux/arm64"),
        "{stderr}"
    );
}

#[test]
fn catalog_build_for_two_platforms_shares_the_catalog_and_its_cache() {
    let Some((host, arm, _)) = binaries() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let layout = tmp.path().join("catalog");
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
    let out = olm()
        .args(["catalog", "build"])
        .arg(&catalog)
        .arg("-t")
        .arg(format!("oci:{}:v1", layout.display()))
        .arg("--olm-binary")
        .arg(&host)
        .arg("--olm-binary")
        .arg(&arm)
        .arg("--no-ca-certs")
        .output()
        .unwrap();
    let digest = digest_of(&ok(out, "olm catalog build for two platforms"));
    let index = json_blob(&layout, &digest);
    assert_eq!(platforms(&index), ["amd64", "arm64"]);
    let manifests: Vec<Value> = index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| json_blob(&layout, m["digest"].as_str().unwrap()))
        .collect();
    let tail = |m: &Value| {
        let layers = m["layers"].as_array().unwrap();
        layers[layers.len() - 2..].to_vec()
    };
    // The catalog and the serve cache are the same blobs on both platforms; the binary
    // layers differ.
    assert_eq!(tail(&manifests[0]), tail(&manifests[1]));
    assert_ne!(manifests[0]["layers"], manifests[1]["layers"]);
    for (m, arch) in manifests.iter().zip(["amd64", "arm64"]) {
        let config = json_blob(&layout, m["config"]["digest"].as_str().unwrap());
        assert_eq!(config["architecture"], arch);
        assert_eq!(
            config["config"]["Labels"]["operators.operatorframework.io.index.configs.v1"],
            "/configs"
        );
    }
}
