//! `olm bundle scorecard` and `bundle::scorecard::run_offline`: operator-sdk scorecard's
//! built-in tests on operator-sdk's own scorecard bundle (recreated under
//! tests/fixtures/scorecard) and on the real bundles of ../shared/data, each expected verdict
//! written down from the rules of operator-sdk's `internal/scorecard/tests` (basic.go,
//! olm.go); the JSON checked against a schema written from the v1alpha3 Go types; the text and
//! xunit outputs; the cluster run against the fake API server.

#[path = "support/fake_kube.rs"]
mod fake_kube;
#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use olm_bundler::bundle::scorecard::{self, State, TestList, builtin::Loaded, config::Plan};
use olm_bundler::confined::Tree;
use olm_bundler::ops::scorecard::{ClusterOptions, run_in_cluster};
use serde_json::{Value, json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/scorecard")
        .join(name)
}

fn shared() -> Option<PathBuf> {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.join("bundles").is_dir());
    if found.is_none() {
        prerequisite::missing(&format!(
            "../shared/data/bundles (beside {})",
            manifest.display()
        ));
    }
    found
}

/// Each test's (label `test` without `-test`, state).
fn states(list: &TestList) -> Vec<(String, State)> {
    list.tests()
        .iter()
        .map(|t| {
            let name = t.spec.labels.get("test").cloned().unwrap_or_default();
            (
                name.trim_end_matches("-test").to_string(),
                t.status.results[0].state,
            )
        })
        .collect()
}

fn result<'a>(list: &'a TestList, test: &str) -> &'a scorecard::TestResult {
    &list
        .tests()
        .iter()
        .find(|t| t.spec.labels.get("test").map(String::as_str) == Some(test))
        .unwrap_or_else(|| panic!("{test} not run"))
        .status
        .results[0]
}

/// operator-sdk's memcached scorecard bundle. Its Go tests assert one CR in alm-examples;
/// under the current rules: the CR has a spec (basic-check-spec passes), its spec key `size`
/// has a spec descriptor and its fields are in the v1beta1 CRD's top-level validation (pass),
/// the owned CRD lists no resources (fail), and the CR has a status but the owned CRD no
/// status descriptor (fail). The v1beta1 CRD leaves preserveUnknownFields at its default,
/// true, which the api's CRD validator refuses (olm-bundle-validation fails).
#[test]
fn operator_sdks_memcached_bundle() {
    let list = scorecard::run_offline(&Tree::host(&fixture("memcached")), "").unwrap();
    let got = states(&list);
    let want = [
        ("basic-check-spec", State::Pass),
        ("olm-bundle-validation", State::Fail),
        ("olm-crds-have-validation", State::Pass),
        ("olm-crds-have-resources", State::Fail),
        ("olm-spec-descriptors", State::Pass),
        ("olm-status-descriptors", State::Fail),
    ];
    let want: Vec<(String, State)> = want.iter().map(|(n, s)| (n.to_string(), *s)).collect();
    assert_eq!(got, want);

    let r = result(&list, "olm-crds-have-resources-test");
    assert_eq!(r.name, "olm-crds-have-resources");
    assert_eq!(r.errors, ["Owned CRDs do not have resources specified"]);
    assert_eq!(
        r.log,
        "Loaded ClusterServiceVersion: memcached-operator.v0.0.1\n"
    );

    let r = result(&list, "olm-status-descriptors-test");
    assert_eq!(
        r.errors,
        ["memcacheds.cache.example.com does not have a status descriptor"]
    );
    assert_eq!(
        r.suggestions,
        [
            "add status descriptor for the crd memcacheds.cache.example.com. If your project is built using Golang you can use the csv markers. More info: https://sdk.operatorframework.io/docs/building-operators/golang/references/markers/"
        ]
    );
    assert_eq!(
        r.log,
        "Loaded ClusterServiceVersion: memcached-operator.v0.0.1\nLoaded 1 Custom Resources from alm-examples\n"
    );

    let r = result(&list, "olm-crds-have-validation-test");
    assert!(r.errors.is_empty() && r.suggestions.is_empty());
    assert!(r.log.starts_with("Loaded 1 Custom Resources from alm-examples\nLoaded CustomresourceDefinitions: [memcacheds.cache.example.com]"));

    let r = result(&list, "olm-bundle-validation-test");
    assert!(
        r.errors.iter().any(|e| e.contains("preserveUnknownFields")),
        "{:?}",
        r.errors
    );
    assert!(
        r.suggestions.iter().any(|s| s.contains("minKubeVersion")),
        "{:?}",
        r.suggestions
    );
    assert_eq!(
        r.log,
        "level=debug msg=\"Found manifests directory\" name=bundle-test\nlevel=debug msg=\"Found metadata directory\" name=bundle-test\nlevel=debug msg=\"Getting mediaType info from manifests directory\" name=bundle-test\nlevel=info msg=\"Found annotations file\" name=bundle-test\nlevel=info msg=\"Could not find optional dependencies file\" name=bundle-test\n"
    );
}

