//! The fast block reader (`yaml::read_stream`, `yaml::parse_value`) gives exactly the value
//! (or error) of the port of Go's decoder (`yaml::go`) for every YAML document we have: the
//! shared real catalogs and bundles, the project's own generated files, the test fixtures and a
//! synthetic catalog.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};

use olm_bundler::catalog::load;

#[path = "support/synth.rs"]
mod synth;
use olm_bundler::yaml;
use serde_json::Value;

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            yaml_files(&p, out);
        } else if p
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        {
            out.push(p);
        }
    }
}

/// Compares both readers on every document of `file`; returns the number of documents.
fn compare(file: &Path) -> usize {
    let bytes = std::fs::read(file).unwrap();
    let (fast, fast_err) = yaml::read_stream(file, &bytes);
    let (port, port_err) = yaml::go::decode_stream(&bytes, yaml::go::JSON_WINDOW);
    let port: Vec<Value> = port.into_iter().map(|d| d.value).collect();
    assert_eq!(fast.len(), port.len(), "{}", file.display());
    for (i, (a, b)) in fast.iter().zip(&port).enumerate() {
        assert!(a == b, "{}: document {i}: values differ", file.display());
    }
    assert_eq!(
        fast_err.map(|e| e.go_message().to_string()),
        port_err.map(|e| e.message),
        "{}",
        file.display()
    );
    fast.len()
}

#[test]
fn every_yaml_document_reads_as_go_reads_it() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        manifest.join("../bundle"),
        manifest.join("../catalog"),
        manifest.join("../deploy"),
        manifest.join("../operator/olm"),
        manifest.join("tests/fixtures"),
        manifest.join("../../shared/data"),
        manifest.join("../../../shared/data"),
    ] {
        yaml_files(&dir, &mut files);
    }
    let synthetic = tempfile::tempdir().unwrap();
    let shape = synth::Shape {
        packages: 6,
        bundles_per_package: 10,
    };
    synth::write(synthetic.path(), &shape, synth::Syntax::Yaml).unwrap();
    yaml_files(synthetic.path(), &mut files);
    let docs: usize = files.iter().map(|f| compare(f)).sum();
    assert!(docs > 100, "only {docs} documents compared");
}

/// Long runs of comments (a serde-saphyr limit once made them fail) read as Go reads them,
/// whichever reader takes them.
#[test]
fn long_comment_runs_read_as_go_reads_them() {
    for n in [10, 20, 95, 96, 97, 200] {
        let doc = format!("a:\n{}  b: 1\nc: 2\n", "  # note\n".repeat(n));
        let fast = yaml::parse_value(Path::new("c.yaml"), &doc).unwrap();
        let go = yaml::go::unmarshal(doc.as_bytes()).unwrap().value;
        assert_eq!(fast, go, "{n} comments");
        assert_eq!(fast["a"]["b"], 1);
    }
}

