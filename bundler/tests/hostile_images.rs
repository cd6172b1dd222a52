//! Images made to harm the machine that reads them. Each case is a catalog image in an OCI
//! layout whose layers try to create, change or delete something outside the directory `olm`
//! unpacks into (symlinks planted in one layer and written through in the next, hard links
//! out, `..` names, loops, whiteouts of the root); `olm catalog render` runs on it and a
//! canary directory beside the scratch directory must be exactly as it was. The command
//! either succeeds inside its root or fails naming the layer and the entry. Oversized
//! manifests, configs and indexes are refused quickly, naming the reference, limit and size.

#[path = "support/crafted.rs"]
mod crafted;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crafted::Entry::{self, *};

const CONFIGS_LABEL: (&str, &str) = (
    "operators.operatorframework.io.index.configs.v1",
    "/configs",
);

const CATALOG: &str = r#"{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"example.com/p:v1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
"#;

/// A test area: the canary directory a hostile image aims at, the scratch directory `olm`
/// unpacks under (its TMPDIR), and the layout.
struct Area {
    _tmp: tempfile::TempDir,
    top: PathBuf,
    outside: PathBuf,
    scratch: PathBuf,
}

impl Area {
    fn new() -> Area {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().canonicalize().unwrap();
        let outside = top.join("outside");
        std::fs::create_dir_all(outside.join("sub")).unwrap();
        std::fs::create_dir_all(outside.join("empty")).unwrap();
        std::fs::write(outside.join("victim"), "do not touch").unwrap();
        std::fs::write(outside.join("sub/keep"), "keep me").unwrap();
        std::fs::write(
            outside.join("secret.json"),
            r#"{"schema":"olm.package","name":"SECRET-MARKER","defaultChannel":"x"}"#,
        )
        .unwrap();
        let scratch = top.join("scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        Area {
            _tmp: tmp,
            top,
            outside,
            scratch,
        }
    }

    fn out(&self) -> String {
        self.outside.display().to_string()
    }

    /// Everything under the canary directory: path, kind and content.
    fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        walk(&self.outside, &self.outside, &mut out);
        // And nothing new beside it.
        let mut names: Vec<String> = std::fs::read_dir(&self.top)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "layout")
            .collect();
        names.sort();
        out.insert(PathBuf::from("<top>"), names.join(","));
        out
    }

    /// `olm ARGS` with this area's scratch directory as its TMPDIR: (exit code, stderr).
    fn olm(&self, args: &[&str]) -> (Option<i32>, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_olm"))
            .args(args)
            .env("TMPDIR", &self.scratch)
            .output()
            .expect("run olm");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn render(&self, layers: &[Vec<Entry>]) -> (bool, String, String) {
        let tars: Vec<Vec<u8>> = layers.iter().map(|l| crafted::tar(l)).collect();
        let layout = self.top.join("layout");
        let _ = std::fs::remove_dir_all(&layout);
        crafted::layout(&layout, "t", &tars, &[CONFIGS_LABEL]);
        let out = Command::new(env!("CARGO_BIN_EXE_olm"))
            .args(["catalog", "render"])
            .arg(format!("oci:{}:t", layout.display()))
            .args(["-o", "json"])
            .env("TMPDIR", &self.scratch)
            .output()
            .expect("run olm");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        let rel = p.strip_prefix(base).unwrap().to_path_buf();
        let ft = e.file_type().unwrap();
        if ft.is_symlink() {
            out.insert(rel, format!("link {:?}", std::fs::read_link(&p).unwrap()));
        } else if ft.is_dir() {
            out.insert(rel, "dir".into());
            walk(base, &p, out);
        } else {
            out.insert(rel, format!("file {:?}", std::fs::read(&p).unwrap()));
        }
    }
}

fn base() -> Vec<Entry> {
    vec![
        Dir("configs".into()),
        Dir("configs/p".into()),
        File("configs/p/catalog.json".into(), CATALOG.as_bytes().to_vec()),
    ]
}

enum Expect {
    Renders,
    /// Fails; the error names these (the entry among them).
    Fails(&'static [&'static str]),
    /// Whatever the verdict (a later reader may refuse what unpacked), no harm and no panic.
    NoHarm,
}