/// operator-sdk's noSpecBundle: its Go test asserts basic-check-spec fails. The CR has no
/// spec (olm-spec-descriptors fails without an error message, as upstream's does) and a
/// non-empty status (`nodes: null`) with no status descriptor and no schema for `nodes`.
#[test]
fn operator_sdks_no_spec_bundle() {
    let list = scorecard::run_offline(&Tree::host(&fixture("no-spec")), "").unwrap();
    let r = result(&list, "basic-check-spec-test");
    assert_eq!(r.state, State::Fail);
    assert_eq!(
        r.errors,
        ["error spec does not exist for the custom resource example-memcached"]
    );
    let r = result(&list, "olm-spec-descriptors-test");
    assert_eq!(r.state, State::Fail);
    assert!(r.errors.is_empty());
    assert_eq!(
        result(&list, "olm-status-descriptors-test").state,
        State::Fail
    );
    // `nodes` is not a property of the CRD's status schema (it has `status`).
    let r = result(&list, "olm-crds-have-validation-test");
    assert_eq!(r.state, State::Fail);
    assert_eq!(
        r.suggestions,
        ["Add CRD validation for status field `nodes` in Memcached/v1alpha1"]
    );
}

/// The verdicts of the six tests on every shared bundle, in the order basic-check-spec,
/// olm-bundle-validation, olm-crds-have-validation, olm-crds-have-resources,
/// olm-spec-descriptors, olm-status-descriptors (`-` where the bundle's config has no such
/// test). basic, resources, spec and status were also derived by a separate reading of the
/// rules (a Python script over the same files) and agree; bundle-validation is the api's
/// default validators' verdict, which tests/peer_fixtures.rs holds to the Go validators'.
const SHARED: &[(&str, &str)] = &[
    (
        "bundles/certified-operators/operators/fujitsu-enterprise-postgres-operator/v5.1.9",
        "P P F F F P",
    ),
    (
        "bundles/certified-operators/operators/ibm-security-verify-operator/23.3.0",
        "P P P P P P",
    ),
    (
        "bundles/certified-operators/operators/joget-dx8-operator/0.0.13",
        "P P F F F P",
    ),
    (
        "bundles/certified-operators/operators/leaksignal-operator/1.6.1",
        "P P P F F P",
    ),
    (
        "bundles/community-operators-prod/operators/cockroachdb/2.1.1",
        "P F P P F P",
    ),
    (
        "bundles/community-operators-prod/operators/community-trivy-operator/2.1.1",
        "P P F P P P",
    ),
    (
        "bundles/community-operators-prod/operators/deployment-validation-operator/0.2.2",
        "P P P P P P",
    ),
    (
        "bundles/community-operators-prod/operators/eventing-kogito/1.1.0",
        "P P - P P P",
    ),
    (
        "bundles/community-operators-prod/operators/jaeger/1.11.0",
        "P F P F F P",
    ),
    // Objects at the bundle root: the tests find the CSV as GetBundleFromDir does; the
    // format check fails.
    (
        "bundles/community-operators-prod/operators/jupyter-notebook-validator-operator/1.0.7",
        "P F P F F P",
    ),
    (
        "bundles/community-operators-prod/operators/k8gb/0.11.4",
        "P P P F F P",
    ),
    (
        "bundles/community-operators-prod/operators/mercury-operator/1.0.1",
        "P P P P F P",
    ),
    (
        "bundles/community-operators-prod/operators/multicluster-operators-subscription/0.1.5",
        "P F F F F F",
    ),
    (
        "bundles/community-operators-prod/operators/observability-operator/0.0.22",
        "P P P F F P",
    ),
    (
        "bundles/community-operators-prod/operators/pelorus-operator/0.0.6",
        "P P P F F P",
    ),
    (
        "bundles/community-operators-prod/operators/skupper-operator/1.9.0",
        "P P P P P P",
    ),
    (
        "bundles/community-operators-prod/operators/stackgres-community/1.18.8",
        "P P F F F P",
    ),
    (
        "bundles/community-operators-prod/operators/t8c/7.16.0",
        "P F P F F P",
    ),
    (
        "bundles/community-operators-prod/operators/trustify-operator/0.1.0-alpha.1",
        "P P P F P P",
    ),
    // A GitHubSecretEngineConfig example without a spec.
    (
        "bundles/community-operators-prod/operators/vault-config-operator/0.8.52",
        "F P F F F P",
    ),
    ("sdk-projects/go/operator-sdk-bundle", "P P P P P P"),
    ("sdk-projects/helm/operator-sdk-bundle", "P P F F F P"),
];

