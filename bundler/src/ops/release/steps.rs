//! The steps of [`super::release`], each over the [`Plan`] and what earlier steps made;
//! each returns its value and the detail line of its summary row.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, anyhow, bail};
use serde_json::Value;

use super::publish::{MadeImage, human};
use super::{OperatorOutcome, Plan, Steps};
use crate::atomic_write::FileTree;
use crate::bundle::generate::OWNED_DIRS;
use crate::bundle::generate::input::SourceObject;
use crate::bundle::image::build_bundle_image;
use crate::bundle::validate::{self as bundle_validate, Level};
use crate::catalog::add::{self, AddOutcome};
use crate::catalog::crd_upgrades::{self, PreviousCheck};
use crate::catalog::declcfg::DeclarativeConfig;
use crate::catalog::render::Form;
use crate::catalog::template::TemplateError;
use crate::catalog::{load, validate as catalog_validate};
use crate::deploy::generate as deploy_generate;
use crate::deploy::objects::{Approval, InstallMode};
use crate::image::operator::{OperatorImage, labels};
use crate::image::rootfs;
use crate::ops::install::SpecInputs;
use crate::ops::{bundle_generate, image_output};
use crate::release::config::{self, CatalogForm, ChannelGeneration, DeploySettings};
use crate::release::manifests as release_manifests;
use crate::release::pin::{CatalogImagePin, OperatorImagePin, PinChoice};
use crate::serve::image::CatalogImage;
use crate::yaml;

type Step<T> = anyhow::Result<(T, String)>;

/// Step 1: The operator's manifests, as `olm bundle generate` reads them.
pub(super) fn manifests(plan: &Plan) -> Step<Vec<SourceObject>> {
    let m = release_manifests::read(&plan.cfg.manifests, &plan.base)?;
    let n = m.objects.len();
    Ok((m.objects, format!("{n} objects from {}", m.label)))
}

/// Step 2: The operator image from the release binary, published; with `pin-operator-image`, the
/// manifests' Deployments are pointed at it (or at the image a released version keeps).
pub(super) async fn operator_image(
    plan: &Plan,
    manifests: &mut [SourceObject],
) -> Step<OperatorOutcome> {
    let cfg = &plan.cfg;
    let binary = &plan.operator_binary;
    if !binary.is_file() {
        bail!(
            "{}: the operator binary does not exist; build it first with `{}`",
            binary.display(),
            cfg.operator_build
                .as_deref()
                .unwrap_or("cargo build --release")
        );
    }
    if let Some(missing) = cfg.operator_binaries.iter().find(|b| !b.is_file()) {
        bail!(
            "{}: the operator binary (operator-binaries) does not exist; cross-compile it first (docs/images.md)",
            missing.display()
        );
    }
    let mut spec = OperatorImage::for_binary(binary.clone())?;
    spec.ca_bundle = ca_bundle();
    spec.created = plan.epoch;
    spec.labels
        .insert(labels::VERSION.to_string(), plan.version.to_string());
    for (k, v) in &cfg.operator_labels {
        spec.labels.insert(k.clone(), v.clone());
    }
    spec.labels
        .entry("version".to_string())
        .or_insert_with(|| plan.version.to_string());
    if let Some(missing) = cfg.operator_licenses.iter().find(|l| !l.is_file()) {
        bail!("operator-licenses: {} is not a file", missing.display());
    }
    spec.license_files = cfg.operator_licenses.clone();
    let image = spec
        .build_all(&cfg.operator_binaries)
        .with_context(|| format!("building the image of {}", binary.display()))?;
    let sbom = image_output::image_sbom(&image, &plan.publisher.repository(&cfg.images.operator))
        .with_context(|| format!("the SBOM of the image of {}", binary.display()))?;
    // Decide what the CSV runs before anything is published: a refused re-release must not
    // overwrite the released version's tag.
    let built = config::pinned(
        &plan.publisher.repository(&cfg.images.operator),
        image.digest(),
    );
    let mut note = String::new();
    let mut record = None;
    let mut pinned = None;
    if cfg.pin_operator_image {
        let csv_image = match &cfg.pinned_operator_image {
            None => built.clone(),
            Some(path) => {
                let recorded = OperatorImagePin::load(path)?;
                let version = plan.version.to_string();
                let choice = recorded
                    .as_ref()
                    .map(|r| r.choose(&version, &built))
                    .unwrap_or(PinChoice::New);
                let image = match choice {
                    PinChoice::New | PinChoice::Same => built.clone(),
                    PinChoice::Released { image } => {
                        let why = format!(
                            "{} {version} was released with the operator image {image} (recorded in {}), and this build of {} is {built}: a released version cannot change",
                            plan.package,
                            path.display(),
                            binary.display(),
                        );
                        if plan.req.registry.is_some() {
                            bail!(
                                "{why}; cut a new version to publish this build (or rebuild the released binary)"
                            );
                        }
                        // Without a registry this is a local rebuild of a released version
                        // (another machine's binary, or a fresh clone): the released image
                        // stays, and the step says so; it is not a warning.
                        tracing::debug!("{why}");
                        let _ = write!(
                            note,
                            "; {version} is released: the CSV keeps {} (cut a new version to release this build)",
                            short_digest(&image)
                        );
                        image
                    }
                };
                record = Some((
                    path.clone(),
                    OperatorImagePin {
                        version,
                        image: image.clone(),
                    },
                ));
                image
            }
        };
        if pin_operator_image(
            manifests.iter_mut().map(|o| &mut o.object),
            &cfg.images.operator,
            &csv_image,
        ) == 0
        {
            bail!(
                "pin-operator-image: no Deployment container in the manifests runs {}",
                cfg.images.operator
            );
        }
        pinned = Some(csv_image);
    }
    let made = plan
        .publisher
        .publish("operator", &cfg.images.operator, &image)
        .await?;
    let detail = format!("{} ({}){note}", made.pinned, human(made.size));
    Ok((
        OperatorOutcome {
            image: made,
            record,
            pinned,
            sbom,
        },
        detail,
    ))
}

