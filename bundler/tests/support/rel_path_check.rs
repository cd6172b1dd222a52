//! The checks the `rel_path` fuzz target runs on every input, shared with the seed replay in
//! `hostile_paths.rs`: whatever bytes a label, an archive or a listing holds, a path parsed
//! from them is plain names only, reads back as itself, and opened through a confined tree
//! never reaches a canary outside its root.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::PathBuf;
use std::sync::OnceLock;

use olm_bundler::confined::{RelPath, Tree};

/// A root with links out (absolute, climbing, through a directory) and one inside, beside a
/// canary file, made once per process.
fn root() -> &'static (tempfile::TempDir, Tree) {
    static ROOT: OnceLock<(tempfile::TempDir, Tree)> = OnceLock::new();
    ROOT.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let top: PathBuf = tmp.path().canonicalize().unwrap();
        let root = top.join("root");
        std::fs::create_dir_all(root.join("configs/p")).unwrap();
        std::fs::write(top.join("canary"), "CANARY").unwrap();
        std::fs::write(root.join("configs/p/c.json"), "inside").unwrap();
        let link = |target: PathBuf, at: &str| std::os::unix::fs::symlink(target, root.join(at));
        link(top.join("canary"), "abs").unwrap();
        link(PathBuf::from("../canary"), "up").unwrap();
        link(PathBuf::from("../../../canary"), "configs/p/climb").unwrap();
        link(top.clone(), "configs/out").unwrap();
        link(PathBuf::from("p/c.json"), "configs/in").unwrap();
        let tree = Tree::confined(&root).unwrap();
        (tmp, tree)
    })
}

/// The names of `p` joined by `/`.
fn spelled(p: &RelPath) -> Vec<u8> {
    let names: Vec<&[u8]> = p.names().map(OsStr::as_bytes).collect();
    names.join(&b'/')
}

fn plain(p: &RelPath) {
    for name in p.names() {
        let b = name.as_bytes();
        assert!(!b.is_empty() && b != b"." && b != b"..", "{p:?}");
        assert!(!b.contains(&b'/') && !b.contains(&0), "{p:?}");
    }
}

/// Parses `data` every way and asserts the invariants.
pub fn check(data: &[u8]) {
    let text = OsStr::from_bytes(data);
    if let Ok(p) = RelPath::parse_os(text) {
        plain(&p);
        // Strict parsing accepts only the canonical spelling: it reads back byte for byte.
        assert_eq!(spelled(&p), data);
        assert!(!p.is_root());
    }
    if let Ok(p) = RelPath::in_image_os(text) {
        plain(&p);
        // Canonical once read: the strict reading of it is itself.
        if !p.is_root() {
            let again = spelled(&p);
            assert_eq!(
                RelPath::parse_os(OsStr::from_bytes(&again)).as_ref(),
                Ok(&p)
            );
        }
        let (_, tree) = root();
        if let Ok(bytes) = tree.read(&p) {
            assert!(bytes != b"CANARY", "{p:?} read the canary");
        }
        for sub in [RelPath::root(), RelPath::parse("configs").unwrap()] {
            if let Ok(bytes) = tree.subtree(&sub).read(&p) {
                assert!(bytes != b"CANARY", "{sub:?}/{p:?} read the canary");
            }
        }
    }
    if let Ok(p) = RelPath::root().child(text) {
        plain(&p);
        assert_eq!(p.names().count(), 1);
    }
}
