//! Paths named by outside data: a catalog image's configs (or database) label that climbs out
//! of the image, a mirror archive whose `olm-mirror.json` names a catalog directory outside
//! the archive or that holds a link out. Each runs through the commands that read it (`olm
//! catalog render`, `site`, `serve --http-port`, `mirror --from-archive` and `--to-archive`,
//! deploy's catalog pull) with a canary directory outside the scratch directory holding a
//! catalog of package `secret-marker`: nothing of it may be printed, served or pushed, nothing of
//! it may change, and the error names the image or archive, the field and the value. Labels
//! written as opm writes them (`/configs`, `configs/`, `./configs`) still read.

#[path = "support/crafted.rs"]
mod crafted;
#[path = "support/serve.rs"]
mod serve;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crafted::Entry::{self, *};
use olm_bundler::confined::{PathRefusal, RelPath, Tree};

const CONFIGS: &str = "operators.operatorframework.io.index.configs.v1";
const DATABASE: &str = "operators.operatorframework.io.index.database.v1";

fn catalog(package: &str) -> String {
    format!(
        r#"{{"schema":"olm.package","name":"{package}","defaultChannel":"stable"}}
{{"schema":"olm.channel","name":"stable","package":"{package}","entries":[{{"name":"{package}.v1.0.0"}}]}}
{{"schema":"olm.bundle","name":"{package}.v1.0.0","package":"{package}","image":"127.0.0.1:9/{package}:v1","properties":[{{"type":"olm.package","value":{{"packageName":"{package}","version":"1.0.0"}}}}]}}
"#
    )
}