/// Step 3: The bundle, generated as `olm bundle generate --config` would, staged and validated.
pub(super) fn bundle(
    plan: &Plan,
    manifests: &[SourceObject],
    steps: &mut Steps<'_>,
) -> Step<FileTree> {
    let generated = bundle_generate::generate(&plan.settings, manifests.to_vec())?;
    for w in &generated.warnings {
        steps.warn(w);
    }
    generated
        .tree
        .write(&plan.stage_bundle, &OWNED_DIRS)
        .context("staging the bundle")?;
    let report = bundle_validate::validate_dir(&plan.stage_bundle, &Default::default())
        .context("cannot read back the generated bundle")?;
    let stage = plan.stage_bundle.display().to_string();
    let shown = plan.settings.output.display().to_string();
    let mut errors = String::new();
    let mut warnings = 0;
    for f in &report.findings {
        let line = f.to_string().replace(&stage, &shown);
        if f.level == Level::Error {
            let _ = writeln!(errors, "  {line}");
        } else {
            warnings += 1;
            steps.warn(&line);
        }
    }
    if !report.passed(false) {
        bail!("the generated bundle does not validate:\n{errors}");
    }
    let n = generated.tree.len();
    Ok((
        generated.tree,
        format!(
            "{}.v{}: {n} files, valid ({warnings} warnings)",
            plan.package, plan.version
        ),
    ))
}

