//! `olm catalog` end to end: render, template (against opm's published output), add (cutting
//! releases into a fresh catalog, as the project's own catalog/ is built), graph and
//! upgrade-path.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};
use std::process::Command;

use olm_bundler::catalog::load;

fn olm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .output()
        .expect("run olm");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn shared() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.is_dir());
    if found.is_none() {
        prerequisite::missing(&format!(
            "shared data not found beside {}",
            manifest.display()
        ));
    }
    found
}

/// Writes a minimal registry+v1 bundle of the `demo-operator` package at `version`.
fn demo_bundle(root: &Path, version: &str) -> PathBuf {
    let dir = root.join(format!("bundle-{version}"));
    std::fs::create_dir_all(dir.join("manifests")).unwrap();
    std::fs::create_dir_all(dir.join("metadata")).unwrap();
    std::fs::write(
        dir.join("metadata/annotations.yaml"),
        "annotations:\n  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n  operators.operatorframework.io.bundle.manifests.v1: manifests/\n  operators.operatorframework.io.bundle.metadata.v1: metadata/\n  operators.operatorframework.io.bundle.package.v1: demo-operator\n  operators.operatorframework.io.bundle.channels.v1: alpha\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("manifests/demo-operator.clusterserviceversion.yaml"),
        format!(
            r#"apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: demo-operator.v{version}
  annotations:
    capabilities: Basic Install
spec:
  version: {version}
  displayName: Demo Operator
  description: Reverses words.
  provider: {{name: Demo}}
  icon:
  - {{base64data: PHN2Zy8+, mediatype: image/svg+xml}}
  installModes:
  - {{type: AllNamespaces, supported: true}}
  customresourcedefinitions:
    owned:
    - {{name: demos.demo.io, version: v1, kind: Demo, displayName: Demo}}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: demo
        spec:
          template:
            spec:
              containers:
              - {{name: manager, image: "quay.io/demo/demo-operator:v{version}"}}
"#
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("manifests/demo.io_demos.yaml"),
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: demos.demo.io}\nspec:\n  group: demo.io\n  names: {kind: Demo, plural: demos}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n",
    )
    .unwrap();
    dir
}

