//! `olm install --bundle` and `olm upgrade --bundle`: a bundle image with no catalog yet goes
//! onto the cluster through a catalog image built and pushed on the fly
//! ([`super::bundle_catalog`]), then the ordinary Subscription flows of [`super::flow`].
//!
//! The catalog is pushed to a registry rather than served from a pod (operator-sdk's way)
//! because a pushed image is an ordinary `grpc` CatalogSource: OLM polls, restarts and
//! garbage-collects it like any other, `olm uninstall` removes it, and the upgrade is one
//! `spec.image` patch.

use kube::{Api, Client};
use semver::Version;
use serde::Serialize;

use super::bundle_catalog::{
    self, BundleCatalogError, CatalogBuild, Published, RenderedBundle, index_reference,
};
use super::flow::{self, FlowError, FlowOptions, Progress, UpgradeSpec};
use super::objects;
use super::types::{CatalogSource, MANAGED_BY_LABEL, MANAGED_BY_VALUE};
use super::wait::WaitOptions;

/// What `olm install --bundle` publishes.
#[derive(Debug, Clone)]
pub struct BundleInstall {
    /// The bundle image (a registry reference the cluster can pull).
    pub bundle_image: String,
    /// Where to push the catalog image [default: see [`index_reference`]].
    pub index_image: Option<String>,
    /// The channel to publish the bundle in [default: the bundle's default channel].
    pub channel: Option<String>,
    /// `--package`: when given, the bundle must belong to it (checked before anything is
    /// pushed).
    pub package: Option<String>,
    pub build: CatalogBuild,
}

/// A one-bundle catalog, pushed: what the install then subscribes to.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreparedCatalog {
    pub package: String,
    pub csv: String,
    #[serde(serialize_with = "display")]
    pub version: Version,
    pub channel: String,
    /// The tag pushed to.
    pub index_image: String,
    /// The pinned reference the CatalogSource serves.
    pub catalog_image: String,
}

fn display<S: serde::Serializer>(v: &Version, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn describe(b: &RenderedBundle) -> String {
    format!("{} (package {}, version {})", b.csv, b.package, b.version)
}

fn published_summary(p: &Published) -> String {
    if p.uploaded == 0 {
        format!("{} (already in the registry)", p.pinned)
    } else {
        format!(
            "{} ({} uploaded)",
            p.pinned,
            crate::image::human_bytes(p.uploaded)
        )
    }
}

/// Pulls and renders the bundle, builds the one-package catalog (package, one channel with the
/// bundle as its only entry, the bundle), validates it and pushes its image. The caller then
/// installs `catalog_image` with [`flow::install`], subscribing to `package` on `channel`.
pub async fn prepare_install(
    req: &BundleInstall,
    progress: &mut dyn Progress,
) -> Result<PreparedCatalog, FlowError> {
    // Refuse bad references before any download.
    bundle_catalog::parse_bundle_ref(&req.bundle_image)?;
    index_reference(req.index_image.as_deref(), &req.bundle_image, "check")?;

    progress.step(&format!("Pulling bundle image {}", req.bundle_image));
    let bundle = bundle_catalog::pull_bundle(&req.bundle_image, &req.build.registry).await?;
    if let Some(package) = &req.package
        && *package != bundle.package
    {
        return Err(BundleCatalogError::OtherPackage {
            reference: bundle.reference.clone(),
            csv: bundle.csv.clone(),
            bundle_package: bundle.package.clone(),
            package: package.clone(),
        }
        .into());
    }
    progress.done(&describe(&bundle));

    let channel = bundle.channel(req.channel.as_deref())?;
    let cfg = bundle_catalog::single_bundle_catalog(&bundle, &channel)?;
    let dest = index_reference(req.index_image.as_deref(), &req.bundle_image, &bundle.csv)?;
    progress.step(&format!(
        "Building and pushing catalog image {} (channel {channel})",
        dest.whole()
    ));
    let published = bundle_catalog::publish(&cfg, &dest, &req.build).await?;
    progress.done(&published_summary(&published));
    Ok(PreparedCatalog {
        package: bundle.package,
        csv: bundle.csv,
        version: bundle.version,
        channel,
        index_image: published.tagged,
        catalog_image: published.pinned,
    })
}

/// What `olm upgrade --bundle` changes.
#[derive(Debug, Clone)]
pub struct BundleUpgrade {
    pub package: String,
    pub namespace: String,
    /// The new bundle image.
    pub bundle_image: String,
    /// Where to push the new catalog image [default: see [`index_reference`]].
    pub index_image: Option<String>,
    pub build: CatalogBuild,
}

/// The result of `upgrade_bundle`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BundleUpgradeOutcome {
    pub from: String,
    /// The CSV OLM installed (the bundle's, unless something else in the channel won).
    pub to: String,
    /// The bundle's CSV.
    pub bundle_csv: String,
    pub install_plan: String,
    pub channel: String,
    /// `namespace/name` of the CatalogSource whose image was replaced.
    pub catalog_source: String,
    pub index_image: String,
    pub catalog_image: String,
}

fn conflict(message: String) -> FlowError {
    FlowError::Conflict(message)
}

