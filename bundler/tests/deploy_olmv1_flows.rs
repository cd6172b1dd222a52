//! OLM v1 flows (`deploy::olmv1::flow`) over the fake API server (tests/support/fake_kube.rs),
//! with a scripted operator-controller and catalogd: the happy path (catalog Serving, RBAC,
//! Installed, Deployments Available), a PreflightPermissions failure, status, upgrade and
//! uninstall.

#[path = "support/fake_kube.rs"]
mod fake_kube;

use fake_kube::*;
use olm_bundler::bundle::load::BundleDir;
use olm_bundler::deploy::flow::FlowError;
use olm_bundler::deploy::olmv1::flow;
use olm_bundler::deploy::olmv1::objects::{CatalogImage, ExtensionSpec, UpgradePolicy, V1Names};
use olm_bundler::deploy::olmv1::rbac::{RbacTarget, installer_rbac};
use serde_json::json;

const CC: &str = "/apis/olm.operatorframework.io/v1/clustercatalogs/demo-catalog";
const CE: &str = "/apis/olm.operatorframework.io/v1/clusterextensions/demo";
const DEP: &str = "/apis/apps/v1/namespaces/ops/deployments/demo-operator";

fn spec() -> ExtensionSpec {
    ExtensionSpec {
        name: "demo".into(),
        package: "demo".into(),
        namespace: NS.into(),
        service_account: "demo-installer".into(),
        channels: vec!["stable".into()],
        version: None,
        upgrade_policy: UpgradePolicy::CatalogProvided,
        catalog: CatalogImage::new("demo-catalog", "registry.test/demo-catalog:v1", None).unwrap(),
    }
}

const PREFLIGHT: &str = "pre-authorization failed: service account requires the following \
    permissions to manage cluster extension:\n Namespace:\"\" APIGroups:[apiextensions.k8s.io] \
    Resources:[customresourcedefinitions] ResourceNames:[widgets.demo.test] Verbs:[delete,get,patch,update]";

/// Plays catalogd and operator-controller: the catalog serves after a few requests; the
/// extension installs (or fails preflight), then its Deployment becomes Available later.
fn controller(preflight_fails: bool, version: &'static str) -> Controller {
    let mut ticks = 0usize;
    let mut dep_ticks = 0usize;
    Box::new(move |objs: &mut Objects| {
        if let Some(cc) = objs.get_mut(CC) {
            ticks += 1;
            cc["status"] = if ticks > 3 {
                json!({"conditions": [
                    {"type": "Progressing", "status": "True", "reason": "Succeeded", "message": "Successfully unpacked"},
                    {"type": "Serving", "status": "True", "reason": "Available", "message": "Serving desired content"}],
                    "resolvedSource": {"type": "Image", "image": {"ref": "registry.test/demo-catalog@sha256:0123"}}})
            } else {
                json!({"conditions": [{"type": "Progressing", "status": "True", "reason": "Retrying",
                    "message": "source catalog content: error applying image: pulling"}]})
            };
        }
        let Some(ce) = objs.get_mut(CE) else { return };
        let generation = ce["metadata"]["generation"].as_i64().unwrap_or(1);
        if preflight_fails {
            ce["status"] = json!({"conditions": [
                {"type": "Installed", "status": "Unknown", "reason": "Failed", "message": "install failed"},
                {"type": "Progressing", "status": "True", "reason": "Retrying", "message": PREFLIGHT}]});
            return;
        }
        ce["status"] = json!({"conditions": [
            {"type": "Installed", "status": "True", "reason": "Succeeded", "observedGeneration": generation,
             "message": format!("Installed bundle registry.test/demo-bundle@sha256:aa successfully")},
            {"type": "Progressing", "status": "True", "reason": "Succeeded", "message": "Desired state reached"}],
            "install": {"bundle": {"name": format!("demo.v{version}"), "version": version}}});
        match objs.get_mut(DEP) {
            None => {
                objs.insert(DEP.into(), json!({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": "demo-operator", "namespace": NS,
                        "labels": {"olm.operatorframework.io/owner-kind": "ClusterExtension",
                                   "olm.operatorframework.io/owner-name": "demo"}},
                    "spec": {"selector": {}, "template": {}},
                    "status": {"replicas": 1, "conditions": [{"type": "Available", "status": "False", "message": "pod Pending"}]}}));
            }
            Some(_) if dep_ticks < 4 => dep_ticks += 1,
            Some(d) => {
                d["status"] = json!({"replicas": 1, "readyReplicas": 1,
                    "conditions": [{"type": "Available", "status": "True"}]});
            }
        }
    })
}

