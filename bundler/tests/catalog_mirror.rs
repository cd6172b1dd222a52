//! `olm catalog mirror` against real registries (several at once, Debian's docker-registry),
//! with skopeo as the independent reader: a filtered catalog and exactly the images its kept
//! bundles need copied by digest (an index whole), the cluster files, the rebuilt catalog
//! image, a second run that moves nothing, a disk archive mirrored on with the source
//! registry stopped, rewritten references, blocked images, an image that cannot be pulled, and
//! a run killed mid-upload that a re-run completes; the node mirror configurations read by a
//! real containerd and by skopeo with the source registry stopped, and digest tags that keep
//! mirrored images through a garbage collection of untagged manifests.

#[path = "support/containerd.rs"]
mod containerd;
#[path = "support/foreign_elf.rs"]
mod foreign_elf;
#[path = "support/registry.rs"]
mod registry;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use registry::{Registry, Variant, have, skopeo};
use serde_json::{Value, json};

fn olm(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
    c.env_remove("REGISTRY_AUTH_FILE")
        .env_remove("DOCKER_CONFIG")
        .env_remove("OLM_REGISTRY_CREDS")
        .env("HOME", home)
        .env("XDG_RUNTIME_DIR", home.join("run"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("SOURCE_DATE_EPOCH", "1700000000");
    c
}

fn ok(out: Output, what: &str) -> (String, String) {
    let (o, e) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{o}\n{e}",
        out.status
    );
    (o, e)
}

fn digest_of(pinned: &str) -> String {
    pinned
        .trim()
        .rsplit_once('@')
        .expect("pinned")
        .1
        .to_string()
}

/// The manifest digest skopeo reads for `image` (raw bytes hashed), or `None` when absent.
fn remote_digest(reg: &Registry, image: &str) -> Option<String> {
    use sha2::Digest as _;
    let mut args = vec!["inspect".to_string(), "--raw".into()];
    args.extend(reg.skopeo_inspect_args());
    args.push(format!("docker://{image}"));
    let out = skopeo(&args);
    out.status
        .success()
        .then(|| format!("sha256:{}", hex::encode(sha2::Sha256::digest(&out.stdout))))
}

/// What the test catalog references, as built into the source registry.
struct Fixture {
    home: tempfile::TempDir,
    catalog: PathBuf,
    /// `name -> pinned reference in the source registry`.
    images: std::collections::BTreeMap<String, String>,
}

/// A bundle image of package `pkg` (one ConfigMap), pushed to `reg`; its pinned reference.
fn bundle_image(home: &Path, reg: &Registry, pkg: &str, version: &str) -> String {
    let dir = home.join(format!("b-{pkg}-{version}"));
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    std::fs::create_dir_all(dir.join("metadata")).unwrap();
    std::fs::write(
        dir.join("manifests/cm.yaml"),
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {pkg}-{version}}}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.join("metadata/annotations.yaml"),
        format!(
            "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: {pkg}\n  operators.operatorframework.io.bundle.channels.v1: stable\n"
        ),
    )
    .unwrap();
    let out = olm(home)
        .args(["bundle", "build"])
        .arg(&dir)
        .args([
            "-t",
            &reg.image(&format!("org/{pkg}-bundle:v{version}")),
            "--push",
        ])
        .args(reg.olm_args())
        .output()
        .unwrap();
    ok(out, "bundle build").0.trim().to_string()
}

fn bundle_blob(pkg: &str, version: &str, image: &str, related: &[&str]) -> Value {
    json!({
        "schema": "olm.bundle",
        "name": format!("{pkg}.v{version}"),
        "package": pkg,
        "image": image,
        "properties": [{"type": "olm.package", "value": {"packageName": pkg, "version": version}}],
        "relatedImages": related.iter().map(|i| json!({"name": "", "image": i})).collect::<Vec<_>>(),
    })
}

/// Two packages in the source registry: `alpha` (1.0.0 -> 1.1.0 in `stable`; 1.1.0 uses an
/// operator image by digest, a multi-platform image and an image by tag) and `beta` (2.0.0).
fn fixture(src: &Registry) -> Option<Fixture> {
    let arm = foreign_elf::busybox("arm64")?;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let mut images = std::collections::BTreeMap::new();
    for (pkg, v) in [("alpha", "1.0.0"), ("alpha", "1.1.0"), ("beta", "2.0.0")] {
        images.insert(format!("{pkg}-{v}"), bundle_image(h, src, pkg, v));
    }
    let build = |args: &[&Path], tag: &str| {
        let mut c = olm(h);
        c.args(["image", "build", "--no-ca-certs"]);
        for b in args {
            c.arg("--binary").arg(b);
        }
        c.args(["-t", &src.image(tag), "--push"]);
        ok(c.output().unwrap(), "image build").0.trim().to_string()
    };
    let olm_bin = PathBuf::from(env!("CARGO_BIN_EXE_olm"));
    images.insert(
        "operator".into(),
        build(&[Path::new("/bin/true")], "org/operator:v1"),
    );
    images.insert("multi".into(), build(&[&olm_bin, &arm], "org/multi:v1"));
    build(&[Path::new("/bin/echo")], "org/tagged:v1");
    images.insert("tagged".into(), src.image("org/tagged:v1"));

    let catalog = h.join("catalog");
    for pkg in ["alpha", "beta"] {
        std::fs::create_dir_all(catalog.join(pkg)).unwrap();
    }
    let alpha = [
        json!({"schema": "olm.package", "name": "alpha", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "name": "stable", "package": "alpha", "entries": [
            {"name": "alpha.v1.0.0"}, {"name": "alpha.v1.1.0", "replaces": "alpha.v1.0.0"}]}),
        bundle_blob(
            "alpha",
            "1.0.0",
            &images["alpha-1.0.0"],
            &[&images["alpha-1.0.0"], &images["operator"]],
        ),
        bundle_blob(
            "alpha",
            "1.1.0",
            &images["alpha-1.1.0"],
            &[
                &images["alpha-1.1.0"],
                &images["operator"],
                &images["multi"],
                &images["tagged"],
            ],
        ),
    ];
    let beta = [
        json!({"schema": "olm.package", "name": "beta", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "name": "stable", "package": "beta", "entries": [{"name": "beta.v2.0.0"}]}),
        bundle_blob(
            "beta",
            "2.0.0",
            &images["beta-2.0.0"],
            &[&images["beta-2.0.0"]],
        ),
    ];
    for (pkg, blobs) in [("alpha", &alpha[..]), ("beta", &beta[..])] {
        let text: String = blobs
            .iter()
            .map(|b| serde_json::to_string_pretty(b).unwrap() + "\n")
            .collect();
        std::fs::write(catalog.join(pkg).join("catalog.json"), text).unwrap();
    }
    Some(Fixture {
        home,
        catalog,
        images,
    })
}