#[test]
fn render_a_bundle_dir_as_json_and_yaml() {
    let tmp = tempfile::tempdir().unwrap();
    let b = demo_bundle(tmp.path(), "0.1.0");
    let (code, out, err) = olm(&[
        "catalog",
        "render",
        b.to_str().unwrap(),
        "--image",
        "quay.io/demo/demo-operator-bundle:v0.1.0",
        "--migrate-level",
        "bundle-object-to-csv-metadata",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("{\n    \"schema\": \"olm.bundle\""),
        "{out}"
    );
    assert!(out.contains("\"type\": \"olm.csv.metadata\""));
    // Without the migration, a bundle with an image is written as opm 1.73 writes it: every
    // manifest as an olm.bundle.object.
    let (code, objects, err) = olm(&[
        "catalog",
        "render",
        b.to_str().unwrap(),
        "--image",
        "quay.io/demo/demo-operator-bundle:v0.1.0",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        objects.contains("\"type\": \"olm.bundle.object\""),
        "{objects}"
    );
    assert!(!objects.contains("olm.csv.metadata"), "{objects}");
    let cfg = load::load_bytes(Path::new("out.json"), out.as_bytes()).unwrap();
    assert_eq!(cfg.bundles[0].name, "demo-operator.v0.1.0");
    assert_eq!(cfg.bundles[0].related_images.len(), 2);

    let (code, out, _) = olm(&[
        "catalog",
        "render",
        b.to_str().unwrap(),
        "-o",
        "yaml",
        "--migrate-level",
        "none",
    ]);
    assert_eq!(code, 0);
    assert!(out.starts_with("---\n"));
    assert!(out.contains("olm.bundle.object"));
    // Deterministic.
    let again = olm(&[
        "catalog",
        "render",
        b.to_str().unwrap(),
        "-o",
        "yaml",
        "--bundle-objects",
    ])
    .1;
    assert_eq!(out, again);

    let (code, _, err) = olm(&["catalog", "render", "oci:/nonexistent/layout:v1"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("cannot pull oci:/nonexistent/layout:v1"),
        "{err}"
    );
}

#[test]
fn add_cuts_three_releases_into_a_semver_catalog() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    let img = |v: &str| format!("quay.io/demo/demo-operator-bundle:v{v}");
    for (v, channels) in [
        ("0.1.0", "candidate,fast,stable"),
        ("0.2.0", "candidate,fast"),
        ("0.2.1", "candidate,fast,stable"),
    ] {
        let b = demo_bundle(tmp.path(), v);
        let (code, _, err) = olm(&[
            "catalog",
            "add",
            catalog.to_str().unwrap(),
            "--bundle",
            b.to_str().unwrap(),
            "--image",
            &img(v),
            "--channels",
            channels,
        ]);
        assert_eq!(code, 0, "{v}: {err}");
    }
    let pkg = catalog.join("demo-operator");
    assert!(pkg.join("template.yaml").is_file());
    assert!(pkg.join(".indexignore").is_file());
    let (code, out, err) = olm(&["catalog", "validate", catalog.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    let cfg = load::load_dir(&catalog).unwrap();
    assert!(
        cfg.others.is_empty(),
        "the template is ignored by the loader"
    );
    assert_eq!(cfg.packages[0].default_channel, "stable-v0.2");
    assert_eq!(cfg.packages[0].description, "Reverses words.");
    assert!(cfg.packages[0].icon.is_some());
    let names: Vec<&str> = cfg.channels.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "candidate-v0.1",
            "candidate-v0.2",
            "fast-v0.1",
            "fast-v0.2",
            "stable-v0.1",
            "stable-v0.2"
        ]
    );
    let fast = cfg.channels.iter().find(|c| c.name == "fast-v0.2").unwrap();
    assert_eq!(fast.entries[1].name, "demo-operator.v0.2.1");
    assert_eq!(fast.entries[1].replaces, "demo-operator.v0.1.0");
    assert_eq!(fast.entries[1].skips, vec!["demo-operator.v0.2.0"]);

    // Re-rendering from the template alone (old bundles reused from the catalog) is stable.
    let before = std::fs::read(pkg.join("catalog.yaml")).unwrap();
    let b = demo_bundle(tmp.path(), "0.2.1");
    let (code, _, err) = olm(&[
        "catalog",
        "add",
        catalog.to_str().unwrap(),
        "--bundle",
        b.to_str().unwrap(),
        "--image",
        &img("0.2.1"),
        "--channels",
        "stable",
        "--check",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read(pkg.join("catalog.yaml")).unwrap(), before);

    // An invalid archetype is a usage error naming the choices.
    let (code, _, err) = olm(&[
        "catalog",
        "add",
        catalog.to_str().unwrap(),
        "--bundle",
        b.to_str().unwrap(),
        "--image",
        &img("0.2.1"),
        "--channels",
        "beta",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("candidate, fast and stable"), "{err}");

    // The same catalog via `template semver` with local bundle directories.
    let mut args: Vec<String> = vec![
        "catalog".into(),
        "template".into(),
        "semver".into(),
        pkg.join("template.yaml").display().to_string(),
        "-o".into(),
        "yaml".into(),
    ];
    for v in ["0.1.0", "0.2.0", "0.2.1"] {
        args.push("--bundle-dir".into());
        args.push(format!(
            "{}={}",
            img(v),
            tmp.path().join(format!("bundle-{v}")).display()
        ));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = olm(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.as_bytes(), before.as_slice());

    // Graph and upgrade path on the result.
    let (code, out, _) = olm(&[
        "catalog",
        "graph",
        catalog.to_str().unwrap(),
        "--format",
        "svg",
    ]);
    assert_eq!(code, 0);
    assert!(out.starts_with("<svg"));
    let (code, out, err) = olm(&[
        "catalog",
        "upgrade-path",
        catalog.to_str().unwrap(),
        "-p",
        "demo-operator",
        "--from",
        "0.2.0",
        "--channel",
        "candidate-v0.2",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("demo-operator.v0.2.0 -> demo-operator.v0.2.1"),
        "{out}"
    );
}

#[test]
fn add_to_a_basic_template_links_the_channel_head() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("catalog");
    let pkg = catalog.join("demo-operator");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("template.yaml"),
        "schema: olm.template.basic\nentries: []\n",
    )
    .unwrap();
    for v in ["0.1.0", "0.2.0"] {
        let b = demo_bundle(tmp.path(), v);
        let (code, _, err) = olm(&[
            "catalog",
            "add",
            catalog.to_str().unwrap(),
            "--bundle",
            b.to_str().unwrap(),
            "--image",
            &format!("quay.io/demo/demo-operator-bundle:v{v}"),
            "--channels",
            "alpha",
            "--skip-range",
            &format!("<{v}"),
        ]);
        assert_eq!(code, 0, "{err}");
    }
    let cfg = load::load_dir(&catalog).unwrap();
    let alpha = &cfg.channels[0];
    assert_eq!(alpha.entries[1].replaces, "demo-operator.v0.1.0");
    assert_eq!(alpha.entries[1].skip_range, "<0.2.0");
    assert_eq!(cfg.packages[0].default_channel, "alpha");
}

#[test]
fn semver_template_matches_opm_for_kairos() {
    let Some(data) = shared() else { return };
    let root = data.join("render-pairs/community-operators-prod");
    let ops = root.join("operators/kairos-operator");
    let mut args: Vec<String> = vec![
        "catalog".into(),
        "template".into(),
        "semver".into(),
        ops.join("catalog-templates/semver.yaml")
            .display()
            .to_string(),
    ];
    for v in ["2.0.1", "2.1.0", "2.1.1", "2.2.0"] {
        args.push("--bundle-dir".into());
        args.push(format!(
            "quay.io/community-operator-pipeline-prod/kairos-operator:{v}={}",
            ops.join(v).display()
        ));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = olm(&args);
    assert_eq!(code, 0, "{err}");
    let ours = load::load_bytes(Path::new("ours.json"), out.as_bytes()).unwrap();
    let theirs = load::load_dir(&root.join("catalogs/v4.20/kairos-operator")).unwrap();
    assert_eq!(
        ours.packages[0].default_channel,
        theirs.packages[0].default_channel
    );
    assert_eq!(ours.packages[0].description, theirs.packages[0].description);
    assert_eq!(ours.packages[0].icon, theirs.packages[0].icon);
    assert_eq!(ours.channels.len(), theirs.channels.len());
    for (a, b) in ours.channels.iter().zip(&theirs.channels) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.entries, b.entries);
    }
    let mut ours_b = ours.bundles.clone();
    let mut theirs_b = theirs.bundles.clone();
    ours_b.sort_by(|a, b| a.name.cmp(&b.name));
    theirs_b.sort_by(|a, b| a.name.cmp(&b.name));
    for (a, b) in ours_b.iter_mut().zip(theirs_b.iter_mut()) {
        a.source = Default::default();
        b.source = Default::default();
        pretty_assertions::assert_eq!(a, b);
    }
}

#[test]
fn out_of_sync_basic_template_fails_validation() {
    let Some(data) = shared() else { return };
    let root = data.join("render-pairs/community-operators-prod");
    let tpl = root.join("operators/ecr-secret-operator/catalog-templates/basic.yaml");
    let published = root.join("catalogs/v4.20/ecr-secret-operator");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("catalog.json");
    let (code, _, err) = olm(&[
        "catalog",
        "template",
        "basic",
        tpl.to_str().unwrap(),
        "--reuse",
        published.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = olm(&["catalog", "validate", out.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("channel-entry-missing-bundle"), "{err}");
    assert!(err.contains("ecr-secret-operator.v0.6.0"), "{err}");
}

/// Copies a bundle directory (manifests/, metadata/) into `to`.
fn copy_bundle(from: &Path, to: &Path) {
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(to.join(sub)).unwrap();
        for e in std::fs::read_dir(from.join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(sub).join(e.file_name())).unwrap();
        }
    }
}

/// A CRD whose schema repeats `type` in one map (as a real community bundle does): OLM's Go
/// loaders keep the last value, and so do `olm bundle validate` and `olm catalog render`,
/// each with one warning naming the file, the line and the key.
#[test]
fn a_repeated_mapping_key_is_read_as_go_reads_it() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = tempfile::tempdir().unwrap();
    copy_bundle(&repo.join("bundle"), dir.path());
    let crd = dir
        .path()
        .join("manifests/apps.linuxera.org_reversewordsapps.yaml");
    let text = std::fs::read_to_string(&crd).unwrap();
    // `replicas`: `type: integer` preceded by a first `type: string` in the same map.
    let at = text
        .find("                maximum: 100\n")
        .expect("replicas schema");
    let edited = format!(
        "{}                type: string\n{}",
        &text[..at],
        &text[at..]
    );
    // The warning names the repeat: the original `type: integer`, below the inserted line.
    let repeat = at + edited[at..].find("type: integer").unwrap();
    let line = edited[..repeat].lines().count();
    std::fs::write(&crd, &edited).unwrap();
    let bundle = dir.path().to_str().unwrap();

    let (code, out, err) = olm(&["bundle", "validate", bundle]);
    assert_eq!(code, 0, "{out}{err}");
    let warning = format!(
        "apps.linuxera.org_reversewordsapps.yaml:{line}: mapping key \"type\" is repeated; the last value is used"
    );
    assert_eq!(err.matches("is repeated").count(), 1, "{err}");
    assert!(err.contains(&warning), "{err}");

    let (code, out, err) = olm(&["catalog", "render", bundle, "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&warning), "{err}");
    // The embedded CRD keeps the last value: `integer`, as opm would render it.
    let cfg = load::load_bytes(Path::new("r.json"), out.as_bytes()).unwrap();
    let crd_json = cfg.bundles[0]
        .properties
        .iter()
        .filter(|p| p.ty == "olm.bundle.object")
        .filter_map(|p| {
            p.value_as::<olm_bundler::catalog::property::BundleObject>()
                .ok()
        })
        .filter_map(|o| olm_bundler::grammar::go_base64::decode(&o.data))
        .map(|b| String::from_utf8(b).unwrap())
        .find(|j| j.contains("\"CustomResourceDefinition\""))
        .expect("the CRD is rendered");
    let crd: serde_json::Value = serde_json::from_str(&crd_json).unwrap();
    let replicas = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["replicas"];
    assert_eq!(replicas["type"], "integer", "{replicas}");
}

/// Every package of the shared catalogs, as (catalog directory, package name).
fn shared_packages(shared: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    for repo in ["certified-operators", "community-operators-prod"] {
        let versions = shared.join("catalogs").join(repo).join("catalogs");
        for v in std::fs::read_dir(&versions).unwrap() {
            let v = v.unwrap().path();
            for p in std::fs::read_dir(&v).unwrap() {
                let p = p.unwrap().path();
                if p.join("catalog.yaml").is_file() {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    out.push((v.clone(), name));
                }
            }
        }
    }
    out.sort();
    out
}

/// The width and height an SVG declares on its root element.
fn svg_dimensions(svg: &str) -> (f64, f64) {
    let root = &svg[..svg.find('>').unwrap()];
    let attr = |name: &str| -> f64 {
        let at = root.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        root[at..at + root[at..].find('"').unwrap()]
            .parse()
            .unwrap()
    };
    (attr("width"), attr("height"))
}

/// The picture of every real package stays between 1:3 and 3:1, is the same on every run,
/// and is an SVG a real renderer (librsvg) draws.
#[test]
fn upgrade_graph_pictures_of_real_packages() {
    use olm_bundler::catalog::graph;
    let Some(shared) = shared() else { return };
    let rsvg = which("rsvg-convert");
    if rsvg.is_none() {
        prerequisite::missing("rsvg-convert (Debian: librsvg2-bin)");
    }
    let packages = shared_packages(&shared);
    assert!(packages.len() >= 16, "{packages:?}");
    let out = tempfile::tempdir().unwrap();
    for (dir, package) in &packages {
        let cfg = load::load_dir(&dir.join(package)).unwrap();
        // One package per directory (named after it, or not: eda-openshift-operator).
        let opts = graph::Options::default();
        let svg = graph::render(&cfg, graph::Format::Svg, &opts).unwrap();
        assert_eq!(svg, graph::render(&cfg, graph::Format::Svg, &opts).unwrap());
        let (w, h) = svg_dimensions(&svg);
        let ratio = w / h;
        assert!(
            (1.0 / 3.0..=3.0).contains(&ratio),
            "{package} in {}: {w} x {h}",
            dir.display()
        );
        if let Some(rsvg) = &rsvg {
            let file = out.path().join(format!("{package}.svg"));
            std::fs::write(&file, &svg).unwrap();
            let st = Command::new(rsvg)
                .arg(&file)
                .arg("-o")
                .arg(out.path().join(format!("{package}.png")))
                .output()
                .unwrap();
            assert!(
                st.status.success(),
                "{package}: {}",
                String::from_utf8_lossy(&st.stderr)
            );
        }
    }
}

/// `--format html`: one self-contained page with every package and a picker.
#[test]
fn upgrade_graph_html_page_is_self_contained() {
    let Some(shared) = shared() else { return };
    let dir = shared.join("catalogs/community-operators-prod/catalogs/v4.20");
    let (code, page, err) = olm(&[
        "catalog",
        "graph",
        dir.to_str().unwrap(),
        "--format",
        "html",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..80]);
    for (_, package) in shared_packages(&shared)
        .iter()
        .filter(|(d, _)| d.ends_with("community-operators-prod/catalogs/v4.20"))
    {
        assert!(
            page.contains(&format!("data-package=\"{package}\"")),
            "{package}"
        );
    }
    assert!(page.contains("<select id=\"package\"") && page.contains("<select id=\"channel\""));
    // Nothing fetched from elsewhere: no scripts, styles or images by URL.
    for bad in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!page.contains(bad), "{bad}");
    }
}

fn which(tool: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(tool))
            .find(|p| p.is_file())
    })
}

