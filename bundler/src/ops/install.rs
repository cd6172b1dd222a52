//! `olm install` and `olm upgrade` as library calls: the install defaults (names derived from
//! the package), where the catalog comes from (an image, a running server's address, or a
//! bundle image published as a one-bundle catalog first), and the order of the flows.
//!
//! Two phases, so a caller can refuse bad flags before it reaches a cluster: [`plan`] is pure;
//! [`install`] and [`upgrade`] talk to the cluster.

use kube::Client;

use crate::deploy::bundle_catalog::CatalogBuild;
use crate::deploy::bundle_flow::{self, BundleInstall, BundleUpgrade, BundleUpgradeOutcome};
use crate::deploy::flow::{
    self, CatalogTarget, FlowError, FlowOptions, InstallOutcome, Progress, UpgradeOutcome,
};
use crate::deploy::objects::{
    Approval, CatalogAddress, CatalogServing, CatalogSpec, InstallMode, InstallSpec, InvalidInput,
    Targets,
};

/// The settings behind the OLM objects, before defaults: what `olm install` and `olm deploy
/// generate` (and `olm release` for deploy/) take from their flags.
#[derive(Debug, Clone)]
pub struct SpecInputs {
    pub package: String,
    /// Default: the package name.
    pub namespace: Option<String>,
    pub channel: Option<String>,
    pub install_mode: InstallMode,
    pub target_namespaces: Vec<String>,
    pub approval: Approval,
    pub starting_csv: Option<String>,
    /// Default: `<package>-catalog`.
    pub catalog_name: Option<String>,
    /// Default: `<package> catalog`.
    pub display_name: Option<String>,
    pub publisher: Option<String>,
    /// How often OLM polls a catalog image (Go duration).
    pub poll_interval: String,
    /// Default: `<package>-og`.
    pub operator_group_name: Option<String>,
}

impl SpecInputs {
    /// A copy naming `package`.
    pub fn with_package(&self, package: &str) -> SpecInputs {
        SpecInputs {
            package: package.to_string(),
            ..self.clone()
        }
    }

    /// The install spec for a catalog served from an image (polled every `poll_interval`).
    pub fn to_spec(&self, catalog_image: &str) -> Result<InstallSpec, InvalidInput> {
        self.to_spec_serving(CatalogServing::Image {
            image: catalog_image.to_string(),
            poll_interval: Some(self.poll_interval.clone()),
        })
    }

    /// Resolves defaults and checks the combination.
    pub fn to_spec_serving(&self, serving: CatalogServing) -> Result<InstallSpec, InvalidInput> {
        let package = self.package.clone();
        let namespace = self.namespace.clone().unwrap_or_else(|| package.clone());
        let targets = Targets::resolve(self.install_mode, &namespace, &self.target_namespaces)?;
        let spec = InstallSpec {
            channel: self.channel.clone(),
            starting_csv: self.starting_csv.clone(),
            approval: self.approval,
            mode: self.install_mode,
            targets,
            catalog: CatalogSpec {
                name: self
                    .catalog_name
                    .clone()
                    .unwrap_or_else(|| format!("{package}-catalog")),
                serving,
                display_name: self
                    .display_name
                    .clone()
                    .unwrap_or_else(|| format!("{package} catalog")),
                publisher: self.publisher.clone(),
            },
            operator_group_name: self
                .operator_group_name
                .clone()
                .unwrap_or_else(|| format!("{package}-og")),
            namespace,
            package,
        };
        spec.validate()?;
        Ok(spec)
    }
}

/// A bundle image with no catalog yet, and how to publish the catalog built for it.
#[derive(Debug, Clone)]
pub struct BundleSource {
    pub image: String,
    /// Where to push the catalog image (default: the bundle's repository + `-index`).
    pub index_image: Option<String>,
    pub build: CatalogBuild,
}