/// The shared real bundles, or `None` (skipped visibly; a failure under CI).
fn shared_bundles() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = manifest
        .ancestors()
        .map(|a| a.join("shared/data/bundles"))
        .find(|p| p.is_dir());
    if found.is_none() {
        prerequisite::missing(&format!("shared data beside {}", manifest.display()));
    }
    found
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A real community bundle whose CRD schema repeats `type` in one mapping loads and
/// validates as operator-framework's loaders (go-yaml v2) take it: the last value wins. Made
/// here from a real shared bundle by repeating one `type` line, with the other value last.
#[test]
fn a_crd_that_repeats_a_key_loads_and_validates_like_olm() {
    use olm_bundler::bundle::load::BundleDir;
    use olm_bundler::bundle::validate::{Options, Suite, validate_dir};
    let Some(bundles) = shared_bundles() else {
        return;
    };
    let src = bundles.join("certified-operators/operators/leaksignal-operator/1.6.1");
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&src, dir.path());
    let crd = dir.path().join("manifests/leaksignal.crd.yaml");
    let text = std::fs::read_to_string(&crd).unwrap();
    let anchor = "                proxyVersion:\n                  type: string\n";
    assert!(text.contains(anchor), "the shared CRD changed");
    let repeated = text.replacen(
        anchor,
        &format!("{anchor}                  type: integer\n                  type: string\n"),
        1,
    );
    std::fs::write(&crd, repeated).unwrap();

    let opts = Options {
        suites: Suite::ALL.into_iter().collect(),
        ..Default::default()
    };
    let before = validate_dir(&src, &opts).unwrap();
    let after = validate_dir(dir.path(), &opts).unwrap();
    assert_eq!(after.errors().count(), before.errors().count());
    assert_eq!(after.errors().count(), 0);

    let loaded = BundleDir::load(dir.path()).unwrap();
    let object = &loaded
        .manifests
        .iter()
        .find(|m| m.file.ends_with("leaksignal.crd.yaml"))
        .unwrap()
        .object;
    let schema = &object["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    let field = &schema["properties"]["spec"]["properties"]["proxyVersion"];
    assert_eq!(field["type"], "string", "{field}");
}

/// The shape of issue 40, from a vendor's CRD written by hand: the continuation lines of a
/// multi-line single-quoted description sit at the indentation of its key. go-yaml v2 reads
/// them (operator-framework/api validates the bundle, opm renders it); so must `olm`. Made
/// here from a real shared bundle by adding such a property to one CRD.
#[test]
fn a_crd_with_quoted_continuations_at_key_indentation_validates_and_renders_like_olm() {
    use olm_bundler::bundle::load::BundleDir;
    use olm_bundler::bundle::validate::{Options, Suite, validate_dir};
    use olm_bundler::catalog::render::{Form, render_bundle_dir};
    let Some(bundles) = shared_bundles() else {
        return;
    };
    let src = bundles.join("certified-operators/operators/leaksignal-operator/1.6.1");
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&src, dir.path());
    let crd = dir.path().join("manifests/leaksignal.crd.yaml");
    let text = std::fs::read_to_string(&crd).unwrap();
    let anchor = "          properties:\n            spec:\n";
    assert!(text.contains(anchor), "the shared CRD changed");
    let shape = "            apiVersion:\n              description: 'APIVersion defines the versioned schema of this representation\n              of an object. Servers should convert recognized schemas to the latest\n              internal value, and may reject unrecognized values.'\n              type: string\n";
    let edited = text.replacen(
        anchor,
        &format!("          properties:\n{shape}            spec:\n"),
        1,
    );
    std::fs::write(&crd, edited).unwrap();

    // Validates as the original does (operator-framework/api passes both).
    let opts = Options {
        suites: Suite::ALL.into_iter().collect(),
        ..Default::default()
    };
    let before = validate_dir(&src, &opts).unwrap();
    let after = validate_dir(dir.path(), &opts).unwrap();
    assert_eq!(after.errors().count(), 0, "{after:?}");
    assert_eq!(after.errors().count(), before.errors().count());

    // Loads with the text go-yaml reads: the lines folded into one.
    let loaded = BundleDir::load(dir.path()).unwrap();
    let object = &loaded
        .manifests
        .iter()
        .find(|m| m.file.ends_with("leaksignal.crd.yaml"))
        .unwrap()
        .object;
    let schema = &object["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
    assert_eq!(
        schema["properties"]["apiVersion"],
        serde_json::json!({
            "description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values.",
            "type": "string"
        })
    );

    // Renders with the CRD among the bundle's objects, as opm renders it.
    let original = render_bundle_dir(&src, "", Form::BundleObjects).unwrap();
    let rendered = render_bundle_dir(dir.path(), "", Form::BundleObjects).unwrap();
    let objects = |b: &olm_bundler::catalog::declcfg::Bundle| {
        olm_bundler::catalog::property::bundle_objects(&b.properties)
    };
    assert_eq!(objects(&rendered).len(), objects(&original).len());
    let crd_object = objects(&rendered).into_iter().find(|json| {
        json.contains(
            "APIVersion defines the versioned schema of this representation of an object.",
        )
    });
    assert!(
        crd_object.is_some(),
        "the CRD is not among the rendered objects"
    );
}