/// `olm catalog init` writes what `opm init` wrote (opm-expected/init).
#[test]
fn init_matches_opm() {
    let Some(shared) = shared() else { return };
    let dir = shared.join("opm-expected/init");
    let readme = dir.join("example-README.md");
    let (code, out, err) = olm(&[
        "catalog",
        "init",
        "example-operator",
        "--default-channel",
        "stable",
        "-d",
        readme.to_str().unwrap(),
        "-o",
        "yaml",
    ]);
    assert_eq!(code, 0, "{err}");
    let expected = std::fs::read_to_string(dir.join("example-operator.yaml")).unwrap();
    pretty_assertions::assert_eq!(out, expected);
    // A missing description file is an error naming it.
    let (code, _, err) = olm(&[
        "catalog",
        "init",
        "x",
        "-c",
        "s",
        "-d",
        "/nonexistent/README.md",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("/nonexistent/README.md"), "{err}");
}

/// `olm catalog convert-template basic` writes what `opm alpha convert-template basic` wrote,
/// and rendering the template (bundles reused from the catalog, no registry) gives the
/// catalog back.
#[test]
fn convert_template_matches_opm_and_renders_back() {
    let Some(shared) = shared() else { return };
    let expected = shared.join("opm-expected/convert-template");
    let mut compared = 0;
    for v in std::fs::read_dir(&expected).unwrap() {
        let v = v.unwrap().path();
        for f in std::fs::read_dir(&v).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let package = name.strip_suffix(".basic.yaml").unwrap();
            let version = v.file_name().unwrap().to_string_lossy().into_owned();
            let catalog = ["certified-operators", "community-operators-prod"]
                .iter()
                .map(|r| {
                    shared
                        .join("catalogs")
                        .join(r)
                        .join("catalogs")
                        .join(&version)
                        .join(package)
                        .join("catalog.yaml")
                })
                .find(|p| p.is_file())
                .unwrap_or_else(|| panic!("no catalog for {name}"));
            let cat = catalog.to_str().unwrap();
            let (code, out, err) =
                olm(&["catalog", "convert-template", "basic", cat, "-o", "yaml"]);
            assert_eq!(code, 0, "{err}");
            pretty_assertions::assert_eq!(out, std::fs::read_to_string(&f).unwrap(), "{name}");
            compared += 1;

            let tmp = tempfile::tempdir().unwrap();
            let tpl = tmp.path().join("template.yaml");
            std::fs::write(&tpl, &out).unwrap();
            // Bundles come back in the catalog's own form.
            let form = match std::fs::read_to_string(&catalog)
                .unwrap()
                .contains("olm.bundle.object")
            {
                true => "none",
                false => "bundle-object-to-csv-metadata",
            };
            let (code, rendered, err) = olm(&[
                "catalog",
                "template",
                tpl.to_str().unwrap(),
                "--reuse",
                cat,
                "--migrate-level",
                form,
                "-o",
                "json",
            ]);
            assert_eq!(code, 0, "{name}: {err}");
            let (code, direct, err) = olm(&["catalog", "render", cat, "-o", "json"]);
            assert_eq!(code, 0, "{err}");
            let a = load::load_bytes(Path::new("a.json"), rendered.as_bytes()).unwrap();
            let b = load::load_bytes(Path::new("b.json"), direct.as_bytes()).unwrap();
            assert_eq!(
                a.to_json(),
                b.to_json(),
                "{name}: the template does not render back"
            );
        }
    }
    assert!(compared >= 2, "only {compared} expected outputs");
}

