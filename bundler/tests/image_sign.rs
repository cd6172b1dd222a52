//! Signing and verifying images, checked by an independent verifier: a Python script
//! (tests/support/cosign_check.py, python3's cryptography and PyNaCl) written from cosign's
//! formats reads the `.sig`/`.att` manifests from a real registry or an OCI layout and checks
//! the payloads and ECDSA signatures, and makes and opens cosign-format key files. Then the
//! refusals: a changed tag, payload or signature, another digest's signature, another key.

#[path = "support/foreign_elf.rs"]
mod foreign_elf;
#[path = "support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use registry::prerequisite::missing;
use registry::{Registry, Variant};

const PASSWORD: &str = "correct horse";

fn olm(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .env("COSIGN_PASSWORD", PASSWORD)
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env("XDG_RUNTIME_DIR", "/nonexistent")
        .env("HOME", "/nonexistent")
        .output()
        .expect("run olm");
    eprintln!(
        "$ olm {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn ok(out: Output) -> String {
    assert!(out.status.success(), "failed: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The stderr of a run that must fail with exit code 1.
fn refused(out: Output) -> String {
    assert_eq!(out.status.code(), Some(1), "expected exit 1: {out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A python3 with cryptography and PyNaCl (Debian's, where scripts/test.sh installs them).
fn python() -> Option<&'static str> {
    let found = ["/usr/bin/python3", "python3"].into_iter().find(|p| {
        Command::new(p)
            .args(["-c", "import cryptography, nacl.secret"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        missing("python3 with cryptography and nacl (python3-cryptography, python3-nacl)");
    }
    found
}

fn checker(py: &str, args: &[&str]) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/cosign_check.py");
    let out = Command::new(py)
        .arg(script)
        .args(args)
        .output()
        .expect("run python3");
    eprintln!(
        "$ cosign_check.py {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn checked(py: &str, args: &[&str]) {
    let out = checker(py, args);
    assert!(out.status.success(), "independent check failed: {args:?}");
}

fn digest_of(pinned: &str) -> String {
    pinned.trim().rsplit_once('@').unwrap().1.to_string()
}

fn keypair(dir: &Path, prefix: &str) -> (String, String) {
    let p = dir.join(prefix).display().to_string();
    ok(olm(&[
        "image",
        "generate-key-pair",
        "--output-key-prefix",
        &p,
    ]));
    (format!("{p}.key"), format!("{p}.pub"))
}

fn build(binary: &str, to: &str, push: bool) -> String {
    let mut args = vec![
        "image",
        "build",
        "--binary",
        binary,
        "-t",
        to,
        "--no-ca-certs",
    ];
    if push {
        args.push("--push");
    }
    digest_of(&ok(olm(&args)))
}

#[test]
fn key_files_are_cosigns_both_ways() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Ours opens in the independent implementation.
    let (key, public) = keypair(dir.path(), "cosign");
    let text = std::fs::read_to_string(&key).unwrap();
    assert!(text.starts_with("-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n"));
    use std::os::unix::fs::PermissionsExt as _;
    assert_eq!(
        std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
        0o600
    );
    checked(py, &["open-key", &key, PASSWORD, &public]);
    // A second run does not overwrite.
    let again = olm(&[
        "image",
        "generate-key-pair",
        "--output-key-prefix",
        &dir.path().join("cosign").display().to_string(),
    ]);
    assert!(refused(again).contains("already exists"));

    // Keys written the way cosign writes them sign images the independent verifier accepts.
    let layout = dir.path().join("lay");
    let image = format!("oci:{}:v1", layout.display());
    let digest = build("/bin/true", &image, false);
    // A layout has no repository: signing one without --identity is refused, not signed for
    // its directory path.
    let err = refused(olm(&["image", "sign", &image, "--key", &key]));
    assert!(
        err.contains("an OCI layout has no repository: pass --identity REPO"),
        "{err}"
    );
    let identity = "quay.io/org/app".to_string();
    for label in [
        "ENCRYPTED SIGSTORE PRIVATE KEY",
        "ENCRYPTED COSIGN PRIVATE KEY",
        "PRIVATE KEY",
        "EC PRIVATE KEY",
    ] {
        let kdir = tempfile::tempdir().unwrap();
        let k = kdir.path().display().to_string();
        checked(py, &["make-key", &k, PASSWORD, label]);
        let (kp, kpub) = (format!("{k}/key.pem"), format!("{k}/key.pub"));
        ok(olm(&[
            "image",
            "sign",
            &image,
            "--key",
            &kp,
            "--identity",
            &identity,
        ]));
        ok(olm(&["image", "verify", &image, "--key", &kpub]));
        checked(
            py,
            &[
                "verify",
                &format!("oci:{}", layout.display()),
                &digest,
                &kpub,
                &identity,
            ],
        );
    }
    // securesystemslib's other two strengths (N=2^16, 2^17) open too; they sign and verify.
    for n in ["65536", "131072"] {
        let kdir = tempfile::tempdir().unwrap();
        let k = kdir.path().display().to_string();
        checked(
            py,
            &[
                "make-key",
                &k,
                PASSWORD,
                "ENCRYPTED SIGSTORE PRIVATE KEY",
                n,
            ],
        );
        let text = std::fs::read_to_string(format!("{k}/key.pem")).unwrap();
        assert!(text.contains("ENCRYPTED SIGSTORE PRIVATE KEY"), "{text}");
        let (kp, kpub) = (format!("{k}/key.pem"), format!("{k}/key.pub"));
        ok(olm(&[
            "image",
            "sign",
            &image,
            "--key",
            &kp,
            "--identity",
            &identity,
        ]));
        ok(olm(&["image", "verify", &image, "--key", &kpub]));
    }
    // The wrong password is said so, without the password.
    let wrong = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(["image", "sign", &image, "--key", &key])
        .env("COSIGN_PASSWORD", "not it")
        .output()
        .unwrap();
    let err = refused(wrong);
    assert!(
        err.contains("wrong password") && !err.contains("not it"),
        "{err}"
    );
}

#[test]
fn registry_signatures_verify_independently_and_tampering_is_refused() {
    let Some(py) = python() else { return };
    let Some(reg) = Registry::start(Variant::Plain) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "cosign");
    let (_, other_public) = keypair(dir.path(), "other");
    let image = reg.image("org/app:v1");
    let digest = build("/bin/true", &image, true);
    let repo = format!("http://{}/org/app", reg.addr);
    let identity = format!("{}/org/app", reg.addr);

    // Unsigned: refused with the reason.
    let err = refused(olm(&["image", "verify", &image, "--key", &public]));
    assert!(err.contains("no signatures"), "{err}");

    let started = Instant::now();
    let out = ok(olm(&[
        "image",
        "sign",
        &image,
        "--key",
        &key,
        "-a",
        "git-sha=abc123",
        "-o",
        "json",
    ]));
    eprintln!(
        "sign (debug build, with key decryption): {:?}",
        started.elapsed()
    );
    let signed: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(signed[0]["digest"], digest.as_str());
    assert_eq!(signed[0]["identity"], identity.as_str());
    assert_eq!(signed[0]["added"], true);
    // The same payload again adds nothing.
    let again: serde_json::Value = serde_json::from_str(&ok(olm(&[
        "image",
        "sign",
        &image,
        "--key",
        &key,
        "-a",
        "git-sha=abc123",
        "-o",
        "json",
    ])))
    .unwrap();
    assert_eq!(again[0]["added"], false);
    checked(py, &["verify", &repo, &digest, &public, &identity]);

    let started = Instant::now();
    let report: serde_json::Value = serde_json::from_str(&ok(olm(&[
        "image", "verify", &image, "--key", &public, "-o", "json",
    ])))
    .unwrap();
    eprintln!("verify (debug build): {:?}", started.elapsed());
    assert_eq!(report[0]["digest"], digest.as_str());
    assert_eq!(report[0]["signatures"].as_array().unwrap().len(), 1);
    assert_eq!(report[0]["signatures"][0]["identity"], identity.as_str());
    assert_eq!(
        report[0]["signatures"][0]["annotations"]["git-sha"],
        "abc123"
    );
    ok(olm(&[
        "image",
        "verify",
        &image,
        "--key",
        &public,
        "--identity",
        &identity,
    ]));

    // Another identity, another key.
    let err = refused(olm(&[
        "image",
        "verify",
        &image,
        "--key",
        &public,
        "--identity",
        "quay.io/org/app",
    ]));
    assert!(err.contains("not quay.io/org/app"), "{err}");
    let err = refused(olm(&["image", "verify", &image, "--key", &other_public]));
    assert!(err.contains("does not verify with the key"), "{err}");

    // A signature from a second key is appended; both keys verify.
    let (key2, public2) = keypair(dir.path(), "second");
    ok(olm(&["image", "sign", &image, "--key", &key2]));
    ok(olm(&["image", "verify", &image, "--key", &public2]));
    ok(olm(&["image", "verify", &image, "--key", &public]));
    checked(py, &["verify", &repo, &digest, &public2, &identity]);

    // The tag moved to another image (a changed layer makes a new digest): its signatures are
    // not the old image's.
    let other_digest = build("/bin/false", &image, true);
    assert_ne!(other_digest, digest);
    let err = refused(olm(&["image", "verify", &image, "--key", &public]));
    assert!(
        err.contains("no signatures") && err.contains(&other_digest),
        "{err}"
    );
    // The old image's signature copied onto the new one: signs another digest.
    let old_sig = format!("{}/org/app:sha256-{}.sig", reg.addr, &digest[7..]);
    let new_sig = format!("{}/org/app:sha256-{}.sig", reg.addr, &other_digest[7..]);
    ok(olm(&["image", "copy", &old_sig, &new_sig]));
    let err = refused(olm(&["image", "verify", &image, "--key", &public]));
    assert!(
        err.contains(&format!(
            "signs \"{digest}\", not the image's digest {other_digest}"
        )),
        "{err}"
    );
    let out = checker(py, &["verify", &repo, &other_digest, &public, &identity]);
    assert!(
        !out.status.success(),
        "the independent verifier accepted another digest's signature"
    );
}

/// Rewrites the first layer of the layout's `tag` manifest with `edit` (payload bytes and
/// annotations), storing the new blobs and manifest, as a tamperer with write access would.
fn tamper(layout: &Path, tag: &str, edit: impl Fn(&mut Vec<u8>, &mut serde_json::Value)) {
    let index_path = layout.join("index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
    let entry = index["manifests"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .unwrap();
    let blob = |d: &str| layout.join("blobs/sha256").join(&d[7..]);
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(blob(entry["digest"].as_str().unwrap())).unwrap())
            .unwrap();
    let layer = &mut manifest["layers"][0];
    let mut payload = std::fs::read(blob(layer["digest"].as_str().unwrap())).unwrap();
    edit(&mut payload, &mut layer["annotations"]);
    let put = |bytes: &[u8]| {
        use sha2::Digest as _;
        let d = format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)));
        std::fs::write(blob(&d), bytes).unwrap();
        d
    };
    layer["digest"] = put(&payload).into();
    layer["size"] = payload.len().into();
    let bytes = serde_json::to_vec(&manifest).unwrap();
    entry["digest"] = put(&bytes).into();
    entry["size"] = bytes.len().into();
    std::fs::write(&index_path, serde_json::to_vec(&index).unwrap()).unwrap();
}

#[test]
fn layout_tampering_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "cosign");
    let fresh = |name: &str| {
        let layout = dir.path().join(name);
        let image = format!("oci:{}:v1", layout.display());
        let digest = build("/bin/true", &image, false);
        ok(olm(&[
            "image",
            "sign",
            &image,
            "--key",
            &key,
            "--identity",
            "quay.io/org/app",
        ]));
        ok(olm(&[
            "image",
            "verify",
            &image,
            "--key",
            &public,
            "--identity",
            "quay.io/org/app",
        ]));
        (layout, image, format!("sha256-{}.sig", &digest[7..]))
    };

    let (layout, image, sig) = fresh("payload");
    tamper(&layout, &sig, |payload, _| {
        let text = String::from_utf8(payload.clone())
            .unwrap()
            .replace("quay.io/org/app", "quay.io/evil/app");
        *payload = text.into_bytes();
    });
    let err = refused(olm(&["image", "verify", &image, "--key", &public]));
    assert!(err.contains("does not verify with the key"), "{err}");

    let (layout, image, sig) = fresh("signature");
    tamper(&layout, &sig, |_, annotations| {
        let s = annotations["dev.cosignproject.cosign/signature"]
            .as_str()
            .unwrap()
            .to_string();
        let mut raw = base64_decode(&s);
        let last = raw.len() - 1;
        raw[last] ^= 1;
        annotations["dev.cosignproject.cosign/signature"] = base64_encode(&raw).into();
    });
    let err = refused(olm(&["image", "verify", &image, "--key", &public]));
    assert!(err.contains("does not verify with the key"), "{err}");

    let (layout, image, sig) = fresh("garbage");
    tamper(&layout, &sig, |_, annotations| {
        annotations["dev.cosignproject.cosign/signature"] = "not base64!".into();
    });
    let err = refused(olm(&["image", "verify", &image, "--key", &public]));
    assert!(err.contains("not base64"), "{err}");
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

fn base64_encode(b: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(b)
}

#[test]
fn attestations_verify_independently() {
    let Some(py) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "cosign");
    let (_, other) = keypair(dir.path(), "other");
    let layout = dir.path().join("lay");
    let image = format!("oci:{}:v1", layout.display());
    let digest = build("/bin/true", &image, false);
    let predicate: PathBuf = dir.path().join("sbom.spdx.json");
    std::fs::write(
        &predicate,
        r#"{"spdxVersion":"SPDX-2.3","name":"app","packages":[]}"#,
    )
    .unwrap();
    let p = predicate.display().to_string();
    ok(olm(&[
        "image",
        "attest",
        &image,
        "--key",
        &key,
        "--predicate",
        &p,
        "--type",
        "spdxjson",
        "--identity",
        "quay.io/org/app",
    ]));
    let out = ok(olm(&[
        "image",
        "verify-attestation",
        &image,
        "--key",
        &public,
        "--type",
        "spdxjson",
    ]));
    assert!(out.contains("https://spdx.dev/Document"), "{out}");
    // -o json carries the verified predicate itself.
    let report: serde_json::Value = serde_json::from_str(&ok(olm(&[
        "image",
        "verify-attestation",
        &image,
        "--key",
        &public,
        "-o",
        "json",
    ])))
    .unwrap();
    let verified = &report[0]["attestations"][0];
    assert_eq!(verified["predicate"]["spdxVersion"], "SPDX-2.3", "{report}");
    assert_eq!(verified["predicate_type"], "https://spdx.dev/Document");
    checked(
        py,
        &[
            "verify-att",
            &format!("oci:{}", layout.display()),
            &digest,
            &public,
            "https://spdx.dev/Document",
        ],
    );
    let err = refused(olm(&[
        "image",
        "verify-attestation",
        &image,
        "--key",
        &other,
    ]));
    assert!(err.contains("no envelope signature verifies"), "{err}");
    let err = refused(olm(&[
        "image",
        "verify-attestation",
        &image,
        "--key",
        &public,
        "--type",
        "cyclonedx",
    ]));
    assert!(err.contains("not https://cyclonedx.org/bom"), "{err}");
}

/// Rewrites the layout's `tag` manifest with `edit`, storing the new manifest (blobs it names
/// need not exist), as a tamperer with write access would.
fn rewrite_manifest(layout: &Path, tag: &str, edit: impl Fn(&mut serde_json::Value)) {
    let index_path = layout.join("index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
    let entry = index["manifests"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .unwrap();
    let blob = |d: &str| layout.join("blobs/sha256").join(&d[7..]);
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(blob(entry["digest"].as_str().unwrap())).unwrap())
            .unwrap();
    edit(&mut manifest);
    let bytes = serde_json::to_vec(&manifest).unwrap();
    use sha2::Digest as _;
    let d = format!("sha256:{}", hex::encode(sha2::Sha256::digest(&bytes)));
    std::fs::write(blob(&d), &bytes).unwrap();
    entry["digest"] = d.into();
    entry["size"] = bytes.len().into();
    std::fs::write(&index_path, serde_json::to_vec(&index).unwrap()).unwrap();
}

#[test]
fn attachment_layers_are_bounded_by_their_kind() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "cosign");
    let layout = dir.path().join("lay");
    let image = format!("oci:{}:v1", layout.display());
    let digest = build("/bin/true", &image, false);

    // An SBOM attestation past the 8 MiB a config may have is written and verifies: what
    // `attest` accepts, `verify-attestation` reads.
    let predicate = dir.path().join("big.spdx.json");
    let names: Vec<String> = (0..200_000)
        .map(|i| format!("{{\"name\":\"package-number-{i:08}\",\"SPDXID\":\"SPDXRef-{i}\"}}"))
        .collect();
    let doc = format!(
        r#"{{"spdxVersion":"SPDX-2.3","packages":[{}]}}"#,
        names.join(",")
    );
    assert!(doc.len() > 8 << 20, "{}", doc.len());
    std::fs::write(&predicate, doc).unwrap();
    let p = predicate.display().to_string();
    ok(olm(&[
        "image",
        "attest",
        &image,
        "--key",
        &key,
        "--predicate",
        &p,
        "--type",
        "spdxjson",
        "--identity",
        "quay.io/org/app",
    ]));
    ok(olm(&[
        "image",
        "verify-attestation",
        &image,
        "--key",
        &public,
        "--type",
        "spdxjson",
    ]));
    // A predicate whose envelope could not fit one layer is refused before anything is made.
    let huge = dir.path().join("huge.json");
    std::fs::write(&huge, vec![b' '; 25 << 20]).unwrap();
    let err = refused(olm(&[
        "image",
        "attest",
        &image,
        "--key",
        &key,
        "--predicate",
        &huge.display().to_string(),
    ]));
    assert!(err.contains("limit for a predicate"), "{err}");

    // A signature layer is a few hundred bytes: one of 100 KiB is refused by its size in the
    // manifest, not read (a config's 8 MiB is no bound for it).
    ok(olm(&[
        "image",
        "sign",
        &image,
        "--key",
        &key,
        "--identity",
        "quay.io/org/app",
    ]));
    let sig = format!("sha256-{}.sig", &digest[7..]);
    tamper(&layout, &sig, |payload, _| {
        payload.extend(std::iter::repeat_n(b' ', 100 << 10))
    });
    let err = refused(olm(&["image", "verify", &image, "--key", &public]));
    assert!(
        err.contains("a signature layer") && err.contains("64 KiB"),
        "{err}"
    );

    // Layers each under the limit but together past it are refused from the manifest alone,
    // before any is fetched (the blobs named here do not exist).
    let att = format!("sha256-{}.att", &digest[7..]);
    rewrite_manifest(&layout, &att, |m| {
        let first = m["layers"][0].clone();
        let layers: Vec<serde_json::Value> = (0..5)
            .map(|i| {
                let mut l = first.clone();
                l["size"] = (60u64 << 20).into();
                l["digest"] = format!("sha256:{:064x}", i).into();
                l
            })
            .collect();
        m["layers"] = layers.into();
    });
    let err = refused(olm(&[
        "image",
        "verify-attestation",
        &image,
        "--key",
        &public,
    ]));
    assert!(err.contains("layers together"), "{err}");
}

