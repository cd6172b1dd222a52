//! OLM v1 installs: the defaults (names derived from the package) and the installer RBAC read
//! from a bundle directory. Shared by `olm deploy generate --bundle` (files) and `olm install
//! --olm-v1`, which then runs [`crate::deploy::olmv1::flow`].

use std::path::Path;
use std::time::Duration;

use crate::bundle::load::{BundleDir, LoadError};
use crate::deploy::generate::OlmV1Install;
use crate::deploy::objects::{InvalidInput, parse_go_duration};
use crate::deploy::olmv1::flow::V1UpgradeSpec;
use crate::deploy::olmv1::objects::{CatalogImage, ExtensionSpec, UpgradePolicy, V1Names};
use crate::deploy::olmv1::rbac::{InstallerRbac, RbacError, RbacTarget, installer_rbac};

/// The settings of an OLM v1 install, before defaults.
#[derive(Debug, Clone, Default)]
pub struct V1Inputs {
    pub package: String,
    /// Default: the package name.
    pub extension_name: Option<String>,
    /// Default: the package name.
    pub namespace: Option<String>,
    /// Default: `<extension>-installer`.
    pub service_account: Option<String>,
    pub channel: Option<String>,
    pub version: Option<String>,
    /// Default: `CatalogProvided`.
    pub upgrade_policy: Option<UpgradePolicy>,
    /// Default: `<package>-catalog`.
    pub catalog_name: Option<String>,
    /// How often catalogd re-pulls a tag (Go duration, whole minutes); a digest is not polled.
    pub poll_interval: Option<String>,
}

impl V1Inputs {
    /// Resolves defaults against the catalog image and checks the result.
    pub fn to_spec(&self, catalog_image: &str) -> Result<ExtensionSpec, InvalidInput> {
        let package = self.package.clone();
        let name = self.names().extension;
        let poll: Option<Duration> = self
            .poll_interval
            .as_deref()
            .map(parse_go_duration)
            .transpose()
            .map_err(|m| InvalidInput {
                field: "--poll-interval",
                message: m,
            })?;
        let catalog_name = self
            .catalog_name
            .clone()
            .unwrap_or_else(|| format!("{package}-catalog"));
        let spec = ExtensionSpec {
            service_account: self
                .service_account
                .clone()
                .unwrap_or_else(|| format!("{name}-installer")),
            namespace: self.namespace.clone().unwrap_or_else(|| package.clone()),
            channels: self.channel.clone().into_iter().collect(),
            version: self.version.clone(),
            upgrade_policy: self.upgrade_policy.unwrap_or_default(),
            catalog: CatalogImage::new(&catalog_name, catalog_image, poll)?,
            name,
            package,
        };
        spec.validate()?;
        Ok(spec)
    }
}

impl V1Inputs {
    /// The names of the objects, with defaults, for upgrade, status and uninstall.
    pub fn names(&self) -> V1Names {
        let extension = self
            .extension_name
            .clone()
            .unwrap_or_else(|| self.package.clone());
        V1Names {
            service_account: self
                .service_account
                .clone()
                .unwrap_or_else(|| format!("{extension}-installer")),
            namespace: self
                .namespace
                .clone()
                .unwrap_or_else(|| self.package.clone()),
            catalog: self
                .catalog_name
                .clone()
                .unwrap_or_else(|| format!("{}-catalog", self.package)),
            extension,
        }
    }

    /// The upgrade: a new catalog image (when given), and the filters given.
    pub fn to_upgrade(&self, catalog_image: Option<&str>) -> Result<V1UpgradeSpec, InvalidInput> {
        let names = self.names();
        let catalog = match catalog_image {
            None => None,
            Some(image) => Some(self.to_spec(image)?.catalog),
        };
        Ok(V1UpgradeSpec {
            names,
            catalog,
            channel: self.channel.clone(),
            version: self.version.clone(),
            upgrade_policy: self.upgrade_policy,
        })
    }
}

/// A bundle directory whose installer RBAC could not be derived.
#[derive(Debug, thiserror::Error)]
pub enum V1RbacError {
    /// The bundle the RBAC is derived from (`--bundle`, `--bundle-dir`) cannot be read.
    #[error(
        "cannot read the bundle the installer RBAC is derived from (pass the operator's bundle directory, with manifests/ and metadata/)"
    )]
    Load(#[from] LoadError),
    #[error(transparent)]
    Rbac(#[from] RbacError),
}

/// The installer RBAC for `spec` from the bundle in `dir` (AllNamespaces, OLM v1's standard
/// feature set).
pub fn rbac_from_bundle(dir: &Path, spec: &ExtensionSpec) -> Result<InstallerRbac, V1RbacError> {
    // Strict: a manifest left out could hold a permission the installer needs.
    let bundle = BundleDir::load_strict(dir)?;
    Ok(installer_rbac(
        &bundle,
        &RbacTarget {
            extension: spec.name.clone(),
            namespace: spec.namespace.clone(),
            service_account: spec.service_account.clone(),
            watch_namespace: None,
        },
    )?)
}

/// What `olm deploy generate --bundle` writes to `olmv1/`: the extension for the catalog image
/// and its installer's RBAC from the bundle.
pub fn generate_install(
    inputs: &V1Inputs,
    catalog_image: &str,
    bundle: &Path,
) -> Result<OlmV1Install, V1GenerateError> {
    let spec = inputs.to_spec(catalog_image)?;
    let rbac = rbac_from_bundle(bundle, &spec)?;
    Ok(OlmV1Install { spec, rbac })
}

/// Why `olmv1/` could not be generated.
#[derive(Debug, thiserror::Error)]
pub enum V1GenerateError {
    #[error(transparent)]
    Invalid(#[from] InvalidInput),
    #[error(transparent)]
    Rbac(#[from] V1RbacError),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_derive_from_the_package() {
        let i = V1Inputs {
            package: "demo".into(),
            poll_interval: Some("10m".into()),
            ..Default::default()
        };
        let s = i.to_spec("quay.io/x/c:v1").unwrap();
        assert_eq!(
            (
                s.name.as_str(),
                s.namespace.as_str(),
                s.service_account.as_str()
            ),
            ("demo", "demo", "demo-installer")
        );
        assert_eq!(s.catalog.name, "demo-catalog");
        assert_eq!(s.catalog.poll_interval_minutes, Some(10));
        assert!(s.channels.is_empty());
    }
}
