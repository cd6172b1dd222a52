//! `olm release`: the whole pipeline from `release.yaml`, one function per step over a
//! [`Plan`].
//!
//! Steps, in order: operator manifests, operator image, bundle (generate + validate), CRD
//! upgrade check against the previous version in the catalog, bundle image, catalog (add +
//! re-render), catalog validation, catalog image, deploy/. Every output is staged in memory
//! or a temporary directory; bundle/, catalog/ and deploy/ are written only once every step
//! has passed, so a failure leaves them as they were. Images go to OCI layouts (no registry)
//! or to a registry, and are referenced by digest everywhere.

mod publish;
mod sign;
mod steps;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, anyhow, bail};

use crate::atomic_write::{self, FileTree};
use crate::bundle::generate::config::{self as gen_config, LoadedConfig, Settings};
use crate::bundle::generate::{self, OWNED_DIRS};
use crate::catalog::declcfg::DeclarativeConfig;
use crate::catalog::graph::{self, ChannelSummary};
use crate::image::registry::RegistryOptions;
use crate::release::config::ReleaseConfig;
use crate::release::pin::OperatorImagePin;
use crate::reproducible::source_date_epoch;

pub use publish::{MadeImage, human};
pub use sign::SignedImage;

/// What `olm release` was asked to do.
#[derive(Debug, Clone)]
pub struct ReleaseRequest {
    /// The release config file.
    pub config: PathBuf,
    /// Release this version instead of the bundle config's.
    pub version: Option<String>,
    pub replaces: Option<String>,
    /// No `replaces` (the first release).
    pub no_replaces: bool,
    pub skip_range: Option<String>,
    pub no_skip_range: bool,
    /// Catalog channels instead of the config's `catalog-channels`.
    pub channels: Vec<String>,
    /// The operator binary instead of the config's `operator-binary`.
    pub operator_binary: Option<PathBuf>,
    /// Push every image to this registry host instead of writing OCI layouts.
    pub registry: Option<String>,
    pub registry_opts: RegistryOptions,
    /// The `olm` binary the catalog image serves with.
    pub olm_binary: PathBuf,
    /// Sign every image with this key (instead of the config's `signing.key`).
    pub sign_key: Option<PathBuf>,
    /// Leave out the certification checks this once (`certify.enabled` in the config).
    pub skip_checks: bool,
}

/// How the pipeline reports as it goes (the CLI prints these on stderr).
pub trait Reporter {
    /// The release of `package` `version` starts, to `destination`.
    fn begin(&mut self, package: &str, version: &str, config: &Path, destination: &str);
    /// Step `n` of `total` starts.
    fn step(&mut self, n: usize, total: usize, name: &str);
    /// The running step passed.
    fn done(&mut self, detail: &str);
    /// Something the user should know that does not stop the release.
    fn warning(&mut self, text: &str);
    /// A file was written or removed in the final write.
    fn file(&mut self, path: &Path, removed: bool);
}

/// One row of the summary table.
#[derive(Debug, Clone)]
pub struct StepRow {
    pub step: &'static str,
    pub ok: bool,
    pub detail: String,
    pub millis: u128,
}

impl StepRow {
    /// The summary table: step, result, time and detail, one row per step.
    pub fn table(rows: &[StepRow]) -> String {
        use std::fmt::Write as _;
        let width = rows.iter().map(|r| r.step.len()).max().unwrap_or(4);
        let mut s = format!(
            "{:<3} {:<width$}  {:<6} {:>8}  detail\n",
            "#", "step", "result", "time"
        );
        for (i, r) in rows.iter().enumerate() {
            let result = if r.ok { "ok" } else { "FAILED" };
            let (n, step, ms, detail) = (i + 1, r.step, r.millis, &r.detail);
            let _ = writeln!(s, "{n:<3} {step:<width$}  {result:<6} {ms:>6}ms  {detail}");
        }
        s
    }
}

impl Released {
    /// What was written, in one line.
    pub fn files_line(&self) -> String {
        let roots: Vec<String> = self.roots.iter().map(|p| p.display().to_string()).collect();
        format!(
            "files: {} written, {} removed, {} unchanged ({})",
            self.written,
            self.removed,
            self.unchanged,
            roots.join(", ")
        )
    }