/// Runs one hostile image and checks the canary and the verdict.
fn case(name: &str, make: impl Fn(&Area) -> Vec<Vec<Entry>>, expect: Expect) {
    let area = Area::new();
    let before = area.snapshot();
    let layers = make(&area);
    let (ok, out, err) = area.render(&layers);
    let after = area.snapshot();
    assert_eq!(before, after, "{name}: the canary changed\nstderr: {err}");
    assert!(
        !out.contains("SECRET-MARKER") && !err.contains("SECRET-MARKER"),
        "{name}: a file outside the image was read"
    );
    assert!(!err.contains("panicked"), "{name}: {err}");
    match expect {
        Expect::Renders => {
            assert!(ok, "{name}: {err}");
            assert!(out.contains("p.v1.0.0"), "{name}: {out}");
        }
        Expect::Fails(words) => {
            assert!(!ok, "{name}: rendered\n{out}");
            assert!(err.contains("layer sha256:"), "{name}: {err}");
            for w in words {
                assert!(err.contains(w), "{name}: {w:?} not in {err}");
            }
        }
        Expect::NoHarm => assert!(ok || err.starts_with("error: "), "{name}: {err}"),
    }
}

fn with(extra: Vec<Entry>) -> Vec<Entry> {
    let mut l = base();
    l.extend(extra);
    l
}

#[test]
fn opaque_whiteout_through_a_planted_symlink_stays_inside() {
    case(
        "opaque",
        |a| {
            vec![
                with(vec![Symlink("configs/evil".into(), a.out())]),
                vec![File("configs/evil/.wh..wh..opq".into(), vec![])],
            ]
        },
        Expect::Renders,
    );
}

#[test]
fn whiteout_through_a_planted_symlink_stays_inside() {
    case(
        "whiteout",
        |a| {
            vec![
                with(vec![Symlink("configs/evil".into(), a.out())]),
                vec![File("configs/evil/.wh.victim".into(), vec![])],
            ]
        },
        Expect::Renders,
    );
}

#[test]
fn directory_replacing_a_file_through_a_planted_symlink_stays_inside() {
    case(
        "replace",
        |a| {
            vec![
                with(vec![Symlink("configs/evil".into(), a.out())]),
                vec![
                    Dir("configs/evil/victim".into()),
                    Dir("configs/evil/sub".into()),
                ],
            ]
        },
        Expect::Renders,
    );
}

#[test]
fn files_written_through_symlinks_and_chains_stay_inside() {
    case(
        "write-through",
        |a| {
            vec![
                with(vec![
                    Symlink("configs/evil".into(), a.out()),
                    Symlink("configs/rel".into(), "../../../../../../../..".into()),
                    Symlink("configs/a".into(), "b".into()),
                    Symlink("configs/b".into(), a.out()),
                ]),
                vec![
                    File("configs/evil/victim".into(), b"overwritten".to_vec()),
                    File("configs/evil/new".into(), b"new".to_vec()),
                    File(
                        format!("configs/rel{}/victim", a.out()),
                        b"overwritten".to_vec(),
                    ),
                    File("configs/a/sub/keep".into(), b"overwritten".to_vec()),
                ],
            ]
        },
        Expect::Renders,
    );
}

#[test]
fn hard_links_out_of_the_image_are_refused() {
    case(
        "hardlink-absolute",
        |a| {
            vec![with(vec![HardLink(
                "configs/h".into(),
                format!("{}/victim", a.out()),
            )])]
        },
        Expect::Fails(&["configs/h", "hard link"]),
    );
    case(
        "hardlink-dotdot",
        |_| {
            vec![with(vec![HardLink(
                "configs/h".into(),
                "../../outside/victim".into(),
            )])]
        },
        Expect::Fails(&["configs/h", "outside the image"]),
    );
    case(
        "hardlink-through-symlink",
        |a| {
            vec![with(vec![
                Symlink("configs/evil".into(), a.out()),
                HardLink("configs/h".into(), "configs/evil/victim".into()),
            ])]
        },
        Expect::Fails(&["configs/h", "hard link"]),
    );
}

#[test]
fn dotdot_and_absolute_names() {
    case(
        "dotdot",
        |_| {
            vec![with(vec![File(
                "../../outside/victim".into(),
                b"x".to_vec(),
            )])]
        },
        Expect::Fails(&["../../outside/victim", "outside the image"]),
    );
    case(
        "absolute",
        |a| {
            vec![with(vec![
                File(format!("{}/victim", a.out()), b"x".to_vec()),
                File("/usr/share/extra.txt".into(), b"x".to_vec()),
            ])]
        },
        Expect::Renders,
    );
}

