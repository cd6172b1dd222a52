//! The catalog server's memory does not grow with the catalog it serves: on a generated catalog
//! of a few hundred megabytes, a server started from its cache answers catalogd's
//! `/api/v1/all` (plain and gzip) and a `metas` query while its resident memory, read from
//! /proc, stays within a budget, and grows little while it answers. A server that read the
//! catalog at start-up or held the body (as it once did) would hold the catalog's size.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "support/serve.rs"]
mod serve;
use serve::{Server, free_port};

const OLM: &str = env!("CARGO_BIN_EXE_olm");
/// Packages, bundles per package, and bytes of description per bundle: about 200 MB.
const PACKAGES: usize = 10;
const BUNDLES: usize = 20;
const DESCRIPTION: usize = 1 << 20;
/// The most the server may hold, start-up included (a debug build's code is most of it): a
/// server that read the catalog at start-up, or held a body, would pass it many times over.
const BUDGET_KB: u64 = 64 << 10;
/// How much the server may grow while it answers (buffers, connection state, allocator).
const GROWTH_BUDGET_KB: u64 = 16 << 10;
/// How much more it may grow serving the catalog browser's pages, every one twice (each
/// package page holds a megabyte of description).
const PAGES_BUDGET_KB: u64 = 5 << 10;

/// A valid catalog: each package a JSON file with its channel and bundles, each bundle in the
/// `olm.csv.metadata` form with a long description (the bulk of the bytes).
fn generate(root: &Path) -> u64 {
    let words = "the operator reconciles every resource it owns and reports its status ";
    let description: String = words.chars().cycle().take(DESCRIPTION).collect();
    let mut total = 0;
    for p in 0..PACKAGES {
        let pkg = format!("pkg{p:02}");
        std::fs::create_dir_all(root.join(&pkg)).unwrap();
        let mut text = String::new();
        let mut line = |v: serde_json::Value| {
            text.push_str(&v.to_string());
            text.push('\n');
        };
        line(serde_json::json!({"schema": "olm.package", "name": pkg, "defaultChannel": "stable"}));
        let entries: Vec<serde_json::Value> = (0..BUNDLES)
            .map(|b| match b {
                0 => serde_json::json!({"name": format!("{pkg}.v1.0.0")}),
                b => serde_json::json!({
                    "name": format!("{pkg}.v1.0.{b}"),
                    "replaces": format!("{pkg}.v1.0.{}", b - 1),
                }),
            })
            .collect();
        line(serde_json::json!({
            "schema": "olm.channel", "package": pkg, "name": "stable", "entries": entries,
        }));
        for b in 0..BUNDLES {
            line(serde_json::json!({
                "schema": "olm.bundle",
                "package": pkg,
                "name": format!("{pkg}.v1.0.{b}"),
                "image": format!("quay.io/example/{pkg}-bundle:v1.0.{b}"),
                "properties": [
                    {"type": "olm.package", "value": {"packageName": pkg, "version": format!("1.0.{b}")}},
                    {"type": "olm.csv.metadata", "value": {"displayName": pkg, "description": description}},
                ],
            }));
        }
        total += text.len() as u64;
        std::fs::write(root.join(&pkg).join("catalog.json"), text).unwrap();
    }
    total
}

/// Resident and peak resident memory of `pid`, in kB.
fn memory(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb = |key: &str| -> u64 {
        let line = status.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (kb("VmRSS:"), kb("VmHWM:"))
}

/// GETs `path` and reads the body through without keeping it: its length.
fn fetch(port: u16, path: &str, extra: &str) -> u64 {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{extra}\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    assert!(
        head.starts_with(b"HTTP/1.1 200"),
        "{path}: {}",
        String::from_utf8_lossy(&head)
    );
    std::io::copy(&mut s, &mut std::io::sink()).unwrap()
}

#[test]
fn serving_a_large_catalog_keeps_the_server_small() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("SKIP: no /proc to read the server's memory from");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (catalog, cache) = (tmp.path().join("catalog"), tmp.path().join("cache"));
    let size = generate(&catalog);
    let built = Command::new(OLM)
        .args(["catalog", "serve"])
        .arg(&catalog)
        .arg("--cache-dir")
        .arg(&cache)
        .arg("--cache-only")
        // The name the server serves as: its catalog browser's pages are ready.
        .args(["--cache-site-name", "big"])
        .stdout(Stdio::null())
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );

    // From the fresh cache, as a catalog pod starts from its image's: nothing is built.
    let (port, http_port) = (free_port(), free_port());
    let server = Server(
        Command::new(OLM)
            .args(["catalog", "serve"])
            .arg(&catalog)
            .arg("--cache-dir")
            .arg(&cache)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args([
                "--http-port",
                &http_port.to_string(),
                "--catalog-name",
                "big",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", http_port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP API never came up");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = server.0.id();
    let (rss_before, peak_before) = memory(pid);

    let all = "/catalogs/big/api/v1/all";
    let body = fetch(http_port, all, "");
    assert!(
        body >= size / 2,
        "a body of {body} bytes for {size} of catalog"
    );
    let gzip = fetch(http_port, all, "Accept-Encoding: gzip\r\n");
    assert!(gzip > 0 && gzip < body);
    let metas = "/catalogs/big/api/v1/metas?schema=olm.bundle&package=pkg03";
    assert!(fetch(http_port, metas, "Accept-Encoding: gzip\r\n") > 0);
    let (rss_after, peak_after) = memory(pid);

    eprintln!(
        "served {body} bytes ({gzip} gzip-compressed): RSS {rss_before} -> {rss_after} kB, peak {peak_before} -> {peak_after} kB"
    );
    assert!(
        body / 1024 > 3 * BUDGET_KB,
        "the catalog is too small to show a server holding it"
    );
    assert!(
        peak_after <= BUDGET_KB,
        "the server's peak was {peak_after} kB serving {body} bytes (budget {BUDGET_KB} kB)"
    );
    assert!(
        rss_after <= rss_before + GROWTH_BUDGET_KB && peak_after <= peak_before + GROWTH_BUDGET_KB,
        "the server grew from {rss_before} kB (peak {peak_before}) to {rss_after} kB (peak {peak_after}) serving {body} bytes"
    );

    // The catalog browser's pages stream from their files like the API's bodies.
    let mut pages = 0;
    for _ in 0..2 {
        pages += fetch(http_port, "/", "") + fetch(http_port, "/search.json", "");
        for p in 0..PACKAGES {
            pages += fetch(http_port, &format!("/packages/pkg{p:02}.html"), "");
        }
    }
    let (rss_pages, peak_pages) = memory(pid);
    eprintln!(
        "served {pages} bytes of pages: RSS {rss_after} -> {rss_pages} kB, peak {peak_after} -> {peak_pages} kB"
    );
    assert!(
        pages > 2 * PACKAGES as u64 * DESCRIPTION as u64,
        "{pages} bytes of pages"
    );
    assert!(
        rss_pages <= rss_after + PAGES_BUDGET_KB && peak_pages <= peak_after + PAGES_BUDGET_KB,
        "serving the pages grew the server from {rss_after} kB (peak {peak_after}) to {rss_pages} kB (peak {peak_pages})"
    );
}
