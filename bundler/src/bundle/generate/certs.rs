//! cert-manager objects under OLM. A kubebuilder project issues two certificates with
//! cert-manager: the webhook serving certificate and (go/v4) the metrics server certificate.
//! OLM replaces only the first: it issues a serving certificate for every Deployment that
//! serves a webhook of the CSV and mounts it where controller-runtime looks for it. So the
//! cert-manager objects are dropped, and a Deployment volume still mounting a Secret that
//! only cert-manager would have made is an error: its pod would never start.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::GenerateError;
use super::input::SourceObject;

/// Where OLM mounts the serving certificate it issues (controller-runtime's webhook
/// default and the aggregated API server's), replacing any volume mounted at the same path.
pub const OLM_CERT_PATHS: [&str; 2] = [
    "/tmp/k8s-webhook-server/serving-certs",
    "/apiserver.local.config/certificates",
];

/// The cert-manager objects of the input, dropped.
#[derive(Debug, Default)]
pub struct DroppedCerts {
    pub consumed: BTreeSet<usize>,
    /// (source, kind, name) of each dropped object, in input order.
    pub objects: Vec<(String, String, String)>,
    /// Secret name -> (Certificate name, source) for every dropped Certificate.
    pub secrets: BTreeMap<String, (String, String)>,
}

fn is_cert_manager(o: &SourceObject) -> bool {
    o.group() == "cert-manager.io" && matches!(o.kind(), "Certificate" | "Issuer" | "ClusterIssuer")
}

/// Finds the cert-manager objects (Certificate, Issuer, ClusterIssuer of cert-manager.io).
pub fn drop_cert_manager(objects: &[SourceObject]) -> DroppedCerts {
    let mut out = DroppedCerts::default();
    for (i, o) in objects
        .iter()
        .enumerate()
        .filter(|(_, o)| is_cert_manager(o))
    {
        out.consumed.insert(i);
        out.objects
            .push((o.source.clone(), o.kind().to_string(), o.name().to_string()));
        if o.kind() == "Certificate"
            && let Some(secret) = o.object.pointer("/spec/secretName").and_then(Value::as_str)
        {
            out.secrets
                .insert(secret.to_string(), (o.name().to_string(), o.source.clone()));
        }
    }
    out
}

impl DroppedCerts {
    /// One note per dropped object, saying what OLM does instead.
    pub fn notes(
        &self,
        deployments: &[&SourceObject],
        webhook_deployments: &BTreeSet<&str>,
    ) -> Vec<String> {
        self.objects
            .iter()
            .map(|(source, kind, name)| {
                let mut note = format!(
                    "{source}: cert-manager {kind} {name} dropped: OLM issues webhook serving certificates only"
                );
                if kind == "Certificate"
                    && let Some((secret, _)) = self.secrets.iter().find(|(_, (c, _))| c == name)
                {
                    let covered = deployments.iter().any(|d| {
                        webhook_deployments.contains(d.name())
                            && secret_mounts(d, secret)
                                .iter()
                                .any(|(_, paths)| !paths.is_empty() && paths.iter().all(|p| OLM_CERT_PATHS.contains(&p.as_str())))
                    });
                    if covered {
                        note.push_str(&format!(
                            " (it mounts its own at {} in place of Secret {secret})",
                            OLM_CERT_PATHS[0]
                        ));
                    } else {
                        note.push_str(&format!(", so Secret {secret} will not exist"));
                    }
                }
                note
            })
            .collect()
    }
}

/// The volumes of `d` backed by Secret `secret`, with the paths each is mounted at.
fn secret_mounts(d: &SourceObject, secret: &str) -> Vec<(String, Vec<String>)> {
    volumes(d)
        .filter(|(_, s, _)| s == secret)
        .map(|(v, _, _)| {
            let paths = mounts(d, &v);
            (v, paths)
        })
        .collect()
}

/// (volume name, secret name, optional) of every Secret volume of `d`.
fn volumes(d: &SourceObject) -> impl Iterator<Item = (String, String, bool)> + '_ {
    d.object
        .pointer("/spec/template/spec/volumes")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .filter_map(|v| {
            let name = v.get("name")?.as_str()?;
            let secret = v.get("secret")?;
            let secret_name = secret.get("secretName")?.as_str()?;
            let optional = secret.get("optional").and_then(Value::as_bool) == Some(true);
            Some((name.to_string(), secret_name.to_string(), optional))
        })
}

/// Every path volume `volume` is mounted at, in any container of `d`.
fn mounts(d: &SourceObject, volume: &str) -> Vec<String> {
    d.pod_containers()
        .into_iter()
        .flat_map(|c| {
            c.get("volumeMounts")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[])
        })
        .filter(|m| m.get("name").and_then(Value::as_str) == Some(volume))
        .filter_map(|m| {
            m.get("mountPath")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect()
}

/// Checks every mounted, non-optional Secret volume of the Deployments: an error when the
/// Secret was to come from a dropped cert-manager Certificate (the pod would wait for it
/// forever), a warning when nothing in the bundle creates it (someone must, before install).
/// A volume mounted only where OLM mounts its serving certificate, in a Deployment that
/// serves a webhook, is fine: OLM replaces the mount.
pub fn check_secret_volumes(
    deployments: &[&SourceObject],
    bundle_secrets: &BTreeSet<&str>,
    dropped: &DroppedCerts,
    webhook_deployments: &BTreeSet<&str>,
) -> Result<Vec<String>, GenerateError> {
    let mut warnings = Vec::new();
    for d in deployments {
        for (volume, secret, optional) in volumes(d) {
            let paths = mounts(d, &volume);
            if optional || paths.is_empty() || bundle_secrets.contains(secret.as_str()) {
                continue;
            }
            let replaced_by_olm = webhook_deployments.contains(d.name())
                && paths.iter().all(|p| OLM_CERT_PATHS.contains(&p.as_str()));
            if replaced_by_olm {
                continue;
            }
            let at = paths.join(", ");
            match dropped.secrets.get(&secret) {
                Some((cert, cert_source)) => {
                    let webhook_hint = if webhook_deployments.contains(d.name()) {
                        format!(
                            "; if it is the webhook serving certificate, mount it at {} where OLM puts its own",
                            OLM_CERT_PATHS[0]
                        )
                    } else {
                        String::new()
                    };
                    return Err(GenerateError::Input {
                        origin: d.source.clone(),
                        message: format!(
                            "Deployment {}: volume {volume:?} (mounted at {at}) uses Secret {secret:?}, which only cert-manager Certificate {cert} ({cert_source}) creates; OLM issues webhook serving certificates only, so nothing in the bundle creates that Secret and the pod would never start. \
                             Fix: for the metrics certificate of a go/v4 project, remove the `cert_metrics_manager_patch.yaml` patch (and the metrics Certificate) from config/default/kustomization.yaml so the manager serves metrics with a self-signed certificate; otherwise add the Secret to the manifests or set `secret.optional: true` on the volume{webhook_hint}",
                            d.name()
                        ),
                    });
                }
                None => warnings.push(format!(
                    "{}: Deployment {}: volume {volume:?} (mounted at {at}) uses Secret {secret:?}, which the bundle does not create; create it in the install namespace before installing, or set `secret.optional: true`",
                    d.source,
                    d.name()
                )),
            }
        }
    }
    Ok(warnings)
}
