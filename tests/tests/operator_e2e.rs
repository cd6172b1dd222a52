//! End-to-end: the operator against a real cluster (E2E_KUBECONFIG). Asserts on API objects
//! only, so it passes on clusters where the application pods cannot actually run.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Service};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{CustomResourceExt, ResourceExt};
use olm_workspace_tests::{client_for, e2e_kubeconfig, eventually, unique_namespace};
use reverse_words_operator::crd::{ReverseWordsApp, ReverseWordsAppSpec};
use reverse_words_operator::namespace::WatchNamespaces;
use reverse_words_operator::{controller, image, leader, metrics, reconcile, server};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_reconciles_a_reversewordsapp_on_a_real_cluster() -> anyhow::Result<()> {
    let Some(kubeconfig) = e2e_kubeconfig("operator e2e") else {
        return Ok(());
    };
    let client = client_for(&kubeconfig).await?;
    let pp = PatchParams::apply("reverse-words-e2e").force();

    // CRD, then a fresh namespace.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.patch(
        "reversewordsapps.apps.linuxera.org",
        &pp,
        &Patch::Apply(ReverseWordsApp::crd()),
    )
    .await?;
    eventually("the CRD to be established", WAIT, || async {
        let crd = crds.get("reversewordsapps.apps.linuxera.org").await?;
        let ok = crd
            .status
            .and_then(|s| s.conditions)
            .unwrap_or_default()
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True");
        Ok(ok.then_some(()))
    })
    .await?;
    let ns = unique_namespace("rw-e2e");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}}))?,
        )
        .await?;

    // The operator, in-process, watching that namespace.
    let watch = WatchNamespaces::parse(&ns)?;
    let ctx = Arc::new(reconcile::Context::new(
        client.clone(),
        image::OperandImage::default(),
        Arc::new(metrics::Metrics::new()),
        Some("e2e".into()),
    ));
    let health = Arc::new(server::Health::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stop = futures::FutureExt::shared(async move {
        let mut rx = stop_rx;
        let _ = rx.wait_for(|s| *s).await;
    });
    let op = tokio::spawn({
        let (client, health) = (client.clone(), health.clone());
        async move { controller::run(client, ctx, &watch, health, stop).await }
    });
    let result = scenario(&client, &ns, &health).await;

    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(20), op).await;
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
    result
}

async fn scenario(client: &kube::Client, ns: &str, health: &server::Health) -> anyhow::Result<()> {
    let apps: Api<ReverseWordsApp> = Api::namespaced(client.clone(), ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let services: Api<Service> = Api::namespaced(client.clone(), ns);

    eventually("the operator's caches to sync", WAIT, || async {
        Ok(health.is_ready().then_some(()))
    })
    .await?;

    let cr = ReverseWordsApp::new(
        "e2e",
        ReverseWordsAppSpec {
            replicas: 1,
            app_version: Some("v0.0.1".into()),
        },
    );
    apps.create(&PostParams::default(), &cr).await?;

    // Deployment, Service, finalizer, status.
    let dep = eventually("dp-e2e", WAIT, || async {
        Ok(deployments.get_opt("dp-e2e").await?)
    })
    .await?;
    let spec = dep.spec.clone().unwrap_or_default();
    assert_eq!(spec.replicas, Some(1));
    assert_eq!(
        spec.template.spec.unwrap_or_default().containers[0]
            .image
            .as_deref(),
        Some("quay.io/mavazque/reversewords:v0.0.1")
    );
    assert_eq!(dep.owner_references()[0].kind, "ReverseWordsApp");
    let svc = eventually("service-e2e", WAIT, || async {
        Ok(services.get_opt("service-e2e").await?)
    })
    .await?;
    assert_eq!(
        svc.spec.unwrap_or_default().type_.as_deref(),
        Some("LoadBalancer")
    );
    let with_status = eventually("status conditions", WAIT, || async {
        let cr = apps.get("e2e").await?;
        Ok(cr
            .status
            .clone()
            .filter(|s| s.conditions.len() == 2)
            .map(|_| cr))
    })
    .await?;
    assert!(
        with_status
            .finalizers()
            .contains(&reconcile::FINALIZER.to_string())
    );

    // Scale through the scale subresource (what `kubectl scale` does).
    apps.patch_scale(
        "e2e",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await?;
    eventually("dp-e2e scaled to 3", WAIT, || async {
        let d = deployments.get("dp-e2e").await?;
        Ok((d.spec.and_then(|s| s.replicas) == Some(3)).then_some(()))
    })
    .await?;

    // appVersion upgrade rolls the Deployment.
    apps.patch(
        "e2e",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"appVersion": "v0.0.2"}})),
    )
    .await?;
    eventually("image v0.0.2", WAIT, || async {
        let d = deployments.get("dp-e2e").await?;
        let img = d
            .spec
            .and_then(|s| s.template.spec)
            .and_then(|p| p.containers[0].image.clone());
        Ok((img.as_deref() == Some("quay.io/mavazque/reversewords:v0.0.2")).then_some(()))
    })
    .await?;

    // Self-heal: a deleted Service comes back.
    let old_uid = services.get("service-e2e").await?.uid();
    services
        .delete("service-e2e", &DeleteParams::default())
        .await?;
    eventually("service-e2e recreated", WAIT, || async {
        Ok(services
            .get_opt("service-e2e")
            .await?
            .filter(|s| s.uid() != old_uid)
            .map(|_| ()))
    })
    .await?;

    // Deletion: children removed, then the CR itself.
    apps.delete("e2e", &DeleteParams::default()).await?;
    eventually("the CR and its children to be gone", WAIT, || async {
        let cr = apps.get_opt("e2e").await?;
        let d = deployments
            .get_opt("dp-e2e")
            .await?
            .filter(|d| d.metadata.deletion_timestamp.is_none());
        Ok((cr.is_none() && d.is_none()).then_some(()))
    })
    .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_instance_waits_for_the_lease() -> anyhow::Result<()> {
    let Some(kubeconfig) = e2e_kubeconfig("leader election e2e") else {
        return Ok(());
    };
    let client = client_for(&kubeconfig).await?;
    let ns = unique_namespace("rw-lease");
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": ns}}))?,
        )
        .await?;
    let cfg = |id: &str| leader::LeaseConfig {
        name: "reverse-words-operator-lock".into(),
        namespace: ns.clone(),
        identity: id.into(),
        duration: 15,
        grace: 5,
    };
    let mut first = leader::campaign(client.clone(), &cfg("first")).await?;
    tokio::time::timeout(WAIT, first.acquired()).await??;
    let mut second = leader::campaign(client.clone(), &cfg("second")).await?;
    let waited = tokio::time::timeout(Duration::from_secs(8), second.acquired()).await;
    assert!(
        waited.is_err(),
        "the second instance must not lead while the first holds the lease"
    );
    drop(first);
    let _ = namespaces.delete(&ns, &DeleteParams::default()).await;
    Ok(())
}
