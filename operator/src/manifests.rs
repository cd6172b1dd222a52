//! Everything needed to run the operator, generated from the code: the CRD (from the Rust
//! types), ServiceAccount, least-privilege RBAC (from [`crate::rbac`]), the operator Deployment
//! and a sample CR. `reverse-words-operator manifests` prints these; `olm bundle generate` and the
//! plain install consume them, so there is one source of truth.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, EnvVar, EnvVarSource, HTTPGetAction, Namespace,
    ObjectFieldSelector, PodSecurityContext, PodSpec, PodTemplateSpec, Probe, ResourceRequirements,
    SeccompProfile, SecurityContext, ServiceAccount,
};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResourceExt;
use serde_json::Value;

use crate::crd::{ReverseWordsApp, ReverseWordsAppSpec};
use crate::desired::quantities;
use crate::image::{DEFAULT_REPOSITORY, RELATED_IMAGE_ENV};
use crate::namespace::WatchNamespaces;
use crate::rbac;

/// Name of the operator (ServiceAccount, Deployment, RBAC prefix, lease).
pub const OPERATOR_NAME: &str = "reverse-words-operator";
/// Namespace the plain install uses by default (operator-sdk's `<project>-system` convention).
pub const DEFAULT_NAMESPACE: &str = "reverse-words-operator-system";
/// Repository of the operator image.
pub const OPERATOR_REPOSITORY: &str = "quay.io/reverse-words/reverse-words-operator";
/// Port of the Prometheus metrics endpoint.
pub const METRICS_PORT: i32 = 8080;
/// Port of the health probes.
pub const HEALTH_PORT: i32 = 8081;
/// UID/GID the operator runs as (the image's non-root user).
pub const RUN_AS_USER: i64 = 65532;

/// What to generate.
#[derive(Debug, Clone)]
pub struct Options {
    /// Namespace the operator runs in.
    pub namespace: String,
    /// Namespaces it reconciles; decides ClusterRole vs per-namespace Roles.
    pub watch: WatchNamespaces,
    /// Operator image reference.
    pub image: String,
    /// Also emit the Namespace object (for a plain install; OLM bundles must not contain one).
    pub include_namespace: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            namespace: DEFAULT_NAMESPACE.into(),
            watch: WatchNamespaces::All,
            image: default_image(),
            include_namespace: false,
        }
    }
}

/// The operator image for this build's version.
pub fn default_image() -> String {
    format!("{OPERATOR_REPOSITORY}:v{}", env!("CARGO_PKG_VERSION"))
}

/// One generated manifest with the file name it gets under `--output`.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub file: String,
    pub object: Value,
}

fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "app.kubernetes.io/name".to_string(),
            OPERATOR_NAME.to_string(),
        ),
        (
            "app.kubernetes.io/component".to_string(),
            "operator".to_string(),
        ),
        (
            "app.kubernetes.io/part-of".to_string(),
            "reverse-words".to_string(),
        ),
    ])
}

fn selector() -> BTreeMap<String, String> {
    BTreeMap::from([(
        "app.kubernetes.io/name".to_string(),
        OPERATOR_NAME.to_string(),
    )])
}

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: namespace.map(Into::into),
        labels: Some(labels()),
        ..Default::default()
    }
}

fn subject(opts: &Options) -> Vec<Subject> {
    vec![Subject {
        kind: "ServiceAccount".into(),
        name: OPERATOR_NAME.into(),
        namespace: Some(opts.namespace.clone()),
        ..Default::default()
    }]
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    // k8s-openapi types always serialise; a failure here is a programming error in this module.
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// schemars writes bounds as floats (`maximum: 100.0`); controller-gen, and Go's JSON for a
/// float64, write a whole number as an integer (`maximum: 100`). Same value, the bytes
/// operator-sdk users and opm expect.
fn whole_floats_as_integers(v: Value) -> Value {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                Value::Number((f as i64).into())
            }
            _ => Value::Number(n),
        },
        Value::Array(a) => Value::Array(a.into_iter().map(whole_floats_as_integers).collect()),
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| (k, whole_floats_as_integers(v)))
                .collect(),
        ),
        other => other,
    }
}

fn env_field(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector {
                field_path: path.into(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn env_value(name: &str, value: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value.into()),
        ..Default::default()
    }
}

fn probe(path: &str) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.into()),
            port: IntOrString::Int(HEALTH_PORT),
            ..Default::default()
        }),
        initial_delay_seconds: Some(5),
        period_seconds: Some(10),
        ..Default::default()
    }
}