fn rbac() -> olm_bundler::deploy::olmv1::rbac::InstallerRbac {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../bundle");
    installer_rbac(
        &BundleDir::load(&root).unwrap(),
        &RbacTarget {
            extension: "demo".into(),
            namespace: NS.into(),
            service_account: "demo-installer".into(),
            watch_namespace: None,
        },
    )
    .unwrap()
}

#[tokio::test]
async fn install_waits_for_serving_installed_and_available() {
    let (client, server) = fake(true, Objects::new(), controller(false, "1.0.0"));
    let mut rec = Recorder::default();
    let r = rbac();
    let out = flow::install(&client, &spec(), Some(&r), fast(5000), &mut rec)
        .await
        .unwrap();
    assert_eq!(out.bundle, ("demo.v1.0.0".into(), "1.0.0".into()));
    assert_eq!(out.deployments, ["demo-operator"]);
    assert_eq!(out.rbac.len(), 6, "{:?}", out.rbac);
    let log = log_without_polls(&server);
    let posts: Vec<&String> = log.iter().filter(|l| l.starts_with("POST")).collect();
    assert_eq!(
        posts,
        [
            "POST /apis/olm.operatorframework.io/v1/clustercatalogs",
            "POST /api/v1/namespaces",
            "POST /api/v1/namespaces/ops/serviceaccounts",
            "POST /apis/rbac.authorization.k8s.io/v1/clusterroles",
            "POST /apis/rbac.authorization.k8s.io/v1/clusterroles",
            "POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            "POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            "POST /apis/rbac.authorization.k8s.io/v1/namespaces/ops/roles",
            "POST /apis/rbac.authorization.k8s.io/v1/namespaces/ops/rolebindings",
            "POST /apis/olm.operatorframework.io/v1/clusterextensions",
        ]
    );
    let srv = server.lock().unwrap();
    let ce = &srv
        .bodies
        .iter()
        .find(|(k, _)| k.ends_with("/clusterextensions"))
        .unwrap()
        .1;
    assert_eq!(ce["spec"]["serviceAccount"]["name"], "demo-installer");
    assert_eq!(
        ce["spec"]["source"]["catalog"]["channels"],
        json!(["stable"])
    );
    // Progress showed the catalog retrying and the Deployment not yet Available.
    assert!(
        rec.0
            .iter()
            .any(|l| l.contains("Progressing=True/Retrying")),
        "{:?}",
        rec.0
    );
    assert!(
        rec.0
            .iter()
            .any(|l| l.contains("not Available yet: demo-operator")),
        "{:?}",
        rec.0
    );
}

