//! catalogd's HTTP API from `olm catalog serve --http-port` answers, byte for byte, what it
//! answered when the server held the catalog in memory: status, headers and body of every
//! kind of request (whole body, HEAD, ranges, `If-Modified-Since`, gzip, `metas` queries,
//! errors), on a small catalog and on the shared data's catalogs of both forms.
//!
//! `tests/fixtures/serve/catalogd-responses.tsv` holds what that server answered (bodies as
//! length and SHA-256; `Last-Modified` and `Date` as placeholders, being times). It was
//! recorded with `OLM_RECORD_CATALOGD=1 OLM_CATALOGD_BIN=<that build's olm>`; run with
//! `OLM_RECORD_CATALOGD=1` alone to record the current binary's answers instead.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

const FIXTURE: &str = "tests/fixtures/serve/catalogd-responses.tsv";

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

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One request over a plain socket: status line, headers (lowercased names, in order) and
/// body.
fn http(port: u16, request: &str) -> (String, Vec<(String, String)>, Vec<u8>) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.lines();
    let status = lines.next().unwrap().to_string();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, raw[split + 4..].to_vec())
}

/// Starts the server on `catalog` with its cache in `cache` (the server is killed at the end,
/// so it could not remove a temporary one) and waits until its HTTP API answers.
fn serve(bin: &str, catalog: &Path, cache: &Path) -> (Server, u16) {
    let (port, http_port) = (free_port(), free_port());
    let server = Server(
        Command::new(bin)
            .args(["catalog", "serve"])
            .arg(catalog)
            .arg("--cache-dir")
            .arg(cache)
            .arg("--cache-enforce-integrity=false")
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--http-port", &http_port.to_string()])
            .args(["--catalog-name", "c"])
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::net::TcpStream::connect(("127.0.0.1", http_port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP API never came up");
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, http_port)
}

/// The requests asked of every catalog: (method, path, extra header lines).
fn requests(first_package: &str) -> Vec<(&'static str, String, &'static str)> {
    let all = "/catalogs/c/api/v1/all".to_string();
    let metas = |q: &str| format!("/catalogs/c/api/v1/metas{q}");
    const GZ: &str = "Accept-Encoding: gzip\r\n";
    vec![
        ("GET", all.clone(), ""),
        ("HEAD", all.clone(), ""),
        ("GET", all.clone(), GZ),
        ("HEAD", all.clone(), GZ),
        ("GET", all.clone(), "Accept-Encoding: br, gzip;q=0.5\r\n"),
        ("GET", all.clone(), "Range: bytes=0-99\r\n"),
        ("GET", all.clone(), "Range: bytes=1000-\r\n"),
        ("GET", all.clone(), "Range: bytes=-77\r\n"),
        ("GET", all.clone(), "Range: bytes=0-0\r\n"),
        ("GET", all.clone(), "Range: bytes=5-999999999999\r\n"),
        ("HEAD", all.clone(), "Range: bytes=5-10\r\n"),
        ("GET", all.clone(), "Range: bytes=99999999999-\r\n"),
        ("GET", all.clone(), "Range: bytes=0-1,5-6\r\n"),
        (
            "GET",
            all.clone(),
            "Range: bytes=10-20\r\nAccept-Encoding: gzip\r\n",
        ),
        (
            "GET",
            all.clone(),
            "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT\r\n",
        ),
        (
            "GET",
            all.clone(),
            "If-Modified-Since: Thu, 01 Jan 1970 00:00:00 GMT\r\n",
        ),
        ("GET", metas("?schema=olm.package"), ""),
        ("GET", metas("?schema=olm.bundle"), ""),
        ("GET", metas("?schema=olm.bundle"), GZ),
        ("HEAD", metas("?schema=olm.channel"), GZ),
        ("GET", metas(&format!("?package={first_package}")), ""),
        ("GET", metas(&format!("?package={first_package}")), GZ),
        ("GET", metas(&format!("?name={first_package}")), ""),
        (
            "GET",
            metas(&format!("?schema=olm.channel&package={first_package}")),
            "",
        ),
        ("GET", metas(""), ""),
        (
            "GET",
            metas("?schema=olm%2Ebundle"),
            "Range: bytes=100-5000\r\n",
        ),
        ("GET", metas("?schema=olm.bundle"), "Range: bytes=-10\r\n"),
        (
            "GET",
            metas("?schema=olm.channel"),
            "Range: bytes=999999999-\r\n",
        ),
        (
            "GET",
            metas("?schema=olm.bundle"),
            "If-Modified-Since: Fri, 01 Jan 2100 00:00:00 GMT\r\n",
        ),
        ("GET", metas("?package=nothing"), ""),
        ("GET", metas("?package=nothing"), GZ),
        ("GET", metas("?version=1"), ""),
        ("POST", all.clone(), "Content-Length: 0\r\n"),
        ("GET", "/catalogs/other/api/v1/all".into(), ""),
        ("GET", "/catalogs/Bad_Name/api/v1/all".into(), ""),
        // Outside /catalogs/ and not a page of the catalog browser.
        ("GET", "/nope".into(), ""),
        ("GET", "/catalogs/c/api/v1/other".into(), ""),
    ]
}

/// Every answer of the server on `catalog`, one line each.
fn answers(bin: &str, label: &str, catalog: &Path) -> Vec<String> {
    let cache = tempfile::tempdir().unwrap();
    let (_server, port) = serve(bin, catalog, cache.path());
    let ask = |method: &str, path: &str, extra: &str| {
        http(
            port,
            &format!("{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{extra}\r\n"),
        )
    };
    let (_, _, all) = ask("GET", "/catalogs/c/api/v1/all", "");
    let first: serde_json::Value =
        serde_json::from_slice(all.split(|b| *b == b'\n').next().unwrap()).unwrap();
    let first_package = first["name"].as_str().unwrap().to_string();
    let mut out = Vec::new();
    for (method, path, extra) in requests(&first_package) {
        let (status, headers, body) = ask(method, &path, extra);
        let headers: Vec<String> = headers
            .iter()
            .map(|(k, v)| match k.as_str() {
                "date" | "last-modified" => format!("{k}: <time>"),
                _ => format!("{k}: {v}"),
            })
            .collect();
        out.push(format!(
            "{label}\t{method} {path} {}\t{status}\t{}\t{} {}",
            extra.trim_end().replace("\r\n", "; "),
            headers.join("; "),
            body.len(),
            hex::encode(Sha256::digest(&body)),
        ));
    }
    out
}

fn catalogs() -> Vec<(&'static str, PathBuf)> {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![("fixture", here.join("tests/fixtures/serve/catalog"))];
    let candidates = [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(here.join("../../shared/data")),
        Some(here.join("../../../shared/data")),
    ];
    let Some(data) = candidates.into_iter().flatten().find(|p| p.is_dir()) else {
        prerequisite::missing(&format!("shared data beside {}", here.display()));
        return out;
    };
    let shared = data.join("catalogs");
    for (label, dir) in [
        ("certified-v4.16", "certified-operators/catalogs/v4.16"),
        ("community-v4.20", "community-operators-prod/catalogs/v4.20"),
    ] {
        let dir = shared.join(dir);
        if dir.is_dir() {
            out.push((label, dir));
        } else {
            prerequisite::missing(&format!("{} is missing", dir.display()));
        }
    }
    out
}

#[test]
fn catalogds_answers_are_what_the_in_memory_server_answered() {
    let record = std::env::var_os("OLM_RECORD_CATALOGD").is_some();
    let bin = std::env::var("OLM_CATALOGD_BIN")
        .ok()
        .filter(|_| record)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_olm").to_string());
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    let mut got = Vec::new();
    for (label, dir) in catalogs() {
        got.extend(answers(&bin, label, &dir));
    }
    if record {
        std::fs::write(&fixture, got.join("\n") + "\n").unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&fixture).unwrap();
    let labels: Vec<&str> = got.iter().filter_map(|l| l.split('\t').next()).collect();
    let expected: Vec<&str> = expected
        .lines()
        .filter(|l| labels.contains(&l.split('\t').next().unwrap_or_default()))
        .collect();
    assert!(!expected.is_empty());
    pretty_assertions::assert_eq!(expected, got.iter().map(String::as_str).collect::<Vec<_>>());
}