#[test]
fn custom_attestations_wrap_any_text_as_cosign_does() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "cosign");
    let layout = dir.path().join("lay");
    let image = format!("oci:{}:v1", layout.display());
    let digest = build("/bin/true", &image, false);
    let note = dir.path().join("note.txt");
    std::fs::write(&note, "reviewed by <qa>\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(["image", "attest", &image, "--key", &key, "--predicate"])
        .arg(&note)
        .args(["--identity", "quay.io/org/app"])
        .env("COSIGN_PASSWORD", PASSWORD)
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .output()
        .unwrap();
    ok(out);
    ok(olm(&[
        "image",
        "verify-attestation",
        &image,
        "--key",
        &public,
        "--type",
        "custom",
    ]));
    // The statement in the envelope, byte for byte.
    let att = format!("sha256-{}.att", &digest[7..]);
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(layout.join("index.json")).unwrap()).unwrap();
    let entry = index["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == att.as_str())
        .unwrap();
    let blob = |d: &serde_json::Value| {
        std::fs::read(layout.join("blobs/sha256").join(&d.as_str().unwrap()[7..])).unwrap()
    };
    let manifest: serde_json::Value = serde_json::from_slice(&blob(&entry["digest"])).unwrap();
    let envelope: serde_json::Value =
        serde_json::from_slice(&blob(&manifest["layers"][0]["digest"])).unwrap();
    let statement = base64_decode(envelope["payload"].as_str().unwrap());
    assert_eq!(
        String::from_utf8(statement).unwrap(),
        format!(
            r#"{{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://cosign.sigstore.dev/attestation/v1","subject":[{{"name":"{}","digest":{{"sha256":"{}"}}}}],"predicate":{{"Data":"reviewed by \u003cqa\u003e\n","Timestamp":"2023-11-14T22:13:20Z"}}}}"#,
            "quay.io/org/app",
            &digest[7..]
        )
    );
}