/// Moves an installed package to the bundle image `req.bundle_image`: reads the package's
/// Subscription, its CatalogSource (which must be one olm created) and the installed CSV;
/// pulls the CatalogSource's catalog image, adds the bundle to the subscribed channel
/// replacing the installed CSV, validates, pushes the new catalog image (tagged with the new
/// CSV), points the CatalogSource at it and waits for the new CSV as `olm upgrade` does
/// (approving its InstallPlan: asking for the upgrade is the approval).
pub async fn upgrade_bundle(
    client: &Client,
    req: &BundleUpgrade,
    opts: FlowOptions,
    progress: &mut dyn Progress,
) -> Result<BundleUpgradeOutcome, FlowError> {
    objects::check_dns_label("--namespace", &req.namespace)?;
    bundle_catalog::parse_bundle_ref(&req.bundle_image)?;
    index_reference(req.index_image.as_deref(), &req.bundle_image, "check")?;
    let ns = req.namespace.as_str();
    progress.step("Checking that OLM is installed");
    flow::check_olm(client).await?;
    progress.done("OLM APIs found");

    let sub = flow::find_subscription(client, ns, &req.package)
        .await?
        .ok_or_else(|| FlowError::NotInstalled {
            package: req.package.clone(),
            namespace: ns.to_string(),
        })?;
    let sub_name = sub.metadata.name.clone().unwrap_or_default();
    let installed = sub
        .status
        .as_ref()
        .and_then(|s| s.installed_csv.clone())
        .ok_or_else(|| {
            conflict(format!(
                "Subscription {ns}/{sub_name} has no installed CSV yet; finish the install \
                 (`olm status {}`) before upgrading",
                req.package
            ))
        })?;
    let (cat_ns, cat_name) = (sub.spec.source_namespace.clone(), sub.spec.source.clone());
    let cs_api: Api<CatalogSource> = Api::namespaced(client.clone(), &cat_ns);
    let cs = cs_api
        .get_opt(&cat_name)
        .await
        .map_err(|source| FlowError::Api {
            what: format!("CatalogSource {cat_ns}/{cat_name}"),
            source,
        })?
        .ok_or_else(|| {
            conflict(format!(
                "Subscription {ns}/{sub_name} uses CatalogSource {cat_ns}/{cat_name}, which does \
                 not exist"
            ))
        })?;
    let ours = cs
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(MANAGED_BY_LABEL))
        .is_some_and(|v| v == MANAGED_BY_VALUE);
    if !ours {
        return Err(conflict(format!(
            "CatalogSource {cat_ns}/{cat_name} was not created by olm, so `olm upgrade --bundle` \
             will not replace its catalog; add the bundle to that catalog (`olm catalog add`), \
             push it, and run `olm upgrade {} --catalog <image>`",
            req.package
        )));
    }
    let current_image = cs.spec.image.clone().ok_or_else(|| {
        conflict(format!(
            "CatalogSource {cat_ns}/{cat_name} serves an address, not an image; there is no \
             catalog image to add the bundle to"
        ))
    })?;

    progress.step(&format!("Pulling bundle image {}", req.bundle_image));
    let bundle = bundle_catalog::pull_bundle(&req.bundle_image, &req.build.registry).await?;
    if bundle.package != req.package {
        return Err(BundleCatalogError::OtherPackage {
            reference: bundle.reference.clone(),
            csv: bundle.csv.clone(),
            bundle_package: bundle.package.clone(),
            package: req.package.clone(),
        }
        .into());
    }
    progress.done(&describe(&bundle));

    progress.step(&format!("Pulling catalog image {current_image}"));
    let mut cfg = bundle_catalog::pull_catalog(&current_image, &req.build.registry).await?;
    progress.done(&format!(
        "{} package(s), {} bundle(s)",
        cfg.packages.len(),
        cfg.bundles.len()
    ));

    let channel = match &sub.spec.channel {
        Some(c) if !c.is_empty() => c.clone(),
        _ => cfg
            .packages
            .iter()
            .find(|p| p.name == req.package)
            .map(|p| p.default_channel.clone())
            .filter(|c| !c.is_empty())
            .ok_or_else(|| BundleCatalogError::PackageMissing {
                reference: current_image.clone(),
                package: req.package.clone(),
            })?,
    };
    bundle_catalog::add_upgrade(
        &mut cfg,
        &current_image,
        &bundle,
        &req.package,
        &channel,
        &installed,
    )?;
    let dest = index_reference(req.index_image.as_deref(), &req.bundle_image, &bundle.csv)?;
    progress.step(&format!(
        "Building and pushing catalog image {} ({} replaces {installed} in channel {channel})",
        dest.whole(),
        bundle.csv
    ));
    let published = bundle_catalog::publish(&cfg, &dest, &req.build).await?;
    progress.done(&published_summary(&published));

    let spec = UpgradeSpec {
        package: req.package.clone(),
        namespace: req.namespace.clone(),
        catalog: Some(flow::CatalogTarget::Image(published.pinned.clone())),
        channel: None,
    };
    let wait_opts = WaitOptions::new(opts.timeout, opts.interval);
    let out = flow::upgrade_subscription(client, &spec, sub, wait_opts, progress).await?;
    Ok(BundleUpgradeOutcome {
        from: out.from,
        to: out.to,
        bundle_csv: bundle.csv,
        install_plan: out.install_plan.unwrap_or_default(),
        channel,
        catalog_source: format!("{cat_ns}/{cat_name}"),
        index_image: published.tagged,
        catalog_image: published.pinned,
    })
}