/// A test area: `outside/` (the canary: a catalog of package `secret-marker`),
/// `scratch/` (olm's TMPDIR) and the crafted inputs beside them.
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
        std::fs::create_dir_all(outside.join("secret")).unwrap();
        // A catalog that loads: a read of it would render, serve or push it.
        std::fs::write(
            outside.join("secret/catalog.json"),
            catalog("secret-marker"),
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

    /// `../` enough times to climb from anywhere under the system's roots, then the canary.
    fn climbing(&self) -> String {
        format!("/{}{}", "../".repeat(24), self.outside.display())
    }

    /// Everything under the canary directory: path, kind and content.
    fn snapshot(&self) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        walk(&self.outside, &self.outside, &mut out);
        out
    }

    /// A catalog image in an OCI layout named `name`: `/configs` holds package `p`, the
    /// config carries `labels`. Its `oci:` reference.
    fn image(&self, name: &str, labels: &[(&str, &str)], extra: Vec<Entry>) -> String {
        let mut entries = vec![
            Dir("configs".into()),
            Dir("configs/p".into()),
            File("configs/p/catalog.json".into(), catalog("p").into_bytes()),
        ];
        entries.extend(extra);
        let layout = self.top.join(name);
        crafted::layout(&layout, "t", &[crafted::tar(&entries)], labels);
        format!("oci:{}:t", layout.display())
    }

    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
        c.env("TMPDIR", &self.scratch)
            .env("OLM_BLOB_LOCATIONS", "off")
            .env("HOME", &self.top)
            .env("XDG_CACHE_HOME", self.top.join("cache"));
        c
    }

    fn olm(&self, args: &[&str]) -> Output {
        self.command().args(args).output().expect("run olm")
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

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Exit 1, no panic, the canary's catalog nowhere in the output, and every word of `names` in
/// the error.
fn refused(what: &str, out: &Output, names: &[&str]) {
    let (stdout, stderr) = text(out);
    assert_eq!(out.status.code(), Some(1), "{what}: {stdout}\n{stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    for leak in [&stdout, &stderr] {
        assert!(
            !leak.contains("secret-marker.v1.0.0"),
            "{what}: read {leak}"
        );
    }
    for n in names {
        assert!(stderr.contains(n), "{what}: {n:?} not in {stderr}");
    }
}

/// Labels that climb out of the image: render, site, serve, validate and list refuse them
/// with the image, the label and its value named, and read nothing of the canary.
#[test]
fn climbing_configs_labels_are_refused_by_every_reader() {
    let area = Area::new();
    let before = area.snapshot();
    let climbing = area.climbing();
    let relative = format!("../../../../../../../../../../..{}", area.outside.display());
    let inside_then_out = format!("/configs/../../../..{}", area.outside.display());
    for (n, label) in [
        climbing.as_str(),
        relative.as_str(),
        inside_then_out.as_str(),
        "/../../../../etc",
        "/configs\0/x",
    ]
    .into_iter()
    .enumerate()
    {
        let image = area.image(&format!("climb{n}"), &[(CONFIGS, label)], vec![]);
        let shown = format!("{label:?}");
        let names = [image.as_str(), CONFIGS, shown.as_str(), "is refused"];
        let out = area.olm(&["catalog", "render", &image, "-o", "json"]);
        refused(&format!("render {label}"), &out, &names);
        let site = area.top.join(format!("site{n}"));
        let out = area.olm(&["catalog", "site", &image, "-o", site.to_str().unwrap()]);
        refused(&format!("site {label}"), &out, &names);
        assert!(!site.exists(), "site {label}: pages written");
        let out = area.olm(&["catalog", "list", "packages", &image]);
        refused(&format!("list {label}"), &out, &names);
        let filtered = area.top.join(format!("filtered{n}"));
        let out = area.olm(&[
            "catalog",
            "filter",
            &image,
            "-o",
            filtered.to_str().unwrap(),
        ]);
        refused(&format!("filter {label}"), &out, &names);
        assert!(!filtered.exists(), "filter {label}: written");
        let (grpc, http) = (serve::free_port(), serve::free_port());
        let out = area.olm(&[
            "catalog",
            "serve",
            &image,
            "--host",
            "127.0.0.1",
            "--port",
            &grpc.to_string(),
            "--http-port",
            &http.to_string(),
            "-t",
            "/dev/null",
        ]);
        refused(&format!("serve {label}"), &out, &names);
    }
    // A database label that climbs out is refused as well (opm looks for it first).
    let db = format!("{climbing}/secret/catalog.json");
    let image = area.image("db", &[(DATABASE, &db)], vec![]);
    let out = area.olm(&["catalog", "render", &image]);
    refused("database", &out, &[image.as_str(), DATABASE, "is refused"]);
    assert_eq!(before, area.snapshot(), "the canary changed");
    let left: Vec<_> = std::fs::read_dir(&area.scratch).unwrap().collect();
    assert!(left.is_empty(), "left in the scratch directory: {left:?}");
}

/// What opm joins onto the image's root and finds, `olm` finds too: the label with or
/// without its leading `/`, a trailing `/`, `./`, doubled slashes; a label naming a
/// directory the image lacks is an error naming it.
#[test]
fn configs_labels_as_images_write_them_still_read() {
    let area = Area::new();
    for (n, label) in [
        "/configs",
        "configs",
        "configs/",
        "./configs",
        "//configs//",
        "/configs/.",
    ]
    .into_iter()
    .enumerate()
    {
        let image = area.image(&format!("ok{n}"), &[(CONFIGS, label)], vec![]);
        let out = area.olm(&["catalog", "render", &image, "-o", "json"]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{label}: {stderr}");
        assert!(stdout.contains("\"p.v1.0.0\""), "{label}: {stdout}");
    }
    let image = area.image("missing", &[(CONFIGS, "/nowhere")], vec![]);
    let out = area.olm(&["catalog", "render", &image]);
    refused(
        "missing",
        &out,
        &[image.as_str(), "\"/nowhere\"", "does not contain"],
    );
}

/// Deploy's catalog pull (what `olm upgrade --bundle` adds the new bundle to) reads the label
/// the same way, offline from a layout.
#[test]
fn deploys_catalog_pull_refuses_a_climbing_label() {
    let area = Area::new();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let opts = olm_bundler::image::registry::RegistryOptions::default();
    let image = area.image("deploy", &[(CONFIGS, &area.climbing())], vec![]);
    let e = rt
        .block_on(olm_bundler::deploy::bundle_catalog::pull_catalog(
            &image, &opts,
        ))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains(&image) && e.contains(CONFIGS) && e.contains("is refused"),
        "{e}"
    );
    assert!(!e.contains("secret-marker.v1.0.0"), "{e}");
    let image = area.image("deploy-ok", &[(CONFIGS, "configs/")], vec![]);
    let cfg = rt
        .block_on(olm_bundler::deploy::bundle_catalog::pull_catalog(
            &image, &opts,
        ))
        .unwrap();
    assert_eq!(cfg.packages[0].name, "p");
}

/// A served image whose catalog links out (absolute, climbing, through a linked directory):
/// the unpacker keeps every link inside, the cache builder (a child process reading the
/// image confined) and catalogd's API serve the image's own catalog, and nothing of the
/// canary reaches the HTTP API or the browser's pages.
#[test]
fn a_served_image_serves_nothing_of_the_host() {
    let area = Area::new();
    let before = area.snapshot();
    let secret = area.outside.join("secret");
    let image = area.image(
        "served",
        &[(CONFIGS, "/configs")],
        vec![
            Symlink("configs/abs".into(), secret.display().to_string()),
            Symlink(
                "configs/p/up.json".into(),
                format!("../../../../../../../..{}/catalog.json", secret.display()),
            ),
            Symlink("configs/dir".into(), format!("/{}", "../".repeat(12))),
        ],
    );
    let (grpc, http) = (serve::free_port(), serve::free_port());
    let child = area
        .command()
        .args(["catalog", "serve", &image, "--host", "127.0.0.1"])
        .args([
            "--port",
            &grpc.to_string(),
            "--http-port",
            &http.to_string(),
        ])
        .args(["--catalog-name", "c", "-t", "/dev/null"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _server = serve::Server(child);
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::net::TcpStream::connect(("127.0.0.1", http)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP port never came up");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, all) = serve::http_get(http, "/catalogs/c/api/v1/all");
    assert_eq!(status, 200, "{all}");
    assert!(all.contains("\"p.v1.0.0\""), "{all}");
    assert!(
        !all.contains("secret-marker"),
        "served the host's catalog: {all}"
    );
    let (_, page) = serve::http_get(http, "/");
    assert!(!page.contains("secret-marker"), "{page}");
    // The pages `olm catalog site` writes from the same image.
    let site = area.top.join("site");
    let out = area.olm(&["catalog", "site", &image, "-o", site.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out).1);
    let mut pages = BTreeMap::new();
    walk(&site, &site, &mut pages);
    assert!(pages.keys().any(|p| p.to_string_lossy().contains('p')));
    for (page, body) in pages {
        assert!(!body.contains("secret-marker"), "{page:?}");
    }
    assert_eq!(before, area.snapshot(), "the canary changed");
}

/// An archive `--to-archive` wrote, offline: the bundle's image is not reachable, so
/// `--continue-on-error` writes the catalog without it.
fn archive(area: &Area, name: &str) -> (PathBuf, PathBuf) {
    let source = area.top.join(format!("{name}-cat"));
    std::fs::create_dir_all(source.join("p")).unwrap();
    std::fs::write(source.join("p/catalog.json"), catalog("p")).unwrap();
    let dir = area.top.join(name);
    let out = to_archive(area, &source, &dir);
    let (_, stderr) = text(&out);
    assert!(dir.join("catalogs/0/p/catalog.json").is_file(), "{stderr}");
    (source, dir)
}

fn to_archive(area: &Area, source: &Path, dir: &Path) -> Output {
    area.command()
        .args(["catalog", "mirror"])
        .arg(source)
        .arg("--to-archive")
        .arg(dir)
        .args(["--full", "--continue-on-error", "--retries", "0"])
        .output()
        .unwrap()
}

fn from_archive(area: &Area, dir: &Path) -> Output {
    area.command()
        .args(["catalog", "mirror", "--from-archive"])
        .arg(dir)
        .args(["--to", "127.0.0.1:9/mirror", "--retries", "0", "--output"])
        .arg(area.top.join("out"))
        .output()
        .unwrap()
}

/// Rewrites the archive's `olm-mirror.json` with `catalogDir` set to `value`.
fn set_catalog_dir(dir: &Path, value: &str) {
    let path = dir.join("olm-mirror.json");
    let mut m: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    m["catalogs"][0]["catalogDir"] = value.into();
    std::fs::write(&path, serde_json::to_vec_pretty(&m).unwrap()).unwrap();
}

/// `catalogDir` naming a directory outside the archive (climbing, absolute): `--from-archive`
/// refuses the archive before anything is read or pushed, and `--to-archive` before anything
/// is copied, written or deleted; the error names the archive's manifest, the field and the
/// value.
#[test]
fn archive_catalog_dirs_outside_the_archive_are_refused() {
    let area = Area::new();
    let (source, dir) = archive(&area, "usb");
    let before = area.snapshot();
    let climbing = "../outside/secret".to_string();
    let absolute = area.outside.join("secret").display().to_string();
    let deep = "catalogs/../../outside/secret".to_string();
    for value in [
        climbing.as_str(),
        absolute.as_str(),
        deep.as_str(),
        "",
        "catalogs//0",
    ] {
        set_catalog_dir(&dir, value);
        let shown = format!("catalogDir {value:?}");
        let names = ["olm-mirror.json", shown.as_str(), "is refused"];
        refused(&format!("from {value}"), &from_archive(&area, &dir), &names);
        refused(
            &format!("to {value}"),
            &to_archive(&area, &source, &dir),
            &names,
        );
        assert_eq!(before, area.snapshot(), "{value}: the canary changed");
    }
    // Put right, the archive reads again (up to the unreachable registry).
    set_catalog_dir(&dir, "catalogs/0");
    let (_, stderr) = text(&from_archive(&area, &dir));
    assert!(!stderr.contains("is refused"), "{stderr}");
    assert!(stderr.contains("127.0.0.1:9"), "{stderr}");
}

/// An archive holding a link (its catalog directory, `catalogs`, a blob directory) is refused
/// by both directions, naming the link; `--to-archive` deletes and replaces nothing outside.
#[test]
fn archives_holding_links_are_refused_and_nothing_outside_changes() {
    let area = Area::new();
    let (source, dir) = archive(&area, "usb");
    let before = area.snapshot();
    for (at, target) in [
        ("catalogs/0", area.outside.join("secret")),
        ("catalogs", area.outside.clone()),
        ("images", area.outside.clone()),
    ] {
        let link = dir.join(at);
        let saved = dir.join(".saved");
        std::fs::rename(&link, &saved).unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let names = [at, "a symbolic link in a mirror archive"];
        refused(&format!("from {at}"), &from_archive(&area, &dir), &names);
        refused(
            &format!("to {at}"),
            &to_archive(&area, &source, &dir),
            &names,
        );
        assert_eq!(before, area.snapshot(), "{at}: the canary changed");
        std::fs::remove_file(&link).unwrap();
        std::fs::rename(&saved, &link).unwrap();
    }
    // A second run into the intact archive replaces its own catalog directory only.
    std::fs::write(
        source.join("p/catalog.json"),
        catalog("q").replace("\"q\"", "\"p\""),
    )
    .unwrap();
    let out = to_archive(&area, &source, &dir);
    let written = std::fs::read_to_string(dir.join("catalogs/0/p/catalog.json")).unwrap();
    assert!(written.contains("q.v1.0.0"), "{}", text(&out).1);
    assert_eq!(before, area.snapshot(), "the canary changed");
}

/// The path type, from outside the crate: what each reading accepts.
#[test]
fn the_path_type_accepts_plain_names_only() {
    for ok in [
        "configs",
        "catalogs/0",
        "a/b/c.json",
        ".hidden",
        "..a",
        "a..b",
    ] {
        assert_eq!(RelPath::parse(ok).unwrap().to_string(), ok);
    }
    for (bad, why) in [
        ("", PathRefusal::Empty),
        ("/abs", PathRefusal::Absolute),
        ("../../x", PathRefusal::ParentDir),
        ("a/../b", PathRefusal::ParentDir),
        ("a//b", PathRefusal::EmptyComponent),
        ("a/", PathRefusal::EmptyComponent),
        ("./a", PathRefusal::CurDir),
        ("a\0b", PathRefusal::Nul),
    ] {
        assert_eq!(RelPath::parse(bad), Err(why), "{bad:?}");
    }
    for (label, inside) in [
        ("/configs", "configs"),
        ("configs/", "configs"),
        ("./configs", "configs"),
        ("/", ""),
        ("/a//b/./c/", "a/b/c"),
    ] {
        assert_eq!(RelPath::in_image(label).unwrap().to_string(), inside);
    }
    for bad in ["/../../../../etc", "../x", "/configs/..", "/a\0"] {
        assert!(RelPath::in_image(bad).is_err(), "{bad:?}");
    }
    // Opened through a confined tree, a link out is refused where a host tree follows it.
    let area = Area::new();
    let root = area.top.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let secret = area.outside.join("secret/catalog.json");
    std::os::unix::fs::symlink(secret, root.join("v")).unwrap();
    let v = RelPath::parse("v").unwrap();
    assert!(Tree::confined(&root).unwrap().read(&v).is_err());
    assert!(Tree::host(&root).read(&v).is_ok());
}

#[path = "support/rel_path_check.rs"]
mod rel_path_check;

/// The path parser's fuzz seeds, replayed with the fuzz target's checks (the fuzzer itself
/// needs a nightly toolchain: `cd fuzz && cargo +nightly fuzz run rel_path seeds/rel_path`).
#[test]
fn the_rel_path_fuzz_seeds_hold() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/rel_path");
    let mut n = 0;
    for e in std::fs::read_dir(&seeds).unwrap() {
        rel_path_check::check(&std::fs::read(e.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= 10, "{n} seeds in {}", seeds.display());
}
