//! What an untrusted image or signature reaches besides its layers' paths (those are
//! `hostile_images.rs`, paths named by labels and archives `hostile_paths.rs`), one crafted
//! input per door, each run by the real `olm` with its own `TMPDIR` beside a canary directory:
//!
//! - pages baked into a catalog image (a script, a loose Content-Security-Policy, a
//!   `site.json` made to look current) never run in headless Chromium: `olm catalog serve`
//!   renders its own pages, or serves its API without a browser when it cannot;
//! - signed payloads, statements and envelopes that Go's `encoding/json` reads differently
//!   from other readers (a second key on one field, in another case) are refused by
//!   `olm image verify` and `verify-attestation`, though their signatures verify;
//! - a server's temporary cache is private (mode 0700) and random-named;
//! - a gzip bomb, a layer of many files and sparse files declaring a terabyte stop at the
//!   unpack limit, quickly, naming the layer and the limit, and leave nothing behind; sparse
//!   files within it are written with holes;
//! - SIGINT or SIGTERM during an unpack removes the scratch directory (exit 130 or 143).
//!
//! After every run the canary directory is as it was and the `TMPDIR` is empty.

#[path = "support/crafted.rs"]
mod crafted;
#[path = "support/prerequisite.rs"]
mod prerequisite;
#[path = "support/serve.rs"]
mod serve;
#[path = "support/signed_json.rs"]
mod signed_json;

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use crafted::Entry::{self, *};
use olm_bundler::image::sign::key::PrivateKey;
use serve::{Server, free_port, http_get};

