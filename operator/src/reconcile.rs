//! One reconciliation of a ReverseWordsApp, as a pipeline:
//! read (the CR from the trigger) -> validate ([`crate::validate`]; an invalid CR gets a
//! Ready=False condition and a Warning event, never children) -> build desired children
//! ([`crate::desired`], pure, from the validated app) -> apply (one server-side apply per child,
//! field manager [`FIELD_MANAGER`], see [`apply_child`]) -> observe pods -> status
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
use crate::validate;

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
        kind: String,
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
    kind: impl Into<String>,
    name: &str,
) -> impl FnOnce(kube::Error) -> Error {
    let (kind, name) = (kind.into(), name.to_string());
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
    /// What each child looked like after this process last applied it (for event reasons).
    pub children: ChildVersions,
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
            children: ChildVersions::default(),
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

/// Validates the CR, applies the desired children and updates the status.
async fn apply(cr: &ReverseWordsApp, ctx: &Context) -> Result<Action, Error> {
    let app = match validate::validate(cr) {
        Ok(app) => app,
        Err(problem) => return reject(cr, ctx, &problem).await,
    };
    let ns = app.namespace();
    let name = app.name();
    let deployment = apply_child(ctx, cr, &desired::deployment(&app, &ctx.image)).await?;
    apply_child(ctx, cr, &desired::service(&app)).await?;

    // Observe pods, compute status, write it only when it changed.
    let pods: Api<Pod> = Api::namespaced(ctx.client.clone(), ns);
    let lp = ListParams::default().labels(&desired::selector_string(name));
    let pod_list = pods
        .list(&lp)
        .await
        .map_err(kube_err("list", "Pod", name))?;
    let new_status = status::desired_status(cr, Some(&deployment), &pod_list.items, (ctx.clock)());
    write_status(cr, ctx, &new_status).await?;
    Ok(Action::requeue(if status::is_ready(&new_status) {
        READY_RESYNC
    } else {
        NOT_READY_RESYNC
    }))
}

/// Reports a CR that failed validation (status condition and a Warning event) and waits for its
/// spec to change: retrying cannot help.
async fn reject(
    cr: &ReverseWordsApp,
    ctx: &Context,
    problem: &validate::Invalid,
) -> Result<Action, Error> {
    let message = problem.to_string();
    tracing::warn!(name = %cr.name_any(), problem = %message, "invalid ReverseWordsApp");
    ctx.metrics.reconcile_failed("invalid");
    ctx.event(
        cr,
        EventType::Warning,
        status::REASON_INVALID_SPEC,
        "Validate",
        message.clone(),
    )
    .await;
    write_status(
        cr,
        ctx,
        &status::invalid_status(cr, &message, (ctx.clock)()),
    )
    .await?;
    Ok(Action::await_change())
}

/// Writes the status when it differs from the CR's current one.
async fn write_status(
    cr: &ReverseWordsApp,
    ctx: &Context,
    new_status: &crate::crd::ReverseWordsAppStatus,
) -> Result<(), Error> {
    if cr.status.as_ref() == Some(new_status) {
        return Ok(());
    }
    let name = cr.name_any();
    let api: Api<ReverseWordsApp> =
        Api::namespaced(ctx.client.clone(), &cr.namespace().unwrap_or_default());
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({ "status": new_status })),
    )
    .await
    .map_err(kube_err("update status of", "ReverseWordsApp", &name))?;
    Ok(())
}

/// What one server-side apply did to a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildChange {
    /// The apply created it (the API server answered 201 Created).
    Created,
    /// The apply changed its spec since this operator last applied it.
    Updated,
    /// Nothing this operator can attribute to the apply.
    Unchanged,
}

/// What this process last saw of each child after applying it: the generation where the kind
/// has one (it moves only on spec changes: Deployments), else the spec itself (Services).
#[derive(Debug, Default)]
pub struct ChildVersions(Mutex<HashMap<String, String>>);

impl ChildVersions {
    fn key<K: Resource<DynamicType = ()>>(ns: &str, name: &str) -> String {
        format!("{}/{ns}/{name}", K::kind(&()))
    }

    /// The spec version of an applied object.
    fn version_of<K: Resource<DynamicType = ()> + serde::Serialize>(obj: &K) -> String {
        match obj.meta().generation {
            Some(g) => format!("generation {g}"),
            None => serde_json::to_value(obj)
                .map(|v| v["spec"].to_string())
                .unwrap_or_default(),
        }
    }

    /// Records the applied object and says whether its spec moved since the last apply (a
    /// drift this apply corrected, or a new desired state). `None` when there was no last apply
    /// in this process.
    fn record<K: Resource<DynamicType = ()> + serde::Serialize>(
        &self,
        ns: &str,
        name: &str,
        applied: &K,
    ) -> Option<bool> {
        let version = Self::version_of(applied);
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(Self::key::<K>(ns, name), version.clone())
            .map(|before| before != version)
    }

