//! Computing the CR's status from what the cluster reports, as pure functions.
//!
//! The conditions follow the Go operator: `Ready` and `ReverseWordsDeploymentNotReady` are
//! always both present and opposite. `lastTransitionTime` moves only when a condition's status
//! flips (apimachinery's `SetStatusCondition` rule), so an unchanged cluster yields an identical
//! status and reconcile can skip the write.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::ResourceExt;

use crate::crd::{ReverseWordsApp, ReverseWordsAppStatus};
use crate::desired;

/// Condition type: every replica of the application is ready.
pub const CONDITION_READY: &str = "Ready";
/// Condition type: the application Deployment is not ready (the Go operator's name).
pub const CONDITION_DEPLOYMENT_NOT_READY: &str = "ReverseWordsDeploymentNotReady";
/// Reason when the Deployment has all its replicas ready and updated.
pub const REASON_READY: &str = "DeploymentReady";
/// Reason while the Deployment is rolling out, scaling, or failing.
pub const REASON_NOT_READY: &str = "DeploymentNotReady";

/// Names of the pods that are Pending or Running and not terminating, sorted.
pub fn app_pods(pods: &[Pod]) -> Vec<String> {
    let mut names: Vec<String> = pods
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter(|p| {
            matches!(
                p.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Pending" | "Running")
            )
        })
        .map(|p| p.name_any())
        .collect();
    names.sort();
    names
}

/// Readiness of the application Deployment, with a human message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    pub ready: bool,
    pub ready_replicas: i32,
    pub message: String,
}

/// Whether the Deployment has rolled out the current spec and has every replica ready.
pub fn readiness(deployment: Option<&Deployment>, desired_replicas: i32) -> Readiness {
    let Some(d) = deployment else {
        return Readiness {
            ready: false,
            ready_replicas: 0,
            message: "ReverseWords Deployment does not exist yet".into(),
        };
    };
    let st = d.status.clone().unwrap_or_default();
    let ready_replicas = st.ready_replicas.unwrap_or(0);
    let updated = st.updated_replicas.unwrap_or(0);
    let observed = st.observed_generation.unwrap_or(0) >= d.metadata.generation.unwrap_or(0);
    let ready = observed && ready_replicas >= desired_replicas && updated >= desired_replicas;
    let message = if ready {
        format!("ReverseWords Deployment is ready: {ready_replicas}/{desired_replicas} replicas")
    } else if !observed {
        "ReverseWords Deployment is rolling out a new spec".to_string()
    } else {
        format!(
            "ReverseWords Deployment is not ready: {ready_replicas}/{desired_replicas} replicas ready, {updated} updated"
        )
    };
    Readiness {
        ready,
        ready_replicas,
        message,
    }
}

fn condition(
    type_: &str,
    status: bool,
    reason: &str,
    message: &str,
    generation: Option<i64>,
    now: &Time,
) -> Condition {
    Condition {
        type_: type_.into(),
        status: if status { "True" } else { "False" }.into(),
        reason: reason.into(),
        message: message.into(),
        last_transition_time: now.clone(),
        observed_generation: generation,
    }
}

/// Sets `new` in `conditions`, keeping the old `lastTransitionTime` unless the status changed.
pub fn set_condition(conditions: &mut Vec<Condition>, new: Condition) {
    match conditions.iter_mut().find(|c| c.type_ == new.type_) {
        Some(existing) => {
            let transition = if existing.status == new.status {
                existing.last_transition_time.clone()
            } else {
                new.last_transition_time.clone()
            };
            *existing = Condition {
                last_transition_time: transition,
                ..new
            };
        }
        None => conditions.push(new),
    }
}

/// The status the CR should have, given its current status and what the cluster reports.
pub fn desired_status(
    cr: &ReverseWordsApp,
    deployment: Option<&Deployment>,
    pods: &[Pod],
    now: Time,
) -> ReverseWordsAppStatus {
    let current = cr.status.clone().unwrap_or_default();
    let r = readiness(deployment, cr.spec.effective_replicas());
    let reason = if r.ready {
        REASON_READY
    } else {
        REASON_NOT_READY
    };
    let generation = cr.metadata.generation;
    let mut conditions = current.conditions;
    set_condition(
        &mut conditions,
        condition(
            CONDITION_READY,
            r.ready,
            reason,
            &r.message,
            generation,
            &now,
        ),
    );
    set_condition(
        &mut conditions,
        condition(
            CONDITION_DEPLOYMENT_NOT_READY,
            !r.ready,
            reason,
            &r.message,
            generation,
            &now,
        ),
    );
    ReverseWordsAppStatus {
        app_pods: app_pods(pods),
        conditions,
        replicas: r.ready_replicas,
        selector: Some(desired::selector_string(&cr.name_any())),
        observed_generation: generation,
    }
}

/// Reason of the Ready=False condition on a CR that failed validation.
pub const REASON_INVALID_SPEC: &str = "InvalidSpec";

