//! Copy-ready install snippets for a package, made by the builders `olm deploy generate` and
//! `olm install` use: OLM v0 (OperatorGroup + Subscription per channel), OLM v1 (Namespace,
//! installer ServiceAccount, its least-privilege RBAC derived from the head bundle's
//! manifests, ClusterExtension) and the `olm install` command lines.

use std::path::PathBuf;

use serde_json::Value;

use super::view::PackageView;
use crate::bundle::load::{BundleDir, Manifest};
use crate::deploy::objects::{
    self, Approval, CatalogServing, CatalogSpec, InstallMode, InstallSpec, Targets,
};
use crate::deploy::olmv1::objects::{self as v1, CatalogImage, ExtensionSpec, UpgradePolicy};
use crate::deploy::olmv1::rbac::{RbacTarget, installer_rbac};
use crate::yaml;

/// Where the snippets say the catalog is.
#[derive(Debug, Clone)]
pub struct CatalogRef {
    /// The CatalogSource / ClusterCatalog name.
    pub name: String,
    /// The namespace of the CatalogSource (OLM v0).
    pub namespace: String,
    /// The catalog image, when known (`olm catalog site IMAGE`); else a placeholder.
    pub image: Option<String>,
}

/// Placeholder for a catalog image the browser cannot know.
pub const IMAGE_PLACEHOLDER: &str = "CATALOG_IMAGE";

/// The snippets of one package.
#[derive(Debug, Clone, Default)]
pub struct Snippets {
    /// Per channel (default first): its name and OperatorGroup + Subscription.
    pub v0: Vec<(String, String)>,
    /// Namespace, ServiceAccount, installer RBAC and ClusterExtension for the default channel.
    pub v1: String,
    /// Why the RBAC could not be derived, or what to check by hand.
    pub v1_notes: Vec<String>,
    /// `olm install` command lines (OLM v0, then OLM v1).
    pub cli: Vec<String>,
}

fn yaml_stream(docs: &[Value]) -> String {
    yaml::to_yaml_documents(docs).unwrap_or_default()
}

fn value<T: serde::Serialize>(o: &T) -> Value {
    serde_json::to_value(o).unwrap_or(Value::Null)
}

/// `s` as one POSIX shell word: as it is when made only of characters no shell treats
/// specially, else in single quotes (a quote inside written as `'\''`).
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._/:@=-".contains(&b));
    match plain {
        true => s.to_string(),
        false => format!("'{}'", s.replace('\'', r"'\''")),
    }
}