/// `olm catalog list packages|channels|bundles` over a real catalog, as a table and JSON.
#[test]
fn list_packages_channels_bundles() {
    let Some(shared) = shared() else { return };
    let dir = shared.join("catalogs/community-operators-prod/catalogs/v4.20");
    let d = dir.to_str().unwrap();
    let (code, out, err) = olm(&["catalog", "list", "packages", d]);
    assert_eq!(code, 0, "{err}");
    let mut lines = out.lines();
    let header = lines.next().unwrap();
    assert!(
        header.starts_with("NAME") && header.contains("DEFAULT CHANNEL"),
        "{out}"
    );
    assert_eq!(lines.count(), 8, "{out}");
    assert!(out.contains("kube-green"), "{out}");

    let (code, out, err) = olm(&["catalog", "list", "channels", d, "kube-green", "-o", "json"]);
    assert_eq!(code, 0, "{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(
        rows.iter()
            .all(|r| r["package"] == "kube-green" && r["head"].is_string())
    );

    let (code, out, err) = olm(&["catalog", "list", "bundles", d, "kube-green"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.lines().next().unwrap().starts_with("PACKAGE"), "{out}");
    assert!(out.contains("kube-green.v0.7.1"), "{out}");

    let (code, _, err) = olm(&["catalog", "list", "channels", d, "nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("\"nope\""), "{err}");
    let (code, _, _) = olm(&["catalog", "list", "packages", d, "kube-green"]);
    assert_eq!(code, 2);
}

/// The template kind comes from the file's `schema` when not given; an unknown kind is a
/// usage error.
#[test]
fn template_kind_is_detected_from_the_schema() {
    let tmp = tempfile::tempdir().unwrap();
    let tpl = tmp.path().join("t.yaml");
    std::fs::write(
        &tpl,
        "schema: olm.template.basic\nentries:\n- schema: olm.package\n  name: a\n  defaultChannel: s\n",
    )
    .unwrap();
    let t = tpl.to_str().unwrap();
    let (code, out, err) = olm(&["catalog", "template", t]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"olm.package\""), "{out}");
    let (code, explicit, _) = olm(&["catalog", "template", "basic", t]);
    assert_eq!((code, explicit), (0, out));
    let (code, _, err) = olm(&["catalog", "template", "fancy", t]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("unknown template kind"), "{err}");
}
