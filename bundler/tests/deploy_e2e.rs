//! End to end against a real cluster with OLM, through the `olm` binary: install the
//! reverse-words operator from a catalog image, create a ReverseWordsApp and see the operator
//! act on it, upgrade to the next version in the channel, check `olm status`, uninstall.
//!
//! Runs only when `E2E_KUBECONFIG` names a kubeconfig of a cluster with OLM installed and
//! `E2E_CATALOG_IMAGE` a catalog image the cluster can pull; prints a SKIP line otherwise.
//! Optional: `E2E_PACKAGE` (reverse-words-operator), `E2E_CHANNEL` (stable) and
//! `E2E_STARTING_CSV`: a CSV that is not the channel head, so there is something to upgrade
//! to (without it the upgrade step is skipped with a SKIP line).
//!
//! The `--bundle` test needs `E2E_KUBECONFIG` and `E2E_BUNDLE_IMAGE` (a bundle image of
//! `E2E_PACKAGE` the cluster can pull, e.g. `localhost:5001/reverse-words-operator-bundle:v0.2.0`
//! on kind with a local registry); optional `E2E_NEXT_BUNDLE_IMAGE` (a newer bundle of the same
//! package, for `olm upgrade --bundle`), `E2E_INDEX_IMAGE` (where to push the catalogs) and
//! `E2E_OLM_BINARY` (the olm the catalog image serves with; default this build). Registry
//! credentials come from the usual auth files or `OLM_REGISTRY_CREDS`.
//!
//! The `--catalog-address` test needs `E2E_KUBECONFIG` and `E2E_CATALOG_ADDRESS`: a `HOST:PORT`
//! at which the cluster reaches this machine (kind on Docker: the bridge gateway, e.g.
//! `172.18.0.1:50051`). The test serves `E2E_CATALOG_DIR` (default: the repository's
//! `catalog/`) there with `olm catalog serve` on all interfaces; the bundle images that catalog
//! names must be pullable by the cluster.

#[path = "support/olm_bin.rs"]
mod olm_bin;
#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams};
use olm_bin::olm;
use serde_json::{Value, json};

#[tokio::test]
async fn install_use_upgrade_uninstall_on_a_real_cluster() {
    let Ok(kubeconfig) = std::env::var("E2E_KUBECONFIG") else {
        prerequisite::skip_opt_in("E2E_KUBECONFIG not set; no cluster with OLM to install into");
        return;
    };
    let Ok(catalog) = std::env::var("E2E_CATALOG_IMAGE") else {
        prerequisite::skip_opt_in("E2E_CATALOG_IMAGE not set; no catalog image to install from");
        return;
    };
    let package = std::env::var("E2E_PACKAGE").unwrap_or_else(|_| "reverse-words-operator".into());
    let channel = std::env::var("E2E_CHANNEL").unwrap_or_else(|_| "stable".into());
    let starting = std::env::var("E2E_STARTING_CSV").ok();
    let ns = format!("olm-e2e-{}", std::process::id());

    let client = olm_bundler::deploy::cluster::client(Some(Path::new(&kubeconfig)), None)
        .await
        .expect("E2E_KUBECONFIG usable");

    let common = ["--kubeconfig", kubeconfig.as_str(), "--timeout", "10m"];
    let mut install = vec![
        "install",
        "--catalog",
        catalog.as_str(),
        "--package",
        package.as_str(),
        "--channel",
        channel.as_str(),
        "--namespace",
        ns.as_str(),
    ];
    if let Some(csv) = &starting {
        // Pin the first version: Manual approval keeps OLM from upgrading on its own.
        install.extend(["--starting-csv", csv, "--approval", "Manual", "--approve"]);
    }
    install.extend(common);
    assert!(olm(&install).status.success(), "install");

    // The operator reconciles a ReverseWordsApp into a Deployment named dp-<name>.
    let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(
        "apps.linuxera.org",
        "v1alpha1",
        "ReverseWordsApp",
    ));
    let apps: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns, &ar);
    let cr: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "apps.linuxera.org/v1alpha1", "kind": "ReverseWordsApp",
        "metadata": {"name": "e2e", "namespace": ns}, "spec": {"replicas": 1}
    }))
    .unwrap();
    apps.create(&PostParams::default(), &cr)
        .await
        .expect("create ReverseWordsApp");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let start = Instant::now();
    loop {
        if deployments.get_opt("dp-e2e").await.unwrap().is_some() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "the operator did not create Deployment dp-e2e within 3m"
        );
        tokio::time::sleep(Duration::from_secs(3)).await;
    }

    let mut status_args = vec!["status", package.as_str(), "-n", ns.as_str(), "-o", "json"];
    status_args.extend(["--kubeconfig", kubeconfig.as_str()]);
    if let Some(first) = &starting {
        let mut up = vec!["upgrade", package.as_str(), "-n", ns.as_str()];
        up.extend(common);
        assert!(olm(&up).status.success(), "upgrade");
        let st = olm(&status_args);
        assert!(st.status.success(), "status after upgrade");
        let report: Value = serde_json::from_slice(&st.stdout).expect("status JSON");
        assert_eq!(report["csv"]["phase"], "Succeeded");
        assert_ne!(report["subscription"]["installedCSV"], json!(first));
    } else {
        prerequisite::skip_opt_in("E2E_STARTING_CSV not set; upgrade step not run");
        assert!(olm(&status_args).status.success(), "status");
    }

    apps.delete("e2e", &DeleteParams::default())
        .await
        .expect("delete ReverseWordsApp");
    let mut un = vec![
        "uninstall",
        package.as_str(),
        "-n",
        ns.as_str(),
        "--delete-crds",
        "--delete-operator-group",
    ];
    un.extend(common);
    assert!(olm(&un).status.success(), "uninstall");
    let st = olm(&status_args);
    assert_eq!(st.status.code(), Some(1), "status after uninstall");

    let namespaces: Api<Namespace> = Api::all(client);
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
}