    /// The images made: kind, size and pinned reference, then where each was stored.
    pub fn images_table(&self) -> String {
        use std::fmt::Write as _;
        let mut s = format!("{:<9} {:>10}  reference\n", "image", "size");
        for m in &self.images {
            let _ = writeln!(s, "{:<9} {:>10}  {}", m.what, human(m.size), m.pinned);
            let _ = writeln!(s, "{:<9} {:>10}  {}", "", "", m.stored);
        }
        let sbom = self.operator_sbom_path.display();
        let size = human(self.operator_sbom.len() as u64);
        let _ = writeln!(
            s,
            "{:<9} {size:>10}  {sbom} (operator image, SPDX 2.3)",
            "sbom"
        );
        s
    }

    /// The signatures made, one row each (empty without a signing key).
    pub fn signatures_table(&self) -> String {
        sign::table(&self.signatures)
    }

    /// The package's upgrade graph as text (`Mermaid` or `Dot`), as `olm catalog graph`
    /// draws it.
    pub fn graph_text(
        &self,
        format: crate::catalog::graph::Format,
    ) -> Result<String, crate::catalog::graph::GraphError> {
        let package = Some(self.package.clone());
        let opts = crate::catalog::graph::Options {
            package,
            ..Default::default()
        };
        crate::catalog::graph::render(&self.catalog, format, &opts)
    }

    /// The upgrade graph's picture path and one line per channel.
    pub fn graph_summary(&self) -> String {
        use std::fmt::Write as _;
        let mut s = format!("upgrade graph of {}:\n", self.package);
        if let Some(path) = &self.graph_svg {
            let _ = writeln!(s, "  picture: {}", path.display());
        }
        for c in &self.channels {
            let _ = writeln!(s, "  {c}");
        }
        s
    }
}

/// A release that went through.
#[derive(Debug)]
pub struct Released {
    pub rows: Vec<StepRow>,
    pub images: Vec<MadeImage>,
    pub written: usize,
    pub removed: usize,
    pub unchanged: usize,
    /// The directories written (bundle/, catalog/, deploy/ and the pin file).
    pub roots: Vec<PathBuf>,
    pub package: String,
    /// The catalog as released, for the upgrade graph.
    pub catalog: DeclarativeConfig,
    /// The package's upgrade graph as a picture, written next to the image layouts
    /// (`<layouts>/graph.svg`); `None` when it could not be drawn (a warning says why).
    pub graph_svg: Option<PathBuf>,
    /// One line per channel of the package: head, bundles, edges.
    pub channels: Vec<ChannelSummary>,
    /// The operator image's SPDX 2.3 JSON SBOM (the bytes an attestation carries).
    pub operator_sbom: Vec<u8>,
    /// Where it was written: `<layouts>/operator.spdx.json`.
    pub operator_sbom_path: PathBuf,
    /// The signatures and attestations made (none without a signing key).
    pub signatures: Vec<SignedImage>,
}

/// A release that did not go through.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    /// Before the first step: the config, the bundle config, the flags.
    #[error("{0:#}")]
    Setup(anyhow::Error),
    /// A step failed; nothing was written.
    #[error(
        "release stopped at step {index} ({step}); bundle/, catalog/ and deploy/ are unchanged: {message}"
    )]
    Stopped {
        rows: Vec<StepRow>,
        index: usize,
        step: &'static str,
        message: String,
    },
    /// Every step passed, but writing the outputs failed.
    #[error("{0:#}")]
    Write(anyhow::Error),
}

/// Everything the steps need, resolved before the first one runs.
struct Plan {
    req: ReleaseRequest,
    cfg: ReleaseConfig,
    /// The release config's directory (manifests commands run there).
    base: PathBuf,
    /// The bundle settings, read as `olm bundle generate --config` reads them.
    settings: Settings,
    package: String,
    version: semver::Version,
    catalog_channels: Vec<String>,
    operator_binary: PathBuf,
    epoch: u64,
    publisher: publish::Publisher,
    stage_bundle: PathBuf,
    stage_catalog: PathBuf,
    /// The signing key (its file, for the summary), loaded before the first step so a wrong
    /// password costs no build.
    signer: Option<(PathBuf, crate::image::sign::key::PrivateKey)>,
}

