//! `olm bundle generate` and `olm bundle validate` through the binary: outputs, determinism,
//! createdAt stability, --check, stdin input, config files, errors and exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use olm_bundler::yaml;
use serde_json::Value;

#[path = "support/registry.rs"]
mod registry;

const CSV: &str = "manifests/reverse-words-operator.clusterserviceversion.yaml";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bundle")
}

fn olm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
    c.env_remove("OPERATOR_BUNDLE_CATEGORIES");
    c
}

/// `olm bundle generate` for the fixture operator into `out`, with extra flags.
fn generate(out: &Path, epoch: u64, extra: &[&str]) -> Output {
    let mut c = olm();
    c.args(["bundle", "generate", "--manifests"])
        .arg(fixtures().join("operator"))
        .arg("--csv-base")
        .arg(fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml"))
        .args([
            "--package",
            "reverse-words-operator",
            "--version",
            "0.2.1",
            "--channels",
            "stable",
            "--default-channel",
            "stable",
        ])
        .args(["--min-kube-version", "1.25.0", "--output"])
        .arg(out)
        .args(extra)
        .env("SOURCE_DATE_EPOCH", epoch.to_string());
    c.output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn csv(out: &Path) -> Value {
    yaml::load_one(&out.join(CSV)).unwrap()
}

/// Every file under `root`, relative, with contents.
fn snapshot(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                out.push((
                    e.path().strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(e.path()).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn generates_the_expected_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = generate(
        &out,
        1_700_000_000,
        &[
            "--replaces",
            "reverse-words-operator.v0.2.0",
            "--skip-range",
            ">=0.1.0 <0.2.1",
            "--skips",
            "reverse-words-operator.v0.1.9",
            "--scorecard",
            "--related-images-from-containers",
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let files: Vec<String> = snapshot(&out)
        .into_iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert_eq!(
        files,
        [
            "bundle.Dockerfile",
            "manifests/apps.linuxera.org_reversewordsapps.yaml",
            "manifests/reverse-words-operator-controller-manager-metrics-service_v1_service.yaml",
            "manifests/reverse-words-operator-metrics-reader_rbac.authorization.k8s.io_v1_clusterrole.yaml",
            CSV,
            "metadata/annotations.yaml",
            "tests/scorecard/config.yaml",
        ]
    );
    let c = csv(&out);
    let ann = &c["metadata"]["annotations"];
    assert_eq!(c["metadata"]["name"], "reverse-words-operator.v0.2.1");
    assert_eq!(
        c["metadata"]["namespace"], "placeholder",
        "the base's namespace is kept, as operator-sdk keeps it"
    );
    assert_eq!(ann["createdAt"], "2023-11-14T22:13:20Z");
    assert_eq!(ann["olm.skipRange"], ">=0.1.0 <0.2.1");
    assert_eq!(
        ann["containerImage"],
        "quay.io/reverse-words/reverse-words-operator:v0.2.1"
    );
    assert!(
        ann["operators.operatorframework.io/builder"]
            .as_str()
            .unwrap()
            .starts_with("olm-v")
    );
    let examples: Value = serde_json::from_str(ann["alm-examples"].as_str().unwrap()).unwrap();
    assert_eq!(examples[0]["kind"], "ReverseWordsApp");
    assert_eq!(
        examples[0]["metadata"]["namespace"], "reverse-words-operator-system",
        "samples are kept as written, as operator-sdk keeps them"
    );
    let spec = &c["spec"];
    assert_eq!(spec["version"], "0.2.1");
    assert_eq!(spec["replaces"], "reverse-words-operator.v0.2.0");
    assert_eq!(spec["skips"][0], "reverse-words-operator.v0.1.9");
    assert_eq!(spec["minKubeVersion"], "1.25.0");
    let install = &spec["install"]["spec"];
    assert_eq!(spec["install"]["strategy"], "deployment");
    let dep = &install["deployments"][0];
    assert_eq!(dep["name"], "reverse-words-operator-controller-manager");
    let env = &dep["spec"]["template"]["spec"]["containers"][0]["env"][0];
    assert_eq!(env["name"], "WATCH_NAMESPACE");
    assert_eq!(
        env["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['olm.targetNamespaces']"
    );
    // Leader election Role -> permissions, manager ClusterRole -> clusterPermissions.
    assert_eq!(
        install["permissions"][0]["serviceAccountName"],
        "reverse-words-operator-controller-manager"
    );
    assert_eq!(
        install["permissions"][0]["rules"][1]["resources"][0],
        "leases"
    );
    assert_eq!(
        install["clusterPermissions"][0]["serviceAccountName"],
        "reverse-words-operator-controller-manager"
    );
    assert_eq!(
        install["clusterPermissions"][0]["rules"][2]["resources"][0],
        "reversewordsapps"
    );
    let owned = &spec["customresourcedefinitions"]["owned"][0];
    assert_eq!(owned["name"], "reversewordsapps.apps.linuxera.org");
    assert_eq!(owned["version"], "v1alpha1");
    assert_eq!(
        owned["specDescriptors"][0]["path"], "replicas",
        "base descriptors kept"
    );
    let related: Vec<(String, String)> = spec["relatedImages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["image"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        related,
        [
            (
                "manager".to_string(),
                "quay.io/reverse-words/reverse-words-operator:v0.2.1".to_string()
            ),
            (
                "reversewords".to_string(),
                "quay.io/mavazque/reversewords:v0.0.2".to_string()
            ),
        ]
    );
    // No namespace anywhere in manifests/.
    for (p, bytes) in snapshot(&out.join("manifests")) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains("namespace: reverse-words"),
            "{}",
            p.display()
        );
    }
    let ann_yaml = std::fs::read_to_string(out.join("metadata/annotations.yaml")).unwrap();
    assert!(ann_yaml.contains("operators.operatorframework.io.test.config.v1: tests/scorecard/"));
    let docker = std::fs::read_to_string(out.join("bundle.Dockerfile")).unwrap();
    assert!(docker.starts_with("FROM scratch\n"));
    assert!(docker.contains(
        "LABEL operators.operatorframework.io.bundle.package.v1=reverse-words-operator\n"
    ));
    assert!(docker.contains("COPY tests/scorecard /tests/scorecard/\n"));

    // The result passes every suite, strictly.
    let v = olm()
        .args(["bundle", "validate", "-s", "all", "--strict"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(v.status.success(), "{}", text(&v));
}

#[test]
fn same_inputs_give_byte_identical_output() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    assert!(generate(&a, 1000, &[]).status.success());
    assert!(generate(&b, 1000, &[]).status.success());
    assert_eq!(snapshot(&a), snapshot(&b));
}

#[test]
fn created_at_changes_only_with_content() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    assert!(generate(&out, 1000, &[]).status.success());
    let first = snapshot(&out);
    // Later run, same content: nothing rewritten, createdAt kept.
    let o = generate(&out, 2000, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("0 written"),
        "{}",
        text(&o)
    );
    assert_eq!(snapshot(&out), first);
    assert_eq!(
        csv(&out)["metadata"]["annotations"]["createdAt"],
        "1970-01-01T00:16:40Z"
    );
    // Content change: new createdAt.
    assert!(
        generate(&out, 2000, &["--replaces", "reverse-words-operator.v0.2.0"])
            .status
            .success()
    );
    assert_eq!(
        csv(&out)["metadata"]["annotations"]["createdAt"],
        "1970-01-01T00:33:20Z"
    );
}

#[test]
fn check_reports_stale_bundles_with_a_diff() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    assert!(generate(&out, 1000, &[]).status.success());
    let o = generate(&out, 5000, &["--check"]);
    assert!(o.status.success(), "{}", text(&o));
    // Hand-edit the committed CSV and leave a stray file: --check fails, shows both, writes nothing.
    let csv_path = out.join(CSV);
    let edited = std::fs::read_to_string(&csv_path)
        .unwrap()
        .replace("maturity: alpha", "maturity: stable");
    std::fs::write(&csv_path, &edited).unwrap();
    std::fs::write(out.join("manifests/stray.yaml"), "a: 1\n").unwrap();
    let o = generate(&out, 5000, &["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("-  maturity: stable\n+  maturity: alpha\n"),
        "{stdout}"
    );
    assert!(stdout.contains("--- a/manifests/stray.yaml"), "{stdout}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("is stale"),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&csv_path).unwrap(), edited);
    // Regenerating removes the stray file and restores the CSV.
    assert!(generate(&out, 5000, &[]).status.success());
    assert!(!out.join("manifests/stray.yaml").exists());
    assert!(generate(&out, 6000, &["--check"]).status.success());
}

#[test]
fn stdin_stream_gives_the_same_bundle_as_the_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    assert!(generate(&a, 1000, &[]).status.success());
    let mut files: Vec<PathBuf> = snapshot(&fixtures().join("operator"))
        .into_iter()
        .map(|(p, _)| fixtures().join("operator").join(p))
        .filter(|p| !p.ends_with("kustomization.yaml"))
        .collect();
    files.sort();
    let stream: String = files
        .iter()
        .map(|f| format!("---\n{}", std::fs::read_to_string(f).unwrap()))
        .collect();
    let mut child = olm()
        .args(["bundle", "generate", "--manifests", "-", "--csv-base"])
        .arg(fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml"))
        .args([
            "--package",
            "reverse-words-operator",
            "--version",
            "0.2.1",
            "--channels",
            "stable",
            "--default-channel",
            "stable",
            "--min-kube-version",
            "1.25.0",
            "-o",
        ])
        .arg(&b)
        .env("SOURCE_DATE_EPOCH", "1000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stream.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(snapshot(&a), snapshot(&b));
    // The same stream as one file.
    let file = tmp.path().join("operator.yaml");
    std::fs::write(&file, &stream).unwrap();
    let c = tmp.path().join("c");
    let o = olm()
        .args(["bundle", "generate", "--manifests"])
        .arg(&file)
        .arg("--csv-base")
        .arg(fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml"))
        .args([
            "--package",
            "reverse-words-operator",
            "--version",
            "0.2.1",
            "--channels",
            "stable",
            "--default-channel",
            "stable",
            "--min-kube-version",
            "1.25.0",
            "-o",
        ])
        .arg(&c)
        .env("SOURCE_DATE_EPOCH", "1000")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(snapshot(&a), snapshot(&c));
}

#[test]
fn config_file_supplies_the_settings() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    assert!(generate(&a, 1000, &[]).status.success());
    let cfg = tmp.path().join("olm-bundle.yaml");
    std::fs::write(
        &cfg,
        format!(
            "manifests: {}\ncsv-base: {}\npackage: reverse-words-operator\nversion: 0.2.1\nchannels: [stable]\ndefault-channel: stable\nmin-kube-version: 1.25.0\noutput: b\n",
            fixtures().join("operator").display(),
            fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml").display()
        ),
    )
    .unwrap();
    let o = olm()
        .args(["bundle", "generate", "--config"])
        .arg(&cfg)
        .env("SOURCE_DATE_EPOCH", "1000")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        snapshot(&a),
        snapshot(&tmp.path().join("b")),
        "output: is relative to the config file"
    );
    std::fs::write(&cfg, "packagee: typo\n").unwrap();
    let o = olm()
        .args(["bundle", "generate", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("packagee"),
        "{}",
        text(&o)
    );
}

#[test]
fn extra_annotations_survive_regeneration() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    assert!(generate(&out, 1000, &[]).status.success());
    let ann = out.join("metadata/annotations.yaml");
    let mut text = std::fs::read_to_string(&ann).unwrap();
    text.push_str("  com.redhat.openshift.versions: v4.14-v4.18\n");
    std::fs::write(&ann, text).unwrap();
    assert!(generate(&out, 2000, &[]).status.success());
    assert!(
        std::fs::read_to_string(&ann)
            .unwrap()
            .contains("com.redhat.openshift.versions: v4.14-v4.18")
    );
    assert!(
        std::fs::read_to_string(out.join("bundle.Dockerfile"))
            .unwrap()
            .contains("LABEL com.redhat.openshift.versions=v4.14-v4.18")
    );
}

/// A copy of the fixture manifests plus one extra file.
fn manifests_with(extra_name: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in snapshot(&fixtures().join("operator")) {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    std::fs::write(dir.path().join(extra_name), extra).unwrap();
    dir
}

fn generate_from(manifests: &Path, out: &Path) -> Output {
    olm()
        .args(["bundle", "generate", "--manifests"])
        .arg(manifests)
        .arg("--csv-base")
        .arg(fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml"))
        .args([
            "--package",
            "reverse-words-operator",
            "--version",
            "0.2.1",
            "--channels",
            "stable",
            "-o",
        ])
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn unsupported_kinds_are_errors_naming_file_and_kind() {
    let m = manifests_with(
        "zz_statefulset.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: cache}\nspec: {}\n",
    );
    let tmp = tempfile::tempdir().unwrap();
    let o = generate_from(m.path(), &tmp.path().join("b"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("zz_statefulset.yaml")
            && err.contains("StatefulSet \"cache\" cannot go into a registry+v1 bundle"),
        "{err}"
    );
    assert!(!tmp.path().join("b").exists(), "nothing written on error");
}

#[test]
fn malformed_manifests_name_the_file_and_line() {
    let m = manifests_with(
        "zz_broken.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [oops\n",
    );
    let tmp = tempfile::tempdir().unwrap();
    let o = generate_from(m.path(), &tmp.path().join("b"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("zz_broken.yaml:"),
        "{}",
        text(&o)
    );
}

#[test]
fn related_image_from_value_from_is_an_error() {
    let m = manifests_with(
        "zz_other.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: helper}\nspec:\n  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      containers:\n      - name: c\n        image: quay.io/x/y:1\n        env:\n        - name: RELATED_IMAGE_DB\n          valueFrom: {configMapKeyRef: {name: c, key: k}}\n",
    );
    let tmp = tempfile::tempdir().unwrap();
    let o = generate_from(m.path(), &tmp.path().join("b"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("RELATED_IMAGE_DB must have a literal `value`"),
        "{}",
        text(&o)
    );
}

#[test]
fn usage_errors_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let o = olm()
        .args(["bundle", "generate", "--manifests", "x"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = olm()
        .args(["bundle", "generate", "--manifests"])
        .arg(fixtures().join("operator"))
        .arg("--csv-base")
        .arg(fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml"))
        .args([
            "--package",
            "reverse-words-operator",
            "--version",
            "0.2.1",
            "--channels",
            "stable",
            "--default-channel",
            "beta",
            "-o",
        ])
        .arg(tmp.path().join("b"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("--default-channel \"beta\" is not one of --channels"),
        "{}",
        text(&o)
    );
    let o = olm()
        .args([
            "bundle",
            "generate",
            "--manifests",
            "/nonexistent",
            "--csv-base",
            "x",
            "--package",
            "p",
            "--version",
            "1.0.0",
            "--channels",
            "a",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn bad_csv_base_is_reported_with_its_field() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().join("base.yaml");
    std::fs::write(&base, "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  annotations:\n    capabilities: 3\nspec:\n  displayName: X\n").unwrap();
    let o = olm()
        .args(["bundle", "generate", "--manifests"])
        .arg(fixtures().join("operator"))
        .arg("--csv-base")
        .arg(&base)
        .args([
            "--package",
            "p",
            "--version",
            "1.0.0",
            "--channels",
            "stable",
            "-o",
        ])
        .arg(tmp.path().join("b"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("metadata.annotations[capabilities]"),
        "{}",
        text(&o)
    );
}

// ---- validate CLI ----

fn good(tmp: &Path) -> PathBuf {
    let out = tmp.join("bundle");
    assert!(generate(&out, 1000, &[]).status.success());
    out
}

#[test]
fn validate_json_output_and_exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = good(tmp.path());
    let o = olm()
        .args(["bundle", "validate", "-o", "json"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v, serde_json::json!({"passed": true, "outputs": []}));

    // A warning: passes, fails with --strict.
    let csv_path = out.join(CSV);
    let t = std::fs::read_to_string(&csv_path)
        .unwrap()
        .replace("  minKubeVersion: \"1.25.0\"\n", "");
    std::fs::write(&csv_path, t).unwrap();
    let o = olm()
        .args(["bundle", "validate", "-o", "json"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["passed"], true);
    assert_eq!(v["outputs"][0]["type"], "warning");
    assert_eq!(v["outputs"][0]["validator"], "csv");
    assert_eq!(v["outputs"][0]["field"], "spec.minKubeVersion");
    let o = olm()
        .args(["bundle", "validate", "--strict", "-o", "json"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        serde_json::from_slice::<Value>(&o.stdout).unwrap()["passed"],
        false
    );

    // An error: exit 1, text output names file and field with a hint.
    std::fs::write(
        out.join("manifests/sts.yaml"),
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: x}\n",
    )
    .unwrap();
    let o = olm()
        .args(["bundle", "validate"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("error [objects] manifests/sts.yaml:2 kind: StatefulSet is not supported type for registryV1 bundle"), "{stdout}");
    assert!(
        stdout.contains("hint: OLM installs only these kinds"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAILED: 1 error(s), 1 warning(s)"),
        "{stdout}"
    );
}

#[test]
fn validate_usage_and_io_errors_exit_2() {
    let o = olm()
        .args(["bundle", "validate", "/nonexistent/bundle"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    // An image that cannot be pulled (a missing OCI layout: no network in tests) fails
    // with the pull error, exit 1.
    let o = olm()
        .args(["bundle", "validate", "oci:/nonexistent/layout:v1.0.0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("cannot pull oci:/nonexistent/layout:v1.0.0"),
        "{}",
        text(&o)
    );
    let o = olm()
        .args(["bundle", "validate", ".", "-s", "nonsense"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let o = olm()
        .args([
            "bundle",
            "validate",
            ".",
            "--optional-values",
            "k8s-version=abc",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn validate_malformed_yaml_is_a_validation_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = good(tmp.path());
    std::fs::write(out.join("manifests/bad.yaml"), "a: [1\n").unwrap();
    let o = olm()
        .args(["bundle", "validate", "-o", "json"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["outputs"][0]["message"]
            .as_str()
            .unwrap()
            .contains("manifests/bad.yaml:"),
        "{v}"
    );
}

#[test]
fn validate_custom_categories_from_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let out = good(tmp.path());
    let o = olm()
        .args(["bundle", "validate", "-s", "categories"])
        .arg(&out)
        .env("OPERATOR_BUNDLE_CATEGORIES", r#"{"categories":["Other"]}"#)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("\"Developer Tools\" is not in the set of custom categories"),
        "{}",
        text(&o)
    );
}

#[test]
fn admission_webhooks_become_webhook_definitions() {
    let m = manifests_with(
        "webhook.yaml",
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: reverse-words-operator-validating-webhook-configuration
webhooks:
- admissionReviewVersions: [v1]
  clientConfig:
    service:
      name: reverse-words-operator-webhook-service
      namespace: reverse-words-operator-system
      path: /validate-apps-linuxera-org-v1alpha1-reversewordsapp
  failurePolicy: Fail
  name: vreversewordsapp.kb.io
  rules:
  - apiGroups: [apps.linuxera.org]
    apiVersions: [v1alpha1]
    operations: [CREATE, UPDATE]
    resources: [reversewordsapps]
  sideEffects: None
---
apiVersion: v1
kind: Service
metadata:
  name: reverse-words-operator-webhook-service
  namespace: reverse-words-operator-system
spec:
  ports:
  - port: 443
    protocol: TCP
    targetPort: 9443
  selector:
    control-plane: controller-manager
---
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: serving-cert
spec:
  secretName: webhook-server-cert
"#,
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("b");
    let o = generate_from(m.path(), &out);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("cert-manager Certificate serving-cert dropped"),
        "{}",
        text(&o)
    );
    let c = csv(&out);
    let w = &c["spec"]["webhookdefinitions"][0];
    assert_eq!(w["type"], "ValidatingAdmissionWebhook");
    assert_eq!(w["generateName"], "vreversewordsapp.kb.io");
    assert_eq!(
        w["deploymentName"],
        "reverse-words-operator-controller-manager"
    );
    assert_eq!(w["containerPort"], 443);
    assert_eq!(w["targetPort"], 9443);
    assert_eq!(
        w["webhookPath"],
        "/validate-apps-linuxera-org-v1alpha1-reversewordsapp"
    );
    assert_eq!(w["rules"][0]["resources"][0], "reversewordsapps");
    assert!(
        out.join("manifests/reverse-words-operator-webhook-service_v1_service.yaml")
            .exists(),
        "the webhook Service stays a manifest, as operator-sdk writes it"
    );
}

#[test]
fn csv_base_may_come_with_the_manifests() {
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path().join("a");
    assert!(generate(&a, 1000, &[]).status.success());
    let base = std::fs::read_to_string(
        fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml"),
    )
    .unwrap();
    let m = manifests_with("zz_base.clusterserviceversion.yaml", &base);
    let b = tmp.path().join("b");
    let o = olm()
        .args(["bundle", "generate", "--manifests"])
        .arg(m.path())
        .args([
            "--package",
            "reverse-words-operator",
            "--version",
            "0.2.1",
            "--channels",
            "stable",
            "--default-channel",
            "stable",
            "--min-kube-version",
            "1.25.0",
            "-o",
        ])
        .arg(&b)
        .env("SOURCE_DATE_EPOCH", "1000")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(snapshot(&a), snapshot(&b));
    // Both a base in the manifests and --csv-base: ambiguous, refused.
    let o = generate_from(m.path(), &tmp.path().join("c"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("a second ClusterServiceVersion"),
        "{}",
        text(&o)
    );
}

#[test]
fn extra_service_accounts_get_their_rbac_in_the_csv() {
    let m = manifests_with(
        "zz_runner.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: app-runner}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: app-runner}\nrules:\n- apiGroups: ['']\n  resources: [secrets]\n  verbs: [get]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: app-runner}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: app-runner}\nsubjects:\n- {kind: ServiceAccount, name: app-runner}\n",
    );
    let tmp = tempfile::tempdir().unwrap();
    // Without the flag the account's objects are plain manifests.
    let a = tmp.path().join("a");
    assert!(generate_from(m.path(), &a).status.success());
    assert!(
        a.join("manifests/app-runner_v1_serviceaccount.yaml")
            .exists()
    );
    assert!(
        a.join("manifests/app-runner_rbac.authorization.k8s.io_v1_role.yaml")
            .exists()
    );
    // With it, the Role becomes permissions of that account and OLM creates the account.
    let b = tmp.path().join("b");
    let o = olm()
        .args(["bundle", "generate", "--manifests"])
        .arg(m.path())
        .arg("--csv-base")
        .arg(fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml"))
        .args([
            "--package",
            "reverse-words-operator",
            "--version",
            "0.2.1",
            "--channels",
            "stable",
            "--extra-service-accounts",
            "app-runner",
            "-o",
        ])
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let c = csv(&b);
    let perms = c["spec"]["install"]["spec"]["permissions"]
        .as_array()
        .unwrap();
    assert_eq!(perms[0]["serviceAccountName"], "app-runner");
    assert_eq!(perms[0]["rules"][0]["resources"][0], "secrets");
    assert_eq!(
        perms[1]["serviceAccountName"],
        "reverse-words-operator-controller-manager"
    );
    assert!(
        !b.join("manifests/app-runner_v1_serviceaccount.yaml")
            .exists()
    );
    assert!(
        !b.join("manifests/app-runner_rbac.authorization.k8s.io_v1_role.yaml")
            .exists()
    );
}

#[test]
fn operator_sdk_selector_spellings_are_accepted() {
    let tmp = tempfile::tempdir().unwrap();
    let out = good(tmp.path());
    for sel in [
        "name=good-practices",
        "suite=operatorframework",
        "operatorhubv2",
        "alpha-deprecated-apis",
    ] {
        let o = olm()
            .args(["bundle", "validate", "--strict", "--select-optional", sel])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{sel}: {}", text(&o));
    }
}

#[test]
fn conversion_webhooks_need_all_namespaces_only() {
    // The fixture CRD with a conversion webhook, served by the operator's Deployment.
    let crd_path = fixtures().join("operator/crd/bases/apps.linuxera.org_reversewordsapps.yaml");
    let mut crd: Value = yaml::load_one(&crd_path).unwrap();
    crd["spec"]["conversion"] = serde_json::json!({
        "strategy": "Webhook",
        "webhook": {"clientConfig": {"service": {"name": "reverse-words-operator-webhook-service", "namespace": "system", "path": "/convert"}}, "conversionReviewVersions": ["v1"]}
    });
    let m = manifests_with(
        "zz_svc.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: reverse-words-operator-webhook-service}\nspec:\n  ports: [{port: 443, targetPort: 9443}]\n  selector: {control-plane: controller-manager}\n",
    );
    std::fs::write(
        m.path()
            .join("crd/bases/apps.linuxera.org_reversewordsapps.yaml"),
        yaml::to_yaml(&crd).unwrap(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // The fixture base supports OwnNamespace too: refused, with the reason.
    let o = generate_from(m.path(), &tmp.path().join("a"));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "only AllNamespaces InstallModeType is supported when conversionCRDs is present"
        ),
        "{}",
        text(&o)
    );
    // With AllNamespaces only it works.
    let base_text = std::fs::read_to_string(
        fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml"),
    )
    .unwrap();
    let mut base: Value = yaml::parse_one(Path::new("base"), &base_text).unwrap();
    base["spec"]["installModes"] = serde_json::json!([
        {"type": "OwnNamespace", "supported": false},
        {"type": "SingleNamespace", "supported": false},
        {"type": "MultiNamespace", "supported": false},
        {"type": "AllNamespaces", "supported": true},
    ]);
    let base_path = tmp.path().join("base.yaml");
    std::fs::write(&base_path, yaml::to_yaml(&base).unwrap()).unwrap();
    let out = tmp.path().join("b");
    let o = olm()
        .args(["bundle", "generate", "--manifests"])
        .arg(m.path())
        .arg("--csv-base")
        .arg(&base_path)
        .args([
            "--package",
            "reverse-words-operator",
            "--version",
            "0.2.1",
            "--channels",
            "stable",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let w = &csv(&out)["spec"]["webhookdefinitions"][0];
    assert_eq!(w["type"], "ConversionWebhook");
    assert_eq!(w["conversionCRDs"][0], "reversewordsapps.apps.linuxera.org");
    assert_eq!(w["generateName"], "creversewordsapps.kb.io");
    assert_eq!(
        w["deploymentName"],
        "reverse-words-operator-controller-manager"
    );
    assert_eq!(w["targetPort"], 9443);
    assert_eq!(w["webhookPath"], "/convert");
}

// ---- operator-sdk projects: `kustomize build config/manifests | olm bundle generate` ----

/// shared/data/sdk-projects beside the checkout (a worktree sits one level deeper, so every
/// ancestor is tried). Missing: a failure under CI, a visible skip elsewhere.
fn sdk_projects() -> Option<PathBuf> {
    let found = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|a| a.join("shared/data/sdk-projects"))
        .find(|p| p.is_dir());
    if found.is_none() {
        registry::prerequisite::missing("shared/data/sdk-projects beside this checkout");
    }
    found
}

fn sdk_layouts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sdk-layouts")
}

/// `olm bundle generate --manifests - --package memcached-operator --version 0.0.1
/// --channels alpha -o <out>` fed `stream`, exactly as the Makefile would run it.
fn generate_memcached(stream: &[u8], out: &Path, extra: &[&str]) -> Output {
    use std::io::Write;
    let mut child = olm()
        .args(["bundle", "generate", "--manifests", "-"])
        .args(["--package", "memcached-operator", "--version", "0.0.1"])
        .args(["--channels", "alpha", "-o"])
        .arg(out)
        .args(extra)
        .env("SOURCE_DATE_EPOCH", "1000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stream).unwrap();
    child.wait_with_output().unwrap()
}

/// Removes what may differ from operator-sdk's output by design: `createdAt` (a timestamp),
/// the builder annotation (names the tool), and the empty stubs Go's typed structs write
/// (`metadata.creationTimestamp: null`, an all-empty `status`, a Deployment's `strategy: {}`).
fn without_allowed_differences(mut v: Value) -> Value {
    if let Some(ann) = v
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        ann.remove("createdAt");
        ann.remove("operators.operatorframework.io/builder");
    }
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut)
        && meta.get("creationTimestamp").is_some_and(Value::is_null)
    {
        meta.remove("creationTimestamp");
    }
    fn empty_stub(v: &Value) -> bool {
        match v {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            Value::Object(m) => m.values().all(empty_stub),
            _ => false,
        }
    }
    if let Some(obj) = v.as_object_mut()
        && obj.get("status").is_some_and(empty_stub)
    {
        obj.remove("status");
    }
    if let Some(deps) = v
        .pointer_mut("/spec/install/spec/deployments")
        .and_then(Value::as_array_mut)
    {
        for d in deps {
            if let Some(spec) = d.get_mut("spec").and_then(Value::as_object_mut)
                && spec.get("strategy").is_some_and(empty_stub)
            {
                spec.remove("strategy");
            }
        }
    }
    v
}

/// Every field where `ours` differs from `theirs`, by JSON pointer.
fn field_differences(theirs: &Value, ours: &Value, at: &str, out: &mut Vec<String>) {
    match (theirs, ours) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = format!("{at}/{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => field_differences(x, y, &p, out),
                    (Some(x), None) => out.push(format!("{p}: only operator-sdk has {x}")),
                    (None, Some(y)) => out.push(format!("{p}: only olm has {y}")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                field_differences(x, y, &format!("{at}/{i}"), out);
            }
        }
        (a, b) if a != b => out.push(format!("{at}: operator-sdk {a}, olm {b}")),
        _ => {}
    }
}

/// The `LABEL k=v` lines of a Dockerfile, as (k, v).
fn dockerfile_labels(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("LABEL "))
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn operator_sdk_samples_give_operator_sdk_bundles_field_by_field() {
    let Some(projects) = sdk_projects() else {
        return;
    };
    for sample in ["go", "helm"] {
        let dir = projects.join(sample);
        let stream = std::fs::read(dir.join("kustomize-config-manifests.yaml")).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("bundle");
        let o = generate_memcached(&stream, &out, &[]);
        assert!(o.status.success(), "{sample}: {}", text(&o));
        let theirs = dir.join("operator-sdk-bundle");
        let ours: Vec<PathBuf> = snapshot(&out)
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| *p != Path::new("bundle.Dockerfile"))
            .collect();
        let expected: Vec<PathBuf> = snapshot(&theirs).into_iter().map(|(p, _)| p).collect();
        assert_eq!(ours, expected, "{sample}: the same files");
        let mut differences = Vec::new();
        for rel in &expected {
            let a: Value = yaml::load_one(&theirs.join(rel)).unwrap();
            let b: Value = yaml::load_one(&out.join(rel)).unwrap();
            field_differences(
                &without_allowed_differences(a),
                &without_allowed_differences(b),
                &rel.display().to_string(),
                &mut differences,
            );
        }
        assert!(
            differences.is_empty(),
            "{sample}: fields differing from operator-sdk's bundle:\n{}",
            differences.join("\n")
        );
        // Byte for byte where operator-sdk writes from a template or a small typed object.
        for rel in ["metadata/annotations.yaml", "tests/scorecard/config.yaml"] {
            assert_eq!(
                std::fs::read_to_string(out.join(rel)).unwrap(),
                std::fs::read_to_string(theirs.join(rel)).unwrap(),
                "{sample}: {rel}"
            );
        }
        // bundle.Dockerfile carries the annotations as labels, in the same order.
        let ann: Value = yaml::load_one(&out.join("metadata/annotations.yaml")).unwrap();
        let ann: Vec<(String, String)> = ann["annotations"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
            .collect();
        let docker = std::fs::read_to_string(out.join("bundle.Dockerfile")).unwrap();
        let mut labels = dockerfile_labels(&docker);
        labels.sort();
        let mut ann_sorted = ann.clone();
        ann_sorted.sort();
        assert_eq!(labels, ann_sorted, "{sample}: Dockerfile labels");
        assert!(docker.contains("COPY tests/scorecard /tests/scorecard/\n"));
        // What was dropped is said, truthfully.
        let err = String::from_utf8_lossy(&o.stderr);
        if sample == "go" {
            assert!(
                err.contains("cert-manager Certificate memcached-operator-serving-cert dropped: OLM issues webhook serving certificates only"),
                "{err}"
            );
            assert!(
                err.contains("Secret metrics-server-cert will not exist"),
                "{err}"
            );
        }
        // And it validates.
        let v = olm()
            .args(["bundle", "validate"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(v.status.success(), "{sample}: {}", text(&v));
    }
}

#[test]
fn ansible_layout_without_webhooks_follows_operator_sdk() {
    let stream = std::fs::read(sdk_layouts().join("ansible-config-manifests.yaml")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let o = generate_memcached(&stream, &out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let files: Vec<String> = snapshot(&out)
        .into_iter()
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert_eq!(
        files,
        [
            "bundle.Dockerfile",
            "manifests/cache.example.com_memcacheds.yaml",
            "manifests/memcached-operator-controller-manager-metrics-monitor_monitoring.coreos.com_v1_servicemonitor.yaml",
            "manifests/memcached-operator-controller-manager-metrics-service_v1_service.yaml",
            // Bound to the operator's account and to a User: the binding stays as written.
            "manifests/memcached-operator-manager-rolebinding_rbac.authorization.k8s.io_v1_clusterrolebinding.yaml",
            "manifests/memcached-operator-metrics-reader_rbac.authorization.k8s.io_v1_clusterrole.yaml",
            "manifests/memcached-operator.clusterserviceversion.yaml",
            "metadata/annotations.yaml",
            "tests/scorecard/config.yaml",
        ]
    );
    let c: Value =
        yaml::load_one(&out.join("manifests/memcached-operator.clusterserviceversion.yaml"))
            .unwrap();
    let ann = &c["metadata"]["annotations"];
    assert!(
        ann.get("containerImage").is_none(),
        "operator-sdk adds none"
    );
    assert_eq!(
        ann["alm-examples"],
        "[\n  {\n    \"apiVersion\": \"cache.example.com/v1alpha1\",\n    \"kind\": \"Memcached\",\n    \"metadata\": {\n      \"name\": \"memcached-sample\"\n    },\n    \"spec\": {\n      \"note\": \"\\u003cb\\u003e\\u0026 more\\u003c/b\\u003e\",\n      \"size\": 1\n    }\n  }\n]",
        "Go's json.MarshalIndent"
    );
    assert_eq!(c["metadata"]["namespace"], "placeholder");
    let spec = &c["spec"];
    // Only RELATED_IMAGE_ variables, the base's entries replaced (with a warning).
    assert_eq!(
        spec["relatedImages"],
        serde_json::json!([{"image": "docker.io/library/memcached:1.6.26-alpine", "name": "memcached"}])
    );
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("spec.relatedImages of the CSV base replaced"),
        "{}",
        text(&o)
    );
    assert_eq!(
        spec["customresourcedefinitions"]["owned"],
        serde_json::json!([{"kind": "Memcached", "name": "memcacheds.cache.example.com", "version": "v1alpha1"}]),
        "no displayName or description filled"
    );
    assert!(spec.get("webhookdefinitions").is_none());
    assert_eq!(spec["apiservicedefinitions"], serde_json::json!({}));
    let install = &spec["install"]["spec"];
    let container = &install["deployments"][0]["spec"]["template"]["spec"]["containers"][0];
    assert!(container.get("ports").is_none(), "empty lists dropped");
    assert!(container.get("volumeMounts").is_none());
    assert!(
        install["deployments"][0]["spec"]["template"]["spec"]
            .get("volumes")
            .is_none()
    );
    assert_eq!(
        container["env"][1]["valueFrom"]["fieldRef"]["fieldPath"],
        "metadata.annotations['olm.targetNamespaces']"
    );
    // ClusterRoleBindings in input order: metrics-auth rules first, then the manager's.
    let rules = install["clusterPermissions"][0]["rules"]
        .as_array()
        .unwrap();
    assert_eq!(rules[0]["resources"][0], "tokenreviews");
    assert_eq!(rules[1]["resources"][0], "secrets");
    assert_eq!(
        install["permissions"][0]["rules"][0]["resources"][0],
        "leases"
    );
    // The project's own scorecard configuration, in operator-sdk's typed form.
    assert_eq!(
        std::fs::read_to_string(out.join("tests/scorecard/config.yaml")).unwrap(),
        "apiVersion: scorecard.operatorframework.io/v1alpha3
kind: Configuration
metadata:
  name: config
serviceaccount: scorecard-runner
stages:
- parallel: true
  tests:
  - entrypoint:
    - scorecard-test
    - basic-check-spec
    image: registry.example.com/scorecard-test:v9
    labels:
      suite: basic
      test: basic-check-spec-test
    storage:
      spec:
        mountPath: {}
  - entrypoint:
    - custom-scorecard-tests
    - customtest1
    image: quay.io/example/custom-scorecard-tests:latest
    labels:
      suite: custom
      test: customtest1
    storage:
      spec:
        mountPath:
          path: /test-output
    uniqueID: custom-1
storage:
  spec:
    mountPath:
      path: /results
"
    );
    // --related-images-from-containers: the extended behaviour, only when asked for.
    let ext = tmp.path().join("ext");
    let o = generate_memcached(&stream, &ext, &["--related-images-from-containers"]);
    assert!(o.status.success(), "{}", text(&o));
    let c: Value =
        yaml::load_one(&ext.join("manifests/memcached-operator.clusterserviceversion.yaml"))
            .unwrap();
    assert_eq!(
        c["metadata"]["annotations"]["containerImage"],
        "quay.io/example/memcached-operator:v0.0.1"
    );
    let names: Vec<&str> = c["spec"]["relatedImages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["hand-written", "manager", "memcached"]);
    // --fill-crd-descriptions: what `generate kustomize manifests` writes into Go bases.
    let fill = tmp.path().join("fill");
    let o = generate_memcached(&stream, &fill, &["--fill-crd-descriptions"]);
    assert!(o.status.success(), "{}", text(&o));
    let c: Value =
        yaml::load_one(&fill.join("manifests/memcached-operator.clusterserviceversion.yaml"))
            .unwrap();
    let owned = &c["spec"]["customresourcedefinitions"]["owned"][0];
    assert_eq!(owned["displayName"], "Memcached");
    // The Makefile's operator-sdk flags ($(BUNDLE_GEN_FLAGS)) are accepted unchanged.
    let sdk_flags = tmp.path().join("sdk-flags");
    let mut c = olm();
    c.args([
        "bundle",
        "generate",
        "--manifests",
        "-",
        "--package",
        "memcached-operator",
    ])
    .args([
        "-q",
        "--overwrite",
        "--version",
        "0.0.1",
        "--channels=alpha",
    ])
    .args(["--default-channel=alpha", "--output-dir"])
    .arg(&sdk_flags)
    .stdin(std::fs::File::open(sdk_layouts().join("ansible-config-manifests.yaml")).unwrap());
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        std::fs::read_to_string(sdk_flags.join("metadata/annotations.yaml"))
            .unwrap()
            .contains("operators.operatorframework.io.bundle.channel.default.v1: alpha")
    );
    assert_eq!(
        owned["description"],
        "Memcached is the Schema for the memcacheds API"
    );
}

/// A go/v4 project's manager Deployment with the metrics certificate patch
/// (config/default/cert_metrics_manager_patch.yaml) and, optionally, the webhook patch.
fn go_v4_stream(webhook: bool, metrics_cert: bool) -> String {
    let mut mounts = String::new();
    let mut volumes = String::new();
    let mut docs = String::from(
        "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: memcached-operator-controller-manager, namespace: memcached-operator-system}\n---\n\
         apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata: {name: memcached-operator.v0.0.0, namespace: placeholder}\nspec:\n  displayName: Memcached Operator\n  installModes: [{type: AllNamespaces, supported: true}]\n---\n\
         apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata: {name: memcached-operator-selfsigned-issuer, namespace: memcached-operator-system}\nspec: {selfSigned: {}}\n---\n",
    );
    if metrics_cert {
        mounts.push_str("        - {mountPath: /tmp/k8s-metrics-server/metrics-certs, name: metrics-certs, readOnly: true}\n");
        volumes.push_str("      - name: metrics-certs\n        secret: {secretName: metrics-server-cert, optional: false}\n");
        docs.push_str("apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: memcached-operator-metrics-certs, namespace: memcached-operator-system}\nspec:\n  issuerRef: {kind: Issuer, name: memcached-operator-selfsigned-issuer}\n  secretName: metrics-server-cert\n---\n");
    }
    if webhook {
        mounts.push_str("        - {mountPath: /tmp/k8s-webhook-server/serving-certs, name: webhook-certs, readOnly: true}\n");
        volumes.push_str(
            "      - name: webhook-certs\n        secret: {secretName: webhook-server-cert}\n",
        );
        docs.push_str("apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: memcached-operator-serving-cert, namespace: memcached-operator-system}\nspec:\n  issuerRef: {kind: Issuer, name: memcached-operator-selfsigned-issuer}\n  secretName: webhook-server-cert\n---\n\
            apiVersion: v1\nkind: Service\nmetadata: {name: memcached-operator-webhook-service, namespace: memcached-operator-system}\nspec:\n  ports: [{port: 443, protocol: TCP, targetPort: 9443}]\n  selector: {control-plane: controller-manager}\n---\n\
            apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: memcached-operator-validating-webhook-configuration}\nwebhooks:\n- name: vmemcached-v1alpha1.kb.io\n  clientConfig:\n    service: {name: memcached-operator-webhook-service, namespace: memcached-operator-system, path: /validate-cache-example-com-v1alpha1-memcached}\n---\n");
    }
    let mounts = if mounts.is_empty() {
        String::new()
    } else {
        format!("        volumeMounts:\n{mounts}")
    };
    let volumes = if volumes.is_empty() {
        String::new()
    } else {
        format!("      volumes:\n{volumes}")
    };
    docs.push_str(&format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: memcached-operator-controller-manager, namespace: memcached-operator-system}}\nspec:\n  selector:\n    matchLabels: {{control-plane: controller-manager}}\n  template:\n    metadata:\n      labels: {{control-plane: controller-manager}}\n    spec:\n      serviceAccountName: memcached-operator-controller-manager\n      containers:\n      - name: manager\n        image: quay.io/example/memcached-operator:v0.0.1\n{mounts}{volumes}"
    ));
    docs
}

#[test]
fn go_v4_metrics_certificate_volume_is_an_error_naming_deployment_volume_and_secret() {
    let tmp = tempfile::tempdir().unwrap();
    for webhook in [false, true] {
        let out = tmp.path().join(format!("bundle-{webhook}"));
        let o = generate_memcached(go_v4_stream(webhook, true).as_bytes(), &out, &[]);
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        for needle in [
            "Deployment memcached-operator-controller-manager",
            "volume \"metrics-certs\"",
            "Secret \"metrics-server-cert\"",
            "cert-manager Certificate memcached-operator-metrics-certs",
            "OLM issues webhook serving certificates only",
            "Fix: ",
            "cert_metrics_manager_patch.yaml",
            "<stdin>:",
        ] {
            assert!(err.contains(needle), "{needle:?} in {err}");
        }
        assert!(!out.exists(), "nothing written");
    }
    // Without the metrics patch both layouts go through: the webhook certificate volume is
    // replaced by OLM's, at the same path.
    for webhook in [false, true] {
        let out = tmp.path().join(format!("ok-{webhook}"));
        let o = generate_memcached(go_v4_stream(webhook, false).as_bytes(), &out, &[]);
        assert!(o.status.success(), "{}", text(&o));
        let c: Value =
            yaml::load_one(&out.join("manifests/memcached-operator.clusterserviceversion.yaml"))
                .unwrap();
        let hooks = c["spec"].get("webhookdefinitions");
        if webhook {
            let w = &hooks.unwrap()[0];
            assert_eq!(w["deploymentName"], "memcached-operator-controller-manager");
            assert_eq!(w["admissionReviewVersions"], serde_json::json!(["v1beta1"]));
            assert_eq!(w["sideEffects"], "None");
            assert_eq!(w["containerPort"], 443);
            assert_eq!(w["targetPort"], 9443);
            assert!(
                out.join("manifests/memcached-operator-webhook-service_v1_service.yaml")
                    .exists()
            );
        } else {
            assert!(hooks.is_none());
            assert!(
                !out.join("tests").exists(),
                "no scorecard config in the stream"
            );
        }
    }
}

/// `olm bundle generate` as a library call (`ops::bundle_generate`): write, then check; and a
/// missing CSV base is a usage error that names the way out.
#[test]
fn ops_generate_writes_then_checks_as_a_library_call() {
    use olm_bundler::bundle::generate::config::{self, Overrides};
    use olm_bundler::ops::bundle_generate::{self, BundleGenerateError, Manifests, Mode, Outcome};
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bundle");
    let flags = |csv_base: bool| Overrides {
        csv_base: csv_base
            .then(|| fixtures().join("bases/reverse-words-operator.clusterserviceversion.yaml")),
        package: Some("reverse-words-operator".into()),
        version: Some("0.2.1".into()),
        channels: vec!["stable".into()],
        output: Some(out.clone()),
        ..Default::default()
    };
    let manifests = Manifests::Path(fixtures().join("operator"));
    let settings = config::resolve(flags(true), None).unwrap();
    let (_, outcome) = bundle_generate::run(settings.clone(), &manifests, Mode::Write).unwrap();
    let Outcome::Written { changes, report } = outcome else {
        panic!("expected a write");
    };
    assert!(!changes.written.is_empty());
    assert!(report.passed(false), "{:?}", report.findings);
    let (_, outcome) = bundle_generate::run(settings, &manifests, Mode::Check).unwrap();
    assert!(matches!(outcome, Outcome::UpToDate), "{outcome:?}");

    let settings = config::resolve(flags(false), None).unwrap();
    let err = bundle_generate::run(settings, &manifests, Mode::Check).unwrap_err();
    assert!(matches!(err, BundleGenerateError::NoCsvBase), "{err}");
    assert!(err.is_usage());
    assert!(err.to_string().contains("--csv-base"), "{err}");
}

/// `--use-image-digests` (operator-sdk's flag): the operator image of an operator-sdk project,
/// pushed to a real registry by tag, comes out pinned by the digest the registry serves (as
/// skopeo reads it), in the Deployment and in relatedImages; an image the registry lacks is
/// an error naming it and where it is used, and nothing is written.
#[test]
fn use_image_digests_pins_by_the_registrys_digest() {
    use registry::{Registry, Variant};
    let Some(projects) = sdk_projects() else {
        return;
    };
    let Some(reg) = Registry::start(Variant::Htpasswd) else {
        return;
    };
    let image = reg.image("example/memcached-operator:v0.0.1");
    let built = olm()
        .args([
            "image",
            "build",
            "--binary",
            "/bin/true",
            "-t",
            &image,
            "--push",
        ])
        .args(reg.olm_args())
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let inspected = registry::skopeo(
        &[
            vec!["inspect".to_string()],
            reg.skopeo_inspect_args(),
            vec![format!("docker://{image}")],
        ]
        .concat(),
    );
    let digest = serde_json::from_slice::<Value>(&inspected.stdout).unwrap()["Digest"]
        .as_str()
        .unwrap()
        .to_string();
    let pinned = format!("{}/example/memcached-operator@{digest}", reg.addr);

    let stream = std::fs::read_to_string(projects.join("go/kustomize-config-manifests.yaml"))
        .unwrap()
        .replace("quay.io/example/memcached-operator:v0.0.1", &image);
    let out = tempfile::tempdir().unwrap();
    let creds = reg.olm_args();
    let mut flags = vec!["--use-image-digests"];
    flags.extend(creds.iter().map(String::as_str));
    let o = generate_memcached(stream.as_bytes(), out.path(), &flags);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv: Value = yaml::load_one(
        &out.path()
            .join("manifests/memcached-operator.clusterserviceversion.yaml"),
    )
    .unwrap();
    let containers =
        &csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]["spec"]["containers"];
    let manager = containers
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "manager")
        .unwrap();
    assert_eq!(manager["image"], pinned.as_str());
    let related = csv["spec"]["relatedImages"].as_array().unwrap();
    assert!(
        related
            .iter()
            .any(|r| r["name"] == "manager" && r["image"] == pinned.as_str()),
        "{related:?}"
    );
    assert!(!serde_json::to_string(&csv).unwrap().contains(&image));

    // A second run resolves the same digest and writes nothing new.
    let again = generate_memcached(stream.as_bytes(), out.path(), &flags);
    assert!(again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("0 written"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );

    // An image the registry does not have.
    let missing = stream.replace(&image, &reg.image("example/absent:v9"));
    let empty = tempfile::tempdir().unwrap();
    let o = generate_memcached(missing.as_bytes(), empty.path(), &flags);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot resolve")
            && err.contains("example/absent:v9")
            && err.contains("containers manager"),
        "{err}"
    );
    assert!(!err.contains(registry::PASSWORD), "{err}");
    assert!(
        std::fs::read_dir(empty.path()).unwrap().next().is_none(),
        "something was written"
    );
}