#[test]
fn deploy_generate_writes_the_signature_policy() {
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keypair(dir.path(), "cosign");
    let out = dir.path().join("deploy").display().to_string();
    ok(olm(&[
        "deploy",
        "generate",
        "--catalog-image",
        "quay.io/org/catalog:v1",
        "--package",
        "op",
        "--verify-key",
        &public,
        "--signed-repository",
        "quay.io/org/op@sha256:00",
        "--signed-repository",
        "quay.io/org/op-bundle:v1",
        "--signed-repository",
        "busybox",
        "--signed-repository",
        "index.docker.io/library/busybox:1",
        "--signed-repository",
        "docker.io/org/tool",
        "-o",
        &out,
    ]));
    let pem = std::fs::read_to_string(&public).unwrap();
    let scopes = [
        "quay.io/org/catalog",
        "quay.io/org/op",
        "quay.io/org/op-bundle",
        "docker.io/library/busybox",
        "docker.io/org/tool",
    ];
    let cip =
        std::fs::read_to_string(dir.path().join("deploy/policy/clusterimagepolicy.yaml")).unwrap();
    assert!(
        cip.contains("kind: ClusterImagePolicy") && cip.contains("policyType: PublicKey"),
        "{cip}"
    );
    assert!(cip.contains(&base64_encode(pem.as_bytes())), "{cip}");
    for s in scopes {
        assert!(cip.contains(&format!("- {s}\n")), "{s}: {cip}");
    }
    let policy: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("deploy/policy/policy.json")).unwrap(),
    )
    .unwrap();
    for s in scopes {
        let req = &policy["transports"]["docker"][s][0];
        assert_eq!(req["type"], "sigstoreSigned");
        assert_eq!(
            base64_decode(req["keyData"].as_str().unwrap()),
            pem.as_bytes()
        );
        assert_eq!(req["signedIdentity"]["type"], "matchRepository");
    }
    let regd =
        std::fs::read_to_string(dir.path().join("deploy/policy/registries.d/op-signed.yaml"))
            .unwrap();
    assert!(regd.contains("use-sigstore-attachments: true"), "{regd}");
    assert_eq!(
        policy["transports"]["docker"].as_object().unwrap().len(),
        scopes.len(),
        "{policy}"
    );
    // A key file with CRLF line endings is written in the one form OpenShift takes.
    let crlf = dir.path().join("crlf.pub");
    std::fs::write(&crlf, pem.replace('\n', "\r\n")).unwrap();
    ok(olm(&[
        "deploy",
        "generate",
        "--catalog-image",
        "quay.io/org/catalog:v1",
        "--package",
        "op",
        "--verify-key",
        &crlf.display().to_string(),
        "-o",
        &out,
    ]));
    let policy: serde_json::Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("deploy/policy/policy.json")).unwrap(),
    )
    .unwrap();
    let written = base64_decode(
        policy["transports"]["docker"]["quay.io/org/catalog"][0]["keyData"]
            .as_str()
            .unwrap(),
    );
    assert_eq!(String::from_utf8(written).unwrap(), pem);
    assert!(
        pem.starts_with("-----BEGIN PUBLIC KEY-----\n")
            && pem.ends_with("-----END PUBLIC KEY-----\n")
    );
    // A file that is not a public key is refused, naming it.
    let err = refused(olm(&[
        "deploy",
        "generate",
        "--catalog-image",
        "quay.io/org/catalog:v1",
        "--package",
        "op",
        "--verify-key",
        &dir.path().join("cosign.key").display().to_string(),
        "-o",
        &out,
    ]));
    assert!(
        err.contains("cosign.key") && err.contains("public key"),
        "{err}"
    );
}