impl Plan {
    fn new(req: &ReleaseRequest, staging: &Path) -> anyhow::Result<Plan> {
        let cfg = ReleaseConfig::load(&req.config)
            .with_context(|| format!("{}: cannot read the release config", req.config.display()))?;
        if cfg.pinned_operator_image.is_some() && !cfg.pin_operator_image {
            bail!(
                "{}: pinned-operator-image records the operator image pin; it needs pin-operator-image: true",
                req.config.display()
            );
        }
        let bundle_file = LoadedConfig::load(&cfg.bundle_config).with_context(|| {
            format!(
                "{}: cannot read the bundle config (bundle-config in {})",
                cfg.bundle_config.display(),
                req.config.display()
            )
        })?;
        // The release's flags override the bundle config's version, replaces and skip range.
        let mut settings = gen_config::resolve(
            gen_config::Overrides {
                version: req.version.clone(),
                replaces: req.replaces.clone(),
                skip_range: req.skip_range.clone(),
                ..Default::default()
            },
            Some(&bundle_file),
        )?;
        if req.no_replaces {
            settings.options.replaces = None;
        }
        if req.no_skip_range {
            settings.options.skip_range = None;
        }
        // A catalog needs a default channel: the first one unless the config names one.
        let channels = settings.options.channels.clone();
        settings.options.default_channel = settings
            .options
            .default_channel
            .take()
            .filter(|d| channels.contains(d))
            .or_else(|| channels.first().cloned());
        settings.options.created_at = generate::files::created_at_for_new_content()?;
        let catalog_channels = if !req.channels.is_empty() {
            req.channels.clone()
        } else if cfg.catalog_channels.is_empty() {
            channels
        } else {
            cfg.catalog_channels.clone()
        };
        let version = settings.options.version.clone();
        let signer = match req
            .sign_key
            .clone()
            .or_else(|| cfg.signing.as_ref().map(|s| s.key.clone()))
        {
            Some(file) => {
                let key = crate::ops::image_trust::load_private_key(&file)
                    .with_context(|| format!("the signing key {}", file.display()))?;
                Some((file, key))
            }
            None => None,
        };
        Ok(Plan {
            signer,
            base: req
                .config
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default(),
            package: settings.options.package.clone(),
            operator_binary: req
                .operator_binary
                .clone()
                .unwrap_or_else(|| cfg.operator_binary.clone()),
            epoch: source_date_epoch()?,
            publisher: publish::Publisher {
                registry: req.registry.clone(),
                layouts: cfg.layouts.clone(),
                version: version.to_string(),
                opts: req.registry_opts.clone(),
            },
            stage_bundle: staging.join("bundle"),
            stage_catalog: staging.join("catalog"),
            version,
            catalog_channels,
            settings,
            cfg,
            req: req.clone(),
        })
    }

    /// Whether the certification checks run.
    fn certify(&self) -> bool {
        self.cfg.certify.enabled && !self.req.skip_checks
    }

    fn destination(&self) -> String {
        match &self.req.registry {
            Some(r) => format!("registry {r}"),
            None => format!("OCI layouts under {}", self.cfg.layouts.display()),
        }
    }
}

/// Progress rows, and the step-named error that stops the release.
struct Steps<'r> {
    rows: Vec<StepRow>,
    total: usize,
    /// Staging paths and the real paths they stand for, so errors name the real files.
    renames: Vec<(String, String)>,
    reporter: &'r mut dyn Reporter,
}

