//! Objects that can hurt a cluster (operator-framework/api `internal/object.go`):
//! PodDisruptionBudgets that block drains, a default PriorityClass, and RBAC on PDBs or on
//! OpenShift's default SecurityContextConstraints.

use serde_json::Value;

use super::v::arr_at;
use super::{Ctx, Finding};

const V: &str = "object";
const DEFAULT_SCCS: [&str; 8] = [
    "privileged",
    "restricted",
    "anyuid",
    "hostaccess",
    "hostmount-anyuid",
    "hostnetwork",
    "node-exporter",
    "nonroot",
];

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for m in &ctx.bundle.manifests {
        let o = &m.object;
        let f = |level_error: bool, check, msg: &str, field: &str| {
            let f = if level_error {
                Finding::error(V, check, msg)
            } else {
                Finding::warning(V, check, msg)
            };
            f.file(m.file.clone()).field(field.to_string())
        };
        match m.kind() {
            "PodDisruptionBudget" => {
                if let Some(v) = o.pointer("/spec/maxUnavailable")
                    && (v.as_i64() == Some(0)
                        || v.as_str() == Some("0%")
                        || v.as_str() == Some("0"))
                {
                    out.push(f(true, "pdb", "maxUnavailable field cannot be set to 0 or 0%", "spec.maxUnavailable").hint("a PDB that allows no disruption blocks node drains and cluster upgrades"));
                }
                if let Some(v) = o.pointer("/spec/minAvailable")
                    && v.as_str() == Some("100%")
                {
                    out.push(
                        f(
                            true,
                            "pdb",
                            "minAvailable field cannot be set to 100%",
                            "spec.minAvailable",
                        )
                        .hint(
                            "a PDB that requires every pod blocks node drains and cluster upgrades",
                        ),
                    );
                }
            }
            "PriorityClass" if o.get("globalDefault").and_then(Value::as_bool) == Some(true) => {
                out.push(
                    f(
                        true,
                        "priority-class",
                        "globalDefault field cannot be set to true",
                        "globalDefault",
                    )
                    .hint("an operator must not change the priority of every pod in the cluster"),
                );
            }
            "Role" | "ClusterRole" => {
                for (i, r) in arr_at(o, "/rules").iter().enumerate() {
                    let list = |k: &str| -> Vec<&str> {
                        arr_at(r, &format!("/{k}"))
                            .iter()
                            .filter_map(Value::as_str)
                            .collect()
                    };
                    let groups = list("apiGroups");
                    let resources = list("resources");
                    let verbs = list("verbs");
                    let any = |l: &[&str], wanted: &[&str]| {
                        l.iter().any(|x| *x == "*" || wanted.contains(x))
                    };
                    if any(&groups, &["policy"])
                        && any(&resources, &["poddisruptionbudgets"])
                        && any(&verbs, &["create", "update", "patch"])
                    {
                        out.push(f(false, "rbac", "RBAC includes permission to create/update poddisruptionbudgets, which could impact cluster stability", &format!("rules[{i}]")));
                    }
                    let names = list("resourceNames");
                    if any(&groups, &["security.openshift.io"])
                        && any(&resources, &["securitycontextconstraints"])
                        && any(&verbs, &["update", "patch", "delete", "deletecollection"])
                        && names.iter().any(|n| DEFAULT_SCCS.contains(n))
                    {
                        out.push(f(true, "rbac", "RBAC includes permission to modify default securitycontextconstraints, which could impact cluster stability", &format!("rules[{i}]")).hint("create your own SCC and grant `use` on it instead"));
                    }
                }
            }
            _ => {}
        }
    }
    out
}
