//! The objects a ReverseWordsApp should own, built as pure functions of the validated app
//! ([`crate::validate::ValidApp`]).
//!
//! Nothing here talks to the API server: reconcile applies what these return with server-side
//! apply, so the same CR always yields the same request, and drift in the cluster is corrected
//! simply by applying again.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, HTTPGetAction, PodSpec, PodTemplateSpec, Probe,
    ResourceRequirements, SeccompProfile, SecurityContext, Service, ServicePort, ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::image::OperandImage;
use crate::validate::ValidApp;
pub use crate::validate::{deployment_name, service_name};

/// Port the reverse-words application listens on.
pub const APP_PORT: i32 = 8080;
/// Container name inside the application pods.
pub const CONTAINER_NAME: &str = "reversewords";
/// Value of `app.kubernetes.io/managed-by` on everything this operator creates.
pub const MANAGED_BY: &str = "reverse-words-operator";
/// Value of `app.kubernetes.io/name` on the application objects.
pub const APP_NAME: &str = "reverse-words";

/// The pod selector: `app: <name>`, as the Go operator used (selectors are immutable, so keeping
/// it lets this operator adopt Deployments the Go operator created).
pub fn selector_labels(cr_name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("app".to_string(), cr_name.to_string())])
}

/// The selector in string form, for `status.selector`.
pub fn selector_string(cr_name: &str) -> String {
    format!("app={cr_name}")
}

/// All labels on the application objects and pods: the selector plus the recommended
/// `app.kubernetes.io` set.
pub fn labels(app: &ValidApp) -> BTreeMap<String, String> {
    let name = app.name();
    let mut l = selector_labels(name);
    l.insert("app.kubernetes.io/name".into(), APP_NAME.into());
    l.insert("app.kubernetes.io/instance".into(), name.into());
    l.insert(
        "app.kubernetes.io/version".into(),
        app.effective_app_version().into(),
    );
    l.insert("app.kubernetes.io/component".into(), "web".into());
    l.insert("app.kubernetes.io/part-of".into(), APP_NAME.into());
    l.insert("app.kubernetes.io/managed-by".into(), MANAGED_BY.into());
    l
}

/// Metadata of a child: its name, the app's labels, and the owner reference making the CR its
/// controller (garbage collection, owns-watch).
fn meta(app: &ValidApp, name: String) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(app.namespace().into()),
        labels: Some(labels(app)),
        owner_references: Some(vec![app.owner().clone()]),
        ..Default::default()
    }
}

fn http_probe(initial_delay: i32) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some("/health".into()),
            port: IntOrString::Int(APP_PORT),
            scheme: Some("HTTP".into()),
            ..Default::default()
        }),
        initial_delay_seconds: Some(initial_delay),
        period_seconds: Some(10),
        timeout_seconds: Some(2),
        failure_threshold: Some(3),
        ..Default::default()
    }
}

/// Resource quantities from `(name, amount)` pairs.
pub(crate) fn quantities(pairs: &[(&str, &str)]) -> BTreeMap<String, Quantity> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), Quantity(v.to_string())))
        .collect()
}