impl Steps<'_> {
    fn start(&mut self, name: &str) -> Instant {
        self.reporter.step(self.rows.len() + 1, self.total, name);
        Instant::now()
    }

    fn done(&mut self, step: &'static str, t: Instant, detail: String) {
        self.reporter.done(&detail);
        self.rows.push(StepRow {
            step,
            ok: true,
            detail,
            millis: t.elapsed().as_millis(),
        });
    }

    fn warn(&mut self, text: &str) {
        self.reporter.warning(text);
    }

    fn failed(&mut self, step: &'static str, t: Instant, err: &anyhow::Error) -> ReleaseError {
        self.rows.push(StepRow {
            step,
            ok: false,
            detail: "FAILED".into(),
            millis: t.elapsed().as_millis(),
        });
        let mut message = format!("{err:#}");
        for (stage, real) in &self.renames {
            message = message.replace(stage.as_str(), real.as_str());
        }
        ReleaseError::Stopped {
            index: self.rows.len(),
            rows: std::mem::take(&mut self.rows),
            step,
            message,
        }
    }
}

/// Runs one step: progress, summary row, step-named error.
macro_rules! step {
    ($steps:expr, $name:expr, $body:expr) => {{
        let t = $steps.start($name);
        let result: anyhow::Result<_> = $body;
        match result {
            Ok((value, detail)) => {
                $steps.done($name, t, detail);
                value
            }
            Err(e) => return Err($steps.failed($name, t, &e)),
        }
    }};
}