#[test]
fn recursive_signing_covers_each_platform_of_an_index() {
    let Some(arm) = foreign_elf::busybox("arm64") else {
        return;
    };
    let Some(reg) = Registry::start(Variant::Plain) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "cosign");
    let image = reg.image("org/multi:v1");
    let arm = arm.display().to_string();
    let index = digest_of(&ok(olm(&[
        "image",
        "build",
        "--no-ca-certs",
        "--binary",
        "/bin/true",
        "--binary",
        &arm,
        "-t",
        &image,
        "--push",
    ])));
    let raw = ok(olm(&["image", "inspect", &image, "--raw"]));
    let manifests: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let children: Vec<String> = manifests["manifests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["digest"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(children.len(), 2);
    let by_digest = |d: &str| format!("{}/org/multi@{d}", reg.addr);
    // Without --recursive only the index is signed.
    ok(olm(&["image", "sign", &image, "--key", &key]));
    ok(olm(&[
        "image",
        "verify",
        &by_digest(&index),
        "--key",
        &public,
    ]));
    let err = refused(olm(&[
        "image",
        "verify",
        &by_digest(&children[0]),
        "--key",
        &public,
    ]));
    assert!(err.contains("no signatures"), "{err}");
    let signed: serde_json::Value = serde_json::from_str(&ok(olm(&[
        "image",
        "sign",
        &image,
        "--key",
        &key,
        "--recursive",
        "-o",
        "json",
    ])))
    .unwrap();
    assert_eq!(signed.as_array().unwrap().len(), 3);
    for d in &children {
        ok(olm(&["image", "verify", &by_digest(d), "--key", &public]));
    }
}

