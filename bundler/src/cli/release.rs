//! `olm release`: the whole pipeline in one command, from `release.yaml`.
//!
//! Steps, in order: operator manifests, operator image, bundle (generate + validate), CRD
//! upgrade check against the previous version in the catalog, bundle image, catalog (add +
//! re-render), catalog validation, catalog image, deploy/. Every output is staged in memory
//! or a temporary directory; bundle/, catalog/ and deploy/ are written only once every step
//! has passed, so a failure leaves them as they were. Images go to OCI layouts (no registry)
//! or to `--registry`, and are referenced by digest everywhere.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context as _, anyhow, bail};
use clap::{Args, ValueEnum};
use serde_json::Value;

use olm_bundler::bundle::generate::config::{self as gen_config, LoadedConfig};
use olm_bundler::bundle::generate::{self, OWNED_DIRS};
use olm_bundler::bundle::image as bundle_image;
use olm_bundler::bundle::validate::{self as bundle_validate, Level};
use olm_bundler::catalog::render::Form;
use olm_bundler::catalog::{add, graph, load, validate as catalog_validate};
use olm_bundler::deploy::generate as deploy_generate;
use olm_bundler::deploy::objects::{Approval, InstallMode};
use olm_bundler::fsx::{self, FileTree};
use olm_bundler::image::model::Image;
use olm_bundler::image::operator::{OperatorImage, labels};
use olm_bundler::image::reference::ImageRef;
use olm_bundler::image::registry::RegistryOptions;
use olm_bundler::image::{rootfs, transfer};
use olm_bundler::ops::bundle_generate;
use olm_bundler::ops::install::SpecInputs;
use olm_bundler::release::config::{self, CatalogForm, ChannelGeneration, ReleaseConfig};
use olm_bundler::release::manifests as release_manifests;
use olm_bundler::release::pin::{OperatorImagePin, PinChoice};
use olm_bundler::reproducible::source_date_epoch;
use olm_bundler::serve::image::CatalogImage;
use olm_bundler::yaml;

use super::args::RegistryArgs;

#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum GraphFormat {
    #[default]
    Mermaid,
    Dot,
    None,
}

/// `olm release [--config release.yaml] [--registry HOST]`.
#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// The release config file.
    #[arg(long, default_value = "release.yaml")]
    pub config: PathBuf,
    /// Release this version instead of the bundle config's (e.g. to cut an older release).
    #[arg(long)]
    pub version: Option<String>,
    /// The CSV this version replaces, instead of the bundle config's.
    #[arg(long, conflicts_with = "no_replaces")]
    pub replaces: Option<String>,
    /// No `replaces` (the first release).
    #[arg(long)]
    pub no_replaces: bool,
    /// `olm.skipRange`, instead of the bundle config's.
    #[arg(long, conflicts_with = "no_skip_range")]
    pub skip_range: Option<String>,
    /// No skipRange.
    #[arg(long)]
    pub no_skip_range: bool,
    /// The catalog channels to add the bundle to (semver templates: the archetypes candidate,
    /// fast, stable), comma-separated, instead of the config's `catalog-channels`. The bundle's
    /// own channel annotations stay those of the bundle config.
    #[arg(long, value_delimiter = ',')]
    pub channels: Vec<String>,
    /// The operator binary, instead of the config's `operator-binary`.
    #[arg(long, value_name = "PATH")]
    pub operator_binary: Option<PathBuf>,
    /// Push every image to this registry host (same repository paths) instead of writing
    /// OCI layouts.
    #[arg(long, value_name = "HOST")]
    pub registry: Option<String>,
    #[command(flatten)]
    pub registry_args: RegistryArgs,
    /// How to print the upgrade graph at the end.
    #[arg(long, value_enum, default_value_t = GraphFormat::Mermaid)]
    pub graph: GraphFormat,
}

/// One row of the summary table.
struct Row {
    step: &'static str,
    ok: bool,
    detail: String,
    millis: u128,
}

/// Progress lines and the summary table.
struct Steps {
    rows: Vec<Row>,
    total: usize,
    /// Staging paths and the real paths they stand for, so errors name the real files.
    renames: Vec<(String, String)>,
}