/// The status of a CR that failed validation: Ready=False naming the problem; everything else as
/// it was (the children, if any, are left alone until the spec is fixed).
pub fn invalid_status(cr: &ReverseWordsApp, problem: &str, now: Time) -> ReverseWordsAppStatus {
    let mut status = cr.status.clone().unwrap_or_default();
    let generation = cr.metadata.generation;
    set_condition(
        &mut status.conditions,
        condition(
            CONDITION_READY,
            false,
            REASON_INVALID_SPEC,
            problem,
            generation,
            &now,
        ),
    );
    status.observed_generation = generation;
    status
}

/// Whether the CR reports Ready=True.
pub fn is_ready(status: &ReverseWordsAppStatus) -> bool {
    status
        .conditions
        .iter()
        .any(|c| c.type_ == CONDITION_READY && c.status == "True")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::ReverseWordsAppSpec;
    use k8s_openapi::api::apps::v1::DeploymentStatus;
    use k8s_openapi::api::core::v1::PodStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn t(secs: i64) -> Time {
        Time(k8s_openapi::jiff::Timestamp::from_second(secs).unwrap())
    }

    fn pod(name: &str, phase: &str, terminating: bool) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                deletion_timestamp: terminating.then(|| t(5)),
                ..Default::default()
            },
            status: Some(PodStatus {
                phase: Some(phase.into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn dep(generation: i64, observed: i64, ready: i32, updated: i32) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                generation: Some(generation),
                ..Default::default()
            },
            status: Some(DeploymentStatus {
                observed_generation: Some(observed),
                ready_replicas: Some(ready),
                updated_replicas: Some(updated),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn cr(replicas: i32) -> ReverseWordsApp {
        let mut cr = ReverseWordsApp::new(
            "example",
            ReverseWordsAppSpec {
                replicas,
                app_version: None,
            },
        );
        cr.metadata.generation = Some(4);
        cr
    }

    #[test]
    fn app_pods_lists_pending_and_running_not_terminating() {
        let pods = [
            pod("c", "Running", false),
            pod("a", "Pending", false),
            pod("b", "Running", true),
            pod("d", "Succeeded", false),
            pod("e", "Failed", false),
        ];
        assert_eq!(app_pods(&pods), ["a", "c"]);
    }

    #[test]
    fn readiness_needs_observed_generation_ready_and_updated() {
        assert!(readiness(Some(&dep(2, 2, 3, 3)), 3).ready);
        assert!(
            !readiness(Some(&dep(3, 2, 3, 3)), 3).ready,
            "old generation"
        );
        assert!(!readiness(Some(&dep(2, 2, 2, 3)), 3).ready, "not all ready");
        assert!(!readiness(Some(&dep(2, 2, 3, 1)), 3).ready, "rolling");
        assert!(!readiness(None, 1).ready);
    }

    #[test]
    fn conditions_are_opposite_and_keep_transition_time() {
        let mut c = cr(2);
        let s1 = desired_status(&c, Some(&dep(1, 1, 0, 0)), &[], t(100));
        let ready = s1
            .conditions
            .iter()
            .find(|c| c.type_ == CONDITION_READY)
            .unwrap();
        let not_ready = s1
            .conditions
            .iter()
            .find(|c| c.type_ == CONDITION_DEPLOYMENT_NOT_READY)
            .unwrap();
        assert_eq!(
            (ready.status.as_str(), not_ready.status.as_str()),
            ("False", "True")
        );
        assert_eq!(ready.reason, REASON_NOT_READY);
        assert_eq!(ready.observed_generation, Some(4));
        assert!(!is_ready(&s1));

        // Same observation later: identical status, so no write is needed.
        c.status = Some(s1.clone());
        let s2 = desired_status(&c, Some(&dep(1, 1, 0, 0)), &[], t(200));
        assert_eq!(s1, s2);

        // Ready now: the transition time moves.
        c.status = Some(s2);
        let s3 = desired_status(
            &c,
            Some(&dep(1, 1, 2, 2)),
            &[pod("p", "Running", false)],
            t(300),
        );
        let ready = s3
            .conditions
            .iter()
            .find(|c| c.type_ == CONDITION_READY)
            .unwrap();
        assert_eq!(ready.status, "True");
        assert_eq!(ready.last_transition_time, t(300));
        assert_eq!(s3.replicas, 2);
        assert_eq!(s3.app_pods, ["p"]);
        assert_eq!(s3.selector.as_deref(), Some("app=example"));
        assert!(is_ready(&s3));
    }

    #[test]
    fn set_condition_updates_message_without_moving_time() {
        let mut v = vec![condition("Ready", false, "A", "one", Some(1), &t(1))];
        set_condition(
            &mut v,
            condition("Ready", false, "B", "two", Some(2), &t(9)),
        );
        assert_eq!(v.len(), 1);
        assert_eq!(v[0].message, "two");
        assert_eq!(v[0].last_transition_time, t(1));
        set_condition(&mut v, condition("Other", true, "C", "x", None, &t(9)));
        assert_eq!(v.len(), 2);
    }
}