#[tokio::test]
async fn a_preflight_failure_lists_the_missing_permissions_and_says_it_is_retried() {
    let (client, _server) = fake(true, Objects::new(), controller(true, "1.0.0"));
    let err = flow::install(&client, &spec(), None, fast(5000), &mut Recorder::default())
        .await
        .unwrap_err();
    assert!(matches!(err, FlowError::Wait { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("pre-authorization failed"), "{msg}");
    let diag = err.diagnostics().join("\n");
    assert!(diag.contains("ResourceNames:[widgets.demo.test]"), "{diag}");
    assert!(diag.contains("left partly applied"), "{diag}");
    assert!(
        diag.contains("hint: ServiceAccount ops/demo-installer lacks permissions"),
        "{diag}"
    );
}

#[tokio::test]
async fn olm_v1_missing_says_how_to_install_it() {
    let (client, _server) = fake(false, Objects::new(), Box::new(|_: &mut Objects| {}));
    let err = flow::install(&client, &spec(), None, fast(500), &mut Recorder::default())
        .await
        .unwrap_err();
    assert!(matches!(err, FlowError::OlmV1Missing { .. }), "{err}");
}

#[tokio::test]
async fn status_upgrade_and_uninstall() {
    let (client, server) = fake(true, Objects::new(), controller(false, "1.0.0"));
    flow::install(
        &client,
        &spec(),
        Some(&rbac()),
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    let st = flow::status(&client, "demo").await.unwrap();
    assert!(st.healthy(), "{st:?}");
    assert_eq!(st.installed, Some(("demo.v1.0.0".into(), "1.0.0".into())));
    assert_eq!(
        st.catalog.as_ref().unwrap().resolved.as_deref(),
        Some("registry.test/demo-catalog@sha256:0123")
    );
    assert!(
        st.table().contains("Installed=True/Succeeded"),
        "{}",
        st.table()
    );

    // operator-controller moves to 1.1.0 once the version range allows it.
    let mut old = controller(false, "1.0.0");
    let mut new = controller(false, "1.1.0");
    server.lock().unwrap().controller = Box::new(move |objs: &mut Objects| {
        let asked = objs
            .get(CE)
            .is_some_and(|ce| ce["spec"]["source"]["catalog"]["version"] == ">=1.1.0");
        if asked { new(objs) } else { old(objs) }
    });
    // The command's defaults name another namespace and catalog than the install used: the
    // upgrade follows the extension (its namespace, the catalog its selector pins).
    let up = flow::V1UpgradeSpec {
        names: V1Names {
            namespace: "defaults-ns".into(),
            catalog: "defaults-catalog".into(),
            ..spec().names()
        },
        catalog: Some(
            CatalogImage::new("defaults-catalog", "registry.test/demo-catalog:v2", None).unwrap(),
        ),
        channel: None,
        version: Some(">=1.1.0".into()),
        upgrade_policy: None,
    };
    let out = flow::upgrade(&client, &up, fast(5000), &mut Recorder::default())
        .await
        .unwrap();
    assert_eq!(out.from, Some(("demo.v1.0.0".into(), "1.0.0".into())));
    assert_eq!(out.to, ("demo.v1.1.0".into(), "1.1.0".into()));
    let patch = server
        .lock()
        .unwrap()
        .bodies
        .iter()
        .rev()
        .find(|(k, _)| k.starts_with("PATCH") && k.ends_with("/clusterextensions/demo"))
        .unwrap()
        .1
        .clone();
    assert_eq!(
        patch,
        json!({"spec": {"source": {"catalog": {"version": ">=1.1.0"}}}}),
        "only the given filter changes"
    );
    {
        let server = server.lock().unwrap();
        let writes: Vec<&String> = server
            .bodies
            .iter()
            .map(|(k, _)| k)
            .filter(|k| k.contains("/clustercatalogs/") && !k.starts_with("GET"))
            .collect();
        assert!(
            writes.iter().all(|k| !k.contains("defaults-catalog")),
            "{writes:?}"
        );
        assert_eq!(
            server.objects[CC]["spec"]["source"]["image"]["ref"],
            "registry.test/demo-catalog:v2"
        );
    }

    server.lock().unwrap().controller = Box::new(|_: &mut Objects| {});
    let out = flow::uninstall(
        &client,
        &spec().names(),
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap();
    assert_eq!(out.deleted[0], "ClusterExtension demo");
    for what in [
        "ClusterRole demo-installer",
        "ServiceAccount ops/demo-installer",
        "ClusterCatalog demo-catalog",
        "Namespace ops",
    ] {
        assert!(out.deleted.iter().any(|d| d == what), "{what}: {out:?}");
    }
    // Again, or with a mistyped name: nothing of that name is there, and it says so.
    let err = flow::uninstall(
        &client,
        &spec().names(),
        fast(5000),
        &mut Recorder::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, FlowError::NoExtension { name } if name == "demo"),
        "{err}"
    );
    assert!(err.to_string().contains("--extension-name"), "{err}");
    let err = flow::status(&client, "demo").await.unwrap_err();
    assert!(matches!(err, FlowError::NoExtension { .. }), "{err}");
}
