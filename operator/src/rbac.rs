//! The operator's permissions, declared once.
//!
//! Every place that needs RBAC (the `manifests` output, and through it the bundle's CSV
//! `permissions` and the plain install) is generated from these tables, so the verbs listed here
//! are exactly the calls the code makes. Each rule says which call needs it.

use k8s_openapi::api::rbac::v1::PolicyRule;

/// One RBAC rule with the reason it exists.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub api_groups: &'static [&'static str],
    pub resources: &'static [&'static str],
    pub verbs: &'static [&'static str],
    /// Which code path needs it (kept next to the rule so reviews can check least privilege).
    pub why: &'static str,
}

/// Rules needed in every watched namespace.
pub const RECONCILE: &[Rule] = &[
    Rule {
        api_groups: &["apps.linuxera.org"],
        resources: &["reversewordsapps"],
        verbs: &["get", "list", "watch", "patch"],
        why: "watch CRs; add/remove the finalizer with a JSON patch",
    },
    Rule {
        api_groups: &["apps.linuxera.org"],
        resources: &["reversewordsapps/status"],
        verbs: &["get", "patch"],
        why: "write status through the status subresource",
    },
    Rule {
        api_groups: &["apps.linuxera.org"],
        resources: &["reversewordsapps/finalizers"],
        verbs: &["update"],
        why: "set blockOwnerDeletion owner references (OwnerReferencesPermissionEnforcement)",
    },
    Rule {
        api_groups: &["apps"],
        resources: &["deployments"],
        verbs: &["get", "list", "watch", "create", "patch", "delete"],
        why: "server-side apply of dp-<name> (create on first apply), owns-watch, cleanup",
    },
    Rule {
        api_groups: &[""],
        resources: &["services"],
        verbs: &["get", "list", "watch", "create", "patch", "delete"],
        why: "server-side apply of service-<name>, owns-watch, cleanup",
    },
    Rule {
        api_groups: &[""],
        resources: &["pods"],
        verbs: &["list", "watch"],
        why: "status.appPods and the pod watch",
    },
    Rule {
        api_groups: &["events.k8s.io"],
        resources: &["events"],
        verbs: &["create", "patch"],
        why: "Kubernetes Events on the CR (patch updates an event series)",
    },
];

/// Rules needed in the operator's own namespace for leader election.
pub const LEADER_ELECTION: &[Rule] = &[Rule {
    api_groups: &["coordination.k8s.io"],
    resources: &["leases"],
    verbs: &["get", "list", "watch", "create", "update", "patch"],
    why: "hold the leader-election Lease",
}];

/// Converts rules to Kubernetes PolicyRules.
pub fn policy_rules(rules: &[Rule]) -> Vec<PolicyRule> {
    rules
        .iter()
        .map(|r| PolicyRule {
            api_groups: Some(r.api_groups.iter().map(|s| s.to_string()).collect()),
            resources: Some(r.resources.iter().map(|s| s.to_string()).collect()),
            verbs: r.verbs.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_wildcards_and_no_secrets() {
        for r in RECONCILE.iter().chain(LEADER_ELECTION) {
            assert!(
                !r.verbs.contains(&"*") && !r.resources.contains(&"*"),
                "{r:?}"
            );
            assert!(!r.resources.contains(&"secrets"), "{r:?}");
            assert!(!r.why.is_empty());
        }
    }

    #[test]
    fn converts_to_policy_rules() {
        let rules = policy_rules(RECONCILE);
        assert_eq!(rules.len(), RECONCILE.len());
        assert_eq!(
            rules[0].api_groups.as_ref().unwrap()[0],
            "apps.linuxera.org"
        );
    }
}