/// Where `olm install` takes the package from.
#[derive(Debug, Clone)]
pub enum Source {
    /// A catalog image, served through a grpc CatalogSource OLM runs.
    Catalog(String),
    /// A catalog server already listening (e.g. `olm catalog serve` on a workstation).
    Address(CatalogAddress),
    /// A bundle image: a one-bundle catalog is built and pushed first.
    Bundle(Box<BundleSource>),
}

/// `olm install`, checked.
#[derive(Debug, Clone)]
pub enum InstallPlan {
    /// A catalog image or address: everything is known.
    Ready(InstallSpec),
    /// A bundle: its package, channel and CSV are known once it is pulled.
    Bundle {
        inputs: SpecInputs,
        /// `--package`, when given: the bundle must belong to it.
        package: Option<String>,
        bundle: Box<BundleSource>,
    },
}

/// The mistakes [`plan`] refuses.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error(transparent)]
    Invalid(#[from] InvalidInput),
    #[error("pass --package <name> with --catalog or --catalog-address")]
    NoPackage,
}

/// Checks the flags without a cluster: names, install mode and targets, the catalog reference.
/// With a bundle and no package the package is not known yet; the check then uses a stand-in
/// name (it only feeds defaults, never what the user typed).
pub fn plan(
    inputs: SpecInputs,
    package: Option<String>,
    source: Source,
) -> Result<InstallPlan, PlanError> {
    let checked = inputs.with_package(package.as_deref().unwrap_or("bundle-package"));
    match (source, &package) {
        (Source::Bundle(bundle), _) => {
            checked.to_spec(&bundle.image)?;
            Ok(InstallPlan::Bundle {
                inputs,
                package,
                bundle,
            })
        }
        (_, None) => Err(PlanError::NoPackage),
        (Source::Catalog(image), Some(_)) => Ok(InstallPlan::Ready(checked.to_spec(&image)?)),
        (Source::Address(a), Some(_)) => Ok(InstallPlan::Ready(
            checked.to_spec_serving(CatalogServing::Address(a))?,
        )),
    }
}