/// Step 3b: CRD upgrade safety of the staged bundle against the previous version in the catalog,
/// before anything is published or written. A breaking change stops the release; an edge
/// that cannot be checked is a warning.
pub(super) fn crd_upgrade_check(plan: &Plan, steps: &mut Steps<'_>) -> Step<()> {
    let catalog = &plan.cfg.catalog;
    let package = &plan.package;
    let check = crd_upgrades::check_release(
        catalog,
        package,
        &plan.version,
        &plan.stage_bundle,
        &plan.settings.output,
    )?;
    let detail = match check {
        PreviousCheck::NoPrevious => format!(
            "no earlier version of {package} in {}: nothing to compare",
            catalog.display()
        ),
        PreviousCheck::Unverifiable { previous, reason } => {
            steps.warn(&format!("CRDs not compared with {previous}: {reason}"));
            format!("CRDs not compared with {previous} (see warning)")
        }
        PreviousCheck::Checked { previous, report } if report.passed() => format!(
            "{} CRD(s) safe to upgrade from {previous}",
            report.compared.len()
        ),
        PreviousCheck::Checked { previous, report } => {
            let mut text = String::new();
            for f in &report.findings {
                let _ = writeln!(text, "  {f}\n      hint: {}", f.hint);
            }
            bail!(
                "the bundle's CRDs break upgrades from {previous} (what OLM v1's CRD upgrade-safety preflight refuses; check with `olm bundle check-upgrade`):\n{text}"
            )
        }
    };
    Ok(((), detail))
}

/// Step 4: The bundle image, published.
pub(super) async fn bundle_image(plan: &Plan) -> Step<MadeImage> {
    let image = build_bundle_image(&plan.stage_bundle, plan.epoch)?;
    let made = plan
        .publisher
        .publish("bundle", &plan.cfg.images.bundle, &image.into())
        .await?;
    let detail = format!("{} ({})", made.pinned, human(made.size));
    Ok((made, detail))
}

/// Step 5: The bundle added to a staged copy of the catalog's template, and the package
/// re-rendered.
pub(super) fn catalog_add(
    plan: &Plan,
    bundle_ref: &str,
    steps: &mut Steps<'_>,
) -> Step<AddOutcome> {
    let cfg = &plan.cfg;
    let stage = &plan.stage_catalog;
    if cfg.catalog.is_dir() {
        copy_dir(&cfg.catalog, stage)
            .with_context(|| format!("copying {}", cfg.catalog.display()))?;
    } else {
        std::fs::create_dir_all(stage)?;
    }
    let outcome = match add::add(&add::AddOptions {
        catalog_dir: stage.clone(),
        bundle: plan.stage_bundle.display().to_string(),
        image: Some(bundle_ref.to_string()),
        channels: plan.catalog_channels.clone(),
        template: None,
        skip_range: None,
        generate: match cfg.catalog_channel_generation {
            ChannelGeneration::Major => add::Generate::Major,
            ChannelGeneration::Minor => add::Generate::Minor,
            ChannelGeneration::Both => add::Generate::Both,
        },
        skip_range_from_csv: cfg.catalog_skip_range_from_csv,
        form: match cfg.catalog_form {
            CatalogForm::BundleObjects => Form::BundleObjects,
            CatalogForm::CsvMetadata => Form::CsvMetadata,
        },
    }) {
        Ok(o) => o,
        Err(add::AddError::Invalid(report)) => {
            bail!(
                "the re-rendered catalog does not validate:\n{}",
                report.to_text()
            )
        }
        Err(add::AddError::Template(e @ TemplateError::DuplicateBundle { .. })) => bail!(
            "{e}\n  hint: {} already holds {}.v{} with another bundle image; a released version cannot change, so bump the version (or remove it from the template)",
            cfg.catalog.display(),
            plan.package,
            plan.version
        ),
        Err(e) => bail!("{e}"),
    };
    outcome
        .files
        .write(&outcome.package_dir, &[])
        .context("staging the catalog")?;
    let mut detail = format!(
        "{} in {} ({})",
        outcome.bundle,
        cfg.catalog.join(&outcome.package).display(),
        plan.catalog_channels.join(", ")
    );
    // catalog-channel-generation only shapes a new template: say when an existing one
    // generates other channels than the config asks for.
    if let Some(mismatch) = generation_mismatch(
        &outcome.files,
        &outcome.template,
        &outcome.package_dir,
        cfg.catalog_channel_generation,
    ) {
        steps.warn(&format!(
            "{}: {mismatch}, but release.yaml has catalog-channel-generation: {}; the template decides (edit it to change the channels)",
            outcome
                .template
                .display()
                .to_string()
                .replace(&stage.display().to_string(), &cfg.catalog.display().to_string()),
            cfg.catalog_channel_generation.as_str()
        ));
        detail.push_str("; template channel generation differs from release.yaml");
    }
    Ok((outcome, detail))
}

