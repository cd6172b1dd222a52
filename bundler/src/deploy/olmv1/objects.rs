//! Pure builders for an OLM v1 install: the ClusterCatalog serving the catalog image, the
//! install namespace, the installer ServiceAccount and the ClusterExtension. `olm deploy
//! generate` writes them and `olm install --olm-v1` applies them, so both agree.

use std::collections::BTreeMap;
use std::fmt;

use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use serde_json::json;

use super::types::{
    CATALOG_NAME_LABEL, CatalogFilter, CatalogSource, ClusterCatalog, ClusterCatalogSpec,
    ClusterExtension, ClusterExtensionSpec, ExtensionSource, ImageSource, ServiceAccountRef,
};
use crate::deploy::objects::{
    ImageRef, InvalidInput, check_dns_label, check_dns_subdomain, meta, namespace_named,
};

/// `spec.source.catalog.upgradeConstraintPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpgradePolicy {
    /// Only the upgrade edges the catalog declares (replaces, skips, skipRange).
    #[default]
    CatalogProvided,
    /// Any version the filters allow, including downgrades: the user vouches for it.
    SelfCertified,
}

impl UpgradePolicy {
    pub fn parse(s: &str) -> Result<Self, InvalidInput> {
        match s.to_ascii_lowercase().as_str() {
            "catalogprovided" => Ok(Self::CatalogProvided),
            "selfcertified" => Ok(Self::SelfCertified),
            _ => Err(InvalidInput {
                field: "--upgrade-constraint-policy",
                message: format!("{s:?} is not CatalogProvided or SelfCertified"),
            }),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::CatalogProvided => "CatalogProvided",
            Self::SelfCertified => "SelfCertified",
        }
    }
}

impl fmt::Display for UpgradePolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Everything that decides the objects of an OLM v1 install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionSpec {
    /// The ClusterExtension's name (cluster-scoped).
    pub name: String,
    pub package: String,
    /// Install namespace: the bundle's namespaced objects and the installer ServiceAccount.
    pub namespace: String,
    pub service_account: String,
    /// Empty: the package's default channel.
    pub channels: Vec<String>,
    /// A version constraint (`1.2.3`, `>=1.0.0, <2.0.0`); `None`: the newest the channels offer.
    pub version: Option<String>,
    pub upgrade_policy: UpgradePolicy,
    pub catalog: CatalogImage,
}

/// The ClusterCatalog of an install.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogImage {
    pub name: String,
    pub image: String,
    /// Minutes between pulls of a tag; always `None` for a digest (the API server refuses it).
    pub poll_interval_minutes: Option<u32>,
}

impl CatalogImage {
    /// A catalog from `image`, polled every `poll` (a whole number of minutes) when the image
    /// is a tag; a digest reference never changes, so it is not polled.
    pub fn new(
        name: &str,
        image: &str,
        poll: Option<std::time::Duration>,
    ) -> Result<Self, InvalidInput> {
        let r = ImageRef::parse(image).map_err(|m| InvalidInput {
            field: "--catalog-image",
            message: m,
        })?;
        let minutes = match poll {
            Some(d) if r.digest.is_none() => {
                let s = d.as_secs();
                if s == 0 || s % 60 != 0 || d.subsec_nanos() != 0 {
                    return Err(InvalidInput {
                        field: "--poll-interval",
                        message: "a ClusterCatalog polls in whole minutes (1m, 10m, 1h)".into(),
                    });
                }
                Some(u32::try_from(s / 60).unwrap_or(u32::MAX))
            }
            _ => None,
        };
        Ok(Self {
            name: name.to_string(),
            image: image.to_string(),
            poll_interval_minutes: minutes,
        })
    }
}

/// The names of an install's objects: what upgrade, uninstall and diagnostics need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct V1Names {
    pub extension: String,
    pub namespace: String,
    pub service_account: String,
    pub catalog: String,
}

impl V1Names {
    /// The names `ce` was installed with (its namespace, service account and pinned
    /// catalog); `given` fills in a catalog it does not pin.
    pub fn installed(ce: &ClusterExtension, given: &V1Names) -> V1Names {
        V1Names {
            extension: given.extension.clone(),
            namespace: ce.spec.namespace.clone(),
            service_account: ce.spec.service_account.name.clone(),
            catalog: ce
                .pinned_catalog()
                .map_or_else(|| given.catalog.clone(), str::to_string),
        }
    }
}

impl ExtensionSpec {
    pub fn names(&self) -> V1Names {
        V1Names {
            extension: self.name.clone(),
            namespace: self.namespace.clone(),
            service_account: self.service_account.clone(),
            catalog: self.catalog.name.clone(),
        }
    }

    /// Checks what the API server would reject later with a less clear message.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        check_dns_subdomain("--extension-name", &self.name)?;
        check_dns_label("--namespace", &self.namespace)?;
        check_dns_subdomain("--package", &self.package)?;
        check_dns_subdomain("--service-account", &self.service_account)?;
        check_dns_subdomain("--catalog-name", &self.catalog.name)?;
        ImageRef::parse(&self.catalog.image).map_err(|m| InvalidInput {
            field: "--catalog-image",
            message: m,
        })?;
        for c in &self.channels {
            if c.trim().is_empty() {
                return Err(InvalidInput {
                    field: "--channel",
                    message: "must not be empty".into(),
                });
            }
        }
        if let Some(v) = &self.version
            && v.trim().is_empty()
        {
            return Err(InvalidInput {
                field: "--version",
                message: "must not be empty".into(),
            });
        }
        Ok(())
    }
}