/// Where `image` of the source registry lands under `to` (the repository path kept).
fn moved(image: &str, src: &Registry, to: &str) -> String {
    format!(
        "{to}/{}",
        image.strip_prefix(&format!("{}/", src.addr)).unwrap()
    )
}

fn tools() -> bool {
    have("docker-registry") && have("skopeo")
}

/// The tools, a source and a destination registry, and the fixture in the source (`None`
/// after the prerequisite check when something is missing).
fn setup() -> Option<(Registry, Registry, Fixture)> {
    if !tools() {
        return None;
    }
    let src = Registry::start(Variant::Plain)?;
    let dst = Registry::start(Variant::Plain)?;
    let f = fixture(&src)?;
    Some((src, dst, f))
}

#[test]
fn mirror_to_a_registry_copies_what_the_kept_bundles_need_and_writes_the_cluster_files() {
    if !tools() {
        return;
    }
    let (Some(src), Some(dst)) = (
        Registry::start(Variant::Plain),
        Registry::start(Variant::Htpasswd),
    ) else {
        return;
    };
    let Some(f) = fixture(&src) else { return };
    let h = f.home.path();
    let to = dst.image("mirror");
    let out_dir = h.join("out");
    let run = || {
        olm(h)
            .args(["catalog", "mirror"])
            .arg(&f.catalog)
            .args(["--to", &to, "--package", "alpha", "--output"])
            .arg(&out_dir)
            .args(dst.olm_args())
            .output()
            .unwrap()
    };
    let (_, err) = ok(run(), "mirror");

    // The head of alpha's channel and what it uses, by digest; nothing of 1.0.0 or beta.
    for name in ["alpha-1.1.0", "operator", "multi"] {
        let image = &f.images[name];
        let dest = moved(image, &src, &to);
        assert_eq!(
            remote_digest(&dst, &dest).as_deref(),
            Some(digest_of(image).as_str()),
            "{name} mirrored by digest"
        );
    }
    assert_eq!(
        remote_digest(&dst, &moved(&f.images["tagged"], &src, &to)),
        remote_digest(&src, &f.images["tagged"]),
        "the tag reference mirrored by tag"
    );
    for name in ["alpha-1.0.0", "beta-2.0.0"] {
        assert_eq!(
            remote_digest(&dst, &moved(&f.images[name], &src, &to)),
            None,
            "{name}"
        );
    }
    // The multi-platform image arrived whole: an arm64 node gets its image.
    let multi = moved(&f.images["multi"], &src, &to);
    assert_eq!(dst.inspect_as(&multi, "arm64")["Architecture"], "arm64");

    // The cluster files.
    let read = |name: &str| std::fs::read_to_string(out_dir.join(name)).unwrap();
    let idms = read("idms.yaml");
    assert!(idms.contains("kind: ImageDigestMirrorSet"), "{idms}");
    for repo in ["org/alpha-bundle", "org/operator", "org/multi"] {
        assert!(
            idms.contains(&format!("source: {}/{repo}\n", src.addr))
                && idms.contains(&format!("- {to}/{repo}\n")),
            "{repo} in {idms}"
        );
    }
    assert!(!idms.contains("org/beta-bundle"), "{idms}");
    let itms = read("itms.yaml");
    assert!(
        itms.contains(&format!("source: {}/org/tagged", src.addr)),
        "{itms}"
    );
    let cs = read("catalogsource.yaml");
    let catalog_image = cs
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix(&format!("{to}/catalog@"))
                .map(|d| format!("{to}/catalog@{d}"))
        })
        .unwrap_or_else(|| panic!("no mirrored catalog image in {cs}"));
    assert!(cs.contains("namespace: openshift-marketplace"), "{cs}");
    assert!(read("clustercatalog.yaml").contains(&catalog_image));
    let mapping = read("mapping.txt");
    assert!(
        mapping.contains(&format!(
            "{}={}\n",
            f.images["operator"],
            moved(&f.images["operator"], &src, &to)
        )),
        "{mapping}"
    );
    assert_eq!(
        remote_digest(&dst, &catalog_image).as_deref(),
        Some(digest_of(&catalog_image).as_str())
    );

    // The mirrored catalog image holds the filtered catalog, which validates.
    let (rendered, _) = ok(
        olm(h)
            .args(["catalog", "render", &catalog_image, "-o", "json"])
            .args(dst.olm_args())
            .output()
            .unwrap(),
        "render the mirrored catalog",
    );
    let bundles: Vec<String> = serde_json::Deserializer::from_str(&rendered)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .filter(|b| b["schema"] == "olm.bundle")
        .map(|b| b["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        bundles,
        ["alpha.v1.1.0"],
        "the head of alpha's channel only"
    );
    assert!(
        err.contains("0 already there") || err.contains("copied"),
        "{err}"
    );

    // A second run moves nothing and says so; the registry saw no upload.
    let uploads = dst.log_text().matches("\"POST /v2/").count();
    let (_, err) = ok(run(), "second mirror");
    assert!(err.contains("0 blobs transferred"), "{err}");
    assert_eq!(dst.log_text().matches("\"POST /v2/").count(), uploads);
}