#[test]
fn symlink_loops_fail_naming_the_entry() {
    case(
        "loop",
        |_| {
            vec![with(vec![
                Symlink("configs/l1".into(), "l2".into()),
                Symlink("configs/l2".into(), "l1".into()),
                File("configs/l1/x".into(), b"x".to_vec()),
            ])]
        },
        Expect::Fails(&["configs/l1/x", "symbolic links"]),
    );
}

#[test]
fn whiteouts_of_the_root() {
    case(
        "root-opaque",
        |_| vec![base(), vec![File(".wh..wh..opq".into(), vec![])]],
        Expect::NoHarm,
    );
    case(
        "root-dot",
        |_| vec![base(), vec![File("configs/.wh..".into(), vec![])]],
        Expect::Fails(&["configs/.wh.."]),
    );
    case(
        "root-name",
        |_| vec![base(), vec![File("./.wh.configs".into(), vec![])]],
        Expect::NoHarm,
    );
}

#[test]
fn very_long_paths() {
    case(
        "deep",
        |_| {
            let deep = vec!["d".repeat(200); 30].join("/");
            vec![with(vec![File(format!("configs/{deep}/x"), b"x".to_vec())])]
        },
        // Unpacked (each name is resolved from its directory's handle); the catalog reader
        // may then refuse a path past PATH_MAX.
        Expect::NoHarm,
    );
    case(
        "long-name",
        |_| {
            vec![with(vec![File(
                format!("configs/{}", "n".repeat(300)),
                b"x".to_vec(),
            )])]
        },
        Expect::Fails(&["configs/nnnn"]),
    );
}

#[test]
fn catalog_files_linked_out_of_the_image_are_not_read() {
    case(
        "read-out",
        |a| {
            vec![with(vec![
                Symlink(
                    "configs/p/x.json".into(),
                    format!("{}/secret.json", a.out()),
                ),
                Symlink(
                    "configs/p/y.json".into(),
                    "../../../../../../../outside/secret.json".into(),
                ),
                Symlink("configs/dot".into(), ".".into()),
                Symlink(
                    "configs/p/z.json".into(),
                    "../dot/../../../outside/secret.json".into(),
                ),
            ])]
        },
        Expect::Renders,
    );
}