/// A broken manifest still stops the load with the file and line.
#[test]
fn a_broken_manifest_still_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crd.yaml");
    std::fs::write(&file, "kind: A\nkind: B\nspec: [1\n").unwrap();
    let err = yaml::load_documents(&file).unwrap_err();
    let msg = err.to_string();
    assert!(msg.starts_with(&format!("{}:", file.display())), "{msg}");
    assert!(
        matches!(err, yaml::YamlError::Syntax { line: Some(_), .. }),
        "{err:?}"
    );
}

/// A catalog file with a byte order mark, CRLF line breaks and a repeated key loads as opm
/// loads it (go-yaml v2 skips the mark and normalises line breaks; apimachinery's YAMLReader
/// trims `---\r`), with blobs at their lines.
#[test]
fn catalog_with_bom_crlf_and_a_repeated_key() {
    let text = "\u{feff}---\r\nschema: olm.package\r\nname: a\r\ndefaultChannel: s\r\n---\r\nschema: olm.channel\r\nname: s\r\npackage: a\r\npackage: a\r\nentries:\r\n- name: a.v1\r\n";
    let cfg = load::load_bytes(Path::new("c.yaml"), text.as_bytes()).unwrap();
    assert_eq!(cfg.packages[0].name, "a");
    assert_eq!(cfg.packages[0].default_channel, "s");
    assert_eq!(cfg.channels[0].package, "a");
    assert_eq!(cfg.channels[0].entries[0].name, "a.v1");
    assert_eq!(cfg.channels[0].source.line, 6);
}

/// Document separators as apimachinery's YAMLReader finds them: `---` then only spaces or a
/// comment; a JSON catalog behind a byte order mark is still JSON.
#[test]
fn catalog_separators_and_json_behind_a_bom() {
    let text = "schema: olm.package\nname: a\n--- # channels\nschema: olm.channel\nname: s\npackage: a\nentries: []\n---\t\nschema: olm.channel\nname: t\npackage: a\nentries: []\n";
    let cfg = load::load_bytes(Path::new("c.yaml"), text.as_bytes()).unwrap();
    assert_eq!(cfg.channels.len(), 2);
    assert_eq!(cfg.channels[0].source.line, 4);
    let json = "\u{feff}{\"schema\":\"olm.package\",\"name\":\"a\"}\n";
    let cfg = load::load_bytes(Path::new("c.json"), json.as_bytes()).unwrap();
    assert_eq!(cfg.packages[0].name, "a");
}

/// The synthetic benchmark catalogs are valid and the same on every run.
#[test]
fn synthetic_packages_are_valid_and_deterministic() {
    use olm_bundler::catalog::declcfg::DeclarativeConfig;
    use olm_bundler::catalog::validate;
    let shape = synth::Shape {
        packages: 4,
        bundles_per_package: 10,
    };
    let mut all = DeclarativeConfig::default();
    for i in 0..shape.packages {
        let p = synth::package(i, &shape);
        assert_eq!(p.to_json(), synth::package(i, &shape).to_json());
        all.merge(p);
    }
    assert_eq!(all.channels.len(), 6);
    assert_eq!(all.bundles.len(), 40);
    let r = validate::validate(&all);
    assert!(!r.has_errors(), "{}", r.to_text());
    let dir = tempfile::tempdir().unwrap();
    synth::write(dir.path(), &shape, synth::Syntax::Yaml).unwrap();
    let loaded = load::load_dir(dir.path()).unwrap();
    assert_eq!(loaded.bundles.len(), 40);
    assert!(!validate::validate(&loaded).has_errors());
}
