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
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("{\n    \"schema\": \"olm.bundle\""),
        "{out}"
    );
    assert!(out.contains("\"type\": \"olm.csv.metadata\""));
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
