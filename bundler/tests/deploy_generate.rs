//! `olm deploy generate`: golden trees, every object parsed back into typed Kubernetes/OLM
//! structs, `--check`, bad input, and (when kubectl is installed) a real kustomize build.
//!
//! Set `UPDATE_GOLDEN=1` to rewrite the golden trees after an intended change.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::DynamicObject;
use olm_bundler::deploy::types::{CatalogSource, OperatorGroup, Subscription};
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/deploy")
}

fn olm(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run olm");
    {
        let mut input = child.stdin.take().unwrap();
        if let Some(bytes) = stdin {
            input.write_all(bytes).unwrap();
        }
    }
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The flags the repository's deploy/README.md uses.
const RW_FLAGS: &[&str] = &[
    "--catalog-image",
    "quay.io/reverse-words/reverse-words-operator-catalog:latest",
    "--package",
    "reverse-words-operator",
    "--channel",
    "stable",
    "--namespace",
    "reverse-words-operator",
    "--display-name",
    "Reverse Words Operator",
    "--publisher",
    "reverse-words",
];

fn generate_rw(out: &Path, extra: &[&str]) -> Output {
    let manifests = std::fs::read(fixtures().join("reverse-words-manifests.yaml")).unwrap();
    let mut args = vec!["deploy", "generate"];
    args.extend_from_slice(RW_FLAGS);
    args.extend_from_slice(&["--manifests", "-", "--output", out.to_str().unwrap()]);
    args.extend_from_slice(extra);
    olm(&args, Some(&manifests))
}

fn generate_widgets(out: &Path) -> Output {
    let dir = fixtures().join("manifests-dir");
    let digest = format!("sha256:{}", "ab".repeat(32));
    let image = format!("registry.example.com/widgets/catalog@{digest}");
    olm(
        &[
            "deploy",
            "generate",
            "--catalog-image",
            &image,
            "--package",
            "widget-operator",
            "--namespace",
            "widgets",
            "--install-mode",
            "all",
            "--approval",
            "Manual",
            "--starting-csv",
            "widget-operator.v1.4.2",
            "--poll-interval",
            "1h30m",
            "--manifests",
            dir.to_str().unwrap(),
            "--output",
            out.to_str().unwrap(),
        ],
        None,
    )
}

fn read_tree(root: &Path) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read_to_string(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn check_golden(generated: &Path, name: &str) {
    let golden = fixtures().join("golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(&golden);
        for (rel, body) in read_tree(generated) {
            let p = golden.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, body).unwrap();
        }
    }
    assert_eq!(
        read_tree(generated),
        read_tree(&golden),
        "golden tree {name}"
    );
}

#[test]
fn reverse_words_tree_matches_golden_and_is_deterministic() {
    let a = tempfile::tempdir().unwrap();
    let out = generate_rw(a.path(), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_golden(a.path(), "reverse-words");
    let b = tempfile::tempdir().unwrap();
    assert!(generate_rw(b.path(), &[]).status.success());
    assert_eq!(read_tree(a.path()), read_tree(b.path()));
}

#[test]
fn generic_operator_tree_matches_golden() {
    let a = tempfile::tempdir().unwrap();
    let out = generate_widgets(a.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_golden(a.path(), "widgets-all-namespaces");
    let tree = read_tree(a.path());
    // AllNamespaces: no targetNamespaces and no all-namespaces component.
    assert!(!tree["olm/operatorgroup.yaml"].contains("targetNamespaces"));
    assert!(!tree.keys().any(|k| k.starts_with("olm/all-namespaces")));
    // The sample custom resource is kept out of the main kustomization.
    assert!(tree.contains_key("plain/samples/widget_widget-sample.yaml"));
    assert!(!tree["plain/kustomization.yaml"].contains("widget-sample"));
    // Nothing about reverse-words leaks into another operator's tree.
    assert!(!tree.values().any(|v| v.contains("reverse")), "{tree:#?}");
}

/// Parses a generated file into `T` and checks serialising it back gives the same object,
/// so the type models every field we write.
fn parse_back<T: DeserializeOwned + Serialize>(path: &Path, round_trip: bool) -> T {
    let value: Value = olm_bundler::yaml::load_one(path).unwrap();
    let typed: T =
        serde_json::from_value(value.clone()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if round_trip {
        assert_eq!(
            serde_json::to_value(&typed).unwrap(),
            value,
            "{}",
            path.display()
        );
    }
    typed
}

#[test]
fn every_generated_object_parses_into_its_type() {
    let dir = tempfile::tempdir().unwrap();
    assert!(generate_rw(dir.path(), &[]).status.success());
    let root = dir.path();

    let cs: CatalogSource = parse_back(&root.join("olm/catalogsource.yaml"), true);
    assert_eq!(cs.spec.source_type, "grpc");
    assert_eq!(
        cs.spec.image.as_deref(),
        Some("quay.io/reverse-words/reverse-words-operator-catalog:latest")
    );
    assert_eq!(
        cs.spec
            .grpc_pod_config
            .as_ref()
            .and_then(|g| g.security_context_config.as_deref()),
        Some("restricted")
    );
    assert_eq!(
        cs.spec
            .update_strategy
            .as_ref()
            .and_then(|u| u.registry_poll.as_ref())
            .and_then(|r| r.interval.as_deref()),
        Some("10m")
    );
    let og: OperatorGroup = parse_back(&root.join("olm/operatorgroup.yaml"), true);
    assert_eq!(
        og.spec.target_namespaces,
        Some(vec!["reverse-words-operator".to_string()])
    );
    let sub: Subscription = parse_back(&root.join("olm/subscription.yaml"), true);
    assert_eq!(sub.spec.name, "reverse-words-operator");
    assert_eq!(sub.spec.channel.as_deref(), Some("stable"));
    assert_eq!(sub.spec.source, cs.metadata.name.clone().unwrap());
    assert_eq!(sub.spec.source_namespace, "reverse-words-operator");
    assert_eq!(sub.spec.install_plan_approval.as_deref(), Some("Automatic"));
    let ns: Namespace = parse_back(&root.join("olm/namespace.yaml"), true);
    assert_eq!(ns.metadata.name.as_deref(), Some("reverse-words-operator"));

    // Plain manifests: each into its k8s-openapi type.
    let mut kinds = Vec::new();
    for (rel, _) in read_tree(&root.join("plain")) {
        if rel.ends_with("kustomization.yaml") {
            continue;
        }
        let path = root.join("plain").join(&rel);
        let v: Value = olm_bundler::yaml::load_one(&path).unwrap();
        let kind = v["kind"].as_str().unwrap().to_string();
        match kind.as_str() {
            "Namespace" => drop(parse_back::<Namespace>(&path, false)),
            "CustomResourceDefinition" => {
                drop(parse_back::<CustomResourceDefinition>(&path, false))
            }
            "ServiceAccount" => drop(parse_back::<ServiceAccount>(&path, false)),
            "ClusterRole" => drop(parse_back::<ClusterRole>(&path, false)),
            "ClusterRoleBinding" => drop(parse_back::<ClusterRoleBinding>(&path, false)),
            "Role" => drop(parse_back::<Role>(&path, false)),
            "RoleBinding" => drop(parse_back::<RoleBinding>(&path, false)),
            "Deployment" => drop(parse_back::<Deployment>(&path, false)),
            _ => drop(parse_back::<DynamicObject>(&path, false)),
        }
        kinds.push(kind);
    }
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "CustomResourceDefinition",
            "Deployment",
            "Namespace",
            "ReverseWordsApp",
            "Role",
            "RoleBinding",
            "ServiceAccount"
        ]
    );
}

#[test]
fn check_passes_when_fresh_and_lists_stale_missing_and_extra_files() {
    let dir = tempfile::tempdir().unwrap();
    assert!(generate_rw(dir.path(), &[]).status.success());
    let ok = generate_rw(dir.path(), &["--check"]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert!(
        text(&ok.stdout).contains("is up to date (19 files)"),
        "{}",
        text(&ok.stdout)
    );

    let sub = dir.path().join("olm/subscription.yaml");
    let edited = std::fs::read_to_string(&sub)
        .unwrap()
        .replace("channel: stable", "channel: fast");
    std::fs::write(&sub, &edited).unwrap();
    std::fs::remove_file(dir.path().join("olm/namespace.yaml")).unwrap();
    std::fs::write(dir.path().join("plain/old.yaml"), "kind: Old\n").unwrap();

    let bad = generate_rw(dir.path(), &["--check"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = text(&bad.stderr);
    assert!(err.contains("is stale"), "{err}");
    assert!(
        err.contains(
            "olm/subscription.yaml:13: have \"  channel: fast\", want \"  channel: stable\""
        ),
        "{err}"
    );
    assert!(
        err.contains("missing ") && err.contains("olm/namespace.yaml"),
        "{err}"
    );
    assert!(
        err.contains("extra ") && err.contains("plain/old.yaml"),
        "{err}"
    );
    // --check writes nothing.
    assert_eq!(std::fs::read_to_string(&sub).unwrap(), edited);

    // A real run repairs all three.
    let fix = generate_rw(dir.path(), &[]);
    assert!(fix.status.success());
    assert!(
        text(&fix.stdout).contains("removed"),
        "{}",
        text(&fix.stdout)
    );
    assert!(generate_rw(dir.path(), &["--check"]).status.success());
}

#[test]
fn bad_input_is_reported_with_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = out_dir.to_str().unwrap();
    let base = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "deploy",
            "generate",
            "--catalog-image",
            "registry.test/c:v1",
            "--package",
            "demo",
            "--output",
            out,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let run = |args: Vec<String>, stdin: Option<&[u8]>| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        olm(&refs, stdin)
    };

    let o = run(
        base(&["--manifests", "-"]),
        Some(b"apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n"),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("<stdin>: document 2: missing kind"),
        "{}",
        text(&o.stderr)
    );

    let o = run(base(&["--manifests", "-"]), Some(b"a: [1, 2\nb: 3\n"));
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("<stdin>:"), "{}", text(&o.stderr));

    let bad_dir = dir.path().join("m");
    std::fs::create_dir_all(&bad_dir).unwrap();
    std::fs::write(bad_dir.join("x.yaml"), "kind: [\n").unwrap();
    let o = run(base(&["--manifests", bad_dir.to_str().unwrap()]), None);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("x.yaml:"), "{}", text(&o.stderr));

    let o = run(base(&["--install-mode", "single"]), None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("--target-namespaces: SingleNamespace needs exactly one"),
        "{}",
        text(&o.stderr)
    );

    let o = run(base(&["--install-mode", "cluster"]), None);
    assert_eq!(o.status.code(), Some(2), "usage error");

    let o = run(base(&["--poll-interval", "1d"]), None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("--poll-interval"),
        "{}",
        text(&o.stderr)
    );

    let o = run(base(&["--namespace", "Not_Valid"]), None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("--namespace"),
        "{}",
        text(&o.stderr)
    );

    // Nothing was written by any failed run.
    assert!(!out_dir.exists());
}

#[test]
fn kustomize_builds_the_trees_and_overrides_the_catalog_image() {
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .map(|o| !o.status.success())
        .unwrap_or(true)
    {
        prerequisite::missing("kubectl not installed; kustomize build of deploy trees not checked");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("deploy");
    assert!(generate_rw(&root, &[]).status.success());
    let build = |d: &Path| {
        let o = Command::new("kubectl")
            .arg("kustomize")
            .arg(d)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}: {}", d.display(), text(&o.stderr));
        text(&o.stdout)
    };
    let olm_out = build(&root.join("olm"));
    assert!(olm_out.contains("kind: CatalogSource"));
    assert!(olm_out.contains("targetNamespaces"));
    let plain_out = build(&root.join("plain"));
    assert_eq!(plain_out.matches("\nkind: ").count(), 8, "{plain_out}");
    assert!(build(&root.join("plain/samples")).contains("kind: ReverseWordsApp"));

    // An overlay: AllNamespaces component plus a released catalog image.
    let overlay = dir.path().join("overlay");
    std::fs::create_dir_all(&overlay).unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "resources: [../deploy/olm]\ncomponents: [../deploy/olm/all-namespaces]\nimages:\n\
         - name: quay.io/reverse-words/reverse-words-operator-catalog\n  newTag: v9.9.9\n",
    )
    .unwrap();
    let o = build(&overlay);
    assert!(
        o.contains("image: quay.io/reverse-words/reverse-words-operator-catalog:v9.9.9"),
        "{o}"
    );
    assert!(!o.contains("targetNamespaces"), "{o}");
}