#[tokio::test]
async fn install_bundle_upgrade_bundle_uninstall_on_a_real_cluster() {
    let Ok(kubeconfig) = std::env::var("E2E_KUBECONFIG") else {
        prerequisite::skip_opt_in("E2E_KUBECONFIG not set; no cluster with OLM to install into");
        return;
    };
    let Ok(bundle) = std::env::var("E2E_BUNDLE_IMAGE") else {
        prerequisite::skip_opt_in("E2E_BUNDLE_IMAGE not set; no bundle image to install from");
        return;
    };
    let package = std::env::var("E2E_PACKAGE").unwrap_or_else(|_| "reverse-words-operator".into());
    let next = std::env::var("E2E_NEXT_BUNDLE_IMAGE").ok();
    let index = std::env::var("E2E_INDEX_IMAGE").ok();
    let olm_binary = std::env::var("E2E_OLM_BINARY").ok();
    let ns = format!("olm-e2e-bundle-{}", std::process::id());
    let mut publish: Vec<&str> = Vec::new();
    if let Some(i) = &index {
        publish.extend(["--index-image", i.as_str()]);
    }
    if let Some(b) = &olm_binary {
        publish.extend(["--olm-binary", b.as_str()]);
    }
    let common = ["--kubeconfig", kubeconfig.as_str(), "--timeout", "10m"];

    let mut install = vec!["install", "--bundle", bundle.as_str(), "-n", ns.as_str()];
    install.extend(&publish);
    install.extend(common);
    assert!(olm(&install).status.success(), "install --bundle");

    let status_args = [
        "status",
        package.as_str(),
        "-n",
        ns.as_str(),
        "-o",
        "json",
        "--kubeconfig",
        kubeconfig.as_str(),
    ];
    let st = olm(&status_args);
    assert!(st.status.success(), "status after install --bundle");
    let report: Value = serde_json::from_slice(&st.stdout).expect("status JSON");
    let first = report["subscription"]["installedCSV"].clone();
    assert!(
        report["catalogSource"]["image"]
            .as_str()
            .is_some_and(|i| i.contains("@sha256:")),
        "the CatalogSource serves the pinned catalog image: {report}"
    );

    if let Some(next) = &next {
        let mut up = vec![
            "upgrade",
            package.as_str(),
            "--bundle",
            next.as_str(),
            "-n",
            ns.as_str(),
        ];
        up.extend(&publish);
        up.extend(common);
        assert!(olm(&up).status.success(), "upgrade --bundle");
        let st = olm(&status_args);
        assert!(st.status.success(), "status after upgrade --bundle");
        let report: Value = serde_json::from_slice(&st.stdout).expect("status JSON");
        assert_eq!(report["csv"]["phase"], "Succeeded");
        assert_ne!(report["subscription"]["installedCSV"], first);
    } else {
        prerequisite::skip_opt_in("E2E_NEXT_BUNDLE_IMAGE not set; upgrade --bundle step not run");
    }

    let mut un = vec![
        "uninstall",
        package.as_str(),
        "-n",
        ns.as_str(),
        "--delete-crds",
        "--delete-operator-group",
    ];
    un.extend(common);
    assert!(olm(&un).status.success(), "uninstall");
    assert_eq!(
        olm(&status_args).status.code(),
        Some(1),
        "status after uninstall"
    );

    let client = olm_bundler::deploy::cluster::client(Some(Path::new(&kubeconfig)), None)
        .await
        .expect("E2E_KUBECONFIG usable");
    let namespaces: Api<Namespace> = Api::all(client);
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
}