const OLM: &str = env!("CARGO_BIN_EXE_olm");
const CONFIGS_LABEL: (&str, &str) = (
    "operators.operatorframework.io.index.configs.v1",
    "/configs",
);
const CATALOG: &str = r#"{"schema":"olm.package","name":"canary-op","defaultChannel":"stable","description":"the catalog's own words"}
{"schema":"olm.channel","name":"stable","package":"canary-op","entries":[{"name":"canary-op.v1.0.0"}]}
{"schema":"olm.bundle","name":"canary-op.v1.0.0","package":"canary-op","image":"example.com/canary-op:v1","properties":[{"type":"olm.package","value":{"packageName":"canary-op","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"displayName":"Canary","description":"the bundle's own words"}}]}
"#;
const PASSWORD: &str = "correct horse";

/// A test area: a canary directory, the `TMPDIR` `olm` runs with, and room for inputs.
struct Area {
    _tmp: tempfile::TempDir,
    top: PathBuf,
    canary: PathBuf,
    tmp: PathBuf,
    before: BTreeMap<PathBuf, Vec<u8>>,
}

impl Area {
    fn new() -> Area {
        let holder = tempfile::tempdir().unwrap();
        let top = holder.path().canonicalize().unwrap();
        let canary = top.join("canary");
        std::fs::create_dir_all(canary.join("sub")).unwrap();
        std::fs::write(canary.join("victim"), "do not touch").unwrap();
        std::fs::write(canary.join("sub/keep"), "keep me").unwrap();
        let tmp = top.join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let mut area = Area {
            _tmp: holder,
            top,
            canary,
            tmp,
            before: BTreeMap::new(),
        };
        area.before = area.snapshot();
        area
    }

    fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        walk(&self.canary, &self.canary, &mut out);
        out
    }

    /// `olm ARGS` with this area's `TMPDIR`, not waited for.
    fn spawn(&self, args: &[&str]) -> Child {
        Command::new(OLM)
            .args(args)
            .env("TMPDIR", &self.tmp)
            .env("COSIGN_PASSWORD", PASSWORD)
            .env("HOME", &self.top)
            .env("XDG_RUNTIME_DIR", "/nonexistent")
            .env_remove("REGISTRY_AUTH_FILE")
            .env_remove("DOCKER_CONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run olm")
    }

    fn olm(&self, args: &[&str]) -> Output {
        let started = Instant::now();
        let out = self.spawn(args).wait_with_output().unwrap();
        eprintln!(
            "$ olm {} ({:.1} s, {:?})\n{}",
            args.join(" "),
            started.elapsed().as_secs_f64(),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.olm(args);
        assert!(out.status.success(), "olm {args:?} failed");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The stderr of a run that must fail with exit code 1.
    fn refused(&self, args: &[&str]) -> String {
        let out = self.olm(args);
        assert_eq!(out.status.code(), Some(1), "olm {args:?} did not fail");
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    /// The canary is as it was and `olm` left nothing in its `TMPDIR`.
    fn untouched(&self) {
        assert_eq!(self.snapshot(), self.before, "the canary directory changed");
        let left: Vec<_> = std::fs::read_dir(&self.tmp)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(left.is_empty(), "olm left {left:?} in its TMPDIR");
    }

    fn path(&self, name: &str) -> PathBuf {
        self.top.join(name)
    }
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let rel = p.strip_prefix(base).unwrap().to_path_buf();
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.is_dir() {
            out.insert(rel, b"<dir>".to_vec());
            walk(base, &p, out);
        } else {
            out.insert(rel, std::fs::read(&p).unwrap_or_default());
        }
    }
}

fn oci(layout: &Path, tag: &str) -> String {
    format!("oci:{}:{tag}", layout.display())
}

// ---- Door 3: pages baked into a catalog image ----

/// A script that, if it ever ran, would leave its mark on the title and in the DOM.
const EVIL_PAGE: &str = r#"<!DOCTYPE html><html><head><title>evil</title></head><body><p>IMAGE-PAGE-MARKER</p>
<script>document.title='pwned';document.body.insertAdjacentHTML('beforeend','<p id="script-ran">script-ran</p>')</script>
<img src=x onerror="document.title='pwned-onerror'"></body></html>
"#;

fn chromium() -> Option<PathBuf> {
    let p = PathBuf::from("/usr/bin/chromium");
    if p.is_file() {
        return Some(p);
    }
    prerequisite::missing("chromium (apt-get install chromium)");
    None
}

/// The DOM of `url` after its scripts ran, in headless Chromium.
fn dom(bin: &Path, url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(url)
        .stderr(Stdio::null())
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed on {url}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The response headers of `GET path`, lower-cased names.
fn headers(port: u16, path: &str) -> BTreeMap<String, String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "HEAD {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    raw.lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect()
}

/// The files under `root` as tar entries (paths relative to it), directories first.
fn entries_of(root: &Path, under: &str, out: &mut Vec<Entry>) {
    let dir = root.join(under);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for name in names {
        let rel = format!("{under}/{name}");
        let meta = std::fs::symlink_metadata(root.join(&rel)).unwrap();
        if meta.is_dir() {
            out.push(Dir(rel.clone()));
            entries_of(root, &rel, out);
        } else if meta.is_file() {
            out.push(File(rel.clone(), std::fs::read(root.join(&rel)).unwrap()));
        }
    }
}

/// A catalog image whose pre-built cache carries browser pages, built by `olm catalog build
/// --http-port`, unpacked, changed by `tamper` (given the cache's own directory) and packed
/// again as one layer (its catalog and cache; the binary is not needed to serve it).
fn baked_image(area: &Area, name: &str, tamper: impl Fn(&Path)) -> String {
    let catalog = area.path(&format!("{name}-catalog"));
    std::fs::create_dir_all(catalog.join("canary-op")).unwrap();
    std::fs::write(catalog.join("canary-op/catalog.json"), CATALOG).unwrap();
    let built = area.path(&format!("{name}-built"));
    let c = catalog.display().to_string();
    area.ok(&[
        "catalog",
        "build",
        &c,
        "-t",
        &oci(&built, "v1"),
        "--no-ca-certs",
        "--http-port",
        "8080",
        "--catalog-name",
        "demo",
    ]);
    let rootfs = area.path(&format!("{name}-rootfs"));
    let r = rootfs.display().to_string();
    area.ok(&["image", "pull", &oci(&built, "v1"), "--rootfs", &r]);
    let content = rootfs.join("tmp/cache/olm-serve.v1");
    assert!(
        content.join("ui/index.html").is_file(),
        "the image was built with its pages"
    );
    tamper(&content);
    let mut entries = vec![Dir("configs".into()), Dir("tmp".into())];
    entries_of(&rootfs, "configs", &mut entries);
    entries_of(&rootfs, "tmp", &mut entries);
    let layout = area.path(name);
    crafted::layout(&layout, "t", &[crafted::tar(&entries)], &[CONFIGS_LABEL]);
    oci(&layout, "t")
}

/// Replaces the image's pages with a script and `site.json` with `marker`.
fn evil_pages(content: &Path, marker: &str) {
    let ui = content.join("ui");
    std::fs::write(ui.join("index.html"), EVIL_PAGE).unwrap();
    std::fs::write(ui.join("packages/canary-op.html"), EVIL_PAGE).unwrap();
    std::fs::write(ui.join("site.json"), marker).unwrap();
}

fn serve_http(area: &Area, image: &str) -> (Server, u16) {
    let (grpc, http) = (free_port(), free_port());
    let child = area.spawn(&[
        "catalog",
        "serve",
        image,
        "--host",
        "127.0.0.1",
        "--port",
        &grpc.to_string(),
        "--http-port",
        &http.to_string(),
        "--catalog-name",
        "demo",
    ]);
    let server = Server(child);
    let deadline = Instant::now() + Duration::from_secs(180);
    while std::net::TcpStream::connect(("127.0.0.1", http)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP port never came up");
        std::thread::sleep(Duration::from_millis(100));
    }
    (server, http)
}

/// Stops a server with SIGTERM and returns its stderr.
fn stop(mut server: Server) -> String {
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    unsafe { libc::kill(server.0.id() as i32, libc::SIGTERM) };
    let mut err = String::new();
    if let Some(mut e) = server.0.stderr.take() {
        e.read_to_string(&mut err).unwrap();
    }
    let status = server.0.wait().unwrap();
    eprintln!("server stopped ({status}):\n{err}");
    assert!(
        status.success(),
        "the server did not stop cleanly: {status}"
    );
    err
}

/// An image's own pages, with a `site.json` made to look current to `olm` (the catalog's
/// digest and olm's own policy) or naming a policy that lets any script run, are never what
/// the browser gets: `olm` renders its own, and the header is the binary's policy.
#[test]
fn pages_baked_into_an_image_never_run_in_chromium() {
    let Some(chrome) = chromium() else { return };
    let area = Area::new();
    let loose = r#"{"catalogName":"demo","catalogNamespace":"olm","catalogImage":null,"format":1,"digest":"x","contentSecurityPolicy":"script-src * 'unsafe-inline'"}"#;
    // `None`: the genuine marker, kept; to an `olm` that trusted it the pages would be current.
    for (name, marker) in [("mimic", None), ("loose", Some(loose))] {
        let image = baked_image(&area, name, |content: &Path| {
            let genuine = std::fs::read_to_string(content.join("ui/site.json")).unwrap();
            evil_pages(content, marker.unwrap_or(&genuine));
        });
        let (server, http) = serve_http(&area, &image);
        for page in ["/", "/packages/canary-op.html"] {
            let url = format!("http://127.0.0.1:{http}{page}");
            let dom = dom(&chrome, &url);
            assert!(
                !dom.contains("IMAGE-PAGE-MARKER"),
                "{name}{page}: the image's page was served:\n{dom}"
            );
            assert!(
                !dom.contains("script-ran") && !dom.contains("pwned"),
                "{name}{page}: script ran:\n{dom}"
            );
            // The page olm rendered: the catalog's own words, olm's copy buttons added by its
            // one script.
            assert!(dom.contains("canary-op"), "{name}{page}:\n{dom}");
        }
        let h = headers(http, "/");
        let csp = h.get("content-security-policy").map(String::as_str);
        let ours = olm_bundler::hub::page::content_security_policy();
        assert_eq!(
            csp,
            Some(ours.as_str()),
            "{name}: not the binary's own policy"
        );
        assert_eq!(
            h.get("x-content-type-options").map(String::as_str),
            Some("nosniff")
        );
        stop(server);
        area.untouched();
    }
}

/// When olm cannot render the pages itself (here the image's payload file holds bytes no
/// reader decodes, so reading a bundle fails), the browser is off, said once, and catalogd's API serves on: the
/// image's pages, whatever `site.json` says, are not a fallback.
#[test]
fn a_cache_olm_cannot_render_serves_its_api_without_a_browser() {
    let Some(chrome) = chromium() else { return };
    let area = Area::new();
    let loose = r#"{"catalogName":"demo","catalogNamespace":"olm","catalogImage":null,"format":1,"digest":"x","contentSecurityPolicy":"script-src * 'unsafe-inline'"}"#;
    let image = baked_image(&area, "broken", |content: &Path| {
        evil_pages(content, loose);
        // Same length (the store checks every span lies inside it), bytes no reader decodes.
        let payloads = content.join("payloads.bin");
        let len = std::fs::metadata(&payloads).unwrap().len() as usize;
        std::fs::write(&payloads, vec![0xff; len]).unwrap();
    });
    let (server, http) = serve_http(&area, &image);
    let (status, body) = http_get(http, "/catalogs/demo/api/v1/all");
    assert_eq!(status, 200);
    assert!(body.contains("canary-op"), "{body}");
    for page in [
        "/",
        "/index.html",
        "/packages/canary-op.html",
        "/search.json",
    ] {
        let (status, body) = http_get(http, page);
        assert_eq!(status, 404, "{page}: {body}");
        let dom = dom(&chrome, &format!("http://127.0.0.1:{http}{page}"));
        assert!(
            !dom.contains("IMAGE-PAGE-MARKER") && !dom.contains("script-ran"),
            "{page}:\n{dom}"
        );
    }
    let err = stop(server);
    assert_eq!(
        err.matches("the catalog browser is off").count(),
        1,
        "{err}"
    );
    area.untouched();
}

// ---- Door 4: signed JSON read as Go reads it ----

/// The fuzz target's seeds, replayed with its check (`cargo fuzz run signed_json` runs it on
/// arbitrary input).
#[test]
fn the_signed_json_fuzz_seeds_hold() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/signed_json");
    let mut n = 0;
    for e in std::fs::read_dir(&seeds).unwrap() {
        signed_json::check(&std::fs::read(e.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= 5, "seeds missing in {}", seeds.display());
}

/// A key made here (so the test can sign crafted payloads), as cosign's key files.
fn keys(area: &Area) -> (PrivateKey, String, String) {
    let key = PrivateKey::generate();
    let (k, p) = (area.path("cosign.key"), area.path("cosign.pub"));
    std::fs::write(&k, key.to_encrypted_pem(PASSWORD.as_bytes()).unwrap()).unwrap();
    std::fs::write(&p, key.public().to_pem().unwrap()).unwrap();
    (key, k.display().to_string(), p.display().to_string())
}

/// Replaces the first layer of the layout's `tag` manifest by `payload`, with `annotations`
/// changed by `annotate`: what someone who can write the registry does.
fn replace_layer(
    layout: &Path,
    tag: &str,
    payload: &[u8],
    annotate: impl Fn(&mut serde_json::Value),
) {
    let index_path = layout.join("index.json");
    let mut index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&index_path).unwrap()).unwrap();
    let entry = index["manifests"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["annotations"]["org.opencontainers.image.ref.name"] == tag)
        .unwrap_or_else(|| panic!("no {tag} in the layout"));
    let blob = |d: &str| layout.join("blobs/sha256").join(&d[7..]);
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(blob(entry["digest"].as_str().unwrap())).unwrap())
            .unwrap();
    let put = |bytes: &[u8]| {
        let d = crafted::sha256(bytes);
        std::fs::write(blob(&d), bytes).unwrap();
        d
    };
    let layer = &mut manifest["layers"][0];
    annotate(&mut layer["annotations"]);
    layer["digest"] = put(payload).into();
    layer["size"] = payload.len().into();
    let bytes = serde_json::to_vec(&manifest).unwrap();
    entry["digest"] = put(&bytes).into();
    entry["size"] = bytes.len().into();
    std::fs::write(&index_path, serde_json::to_vec(&index).unwrap()).unwrap();
}

/// Simple-signing payloads signed with the right key whose digest, identity or type a second
/// key on the same field (another case, the Kelvin sign, the same spelling twice) would make
/// Go read otherwise: refused by `olm image verify`, in either order. The same payload with
/// one key verifies (so the tampering itself is sound).
#[test]
fn signatures_go_would_read_otherwise_are_refused() {
    let area = Area::new();
    let (key, k, public) = keys(&area);
    let layout = area.path("signed");
    let image = oci(&layout, "v1");
    let pinned = area.ok(&[
        "image",
        "build",
        "--binary",
        "/bin/true",
        "-t",
        &image,
        "--no-ca-certs",
    ]);
    let digest = pinned.trim().rsplit_once('@').unwrap().1.to_string();
    let other = format!("sha256:{}", "b".repeat(64));
    area.ok(&[
        "image",
        "sign",
        &image,
        "--key",
        &k,
        "--identity",
        "quay.io/org/app",
    ]);
    area.ok(&["image", "verify", &image, "--key", &public]);
    let sig = format!("sha256-{}.sig", &digest[7..]);
    let kind = "cosign container image signature";
    let payload = |critical: &str| format!(r#"{{"critical":{{{critical}}},"optional":null}}"#);
    let signed = |bytes: &[u8]| {
        replace_layer(&layout, &sig, bytes, |a| {
            a["dev.cosignproject.cosign/signature"] = STANDARD.encode(key.sign(bytes)).into();
        })
    };
    let identity = r#""identity":{"docker-reference":"quay.io/org/app"}"#;
    // The control: one spelling of each field, in another case (Go reads it so too).
    let benign = payload(&format!(
        r#"{identity},"Image":{{"Docker-Manifest-Digest":"{digest}"}},"type":"{kind}""#
    ));
    signed(benign.as_bytes());
    area.ok(&["image", "verify", &image, "--key", &public]);
    let pairs = [
        (
            format!(r#""docker-manifest-digest":"{digest}""#),
            format!(r#""Docker-Manifest-Digest":"{other}""#),
        ),
        (
            format!(r#""docker-manifest-digest":"{digest}""#),
            format!(r#""doc\u212Aer-manifest-digest":"{other}""#),
        ),
        (
            format!(r#""docker-manifest-digest":"{digest}""#),
            format!(r#""docker-manifest-digest":"{other}""#),
        ),
    ];
    for (a, b) in &pairs {
        for (first, second) in [(a, b), (b, a)] {
            let bytes = payload(&format!(
                r#"{identity},"image":{{{first},{second}}},"type":"{kind}""#
            ));
            signed(bytes.as_bytes());
            let err = area.refused(&["image", "verify", &image, "--key", &public]);
            assert!(
                err.contains("both name field \"docker-manifest-digest\""),
                "{bytes}: {err}"
            );
        }
    }
    // `critical` twice: Go takes the second (with another type), another reader the first.
    let twice = format!(
        r#"{{"critical":{{{identity},"image":{{"docker-manifest-digest":"{digest}"}},"type":"{kind}"}},"Critical":{{"type":"something else"}}}}"#
    );
    signed(twice.as_bytes());
    let err = area.refused(&["image", "verify", &image, "--key", &public]);
    assert!(err.contains("both name field \"critical\""), "{err}");
    // `optional` nested 9,990 levels (Go reads up to 10,000): refused with the reason, never
    // a stack overflow (the reading recursed once per level before).
    let deep = format!(
        r#"{{"critical":{{{identity},"image":{{"docker-manifest-digest":"{digest}"}},"type":"{kind}"}},"optional":{{"a":{}1{}}}}}"#,
        "[".repeat(9_990),
        "]".repeat(9_990)
    );
    signed(deep.as_bytes());
    let err = area.refused(&["image", "verify", &image, "--key", &public]);
    assert!(err.contains("deeper than olm reads"), "{err}");
    area.untouched();
}

/// An in-toto statement whose subject a second `Subject` (or `ſubject`) would change for
/// Go, and an envelope with a second `Payload`, signed with the right key: refused by
/// `olm image verify-attestation`; the benign statement re-signed the same way verifies.
#[test]
fn attestations_go_would_read_otherwise_are_refused() {
    let area = Area::new();
    let (key, k, public) = keys(&area);
    let layout = area.path("attested");
    let image = oci(&layout, "v1");
    let pinned = area.ok(&[
        "image",
        "build",
        "--binary",
        "/bin/true",
        "-t",
        &image,
        "--no-ca-certs",
    ]);
    let hex = pinned.trim().rsplit_once('@').unwrap().1[7..].to_string();
    let predicate = area.path("predicate.json");
    std::fs::write(&predicate, r#"{"a":1}"#).unwrap();
    let p = predicate.display().to_string();
    area.ok(&[
        "image",
        "attest",
        &image,
        "--key",
        &k,
        "--predicate",
        &p,
        "--type",
        "spdxjson",
        "--identity",
        "quay.io/org/app",
    ]);
    area.ok(&["image", "verify-attestation", &image, "--key", &public]);
    let att = format!("sha256-{hex}.att");
    let envelope = |statement: &str, extra: &str| {
        let pae = format!(
            "DSSEv1 28 application/vnd.in-toto+json {} {statement}",
            statement.len()
        );
        format!(
            r#"{{"payloadType":"application/vnd.in-toto+json","payload":"{}","signatures":[{{"keyid":"","sig":"{}"}}]{extra}}}"#,
            STANDARD.encode(statement),
            STANDARD.encode(key.sign(pae.as_bytes()))
        )
    };
    let statement = |subjects: &str| {
        format!(
            r#"{{"_type":"https://in-toto.io/Statement/v0.1","predicateType":"https://spdx.dev/Document",{subjects},"predicate":{{"a":1}}}}"#
        )
    };
    let this = format!(r#"[{{"name":"quay.io/org/app","digest":{{"sha256":"{hex}"}}}}]"#);
    let other = format!(
        r#"[{{"name":"quay.io/evil/app","digest":{{"sha256":"{}"}}}}]"#,
        "b".repeat(64)
    );
    let put = |env: String| replace_layer(&layout, &att, env.as_bytes(), |_| {});
    put(envelope(&statement(&format!(r#""SUBJECT":{this}"#)), ""));
    area.ok(&["image", "verify-attestation", &image, "--key", &public]);
    for subjects in [
        format!(r#""subject":{this},"Subject":{other}"#),
        format!(r#""Subject":{other},"subject":{this}"#),
        format!(r#""subject":{this},"\u017fubject":{other}"#),
    ] {
        put(envelope(&statement(&subjects), ""));
        let err = area.refused(&["image", "verify-attestation", &image, "--key", &public]);
        assert!(
            err.contains("both name field \"subject\""),
            "{subjects}: {err}"
        );
    }
    let decoy = STANDARD.encode(statement(&format!(r#""subject":{other}"#)));
    put(envelope(
        &statement(&format!(r#""subject":{this}"#)),
        &format!(r#","Payload":"{decoy}""#),
    ));
    let err = area.refused(&["image", "verify-attestation", &image, "--key", &public]);
    assert!(err.contains("both name field \"payload\""), "{err}");
    area.untouched();
}

// ---- Door 5: private temporary directories ----

/// `olm catalog serve DIR` without `--cache-dir` builds its cache in a directory no other
/// user could have made or guessed: random-named, mode 0700; gone when the server stops.
#[test]
fn a_servers_temporary_cache_is_private_and_random() {
    let area = Area::new();
    let catalog = area.path("catalog");
    std::fs::create_dir_all(catalog.join("canary-op")).unwrap();
    std::fs::write(catalog.join("canary-op/catalog.json"), CATALOG).unwrap();
    let grpc = free_port();
    let c = catalog.display().to_string();
    let server = Server(area.spawn(&[
        "catalog",
        "serve",
        &c,
        "--host",
        "127.0.0.1",
        "--port",
        &grpc.to_string(),
    ]));
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::net::TcpStream::connect(("127.0.0.1", grpc)).is_err() {
        assert!(Instant::now() < deadline, "the server never came up");
        std::thread::sleep(Duration::from_millis(100));
    }
    let pid = server.0.id();
    let made: Vec<_> = std::fs::read_dir(&area.tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let name = made[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("olm-serve-cache-"), "{name}");
    assert_ne!(
        name,
        format!("olm-serve-cache-{pid}"),
        "a name anyone could guess"
    );
    assert!(!name.contains(&pid.to_string()), "{name}");
    let meta = std::fs::symlink_metadata(&made[0]).unwrap();
    assert!(meta.is_dir());
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o700,
        "{name} is not private"
    );
    stop(server);
    area.untouched();
}

// ---- Door 6: bounded expansion and interrupts ----

/// A gzip-compressed layer of one tar entry `name` holding `size` zero bytes (a bomb: about
/// a thousandth of its size), written to a layout at `dir`.
fn gzip_bomb_layout(dir: &Path, files: &[(&str, u64)]) -> String {
    let typed: Vec<(&str, u8, u64)> = files.iter().map(|(n, s)| (*n, b'0', *s)).collect();
    gzip_bomb_typed(dir, &typed)
}

/// [`gzip_bomb_layout`] with each entry's tar type (`0` a file, `x` a PAX header, `L` a GNU
/// long name) and the zero bytes it holds.
fn gzip_bomb_typed(dir: &Path, files: &[(&str, u8, u64)]) -> String {
    use sha2::Digest as _;
    std::fs::create_dir_all(dir.join("blobs/sha256")).unwrap();
    let spool = dir.join("layer.tmp");
    let mut diff = sha2::Sha256::new();
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&spool).unwrap(),
        flate2::Compression::new(6),
    );
    let mut put = |bytes: &[u8]| {
        diff.update(bytes);
        gz.write_all(bytes).unwrap();
    };
    put(&crafted::tar(&[Dir("configs".into())])[..512]);
    let zeros = vec![0u8; 1 << 20];
    for (name, kind, size) in files {
        let header = crafted::tar(&[File(name.to_string(), Vec::new())]);
        let mut header = header[..512].to_vec();
        header[156] = *kind;
        // The size field, and the checksum again.
        let s = format!("{size:011o}\0");
        header[124..136].copy_from_slice(s.as_bytes());
        header[148..156].copy_from_slice(b"        ");
        let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
        header[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
        put(&header);
        let mut left = *size;
        while left > 0 {
            let n = left.min(zeros.len() as u64) as usize;
            put(&zeros[..n]);
            left -= n as u64;
        }
        let pad = (512 - size % 512) % 512;
        put(&vec![0u8; pad as usize]);
    }
    put(&[0u8; 1024]);
    gz.finish().unwrap();
    let layer = std::fs::read(&spool).unwrap();
    std::fs::remove_file(&spool).unwrap();
    let diff_id = format!("sha256:{}", hex::encode(diff.finalize()));
    gz_layout(dir, &layer, &diff_id)
}

/// A layout at `dir` of one image whose one layer is the gzip `layer`; returns its reference.
fn gz_layout(dir: &Path, layer: &[u8], diff_id: &str) -> String {
    let layer_digest = crafted::blob(dir, layer);
    let config = serde_json::to_vec(&serde_json::json!({
        "architecture": crafted::host_arch(), "os": "linux",
        "config": {"Labels": {CONFIGS_LABEL.0: CONFIGS_LABEL.1}},
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
    }))
    .unwrap();
    let config_digest = crafted::blob(dir, &config);
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": config_digest, "size": config.len()},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layer_digest, "size": layer.len()}],
    }))
    .unwrap();
    let digest = crafted::blob(dir, &manifest);
    std::fs::write(dir.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    crafted::manifest_index(
        dir,
        "t",
        &digest,
        manifest.len(),
        "application/vnd.oci.image.manifest.v1+json",
    );
    oci(dir, "t")
}

/// A 2 MiB layer that expands to 2 GiB stops at the limit before the file is written; one of
/// many small files stops as the limit is passed; either way the error names the layer and
/// the limit and nothing is left behind.
#[test]
fn gzip_bombs_stop_at_the_limit_and_leave_nothing() {
    let area = Area::new();
    let one = gzip_bomb_layout(&area.path("one"), &[("configs/zeros", 2 << 30)]);
    let blob_size = |layout: &str| {
        let dir = Path::new(&layout[4..layout.len() - 2]);
        std::fs::read_dir(dir.join("blobs/sha256"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .max()
            .unwrap()
    };
    let size = blob_size(&one);
    eprintln!("one-file bomb: {size} bytes compressed, 2 GiB expanded");
    assert!(size < 4 << 20, "{size}");
    let started = Instant::now();
    let err = area.refused(&[
        "catalog",
        "render",
        &one,
        "-o",
        "json",
        "--max-unpack-bytes",
        "1G",
    ]);
    assert!(
        err.contains("the image unpacks to more than 1 GiB"),
        "{err}"
    );
    assert!(err.contains("--max-unpack-bytes"), "{err}");
    assert!(
        err.contains("layer sha256:") && err.contains("configs/zeros"),
        "{err}"
    );
    eprintln!("refused after {:.2} s", started.elapsed().as_secs_f64());
    area.untouched();

    let files: Vec<(String, u64)> = (0..1024)
        .map(|i| (format!("configs/f{i:04}"), 1 << 20))
        .collect();
    let files: Vec<(&str, u64)> = files.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let many = gzip_bomb_layout(&area.path("many"), &files);
    let err = area.refused(&[
        "catalog",
        "render",
        &many,
        "-o",
        "json",
        "--max-unpack-bytes",
        "64M",
    ]);
    assert!(
        err.contains("the image unpacks to more than 64 MiB"),
        "{err}"
    );
    area.untouched();
    // Entries are bounded too.
    let err = area.refused(&[
        "catalog",
        "render",
        &many,
        "-o",
        "json",
        "--max-unpack-entries",
        "100",
    ]);
    assert!(
        err.contains("more than 100 entries") && err.contains("--max-unpack-entries"),
        "{err}"
    );
    area.untouched();
    // The certification commands unpack what they check: the same limits, the same flags.
    for command in [
        &["check", "container"][..],
        &["check", "operator", "--offline"][..],
        &["bundle", "scorecard"][..],
    ] {
        let mut args = command.to_vec();
        args.extend([many.as_str(), "--max-unpack-bytes", "64M"]);
        let err = area.refused(&args);
        assert!(
            err.contains("the image unpacks to more than 64 MiB"),
            "{command:?}: {err}"
        );
        area.untouched();
    }
    // `image pull --rootfs` into a directory it makes: removed again.
    let rootfs = area.path("rootfs");
    let r = rootfs.display().to_string();
    area.refused(&[
        "image",
        "pull",
        &one,
        "--rootfs",
        &r,
        "--max-unpack-bytes",
        "512M",
    ]);
    assert!(!rootfs.exists(), "the half-unpacked rootfs stayed");
    area.untouched();
}

/// A PAX extended header or a GNU long name of a gigabyte (which a tar reader would hold in
/// memory whole) is refused as soon as its header is read, as Go's archive/tar refuses one
/// over 1 MiB.
#[test]
fn huge_extended_headers_are_refused_before_they_are_read() {
    let area = Area::new();
    for (name, kind) in [("pax", b'x'), ("longname", b'L')] {
        let layout = gzip_bomb_typed(
            &area.path(name),
            &[
                ("configs/./PaxHeaders/x", kind, 1 << 30),
                ("configs/x", b'0', 1),
            ],
        );
        let started = Instant::now();
        let err = area.refused(&["catalog", "render", &layout, "-o", "json"]);
        assert!(
            err.contains("an extended header (PAX or GNU long name) of 1073741824 bytes"),
            "{name}: {err}"
        );
        eprintln!(
            "{name}: refused after {:.2} s",
            started.elapsed().as_secs_f64()
        );
        area.untouched();
    }
}

/// A GNU tar header (magic `ustar  `) for `name` of type `kind`, its size field `size`.
fn gnu_header(name: &str, kind: u8, size: u64) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    let octal = |h: &mut [u8; 512], at: usize, len: usize, v: u64| {
        let s = format!("{v:0w$o}\0", w = len - 1);
        h[at..at + len].copy_from_slice(s.as_bytes());
    };
    octal(&mut h, 100, 8, 0o644);
    octal(&mut h, 108, 8, 0);
    octal(&mut h, 116, 8, 0);
    octal(&mut h, 124, 12, size);
    octal(&mut h, 136, 12, 0);
    h[156] = kind;
    h[257..263].copy_from_slice(b"ustar ");
    h[263..265].copy_from_slice(b" \0");
    h
}

/// A 12-byte numeric field: octal, or GNU's base-256 for what octal cannot hold.
fn num12(v: u64) -> [u8; 12] {
    let mut f = [0u8; 12];
    if v < 1 << 33 {
        f.copy_from_slice(format!("{v:011o}\0").as_bytes());
    } else {
        f[0] = 0x80;
        f[4..].copy_from_slice(&v.to_be_bytes());
    }
    f
}

fn checksum(h: &mut [u8; 512]) {
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
}

/// An old-GNU sparse entry (type `S`): `segments` of data at their offsets in a file of
/// `real` bytes (at most three segments, in the header itself).
fn gnu_sparse(name: &str, real: u64, segments: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let stored: u64 = segments.iter().map(|(_, d)| d.len() as u64).sum();
    let mut h = gnu_header(name, b'S', stored);
    // GNU tar ends the map at the real size (a last, empty segment when the file ends in a
    // hole).
    let map = segments
        .iter()
        .map(|(offset, data)| (*offset, data.len() as u64))
        .chain(std::iter::once((real, 0)));
    for (i, (offset, len)) in map.enumerate() {
        let at = 386 + i * 24;
        h[at..at + 12].copy_from_slice(&num12(offset));
        h[at + 12..at + 24].copy_from_slice(&num12(len));
    }
    h[483..495].copy_from_slice(&num12(real));
    checksum(&mut h);
    let mut out = h.to_vec();
    for (_, data) in segments {
        out.extend_from_slice(data);
    }
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

/// A PAX record `len key=value\n`, its length counting itself.
fn pax_record(key: &str, value: &str) -> String {
    let body = format!(" {key}={value}\n");
    let mut len = body.len() + 1;
    while format!("{len}{body}").len() != len {
        len += 1;
    }
    format!("{len}{body}")
}

/// A PAX sparse entry of GNU tar's format 1.0 (the map opens the data) for `name`.
fn pax_sparse_1x0(name: &str, real: u64, segments: &[(u64, Vec<u8>)]) -> Vec<u8> {
    let records = [
        pax_record("GNU.sparse.major", "1"),
        pax_record("GNU.sparse.minor", "0"),
        pax_record("GNU.sparse.name", name),
        pax_record("GNU.sparse.realsize", &real.to_string()),
    ]
    .concat();
    let mut h = gnu_header("././@PaxHeader", b'x', records.len() as u64);
    h[257..265].copy_from_slice(b"ustar\x0000");
    checksum(&mut h);
    let mut out = h.to_vec();
    out.extend_from_slice(records.as_bytes());
    out.resize(out.len().div_ceil(512) * 512, 0);
    let mut map = format!("{}\n", segments.len());
    for (offset, data) in segments {
        map.push_str(&format!("{offset}\n{}\n", data.len()));
    }
    let mut data = map.into_bytes();
    data.resize(data.len().div_ceil(512) * 512, 0);
    for (_, d) in segments {
        data.extend_from_slice(d);
    }
    let stored = data.len() as u64;
    let (dir, file) = name.rsplit_once('/').unwrap();
    let mut h = gnu_header(&format!("{dir}/GNUSparseFile.0/{file}"), b'0', stored);
    h[257..265].copy_from_slice(b"ustar\x0000");
    checksum(&mut h);
    out.extend_from_slice(&h);
    out.extend_from_slice(&data);
    out.resize(out.len().div_ceil(512) * 512, 0);
    out
}

fn tar_of(parts: &[Vec<u8>]) -> Vec<u8> {
    let mut out = crafted::tar(&[Dir("configs".into())]);
    out.truncate(512);
    for p in parts {
        out.extend_from_slice(p);
    }
    out.extend_from_slice(&[0u8; 1024]);
    out
}

/// Sparse files declaring a terabyte (old GNU and PAX 1.0) are refused before a byte is
/// written; sparse files within the limit are unpacked with their holes as holes, their data
/// at its offsets, as Go's archive/tar (and so a runtime) reads them.
#[test]
fn sparse_files_count_their_real_size_and_keep_their_holes() {
    let area = Area::new();
    let block = |b: u8| vec![b; 512];
    let tib = 1u64 << 40;
    for (name, entry) in [
        ("gnu", gnu_sparse("configs/huge", tib, &[(0, block(b'a'))])),
        (
            "pax",
            pax_sparse_1x0("configs/huge", tib, &[(tib - 512, block(b'z'))]),
        ),
    ] {
        let layout = area.path(&format!("bomb-{name}"));
        crafted::layout(&layout, "t", &[tar_of(&[entry])], &[CONFIGS_LABEL]);
        let started = Instant::now();
        let err = area.refused(&["catalog", "render", &oci(&layout, "t"), "-o", "json"]);
        assert!(
            err.contains("the image unpacks to more than 8 GiB"),
            "{name}: {err}"
        );
        assert!(err.contains("configs/"), "{name}: {err}");
        eprintln!(
            "{name}: refused after {:.2} s",
            started.elapsed().as_secs_f64()
        );
        area.untouched();
    }
    let mib = 64u64 << 20;
    let layout = area.path("sparse");
    crafted::layout(
        &layout,
        "t",
        &[tar_of(&[
            gnu_sparse(
                "configs/gnu",
                mib,
                &[(0, block(b'a')), (mib - 512, block(b'b'))],
            ),
            pax_sparse_1x0(
                "configs/pax",
                mib,
                &[(4096, block(b'c')), (mib - 512, block(b'd'))],
            ),
        ])],
        &[CONFIGS_LABEL],
    );
    let rootfs = area.path("sparse-rootfs");
    let r = rootfs.display().to_string();
    area.ok(&["image", "pull", &oci(&layout, "t"), "--rootfs", &r]);
    for (file, first, at, last) in [("gnu", b'a', 0, b'b'), ("pax", b'c', 4096, b'd')] {
        let path = rootfs.join("configs").join(file);
        let meta = std::fs::metadata(&path).unwrap();
        assert_eq!(meta.len(), mib, "{file}");
        assert!(
            meta.blocks() * 512 < 1 << 20,
            "{file}: {} blocks written",
            meta.blocks()
        );
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            bytes[at as usize..at as usize + 512]
                .iter()
                .all(|b| *b == first),
            "{file}"
        );
        assert!(
            bytes[bytes.len() - 512..].iter().all(|b| *b == last),
            "{file}"
        );
        let zeros = bytes.iter().filter(|b| **b == 0).count();
        assert_eq!(zeros as u64, mib - 1024, "{file}");
    }
    assert!(
        !rootfs.join("configs/GNUSparseFile.0").exists(),
        "PAX sparse name not applied"
    );
    std::fs::remove_dir_all(&rootfs).unwrap();
    area.untouched();
}

/// Whether any file under `dir` has more than `bytes`.
fn holds_more_than(dir: &Path, bytes: u64) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    rd.filter_map(Result::ok).any(|e| match e.metadata() {
        Ok(m) if m.is_dir() => holds_more_than(&e.path(), bytes),
        Ok(m) => m.len() > bytes,
        Err(_) => false,
    })
}

/// SIGINT (Ctrl-C) or SIGTERM while a 2 GiB layer is being unpacked: `olm` removes its
/// scratch directory and exits with 130 or 143; its TMPDIR is empty after.
#[test]
fn an_interrupted_unpack_leaves_nothing_behind() {
    let area = Area::new();
    let image = gzip_bomb_layout(&area.path("big"), &[("configs/zeros", 2 << 30)]);
    for (signal, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let mut child = area.spawn(&["catalog", "render", &image, "-o", "json"]);
        let deadline = Instant::now() + Duration::from_secs(120);
        while !holds_more_than(&area.tmp, 16 << 20) {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("olm ended ({status}) before the test could interrupt it");
            }
            assert!(Instant::now() < deadline, "the unpack never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
        unsafe { libc::kill(child.id() as i32, signal) };
        let out = child.wait_with_output().unwrap();
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(code), "signal {signal}");
        area.untouched();
    }
    // `image pull --rootfs` into a directory it makes: gone too.
    let rootfs = area.path("pulled");
    let r = rootfs.display().to_string();
    let mut child = area.spawn(&["image", "pull", &image, "--rootfs", &r]);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !holds_more_than(&rootfs, 16 << 20) {
        assert!(
            child.try_wait().unwrap().is_none(),
            "olm ended before the test could interrupt it"
        );
        assert!(Instant::now() < deadline, "the unpack never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(!rootfs.exists(), "the half-unpacked rootfs stayed");
    area.untouched();
}