#[test]
fn shared_bundles_get_the_verdicts_the_rules_give() {
    let Some(root) = shared() else { return };
    let order = [
        "basic-check-spec",
        "olm-bundle-validation",
        "olm-crds-have-validation",
        "olm-crds-have-resources",
        "olm-spec-descriptors",
        "olm-status-descriptors",
    ];
    let mut wrong = Vec::new();
    for (dir, want) in SHARED {
        let list = scorecard::run_offline(&Tree::host(&root.join(dir)), "").unwrap();
        let got: BTreeMap<String, State> = states(&list).into_iter().collect();
        let got: Vec<&str> = order
            .iter()
            .map(|t| match got.get(*t) {
                Some(State::Pass) => "P",
                Some(State::Fail) => "F",
                Some(State::Error) => "E",
                None => "-",
            })
            .collect();
        if got.join(" ") != *want {
            wrong.push(format!("{dir}: got {}, want {want}", got.join(" ")));
        }
        // Same input, same bytes.
        let again = scorecard::run_offline(&Tree::host(&root.join(dir)), "").unwrap();
        assert_eq!(
            scorecard::output::json(&list),
            scorecard::output::json(&again)
        );
        check_schema(&serde_json::from_str(&scorecard::output::json(&list)).unwrap())
            .unwrap_or_else(|e| panic!("{dir}: {e}"));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A schema of operator-framework/api's v1alpha3 `TestList`, from the Go types: each
/// object's keys in the struct's field order, required ones (no omitempty) present, omitted
/// ones absent when empty, and each value of its Go type.
fn check_schema(list: &Value) -> Result<(), String> {
    fn keys(v: &Value, at: &str, allowed: &[&str], required: &[&str]) -> Result<(), String> {
        let obj = v.as_object().ok_or(format!("{at}: not an object"))?;
        let mut last = None;
        for k in obj.keys() {
            let i = allowed
                .iter()
                .position(|a| a == k)
                .ok_or(format!("{at}: unknown key {k}"))?;
            if last.is_some_and(|l| i < l) {
                return Err(format!("{at}: {k} out of Go's field order"));
            }
            last = Some(i);
        }
        for r in required {
            if !obj.contains_key(*r) {
                return Err(format!("{at}: missing {r}"));
            }
        }
        Ok(())
    }
    fn strings(v: &Value, at: &str) -> Result<(), String> {
        let a = v.as_array().ok_or(format!("{at}: not a list"))?;
        if a.is_empty() {
            return Err(format!("{at}: empty list not omitted"));
        }
        a.iter()
            .all(Value::is_string)
            .then_some(())
            .ok_or(format!("{at}: not all strings"))
    }
    fn nonempty_string(v: &Value, at: &str) -> Result<(), String> {
        match v.as_str() {
            Some(s) if !s.is_empty() => Ok(()),
            _ => Err(format!("{at}: not a non-empty string")),
        }
    }
    keys(
        list,
        "TestList",
        &["kind", "apiVersion", "items"],
        &["items"],
    )?;
    if list["kind"] != "TestList" || list["apiVersion"] != "scorecard.operatorframework.io/v1alpha3"
    {
        return Err("TestList: kind/apiVersion".into());
    }
    let items = match &list["items"] {
        Value::Null => return Ok(()),
        Value::Array(a) => a,
        _ => return Err("items: not a list or null".into()),
    };
    for (i, t) in items.iter().enumerate() {
        let at = format!("items[{i}]");
        keys(
            t,
            &at,
            &["kind", "apiVersion", "spec", "status"],
            &["spec", "status"],
        )?;
        if t["kind"] != "Test" {
            return Err(format!("{at}: kind"));
        }
        let spec = &t["spec"];
        keys(
            spec,
            &format!("{at}.spec"),
            &["image", "uniqueID", "entrypoint", "labels", "storage"],
            &["image", "storage"],
        )?;
        if !spec["image"].is_string() {
            return Err(format!("{at}.spec.image"));
        }
        if let Some(u) = spec.get("uniqueID") {
            nonempty_string(u, &format!("{at}.spec.uniqueID"))?;
        }
        if let Some(e) = spec.get("entrypoint") {
            strings(e, &format!("{at}.spec.entrypoint"))?;
        }
        if let Some(l) = spec.get("labels") {
            let m = l.as_object().ok_or(format!("{at}.spec.labels"))?;
            if m.is_empty() || !m.values().all(Value::is_string) {
                return Err(format!("{at}.spec.labels"));
            }
        }
        let storage = &spec["storage"];
        keys(storage, &format!("{at}.spec.storage"), &["spec"], &["spec"])?;
        keys(
            &storage["spec"],
            &format!("{at}.spec.storage.spec"),
            &["mountPath"],
            &["mountPath"],
        )?;
        let mp = &storage["spec"]["mountPath"];
        keys(
            mp,
            &format!("{at}.spec.storage.spec.mountPath"),
            &["path"],
            &[],
        )?;
        if let Some(p) = mp.get("path") {
            nonempty_string(p, &format!("{at}.mountPath.path"))?;
        }
        let status = &t["status"];
        keys(status, &format!("{at}.status"), &["results"], &[])?;
        if let Some(results) = status.get("results") {
            let rs = results.as_array().ok_or(format!("{at}.status.results"))?;
            if rs.is_empty() {
                return Err(format!("{at}.status.results: empty list not omitted"));
            }
            for (j, r) in rs.iter().enumerate() {
                let at = format!("{at}.status.results[{j}]");
                keys(
                    r,
                    &at,
                    &[
                        "name",
                        "log",
                        "state",
                        "errors",
                        "suggestions",
                        "creationTimestamp",
                    ],
                    &["state", "creationTimestamp"],
                )?;
                for k in ["name", "log"] {
                    if let Some(v) = r.get(k) {
                        nonempty_string(v, &format!("{at}.{k}"))?;
                    }
                }
                if !matches!(r["state"].as_str(), Some("pass" | "fail" | "error")) {
                    return Err(format!("{at}.state"));
                }
                for k in ["errors", "suggestions"] {
                    if let Some(v) = r.get(k) {
                        strings(v, &format!("{at}.{k}"))?;
                    }
                }
                if !(r["creationTimestamp"].is_null() || r["creationTimestamp"].is_string()) {
                    return Err(format!("{at}.creationTimestamp"));
                }
            }
        }
    }
    Ok(())
}

#[test]
fn the_schema_check_refuses_what_go_would_not_write() {
    let good = serde_json::from_str::<Value>(&scorecard::output::json(
        &scorecard::run_offline(&Tree::host(&fixture("memcached")), "").unwrap(),
    ))
    .unwrap();
    check_schema(&good).unwrap();
    let mut bad = good.clone();
    bad["items"][0]["status"]["results"][0]["errors"] = json!([]);
    assert!(check_schema(&bad).is_err());
    let mut bad = good.clone();
    bad["items"][0]["spec"]
        .as_object_mut()
        .unwrap()
        .remove("storage");
    assert!(check_schema(&bad).is_err());
    let mut bad = good.clone();
    bad["items"][0]["status"]["results"][0]["state"] = json!("passed");
    assert!(check_schema(&bad).is_err());
    // Key order is part of the shape.
    let reordered: Value = serde_json::from_str(
        r#"{"apiVersion": "scorecard.operatorframework.io/v1alpha3", "kind": "TestList", "items": null}"#,
    )
    .unwrap();
    assert!(check_schema(&reordered).is_err());
}

/// A copy of the memcached fixture with `config` as its configuration.
fn with_config(config: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(d.path().join(sub)).unwrap();
        for e in std::fs::read_dir(fixture("memcached").join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), d.path().join(sub).join(e.file_name())).unwrap();
        }
    }
    if !config.is_empty() {
        std::fs::create_dir_all(d.path().join("tests/scorecard")).unwrap();
        std::fs::write(d.path().join("tests/scorecard/config.yaml"), config).unwrap();
    }
    d
}

