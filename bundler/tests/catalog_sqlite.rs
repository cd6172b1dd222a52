//! Legacy sqlite index databases: `olm catalog render` of opm's own fixture database (and of an
//! index image carrying it) against what opm 1.73 wrote for it, byte for byte;
//! `olm catalog migrate` of it; the database left untouched; clear errors for files that are
//! not index databases.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use olm_bundler::catalog::sqlite::DATABASE_LABEL;
use olm_bundler::image::layer::{LayerBuilder, Owner};
use olm_bundler::image::model::ImageBuilder;
use olm_bundler::image::reference::ImageRef;
use olm_bundler::image::registry::RegistryOptions;
use olm_bundler::image::transfer;
use sha2::{Digest, Sha256};

const DB: &str = "operator-registry/pkg/lib/indexer/testdata/bundles.db";

/// `olm` run in `dir`: exit code, stdout bytes, stderr.
fn olm_in(dir: &Path, args: &[&str]) -> (i32, Vec<u8>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run olm");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!("$ olm {} -> {:?}\n{stderr}", args.join(" "), out.status);
    (out.status.code().unwrap_or(-1), out.stdout, stderr)
}

/// The peer fixtures (opm's test data and what opm 1.73 did with it), beside the checkout.
fn peer_fixtures() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .map(|d| d.join("peer-fixtures"))
        .find(|p| p.join(DB).is_file());
    if found.is_none() {
        prerequisite::missing("shared/data/peer-fixtures beside this checkout");
    }
    found
}

/// What `opm render bundles.db -o json` printed, checked against the recorded digest.
fn opm_render(root: &Path) -> Vec<u8> {
    let cases = std::fs::read_to_string(root.join("expected/cases.jsonl")).unwrap();
    let id = format!("render/{DB}");
    let case: serde_json::Value = cases
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|c| c["id"] == id.as_str())
        .expect("the sqlite render case");
    assert_eq!(case["exit"], 0);
    let gz = std::fs::read(root.join(case["stdout_file"].as_str().unwrap())).unwrap();
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut out)
        .unwrap();
    assert_eq!(
        hex::encode(Sha256::digest(&out)),
        case["stdout_sha256"].as_str().unwrap(),
        "the recorded output is intact"
    );
    out
}

fn digest(path: &Path) -> String {
    hex::encode(Sha256::digest(std::fs::read(path).unwrap()))
}

fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The blobs of a stream of JSON documents, split at the start of each package's
/// `olm.package` blob: `(package, text)` in order.
fn split_by_package(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>();
    let mut start = 0;
    while let Some(blob) = stream.next() {
        let blob = blob.unwrap();
        let end = stream.byte_offset() + 1; // the newline after the blob
        if blob["schema"] == "olm.package" {
            out.push((blob["name"].as_str().unwrap().to_string(), String::new()));
        }
        out.last_mut().unwrap().1.push_str(&text[start..end]);
        start = end;
    }
    out
}

#[test]
fn render_of_the_fixture_database_is_opms_byte_for_byte() {
    let Some(root) = peer_fixtures() else { return };
    let expected = opm_render(&root);
    let db = root.join(DB);
    let (before, files_before) = (digest(&db), listing(db.parent().unwrap()));

    let (code, json, _) = olm_in(&root, &["catalog", "render", DB, "-o", "json"]);
    assert_eq!(code, 0);
    assert!(json == expected, "olm's JSON differs from opm's");

    // YAML: what opm's writer gives for the same blobs, i.e. opm's JSON rendered as YAML.
    let scratch = tempfile::tempdir().unwrap();
    std::fs::write(scratch.path().join("catalog.json"), &expected).unwrap();
    let (code, yaml, _) = olm_in(&root, &["catalog", "render", DB, "-o", "yaml"]);
    assert_eq!(code, 0);
    let from_json = olm_in(
        scratch.path(),
        &["catalog", "render", "catalog.json", "-o", "yaml"],
    );
    assert_eq!(from_json.0, 0);
    assert!(
        yaml == from_json.1,
        "olm's YAML differs from opm's JSON as YAML"
    );
    assert!(yaml.starts_with(b"---\ndefaultChannel: alpha\nicon:\n"));

    // opm migrates the database in place; olm must not touch it.
    assert_eq!(digest(&db), before, "the database file changed");
    assert_eq!(listing(db.parent().unwrap()), files_before);
}

