//! Signatures survive `olm catalog mirror` (Debian's docker-registry, several at once): signed
//! images mirrored to a second registry, and through an archive to a third, verify there with
//! the same key and the original identity; `--remove-signatures` leaves them behind;
//! `--verify-key` stops a catalog with an unsigned image before anything is copied;
//! `--sign-key` signs what the mirror makes (the catalog image, rebuilt bundles); a prune
//! takes the signatures of what it deletes with it.

#[path = "support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use registry::{Registry, Variant, have};
use serde_json::json;

fn olm(home: &Path, args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env_remove("OLM_REGISTRY_CREDS")
        .env("HOME", home)
        .env("XDG_RUNTIME_DIR", home.join("run"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("SOURCE_DATE_EPOCH", "1700000000")
        .env("COSIGN_PASSWORD", "pw")
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

struct Fixture {
    home: tempfile::TempDir,
    catalog: PathBuf,
    /// Pinned references in the source registry.
    bundle: String,
    operator: String,
    key: String,
    public: String,
}

fn build(home: &Path, binary: &str, to: &str) -> String {
    ok(olm(
        home,
        &[
            "image",
            "build",
            "--no-ca-certs",
            "--binary",
            binary,
            "-t",
            to,
            "--push",
        ],
    ))
    .trim()
    .to_string()
}

/// One package whose bundle uses an operator image, both in `src` by digest; the bundle
/// image is signed, the operator image only when `sign_operator`.
fn fixture(src: &Registry, sign_operator: bool) -> Fixture {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let bundle = build(h, "/bin/true", &src.image("org/app-bundle:v1"));
    let operator = build(h, "/bin/false", &src.image("org/app:v1"));
    let prefix = h.join("cosign").display().to_string();
    ok(olm(
        h,
        &["image", "generate-key-pair", "--output-key-prefix", &prefix],
    ));
    let (key, public) = (format!("{prefix}.key"), format!("{prefix}.pub"));
    ok(olm(h, &["image", "sign", &bundle, "--key", &key]));
    if sign_operator {
        ok(olm(
            h,
            &["image", "sign", &operator, "--key", &key, "--recursive"],
        ));
    }
    let catalog = h.join("catalog");
    std::fs::create_dir_all(catalog.join("app")).unwrap();
    let blobs = [
        json!({"schema": "olm.package", "name": "app", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "name": "stable", "package": "app", "entries": [{"name": "app.v1.0.0"}]}),
        json!({
            "schema": "olm.bundle", "name": "app.v1.0.0", "package": "app", "image": bundle,
            "properties": [{"type": "olm.package", "value": {"packageName": "app", "version": "1.0.0"}}],
            "relatedImages": [{"name": "", "image": bundle}, {"name": "operator", "image": operator}],
        }),
    ];
    let text: String = blobs
        .iter()
        .map(|b| serde_json::to_string_pretty(b).unwrap() + "\n")
        .collect();
    std::fs::write(catalog.join("app/catalog.json"), text).unwrap();
    Fixture {
        home,
        catalog,
        bundle,
        operator,
        key,
        public,
    }
}

/// A source and a destination registry (`None` after the prerequisite check when
/// docker-registry is missing).
fn two_registries() -> Option<(Registry, Registry)> {
    if !have("docker-registry") {
        return None;
    }
    Some((
        Registry::start(Variant::Plain)?,
        Registry::start(Variant::Plain)?,
    ))
}

/// `image` of `src` as mirrored under `to`, and its original repository (the identity).
fn moved(image: &str, src: &Registry, to: &str) -> (String, String) {
    let path = image.strip_prefix(&format!("{}/", src.addr)).unwrap();
    let repo = image.split('@').next().unwrap().to_string();
    (format!("{to}/{path}"), repo)
}

fn verifies(f: &Fixture, image: &str, identity: &str) -> bool {
    olm(
        f.home.path(),
        &[
            "image",
            "verify",
            image,
            "--key",
            &f.public,
            "--identity",
            identity,
        ],
    )
    .status
    .success()
}

#[test]
fn signatures_travel_to_a_registry_and_through_an_archive() {
    let Some((src, dst)) = two_registries() else {
        return;
    };
    let f = fixture(&src, true);
    let h = f.home.path();
    let catalog = f.catalog.display().to_string();

    let to = dst.image("direct");
    ok(mirror(&f, &to, &["--full"]));
    for image in [&f.bundle, &f.operator] {
        let (mirrored, identity) = moved(image, &src, &to);
        assert!(
            verifies(&f, &mirrored, &identity),
            "{mirrored} does not verify"
        );
        // By key alone, as cosign verify does.
        ok(olm(h, &["image", "verify", &mirrored, "--key", &f.public]));
    }

    let archive = h.join("usb").display().to_string();
    ok(olm(
        h,
        &[
            "catalog",
            "mirror",
            &catalog,
            "--to-archive",
            &archive,
            "--full",
        ],
    ));
    let to = dst.image("inside");
    let out = h.join("out2").display().to_string();
    ok(olm(
        h,
        &[
            "catalog",
            "mirror",
            "--from-archive",
            &archive,
            "--to",
            &to,
            "--output",
            &out,
        ],
    ));
    for image in [&f.bundle, &f.operator] {
        let (mirrored, identity) = moved(image, &src, &to);
        assert!(
            verifies(&f, &mirrored, &identity),
            "{mirrored} does not verify after the archive"
        );
    }

    let to = dst.image("bare");
    ok(mirror(&f, &to, &["--full", "--remove-signatures"]));
    let (mirrored, _) = moved(&f.bundle, &src, &to);
    let refused = olm(h, &["image", "verify", &mirrored, "--key", &f.public]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("no signatures"));
}

#[test]
fn verify_key_stops_an_unsigned_catalog_before_anything_is_copied() {
    let Some((src, dst)) = two_registries() else {
        return;
    };
    let f = fixture(&src, false);
    let h = f.home.path();
    let to = dst.image("checked");
    let refused = mirror(&f, &to, &["--full", "--verify-key", &f.public]);
    assert_eq!(refused.status.code(), Some(1));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("do not verify with --verify-key") && err.contains(&f.operator),
        "{err}"
    );
    assert!(
        !err.contains(&format!("{} (used by", f.bundle)),
        "the signed bundle image is not listed: {err}"
    );
    // Nothing reached the destination, not even the signed bundle image.
    let (bundle_there, _) = moved(&f.bundle, &src, &to);
    assert!(
        !olm(h, &["image", "inspect", &bundle_there])
            .status
            .success()
    );

    ok(olm(h, &["image", "sign", &f.operator, "--key", &f.key]));
    ok(mirror(&f, &to, &["--full", "--verify-key", &f.public]));
    let (operator_there, identity) = moved(&f.operator, &src, &to);
    assert!(verifies(&f, &operator_there, &identity));
}

#[test]
fn install_verifies_the_catalog_and_its_bundles_before_touching_the_cluster() {
    if !have("docker-registry") {
        return;
    }
    let Some(src) = Registry::start(Variant::Plain) else {
        return;
    };
    let f = fixture(&src, false);
    let h = f.home.path();
    let catalog = f.catalog.display().to_string();
    let image = src.image("org/catalog:v1");
    ok(olm(
        h,
        &["catalog", "build", &catalog, "-t", &image, "--push"],
    ));
    let install = |h: &Path| {
        Command::new(env!("CARGO_BIN_EXE_olm"))
            .args([
                "install",
                "--catalog",
                &image,
                "--package",
                "app",
                "--verify-key",
                &f.public,
            ])
            .env("HOME", h)
            .env("KUBECONFIG", h.join("no-such-kubeconfig"))
            .output()
            .unwrap()
    };
    let refused = install(h);
    let err = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert_eq!(refused.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no signatures") && err.contains("nothing was created on the cluster"),
        "{err}"
    );

    ok(olm(h, &["image", "sign", &image, "--key", &f.key]));
    let out = install(h);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    // Both verified; then the missing cluster stops it.
    assert!(err.contains(&format!("Verified {image}")), "{err}");
    assert!(err.contains(&format!("Verified {}", f.bundle)), "{err}");
    assert!(!out.status.success());
}

/// What the mirror makes itself (the filtered catalog image; with --rewrite-references the
/// rebuilt bundles too) no original signature covers: `--sign-key` signs it with the user's
/// key, under its own repository in the mirror.
#[test]
fn sign_key_signs_the_catalog_image_the_mirror_builds() {
    let Some((src, dst)) = two_registries() else {
        return;
    };
    let f = fixture(&src, true);
    let to = dst.image("signed");
    let run = mirror(&f, &to, &["--full", "--sign-key", &f.key]);
    assert!(run.status.success());
    let text = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(text.contains("signed with --sign-key"), "{text}");
    let image = text
        .split_whitespace()
        .find(|w| w.starts_with(&to) && w.contains("@sha256:") && w.contains("catalog"))
        .unwrap_or_else(|| panic!("no catalog image in {text}"))
        .trim_end_matches([',', ')'])
        .to_string();
    let identity = image.split('@').next().unwrap().to_string();
    assert!(verifies(&f, &image, &identity), "{image} does not verify");
    // Without the key nothing of the mirror's own making is signed.
    let to = dst.image("unsigned");
    let run = mirror(&f, &to, &["--full"]);
    assert!(run.status.success());
    assert!(!String::from_utf8_lossy(&run.stderr).contains("signed with --sign-key"));
}

/// `olm catalog mirror` of the fixture's catalog into `to` (output under the home), `extra`
/// after the usual flags.
fn mirror(f: &Fixture, to: &str, extra: &[&str]) -> Output {
    let h = f.home.path();
    let catalog = f.catalog.display().to_string();
    let out = h.join(format!("out-{}", to.replace(['/', ':'], "_")));
    let out = out.display().to_string();
    let mut args = vec!["catalog", "mirror", &catalog, "--to", to, "--output", &out];
    args.extend(extra);
    olm(h, &args)
}

/// The tags of `repository` (`host/path`) as skopeo lists them (none for a repository gone).
fn tags_of(repository: &str) -> Vec<String> {
    let out = registry::skopeo(&[
        "list-tags".into(),
        "--tls-verify=false".into(),
        format!("docker://{repository}"),
    ]);
    if !out.status.success() {
        return Vec::new();
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["Tags"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn sign_key_signs_the_bundles_rewrite_references_rebuilds() {
    let Some((src, dst)) = two_registries() else {
        return;
    };
    let f = fixture(&src, true);
    let h = f.home.path();
    // A real bundle whose manifests name the operator image: the rewrite rebuilds it.
    let dir = h.join("app-bundle");
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    std::fs::create_dir_all(dir.join("metadata")).unwrap();
    std::fs::write(
        dir.join("manifests/cm.yaml"),
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: app}}\ndata: {{image: \"{}\"}}\n",
            f.operator
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("metadata/annotations.yaml"),
        "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: app\n  operators.operatorframework.io.bundle.channels.v1: stable\n",
    )
    .unwrap();
    let real = src.image("org/app-bundle:v2");
    let dir_arg = dir.display().to_string();
    let real = ok(olm(
        h,
        &["bundle", "build", &dir_arg, "-t", &real, "--push"],
    ))
    .trim()
    .to_string();
    ok(olm(h, &["image", "sign", &real, "--key", &f.key]));
    let path = f.catalog.join("app/catalog.json");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(&f.bundle, &real);
    std::fs::write(&path, text).unwrap();

    let to = dst.image("rewritten");
    let run = mirror(
        &f,
        &to,
        &["--full", "--rewrite-references", "--sign-key", &f.key],
    );
    assert!(run.status.success());
    let text = String::from_utf8_lossy(&run.stderr).into_owned();
    let line = text
        .lines()
        .find(|l| l.contains("rewritten bundle app.v1.0.0: "))
        .unwrap_or_else(|| panic!("no rebuilt bundle in {text}"));
    let rebuilt = line.split_whitespace().nth(3).unwrap().to_string();
    assert!(rebuilt.starts_with(&to), "{rebuilt}");
    let identity = rebuilt.split('@').next().unwrap().to_string();
    assert!(
        verifies(&f, &rebuilt, &identity),
        "{rebuilt} does not verify"
    );
    // The original's signature stays with the original's mirrored copy.
    let (copy, original) = moved(&real, &src, &to);
    assert!(verifies(&f, &copy, &original), "{copy}");
}

#[test]
fn a_prune_deletes_the_signatures_of_what_it_deletes() {
    if !have("skopeo") {
        return;
    }
    let Some((src, dst)) = two_registries() else {
        return;
    };
    let f = fixture(&src, true);
    let to = dst.image("pruned");
    assert!(
        mirror(&f, &to, &["--full", "--mirror-config", "none"])
            .status
            .success()
    );
    let (operator, _) = moved(&f.operator, &src, &to);
    let repo = operator.split('@').next().unwrap().to_string();
    let digest = operator.split('@').nth(1).unwrap();
    let sig = format!("{}.sig", digest.replace(':', "-"));
    assert!(tags_of(&repo).contains(&sig), "{:?}", tags_of(&repo));
    // The operator image left out now: it goes, its signature with it.
    let run = mirror(
        &f,
        &to,
        &[
            "--full",
            "--mirror-config",
            "none",
            "--exclude",
            "org/app@",
            "--prune",
        ],
    );
    assert!(run.status.success());
    let err = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(err.contains(&format!("pruned: {operator}")), "{err}");
    assert!(!tags_of(&repo).contains(&sig), "{:?}", tags_of(&repo));
    let (bundle, _) = moved(&f.bundle, &src, &to);
    let bundle_repo = bundle.split('@').next().unwrap();
    let bundle_sig = format!(
        "{}.sig",
        bundle.split('@').nth(1).unwrap().replace(':', "-")
    );
    assert!(
        tags_of(bundle_repo).contains(&bundle_sig),
        "the kept image keeps its signature"
    );
}