/// Installs through a Subscription and waits ([`flow::install`]); with a bundle source, builds
/// and pushes its one-bundle catalog first and starts at the bundle's CSV in its channel.
pub async fn install(
    client: &Client,
    plan: InstallPlan,
    approve: bool,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<InstallOutcome, FlowError> {
    let spec = match plan {
        InstallPlan::Ready(spec) => spec,
        InstallPlan::Bundle {
            inputs,
            package,
            bundle,
        } => {
            // Quietly: the install below shows this step once OLM is known to be there.
            flow::check_olm(client).await?;
            let req = BundleInstall {
                bundle_image: bundle.image,
                index_image: bundle.index_image,
                channel: inputs.channel.clone(),
                package,
                build: bundle.build,
            };
            let prepared = bundle_flow::prepare_install(&req, progress).await?;
            let mut spec = inputs
                .with_package(&prepared.package)
                .to_spec(&prepared.catalog_image)?;
            spec.channel = Some(prepared.channel.clone());
            if spec.starting_csv.is_none() {
                spec.starting_csv = Some(prepared.csv.clone());
            }
            spec
        }
    };
    flow::install(client, &spec, approve, opts, progress).await
}

/// What `olm upgrade` moves to.
#[derive(Debug, Clone)]
pub enum UpgradeTo {
    /// Whatever the Subscription resolves next, optionally after pointing its CatalogSource
    /// at another catalog and/or switching channel.
    Next {
        catalog: Option<CatalogTarget>,
        channel: Option<String>,
    },
    /// A bundle image, added to the CatalogSource's catalog (published anew).
    Bundle(Box<BundleSource>),
}

/// The result of [`upgrade`].
#[derive(Debug)]
pub enum Upgraded {
    Next(UpgradeOutcome),
    Bundle(Box<BundleUpgradeOutcome>),
}

impl Upgraded {
    /// What `olm upgrade` tells the user about `package`, and a warning when OLM installed
    /// another CSV than the bundle's.
    pub fn summary(&self, package: &str) -> (String, Option<String>) {
        match self {
            Upgraded::Next(out) => match &out.install_plan {
                None => {
                    let at = &out.from;
                    let msg =
                        format!("{package} is at the latest version its catalog offers: {at}.\n");
                    (msg, None)
                }
                Some(ip) => {
                    let (from, to) = (&out.from, &out.to);
                    (
                        format!("Upgraded {package} from {from} to {to} (InstallPlan {ip}).\n"),
                        None,
                    )
                }
            },
            Upgraded::Bundle(out) => {
                let msg = format!(
                    "Upgraded {package} from {} to {} (InstallPlan {}; CatalogSource {} now serves {}).\n",
                    out.from, out.to, out.install_plan, out.catalog_source, out.catalog_image
                );
                let warning = (out.to != out.bundle_csv).then(|| {
                    format!(
                        "warning: OLM installed {}, not the bundle's {}: another entry of channel {} \
                         replaces {}",
                        out.to, out.bundle_csv, out.channel, out.from
                    )
                });
                (msg, warning)
            }
        }
    }
}

/// `olm upgrade`: see [`flow::upgrade`] and [`bundle_flow::upgrade_bundle`].
pub async fn upgrade(
    client: &Client,
    package: String,
    namespace: Option<String>,
    to: UpgradeTo,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<Upgraded, FlowError> {
    let namespace = namespace.unwrap_or_else(|| package.clone());
    match to {
        UpgradeTo::Next { catalog, channel } => {
            let spec = flow::UpgradeSpec {
                package,
                namespace,
                catalog,
                channel,
            };
            Ok(Upgraded::Next(
                flow::upgrade(client, &spec, opts, progress).await?,
            ))
        }
        UpgradeTo::Bundle(bundle) => {
            let req = BundleUpgrade {
                namespace,
                package,
                bundle_image: bundle.image,
                index_image: bundle.index_image,
                build: bundle.build,
            };
            Ok(Upgraded::Bundle(Box::new(
                bundle_flow::upgrade_bundle(client, &req, opts, progress).await?,
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs() -> SpecInputs {
        SpecInputs {
            package: String::new(),
            namespace: None,
            channel: None,
            install_mode: InstallMode::OwnNamespace,
            target_namespaces: vec![],
            approval: Approval::Automatic,
            starting_csv: None,
            catalog_name: None,
            display_name: None,
            publisher: None,
            poll_interval: "10m".into(),
            operator_group_name: None,
        }
    }

    #[test]
    fn defaults_derive_from_the_package() {
        let spec = inputs()
            .with_package("demo")
            .to_spec("quay.io/x/catalog:v1")
            .unwrap();
        assert_eq!(spec.namespace, "demo");
        assert_eq!(spec.catalog.name, "demo-catalog");
        assert_eq!(spec.catalog.display_name, "demo catalog");
        assert_eq!(spec.operator_group_name, "demo-og");
    }

    #[test]
    fn plans_check_flags_before_any_cluster() {
        let addr = CatalogAddress::parse("localhost:50051").unwrap();
        assert!(matches!(
            plan(inputs(), None, Source::Address(addr.clone())),
            Err(PlanError::NoPackage)
        ));
        let p = plan(inputs(), Some("demo".into()), Source::Address(addr)).unwrap();
        assert!(matches!(p, InstallPlan::Ready(s) if s.catalog.serving.image().is_none()));
        let mut bad = inputs();
        bad.namespace = Some("Not_A_Namespace".into());
        let e = plan(
            bad,
            Some("demo".into()),
            Source::Catalog("quay.io/x/c:v1".into()),
        );
        assert!(e.unwrap_err().to_string().contains("--namespace"));
        let e = plan(
            inputs(),
            Some("demo".into()),
            Source::Catalog("UPPER/case:v1".into()),
        );
        assert!(e.is_err());
    }
}