#[test]
fn migrate_writes_opms_catalog_one_file_per_package() {
    let Some(root) = peer_fixtures() else { return };
    let expected = String::from_utf8(opm_render(&root)).unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("catalog");
    let dir_arg = dir.to_str().unwrap();

    let (code, _, stderr) = olm_in(&root, &["catalog", "migrate", DB, dir_arg]);
    assert_eq!(code, 0, "{stderr}");
    let packages = split_by_package(&expected);
    assert_eq!(
        packages.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
        ["etcd", "prometheus", "strimzi-kafka-operator"]
    );
    assert_eq!(
        listing(&dir),
        ["etcd", "prometheus", "strimzi-kafka-operator"]
    );
    for (package, text) in &packages {
        let file = dir.join(package).join("catalog.json");
        assert!(
            std::fs::read_to_string(&file).unwrap() == *text,
            "{} differs from opm's blobs of {package}",
            file.display()
        );
        assert_eq!(listing(&dir.join(package)), ["catalog.json"]);
    }

    // A second run into the same directory is refused, as opm refuses it.
    let (code, _, stderr) = olm_in(&root, &["catalog", "migrate", DB, dir_arg]);
    assert_eq!(code, 1);
    assert!(stderr.contains("must be empty"), "{stderr}");

    // YAML, with the CSV-metadata migration: each file is that package's part of the render.
    let yaml_dir = out.path().join("yaml");
    let level = "bundle-object-to-csv-metadata";
    let args = [
        "catalog",
        "migrate",
        DB,
        yaml_dir.to_str().unwrap(),
        "-o",
        "yaml",
        "--migrate-level",
        level,
    ];
    let (code, _, stderr) = olm_in(&root, &args);
    assert_eq!(code, 0, "{stderr}");
    let (_, rendered, _) = olm_in(
        &root,
        &[
            "catalog",
            "render",
            DB,
            "-o",
            "yaml",
            "--migrate-level",
            level,
        ],
    );
    let mut joined = Vec::new();
    for package in ["etcd", "prometheus", "strimzi-kafka-operator"] {
        joined.extend(std::fs::read(yaml_dir.join(package).join("catalog.yaml")).unwrap());
    }
    assert!(
        joined == rendered,
        "migrate -o yaml differs from render -o yaml"
    );
    let rendered = String::from_utf8(rendered).unwrap();
    // Bundles with an image (etcd's) take olm.csv.metadata; the others keep their manifests.
    assert_eq!(rendered.matches("type: olm.csv.metadata").count(), 3);
    assert!(rendered.contains("type: olm.bundle.object"));

    // A bundle is not a catalog.
    let bundle = "operator-registry/alpha/action/testdata/foo-bundle-v0.1.0";
    let target = out.path().join("from-bundle");
    let (code, _, stderr) = olm_in(
        &root,
        &["catalog", "migrate", bundle, target.to_str().unwrap()],
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("a bundle, not a catalog"), "{stderr}");
    assert!(!target.exists());
}

/// An index image (OCI layout) with the database at `path` and the label naming `label`.
fn index_image(db: &[u8], path: &str, label: &str, layout: &Path) {
    let mut layer = LayerBuilder::new(0);
    layer.file(path, db.to_vec(), 0o644, Owner::Root).unwrap();
    let image = ImageBuilder::new("linux", "amd64", 0)
        .layer(layer.finish().unwrap(), "COPY index.db")
        .label(DATABASE_LABEL, label)
        .build();
    // Into the layout as every image move goes: through the copy engine.
    let dest = ImageRef::parse(&format!("oci:{}:v1", layout.display())).unwrap();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(transfer::store(
            &dest,
            &image.into(),
            &RegistryOptions::default(),
        ))
        .unwrap();
}