/// The snippets for `view` from catalog `catalog`.
pub fn snippets(view: &PackageView, catalog: &CatalogRef) -> Snippets {
    let namespace = view.name.clone();
    let all_namespaces = view.install_modes.iter().any(|m| m == "AllNamespaces");
    let mode = match all_namespaces {
        true => InstallMode::AllNamespaces,
        false => InstallMode::OwnNamespace,
    };
    // Own and All namespaces with no target list always resolve.
    let Ok(targets) = Targets::resolve(mode, &namespace, &[]) else {
        return Snippets::default();
    };
    let mut channels: Vec<&str> = view.channels.iter().map(|c| c.name.as_str()).collect();
    channels.sort_by_key(|c| *c != view.default_channel);
    let image = catalog.image.as_deref().unwrap_or(IMAGE_PLACEHOLDER);
    let v0 = channels
        .iter()
        .map(|channel| {
            let spec = InstallSpec {
                package: view.name.clone(),
                namespace: namespace.clone(),
                channel: Some(channel.to_string()),
                starting_csv: None,
                approval: Approval::Automatic,
                mode,
                targets: targets.clone(),
                catalog: CatalogSpec {
                    name: catalog.name.clone(),
                    serving: CatalogServing::Image {
                        image: image.to_string(),
                        poll_interval: None,
                    },
                    display_name: catalog.name.clone(),
                    publisher: None,
                },
                operator_group_name: view.name.clone(),
            };
            let mut sub = objects::subscription(&spec);
            // The Subscription points at the catalog's own CatalogSource.
            sub.spec.source_namespace = catalog.namespace.clone();
            let docs = [
                value(&objects::namespace(&spec)),
                value(&objects::operator_group(&spec)),
                value(&sub),
            ];
            (channel.to_string(), yaml_stream(&docs))
        })
        .collect();
    let spec = ExtensionSpec {
        name: view.name.clone(),
        package: view.name.clone(),
        namespace: namespace.clone(),
        service_account: format!("{}-installer", view.name),
        channels: vec![view.default_channel.clone()],
        version: None,
        upgrade_policy: UpgradePolicy::CatalogProvided,
        catalog: CatalogImage {
            name: catalog.name.clone(),
            image: image.to_string(),
            poll_interval_minutes: None,
        },
    };
    let mut docs = vec![
        value(&v1::namespace(&spec)),
        value(&v1::service_account(&spec)),
    ];
    let mut v1_notes = Vec::new();
    let bundle = BundleDir {
        root: PathBuf::from(&view.head_bundle),
        manifests: view
            .head_objects
            .iter()
            .enumerate()
            .filter_map(|(i, json)| {
                Some(Manifest {
                    file: PathBuf::from(format!("manifests/{i}.json")),
                    object: serde_json::from_str(json).ok()?,
                })
            })
            .collect(),
        has_manifests_dir: true,
        ..Default::default()
    };
    let target = RbacTarget {
        extension: spec.name.clone(),
        namespace: spec.namespace.clone(),
        service_account: spec.service_account.clone(),
        watch_namespace: None,
    };
    match installer_rbac(&bundle, &target).map(|r| (r.documents(), r.notes)) {
        Ok((Ok(rbac), notes)) => {
            docs.extend(rbac);
            v1_notes.extend(notes);
        }
        Ok((Err(e), _)) => v1_notes.push(format!("installer RBAC: {e}")),
        Err(e) => v1_notes.push(format!(
            "installer RBAC not derived ({e}): run `olm deploy generate --bundle <dir>` on the bundle"
        )),
    }
    docs.push(value(&v1::cluster_extension(&spec)));
    // Names come from the catalog: every word of a command line is quoted for the shell, so
    // a channel named `stable;curl x|sh` is copied as one argument, never as a command.
    let (image, package) = (shell_word(image), shell_word(&view.name));
    let (channel, namespace) = (shell_word(&view.default_channel), shell_word(&namespace));
    let cli = vec![
        format!(
            "olm install --catalog {image} --package {package} --channel {channel} -n {namespace}{}",
            match all_namespaces {
                true => " --install-mode all",
                false => "",
            }
        ),
        format!(
            "olm install --olm-v1 --catalog {image} --package {package} --channel {channel} -n {namespace}"
        ),
    ];
    Snippets {
        v0,
        v1: yaml_stream(&docs),
        v1_notes,
        cli,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::view::ChannelView;

    #[test]
    fn shell_words_are_quoted_unless_plain() {
        assert_eq!(
            shell_word("quay.io/o/c@sha256:ab=-_"),
            "quay.io/o/c@sha256:ab=-_"
        );
        assert_eq!(shell_word("stable;curl x|sh"), "'stable;curl x|sh'");
        assert_eq!(shell_word("a'b"), r"'a'\''b'");
        assert_eq!(shell_word("$(id)"), "'$(id)'");
        assert_eq!(shell_word(""), "''");
    }

    /// A hostile channel name is copied as one quoted argument.
    #[test]
    fn command_lines_quote_catalog_names() {
        let view = PackageView {
            name: "etcd".into(),
            default_channel: "stable;curl x|sh".into(),
            channels: vec![ChannelView {
                name: "stable;curl x|sh".into(),
                head: "etcd.v1".into(),
                head_version: "1.0.0".into(),
                is_default: true,
                deprecation: None,
                entries: 1,
            }],
            install_modes: vec!["AllNamespaces".into()],
            ..Default::default()
        };
        let catalog = CatalogRef {
            name: "c".into(),
            namespace: "olm".into(),
            image: Some("oci:/tmp/my dir:v1".into()),
        };
        let s = snippets(&view, &catalog);
        assert_eq!(
            s.cli,
            [
                "olm install --catalog 'oci:/tmp/my dir:v1' --package etcd --channel 'stable;curl x|sh' -n etcd --install-mode all",
                "olm install --olm-v1 --catalog 'oci:/tmp/my dir:v1' --package etcd --channel 'stable;curl x|sh' -n etcd",
            ]
        );
    }
}
