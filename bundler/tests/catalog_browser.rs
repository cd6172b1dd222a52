//! The catalog browser in a real headless Chromium: served by `olm catalog serve --http-port`
//! on the project's catalog and a real multi-package catalog of the shared data, and written
//! by `olm catalog site` as static files: the grid, search (`?q=` applied by the page's
//! script), a package page with its upgrade graph and install snippets (which must parse as
//! the Kubernetes objects they claim to be), and descriptions that try to run script.

#[path = "support/prerequisite.rs"]
mod prerequisite;
#[path = "support/serve.rs"]
mod serve;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use serve::{Server, free_port, http_get as get};

const OLM: &str = env!("CARGO_BIN_EXE_olm");
const CHROMIUM: &str = "/usr/bin/chromium";

fn chromium() -> Option<PathBuf> {
    let p = PathBuf::from(CHROMIUM);
    if p.is_file() {
        return Some(p);
    }
    prerequisite::missing("chromium (apt-get install chromium)");
    None
}

/// Runs headless Chromium on `url` with `extra` (`--dump-dom`, `--screenshot=...`); stdout.
fn chrome(bin: &Path, extra: &[&str], url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .stderr(Stdio::null())
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed on {url}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn dump(bin: &Path, url: &str) -> String {
    chrome(bin, &["--dump-dom"], url)
}

/// A screenshot of `url`: a PNG of some substance.
fn screenshot(bin: &Path, url: &str, dir: &Path, name: &str) {
    let file = dir.join(name);
    chrome(bin, &[&format!("--screenshot={}", file.display())], url);
    let png = std::fs::read(&file).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 10_000,
        "{url}: {} bytes",
        png.len()
    );
}

/// `olm catalog serve CATALOG --http-port`, up and answering.
fn serve(catalog: &Path) -> (Server, u16) {
    serve_with(catalog, &[])
}