/// The install namespace.
pub fn namespace(spec: &ExtensionSpec) -> Namespace {
    namespace_named(&spec.namespace)
}

/// The ServiceAccount operator-controller installs the bundle as.
pub fn service_account(spec: &ExtensionSpec) -> ServiceAccount {
    ServiceAccount {
        metadata: meta(&spec.service_account, Some(&spec.namespace)),
        ..Default::default()
    }
}

/// The ClusterCatalog: the catalog image, polled only when it is a tag.
pub fn cluster_catalog(spec: &ExtensionSpec) -> ClusterCatalog {
    cluster_catalog_of(&spec.catalog)
}

/// The ClusterCatalog of `c` alone (a mirror writes one without an install).
pub fn cluster_catalog_of(c: &CatalogImage) -> ClusterCatalog {
    let mut cc = ClusterCatalog::new(
        &c.name,
        ClusterCatalogSpec {
            source: CatalogSource {
                type_: "Image".into(),
                image: Some(ImageSource {
                    ref_: c.image.clone(),
                    poll_interval_minutes: c.poll_interval_minutes,
                }),
            },
            ..Default::default()
        },
    );
    cc.metadata = meta(&c.name, None);
    cc
}

/// The ClusterExtension, pinned to our ClusterCatalog by catalogd's name label so another
/// catalog offering the same package cannot make the resolution ambiguous.
pub fn cluster_extension(spec: &ExtensionSpec) -> ClusterExtension {
    let mut ce = ClusterExtension::new(
        &spec.name,
        ClusterExtensionSpec {
            namespace: spec.namespace.clone(),
            service_account: ServiceAccountRef {
                name: spec.service_account.clone(),
            },
            source: ExtensionSource {
                source_type: "Catalog".into(),
                catalog: Some(CatalogFilter {
                    package_name: spec.package.clone(),
                    version: spec.version.clone(),
                    channels: spec.channels.clone(),
                    selector: Some(catalog_selector(&spec.catalog.name)),
                    upgrade_constraint_policy: Some(spec.upgrade_policy.as_str().into()),
                }),
            },
        },
    );
    ce.metadata = meta(&spec.name, None);
    ce
}

/// The label selector that pins one ClusterCatalog by its name label.
pub fn catalog_selector(catalog: &str) -> serde_json::Value {
    json!({"matchLabels": BTreeMap::from([(CATALOG_NAME_LABEL, catalog)])})
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn spec(image: &str) -> ExtensionSpec {
        ExtensionSpec {
            name: "demo".into(),
            package: "demo".into(),
            namespace: "demo-system".into(),
            service_account: "demo-installer".into(),
            channels: vec!["stable".into()],
            version: Some(">=1.0.0, <2.0.0".into()),
            upgrade_policy: UpgradePolicy::CatalogProvided,
            catalog: CatalogImage::new("demo-catalog", image, Some(Duration::from_secs(600)))
                .unwrap(),
        }
    }

    #[test]
    fn a_digest_is_not_polled_and_a_tag_is() {
        let digest = format!("quay.io/x/cat@sha256:{}", "ab".repeat(32));
        let cc = cluster_catalog(&spec(&digest));
        let v = serde_json::to_value(&cc).unwrap();
        assert_eq!(v["apiVersion"], "olm.operatorframework.io/v1");
        assert_eq!(
            v["spec"],
            json!({"source": {"type": "Image", "image": {"ref": digest}}})
        );
        let cc = cluster_catalog(&spec("quay.io/x/cat:v1"));
        let v = serde_json::to_value(&cc).unwrap();
        assert_eq!(v["spec"]["source"]["image"]["pollIntervalMinutes"], 10);
        assert!(CatalogImage::new("c", "quay.io/x/c:v1", Some(Duration::from_secs(90))).is_err());
    }

    #[test]
    fn the_extension_names_package_channel_range_policy_and_account() {
        let v = serde_json::to_value(cluster_extension(&spec("quay.io/x/cat:v1"))).unwrap();
        assert_eq!(
            v["spec"],
            json!({
                "namespace": "demo-system",
                "serviceAccount": {"name": "demo-installer"},
                "source": {"sourceType": "Catalog", "catalog": {
                    "packageName": "demo", "version": ">=1.0.0, <2.0.0", "channels": ["stable"],
                    "selector": {"matchLabels": {"olm.operatorframework.io/metadata.name": "demo-catalog"}},
                    "upgradeConstraintPolicy": "CatalogProvided"
                }}
            })
        );
        assert!(v["metadata"].get("namespace").is_none());
        assert_eq!(
            UpgradePolicy::parse("selfcertified").unwrap(),
            UpgradePolicy::SelfCertified
        );
        assert!(UpgradePolicy::parse("whatever").is_err());
    }
}