const CUSTOM: &str = "kind: Configuration\napiVersion: scorecard.operatorframework.io/v1alpha3\nmetadata:\n  name: config\nstages:\n- parallel: true\n  tests:\n  - image: quay.io/operator-framework/scorecard-test:v1.42.0\n    entrypoint: [scorecard-test, basic-check-spec]\n    labels: {suite: basic, test: basic-check-spec-test}\n  - image: quay.io/example/custom-scorecard-tests:v0.0.1\n    entrypoint: [custom-scorecard-tests, customtest1]\n    labels: {suite: custom, test: customtest1}\n- tests:\n  - image: quay.io/operator-framework/scorecard-test-kuttl:v1.42.0\n    labels: {suite: kuttlsuite, test: kuttltest1}\n";

#[test]
fn tests_of_other_images_need_a_cluster_and_say_so() {
    let d = with_config(CUSTOM);
    let list = scorecard::run_offline(&Tree::host(d.path()), "").unwrap();
    let got = states(&list);
    assert_eq!(got[0], ("basic-check-spec".to_string(), State::Pass));
    for (i, name) in [(1, "customtest1"), (2, "kuttltest1")] {
        assert_eq!(got[i].1, State::Error);
        let r = &list.tests()[i].status.results[0];
        assert_eq!(r.name, name);
        assert!(
            r.errors[0].starts_with("needs a cluster: image "),
            "{:?}",
            r.errors
        );
    }
    assert!(list.has_failing_test());
}

