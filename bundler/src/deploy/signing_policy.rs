//! What makes a cluster refuse unsigned images of the operator: built from the public key
//! and the repositories the release signs, as pure data.
//!
//! - `policy/clusterimagepolicy.yaml`: OpenShift's `ClusterImagePolicy` (config.openshift.io/v1),
//!   a `PublicKey` root of trust over the repositories; the machine-config operator turns it
//!   into CRI-O's policy on every node.
//! - `policy/policy.json` and `policy/registries.d/<name>.yaml`: the same requirement for
//!   containers-image users elsewhere (CRI-O nodes without OpenShift, OLM v1's catalogd and
//!   operator-controller, podman): a `sigstoreSigned` requirement per repository, and
//!   `use-sigstore-attachments: true` so signatures are read from cosign's `.sig` tags.
//!
//! The signed identity must match the repository (`matchRepository`): a mirror reached
//! through an ImageDigestMirrorSet is checked against the original name, so one policy serves
//! both; a catalog whose references were rewritten to the mirror needs `remapIdentity`
//! (docs/images.md).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::generate::HEADER;
use crate::yaml;

/// The policy files, relative to the deploy root, with their contents.
pub fn files(
    name: &str,
    public_key_pem: &str,
    scopes: &[String],
) -> Result<Vec<(String, String)>, String> {
    let key_data = STANDARD.encode(public_key_pem.as_bytes());
    let cip = json!({
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterImagePolicy",
        "metadata": {"name": name},
        "spec": {
            "scopes": scopes,
            "policy": {
                "rootOfTrust": {
                    "policyType": "PublicKey",
                    "publicKey": {"keyData": key_data},
                },
                "signedIdentity": {"matchPolicy": "MatchRepository"},
            },
        },
    });
    let requirement = json!([{
        "type": "sigstoreSigned",
        "keyData": key_data,
        "signedIdentity": {"type": "matchRepository"},
    }]);
    let docker: serde_json::Map<String, Value> = scopes
        .iter()
        .map(|s| (s.clone(), requirement.clone()))
        .collect();
    let policy = json!({
        "default": [{"type": "insecureAcceptAnything"}],
        "transports": {"docker": docker},
    });
    let attachments: serde_json::Map<String, Value> = scopes
        .iter()
        .map(|s| (s.clone(), json!({"use-sigstore-attachments": true})))
        .collect();
    let registries_d = json!({"docker": attachments});
    let yaml_of = |v: &Value| {
        yaml::to_yaml(v)
            .map(|y| format!("{HEADER}{y}"))
            .map_err(|e| e.to_string())
    };
    Ok(vec![
        ("policy/clusterimagepolicy.yaml".into(), yaml_of(&cip)?),
        (
            "policy/policy.json".into(),
            serde_json::to_string_pretty(&policy).map_err(|e| e.to_string())? + "\n",
        ),
        (
            format!("policy/registries.d/{name}.yaml"),
            yaml_of(&registries_d)?,
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_names_every_repository_with_the_key() {
        let pem = "-----BEGIN PUBLIC KEY-----\nMFk=\n-----END PUBLIC KEY-----\n";
        let scopes = vec![
            "quay.io/org/catalog".to_string(),
            "quay.io/org/op".to_string(),
        ];
        let files = files("op-signed", pem, &scopes).unwrap();
        let cip = yaml::parse_value(std::path::Path::new("cip.yaml"), &files[0].1).unwrap();
        assert_eq!(
            cip["spec"]["policy"]["rootOfTrust"]["policyType"],
            "PublicKey"
        );
        let key = cip["spec"]["policy"]["rootOfTrust"]["publicKey"]["keyData"]
            .as_str()
            .unwrap();
        assert_eq!(STANDARD.decode(key).unwrap(), pem.as_bytes());
        assert_eq!(cip["spec"]["scopes"][1], "quay.io/org/op");
        let policy: Value = serde_json::from_str(&files[1].1).unwrap();
        assert_eq!(
            policy["transports"]["docker"]["quay.io/org/op"][0]["type"],
            "sigstoreSigned"
        );
        assert!(
            files[2].1.contains("use-sigstore-attachments: true"),
            "{}",
            files[2].1
        );
    }
}
