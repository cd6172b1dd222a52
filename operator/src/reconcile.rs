//! One reconciliation of a ReverseWordsApp, as a pipeline:
//! read (the CR from the trigger) -> build desired children ([`crate::desired`], pure) ->
//! apply (server-side apply, field manager [`FIELD_MANAGER`]) -> observe pods -> status
//! ([`crate::status`], pure; written only when it changed).
//!
//! The finalizer keeps the CR until cleanup has removed its children; children also carry owner
//! references, so garbage collection removes them even if the operator is gone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ObjectReference, Pod, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event as KubeEvent, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{self, Event as FinalizerEvent, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, Resource, ResourceExt};
use serde_json::json;

use crate::crd::ReverseWordsApp;
use crate::desired;
use crate::image::OperandImage;
use crate::metrics::Metrics;
use crate::status;

/// Finalizer the Go operator used; kept so CRs move between the two operators.
pub const FINALIZER: &str = "finalizer.reversewordsapp.apps.linuxera.org";
/// Field manager for every server-side apply (stable: changing it would orphan field ownership).
pub const FIELD_MANAGER: &str = "reverse-words-operator";
/// Resync period once the application is ready (drift is also caught by the watches).
pub const READY_RESYNC: Duration = Duration::from_secs(300);
/// Recheck period while the application is not ready yet.
pub const NOT_READY_RESYNC: Duration = Duration::from_secs(15);

/// A failed reconciliation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("cannot {action} {kind} {name}: {source}")]
    Kube {
        action: &'static str,
        kind: &'static str,
        name: String,
        #[source]
        source: kube::Error,
    },
    #[error("ReverseWordsApp {0} has no namespace (the CRD is namespaced)")]
    NoNamespace(String),
    #[error("{0}")]
    Finalizer(#[source] Box<finalizer::Error<Error>>),
}

impl Error {
    /// Short kind for the failure metric's label.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Kube { .. } => "kube",
            Error::NoNamespace(_) => "invalid",
            Error::Finalizer(e) => match e.as_ref() {
                finalizer::Error::ApplyFailed(inner) | finalizer::Error::CleanupFailed(inner) => {
                    inner.metric_label()
                }
                _ => "finalizer",
            },
        }
    }
}

fn kube_err(
    action: &'static str,
    kind: &'static str,
    name: &str,
) -> impl FnOnce(kube::Error) -> Error {
    let name = name.to_string();
    move |source| Error::Kube {
        action,
        kind,
        name,
        source,
    }
}

fn is_not_found(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.is_not_found())
}

/// Per-object exponential backoff: kube's controller has none built in (kube-rs/kube#1916).
#[derive(Debug)]
pub struct Backoff {
    base: Duration,
    max: Duration,
    failures: Mutex<HashMap<ObjectRef<ReverseWordsApp>, u32>>,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(Duration::from_secs(1), Duration::from_secs(300))
    }
}