/// Runs the release.
pub async fn release(
    req: &ReleaseRequest,
    reporter: &mut dyn Reporter,
) -> Result<Released, ReleaseError> {
    let tmp = crate::scratch::ScratchDir::new()
        .context("creating a staging directory")
        .map_err(ReleaseError::Setup)?;
    let plan = Plan::new(req, tmp.path()).map_err(ReleaseError::Setup)?;
    reporter.begin(
        &plan.package,
        &plan.version.to_string(),
        &req.config,
        &plan.destination(),
    );
    let mut steps = Steps {
        rows: Vec::new(),
        total: 8
            + usize::from(plan.cfg.deploy.is_some())
            + usize::from(plan.signer.is_some())
            + usize::from(plan.certify()),
        renames: vec![
            (
                plan.stage_catalog.display().to_string(),
                plan.cfg.catalog.display().to_string(),
            ),
            (
                plan.stage_bundle.display().to_string(),
                plan.settings.output.display().to_string(),
            ),
        ],
        reporter,
    };
    let mut images = Vec::new();

    let mut manifests = step!(steps, "operator manifests", steps::manifests(&plan));
    let operator = step!(
        steps,
        "operator image",
        steps::operator_image(&plan, &mut manifests).await
    );
    images.push(operator.image);
    let bundle_tree = step!(
        steps,
        "bundle generate + validate",
        steps::bundle(&plan, &manifests, &mut steps)
    );
    step!(
        steps,
        "crd upgrade check",
        steps::crd_upgrade_check(&plan, &mut steps)
    );
    if plan.certify() {
        step!(
            steps,
            "certification checks",
            steps::certify(&plan, &images[0], &mut steps).await
        );
    }
    let bundle = step!(steps, "bundle image", steps::bundle_image(&plan).await);
    let bundle_ref = bundle.pinned.clone();
    images.push(bundle);
    let added = step!(
        steps,
        "catalog add + render",
        steps::catalog_add(&plan, &bundle_ref, &mut steps)
    );
    let catalog = step!(
        steps,
        "catalog validate",
        steps::catalog_validate(&plan, &added, &mut steps)
    );
    let catalog_image = step!(steps, "catalog image", steps::catalog_image(&plan).await);
    let catalog_ref = catalog_image.deployed.clone();
    let catalog_record = catalog_image.record;
    images.push(catalog_image.image);
    let signatures = match plan.signer {
        None => Vec::new(),
        Some(_) => step!(
            steps,
            "sign images",
            sign::sign_images(&plan, &images, Some(&operator.sbom)).await
        ),
    };
    let deploy = match &plan.cfg.deploy {
        None => None,
        Some(d) => Some(step!(
            steps,
            "deploy manifests",
            steps::deploy(&plan, d, &catalog, &catalog_ref, operator.pinned.as_deref())
        )),
    };

    // Everything passed: write the trees.
    let mut out = Released {
        rows: std::mem::take(&mut steps.rows),
        images,
        written: 0,
        removed: 0,
        unchanged: 0,
        roots: Vec::new(),
        package: plan.package.clone(),
        catalog,
        graph_svg: None,
        channels: Vec::new(),
        operator_sbom: operator.sbom,
        operator_sbom_path: plan.cfg.layouts.join("operator.spdx.json"),
        signatures,
    };
    let reporter = steps.reporter;
    let mut write = |tree: &FileTree, root: &Path, owned: &[&str]| -> anyhow::Result<()> {
        let c = tree
            .write(root, owned)
            .with_context(|| format!("writing {}", root.display()))?;
        for p in &c.written {
            reporter.file(&root.join(p), false);
        }
        for p in &c.removed {
            reporter.file(&root.join(p), true);
        }
        out.written += c.written.len();
        out.removed += c.removed.len();
        out.unchanged += c.unchanged;
        Ok(())
    };
    let bundle_out = plan.settings.output.clone();
    write(&bundle_tree, &bundle_out, &OWNED_DIRS).map_err(ReleaseError::Write)?;
    let package_dir = plan.cfg.catalog.join(&added.package);
    write(&added.files, &package_dir, &[]).map_err(ReleaseError::Write)?;
    if let Some((generated, root)) = &deploy {
        write(&generated.tree, root, &generated.owned_dirs).map_err(ReleaseError::Write)?;
    }
    if let Some((path, pin)) = &operator.record {
        let changed = atomic_write::write_atomic(path, pin.to_text().as_bytes())
            .map_err(|e| ReleaseError::Write(anyhow!(e)))?;
        if changed {
            reporter.file(path, false);
            out.written += 1;
        } else {
            out.unchanged += 1;
        }
    }
    if let Some((path, pin)) = &catalog_record {
        let changed = atomic_write::write_atomic(path, pin.to_text().as_bytes())
            .map_err(|e| ReleaseError::Write(anyhow!(e)))?;
        if changed {
            reporter.file(path, false);
            out.written += 1;
        } else {
            out.unchanged += 1;
        }
    }
    // A build output beside the image layouts (ignored by git, like them, and like them not
    // counted with the tree's files), also when the images were pushed.
    atomic_write::write_atomic(&out.operator_sbom_path, &out.operator_sbom)
        .map_err(|e| ReleaseError::Write(anyhow!(e)))?;
    out.roots.push(bundle_out);
    out.roots.push(plan.cfg.catalog.clone());
    if let Some((_, root)) = &deploy {
        out.roots.push(root.clone());
    }
    if let Some((path, _)) = &operator.record {
        out.roots.push(path.clone());
    }
    if let Some((path, _)) = &catalog_record {
        out.roots.push(path.clone());
    }
    // The picture and the summary are for the reader: a graph that cannot be drawn is a
    // warning, never a failed release (everything is written by now).
    let opts = graph::Options {
        package: Some(out.package.clone()),
        ..Default::default()
    };
    match graph::build(&out.catalog, &opts) {
        Ok(graphs) => {
            out.channels = graph::summarize(&graphs);
            let path = plan.cfg.layouts.join("graph.svg");
            let written = std::fs::create_dir_all(&plan.cfg.layouts)
                .map_err(anyhow::Error::from)
                .and_then(|()| {
                    Ok(atomic_write::write_atomic(
                        &path,
                        graph::svg(&graphs).as_bytes(),
                    )?)
                });
            match written {
                Ok(_) => out.graph_svg = Some(path),
                Err(e) => reporter.warning(&format!(
                    "cannot write the upgrade graph {}: {e:#}",
                    path.display()
                )),
            }
        }
        Err(e) => reporter.warning(&format!("cannot draw the upgrade graph: {e}")),
    }
    Ok(out)
}

/// What the operator image step decided.
struct OperatorOutcome {
    image: MadeImage,
    /// The pin file to write, and what it records.
    record: Option<(PathBuf, OperatorImagePin)>,
    /// The image the CSV (and the plain install) runs, when pinned.
    pinned: Option<String>,
    /// The image's SPDX 2.3 JSON SBOM: the signing step attaches it to the operator image as
    /// a signed attestation.
    sbom: Vec<u8>,
}
