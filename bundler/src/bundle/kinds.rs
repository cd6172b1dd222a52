//! The object kinds OLM accepts in a registry+v1 bundle's `manifests/` (operator-registry's
//! `supported_resources.go`). OLM matches by kind only, whatever the group, so we do too.

/// `(kind, namespaced)` for every supported kind, in upstream order.
pub const SUPPORTED: [(&str, bool); 22] = [
    ("ClusterServiceVersion", true),
    ("CustomResourceDefinition", false),
    ("ClusterRole", false),
    ("ClusterRoleBinding", false),
    ("Service", true),
    ("ServiceAccount", true),
    ("Role", true),
    ("RoleBinding", true),
    ("PrometheusRule", true),
    ("ServiceMonitor", true),
    ("Secret", true),
    ("ConfigMap", true),
    ("PodDisruptionBudget", true),
    ("PriorityClass", false),
    ("VerticalPodAutoscaler", false),
    ("ConsoleYAMLSample", false),
    ("ConsoleQuickStart", false),
    ("ConsoleCLIDownload", false),
    ("ConsoleLink", false),
    ("ConsolePlugin", false),
    ("NetworkPolicy", true),
    ("PodMonitor", true),
];

/// Whether `kind` may appear in a registry+v1 bundle.
pub fn is_supported(kind: &str) -> bool {
    SUPPORTED.iter().any(|(k, _)| *k == kind)
}

/// The supported kinds as a comma-separated list, for error hints.
pub fn supported_list() -> String {
    SUPPORTED
        .iter()
        .map(|(k, _)| *k)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_match_is_exact() {
        assert!(is_supported("ServiceMonitor"));
        assert!(!is_supported("Deployment"));
        assert!(!is_supported("servicemonitor"));
    }
}