/// A signer that made an image signs that digest, read by digest, even when the tag has
/// moved to another image since (the release signs what it published, not what a tag names
/// by the time it signs).
#[tokio::test]
async fn a_pinned_signature_signs_the_made_digest_not_the_moved_tag() {
    use olm_bundler::image::copy::{Endpoint, Engine};
    use olm_bundler::image::layout::Layout;
    use olm_bundler::image::registry::RegistryOptions;
    use olm_bundler::image::sign::key::PrivateKey;
    use olm_bundler::image::sign::trust::{self, SignOptions};

    let dir = tempfile::tempdir().unwrap();
    let layout = dir.path().join("lay");
    let image = format!("oci:{}:v1", layout.display());
    let made = build("/bin/true", &image, false);
    // The tag moves on to another image before signing.
    let moved = build("/bin/false", &image, false);
    assert_ne!(made, moved);

    let key = PrivateKey::generate();
    let engine = Engine::new(&RegistryOptions::default());
    let subject = Endpoint::Layout {
        layout: Layout::new(&layout),
        tag: Some("v1".into()),
    };
    let opts = SignOptions {
        key: &key,
        annotations: Default::default(),
        recursive: false,
        identity: Some("quay.io/org/app".into()),
    };
    let signed = trust::sign_pinned(&engine, &subject, &made, &opts)
        .await
        .unwrap();
    assert_eq!(signed[0].digest, made);
    trust::verify_digest(&engine, &subject, &made, &key.public(), None)
        .await
        .unwrap();
    let err = trust::verify(&engine, &subject, &key.public(), None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no signatures"), "{err}");
    // A digest the layout does not hold is not signed.
    let absent = format!("sha256:{}", "0".repeat(64));
    assert!(
        trust::sign_pinned(&engine, &subject, &absent, &opts)
            .await
            .is_err()
    );
}

/// A catalog of packages `app` (bundle `bundle`) and `other` (bundle `other_bundle`).
fn two_package_catalog(dir: &Path, bundle: &str, other_bundle: &str) -> PathBuf {
    let catalog = dir.join("catalog");
    for (pkg, image) in [("app", bundle), ("other", other_bundle)] {
        std::fs::create_dir_all(catalog.join(pkg)).unwrap();
        let blobs = [
            serde_json::json!({"schema": "olm.package", "name": pkg, "defaultChannel": "stable"}),
            serde_json::json!({"schema": "olm.channel", "name": "stable", "package": pkg, "entries": [{"name": format!("{pkg}.v1.0.0")}]}),
            serde_json::json!({
                "schema": "olm.bundle", "name": format!("{pkg}.v1.0.0"), "package": pkg, "image": image,
                "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": "1.0.0"}}],
            }),
        ];
        let text: String = blobs
            .iter()
            .map(|b| serde_json::to_string_pretty(b).unwrap() + "\n")
            .collect();
        std::fs::write(catalog.join(pkg).join("catalog.json"), text).unwrap();
    }
    catalog
}