/// Step 6: The whole staged catalog, validated.
pub(super) fn catalog_validate(
    plan: &Plan,
    added: &AddOutcome,
    steps: &mut Steps<'_>,
) -> Step<DeclarativeConfig> {
    let all = load::load_dir(&plan.stage_catalog).map_err(|e| anyhow!("{e}"))?;
    let report = catalog_validate::validate(&all);
    if report.has_errors() {
        bail!("the catalog does not validate:\n{}", report.to_text());
    }
    let mut detail = format!(
        "{} packages, {} channels, {} bundles",
        all.packages.len(),
        all.channels.len(),
        all.bundles.len()
    );
    // The bundle's channel annotations are informational for file-based catalogs, but
    // `olm bundle validate` users and older tooling read them: say when they disagree with
    // where the catalog actually puts the bundle.
    let mut placed: Vec<&str> = all
        .channels
        .iter()
        .filter(|c| c.package == plan.package && c.entries.iter().any(|e| e.name == added.bundle))
        .map(|c| c.name.as_str())
        .collect();
    placed.sort_unstable();
    let mut annotated: Vec<&str> = plan
        .settings
        .options
        .channels
        .iter()
        .map(String::as_str)
        .collect();
    annotated.sort_unstable();
    if placed != annotated {
        steps.warn(&format!(
            "{}: the bundle's channel annotations are {} but the catalog puts {} in {}; set `channels` to match",
            plan.cfg.bundle_config.display(),
            annotated.join(","),
            added.bundle,
            placed.join(",")
        ));
        detail.push_str("; bundle channel annotations differ from the catalog's");
    }
    Ok((all, detail))
}

/// Step 7: The catalog image (the staged catalog served by `olm`), published.
pub(super) async fn catalog_image(plan: &Plan) -> Step<CatalogOutcome> {
    let image = CatalogImage {
        catalog_dir: plan.stage_catalog.clone(),
        olm_binaries: std::iter::once(plan.req.olm_binary.clone())
            .chain(plan.cfg.catalog_olm_binaries.iter().cloned())
            .collect(),
        labels: BTreeMap::new(),
        ca_bundle: ca_bundle(),
        created: plan.epoch,
        http_port: None,
        catalog_name: None,
        // No HTTP API in this image: no browser pages to render.
        site: None,
    }
    .build()
    .context("building the catalog image")?;
    let made = plan
        .publisher
        .publish("catalog", &plan.cfg.images.catalog, &image)
        .await?;
    let mut detail = format!("{} ({})", made.pinned, human(made.size));
    let mut deployed = made.pinned.clone();
    let mut record = None;
    if let Some(path) = &plan.cfg.pinned_catalog_image {
        let catalog =
            crate::serve::index::cache::digest(&crate::confined::Tree::host(&plan.stage_catalog))
                .map_err(|e| anyhow!("hashing the staged catalog: {e}"))?;
        let recorded = CatalogImagePin::load(path)?;
        // Without a registry nothing is published: an unchanged catalog keeps the image it
        // was released with (this machine's build differs only in its olm binary and CA
        // bundle). With a registry, what was just pushed is what deploy/ names.
        let kept = recorded
            .as_ref()
            .filter(|_| plan.req.registry.is_none())
            .and_then(|r| r.keeps(&catalog, &made.pinned));
        match kept {
            Some(image) => {
                if image != made.pinned {
                    let _ = write!(
                        detail,
                        "; deploy/ keeps the released {} (same catalog, another build of olm)",
                        short_digest(image)
                    );
                }
                deployed = image.to_string();
            }
            None => {
                record = Some((
                    path.clone(),
                    CatalogImagePin {
                        catalog,
                        image: made.pinned.clone(),
                    },
                ));
            }
        }
    }
    Ok((
        CatalogOutcome {
            image: made,
            deployed,
            record,
        },
        detail,
    ))
}