impl Steps {
    fn start(&self, name: &str) -> Instant {
        eprintln!("[{}/{}] {name} ...", self.rows.len() + 1, self.total);
        Instant::now()
    }

    fn done(&mut self, step: &'static str, t: Instant, detail: String) {
        eprintln!("      ok: {detail}");
        self.rows.push(Row {
            step,
            ok: true,
            detail,
            millis: t.elapsed().as_millis(),
        });
    }

    fn failed(&mut self, step: &'static str, t: Instant, err: &anyhow::Error) -> anyhow::Error {
        self.rows.push(Row {
            step,
            ok: false,
            detail: "FAILED".into(),
            millis: t.elapsed().as_millis(),
        });
        self.print_table();
        let mut text = format!("{err:#}");
        for (stage, real) in &self.renames {
            text = text.replace(stage.as_str(), real.as_str());
        }
        anyhow!(
            "release stopped at step {} ({step}); bundle/, catalog/ and deploy/ are unchanged: {text}",
            self.rows.len()
        )
    }

    fn print_table(&self) {
        let width = self.rows.iter().map(|r| r.step.len()).max().unwrap_or(4);
        eprintln!();
        eprintln!(
            "{:<3} {:<width$}  {:<6} {:>8}  detail",
            "#", "step", "result", "time"
        );
        for (i, r) in self.rows.iter().enumerate() {
            eprintln!(
                "{:<3} {:<width$}  {:<6} {:>6}ms  {}",
                i + 1,
                r.step,
                if r.ok { "ok" } else { "FAILED" },
                r.millis,
                r.detail
            );
        }
    }
}

/// Runs `f` as one step: progress line, summary row, step-named error.
macro_rules! step {
    ($steps:expr, $name:expr, $body:expr) => {{
        let t = $steps.start($name);
        match $body {
            Ok((value, detail)) => {
                $steps.done($name, t, detail);
                value
            }
            Err(e) => return Err($steps.failed($name, t, &e)),
        }
    }};
}

/// An image the release made.
struct Made {
    what: &'static str,
    pinned: String,
    size: u64,
    push: Option<String>,
}

fn image_size(image: &Image) -> u64 {
    (image.manifest.len()
        + image.config.data.len()
        + image.layers.iter().map(|l| l.data.len()).sum::<usize>()) as u64
}

struct Publisher {
    registry: Option<String>,
    layouts: PathBuf,
    version: String,
    opts: RegistryOptions,
}

impl Publisher {
    /// Where an image of `repository` is published, and so how the release refers to it:
    /// the configured repository, or its path on `--registry` (a catalog pushed there must
    /// name bundles and images a cluster can pull from there).
    fn repository(&self, repository: &str) -> String {
        match &self.registry {
            Some(host) => config::on_registry(repository, host),
            None => repository.to_string(),
        }
    }

    /// Stores the image (layout or registry) and returns `<repository>@<digest>` in the
    /// repository it is published to.
    async fn publish(
        &self,
        what: &'static str,
        repository: &str,
        image: &Image,
    ) -> anyhow::Result<Made> {
        let published = self.repository(repository);
        let dest = match &self.registry {
            Some(_) => format!("{published}:{}", self.version),
            None => format!("oci:{}:{}", self.layouts.join(what).display(), self.version),
        };
        let dest_ref = ImageRef::parse(&dest).with_context(|| format!("destination {dest}"))?;
        let stored = transfer::store(&dest_ref, image, &self.opts)
            .await
            .with_context(|| format!("storing the {what} image to {dest}"))?;
        Ok(Made {
            what,
            pinned: config::pinned(&published, &stored.digest),
            size: image_size(image),
            push: Some(match &stored.push {
                Some(r) => format!("{dest}: {}", r.summary()),
                None => format!("wrote {dest}"),
            }),
        })
    }
}

fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{bytes} B")
    }
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