/// The inner loop without a registry: `olm catalog serve` on this machine, `olm install
/// --catalog-address` pointing OLM at it, `olm status`, `olm uninstall`.
#[tokio::test]
async fn install_from_a_served_catalog_address_on_a_real_cluster() {
    let Ok(kubeconfig) = std::env::var("E2E_KUBECONFIG") else {
        prerequisite::skip_opt_in("E2E_KUBECONFIG not set; no cluster with OLM to install into");
        return;
    };
    let Ok(address) = std::env::var("E2E_CATALOG_ADDRESS") else {
        prerequisite::skip_opt_in("E2E_CATALOG_ADDRESS not set; no address the cluster reaches");
        return;
    };
    let port = address
        .rsplit_once(':')
        .map(|(_, p)| p.to_string())
        .expect("E2E_CATALOG_ADDRESS is HOST:PORT");
    let catalog = std::env::var("E2E_CATALOG_DIR")
        .unwrap_or_else(|_| format!("{}/../catalog", env!("CARGO_MANIFEST_DIR")));
    let package = std::env::var("E2E_PACKAGE").unwrap_or_else(|_| "reverse-words-operator".into());
    let channel = std::env::var("E2E_CHANNEL").unwrap_or_else(|_| "stable".into());
    let ns = format!("olm-e2e-addr-{}", std::process::id());

    let mut server = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args([
            "catalog",
            "serve",
            catalog.as_str(),
            "--port",
            port.as_str(),
        ])
        .spawn()
        .expect("start olm catalog serve");
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port.parse::<u16>().unwrap())).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "olm catalog serve did not listen on port {port} within 60s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let common = ["--kubeconfig", kubeconfig.as_str(), "--timeout", "10m"];
    let mut install = vec![
        "install",
        "--catalog-address",
        address.as_str(),
        "--package",
        package.as_str(),
        "--channel",
        channel.as_str(),
        "--namespace",
        ns.as_str(),
    ];
    install.extend(common);
    let installed = olm(&install).status.success();

    let mut status_args = vec!["status", package.as_str(), "-n", ns.as_str(), "-o", "json"];
    status_args.extend(["--kubeconfig", kubeconfig.as_str()]);
    let st = olm(&status_args);
    let mut un = vec![
        "uninstall",
        package.as_str(),
        "-n",
        ns.as_str(),
        "--delete-crds",
        "--delete-operator-group",
    ];
    un.extend(common);
    let uninstalled = olm(&un).status.success();
    let _ = server.kill();
    let _ = server.wait();
    let client = olm_bundler::deploy::cluster::client(Some(Path::new(&kubeconfig)), None)
        .await
        .expect("E2E_KUBECONFIG usable");
    let namespaces: Api<Namespace> = Api::all(client);
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;

    assert!(installed, "install --catalog-address");
    let report: Value = serde_json::from_slice(&st.stdout).expect("status JSON");
    assert_eq!(report["csv"]["phase"], "Succeeded");
    assert_eq!(report["catalogSource"]["address"], json!(address));
    assert!(uninstalled, "uninstall");
}