/// The application Deployment `dp-<name>`.
pub fn deployment(app: &ValidApp, image: &OperandImage) -> Deployment {
    let name = app.name();
    let pod_labels = labels(app);
    Deployment {
        metadata: meta(app, deployment_name(name)),
        spec: Some(DeploymentSpec {
            replicas: Some(app.replicas()),
            selector: LabelSelector {
                match_labels: Some(selector_labels(name)),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(pod_labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: CONTAINER_NAME.into(),
                        image: Some(image.for_app_version(app.app_version())),
                        ports: Some(vec![ContainerPort {
                            name: Some("http".into()),
                            container_port: APP_PORT,
                            protocol: Some("TCP".into()),
                            ..Default::default()
                        }]),
                        liveness_probe: Some(http_probe(5)),
                        readiness_probe: Some(http_probe(1)),
                        resources: Some(ResourceRequirements {
                            requests: Some(quantities(&[("cpu", "10m"), ("memory", "16Mi")])),
                            limits: Some(quantities(&[("memory", "128Mi")])),
                            ..Default::default()
                        }),
                        security_context: Some(SecurityContext {
                            allow_privilege_escalation: Some(false),
                            capabilities: Some(Capabilities {
                                drop: Some(vec!["ALL".into()]),
                                ..Default::default()
                            }),
                            seccomp_profile: Some(SeccompProfile {
                                type_: "RuntimeDefault".into(),
                                ..Default::default()
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    }
}

/// The application Service `service-<name>` (type LoadBalancer, port 8080).
pub fn service(app: &ValidApp) -> Service {
    let name = app.name();
    Service {
        metadata: meta(app, service_name(name)),
        spec: Some(ServiceSpec {
            type_: Some("LoadBalancer".into()),
            selector: Some(selector_labels(name)),
            ports: Some(vec![ServicePort {
                name: Some("http".into()),
                port: APP_PORT,
                target_port: Some(IntOrString::Int(APP_PORT)),
                protocol: Some("TCP".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{ReverseWordsApp, ReverseWordsAppSpec};

    pub(crate) fn cr(replicas: i32, version: Option<&str>) -> ValidApp {
        let mut cr = ReverseWordsApp::new(
            "example",
            ReverseWordsAppSpec {
                replicas,
                app_version: version.map(String::from),
            },
        );
        cr.metadata.namespace = Some("apps".into());
        cr.metadata.uid = Some("0000-1111".into());
        crate::validate::validate(&cr).expect("valid")
    }

    #[test]
    fn deployment_matches_the_go_operator_shape() {
        let d = deployment(&cr(3, Some("v0.0.2")), &OperandImage::default());
        assert_eq!(d.metadata.name.as_deref(), Some("dp-example"));
        assert_eq!(d.metadata.namespace.as_deref(), Some("apps"));
        let spec = d.spec.unwrap();
        assert_eq!(spec.replicas, Some(3));
        assert_eq!(spec.selector.match_labels.unwrap()["app"], "example");
        let pod = spec.template.spec.unwrap();
        let c = &pod.containers[0];
        assert_eq!(
            c.image.as_deref(),
            Some("quay.io/mavazque/reversewords:v0.0.2")
        );
        assert_eq!(c.ports.as_ref().unwrap()[0].container_port, 8080);
        let probe = c
            .readiness_probe
            .as_ref()
            .unwrap()
            .http_get
            .as_ref()
            .unwrap();
        assert_eq!(probe.path.as_deref(), Some("/health"));
        assert_eq!(probe.port, IntOrString::Int(8080));
        assert!(c.liveness_probe.is_some());
        let labels = spec.template.metadata.unwrap().labels.unwrap();
        assert_eq!(labels["app"], "example");
        assert_eq!(labels["app.kubernetes.io/instance"], "example");
        assert_eq!(labels["app.kubernetes.io/version"], "v0.0.2");
    }

    #[test]
    fn zero_replicas_become_one_and_default_tag_is_latest() {
        let d = deployment(&cr(0, None), &OperandImage::default());
        let spec = d.spec.unwrap();
        assert_eq!(spec.replicas, Some(1));
        assert_eq!(
            spec.template.spec.unwrap().containers[0].image.as_deref(),
            Some("quay.io/mavazque/reversewords:latest")
        );
    }

    #[test]
    fn children_are_controlled_by_the_cr() {
        let c = cr(1, None);
        for owners in [
            deployment(&c, &OperandImage::default())
                .metadata
                .owner_references,
            service(&c).metadata.owner_references,
        ] {
            let o = &owners.unwrap()[0];
            assert_eq!(o.kind, "ReverseWordsApp");
            assert_eq!(o.name, "example");
            assert_eq!(o.uid, "0000-1111");
            assert_eq!(o.controller, Some(true));
        }
    }

    #[test]
    fn service_is_a_load_balancer_on_8080() {
        let s = service(&cr(1, None));
        assert_eq!(s.metadata.name.as_deref(), Some("service-example"));
        let spec = s.spec.unwrap();
        assert_eq!(spec.type_.as_deref(), Some("LoadBalancer"));
        assert_eq!(spec.ports.as_ref().unwrap()[0].port, 8080);
        assert_eq!(spec.selector.unwrap()["app"], "example");
    }

    #[test]
    fn output_is_deterministic() {
        let a = serde_json::to_string(&deployment(&cr(2, Some("x")), &OperandImage::default()))
            .unwrap();
        let b = serde_json::to_string(&deployment(&cr(2, Some("x")), &OperandImage::default()))
            .unwrap();
        assert_eq!(a, b);
    }
}