/// What the catalog image step decided.
pub(super) struct CatalogOutcome {
    pub image: MadeImage,
    /// The reference deploy/ names: the image just built, or the released one it keeps.
    pub deployed: String,
    /// The pin file to write, and what it records (when it changes).
    pub record: Option<(PathBuf, CatalogImagePin)>,
}

/// `sha256:0123456789ab` of a pinned reference, for one-line notes.
fn short_digest(pinned: &str) -> &str {
    pinned
        .split_once('@')
        .map(|(_, d)| &d[..d.len().min("sha256:".len() + 12)])
        .unwrap_or(pinned)
}

/// Step 8: deploy/: the OLM objects for the catalog image, and the plain install running the same
/// pinned operator image as the CSV.
pub(super) fn deploy(
    plan: &Plan,
    d: &DeploySettings,
    catalog: &DeclarativeConfig,
    catalog_ref: &str,
    pinned_image: Option<&str>,
) -> Step<(deploy_generate::Generated, PathBuf)> {
    let package = &plan.package;
    let channel = d.channel.clone().or_else(|| {
        catalog
            .packages
            .iter()
            .find(|p| &p.name == package)
            .map(|p| p.default_channel.clone())
            .filter(|c| !c.is_empty())
    });
    let inputs = SpecInputs {
        package: package.clone(),
        namespace: d.namespace.clone(),
        channel,
        install_mode: InstallMode::OwnNamespace,
        target_namespaces: Vec::new(),
        approval: Approval::Automatic,
        starting_csv: None,
        catalog_name: None,
        display_name: d.display_name.clone(),
        publisher: d.publisher.clone(),
        poll_interval: "10m".into(),
        operator_group_name: None,
    };
    let spec = inputs.to_spec(catalog_ref)?;
    let plain = match &d.manifests {
        None => None,
        Some(src) => {
            let m = release_manifests::read(src, &plan.base)?;
            let mut objects: Vec<deploy_generate::SourcedObject> =
                m.objects.into_iter().map(Into::into).collect();
            if let Some(image) = pinned_image
                && pin_operator_image(
                    objects.iter_mut().map(|o| &mut o.object),
                    &plan.cfg.images.operator,
                    image,
                ) == 0
            {
                bail!(
                    "pin-operator-image: no Deployment container in {} (deploy.manifests) runs {}",
                    m.label,
                    plan.cfg.images.operator
                );
            }
            Some(objects)
        }
    };
    // The same inputs as `olm deploy generate --bundle` with its defaults (scripts/check-generated.sh).
    let olmv1 = match d.olmv1 {
        false => None,
        true => {
            let inputs = crate::ops::olmv1::V1Inputs {
                package: package.clone(),
                namespace: d.namespace.clone(),
                channel: spec.channel.clone(),
                poll_interval: Some("10m".into()),
                ..Default::default()
            };
            let install =
                crate::ops::olmv1::generate_install(&inputs, catalog_ref, &plan.stage_bundle)?;
            Some(install)
        }
    };
    let generated =
        deploy_generate::generate(&deploy_generate::GenerateOptions { spec, plain, olmv1 })?;
    let n = generated.tree.len();
    Ok((
        (generated, d.output.clone()),
        format!("{n} files for {}", d.output.display()),
    ))
}

/// Points every Deployment container that runs `repository` (any tag) at `pinned`; returns
/// how many it changed.
fn pin_operator_image<'a>(
    objects: impl Iterator<Item = &'a mut Value>,
    repository: &str,
    pinned: &str,
) -> usize {
    let mut n = 0;
    for o in objects.filter(|o| o.get("kind").and_then(Value::as_str) == Some("Deployment")) {
        let Some(containers) = o
            .pointer_mut("/spec/template/spec/containers")
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for c in containers {
            if let Some(img) = c.get_mut("image")
                && img
                    .as_str()
                    .is_some_and(|s| config::repository_of(s) == repository)
            {
                *img = Value::String(pinned.to_string());
                n += 1;
            }
        }
    }
    n
}