    fn forget<K: Resource<DynamicType = ()>>(&self, ns: &str, name: &str) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&Self::key::<K>(ns, name));
    }
}

/// A namespaced child kind the operator manages.
pub trait Child:
    Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
    + Clone
    + std::fmt::Debug
    + serde::Serialize
    + serde::de::DeserializeOwned
{
}

impl<K> Child for K where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + std::fmt::Debug
        + serde::Serialize
        + serde::de::DeserializeOwned
{
}

/// Server-side applies one child (field manager [`FIELD_MANAGER`], forced) in one API call and
/// publishes a Created/Updated event when the apply created or changed it.
///
/// The event reason comes from the apply response, without a GET first: the API server answers
/// an apply that created the object with 201 Created (200 otherwise), and a changed spec shows
/// as a new `metadata.generation` (or, for kinds without one, a different spec) compared with
/// what this process saw after its previous apply of the child. Status-only changes (pods coming
/// and going) move neither, so they never read as "Updated". The first apply of an existing
/// child after the operator starts has nothing to compare with and stays silent.
pub async fn apply_child<K: Child>(
    ctx: &Context,
    cr: &ReverseWordsApp,
    want: &K,
) -> Result<K, Error> {
    let kind = K::kind(&()).into_owned();
    let ns = want.meta().namespace.clone().unwrap_or_default();
    let name = want.name_any();
    let fail = |action| kube_err(action, kind.clone(), &name);
    let pp = PatchParams::apply(FIELD_MANAGER).force();
    let request = kube::core::Request::new(K::url_path(&(), Some(&ns)))
        .patch(&name, &pp, &Patch::Apply(want))
        .map_err(|e| fail("apply")(kube::Error::BuildRequest(e)))?;
    let response = ctx
        .client
        .send(request.map(kube::client::Body::from))
        .await
        .map_err(fail("apply"))?;
    let code = response.status();
    let bytes = response
        .into_body()
        .collect_bytes()
        .await
        .map_err(fail("apply"))?;
    if !code.is_success() {
        let status = serde_json::from_slice::<kube::core::Status>(&bytes).unwrap_or_else(|_| {
            kube::core::Status::failure(
                &String::from_utf8_lossy(&bytes),
                "Failed to parse error data",
            )
            .with_code(code.as_u16())
        });
        return Err(fail("apply")(kube::Error::Api(status.boxed())));
    }
    let applied: K =
        serde_json::from_slice(&bytes).map_err(|e| fail("apply")(kube::Error::SerdeError(e)))?;
    let moved = ctx.children.record(&ns, &name, &applied);
    let change = if code.as_u16() == 201 {
        ChildChange::Created
    } else if moved == Some(true) {
        ChildChange::Updated
    } else {
        ChildChange::Unchanged
    };
    report_change(ctx, cr, &applied, change).await;
    Ok(applied)
}

/// Deletes one child (background propagation); a child that is already gone is fine.
pub async fn delete_child<K: Child>(ctx: &Context, ns: &str, name: &str) -> Result<(), Error> {
    let api: Api<K> = Api::namespaced(ctx.client.clone(), ns);
    ctx.children.forget::<K>(ns, name);
    match api.delete(name, &DeleteParams::background()).await {
        Ok(_) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(e) => Err(kube_err("delete", K::kind(&()).into_owned(), name)(e)),
    }
}

/// Emits the Created/Updated event for an applied child; the reference's apiVersion and kind
/// come from the child's type.
async fn report_change<K: Child>(
    ctx: &Context,
    cr: &ReverseWordsApp,
    child: &K,
    change: ChildChange,
) {
    let kind = K::kind(&());
    let name = child.name_any();
    let (reason, action, note) = match change {
        ChildChange::Created => ("Created", "Create", format!("Created {kind} {name}")),
        ChildChange::Updated => (
            "Updated",
            "Update",
            format!("Updated {kind} {name} to the desired state"),
        ),
        ChildChange::Unchanged => return,
    };
    tracing::info!(kind = %kind, name = %name, "{}", reason.to_lowercase());
    let related = ObjectReference {
        api_version: Some(K::api_version(&()).into_owned()),
        kind: Some(kind.into_owned()),
        name: Some(name),
        namespace: child.namespace(),
        ..Default::default()
    };
    ctx.event_about(cr, Some(related), EventType::Normal, reason, action, note)
        .await;
}

/// Deletes the children before the finalizer is removed.
async fn cleanup(cr: &ReverseWordsApp, ctx: &Context) -> Result<Action, Error> {
    let ns = cr.namespace().unwrap_or_default();
    let name = cr.name_any();
    let dep_name = desired::deployment_name(&name);
    let svc_name = desired::service_name(&name);
    delete_child::<Deployment>(ctx, &ns, &dep_name).await?;
    delete_child::<Service>(ctx, &ns, &svc_name).await?;
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
