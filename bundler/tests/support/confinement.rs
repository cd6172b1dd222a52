//! The confinement check the `unpack_layer` fuzz target runs on every input, shared with the
//! seed replay in `hostile_images.rs`: whatever two layers hold, applying them never changes a
//! canary directory beside the root, and every link left in the root resolves inside it when
//! the host follows it.
#![allow(dead_code)]

use std::path::Path;

use olm_bundler::image::blob::Blob;
use olm_bundler::image::unpack::apply_layer;
use sha2::Digest as _;

fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let meta = std::fs::symlink_metadata(e.path()).unwrap();
        let content = if meta.is_file() {
            std::fs::read(e.path()).unwrap()
        } else {
            Vec::new()
        };
        out.push((e.file_name().to_string_lossy().into_owned(), content));
        if meta.is_dir() {
            out.extend(snapshot(&e.path()));
        }
    }
    out.sort();
    out
}

fn links_stay_inside(root: &Path, dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let ft = e.file_type().unwrap();
        if ft.is_symlink() {
            if let Ok(real) = std::fs::canonicalize(e.path()) {
                assert!(real.starts_with(root), "{:?} leads to {real:?}", e.path());
            }
        } else if ft.is_dir() {
            links_stay_inside(root, &e.path());
        }
    }
}

/// Applies the two layers `data` holds (the first two bytes, big-endian, say where the first
/// ends) and asserts confinement.
pub fn check_two_layers(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let split = (usize::from(data[0]) << 8 | usize::from(data[1])).min(data.len() - 2);
    let (first, second) = data[2..].split_at(split);
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().canonicalize().unwrap();
    let root = top.join("root");
    let canary = top.join("canary");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(canary.join("sub")).unwrap();
    std::fs::write(canary.join("victim"), b"x").unwrap();
    std::fs::write(canary.join("sub/keep"), b"y").unwrap();
    let before = snapshot(&top.join("canary"));
    for layer in [first, second] {
        let digest = format!("sha256:{}", hex::encode(sha2::Sha256::digest(layer)));
        let blob = Blob::in_memory(
            "application/vnd.oci.image.layer.v1.tar",
            digest,
            bytes::Bytes::copy_from_slice(layer),
        );
        if apply_layer(&root, &blob).is_err() {
            break;
        }
    }
    assert_eq!(before, snapshot(&canary), "the canary changed");
    links_stay_inside(&root, &root);
}