/// `install --verify-key` checks the catalog image, then reads the catalog from the digest
/// that verified (for the package only) and checks that package's bundles: what is installed
/// is that digest, not whatever the tag names by then.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn install_verification_pins_the_verified_catalog() {
    use olm_bundler::image::registry::RegistryOptions;
    use olm_bundler::ops::image_trust;
    let Some(reg) = Registry::start(Variant::Plain) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keypair(dir.path(), "cosign");
    let bundle_tag = reg.image("org/app-bundle:v1");
    let bundle = format!(
        "{}/org/app-bundle@{}",
        reg.addr,
        build("/bin/true", &bundle_tag, true)
    );
    let other_tag = reg.image("org/other-bundle:v1");
    let other = format!(
        "{}/org/other-bundle@{}",
        reg.addr,
        build("/bin/false", &other_tag, true)
    );
    ok(olm(&["image", "sign", &bundle, "--key", &key]));
    let catalog_dir = two_package_catalog(dir.path(), &bundle, &other);
    let catalog = reg.image("org/catalog:v1");
    ok(olm(&[
        "catalog",
        "build",
        catalog_dir.to_str().unwrap(),
        "-t",
        &catalog,
        "--olm-binary",
        "/bin/sh",
        "--push",
    ]));
    ok(olm(&["image", "sign", &catalog, "--key", &key]));
    let public_key = image_trust::load_public_key(Path::new(&public)).unwrap();
    let opts = RegistryOptions::default();

    // Package `app`: its bundle is signed; `other`'s unsigned bundle is not its business.
    let verified =
        image_trust::verify_install(Some(&catalog), None, Some("app"), &public_key, &opts)
            .await
            .unwrap();
    let pinned = verified.catalog.clone().unwrap();
    assert!(
        pinned.starts_with(&format!("{}/org/catalog@sha256:", reg.addr)),
        "{pinned}"
    );
    assert_eq!(verified.images.len(), 2, "{verified:?}");
    // The whole catalog (no package) includes the unsigned bundle, and is refused.
    let err = image_trust::verify_install(Some(&catalog), None, None, &public_key, &opts)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("org/other-bundle"), "{err}");

    // The tag moves on to an unsigned catalog: the pinned reference still names the verified one.
    std::fs::remove_dir_all(catalog_dir.join("other")).unwrap();
    ok(olm(&[
        "catalog",
        "build",
        catalog_dir.to_str().unwrap(),
        "-t",
        &catalog,
        "--olm-binary",
        "/bin/sh",
        "--push",
    ]));
    let err = image_trust::verify_install(Some(&catalog), None, Some("app"), &public_key, &opts)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no signatures"), "{err}");
    let again = image_trust::verify_install(Some(&pinned), None, Some("app"), &public_key, &opts)
        .await
        .unwrap();
    assert_eq!(again.catalog.as_deref(), Some(pinned.as_str()));
}
