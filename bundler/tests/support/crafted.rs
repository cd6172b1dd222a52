//! Hand-made tar layers and OCI layouts, byte by byte, for hostile-input tests: names with
//! `..`, absolute names, links anywhere, whiteouts through links. Nothing here goes through
//! the library's own writers, which refuse such entries.
#![allow(dead_code)]

use std::path::Path;

use sha2::{Digest, Sha256};

/// One tar entry as a hostile image would hold it.
#[derive(Clone, Debug)]
pub enum Entry {
    Dir(String),
    File(String, Vec<u8>),
    /// A file with explicit permission bits (setuid and the like).
    FileMode(String, Vec<u8>, u32),
    Symlink(String, String),
    HardLink(String, String),
    Fifo(String),
    CharDevice(String),
}

fn octal(field: &mut [u8], value: u64) {
    let digits = field.len() - 1;
    let s = format!("{value:0digits$o}");
    field[..digits].copy_from_slice(&s.as_bytes()[s.len() - digits..]);
    field[digits] = 0;
}

fn header(name: &[u8], kind: u8, mode: u32, size: u64, link: &[u8]) -> [u8; 512] {
    let mut h = [0u8; 512];
    let n = name.len().min(100);
    h[..n].copy_from_slice(&name[..n]);
    octal(&mut h[100..108], u64::from(mode));
    octal(&mut h[108..116], 0);
    octal(&mut h[116..124], 0);
    octal(&mut h[124..136], size);
    octal(&mut h[136..148], 0);
    h[156] = kind;
    let l = link.len().min(100);
    h[157..157 + l].copy_from_slice(&link[..l]);
    h[257..263].copy_from_slice(b"ustar ");
    h[263..265].copy_from_slice(b" \0");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    let s = format!("{sum:06o}\0 ");
    h[148..156].copy_from_slice(s.as_bytes());
    h
}

fn pad(out: &mut Vec<u8>) {
    let rem = out.len() % 512;
    if rem != 0 {
        out.resize(out.len() + 512 - rem, 0);
    }
}

fn push(out: &mut Vec<u8>, name: &str, kind: u8, mode: u32, data: &[u8], link: &str) {
    // GNU long names and long link names, as tar writes them past 100 bytes.
    if link.len() > 100 {
        let mut l = link.as_bytes().to_vec();
        l.push(0);
        out.extend_from_slice(&header(b"././@LongLink", b'K', 0o644, l.len() as u64, b""));
        out.extend_from_slice(&l);
        pad(out);
    }
    if name.len() > 100 {
        let mut l = name.as_bytes().to_vec();
        l.push(0);
        out.extend_from_slice(&header(b"././@LongLink", b'L', 0o644, l.len() as u64, b""));
        out.extend_from_slice(&l);
        pad(out);
    }
    out.extend_from_slice(&header(
        name.as_bytes(),
        kind,
        mode,
        data.len() as u64,
        link.as_bytes(),
    ));
    out.extend_from_slice(data);
    pad(out);
}

/// An uncompressed tar of `entries`, in order.
pub fn tar(entries: &[Entry]) -> Vec<u8> {
    let mut out = Vec::new();
    for e in entries {
        match e {
            Entry::Dir(n) => push(&mut out, n, b'5', 0o755, b"", ""),
            Entry::File(n, d) => push(&mut out, n, b'0', 0o644, d, ""),
            Entry::FileMode(n, d, m) => push(&mut out, n, b'0', *m, d, ""),
            Entry::Symlink(n, t) => push(&mut out, n, b'2', 0o777, b"", t),
            Entry::HardLink(n, t) => push(&mut out, n, b'1', 0o644, b"", t),
            Entry::Fifo(n) => push(&mut out, n, b'6', 0o644, b"", ""),
            Entry::CharDevice(n) => push(&mut out, n, b'3', 0o644, b"", ""),
        }
    }
    out.extend_from_slice(&[0u8; 1024]);
    out
}

pub fn sha256(data: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(data)))
}

fn put_blob(dir: &Path, data: &[u8]) -> String {
    let digest = sha256(data);
    let path = dir
        .join("blobs/sha256")
        .join(digest.trim_start_matches("sha256:"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, data).unwrap();
    digest
}

/// Writes an OCI layout at `dir` holding one image tagged `tag` whose layers are `layers`
/// (uncompressed tars) and whose config carries `labels`. Returns the manifest's digest.
pub fn layout(dir: &Path, tag: &str, layers: &[Vec<u8>], labels: &[(&str, &str)]) -> String {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("oci-layout"), br#"{"imageLayoutVersion":"1.0.0"}"#).unwrap();
    let diff_ids: Vec<String> = layers.iter().map(|l| sha256(l)).collect();
    let labels: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
        .collect();
    let config = serde_json::json!({
        "architecture": host_arch(), "os": "linux",
        "config": {"Labels": labels},
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
    });
    let config = serde_json::to_vec(&config).unwrap();
    let config_digest = put_blob(dir, &config);
    let layer_descs: Vec<serde_json::Value> = layers
        .iter()
        .map(|l| {
            serde_json::json!({
                "mediaType": "application/vnd.oci.image.layer.v1.tar",
                "digest": put_blob(dir, l), "size": l.len(),
            })
        })
        .collect();
    let manifest = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": config_digest, "size": config.len()},
        "layers": layer_descs,
    });
    let manifest = serde_json::to_vec(&manifest).unwrap();
    let digest = put_blob(dir, &manifest);
    manifest_index(
        dir,
        tag,
        &digest,
        manifest.len(),
        "application/vnd.oci.image.manifest.v1+json",
    );
    digest
}

/// Points `tag` of the layout at `dir` at a manifest already among its blobs.
pub fn manifest_index(dir: &Path, tag: &str, digest: &str, size: usize, media_type: &str) {
    let index = serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [{
            "mediaType": media_type, "digest": digest, "size": size,
            "annotations": {"org.opencontainers.image.ref.name": tag},
        }],
    });
    std::fs::write(dir.join("index.json"), serde_json::to_vec(&index).unwrap()).unwrap();
}

/// Adds raw bytes to a layout's blobs, returning their digest.
pub fn blob(dir: &Path, data: &[u8]) -> String {
    put_blob(dir, data)
}

pub fn host_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}
