//! Wiring the reconciler to watches: ReverseWordsApps (generation, finalizer and deletion changes
//! only, so our own status writes do not trigger reconciles), the Deployments and Services they
//! own, and the pods they report. One kube `Controller` per watched namespace (or one for all),
//! sharing the context.

use std::sync::Arc;

use futures::{StreamExt, future};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Pod, Service};
use kube::api::{Api, ListParams};
use kube::runtime::controller::{self, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::utils::Predicate;
use kube::runtime::{WatchStreamExt, predicates, watcher};
use kube::{Client, Resource, ResourceExt};

use crate::crd::ReverseWordsApp;
use crate::desired::MANAGED_BY;
use crate::namespace::WatchNamespaces;
use crate::reconcile::{self, Context};
use crate::server::Health;

/// Reconciles running at once per controller.
pub const CONCURRENCY: u16 = 10;

/// Errors that stop the operator before it can reconcile.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(
        "cannot list ReverseWordsApps{scope}: {source}. Is the CRD installed? \
         Apply it with `reverse-words-operator manifests | kubectl apply -f -`"
    )]
    CrdMissing {
        scope: String,
        #[source]
        source: kube::Error,
    },
}

fn api<K>(client: &Client, ns: Option<&str>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
    K::DynamicType: Default,
{
    match ns {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    }
}

/// Checks that the CRD is served before starting watches, for a clear first error.
pub async fn check_crd(client: &Client, watch: &WatchNamespaces) -> Result<(), StartError> {
    let namespaces: Vec<Option<&str>> = match watch.names() {
        None => vec![None],
        Some(n) => n.iter().map(|s| Some(s.as_str())).collect(),
    };
    for ns in namespaces {
        api::<ReverseWordsApp>(client, ns)
            .list(&ListParams::default().limit(1))
            .await
            .map_err(|source| StartError::CrdMissing {
                scope: ns.map(|n| format!(" in namespace {n}")).unwrap_or_default(),
                source,
            })?;
    }
    Ok(())
}

/// Label selector for the children and pods this operator manages.
fn managed_selector() -> String {
    format!("app.kubernetes.io/managed-by={MANAGED_BY}")
}

/// Maps an application pod to its ReverseWordsApp through `app.kubernetes.io/instance`.
pub fn pod_owner(pod: &Pod) -> Option<ObjectRef<ReverseWordsApp>> {
    let name = pod.labels().get("app.kubernetes.io/instance")?;
    let ns = pod.namespace()?;
    Some(ObjectRef::new(name).within(&ns))
}

/// Runs the controllers until `shutdown` resolves; marks `health` ready once every CR cache
/// has synced.
pub async fn run(
    client: Client,
    ctx: Arc<Context>,
    watch: &WatchNamespaces,
    health: Arc<Health>,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + Clone + 'static,
) {
    let namespaces: Vec<Option<String>> = match watch.names() {
        None => vec![None],
        Some(n) => n.iter().cloned().map(Some).collect(),
    };
    let mut runs = Vec::new();
    let mut stores = Vec::new();
    for ns in &namespaces {
        let ns = ns.as_deref();
        let (reader, writer) = reflector::store::<ReverseWordsApp>();
        stores.push(reader.clone());
        // A status write changes neither generation, finalizers nor the deletion timestamp.
        let is_deleting = |o: &ReverseWordsApp| o.meta().deletion_timestamp.as_ref().map(|_| 1u64);
        let crs = watcher(
            api::<ReverseWordsApp>(&client, ns),
            watcher::Config::default(),
        )
        .default_backoff()
        .reflect(writer)
        .applied_objects()
        .predicate_filter(
            predicates::generation
                .combine(predicates::finalizers)
                .combine(is_deleting),
            Default::default(),
        );
        let children = watcher::Config::default().labels(&managed_selector());
        let ctrl = Controller::for_stream(crs, reader)
            .owns(api::<Deployment>(&client, ns), children.clone())
            .owns(api::<Service>(&client, ns), children.clone())
            .watches(api::<Pod>(&client, ns), children, |pod| pod_owner(&pod))
            .with_config(controller::Config::default().concurrency(CONCURRENCY))
            .graceful_shutdown_on(shutdown.clone())
            .run(reconcile::reconcile, reconcile::error_policy, ctx.clone())
            .for_each(|res| async move {
                match res {
                    Ok((obj, _)) => tracing::debug!(object = %obj, "reconciled"),
                    Err(e) => tracing::debug!(error = %e, "reconcile error"),
                }
            });
        runs.push(ctrl);
    }
    let readiness = async move {
        for s in stores {
            // kube's store readiness is a oneshot with a single waker: with the controller also
            // waiting, this task may never be woken. Re-poll; once the controller has taken the
            // value it is memoised and the next poll returns at once.
            loop {
                match tokio::time::timeout(
                    std::time::Duration::from_millis(250),
                    s.wait_until_ready(),
                )
                .await
                {
                    Ok(Ok(())) => break,
                    Ok(Err(_)) => return,
                    Err(_) => continue,
                }
            }
        }
        tracing::info!("caches synced; ready");
        health.set_ready(true);
    };
    tokio::spawn(readiness);
    future::join_all(runs).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use std::collections::BTreeMap;

    #[test]
    fn pods_map_to_their_app_by_instance_label() {
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some("dp-example-abc".into()),
                namespace: Some("ns".into()),
                labels: Some(BTreeMap::from([(
                    "app.kubernetes.io/instance".into(),
                    "example".into(),
                )])),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(
            pod_owner(&pod),
            Some(ObjectRef::new("example").within("ns"))
        );
        assert_eq!(pod_owner(&Pod::default()), None);
    }
}