#[test]
fn mirror_through_an_archive_needs_no_source_registry() {
    let Some((mut src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    let archive = h.join("usb");
    let to_archive = || {
        olm(h)
            .args(["catalog", "mirror"])
            .arg(&f.catalog)
            .arg("--to-archive")
            .arg(&archive)
            .args(["--full", "--exclude", "org/tagged"])
            .output()
            .unwrap()
    };
    let (_, err) = ok(to_archive(), "mirror to an archive");
    assert!(
        err.contains("left out") && err.contains("org/tagged"),
        "{err}"
    );
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(archive.join("olm-mirror.json")).unwrap()).unwrap();
    let archived = manifest["catalogs"][0]["images"].as_array().unwrap().len();
    assert_eq!(
        archived, 5,
        "every bundle of --full and its images, the tagged one left out"
    );
    // Blobs shared by images are stored once: one layout.
    assert!(archive.join("images/oci-layout").is_file());
    // A second run adds nothing.
    let (_, err) = ok(to_archive(), "second mirror to the archive");
    assert!(err.contains("0 blobs transferred"), "{err}");

    // The source registry goes away; the archive is enough.
    src.kill();
    let to = dst.image("inside");
    let (_, err) = ok(
        olm(h)
            .args(["catalog", "mirror", "--from-archive"])
            .arg(&archive)
            .args(["--to", &to, "--output"])
            .arg(h.join("out"))
            .output()
            .unwrap(),
        "mirror from the archive",
    );
    for name in [
        "alpha-1.0.0",
        "alpha-1.1.0",
        "beta-2.0.0",
        "operator",
        "multi",
    ] {
        let image = &f.images[name];
        assert_eq!(
            remote_digest(&dst, &moved(image, &src, &to)).as_deref(),
            Some(digest_of(image).as_str()),
            "{name}: {err}"
        );
    }
    assert!(
        std::fs::read_to_string(h.join("out/catalogsource.yaml"))
            .unwrap()
            .contains(&to)
    );
}

#[test]
fn rewritten_references_name_the_mirror() {
    let Some((_src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    let to = dst.image("rw");
    let out_dir = h.join("out");
    ok(
        olm(h)
            .args(["catalog", "mirror"])
            .arg(&f.catalog)
            .args([
                "--to",
                &to,
                "--rewrite-references",
                "--target-catalog",
                "ops/catalog",
                "--target-tag",
                "v1",
            ])
            .arg("--output")
            .arg(&out_dir)
            .output()
            .unwrap(),
        "mirror with rewritten references",
    );
    assert!(!out_dir.join("idms.yaml").exists(), "nothing to redirect");
    let catalog = format!("{to}/ops/catalog:v1");
    let (rendered, _) = ok(
        olm(h)
            .args(["catalog", "render", &catalog])
            .output()
            .unwrap(),
        "render",
    );
    let cfg: Vec<Value> = serde_json::Deserializer::from_str(&rendered)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect();
    let bundles: Vec<&Value> = cfg.iter().filter(|b| b["schema"] == "olm.bundle").collect();
    assert!(!bundles.is_empty());
    for b in bundles {
        assert!(b["image"].as_str().unwrap().starts_with(&to), "{b}");
        for r in b["relatedImages"].as_array().unwrap() {
            assert!(r["image"].as_str().unwrap().starts_with(&to), "{r}");
        }
    }
    // The rewritten catalog passes every opm validate rule.
    let dir = h.join("rewritten");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("catalog.json"), &rendered).unwrap();
    ok(
        olm(h)
            .args(["catalog", "validate"])
            .arg(&dir)
            .output()
            .unwrap(),
        "validate the rewritten catalog",
    );
}

#[test]
fn an_image_that_cannot_be_pulled_stops_the_run_after_the_rest_are_copied() {
    let Some((src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    // beta 2.0.0 also needs an image its registry never had.
    let missing = format!("{}/org/gone@sha256:{}", src.addr, "e".repeat(64));
    let path = f.catalog.join("beta/catalog.json");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "\"relatedImages\": [",
        &format!("\"relatedImages\": [\n    {{\"name\": \"gone\", \"image\": \"{missing}\"}},"),
    );
    std::fs::write(&path, text).unwrap();
    let to = dst.image("m");
    let run = |extra: &[&str]| {
        olm(h)
            .args(["catalog", "mirror"])
            .arg(&f.catalog)
            .args(["--to", &to, "--output"])
            .arg(h.join("out"))
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&missing) && err.contains("beta/beta.v2.0.0") && err.contains("not found"),
        "{err}"
    );
    // The others were copied; the catalog was not pushed.
    assert!(remote_digest(&dst, &moved(&f.images["beta-2.0.0"], &src, &to)).is_some());
    assert!(!h.join("out/catalogsource.yaml").exists());

    let out = run(&["--continue-on-error"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not copied") && err.contains(&missing),
        "{err}"
    );
    assert!(h.join("out/catalogsource.yaml").exists());
}

#[test]
fn a_mirror_killed_mid_upload_completes_on_a_rerun() {
    let Some((src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    // A large operator image, so the kill lands mid-upload.
    let big = h.join("bigbin");
    registry::big_binary(&big, 64);
    let (pinned, _) = ok(
        olm(h)
            .args(["image", "build", "--no-ca-certs", "--binary"])
            .arg(&big)
            .args(["-t", &src.image("org/big:v1"), "--push"])
            .output()
            .unwrap(),
        "big image",
    );
    let path = f.catalog.join("beta/catalog.json");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "\"relatedImages\": [",
        &format!(
            "\"relatedImages\": [\n    {{\"name\": \"big\", \"image\": \"{}\"}},",
            pinned.trim()
        ),
    );
    std::fs::write(&path, text).unwrap();
    let to = dst.image("k");
    let run = || {
        let mut c = olm(h);
        c.args(["catalog", "mirror"])
            .arg(&f.catalog)
            .args(["--to", &to, "--jobs", "1", "--output"])
            .arg(h.join("out"))
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    };
    let mut child = run().spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !dst.uploading() {
        assert!(Instant::now() < deadline, "no upload started");
        if child.try_wait().unwrap().is_some() {
            panic!("the mirror ended before it could be interrupted");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL: no cleanup of any kind
    child.wait().unwrap();
    assert!(!h.join("out/catalogsource.yaml").exists());

    ok(run().output().unwrap(), "re-run after the kill");
    assert_eq!(
        remote_digest(&dst, &moved(pinned.trim(), &src, &to)).as_deref(),
        Some(digest_of(&pinned).as_str())
    );
    assert!(h.join("out/catalogsource.yaml").exists());
}

#[test]
fn an_oc_mirror_image_set_configuration_works_unchanged() {
    let Some((src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    // The catalog as an image in the source registry, as oc-mirror users name it.
    let catalog_image = src.image("org/catalog:v4.20");
    ok(
        olm(h)
            .args(["catalog", "build"])
            .arg(&f.catalog)
            .args(["-t", &catalog_image, "--push", "--no-ca-certs"])
            .output()
            .unwrap(),
        "catalog image",
    );
    let config = h.join("isc.yaml");
    std::fs::write(
        &config,
        format!(
            "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  operators:\n  - catalog: docker://{}\n    targetCatalog: ops/filtered\n    targetTag: v4.20\n    packages:\n    - name: alpha\n      minVersion: 1.0.0\n    - name: gamma\n  blockedImages:\n  - name: org/multi\n",
            catalog_image
        ),
    )
    .unwrap();
    let to = dst.image("isc");
    let (_, err) = ok(
        olm(h)
            .args(["catalog", "mirror", "--config"])
            .arg(&config)
            .args(["--to", &to, "--output"])
            .arg(h.join("out"))
            .output()
            .unwrap(),
        "mirror with an ImageSetConfiguration",
    );
    // Both alpha bundles (the range), not beta; the blocked image left out and said so.
    for name in ["alpha-1.0.0", "alpha-1.1.0", "operator"] {
        assert!(
            remote_digest(&dst, &moved(&f.images[name], &src, &to)).is_some(),
            "{name}"
        );
    }
    assert!(remote_digest(&dst, &moved(&f.images["beta-2.0.0"], &src, &to)).is_none());
    assert!(remote_digest(&dst, &moved(&f.images["multi"], &src, &to)).is_none());
    assert!(
        err.contains("left out") && err.contains("blocked by \"org/multi\""),
        "{err}"
    );
    // A package the catalog lacks is left out, as oc-mirror leaves it out, with a warning.
    assert!(
        err.contains(&format!(
            "{catalog_image}: package \"gamma\" is not in the catalog (packages: alpha, beta): ignored, as oc-mirror does"
        )),
        "{err}"
    );
    let cs = std::fs::read_to_string(h.join("out/catalogsource.yaml")).unwrap();
    assert!(cs.contains(&format!("{to}/ops/filtered@sha256:")), "{cs}");
    assert!(cs.contains("name: filtered-v4-20"), "{cs}");
    // --strict refuses it before anything is copied.
    let strict = olm(h)
        .args(["catalog", "mirror", "--strict", "--config"])
        .arg(&config)
        .args(["--to", &dst.image("strict"), "--output"])
        .arg(h.join("strict"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&strict.stderr);
    assert_eq!(strict.status.code(), Some(1), "{err}");
    assert!(
        err.contains("package \"gamma\" is not in the catalog (packages: alpha, beta)")
            && !err.contains("ignored"),
        "{err}"
    );
    assert!(
        remote_digest(
            &dst,
            &moved(&f.images["alpha-1.0.0"], &src, &dst.image("strict"))
        )
        .is_none()
    );
}

/// `skopeo copy` between plain-HTTP registries: content the mirror did not write.
fn plain_copy(from: &str, to: &str) {
    let out = skopeo(&[
        "copy".into(),
        "--src-tls-verify=false".into(),
        "--dest-tls-verify=false".into(),
        format!("docker://{from}"),
        format!("docker://{to}"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `skopeo copy --all` of `image` into a directory: every manifest and blob can be pulled.
fn pullable(reg: &Registry, image: &str, into: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(into);
    let mut args = vec!["copy".to_string(), "--all".into()];
    args.extend(reg.skopeo_src_args());
    args.push(format!("docker://{image}"));
    args.push(format!("dir:{}", into.display()));
    let out = skopeo(&args);
    out.status
        .success()
        .then_some(())
        .ok_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn nodes_pull_the_original_references_from_the_mirror_through_the_generated_configs() {
    if !tools() {
        return;
    }
    let Some(ctrd) = containerd::Containerd::start() else {
        return;
    };
    let (Some(mut src), Some(dst)) = (
        Registry::start(Variant::Plain),
        Registry::start(Variant::Plain),
    ) else {
        return;
    };
    let Some(f) = fixture(&src) else { return };
    let h = f.home.path();
    let to = dst.image("mirror/ocp");
    let out_dir = h.join("out");
    ok(
        olm(h)
            .args(["catalog", "mirror"])
            .arg(&f.catalog)
            .args(["--to", &to, "--package", "alpha", "--output"])
            .arg(&out_dir)
            .output()
            .unwrap(),
        "mirror",
    );
    let read = |name: &str| std::fs::read_to_string(out_dir.join(name)).unwrap();
    let hosts = read(&format!("certs.d/{}/hosts.toml", src.addr));
    assert!(
        hosts.contains(&format!("[host.\"http://{}/v2/mirror/ocp\"]", dst.addr))
            && hosts.contains("capabilities = [\"pull\", \"resolve\"]")
            && hosts.contains("override_path = true"),
        "{hosts}"
    );
    let k3s = read("registries.yaml");
    assert!(
        k3s.contains(&format!("- http://{}\n", dst.addr)) && k3s.contains("mirror/ocp/$1"),
        "{k3s}"
    );
    // No k3s runs here: the file is read by PyYAML against k3s's documented schema.
    if let Some(parsed) = k3s_registries_yaml(&out_dir.join("registries.yaml")) {
        let mirror = &parsed["mirrors"][&src.addr];
        assert_eq!(
            mirror["endpoint"],
            json!([format!("http://{}", dst.addr)]),
            "{parsed}"
        );
        assert_eq!(
            mirror["rewrite"],
            json!({"^(.*)$": "mirror/ocp/$1"}),
            "{parsed}"
        );
    }

    // The source registry goes away: only the mirror can answer.
    src.kill();
    let hosts_dir = out_dir.join("certs.d");
    let operator = &f.images["operator"];
    let tagged = &f.images["tagged"];
    for image in [operator, tagged] {
        let out = ctrd.pull(&hosts_dir, image);
        assert!(
            out.status.success(),
            "containerd pulls {image} through hosts.toml: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Without the generated hosts.toml the same pull fails: the test can fail.
    let empty = h.join("no-hosts");
    std::fs::create_dir_all(&empty).unwrap();
    let bundle = &f.images["alpha-1.1.0"];
    assert!(!ctrd.pull(&empty, bundle).status.success());
    assert!(ctrd.pull(&hosts_dir, bundle).status.success());

    // skopeo (containers-image, CRI-O's and podman's library) parses registries.conf and
    // resolves the original references through it.
    let conf = out_dir.join("registries.conf");
    for image in [operator, tagged] {
        let out = skopeo(&[
            "--registries-conf".into(),
            conf.display().to_string(),
            "inspect".into(),
            "--raw".into(),
            format!("docker://{image}"),
        ]);
        assert!(
            out.status.success(),
            "skopeo resolves {image} through registries.conf: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            read("registries.conf")
        );
    }
}

#[test]
fn mirrored_images_survive_a_garbage_collection_of_untagged_manifests() {
    let Some((src, mut dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    let mirror = |to: &str, extra: &[&str]| {
        ok(
            olm(h)
                .args(["catalog", "mirror"])
                .arg(&f.catalog)
                .args(["--to", to, "--full", "--mirror-config", "none", "--output"])
                .arg(h.join(to.replace(['/', ':'], "_")))
                .args(extra)
                .output()
                .unwrap(),
            "mirror",
        )
    };
    let kept = dst.image("kept");
    let bare = dst.image("bare");
    // Requests each registry saw, by method, printed for comparing runs.
    let counts = |reg: &Registry| {
        let log = reg.log_text();
        ["GET", "HEAD", "PUT", "POST", "DELETE"]
            .map(|m| log.matches(&format!("\"{m} /v2/")).count())
    };
    let (s0, d0) = (counts(&src), counts(&dst));
    mirror(&kept, &[]);
    let (s1, d1) = (counts(&src), counts(&dst));
    eprintln!(
        "first run: source GET/HEAD/PUT/POST/DELETE {:?}, mirror {:?}",
        std::array::from_fn::<_, 5, _>(|i| s1[i] - s0[i]),
        std::array::from_fn::<_, 5, _>(|i| d1[i] - d0[i])
    );
    mirror(&bare, &["--no-digest-tags"]);
    let digest_only = [
        "alpha-1.0.0",
        "alpha-1.1.0",
        "beta-2.0.0",
        "operator",
        "multi",
    ];
    for name in digest_only {
        let dest = moved(&f.images[name], &src, &kept);
        let tag = digest_of(&f.images[name]).replace(':', "-");
        let by_tag = format!("{}:{tag}", dest.split_once('@').unwrap().0);
        assert_eq!(
            remote_digest(&dst, &by_tag).as_deref(),
            Some(digest_of(&f.images[name]).as_str()),
            "{name} tagged {tag}"
        );
    }
    // A re-run writes no tag again.
    let puts = dst.log_text().matches("\"PUT /v2/").count();
    let (s0, d0) = (counts(&src), counts(&dst));
    mirror(&kept, &[]);
    let (s1, d1) = (counts(&src), counts(&dst));
    eprintln!(
        "re-run: source GET/HEAD/PUT/POST/DELETE {:?}, mirror {:?}",
        std::array::from_fn::<_, 5, _>(|i| s1[i] - s0[i]),
        std::array::from_fn::<_, 5, _>(|i| d1[i] - d0[i])
    );
    assert_eq!(dst.log_text().matches("\"PUT /v2/").count(), puts);

    // The untagged copies' repositories get one unrelated tag each: distribution 2.8's
    // collector stops with an error on a repository that never had a tag.
    for name in digest_only {
        let dest = moved(&f.images[name], &src, &bare);
        let repo = dest.split_once('@').unwrap().0;
        plain_copy(&f.images["tagged"], &format!("{repo}:unrelated"));
    }
    let collected = dst.garbage_collect_untagged();
    assert!(collected.contains("eligible for deletion"), "{collected}");
    let scratch = h.join("pulled");
    for name in digest_only.iter().chain(&["tagged"]) {
        let image = moved(&f.images[*name], &src, &kept);
        pullable(&dst, &image, &scratch)
            .unwrap_or_else(|e| panic!("{name} gone after the garbage collection: {e}"));
    }
    // The untagged copies were collected: the collection did run.
    for name in digest_only {
        assert_eq!(
            remote_digest(&dst, &moved(&f.images[name], &src, &bare)),
            None,
            "{name} without tags"
        );
    }
}

/// A bundle of package `gamma` whose CSV names `operator` (container, `RELATED_IMAGE_*`,
/// `containerImage`) and `operand` (init container, `relatedImages`); its CSV text.
fn gamma_bundle(dir: &Path, operator: &str, operand: &str) -> String {
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    std::fs::create_dir_all(dir.join("metadata")).unwrap();
    let csv = format!(
        "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: gamma.v0.1.0\n  annotations:\n    containerImage: {operator}   # as written\nspec:\n  version: 0.1.0\n  displayName: Gamma\n  install:\n    strategy: deployment\n    spec:\n      deployments:\n      - name: gamma\n        spec:\n          selector: {{matchLabels: {{app: gamma}}}}\n          template:\n            metadata: {{labels: {{app: gamma}}}}\n            spec:\n              initContainers:\n              - name: init\n                image: \"{operand}\"\n              containers:\n              - name: manager\n                image: {operator}\n                env:\n                - name: RELATED_IMAGE_OPERAND\n                  value: {operand}\n  relatedImages:\n  - name: operand\n    image: {operand}\n  installModes:\n  - {{type: AllNamespaces, supported: true}}\n"
    );
    std::fs::write(dir.join("manifests/gamma.clusterserviceversion.yaml"), &csv).unwrap();
    std::fs::write(
        dir.join("metadata/annotations.yaml"),
        "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: gamma\n  operators.operatorframework.io.bundle.channels.v1: stable\n",
    )
    .unwrap();
    csv
}

#[test]
fn rewritten_bundles_name_only_mirrored_images() {
    if !tools() {
        return;
    }
    let (Some(src), Some(dst)) = (
        Registry::start(Variant::Plain),
        Registry::start(Variant::Plain),
    ) else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let build = |binary: &str, tag: &str| {
        ok(
            olm(h)
                .args(["image", "build", "--no-ca-certs", "--binary", binary])
                .args(["-t", &src.image(tag), "--push"])
                .output()
                .unwrap(),
            "image build",
        )
        .0
        .trim()
        .to_string()
    };
    let operator = build("/bin/true", "org/gamma-operator:v1");
    build("/bin/echo", "org/gamma-operand:v1");
    let operand = src.image("org/gamma-operand:v1");
    let csv = gamma_bundle(&h.join("gamma"), &operator, &operand);
    let bundle = ok(
        olm(h)
            .args(["bundle", "build"])
            .arg(h.join("gamma"))
            .args(["-t", &src.image("org/gamma-bundle:v0.1.0"), "--push"])
            .output()
            .unwrap(),
        "bundle build",
    )
    .0
    .trim()
    .to_string();
    let catalog = h.join("catalog/gamma");
    std::fs::create_dir_all(&catalog).unwrap();
    let blobs = [
        json!({"schema": "olm.package", "name": "gamma", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "name": "stable", "package": "gamma", "entries": [{"name": "gamma.v0.1.0"}]}),
        bundle_blob("gamma", "0.1.0", &bundle, &[&bundle, &operator, &operand]),
    ];
    let text: String = blobs.iter().map(|b| b.to_string() + "\n").collect();
    std::fs::write(catalog.join("catalog.json"), text).unwrap();

    let to = dst.image("rw");
    let (_, err) = ok(
        olm(h)
            .args(["catalog", "mirror"])
            .arg(h.join("catalog"))
            .args(["--to", &to, "--rewrite-references", "--target-tag", "v1"])
            .arg("--output")
            .arg(h.join("out"))
            .output()
            .unwrap(),
        "mirror with rewritten references",
    );
    assert!(err.contains("rewritten bundle gamma.v0.1.0"), "{err}");

    // The catalog names the rebuilt bundle image, in the mirror, by its new digest.
    let (rendered, _) = ok(
        olm(h)
            .args([
                "catalog",
                "render",
                &format!("{to}/catalog:v1"),
                "-o",
                "json",
            ])
            .output()
            .unwrap(),
        "render the catalog",
    );
    let b: Value = serde_json::Deserializer::from_str(&rendered)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .find(|b| b["schema"] == "olm.bundle")
        .unwrap();
    let rebuilt = b["image"].as_str().unwrap().to_string();
    assert!(
        rebuilt.starts_with(&format!("{to}/org/gamma-bundle@sha256:")),
        "{b}"
    );
    assert_ne!(digest_of(&rebuilt), digest_of(&bundle), "a new digest");
    for r in b["relatedImages"].as_array().unwrap() {
        assert!(r["image"].as_str().unwrap().starts_with(&to), "{r}");
    }
    assert!(
        b["relatedImages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["image"] == rebuilt.as_str()),
        "{b}"
    );

    // The pushed bundle image, rendered: its CSV names only mirrored images.
    let (objects, _) = ok(
        olm(h)
            .args(["catalog", "render", &rebuilt, "-o", "json"])
            .output()
            .unwrap(),
        "render the rebuilt bundle",
    );
    let r: Value = serde_json::from_str(objects.trim()).unwrap();
    let mut named = 0;
    for p in r["properties"].as_array().unwrap() {
        if p["type"] == "olm.bundle.object" {
            use base64::Engine as _;
            let data = base64::engine::general_purpose::STANDARD
                .decode(p["value"]["data"].as_str().unwrap())
                .unwrap();
            let text = String::from_utf8(data).unwrap();
            assert!(!text.contains(&src.addr), "{text}");
            named += text.matches(&to).count();
        }
    }
    assert_eq!(named, 5, "every reference of the CSV: {r}");
    for ri in r["relatedImages"].as_array().unwrap() {
        assert!(ri["image"].as_str().unwrap().starts_with(&to), "{ri}");
    }
    // Its files are the original's, but for the references.
    let rootfs = h.join("rootfs");
    ok(
        olm(h)
            .args(["image", "pull", &rebuilt, "--rootfs"])
            .arg(&rootfs)
            .output()
            .unwrap(),
        "pull the rebuilt bundle",
    );
    let moved_operator = moved(&operator, &src, &to);
    let moved_operand = moved(&operand, &src, &to);
    assert_eq!(
        std::fs::read_to_string(rootfs.join("manifests/gamma.clusterserviceversion.yaml")).unwrap(),
        csv.replace(&operator, &moved_operator)
            .replace(&operand, &moved_operand)
    );
}

#[test]
fn a_prune_after_narrowing_deletes_exactly_the_images_that_left() {
    let Some((src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    let to = dst.image("p");
    let mirror = |selection: &[&str], extra: &[&str]| {
        ok(
            olm(h)
                .args(["catalog", "mirror"])
                .arg(&f.catalog)
                .args(["--to", &to, "--mirror-config", "none", "--output"])
                .arg(h.join("out"))
                .args(selection)
                .args(extra)
                .output()
                .unwrap(),
            "mirror",
        )
        .1
    };
    // A dry run first: the plan, and nothing in the registry or on disk.
    let plan = mirror(&["--full"], &["--dry-run"]);
    assert!(plan.contains("--dry-run: nothing copied"), "{plan}");
    for name in ["alpha-1.0.0", "operator", "multi"] {
        let line = format!(
            "would mirror: {} -> {}",
            f.images[name],
            moved(&f.images[name], &src, &to)
        );
        assert!(plan.contains(&line), "{line} in {plan}");
        assert!(remote_digest(&dst, &moved(&f.images[name], &src, &to)).is_none());
    }
    assert!(!h.join("out").exists(), "a dry run writes no file");
    mirror(&["--full"], &[]);
    // Other content of the mirror: a repository it never wrote, and another image in one it
    // did.
    for (from, dest) in [
        (&f.images["tagged"], format!("{to}/org/other:v1")),
        (
            &f.images["tagged"],
            format!("{to}/org/beta-bundle:not-ours"),
        ),
    ] {
        plain_copy(from, &dest);
    }
    let present = |name: &str| remote_digest(&dst, &moved(&f.images[name], &src, &to)).is_some();
    let all = [
        "alpha-1.0.0",
        "alpha-1.1.0",
        "beta-2.0.0",
        "operator",
        "multi",
        "tagged",
    ];
    assert!(all.iter().all(|n| present(n)));

    // Narrowed to alpha's head: alpha 1.0.0 and beta leave; the operator stays (1.1.0 uses it).
    let gone = ["alpha-1.0.0", "beta-2.0.0"];
    let err = mirror(&["--package", "alpha"], &["--prune", "--dry-run"]);
    for name in gone {
        let line = format!("would prune: {}", moved(&f.images[name], &src, &to));
        assert!(err.contains(&line), "{line} in {err}");
    }
    assert_eq!(err.matches("would prune:").count(), 2, "{err}");
    assert!(err.contains("would mirror:"), "{err}");
    assert!(all.iter().all(|n| present(n)), "a dry run deletes nothing");

    let err = mirror(&["--package", "alpha"], &["--prune"]);
    assert_eq!(err.matches("pruned:").count(), 2, "{err}");
    for name in all {
        assert_eq!(present(name), !gone.contains(&name), "{name}: {err}");
    }
    let multi = moved(&f.images["multi"], &src, &to);
    assert_eq!(dst.inspect_as(&multi, "arm64")["Architecture"], "arm64");
    for other in [
        format!("{to}/org/other:v1"),
        format!("{to}/org/beta-bundle:not-ours"),
    ] {
        assert!(remote_digest(&dst, &other).is_some(), "{other} survives");
    }
    // The record is the narrowed selection's now: a second prune deletes nothing.
    let err = mirror(&["--package", "alpha"], &["--prune"]);
    assert!(!err.contains("pruned:"), "{err}");
}

#[test]
fn flags_that_apply_at_the_registry_are_refused_with_to_archive() {
    let home = tempfile::tempdir().unwrap();
    for flag in [
        &["--sign-key", "cosign.key"][..],
        &["--mirror-config", "k3s"],
        &["--node-ca", "/etc/ca.pem"],
        &["--node-skip-verify"],
    ] {
        let out = olm(home.path())
            .args(["catalog", "mirror", "cat", "--to-archive"])
            .arg(home.path().join("a"))
            .args(flag)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag:?}: {err}");
        assert!(err.contains("cannot be used with"), "{flag:?}: {err}");
        assert!(!home.path().join("a").exists());
    }
}

/// `olm catalog mirror` of the fixture's catalog into `to` (`--mirror-config none`), the
/// output under `h/out`; the finished process.
fn mirror_run(h: &Path, f: &Fixture, to: &str, args: &[&str]) -> Output {
    olm(h)
        .args(["catalog", "mirror"])
        .arg(&f.catalog)
        .args(["--to", to, "--mirror-config", "none", "--output"])
        .arg(h.join("out"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_prune_keeps_what_another_catalog_of_the_mirror_still_uses() {
    let Some((src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    let to = dst.image("p");
    // Two configurations into one mirror: `wide` all of it, `narrow` alpha's head.
    ok(
        mirror_run(h, &f, &to, &["--full", "--catalog-name", "wide"]),
        "wide",
    );
    ok(
        mirror_run(
            h,
            &f,
            &to,
            &["--package", "alpha", "--catalog-name", "narrow"],
        ),
        "narrow",
    );
    let present = |name: &str| remote_digest(&dst, &moved(&f.images[name], &src, &to)).is_some();
    // `wide` narrowed to beta: of what leaves it, only alpha 1.0.0 is no one's.
    let (_, err) = ok(
        mirror_run(
            h,
            &f,
            &to,
            &["--package", "beta", "--catalog-name", "wide", "--prune"],
        ),
        "prune",
    );
    assert_eq!(err.matches("pruned:").count(), 1, "{err}");
    let line = format!("pruned: {}", moved(&f.images["alpha-1.0.0"], &src, &to));
    assert!(err.contains(&line), "{line} in {err}");
    for name in ["alpha-1.1.0", "operator", "multi", "tagged", "beta-2.0.0"] {
        assert!(present(name), "{name} is still used: {err}");
    }
    assert!(!present("alpha-1.0.0"));
}

#[test]
fn a_prune_with_continue_on_error_keeps_the_images_that_failed_to_copy() {
    let Some((src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    let to = dst.image("p");
    ok(mirror_run(h, &f, &to, &["--full"]), "mirror");
    // The operator image leaves the source: this run cannot copy it, the catalog still
    // names it, and the mirror's copy is what the cluster pulls.
    let out = skopeo(&[
        "delete".into(),
        "--tls-verify=false".into(),
        format!("docker://{}", f.images["operator"]),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prune = |extra: &[&str]| {
        let mut args = vec!["--package", "alpha", "--prune", "--continue-on-error"];
        args.extend(extra);
        let out = mirror_run(h, &f, &to, &args);
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = prune(&[]);
    let operator = moved(&f.images["operator"], &src, &to);
    assert!(
        err.contains(&format!("not copied: {}", f.images["operator"])),
        "{err}"
    );
    assert!(!err.contains(&format!("pruned: {operator}")), "{err}");
    assert_eq!(err.matches("pruned:").count(), 2, "{err}");
    assert!(remote_digest(&dst, &operator).is_some(), "{err}");
    // The record still holds it: once the selection leaves it, a prune deletes it.
    let err = ok(
        mirror_run(h, &f, &to, &["--package", "beta", "--prune"]),
        "beta",
    )
    .1;
    assert!(err.contains(&format!("pruned: {operator}")), "{err}");
    assert!(remote_digest(&dst, &operator).is_none());
}

#[test]
fn a_source_tag_never_moves_a_tag_the_mirror_already_uses() {
    let Some((src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    let build = |binary: &str, tag: &str| {
        let out = olm(h)
            .args(["image", "build", "--no-ca-certs", "--binary", binary, "-t"])
            .arg(src.image(tag))
            .arg("--push")
            .output()
            .unwrap();
        digest_of(&ok(out, "image build").0)
    };
    // An older build of org/tagged, named by the tag the catalog also mirrors by tag; and
    // org/held:v2 by tag and digest, where the mirror's v2 already names something else.
    let old = build("/bin/ls", "org/tagged:v0");
    let held = build("/bin/cat", "org/held:v2");
    let to = dst.image("t");
    let other = format!("{to}/org/held:v2");
    plain_copy(&f.images["tagged"], &other);
    let before = remote_digest(&dst, &other).unwrap();
    let path = f.catalog.join("beta/catalog.json");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "\"relatedImages\": [",
        &format!(
            "\"relatedImages\": [\n    {{\"name\": \"old\", \"image\": \"{}/org/tagged:v1@{old}\"}},\n    {{\"name\": \"held\", \"image\": \"{}/org/held:v2@{held}\"}},",
            src.addr, src.addr
        ),
    );
    std::fs::write(&path, text).unwrap();
    ok(mirror_run(h, &f, &to, &["--full"]), "mirror");
    let tagged = moved(&f.images["tagged"], &src, &to);
    assert_eq!(
        remote_digest(&dst, &tagged),
        remote_digest(&src, &f.images["tagged"]),
        "{tagged} is the catalog's org/tagged:v1, not the older build"
    );
    assert_eq!(
        remote_digest(&dst, &other),
        Some(before),
        "{other} left as it was"
    );
    for (repo, digest) in [("org/tagged", &old), ("org/held", &held)] {
        let pinned = format!("{to}/{repo}@{digest}");
        assert_eq!(remote_digest(&dst, &pinned).as_ref(), Some(digest));
        let by_tag = format!("{to}/{repo}:{}", digest.replace(':', "-"));
        assert_eq!(
            remote_digest(&dst, &by_tag).as_ref(),
            Some(digest),
            "{by_tag}"
        );
    }
}

#[test]
fn one_configuration_of_two_catalogs_prunes_once_and_writes_one_set_of_node_files() {
    let Some((src, dst, f)) = setup() else {
        return;
    };
    let h = f.home.path();
    let catalog_image = src.image("org/catalog:v1");
    ok(
        olm(h)
            .args(["catalog", "build"])
            .arg(&f.catalog)
            .args(["-t", &catalog_image, "--push", "--no-ca-certs"])
            .output()
            .unwrap(),
        "catalog image",
    );
    let to = dst.image("two");
    // Both catalogs keep alpha's head; the second one then moves to beta.
    let run = |second: &str| {
        let config = h.join("isc.yaml");
        std::fs::write(
            &config,
            format!(
                "kind: ImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\nmirror:\n  operators:\n  - catalog: docker://{catalog_image}\n    targetCatalog: ops/one\n    packages:\n    - name: alpha\n  - catalog: docker://{catalog_image}\n    targetCatalog: ops/two\n    packages:\n    - name: {second}\n"
            ),
        )
        .unwrap();
        ok(
            olm(h)
                .args(["catalog", "mirror", "--prune", "--config"])
                .arg(&config)
                .args(["--to", &to, "--output"])
                .arg(h.join("out"))
                .output()
                .unwrap(),
            "mirror",
        )
        .1
    };
    run("alpha");
    let present = |name: &str| remote_digest(&dst, &moved(&f.images[name], &src, &to)).is_some();
    for name in ["alpha-1.1.0", "operator", "multi", "tagged"] {
        assert!(present(name), "{name}");
    }
    let err = run("beta");
    assert!(
        !err.contains("pruned:"),
        "the first catalog still uses alpha: {err}"
    );
    for name in ["alpha-1.1.0", "operator", "multi", "tagged", "beta-2.0.0"] {
        assert!(present(name), "{name}: {err}");
    }
    // The node files: one set for the run, at the top of --output.
    let out = h.join("out");
    assert!(out.join("registries.yaml").is_file());
    assert!(
        out.join(format!("certs.d/{}/hosts.toml", src.addr))
            .is_file()
    );
    let mut catalogs = 0;
    for sub in std::fs::read_dir(&out).unwrap() {
        let sub = sub.unwrap().path();
        if sub.is_dir() && !sub.ends_with("certs.d") {
            assert!(
                sub.join("catalogsource.yaml").is_file(),
                "{}",
                sub.display()
            );
            assert!(!sub.join("registries.yaml").exists(), "{}", sub.display());
            assert!(!sub.join("certs.d").exists(), "{}", sub.display());
            catalogs += 1;
        }
    }
    assert_eq!(catalogs, 2, "a directory per catalog");
}

/// `registries.yaml` as PyYAML reads it (a YAML library of its own), checked against k3s's
/// documented schema (`mirrors.<registry>.endpoint` a list of URLs, `.rewrite` a map of
/// strings; `configs.<host>.tls` and `.auth` maps; nothing else); `None` after
/// [`registry::prerequisite::missing`] without PyYAML.
fn k3s_registries_yaml(path: &Path) -> Option<Value> {
    const CHECK: &str = r#"
import json, sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert isinstance(doc, dict) and set(doc) <= {"mirrors", "configs"}, doc
for name, m in (doc.get("mirrors") or {}).items():
    assert isinstance(name, str) and set(m) <= {"endpoint", "rewrite"}, m
    assert all(isinstance(e, str) and e.startswith(("http://", "https://")) for e in m["endpoint"]), m
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in (m.get("rewrite") or {}).items()), m
for host, c in (doc.get("configs") or {}).items():
    assert set(c) <= {"tls", "auth"}, c
    tls = c.get("tls") or {}
    assert set(tls) <= {"ca_file", "cert_file", "key_file", "insecure_skip_verify"}, tls
    assert isinstance(tls.get("insecure_skip_verify", False), bool), tls
print(json.dumps(doc))
"#;
    let has = Command::new("/usr/bin/python3")
        .args(["-c", "import yaml"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        registry::prerequisite::missing("python3-yaml (PyYAML) not installed");
        return None;
    }
    let out = Command::new("/usr/bin/python3")
        .args(["-c", CHECK])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{} does not fit k3s's schema: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}