/// The operator Deployment: non-root, read-only root filesystem, no capabilities, seccomp
/// RuntimeDefault, requests/limits, probes, WATCH_NAMESPACE.
pub fn operator_deployment(opts: &Options) -> Deployment {
    let watch = match &opts.watch {
        WatchNamespaces::All => String::new(),
        WatchNamespaces::Some(s) => s.iter().cloned().collect::<Vec<_>>().join(","),
    };
    Deployment {
        metadata: meta(OPERATOR_NAME, Some(&opts.namespace)),
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(selector()),
                ..Default::default()
            },
            strategy: Some(DeploymentStrategy {
                type_: Some("Recreate".into()),
                ..Default::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels()),
                    annotations: Some(BTreeMap::from([(
                        "kubectl.kubernetes.io/default-container".to_string(),
                        "operator".to_string(),
                    )])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    service_account_name: Some(OPERATOR_NAME.into()),
                    termination_grace_period_seconds: Some(10),
                    security_context: Some(PodSecurityContext {
                        run_as_non_root: Some(true),
                        run_as_user: Some(RUN_AS_USER),
                        run_as_group: Some(RUN_AS_USER),
                        seccomp_profile: Some(SeccompProfile {
                            type_: "RuntimeDefault".into(),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                    containers: vec![Container {
                        name: "operator".into(),
                        image: Some(opts.image.clone()),
                        args: Some(vec!["run".into()]),
                        env: Some(vec![
                            env_value("WATCH_NAMESPACE", &watch),
                            env_field("POD_NAMESPACE", "metadata.namespace"),
                            env_field("POD_NAME", "metadata.name"),
                            env_value(RELATED_IMAGE_ENV, &format!("{DEFAULT_REPOSITORY}:latest")),
                        ]),
                        ports: Some(vec![
                            ContainerPort {
                                name: Some("metrics".into()),
                                container_port: METRICS_PORT,
                                protocol: Some("TCP".into()),
                                ..Default::default()
                            },
                            ContainerPort {
                                name: Some("health".into()),
                                container_port: HEALTH_PORT,
                                protocol: Some("TCP".into()),
                                ..Default::default()
                            },
                        ]),
                        liveness_probe: Some(probe("/healthz")),
                        readiness_probe: Some(probe("/readyz")),
                        resources: Some(ResourceRequirements {
                            requests: Some(quantities(&[("cpu", "10m"), ("memory", "32Mi")])),
                            limits: Some(quantities(&[("cpu", "500m"), ("memory", "128Mi")])),
                            ..Default::default()
                        }),
                        security_context: Some(SecurityContext {
                            allow_privilege_escalation: Some(false),
                            read_only_root_filesystem: Some(true),
                            run_as_non_root: Some(true),
                            capabilities: Some(Capabilities {
                                drop: Some(vec!["ALL".into()]),
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

/// The sample CR (becomes the bundle's `alm-examples`).
pub fn sample() -> ReverseWordsApp {
    ReverseWordsApp::new(
        "reversewordsapp-sample",
        ReverseWordsAppSpec {
            replicas: 1,
            app_version: Some("latest".into()),
        },
    )
}

/// Every manifest, in apply order.
pub fn all(opts: &Options) -> Vec<Manifest> {
    let mut out = Vec::new();
    let mut push = |file: &str, object: Value| {
        out.push(Manifest {
            file: file.into(),
            object,
        })
    };
    let ns = opts.namespace.as_str();

    if opts.include_namespace {
        push(
            "namespace.yaml",
            to_value(&Namespace {
                metadata: meta(ns, None),
                ..Default::default()
            }),
        );
    }
    push(
        "crd.yaml",
        whole_floats_as_integers(to_value(&ReverseWordsApp::crd())),
    );
    push(
        "service_account.yaml",
        to_value(&ServiceAccount {
            metadata: meta(OPERATOR_NAME, Some(ns)),
            ..Default::default()
        }),
    );

    let manager = format!("{OPERATOR_NAME}-manager");
    match opts.watch.names() {
        None => {
            push(
                "manager_role.yaml",
                to_value(&ClusterRole {
                    metadata: meta(&manager, None),
                    rules: Some(rbac::policy_rules(rbac::RECONCILE)),
                    ..Default::default()
                }),
            );
            push(
                "manager_role_binding.yaml",
                to_value(&ClusterRoleBinding {
                    metadata: meta(&manager, None),
                    role_ref: RoleRef {
                        api_group: "rbac.authorization.k8s.io".into(),
                        kind: "ClusterRole".into(),
                        name: manager.clone(),
                    },
                    subjects: Some(subject(opts)),
                }),
            );
        }
        Some(names) => {
            for watched in names {
                let suffix = if names.len() == 1 {
                    String::new()
                } else {
                    format!("_{watched}")
                };
                push(
                    &format!("manager_role{suffix}.yaml"),
                    to_value(&Role {
                        metadata: meta(&manager, Some(watched)),
                        rules: Some(rbac::policy_rules(rbac::RECONCILE)),
                    }),
                );
                push(
                    &format!("manager_role_binding{suffix}.yaml"),
                    to_value(&RoleBinding {
                        metadata: meta(&manager, Some(watched)),
                        role_ref: RoleRef {
                            api_group: "rbac.authorization.k8s.io".into(),
                            kind: "Role".into(),
                            name: manager.clone(),
                        },
                        subjects: Some(subject(opts)),
                    }),
                );
            }
        }
    }
    let leader = format!("{OPERATOR_NAME}-leader-election");
    push(
        "leader_election_role.yaml",
        to_value(&Role {
            metadata: meta(&leader, Some(ns)),
            rules: Some(rbac::policy_rules(rbac::LEADER_ELECTION)),
        }),
    );
    push(
        "leader_election_role_binding.yaml",
        to_value(&RoleBinding {
            metadata: meta(&leader, Some(ns)),
            role_ref: RoleRef {
                api_group: "rbac.authorization.k8s.io".into(),
                kind: "Role".into(),
                name: leader.clone(),
            },
            subjects: Some(subject(opts)),
        }),
    );
    push("deployment.yaml", to_value(&operator_deployment(opts)));
    push("sample_reversewordsapp.yaml", to_value(&sample()));
    out
}

/// Renders manifests as one multi-document YAML stream.
pub fn to_yaml_stream(manifests: &[Manifest]) -> Result<String, serde_saphyr::SerializeError> {
    let mut out = String::new();
    for m in manifests {
        out.push_str("---\n");
        out.push_str(&serde_saphyr::to_string(&m.object)?);
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(ms: &[Manifest]) -> Vec<String> {
        ms.iter()
            .map(|m| m.object["kind"].as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn crd_bounds_are_written_as_integers() {
        let v =
            whole_floats_as_integers(serde_json::json!({"maximum": 100.0, "m": 0.5, "n": [3.0]}));
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"maximum":100,"m":0.5,"n":[3]}"#
        );
        let crd = all(&Options::default())
            .into_iter()
            .find(|m| m.object["kind"] == "CustomResourceDefinition")
            .expect("a CRD");
        let text = to_yaml_stream(std::slice::from_ref(&crd)).unwrap();
        assert!(text.contains("maximum: 100\n"), "{text}");
    }

    #[test]
    fn all_namespaces_uses_a_cluster_role() {
        let ms = all(&Options::default());
        assert_eq!(
            kinds(&ms),
            [
                "CustomResourceDefinition",
                "ServiceAccount",
                "ClusterRole",
                "ClusterRoleBinding",
                "Role",
                "RoleBinding",
                "Deployment",
                "ReverseWordsApp"
            ]
        );
    }

    #[test]
    fn watched_namespaces_use_roles_in_each() {
        let opts = Options {
            watch: WatchNamespaces::parse("a,b").unwrap(),
            include_namespace: true,
            ..Default::default()
        };
        let ms = all(&opts);
        let roles: Vec<_> = ms
            .iter()
            .filter(|m| m.object["kind"] == "Role")
            .map(|m| {
                m.object["metadata"]["namespace"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(roles, ["a", "b", DEFAULT_NAMESPACE]);
        assert!(!kinds(&ms).contains(&"ClusterRole".to_string()));
        assert_eq!(ms[0].object["kind"], "Namespace");
        let dep = ms
            .iter()
            .find(|m| m.object["kind"] == "Deployment")
            .unwrap();
        let env = &dep.object["spec"]["template"]["spec"]["containers"][0]["env"];
        assert_eq!(env[0]["name"], "WATCH_NAMESPACE");
        assert_eq!(env[0]["value"], "a,b");
    }

    #[test]
    fn operator_pod_is_locked_down() {
        let d = serde_json::to_value(operator_deployment(&Options::default())).unwrap();
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault"
        );
        let c = &pod["containers"][0];
        assert_eq!(c["securityContext"]["readOnlyRootFilesystem"], true);
        assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
        assert_eq!(c["securityContext"]["capabilities"]["drop"][0], "ALL");
        assert!(c["resources"]["requests"]["memory"].is_string());
        assert!(c["resources"]["limits"]["memory"].is_string());
        assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/readyz");
        assert_eq!(c["livenessProbe"]["httpGet"]["path"], "/healthz");
    }

    #[test]
    fn yaml_stream_is_deterministic_and_parses_back() {
        let a = to_yaml_stream(&all(&Options::default())).unwrap();
        let b = to_yaml_stream(&all(&Options::default())).unwrap();
        assert_eq!(a, b);
        let docs: Vec<Value> = serde_saphyr::from_multiple(&a).unwrap();
        assert_eq!(docs.len(), 8);
        assert_eq!(docs[0]["spec"]["names"]["kind"], "ReverseWordsApp");
    }
}