/// The library's unpacker, straight: devices, FIFOs and set-id bits are not created, and every
/// link it writes resolves inside the root when the host follows it.
#[test]
fn unpacked_trees_hold_no_devices_setid_bits_or_links_out() {
    use olm_bundler::image::blob::Blob;
    use std::os::unix::fs::PermissionsExt as _;
    let area = Area::new();
    let root = area.top.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let tar = crafted::tar(&[
        Fifo("fifo".into()),
        CharDevice("null".into()),
        FileMode("suid".into(), b"x".to_vec(), 0o4755),
        Symlink("abs".into(), area.out()),
        Symlink("etc/rel".into(), "../../../../..".into()),
        Symlink("x".into(), ".".into()),
        Symlink("chain".into(), "x/../../../outside".into()),
    ]);
    let blob = Blob::in_memory(
        "application/vnd.oci.image.layer.v1.tar",
        crafted::sha256(&tar),
        bytes::Bytes::from(tar),
    );
    olm_bundler::image::unpack::apply_layer(&root, &blob).unwrap();
    assert!(!root.join("fifo").exists() && !root.join("null").exists());
    let mode = std::fs::metadata(root.join("suid"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o7777, 0o755);
    for link in ["abs", "etc/rel", "x", "chain"] {
        let target = std::fs::read_link(root.join(link)).unwrap();
        assert!(target.is_relative(), "{link} -> {target:?}");
        assert!(!target.starts_with("../.."), "{link} -> {target:?}");
        // Followed by the host: inside the root, or nowhere.
        if let Ok(real) = std::fs::canonicalize(root.join(link)) {
            assert!(real.starts_with(&root), "{link} leads to {real:?}");
        }
    }
}

/// A layout whose manifest is valid JSON padded to 64 MiB: refused before it is parsed, in
/// well under a second, naming the reference, the size and the limit.
#[test]
fn oversized_documents_are_refused_quickly() {
    let area = Area::new();
    let layout = area.top.join("layout");
    crafted::layout(&layout, "t", &[crafted::tar(&base())], &[CONFIGS_LABEL]);
    let mut padded = br#"{"schemaVersion":2,"layers":[]}"#.to_vec();
    padded.resize(64 << 20, b' ');
    let digest = crafted::blob(&layout, &padded);
    crafted::manifest_index(
        &layout,
        "big",
        &digest,
        padded.len(),
        "application/vnd.oci.image.manifest.v1+json",
    );
    let started = Instant::now();
    let (code, err) = area.olm(&[
        "catalog",
        "render",
        &format!("oci:{}:big", layout.display()),
    ]);
    let took = started.elapsed();
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(digest.trim_start_matches("sha256:")), "{err}");
    assert!(
        err.contains("67108864 bytes") && err.contains("4 MiB"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "took {took:?}");

    // A config over 8 MiB: its descriptor's size is enough to refuse it.
    let layout = area.top.join("layout2");
    crafted::layout(&layout, "t", &[crafted::tar(&base())], &[CONFIGS_LABEL]);
    let mut config = br#"{"architecture":"amd64","os":"linux"}"#.to_vec();
    config.resize(9 << 20, b' ');
    let config_digest = crafted::blob(&layout, &config);
    let manifest = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": config_digest, "size": config.len()},
        "layers": [],
    }))
    .unwrap();
    let digest = crafted::blob(&layout, &manifest);
    crafted::manifest_index(
        &layout,
        "t",
        &digest,
        manifest.len(),
        "application/vnd.oci.image.manifest.v1+json",
    );
    let (code, err) = area.olm(&["catalog", "render", &format!("oci:{}:t", layout.display())]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&config_digest) && err.contains("8 MiB"),
        "{err}"
    );

    // An index that fans out to 5000 manifests.
    let layout = area.top.join("layout3");
    crafted::layout(&layout, "t", &[crafted::tar(&base())], &[CONFIGS_LABEL]);
    let entries: Vec<serde_json::Value> = (0..5000)
        .map(|i| {
            serde_json::json!({"mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": format!("sha256:{i:064x}"), "size": 1,
                "platform": {"os": "linux", "architecture": format!("a{i}")}})
        })
        .collect();
    let index = serde_json::to_vec(&serde_json::json!({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": entries,
    }))
    .unwrap();
    let digest = crafted::blob(&layout, &index);
    crafted::manifest_index(
        &layout,
        "t",
        &digest,
        index.len(),
        "application/vnd.oci.image.index.v1+json",
    );
    let (code, err) = area.olm(&[
        "image",
        "copy",
        &format!("oci:{}:t", layout.display()),
        &format!("oci:{}:t", area.top.join("copy").display()),
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("5000") && err.contains("4096"), "{err}");
}

#[path = "support/confinement.rs"]
mod confinement;

/// The fuzz target's seeds, replayed with its confinement check (the fuzzer itself needs a
/// nightly toolchain: `cd fuzz && cargo +nightly fuzz run unpack_layer seeds/unpack_layer`).
#[test]
fn the_unpack_fuzz_seeds_stay_confined() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/unpack_layer");
    let mut n = 0;
    for e in std::fs::read_dir(&seeds).unwrap() {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        confinement::check_two_layers(&data);
        n += 1;
    }
    assert!(n >= 10, "{n} seeds in {}", seeds.display());
}

/// A layout's documents are read with the bound in force, not only a size looked up first:
/// `index.json` linked to `/dev/zero` (no size, no end) and a FIFO (a read that blocks) are
/// refused at once, naming the file.
#[test]
fn layout_documents_that_never_end_are_refused() {
    let area = Area::new();
    for (name, make) in [
        (
            "zero",
            Box::new(|p: &Path| std::os::unix::fs::symlink("/dev/zero", p).unwrap())
                as Box<dyn Fn(&Path)>,
        ),
        (
            "fifo",
            Box::new(|p: &Path| {
                let ok = Command::new("mkfifo").arg(p).status().unwrap().success();
                assert!(ok, "mkfifo {}", p.display());
            }),
        ),
    ] {
        let layout = area.top.join(format!("layout-{name}"));
        crafted::layout(&layout, "t", &[crafted::tar(&base())], &[CONFIGS_LABEL]);
        std::fs::remove_file(layout.join("index.json")).unwrap();
        make(&layout.join("index.json"));
        let started = Instant::now();
        let (code, err) = area.olm(&["catalog", "render", &format!("oci:{}:t", layout.display())]);
        assert_eq!(code, Some(1), "{name}: {err}");
        assert!(err.contains("index.json"), "{name}: {err}");
        assert!(started.elapsed() < Duration::from_secs(5), "{name}: {err}");
    }
}