#[test]
fn selectors_pick_tests_as_operator_sdk_does() {
    let d = with_config(CUSTOM);
    let names = |sel: &str| -> Vec<String> {
        states(&scorecard::run_offline(&Tree::host(d.path()), sel).unwrap())
            .into_iter()
            .map(|(n, _)| n)
            .collect()
    };
    assert_eq!(names("suite=custom"), ["customtest1"]);
    assert_eq!(
        names("suite in (basic, kuttlsuite)"),
        ["basic-check-spec", "kuttltest1"]
    );
    assert_eq!(names("suite!=custom"), ["basic-check-spec", "kuttltest1"]);
    assert_eq!(names("!suite").len(), 0);
    assert_eq!(names("test=basic-check-spec-test"), ["basic-check-spec"]);
    assert!(scorecard::run_offline(&Tree::host(d.path()), "suite in olm").is_err());
    // Without a config the default one runs (operator-sdk's six tests).
    let bare = with_config("");
    assert_eq!(
        states(&scorecard::run_offline(&Tree::host(bare.path()), "suite=olm").unwrap()).len(),
        5
    );
}

fn olm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .env_remove("KUBECONFIG")
        .env("HOME", "/nonexistent")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_command_prints_each_format_and_exits_as_operator_sdk() {
    let dir = fixture("memcached");
    let dir = dir.to_str().unwrap();
    let (code, out, _) = olm(&[
        "bundle",
        "scorecard",
        dir,
        "-l",
        "test=basic-check-spec-test",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("\tName: basic-check-spec\n\tState: pass\n\n\n\n"),
        "{out}"
    );
    let (code, out, _) = olm(&["bundle", "scorecard", dir, "-o", "json"]);
    assert_eq!(code, 1);
    check_schema(&serde_json::from_str(&out).unwrap()).unwrap();
    let (code, out, _) = olm(&[
        "bundle",
        "scorecard",
        dir,
        "-o",
        "xunit",
        "--selector",
        "suite=olm",
    ]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with(
            "<testsuites name=\"scorecard\">\n  <testsuite name=\"olm-bundle-validation-test\""
        ),
        "{out}"
    );
    assert!(out.contains(
        "<failure type=\"failure\">Owned CRDs do not have resources specified</failure>"
    ));
    let (code, out, _) = olm(&["bundle", "scorecard", dir, "-l", "nothing=here"]);
    assert_eq!((code, out.as_str()), (0, "0 tests selected\n"));
    let (code, out, _) = olm(&["bundle", "scorecard", dir, "--list", "-o", "json"]);
    assert_eq!(code, 0);
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list["items"].as_array().unwrap().len(), 6);
    assert_eq!(list["items"][0]["status"], json!({}));
    let (code, _, err) = olm(&["bundle", "scorecard", dir, "-l", "suite in olm"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("could not parse selector"), "{err}");
    let (code, _, err) = olm(&["bundle", "scorecard", "/nonexistent/bundle"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_broken_config_names_the_file_and_field() {
    let d = with_config("stages:\n- tests:\n  - image: x\n    entrypoint: 3\n");
    let e = scorecard::run_offline(&Tree::host(d.path()), "")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tests/scorecard/config.yaml") && e.contains("entrypoint"),
        "{e}"
    );
    let (code, _, err) = olm(&["bundle", "scorecard", d.path().to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
}

/// A controller that plays the kubelet: each test pod terminates at once and logs `result`.
fn kubelet(result: Option<Value>) -> fake_kube::Controller {
    Box::new(move |objs: &mut fake_kube::Objects| {
        let Some(result) = &result else { return };
        let pods: Vec<String> = objs
            .keys()
            .filter(|k| k.starts_with("/api/v1/namespaces/ops/pods/") && !k.ends_with("/log"))
            .cloned()
            .collect();
        for k in pods {
            let pod = objs.get_mut(&k).unwrap();
            if pod.get("status").is_some() {
                continue;
            }
            pod["status"] = json!({"containerStatuses": [{
                "name": "scorecard-test", "image": "x", "imageID": "x", "ready": false,
                "restartCount": 0, "state": {"terminated": {"exitCode": 0}}
            }]});
            objs.insert(format!("{k}/log"), json!({"__raw": result.to_string()}));
        }
    })
}

fn cluster_opts(wait: Duration) -> ClusterOptions {
    ClusterOptions {
        namespace: Some("ops".into()),
        wait_time: wait,
        ..Default::default()
    }
}

#[tokio::test]
async fn custom_tests_run_as_pods_and_their_logs_are_the_results() {
    let d = with_config(CUSTOM);
    let tree = Tree::host(d.path());
    let plan = Plan::load(&tree, "").unwrap();
    let loaded = Loaded::load(&tree);
    let custom_result = json!({"results": [{"name": "customtest1", "state": "pass", "log": "ok"}]});
    let (client, shared) = fake_kube::fake(false, Default::default(), kubelet(Some(custom_result)));
    let out = run_in_cluster(
        client,
        &plan,
        &loaded,
        &tree,
        &cluster_opts(Duration::from_secs(20)),
    )
    .await
    .unwrap();
    assert!(!out.timed_out);
    assert_eq!(out.cleanup_error, None);
    let got = states(&out.list);
    assert_eq!(
        got,
        [
            ("basic-check-spec".to_string(), State::Pass),
            ("customtest1".to_string(), State::Pass),
            ("kuttltest1".to_string(), State::Pass),
        ]
    );
    assert_eq!(out.list.tests()[1].status.results[0].log, "ok");
    let s = shared.lock().unwrap();
    // The bundle went into a ConfigMap; one pod per test of another image, labelled with
    // the run; then the pods (by label) and the ConfigMap were deleted.
    let (_, cm) = s
        .bodies
        .iter()
        .find(|(k, _)| k == "POST /api/v1/namespaces/ops/configmaps")
        .expect("a ConfigMap");
    let cm_name = cm["metadata"]["name"].as_str().unwrap().to_string();
    assert!(cm_name.starts_with("scorecard-test-"));
    assert!(
        cm["binaryData"]["bundle.tar.gz"]
            .as_str()
            .is_some_and(|b| !b.is_empty())
    );
    let pods: Vec<&Value> = s
        .bodies
        .iter()
        .filter(|(k, _)| k == "POST /api/v1/namespaces/ops/pods")
        .map(|(_, v)| v)
        .collect();
    assert_eq!(pods.len(), 2);
    for p in &pods {
        assert_eq!(p["metadata"]["labels"]["testrun"], cm_name.as_str());
        assert_eq!(
            p["spec"]["volumes"][0]["configMap"]["name"],
            cm_name.as_str()
        );
        assert_eq!(p["spec"]["serviceAccountName"], "default");
    }
    assert_eq!(
        pods[0]["spec"]["containers"][0]["command"],
        json!(["custom-scorecard-tests", "customtest1"])
    );
    assert!(
        s.log
            .iter()
            .any(|l| l == "DELETE /api/v1/namespaces/ops/pods")
    );
    assert!(
        s.log
            .iter()
            .any(|l| *l == format!("DELETE /api/v1/namespaces/ops/configmaps/{cm_name}"))
    );
    assert!(
        s.objects.keys().all(|k| !k.contains("/pods/")),
        "pods left: {:?}",
        s.objects.keys()
    );
}

#[tokio::test]
async fn pods_that_never_finish_hit_the_wait_time_and_are_still_cleaned_up() {
    let d = with_config(CUSTOM);
    let tree = Tree::host(d.path());
    let plan = Plan::load(&tree, "suite=custom").unwrap();
    let loaded = Loaded::load(&tree);
    let (client, shared) = fake_kube::fake(false, Default::default(), kubelet(None));
    let out = run_in_cluster(
        client,
        &plan,
        &loaded,
        &tree,
        &cluster_opts(Duration::from_millis(300)),
    )
    .await
    .unwrap();
    assert!(out.timed_out);
    let r = &out.list.tests()[0].status.results[0];
    assert_eq!(
        (r.state, r.errors.as_slice()),
        (
            State::Fail,
            ["context deadline exceeded".to_string()].as_slice()
        )
    );
    assert!(
        shared
            .lock()
            .unwrap()
            .log
            .iter()
            .any(|l| l == "DELETE /api/v1/namespaces/ops/pods")
    );
}

#[tokio::test]
async fn a_log_that_is_not_a_result_fails_the_test_with_the_log() {
    let d = with_config(CUSTOM);
    let tree = Tree::host(d.path());
    let plan = Plan::load(&tree, "suite=custom").unwrap();
    let loaded = Loaded::load(&tree);
    let (client, _shared) = fake_kube::fake(
        false,
        Default::default(),
        kubelet(Some(json!("panic: boom"))),
    );
    let mut opts = cluster_opts(Duration::from_secs(10));
    opts.skip_cleanup = true;
    let out = run_in_cluster(client, &plan, &loaded, &tree, &opts)
        .await
        .unwrap();
    let r = &out.list.tests()[0].status.results[0];
    assert_eq!(r.state, State::Fail);
    assert_eq!(r.log, "\"panic: boom\"");
}

/// An image argument is pulled through the bundle source (here an OCI layout `olm bundle
/// build` wrote) and gives the directory's results, tests/scorecard/config.yaml included.
#[test]
fn a_bundle_image_scores_as_its_directory() {
    let out = tempfile::tempdir().unwrap();
    let layout = format!("oci:{}:v0.0.1", out.path().join("layout").display());
    let dir = fixture("memcached");
    let (code, _, err) = olm(&["bundle", "build", dir.to_str().unwrap(), "-t", &layout]);
    assert_eq!(code, 0, "{err}");
    let (code, from_image, err) = olm(&["bundle", "scorecard", &layout, "-o", "json"]);
    assert_eq!(code, 1, "{err}");
    let (_, from_dir, _) = olm(&["bundle", "scorecard", dir.to_str().unwrap(), "-o", "json"]);
    let states = |text: &str| -> Vec<(String, String)> {
        let v: Value = serde_json::from_str(text).unwrap();
        v["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["spec"]["image"].as_str().unwrap().to_string(),
                    t["status"]["results"][0]["state"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                )
            })
            .collect()
    };
    assert_eq!(states(&from_image), states(&from_dir));
    assert!(
        from_image.contains("scorecard-test:dev"),
        "the bundle's own config was read"
    );
}