/// How a semver template (as staged) generates channels, when that differs from `want`.
fn generation_mismatch(
    files: &FileTree,
    template: &Path,
    package_dir: &Path,
    want: ChannelGeneration,
) -> Option<String> {
    let rel = template.strip_prefix(package_dir).ok()?;
    let text = std::str::from_utf8(files.get(rel)?).ok()?;
    let tpl: Value = yaml::parse_one(template, text).ok()?;
    if tpl.get("schema").and_then(Value::as_str) != Some("olm.semver") {
        return None;
    }
    let flag = |k: &str| tpl.get(k).and_then(Value::as_bool).unwrap_or(false);
    let (major, minor) = (flag("generateMajorChannels"), flag("generateMinorChannels"));
    let wanted = match want {
        ChannelGeneration::Major => (true, false),
        ChannelGeneration::Minor => (false, true),
        ChannelGeneration::Both => (true, true),
    };
    ((major, minor) != wanted).then(|| {
        format!("the template has generateMajorChannels: {major}, generateMinorChannels: {minor}")
    })
}

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

fn ca_bundle() -> Option<PathBuf> {
    let p = PathBuf::from(rootfs::HOST_CA_BUNDLE);
    p.is_file().then_some(p)
}

/// The certification checks on what the release made, before the bundle image is published:
/// preflight's operator policy on the staged bundle (offline: DeployableByOLM needs a
/// cluster) and its container policy on the operator image. A failed check stops the release
/// with the checks' summary, every failure's fix in it.
pub(super) async fn certify(plan: &Plan, operator: &MadeImage, steps: &mut Steps<'_>) -> Step<()> {
    use crate::certify::container::Policy;
    use crate::ops::check::{self, ArtifactOptions};
    let policy = Policy::parse(&plan.cfg.certify.container_policy)
        .map_err(|e| anyhow!("certify.container-policy: {e}"))?;
    let bundle_req = check::operator::OperatorRequest {
        bundle: plan.stage_bundle.display().to_string(),
        registry: plan.req.registry_opts.clone(),
        cluster: None,
        no_cluster_reason:
            "needs a cluster: run `olm check operator <bundle image> --kubeconfig ...`".into(),
        artifacts: ArtifactOptions::default(),
    };
    let operator_report = check::operator::check(&bundle_req, &mut crate::deploy::flow::Silent)
        .await
        .context("checking the bundle")?;
    let container_req = check::container::ContainerRequest {
        image: operator.location.clone(),
        policy,
        platform: None,
        repository: Some(plan.publisher.repository(&plan.cfg.images.operator)),
        registry: plan.req.registry_opts.clone(),
        artifacts: ArtifactOptions::default(),
    };
    let container_report = check::container::check(&container_req)
        .await
        .context("checking the operator image")?;
    let shown = plan.settings.output.display().to_string();
    let stage = plan.stage_bundle.display().to_string();
    for (report, title) in [
        (&operator_report, format!("operator policy on {shown}")),
        (
            &container_report,
            format!("{} policy on {}", policy.as_str(), operator.pinned),
        ),
    ] {
        if !report.passed_what_ran() {
            bail!(
                "preflight's {title} failed:\n{}",
                report.to_text(&title).replace(&stage, &shown)
            );
        }
    }
    for r in operator_report
        .results
        .iter()
        .chain(&container_report.results)
    {
        if r.bucket() == crate::certify::Bucket::Warned {
            steps.warn(&format!("{}: {}", r.check.name, r.fixes.join("; ")));
        }
    }
    let count = |r: &crate::certify::report::Report| {
        r.results
            .iter()
            .filter(|x| x.verdict == crate::certify::Verdict::Passed)
            .count()
    };
    let not_run = operator_report.not_run();
    Ok((
        (),
        format!(
            "operator policy: {} passed{}; {} policy: {} passed",
            count(&operator_report),
            if not_run.is_empty() {
                String::new()
            } else {
                format!(", not run: {}", not_run.join(", "))
            },
            policy.as_str(),
            count(&container_report)
        ),
    ))
}