impl Backoff {
    pub fn new(base: Duration, max: Duration) -> Self {
        Self {
            base,
            max,
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Records a failure and returns how long to wait before the next attempt.
    pub fn failed(&self, key: &ObjectRef<ReverseWordsApp>) -> Duration {
        let mut map = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let n = map.entry(key.clone()).or_insert(0);
        *n = n.saturating_add(1);
        let factor = 2u32.saturating_pow(n.saturating_sub(1).min(20));
        self.base.saturating_mul(factor).min(self.max)
    }

    /// Forgets the failures of an object after a success.
    pub fn succeeded(&self, key: &ObjectRef<ReverseWordsApp>) {
        self.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(key);
    }
}

/// Everything a reconciliation needs, shared by all of them.
pub struct Context {
    pub client: Client,
    pub recorder: Recorder,
    pub image: OperandImage,
    pub metrics: Arc<Metrics>,
    pub backoff: Backoff,
    /// Source of condition timestamps (fixed in tests).
    pub clock: fn() -> Time,
}

/// The current time as a Kubernetes `Time`.
pub fn now() -> Time {
    Time(k8s_openapi::jiff::Timestamp::now())
}

impl Context {
    pub fn new(
        client: Client,
        image: OperandImage,
        metrics: Arc<Metrics>,
        instance: Option<String>,
    ) -> Self {
        let reporter = Reporter {
            controller: FIELD_MANAGER.into(),
            instance,
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            image,
            metrics,
            backoff: Backoff::default(),
            clock: now,
        }
    }

    /// Publishes an Event on the CR. Failing to record an event never fails a reconciliation.
    async fn event(
        &self,
        cr: &ReverseWordsApp,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
    ) {
        self.event_about(cr, None, type_, reason, action, note)
            .await
    }

    /// Publishes an Event on the CR that concerns one of its children (`related` in the API).
    async fn event_about(
        &self,
        cr: &ReverseWordsApp,
        related: Option<ObjectReference>,
        type_: EventType,
        reason: &str,
        action: &str,
        note: String,
    ) {
        let ev = KubeEvent {
            type_,
            reason: reason.into(),
            note: Some(note),
            action: action.into(),
            secondary: related,
        };
        if let Err(e) = self.recorder.publish(&ev, &cr.object_ref(&())).await {
            tracing::warn!(error = %e, reason, "cannot publish event");
        }
    }
}

/// Reconciles one ReverseWordsApp (the controller's entry point).
pub async fn reconcile(cr: Arc<ReverseWordsApp>, ctx: Arc<Context>) -> Result<Action, Error> {
    let _timer = ctx.metrics.reconcile_started();
    let ns = cr
        .namespace()
        .ok_or_else(|| Error::NoNamespace(cr.name_any()))?;
    let key = ObjectRef::from_obj(cr.as_ref());
    let api: Api<ReverseWordsApp> = Api::namespaced(ctx.client.clone(), &ns);
    let inner = ctx.clone();
    let result = finalizer(&api, FINALIZER, cr.clone(), |event| async move {
        match event {
            FinalizerEvent::Apply(cr) => apply(&cr, &inner).await,
            FinalizerEvent::Cleanup(cr) => cleanup(&cr, &inner).await,
        }
    })
    .await;
    match result {
        Ok(action) => {
            ctx.backoff.succeeded(&key);
            Ok(action)
        }
        // The CR was deleted between the trigger and our write: nothing left to do.
        Err(finalizer::Error::AddFinalizer(e) | finalizer::Error::RemoveFinalizer(e))
            if is_not_found(&e) =>
        {
            ctx.backoff.succeeded(&key);
            Ok(Action::await_change())
        }
        Err(e) => {
            let err = Error::Finalizer(Box::new(e));
            ctx.event(
                &cr,
                EventType::Warning,
                "ReconcileFailed",
                "Reconcile",
                err.to_string(),
            )
            .await;
            Err(err)
        }
    }
}

/// What the controller does after a failed reconciliation: retry with per-object backoff.
pub fn error_policy(cr: Arc<ReverseWordsApp>, err: &Error, ctx: Arc<Context>) -> Action {
    ctx.metrics.reconcile_failed(err.metric_label());
    let delay = ctx.backoff.failed(&ObjectRef::from_obj(cr.as_ref()));
    tracing::warn!(error = %err, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

/// Applies the desired children and updates the status.
async fn apply(cr: &ReverseWordsApp, ctx: &Context) -> Result<Action, Error> {
    let ns = cr.namespace().unwrap_or_default();
    let name = cr.name_any();
    let client = ctx.client.clone();
    let pp = PatchParams::apply(FIELD_MANAGER).force();

    // Deployment
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let dep_name = desired::deployment_name(&name);
    let want = desired::deployment(cr, &ctx.image);
    let before =
        deployments
            .get_opt(&dep_name)
            .await
            .map_err(kube_err("get", "Deployment", &dep_name))?;
    let applied = deployments
        .patch(&dep_name, &pp, &Patch::Apply(&want))
        .await
        .map_err(kube_err("apply", "Deployment", &dep_name))?;
    report_change(
        ctx,
        cr,
        "Deployment",
        &dep_name,
        before.map(|d| d.spec),
        &applied.spec,
    )
    .await;

    // Service
    let services: Api<Service> = Api::namespaced(client.clone(), &ns);
    let svc_name = desired::service_name(&name);
    let want = desired::service(cr);
    let before = services
        .get_opt(&svc_name)
        .await
        .map_err(kube_err("get", "Service", &svc_name))?;
    let applied_svc = services
        .patch(&svc_name, &pp, &Patch::Apply(&want))
        .await
        .map_err(kube_err("apply", "Service", &svc_name))?;
    report_change(
        ctx,
        cr,
        "Service",
        &svc_name,
        before.map(|s| s.spec),
        &applied_svc.spec,
    )
    .await;

    // Observe pods, compute status, write it only when it changed.
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let lp = ListParams::default().labels(&desired::selector_string(&name));
    let pod_list = pods
        .list(&lp)
        .await
        .map_err(kube_err("list", "Pod", &name))?;
    let new_status = status::desired_status(cr, Some(&applied), &pod_list.items, (ctx.clock)());
    if cr.status.as_ref() != Some(&new_status) {
        let api: Api<ReverseWordsApp> = Api::namespaced(client, &ns);
        api.patch_status(
            &name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": new_status })),
        )
        .await
        .map_err(kube_err("update status of", "ReverseWordsApp", &name))?;
    }
    Ok(Action::requeue(if status::is_ready(&new_status) {
        READY_RESYNC
    } else {
        NOT_READY_RESYNC
    }))
}

/// Emits Created/Updated events when applying changed the cluster.
async fn report_change<S: PartialEq>(
    ctx: &Context,
    cr: &ReverseWordsApp,
    kind: &str,
    name: &str,
    before: Option<Option<S>>,
    after: &Option<S>,
) {
    let related = || {
        Some(ObjectReference {
            api_version: Some(
                if kind == "Deployment" {
                    "apps/v1"
                } else {
                    "v1"
                }
                .into(),
            ),
            kind: Some(kind.into()),
            name: Some(name.into()),
            namespace: cr.namespace(),
            ..Default::default()
        })
    };
    match before {
        None => {
            tracing::info!(kind, name, "created");
            ctx.event_about(
                cr,
                related(),
                EventType::Normal,
                "Created",
                "Create",
                format!("Created {kind} {name}"),
            )
            .await;
        }
        Some(before) if &before != after => {
            tracing::info!(kind, name, "updated");
            ctx.event_about(
                cr,
                related(),
                EventType::Normal,
                "Updated",
                "Update",
                format!("Updated {kind} {name} to the desired state"),
            )
            .await;
        }
        Some(_) => {}
    }
}

/// Deletes the children before the finalizer is removed.
async fn cleanup(cr: &ReverseWordsApp, ctx: &Context) -> Result<Action, Error> {
    let ns = cr.namespace().unwrap_or_default();
    let name = cr.name_any();
    let dp = DeleteParams::background();
    let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &ns);
    let dep_name = desired::deployment_name(&name);
    match deployments.delete(&dep_name, &dp).await {
        Ok(_) => {}
        Err(e) if is_not_found(&e) => {}
        Err(e) => return Err(kube_err("delete", "Deployment", &dep_name)(e)),
    }
    let services: Api<Service> = Api::namespaced(ctx.client.clone(), &ns);
    let svc_name = desired::service_name(&name);
    match services.delete(&svc_name, &dp).await {
        Ok(_) => {}
        Err(e) if is_not_found(&e) => {}
        Err(e) => return Err(kube_err("delete", "Service", &svc_name)(e)),
    }
    ctx.event(
        cr,
        EventType::Normal,
        "Deleted",
        "Delete",
        format!("Deleted {dep_name} and {svc_name}"),
    )
    .await;
    Ok(Action::await_change())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps_and_resets() {
        let b = Backoff::new(Duration::from_secs(1), Duration::from_secs(10));
        let k = ObjectRef::new("a").within("ns");
        let other = ObjectRef::new("b").within("ns");
        let seq: Vec<_> = (0..6).map(|_| b.failed(&k).as_secs()).collect();
        assert_eq!(seq, [1, 2, 4, 8, 10, 10]);
        assert_eq!(b.failed(&other).as_secs(), 1, "per object");
        b.succeeded(&k);
        assert_eq!(b.failed(&k).as_secs(), 1);
    }
}