/// [`serve`] with more flags.
fn serve_with(catalog: &Path, extra: &[&str]) -> (Server, u16) {
    let (port, http) = (free_port(), free_port());
    let server = Server(
        Command::new(OLM)
            .args(["catalog", "serve"])
            .arg(catalog)
            .args(extra)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--http-port", &http.to_string(), "--catalog-name", "demo"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(180);
    while std::net::TcpStream::connect(("127.0.0.1", http)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP port never came up");
        std::thread::sleep(Duration::from_millis(100));
    }
    (server, http)
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The text of the `<pre id=ID><code>` snippet of a page.
fn snippet(page: &str, id: &str) -> String {
    let start = format!(r#"id="{id}"><code>"#);
    let at = page
        .find(&start)
        .unwrap_or_else(|| panic!("no snippet {id}"))
        + start.len();
    let end = page[at..].find("</code>").unwrap() + at;
    unescape(&page[at..end])
}

/// What of `original` the typed form dropped: keys it does not know (a misspelt field reads
/// as absent) or values it read otherwise. Keys the typed form adds (its defaults) are fine.
fn dropped(original: &Value, typed: &Value, at: &str, out: &mut Vec<String>) {
    match (original, typed) {
        (Value::Object(o), Value::Object(t)) => {
            for (k, v) in o {
                match t.get(k) {
                    Some(tv) => dropped(v, tv, &format!("{at}.{k}"), out),
                    None => out.push(format!("{at}.{k}")),
                }
            }
        }
        (Value::Array(o), Value::Array(t)) if o.len() == t.len() => {
            for (i, (v, tv)) in o.iter().zip(t).enumerate() {
                dropped(v, tv, &format!("{at}[{i}]"), out);
            }
        }
        (o, t) if o == t => {}
        _ => out.push(format!("{at}: {original} read as {typed}")),
    }
}

/// `d` read into `T` and written back: an error, or the fields the typed form does not know.
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(d: &Value) -> Option<String> {
    let typed = match serde_json::from_value::<T>(d.clone()) {
        Ok(t) => serde_json::to_value(t).unwrap(),
        Err(e) => return Some(e.to_string()),
    };
    let mut out = Vec::new();
    dropped(d, &typed, "", &mut out);
    (!out.is_empty()).then(|| format!("not in the typed form: {}", out.join(", ")))
}

#[test]
fn round_trip_finds_unknown_fields() {
    use olm_bundler::deploy::types::Subscription;
    let good = serde_json::json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
        "metadata": {"name": "s", "namespace": "n"},
        "spec": {"name": "p", "channel": "stable", "source": "c", "sourceNamespace": "olm"}});
    assert_eq!(round_trip::<Subscription>(&good), None);
    let mut bad = good.clone();
    bad["spec"]["installPlanApprovl"] = "Manual".into();
    let found = round_trip::<Subscription>(&bad).unwrap();
    assert!(found.contains(".spec.installPlanApprovl"), "{found}");
}

/// Parses a snippet as YAML documents, each a Kubernetes object of the kind it names, read
/// into its typed form with no field left unknown; the kinds, in order.
fn kinds(yaml: &str) -> Vec<String> {
    use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
    use olm_bundler::deploy::olmv1::types::ClusterExtension;
    use olm_bundler::deploy::types::{OperatorGroup, Subscription};
    let docs = olm_bundler::yaml::parse_documents(Path::new("snippet.yaml"), yaml).unwrap();
    assert!(!docs.is_empty(), "{yaml}");
    docs.into_iter()
        .map(|d| {
            let kind = d["kind"].as_str().unwrap_or_default().to_string();
            assert!(
                d["apiVersion"].as_str().is_some_and(|v| !v.is_empty()),
                "{d}"
            );
            assert!(
                d.pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .is_some(),
                "{d}"
            );
            let typed = match kind.as_str() {
                "Namespace" => round_trip::<Namespace>(&d),
                "ServiceAccount" => round_trip::<ServiceAccount>(&d),
                "OperatorGroup" => round_trip::<OperatorGroup>(&d),
                "Subscription" => round_trip::<Subscription>(&d),
                "ClusterExtension" => round_trip::<ClusterExtension>(&d),
                "ClusterRole" => round_trip::<ClusterRole>(&d),
                "ClusterRoleBinding" => round_trip::<ClusterRoleBinding>(&d),
                "Role" => round_trip::<Role>(&d),
                "RoleBinding" => round_trip::<RoleBinding>(&d),
                other => panic!("unexpected kind {other:?} in a snippet"),
            };
            assert!(typed.is_none(), "{kind}: {typed:?}\n{d}");
            kind
        })
        .collect()
}

/// Cards in a dumped grid: (shown, hidden).
fn cards(dom: &str) -> (usize, usize) {
    let all = dom.matches(r#"<a class="card""#).count();
    let hidden = dom
        .split(r#"<a class="card""#)
        .skip(1)
        .filter(|c| c[..c.find('>').unwrap()].contains(" hidden"))
        .count();
    (all - hidden, hidden)
}

fn shared_catalog() -> Option<PathBuf> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = here.join("../../shared/data/catalogs/community-operators-prod/catalogs/v4.20");
    if dir.is_dir() {
        return Some(dir);
    }
    prerequisite::missing("../shared/data/catalogs (a real multi-package catalog)");
    None
}

/// Grid, search and a package page of one served catalog; the search term picks
/// `package` out of the others.
fn browse(bin: &Path, catalog: &Path, package: &str, term: &str, shots: &Path) {
    let (_server, port) = serve(catalog);
    let base = format!("http://127.0.0.1:{port}");
    let (status, search) = get(port, "/search.json");
    assert_eq!(status, 200);
    let index: Vec<Value> = serde_json::from_str(&search).unwrap();
    let grid = dump(bin, &format!("{base}/"));
    assert_eq!(cards(&grid), (index.len(), 0), "every package is a card");
    assert!(grid.contains(&format!(r#"href="packages/{package}.html""#)));
    assert!(grid.contains(&format!("{} of {} packages", index.len(), index.len())));
    screenshot(bin, &format!("{base}/"), shots, "grid.png");

    // The page's script applies ?q= on load: only matching cards stay visible.
    let found = dump(bin, &format!("{base}/?q={term}"));
    let (shown, hidden) = cards(&found);
    assert!(
        shown >= 1 && shown + hidden == index.len(),
        "{shown} shown, {hidden} hidden"
    );
    let card = found
        .split(r#"<a class="card""#)
        .find(|c| c.contains(&format!("packages/{package}.html")))
        .unwrap();
    assert!(
        !card[..card.find('>').unwrap()].contains(" hidden"),
        "{package} is shown"
    );
    if index.len() > 1 {
        assert!(
            hidden >= 1,
            "a search hides something in a catalog of {}",
            index.len()
        );
    }
    let none = dump(bin, &format!("{base}/?q=no-such-operator-anywhere"));
    assert_eq!(cards(&none), (0, index.len()));

    let url = format!("{base}/packages/{package}.html");
    let page = dump(bin, &url);
    assert!(page.contains("<svg"), "the upgrade graph is on the page");
    assert!(
        page.contains(r#"class="copy""#),
        "copy buttons were added by the script"
    );
    screenshot(bin, &url, shots, "package.png");
    let (status, raw) = get(port, &format!("/packages/{package}.html"));
    assert_eq!(status, 200);
    let v0 = kinds(&snippet(&raw, "v0-0"));
    assert_eq!(v0, ["Namespace", "OperatorGroup", "Subscription"]);
    let v1 = kinds(&snippet(&raw, "v1"));
    assert_eq!(v1.first().map(String::as_str), Some("Namespace"));
    assert_eq!(v1.last().map(String::as_str), Some("ClusterExtension"));
    assert!(
        v1.iter().any(|k| k == "ClusterRole"),
        "installer RBAC: {v1:?}"
    );
    assert!(snippet(&raw, "cli").contains(&format!(
        "olm install --olm-v1 --catalog CATALOG_IMAGE --package {package}"
    )));
    // Subscription names the package and the catalog the server was named.
    let sub = olm_bundler::yaml::parse_documents(Path::new("s"), snippet(&raw, "v0-0")).unwrap();
    assert_eq!(
        sub[2].pointer("/spec/name").and_then(Value::as_str),
        Some(package)
    );
    assert_eq!(
        sub[2].pointer("/spec/source").and_then(Value::as_str),
        Some("demo")
    );
    let (status, _) = get(port, "/packages/../site.json");
    assert_eq!(status, 404);
}

#[test]
fn browses_the_projects_catalog_in_chromium() {
    let Some(bin) = chromium() else { return };
    let shots = tempfile::tempdir().unwrap();
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
    browse(
        &bin,
        &catalog,
        "reverse-words-operator",
        "reverse",
        shots.path(),
    );
}

#[test]
fn browses_a_real_multi_package_catalog_in_chromium() {
    let Some(bin) = chromium() else { return };
    let Some(catalog) = shared_catalog() else {
        return;
    };
    let shots = tempfile::tempdir().unwrap();
    browse(&bin, &catalog, "kube-green", "green", shots.path());
}

/// A catalog of one package whose description is `description`.
fn one_package(dir: &Path, description: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let lines = [
        serde_json::json!({"schema": "olm.package", "name": "demo-op", "defaultChannel": "stable", "description": description}),
        serde_json::json!({"schema": "olm.channel", "package": "demo-op", "name": "stable", "entries": [{"name": "demo-op.v1.0.0"}]}),
        serde_json::json!({"schema": "olm.bundle", "package": "demo-op", "name": "demo-op.v1.0.0", "image": "example.com/demo-op-bundle:v1.0.0",
            "properties": [{"type": "olm.package", "value": {"packageName": "demo-op", "version": "1.0.0"}}]}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("catalog.json"), text).unwrap();
}

/// A server given the same cache directory after its catalog changed rebuilds the cache and
/// shows the new catalog's pages, not the ones rendered for the old one.
#[test]
fn pages_follow_the_catalog_across_cache_rebuilds() {
    let tmp = tempfile::tempdir().unwrap();
    let (catalog, cache) = (tmp.path().join("cat"), tmp.path().join("cache"));
    let flags = [
        "--cache-dir",
        cache.to_str().unwrap(),
        "--cache-enforce-integrity=false",
    ];
    for description in ["first-words-of-the-catalog", "second-words-of-the-catalog"] {
        one_package(&catalog, description);
        let (_server, port) = serve_with(&catalog, &flags);
        let (status, page) = get(port, "/packages/demo-op.html");
        assert_eq!(status, 200);
        assert!(
            page.contains(description),
            "{description} not shown:\n{page}"
        );
    }
}

/// `--cache-only` renders the browser's pages only for a `--cache-site-name`; a server whose
/// cache lacks them renders them at start-up (in its cache builder process) and keeps the
/// fresh index it was given.
#[test]
fn pages_are_rendered_only_for_a_server_that_shows_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (catalog, cache) = (tmp.path().join("cat"), tmp.path().join("cache"));
    one_package(&catalog, "words-of-the-catalog");
    let cache_only = |extra: &[&str]| {
        let out = Command::new(OLM)
            .args(["catalog", "serve"])
            .arg(&catalog)
            .arg("--cache-dir")
            .arg(&cache)
            .arg("--cache-only")
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ui = cache.join("olm-serve.v1/ui");
    cache_only(&[]);
    assert!(!ui.exists(), "no pages without --cache-site-name");
    let index = cache.join("olm-serve.v1/index.pb");
    let built = std::fs::metadata(&index).unwrap().modified().unwrap();
    {
        let (_server, port) = serve_with(&catalog, &["--cache-dir", cache.to_str().unwrap()]);
        let (status, page) = get(port, "/packages/demo-op.html");
        assert_eq!(status, 200);
        assert!(page.contains("words-of-the-catalog"), "{page}");
    }
    let marker: Value =
        serde_json::from_slice(&std::fs::read(ui.join("site.json")).unwrap()).unwrap();
    assert_eq!(marker["catalogName"], "demo");
    assert_eq!(
        std::fs::metadata(&index).unwrap().modified().unwrap(),
        built,
        "the fresh cache was kept"
    );
    cache_only(&["--cache-site-name", "other"]);
    let marker: Value =
        serde_json::from_slice(&std::fs::read(ui.join("site.json")).unwrap()).unwrap();
    assert_eq!(marker["catalogName"], "other");
    assert_eq!(
        std::fs::metadata(&index).unwrap().modified().unwrap(),
        built
    );
}

const XSS_CATALOG: &str = r#"{"schema":"olm.package","name":"xss","defaultChannel":"stable","description":"pkg <script>document.title='pwned-pkg'</script>"}
{"schema":"olm.channel","package":"xss","name":"stable","entries":[{"name":"xss.v1.0.0"}]}
{"schema":"olm.bundle","package":"xss","name":"xss.v1.0.0","image":"example.com/xss-bundle:v1.0.0","properties":[{"type":"olm.package","value":{"packageName":"xss","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"displayName":"XSS <b>bold</b>","description":"Hello <script>document.title='pwned'</script> [click](javascript:document.title='pwned2') [also](<java\tscript:document.title='pwned4'>) <img src=x onerror=\"document.title='pwned3'\">","annotations":{"description":"short <script>document.title='pwned5'</script>","categories":"Security"}}}]}
"#;

/// `olm catalog site` writes pages that work from disk; a description's `<script>`,
/// `javascript:` links and event handlers show as text and never run.
#[test]
fn static_site_shows_hostile_descriptions_as_text() {
    let Some(bin) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("xss");
    std::fs::create_dir(&catalog).unwrap();
    std::fs::write(catalog.join("catalog.json"), XSS_CATALOG).unwrap();
    let out = tmp.path().join("site");
    let st = Command::new(OLM)
        .args(["catalog", "site"])
        .arg(&catalog)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let page = dump(
        &bin,
        &format!("file://{}", out.join("packages/xss.html").display()),
    );
    // No script of the catalog ran (each would have changed the title) and no element with a
    // handler was made.
    assert!(!page.contains("<title>pwned"), "{page}");
    assert!(!page.contains("<img src=\"x\""), "{page}");
    // The texts are there, as text (the dump re-escapes it).
    assert!(
        page.contains("Hello &lt;script&gt;document.title="),
        "{page}"
    );
    assert!(page.contains("&lt;img src=x onerror="), "{page}");
    assert!(!page.to_ascii_lowercase().contains("javascript:"), "{page}");
    assert!(
        page.contains("<title>XSS &lt;b&gt;bold&lt;/b&gt; - xss</title>"),
        "{page}"
    );
    // Exactly our one script element.
    assert_eq!(page.matches("<script").count(), 1, "{page}");
    let grid = dump(
        &bin,
        &format!("file://{}?q=xss", out.join("index.html").display()),
    );
    assert_eq!(cards(&grid), (1, 0));
    assert!(grid.contains("short &lt;script&gt;"), "{grid}");
    assert!(!grid.contains("pwned5</script>"));
    // A second run replaces the site with the same bytes; a directory that is not a site is
    // refused.
    let read_all = |dir: &Path| {
        [
            "index.html",
            "search.json",
            "site.json",
            "packages/xss.html",
        ]
        .map(|f| std::fs::read(dir.join(f)).unwrap())
    };
    let first = read_all(&out);
    let again = Command::new(OLM)
        .args(["catalog", "site"])
        .arg(&catalog)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(again.success());
    assert!(
        first == read_all(&out),
        "the same catalog gives the same site"
    );
    let foreign = tmp.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("keep.txt"), "mine").unwrap();
    let refused = Command::new(OLM)
        .args(["catalog", "site"])
        .arg(&catalog)
        .arg("-o")
        .arg(&foreign)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a site written by olm"));
    assert!(foreign.join("keep.txt").is_file());
}

/// `olm catalog site IMAGE` pulls the catalog image (an OCI layout here) and writes its pages;
/// the install command lines name the image.
#[test]
fn static_site_of_a_catalog_image() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
    let layout = format!("oci:{}:v1", tmp.path().join("layout").display());
    let built = Command::new(OLM)
        .args(["catalog", "build"])
        .arg(&catalog)
        .args(["-t", &layout, "--no-ca-certs"])
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let out = tmp.path().join("site");
    let st = Command::new(OLM)
        .args(["catalog", "site", &layout, "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&st.stderr);
    assert!(st.status.success(), "{log}");
    // The image's pre-built cache matches its catalog: the pages come from it.
    assert!(
        log.contains("rendering from the image's serve cache"),
        "{log}"
    );
    let page = std::fs::read_to_string(out.join("packages/reverse-words-operator.html")).unwrap();
    assert!(
        snippet(&page, "cli").contains(&format!(
            "olm install --catalog {layout} --package reverse-words-operator"
        )),
        "{}",
        snippet(&page, "cli")
    );
    // Named after the image's repository: the layout directory.
    assert!(snippet(&page, "v0-0").contains("source: layout"));
}
