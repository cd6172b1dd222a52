//! `olm catalog serve` and the `grpc_health_probe` multi-call mode, as processes.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const OLM: &str = env!("CARGO_BIN_EXE_olm");

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/serve/catalog")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `olm` under the name `grpc_health_probe` (as the catalog image links it).
fn probe_binary(dir: &Path) -> PathBuf {
    let link = dir.join("grpc_health_probe");
    std::os::unix::fs::symlink(OLM, &link).unwrap();
    link
}

fn probe(bin: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(bin).args(args).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM first, so the server removes its temporary cache as users' servers do;
        // SIGKILL only when it has not stopped after a few seconds.
        if let Ok(pid) = i32::try_from(self.0.id()) {
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while std::time::Instant::now() < deadline {
                if matches!(self.0.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_serve(args: &[&str]) -> Server {
    Server(
        Command::new(OLM)
            .args(["catalog", "serve"])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    )
}

fn wait_serving(bin: &Path, port: u16) {
    let addr = format!("-addr=127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (code, text) = probe(bin, &[&addr]);
        if code == 0 {
            assert!(text.contains("status: SERVING"), "{text}");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "server never became ready: {text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn sigterm(child: &Child) {
    let st = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
}

fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

async fn list_packages(port: u16) -> Vec<String> {
    use futures::StreamExt;
    use olm_bundler::serve::proto::api::{ListPackageRequest, registry_client::RegistryClient};
    let mut c = RegistryClient::connect(format!("http://127.0.0.1:{port}"))
        .await
        .unwrap();
    c.list_packages(ListPackageRequest {})
        .await
        .unwrap()
        .into_inner()
        .map(|p| p.unwrap().name)
        .collect()
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prebuilt_cache_then_serve_probe_and_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = probe_binary(tmp.path());
    let cache = tmp.path().join("cache");
    let st = Command::new(OLM)
        .args(["catalog", "serve"])
        .arg(fixture())
        .arg(format!("--cache-dir={}", cache.display()))
        .arg("--cache-only")
        .status()
        .unwrap();
    assert!(st.success());
    assert!(cache.join("olm-serve.v1/index.pb").is_file());

    let port = free_port();
    let port_s = port.to_string();
    let mut srv = spawn_serve(&[
        fixture().to_str().unwrap(),
        "--host",
        "127.0.0.1",
        "-p",
        &port_s,
        &format!("--cache-dir={}", cache.display()),
        "-t",
        tmp.path().join("termination-log").to_str().unwrap(),
    ]);
    wait_serving(&bin, port);
    let (code, _) = probe(
        &bin,
        &[&format!("-addr=127.0.0.1:{port}"), "-service", "Registry"],
    );
    assert_eq!(code, 0);
    assert_eq!(list_packages(port).await, vec!["etcd".to_string()]);

    sigterm(&srv.0);
    let st = wait_exit(&mut srv.0);
    assert!(st.success(), "{st}");
    assert!(!tmp.path().join("termination-log").exists());
    // Gone: the probe now reports a connection failure.
    let (code, text) = probe(
        &bin,
        &[&format!("-addr=127.0.0.1:{port}"), "-connect-timeout=300ms"],
    );
    assert_eq!(code, 2, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_without_a_cache_dir_builds_a_temporary_one() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = probe_binary(tmp.path());
    let port = free_port();
    let port_s = port.to_string();
    let scratch = tmp.path().join("tmp");
    std::fs::create_dir(&scratch).unwrap();
    let mut srv = Server(
        Command::new(OLM)
            .args(["catalog", "serve"])
            .arg(fixture())
            .args(["--host", "127.0.0.1", "--port", &port_s])
            .env("TMPDIR", &scratch)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    wait_serving(&bin, port);
    assert_eq!(list_packages(port).await, vec!["etcd".to_string()]);
    // `$TMPDIR/olm-serve-cache-XXXXXX`: private, named at random (never after the pid).
    let made: Vec<_> = std::fs::read_dir(&scratch)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(made.len(), 1, "{made:?}");
    let temp = &made[0];
    let name = temp.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("olm-serve-cache-"), "{name}");
    assert!(!name.contains(&srv.0.id().to_string()), "{name}");
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(temp).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{name}");
    sigterm(&srv.0);
    assert!(wait_exit(&mut srv.0).success());
    assert!(!temp.exists(), "temporary cache left behind");
}

/// `olm catalog serve <image>`: the catalog image is pulled (here from an OCI layout; registry
/// pulls share the image area's tested client) and served with the cache built into it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_a_catalog_image_with_its_built_in_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = probe_binary(tmp.path());
    let layout = format!("oci:{}:v1", tmp.path().join("layout").display());
    let out = Command::new(OLM)
        .args(["catalog", "build"])
        .arg(fixture())
        .args(["-t", &layout, "--olm-binary", "/bin/true", "--no-ca-certs"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let port_s = port.to_string();
    let log = tmp.path().join("serve.log");
    let mut srv = Server(
        Command::new(OLM)
            .args([
                "catalog",
                "serve",
                &layout,
                "--host",
                "127.0.0.1",
                "-p",
                &port_s,
            ])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_serving(&bin, port);
    assert_eq!(list_packages(port).await, vec!["etcd".to_string()]);
    sigterm(&srv.0);
    assert!(wait_exit(&mut srv.0).success());
    // tracing colours its fields; compare the plain text.
    let raw = std::fs::read_to_string(&log).unwrap();
    let mut log = String::new();
    let mut in_escape = false;
    for c in raw.chars() {
        match (in_escape, c) {
            (false, '\u{1b}') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, c) => log.push(c),
        }
    }
    assert!(log.contains("pulled catalog image"), "{log}");
    // The image's own cache matched: nothing was rebuilt.
    assert!(log.contains("cache_rebuilt=false"), "{log}");
    assert!(!log.contains("building cache"), "{log}");

    // Not a directory, not a catalog image.
    let out = Command::new(OLM)
        .args(["catalog", "serve", "./nope", "-t", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("./nope: no such catalog directory"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn stale_cache_is_fatal_and_written_to_the_termination_log() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = tmp.path().join("configs");
    std::fs::create_dir(&cat).unwrap();
    std::fs::copy(fixture().join("catalog.yaml"), cat.join("catalog.yaml")).unwrap();
    let cache = tmp.path().join("cache");
    let st = Command::new(OLM)
        .args(["catalog", "serve"])
        .arg(&cat)
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--cache-only")
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::write(cat.join("more.yaml"), "").unwrap();
    let log = tmp.path().join("termination-log");
    let out = Command::new(OLM)
        .args(["catalog", "serve"])
        .arg(&cat)
        .arg("--cache-dir")
        .arg(&cache)
        .args(["--host", "127.0.0.1", "-p", "0", "-t"])
        .arg(&log)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("integrity check failed: cache requires rebuild"),
        "{stderr}"
    );
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("integrity check failed"), "{written}");

    // Without enforcement the cache is rebuilt instead (checked by --cache-only exiting 0 and
    // the cache then matching).
    let st = Command::new(OLM)
        .args(["catalog", "serve"])
        .arg(&cat)
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--cache-only")
        .status()
        .unwrap();
    assert!(st.success());
}

#[test]
fn usage_errors() {
    let out = Command::new(OLM)
        .args(["catalog", "serve"])
        .arg(fixture())
        .args(["--cache-enforce-integrity", "-t", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("--cache-dir must be specified with --cache-enforce-integrity")
    );
    let out = Command::new(OLM)
        .args(["catalog", "serve", "/does/not/exist", "-t", "/dev/null"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/does/not/exist"));
}

#[test]
fn probe_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = probe_binary(tmp.path());
    let (code, text) = probe(&bin, &[]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("-addr not specified"));
    let (code, _) = probe(&bin, &["-addr=:1", "-nope"]);
    assert_eq!(code, 1);
    let port = free_port();
    let (code, text) = probe(
        &bin,
        &[
            &format!("-addr=127.0.0.1:{port}"),
            "-connect-timeout",
            "200ms",
        ],
    );
    assert_eq!(code, 2, "{text}");
    // Something listening that is not gRPC: the RPC fails.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { break };
            use std::io::Write;
            let _ = c.write_all(b"HTTP/1.1 400 Bad Request\r\n\r\n");
        }
    });
    let (code, text) = probe(
        &bin,
        &[&format!("-addr=127.0.0.1:{port}"), "-rpc-timeout=500ms"],
    );
    assert!(code == 2 || code == 3, "{code} {text}");
}

/// One HTTP/1.1 request over a plain socket: status, headers (lowercased names), body.
fn http(port: u16, request: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status: u16 = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, raw[split + 4..].to_vec())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn get(port: u16, path: &str, extra: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    http(
        port,
        &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{extra}\r\n"),
    )
}

/// `--http-port`: catalogd's HTTP API from the same catalog, answered as catalogd answers
/// (olmv1.md, "catalogd HTTP API"): JSON lines with sorted keys, ServeContent's caching and
/// ranges, gzip, and its error statuses.
#[test]
fn serves_catalogds_http_api() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = probe_binary(tmp.path());
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
    let (port, http_port) = (free_port(), free_port());
    let (port_s, http_s) = (port.to_string(), http_port.to_string());
    let _srv = spawn_serve(&[
        catalog.to_str().unwrap(),
        "--host",
        "127.0.0.1",
        "--port",
        &port_s,
        "--http-port",
        &http_s,
        "--catalog-name",
        "reverse-words",
    ]);
    wait_serving(&bin, port);
    let all = "/catalogs/reverse-words/api/v1/all";

    let (status, headers, body) = get(http_port, all, "");
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("application/jsonl"));
    assert_eq!(header(&headers, "accept-ranges"), Some("bytes"));
    assert_eq!(header(&headers, "vary"), Some("Accept-Encoding"));
    assert_eq!(
        header(&headers, "content-length"),
        Some(body.len().to_string().as_str())
    );
    let text = String::from_utf8(body.clone()).unwrap();
    assert!(text.ends_with('\n'));
    let first = text.lines().next().unwrap();
    // catalogd's first line for this package, with its description and icon since added.
    assert!(
        first.starts_with(r#"{"defaultChannel":"stable-v0","description":"#)
            && first.ends_with(r#""name":"reverse-words-operator","schema":"olm.package"}"#),
        "{first}"
    );
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted, "{line}");
    }
    let rendered = Command::new(OLM)
        .args(["catalog", "render", catalog.to_str().unwrap(), "-o", "json"])
        .output()
        .unwrap();
    let blobs = serde_json::Deserializer::from_slice(&rendered.stdout)
        .into_iter::<serde_json::Value>()
        .count();
    assert_eq!(text.lines().count(), blobs);

    let (status, headers, head_body) = http(
        http_port,
        &format!("HEAD {all} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    );
    assert_eq!((status, head_body.len()), (200, 0));
    let last_modified = header(&headers, "last-modified").unwrap().to_string();
    assert!(last_modified.ends_with(" GMT"), "{last_modified}");

    let (status, _, b) = get(
        http_port,
        all,
        &format!("If-Modified-Since: {last_modified}\r\n"),
    );
    assert_eq!((status, b.len()), (304, 0));

    let (status, headers, b) = get(http_port, all, "Range: bytes=0-99\r\n");
    assert_eq!(status, 206);
    assert_eq!(b, body[..100]);
    assert_eq!(
        header(&headers, "content-range"),
        Some(format!("bytes 0-99/{}", body.len()).as_str())
    );
    let (status, _, _) = get(
        http_port,
        all,
        &format!("Range: bytes={}-\r\n", body.len() + 5),
    );
    assert_eq!(status, 416);

    let (status, headers, gz) = get(http_port, all, "Accept-Encoding: gzip\r\n");
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-encoding"), Some("gzip"));
    let mut plain = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut plain).unwrap();
    assert_eq!(plain, body);

    let (status, _, _) = http(
        http_port,
        &format!(
            "POST {all} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
    );
    assert_eq!(status, 405);
    let (status, _, b) = get(http_port, "/catalogs/other/api/v1/all", "");
    assert_eq!(
        (status, String::from_utf8_lossy(&b).trim()),
        (404, "404 Not Found")
    );
    let (status, _, b) = get(http_port, "/catalogs/Bad_Name/api/v1/all", "");
    assert_eq!(status, 400);
    assert!(String::from_utf8_lossy(&b).contains("RFC 1123"));
    let (status, _, b) = get(http_port, "/nope", "");
    assert_eq!(
        (status, String::from_utf8_lossy(&b).trim()),
        (404, "404 page not found")
    );
    // `/` is the catalog browser's grid.
    let (status, headers, b) = get(http_port, "/", "");
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/html; charset=utf-8")
    );
    assert!(String::from_utf8_lossy(&b).contains("packages/reverse-words-operator.html"));
    // The page's Content-Security-Policy is also sent as a header, the same policy.
    let csp = header(&headers, "content-security-policy").expect("a CSP header");
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'sha256-"));
    let meta = format!(
        r#"<meta http-equiv="Content-Security-Policy" content="{}">"#,
        csp.replace('\'', "&#39;")
    );
    assert!(String::from_utf8_lossy(&b).contains(&meta), "{csp}");
    let (status, headers, _) = get(http_port, "/packages/reverse-words-operator.html", "");
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-security-policy"), Some(csp));

    let metas = "/catalogs/reverse-words/api/v1/metas";
    let (status, _, b) = get(http_port, &format!("{metas}?schema=olm.package"), "");
    assert_eq!(status, 200);
    assert_eq!(String::from_utf8_lossy(&b).trim(), first);
    let (status, _, b) = get(
        http_port,
        &format!("{metas}?schema=olm.bundle&name=reverse-words-operator.v0.2.1"),
        "",
    );
    assert_eq!(status, 200);
    assert_eq!(String::from_utf8_lossy(&b).lines().count(), 1);
    let (status, _, b) = get(http_port, &format!("{metas}?package=nothing"), "");
    assert_eq!((status, b.len()), (200, 0));
    let (status, _, _) = get(http_port, &format!("{metas}?version=1"), "");
    assert_eq!(status, 400);
}

/// `--tls-cert/--tls-key`: the HTTP API over TLS, as catalogd serves it (HTTPS, HTTP/1.1),
/// checked with curl trusting the test's self-signed certificate.
#[test]
fn serves_catalogds_http_api_over_tls() {
    let have = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    for tool in ["openssl", "curl"] {
        if !have(tool) {
            prerequisite::missing(&format!("{tool} not installed"));
            return;
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    let (cert, key) = (tmp.path().join("cert.pem"), tmp.path().join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "1", "-subj", "/CN=localhost"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let bin = probe_binary(tmp.path());
    let catalog = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalog");
    let (port, http_port) = (free_port(), free_port());
    let (port_s, http_s) = (port.to_string(), http_port.to_string());
    let _srv = spawn_serve(&[
        catalog.to_str().unwrap(),
        "--host",
        "127.0.0.1",
        "--port",
        &port_s,
        "--http-port",
        &http_s,
        "--catalog-name",
        "reverse-words",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    wait_serving(&bin, port);
    let url = format!("https://127.0.0.1:{http_port}/catalogs/reverse-words/api/v1/all");
    let out = Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(&cert)
        .args(["-w", "\n%{http_code} %{http_version}", &url])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let (body, status) = text.rsplit_once('\n').unwrap();
    assert_eq!(status, "200 1.1");
    assert!(
        body.starts_with(r#"{"defaultChannel":"stable-v0""#),
        "{body}"
    );
    // Without trusting the certificate, the handshake fails.
    let out = Command::new("curl").args(["-sS", &url]).output().unwrap();
    assert!(!out.status.success());
}