pub async fn run(a: ReleaseArgs) -> anyhow::Result<ExitCode> {
    let cfg = ReleaseConfig::load(&a.config)
        .with_context(|| format!("{}: cannot read the release config", a.config.display()))?;
    if cfg.pinned_operator_image.is_some() && !cfg.pin_operator_image {
        bail!(
            "{}: pinned-operator-image records the operator image pin; it needs pin-operator-image: true",
            a.config.display()
        );
    }
    let base = a.config.parent().map(Path::to_path_buf).unwrap_or_default();
    let bundle_file = LoadedConfig::load(&cfg.bundle_config).with_context(|| {
        format!(
            "{}: cannot read the bundle config (bundle-config in {})",
            cfg.bundle_config.display(),
            a.config.display()
        )
    })?;
    // The bundle config read as `olm bundle generate --config` reads it; the release's flags
    // override its version, replaces and skip range.
    let mut settings = gen_config::resolve(
        gen_config::Overrides {
            version: a.version.clone(),
            replaces: a.replaces.clone(),
            skip_range: a.skip_range.clone(),
            ..Default::default()
        },
        Some(&bundle_file),
    )?;
    if a.no_replaces {
        settings.options.replaces = None;
    }
    if a.no_skip_range {
        settings.options.skip_range = None;
    }
    // A catalog needs a default channel: the first one unless the config names one of them.
    let channels = settings.options.channels.clone();
    settings.options.default_channel = settings
        .options
        .default_channel
        .take()
        .filter(|d| channels.contains(d))
        .or_else(|| channels.first().cloned());
    settings.options.created_at = generate::files::created_at_for_new_content()?;
    let bundle_out = settings.output.clone();
    let package = settings.options.package.clone();
    let version = settings.options.version.clone();
    let catalog_channels = if !a.channels.is_empty() {
        a.channels.clone()
    } else if cfg.catalog_channels.is_empty() {
        channels.clone()
    } else {
        cfg.catalog_channels.clone()
    };
    let options = settings.options.clone();
    let operator_binary = a
        .operator_binary
        .clone()
        .unwrap_or_else(|| cfg.operator_binary.clone());
    let epoch = source_date_epoch()?;
    let publisher = Publisher {
        registry: a.registry.clone(),
        layouts: cfg.layouts.clone(),
        version: version.to_string(),
        opts: a.registry_args.options()?,
    };
    let tmp = tempfile::tempdir().context("creating a staging directory")?;
    let stage_bundle = tmp.path().join("bundle");
    let stage_catalog = tmp.path().join("catalog");

    eprintln!(
        "releasing {package} {version} ({}) -> {}",
        a.config.display(),
        match &a.registry {
            Some(r) => format!("registry {r}"),
            None => format!("OCI layouts under {}", cfg.layouts.display()),
        }
    );
    let mut steps = Steps {
        rows: Vec::new(),
        total: if cfg.deploy.is_some() { 9 } else { 8 },
        renames: vec![
            (
                stage_catalog.display().to_string(),
                cfg.catalog.display().to_string(),
            ),
            (
                stage_bundle.display().to_string(),
                bundle_out.display().to_string(),
            ),
        ],
    };
    let mut made: Vec<Made> = Vec::new();

    // 1. Operator manifests.
    let mut manifests = step!(steps, "operator manifests", {
        (|| -> anyhow::Result<_> {
            let m = release_manifests::read(&cfg.manifests, &base)?;
            let n = m.objects.len();
            Ok((m.objects, format!("{n} objects from {}", m.label)))
        })()
    });

    // 2. Operator image.
    let operator = step!(steps, "operator image", {
        async {
            if !operator_binary.is_file() {
                bail!(
                    "{}: the operator binary does not exist; build it first with `{}`",
                    operator_binary.display(),
                    cfg.operator_build
                        .as_deref()
                        .unwrap_or("cargo build --release")
                );
            }
            let mut spec = OperatorImage::for_binary(operator_binary.clone())?;
            spec.ca_bundle = ca_bundle();
            spec.created = epoch;
            spec.labels
                .insert(labels::VERSION.to_string(), version.to_string());
            let image = spec
                .build()
                .with_context(|| format!("building the image of {}", operator_binary.display()))?;
            // Decide what the CSV runs before anything is published: a refused re-release
            // must not overwrite the released version's tag.
            let built = config::pinned(&publisher.repository(&cfg.images.operator), &image.digest);
            let mut note = String::new();
            let mut record = None;
            let mut pinned_image = None;
            if cfg.pin_operator_image {
                let csv_image = match &cfg.pinned_operator_image {
                    None => built.clone(),
                    Some(path) => {
                        let recorded = OperatorImagePin::load(path)?;
                        let choice = recorded
                            .as_ref()
                            .map(|r| r.choose(&version.to_string(), &built))
                            .unwrap_or(PinChoice::New);
                        let image = match choice {
                            PinChoice::New | PinChoice::Same => built.clone(),
                            PinChoice::Released { image } => {
                                let why = format!(
                                    "{package} {version} was released with the operator image {image} (recorded in {}), and this build of {} is {built}: a released version cannot change",
                                    path.display(),
                                    operator_binary.display(),
                                );
                                if a.registry.is_some() {
                                    bail!(
                                        "{why}; cut a new version to publish this build (or rebuild the released binary)"
                                    );
                                }
                                eprintln!(
                                    "      warning: {why}; the CSV keeps the released image (cut a new version to release this build)"
                                );
                                note.push_str("; the CSV keeps the released image");
                                image
                            }
                        };
                        record = Some((
                            path.clone(),
                            OperatorImagePin {
                                version: version.to_string(),
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
                pinned_image = Some(csv_image);
            }
            let m = publisher
                .publish("operator", &cfg.images.operator, &image)
                .await?;
            let detail = format!("{} ({}){note}", m.pinned, human(m.size));
            Ok(((m, record, pinned_image), detail))
        }
        .await
    });
    let (operator, operator_pin, pinned_image) = operator;
    made.push(operator);

    // 3. Bundle: generate and validate.
    let bundle_tree = step!(steps, "bundle generate + validate", {
        (|| -> anyhow::Result<_> {
            // Read exactly as `olm bundle generate --config` reads the bundle config.
            let mut settings = settings.clone();
            settings.options = options.clone();
            let generated = bundle_generate::generate(&settings, manifests.clone())?;
            for w in &generated.warnings {
                eprintln!("      warning: {w}");
            }
            generated
                .tree
                .write(&stage_bundle, &OWNED_DIRS)
                .context("staging the bundle")?;
            let report = bundle_validate::validate_dir(&stage_bundle, &Default::default())
                .context("cannot read back the generated bundle")?;
            let stage = stage_bundle.display().to_string();
            let shown = bundle_out.display().to_string();
            let mut errors = String::new();
            let mut warnings = 0;
            for f in &report.findings {
                let line = f.to_string().replace(&stage, &shown);
                if f.level == Level::Error {
                    let _ = writeln!(errors, "  {line}");
                } else {
                    warnings += 1;
                    eprintln!("      {line}");
                }
            }
            if !report.passed(false) {
                bail!("the generated bundle does not validate:\n{errors}");
            }
            let n = generated.tree.len();
            Ok((
                generated.tree,
                format!("{package}.v{version}: {n} files, valid ({warnings} warnings)"),
            ))
        })()
    });

    // 3b. CRD upgrade safety against the previous version in the catalog, before the
    // bundle is published or anything is written.
    step!(steps, "crd upgrade check", {
        super::upgrade_check::release_gate(
            &cfg.catalog,
            &package,
            &version,
            &stage_bundle,
            &bundle_out,
        )
        .map(|detail| ((), detail))
    });

    // 4. Bundle image.
    let bundle = step!(steps, "bundle image", {
        async {
            let image = bundle_image::build_bundle_image(&stage_bundle, epoch)?;
            let m = publisher
                .publish("bundle", &cfg.images.bundle, &image)
                .await?;
            let detail = format!("{} ({})", m.pinned, human(m.size));
            Ok((m, detail))
        }
        .await
    });
    let bundle_ref = bundle.pinned.clone();
    made.push(bundle);

    // 5. Catalog: add the bundle to the template and re-render.
    let outcome = step!(steps, "catalog add + render", {
        (|| -> anyhow::Result<_> {
            if cfg.catalog.is_dir() {
                copy_dir(&cfg.catalog, &stage_catalog)
                    .with_context(|| format!("copying {}", cfg.catalog.display()))?;
            } else {
                std::fs::create_dir_all(&stage_catalog)?;
            }
            let outcome = match add::add(&add::AddOptions {
                catalog_dir: stage_catalog.clone(),
                bundle: stage_bundle.display().to_string(),
                image: Some(bundle_ref.clone()),
                channels: catalog_channels.clone(),
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
                Err(e) => {
                    let text = e.to_string();
                    let hint = if text.contains("duplicate bundle name") {
                        format!(
                            "\n  hint: {} already holds {package}.v{version} with another bundle image; a released version cannot change, so bump the version (or remove it from the template)",
                            cfg.catalog.display()
                        )
                    } else {
                        String::new()
                    };
                    bail!("{text}{hint}");
                }
            };
            outcome
                .files
                .write(&outcome.package_dir, &[])
                .context("staging the catalog")?;
            let mut detail = format!(
                "{} in {} ({})",
                outcome.bundle,
                cfg.catalog.join(&outcome.package).display(),
                catalog_channels.join(", ")
            );
            // catalog-channel-generation only shapes a new template: say when an existing
            // one generates other channels than the config asks for.
            if let Some(mismatch) = generation_mismatch(
                &outcome.files,
                &outcome.template,
                &outcome.package_dir,
                cfg.catalog_channel_generation,
            ) {
                eprintln!(
                    "      warning: {}: {mismatch}, but release.yaml has catalog-channel-generation: {}; the template decides (edit it to change the channels)",
                    outcome.template.display().to_string().replace(
                        &stage_catalog.display().to_string(),
                        &cfg.catalog.display().to_string()
                    ),
                    cfg.catalog_channel_generation.as_str()
                );
                detail.push_str("; template channel generation differs from release.yaml");
            }
            Ok((outcome, detail))
        })()
    });

    // 6. Validate the whole catalog.
    let catalog_cfg = step!(steps, "catalog validate", {
        (|| -> anyhow::Result<_> {
            let cfg_all = load::load_dir(&stage_catalog).map_err(|e| anyhow!("{e}"))?;
            let report = catalog_validate::validate(&cfg_all);
            if report.has_errors() {
                bail!("the catalog does not validate:\n{}", report.to_text());
            }
            let mut detail = format!(
                "{} packages, {} channels, {} bundles",
                cfg_all.packages.len(),
                cfg_all.channels.len(),
                cfg_all.bundles.len()
            );
            // The bundle's channel annotations are informational for file-based catalogs,
            // but `olm bundle validate` users and older tooling read them: say when they
            // disagree with where the catalog actually puts the bundle.
            let mut placed: Vec<&str> = cfg_all
                .channels
                .iter()
                .filter(|c| {
                    c.package == package && c.entries.iter().any(|e| e.name == outcome.bundle)
                })
                .map(|c| c.name.as_str())
                .collect();
            placed.sort_unstable();
            let mut annotated: Vec<&str> = options.channels.iter().map(String::as_str).collect();
            annotated.sort_unstable();
            if placed != annotated {
                eprintln!(
                    "      warning: {}: the bundle's channel annotations are {} but the catalog puts {} in {}; set `channels` to match",
                    cfg.bundle_config.display(),
                    annotated.join(","),
                    outcome.bundle,
                    placed.join(",")
                );
                detail.push_str("; bundle channel annotations differ from the catalog's");
            }
            Ok((cfg_all, detail))
        })()
    });

    // 7. Catalog image.
    let catalog = step!(steps, "catalog image", {
        async {
            let olm_binary = std::env::current_exe().context("finding the running olm binary")?;
            let image = CatalogImage {
                catalog_dir: stage_catalog.clone(),
                olm_binary,
                labels: BTreeMap::new(),
                ca_bundle: ca_bundle(),
                created: epoch,
            }
            .build()
            .context("building the catalog image")?;
            let m = publisher
                .publish("catalog", &cfg.images.catalog, &image)
                .await?;
            let detail = format!("{} ({})", m.pinned, human(m.size));
            Ok((m, detail))
        }
        .await
    });
    let catalog_ref = catalog.pinned.clone();
    made.push(catalog);

    // 8. deploy/.
    let deploy = match &cfg.deploy {
        None => None,
        Some(d) => Some(step!(steps, "deploy manifests", {
            (|| -> anyhow::Result<_> {
                let channel = d.channel.clone().or_else(|| {
                    catalog_cfg
                        .packages
                        .iter()
                        .find(|p| p.name == package)
                        .map(|p| p.default_channel.clone())
                        .filter(|c| !c.is_empty())
                });
                let spec_args = SpecInputs {
                    package: package.clone(),
                    namespace: d.namespace.clone(),
                    channel,
                    install_mode: InstallMode::parse("own").map_err(|e| anyhow!(e.message))?,
                    target_namespaces: Vec::new(),
                    approval: Approval::parse("Automatic").map_err(|e| anyhow!(e.message))?,
                    starting_csv: None,
                    catalog_name: None,
                    display_name: d.display_name.clone(),
                    publisher: d.publisher.clone(),
                    poll_interval: "10m".into(),
                    operator_group_name: None,
                };
                let spec = spec_args.to_spec(&catalog_ref)?;
                let plain = match &d.manifests {
                    None => None,
                    Some(src) => {
                        let m = release_manifests::read(src, &base)?;
                        let name = m.label;
                        let mut objects: Vec<deploy_generate::SourcedObject> =
                            m.objects.into_iter().map(Into::into).collect();
                        // The plain install runs the same pinned image as the CSV.
                        if let Some(image) = &pinned_image
                            && pin_operator_image(
                                objects.iter_mut().map(|o| &mut o.object),
                                &cfg.images.operator,
                                image,
                            ) == 0
                        {
                            bail!(
                                "pin-operator-image: no Deployment container in {name} (deploy.manifests) runs {}",
                                cfg.images.operator
                            );
                        }
                        Some(objects)
                    }
                };
                let generated =
                    deploy_generate::generate(&deploy_generate::GenerateOptions { spec, plain })?;
                let n = generated.tree.len();
                Ok((
                    (generated, d.output.clone()),
                    format!("{n} files for {}", d.output.display()),
                ))
            })()
        })),
    };

    // Everything passed: write the three trees.
    let mut written = 0;
    let mut unchanged = 0;
    let mut removed = 0;
    let mut write = |tree: &FileTree, root: &Path, owned: &[&str]| -> anyhow::Result<()> {
        let c = tree
            .write(root, owned)
            .with_context(|| format!("writing {}", root.display()))?;
        for p in &c.written {
            eprintln!("wrote {}", root.join(p).display());
        }
        for p in &c.removed {
            eprintln!("removed {}", root.join(p).display());
        }
        written += c.written.len();
        removed += c.removed.len();
        unchanged += c.unchanged;
        Ok(())
    };
    write(&bundle_tree, &bundle_out, &OWNED_DIRS)?;
    let package_dir = cfg.catalog.join(&outcome.package);
    write(&outcome.files, &package_dir, &[])?;
    if let Some((generated, root)) = &deploy {
        write(&generated.tree, root, &generated.owned_dirs)?;
    }
    if let Some((path, pin)) = &operator_pin {
        let changed = fsx::write_atomic(path, pin.to_text().as_bytes())?;
        if changed {
            eprintln!("wrote {}", path.display());
            written += 1;
        } else {
            unchanged += 1;
        }
    }
    steps.print_table();
    eprintln!(
        "\nfiles: {written} written, {removed} removed, {unchanged} unchanged ({}, {}{}{})",
        bundle_out.display(),
        cfg.catalog.display(),
        deploy
            .as_ref()
            .map(|(_, r)| format!(", {}", r.display()))
            .unwrap_or_default(),
        operator_pin
            .as_ref()
            .map(|(p, _)| format!(", {}", p.display()))
            .unwrap_or_default()
    );

    let mut out = String::new();
    let _ = writeln!(out, "{:<9} {:>10}  reference", "image", "size");
    for m in &made {
        let _ = writeln!(out, "{:<9} {:>10}  {}", m.what, human(m.size), m.pinned);
        if let Some(p) = &m.push {
            let _ = writeln!(out, "{:<9} {:>10}  {}", "", "", p);
        }
    }
    let fmt = match a.graph {
        GraphFormat::Mermaid => Some(graph::Format::Mermaid),
        GraphFormat::Dot => Some(graph::Format::Dot),
        GraphFormat::None => None,
    };
    if let Some(fmt) = fmt {
        let g = graph::render(
            &catalog_cfg,
            fmt,
            &graph::Options {
                package: Some(package.clone()),
                ..Default::default()
            },
        )?;
        let _ = writeln!(out, "\nupgrade graph of {package}:\n{g}");
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