#[test]
fn an_index_image_renders_as_its_database() {
    let Some(root) = peer_fixtures() else { return };
    let expected = opm_render(&root);
    let db = std::fs::read(root.join(DB)).unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let layout = scratch.path().join("index");
    index_image(&db, "database/index.db", "/database/index.db", &layout);
    let reference = format!("oci:{}:v1", layout.display());

    let (code, json, _) = olm_in(&root, &["catalog", "render", &reference]);
    assert_eq!(code, 0);
    assert!(
        json == expected,
        "the image renders differently from opm's database render"
    );

    let out = scratch.path().join("migrated");
    let (code, _, stderr) = olm_in(
        &root,
        &["catalog", "migrate", &reference, out.to_str().unwrap()],
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        listing(&out),
        ["etcd", "prometheus", "strimzi-kafka-operator"]
    );

    // A database that is no index: named by the image and its path there.
    let other = scratch.path().join("other.db");
    let conn = rusqlite::Connection::open(&other).unwrap();
    conn.execute_batch("CREATE TABLE notes (body TEXT);")
        .unwrap();
    drop(conn);
    let not_index = scratch.path().join("not-index");
    let other = std::fs::read(&other).unwrap();
    index_image(
        &other,
        "database/index.db",
        "/database/index.db",
        &not_index,
    );
    let reference = format!("oci:{}:v1", not_index.display());
    let (code, _, stderr) = olm_in(&root, &["catalog", "render", &reference]);
    assert_eq!(code, 1);
    let named =
        format!("{reference} /database/index.db: an sqlite database but not an operator index");
    assert!(stderr.contains(&named), "{stderr}");

    // A label naming a file the image does not hold.
    let broken = scratch.path().join("broken");
    index_image(&db, "database/index.db", "/database/other.db", &broken);
    let reference = format!("oci:{}:v1", broken.display());
    let (code, _, stderr) = olm_in(&root, &["catalog", "render", &reference]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(DATABASE_LABEL) && stderr.contains("/database/other.db"),
        "{stderr}"
    );
}

#[test]
fn files_that_are_not_index_databases_are_named_with_the_reason() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let render = |file: &str| {
        let (code, out, stderr) = olm_in(dir, &["catalog", "render", file]);
        assert_eq!(code, 1, "{file}: {}", String::from_utf8_lossy(&out));
        stderr
    };

    // SQLite's header, then no database.
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend([0x5a; 4096]);
    std::fs::write(dir.join("broken.db"), &bytes).unwrap();
    let stderr = render("broken.db");
    assert!(
        stderr.contains("broken.db: has the header of an sqlite database")
            && stderr.contains("caused by: file is not a database"),
        "{stderr}"
    );

    // A database, but not an index.
    let conn = rusqlite::Connection::open(dir.join("other.db")).unwrap();
    conn.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hi');")
        .unwrap();
    drop(conn);
    let stderr = render("other.db");
    assert!(
        stderr.contains("other.db") && stderr.contains("not an operator index"),
        "{stderr}"
    );

    // An index from before schema version 5.
    let conn = rusqlite::Connection::open(dir.join("old.db")).unwrap();
    conn.execute_batch(
        "CREATE TABLE package (name TEXT PRIMARY KEY, default_channel TEXT);
         CREATE TABLE channel (name TEXT, package_name TEXT, head_operatorbundle_name TEXT);
         CREATE TABLE channel_entry (entry_id INTEGER PRIMARY KEY, channel_name TEXT, package_name TEXT, operatorbundle_name TEXT, replaces INTEGER, depth INTEGER);
         CREATE TABLE operatorbundle (name TEXT PRIMARY KEY, csv TEXT, bundle TEXT);
         CREATE TABLE related_image (image TEXT, operatorbundle_name TEXT);
         CREATE TABLE schema_migrations (version bigint NOT NULL);
         INSERT INTO schema_migrations VALUES (3);",
    )
    .unwrap();
    drop(conn);
    let stderr = render("old.db");
    assert!(
        stderr.contains("old.db") && stderr.contains("schema version 3"),
        "{stderr}"
    );
}
