//! `olm catalog ...`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};

use olm_bundler::catalog::declcfg::DeclarativeConfig;
use olm_bundler::catalog::diagnostic::{Diagnostic, Report, Severity};
use olm_bundler::catalog::render::Form;
use olm_bundler::catalog::template::{self, BundleResolver};
use olm_bundler::catalog::{add, graph, load, model, render, upgrade, validate};
use olm_bundler::ops::catalog_source;

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Render bundle directories and catalog directories to FBC (like `opm render`).
    #[command(
        after_help = "Examples:\n  olm catalog render bundle/ -o yaml\n  olm catalog render quay.io/org/my-catalog:latest -o json > index.json"
    )]
    Render(RenderArgs),
    /// Render a catalog template (olm.template.basic or olm.semver) to FBC.
    Template(TemplateArgs),
    /// Validate a catalog directory: every `opm validate` rule plus extra warnings.
    #[command(
        after_help = "Examples:\n  olm catalog validate catalog/ --strict\n  olm catalog validate catalog/ --olmv1 -o json"
    )]
    Validate(ValidateArgs),
    /// Draw the upgrade graph of each channel (mermaid as `opm alpha render-graph`, dot, svg, html).
    #[command(
        after_help = "Examples:\n  olm catalog graph catalog/ --format svg --out graph.svg\n  olm catalog graph catalog/ --format html --out graphs.html"
    )]
    Graph(GraphArgs),
    /// The updates OLM would apply from an installed version to the channel head.
    #[command(
        after_help = "Examples:\n  olm catalog upgrade-path catalog/ --package reverse-words-operator --from 0.1.0"
    )]
    UpgradePath(UpgradePathArgs),
    /// Add a released bundle to a package's template and re-render the package.
    #[command(
        after_help = "Examples:\n  olm catalog add catalog/ --bundle bundle/ --image quay.io/org/my-operator-bundle:v0.2.0 --channels candidate,fast"
    )]
    Add(AddArgs),
    /// Build the catalog image: FBC under /configs, served by `olm catalog serve` on :50051.
    #[command(
        after_help = "Examples:\n  olm catalog build catalog/ -t oci:target/catalog:latest\n  olm catalog build catalog/ -t localhost:5000/org/my-catalog:latest --push"
    )]
    Build(super::image::CatalogBuildArgs),
    /// Serve the catalog over operator-registry's gRPC API (like `opm serve`), port 50051.
    #[command(
        after_help = "Examples:\n  olm catalog serve catalog/ --port 50051\n  olm catalog serve catalog/ --cache-dir /tmp/cache --cache-only"
    )]
    Serve(super::serve::ServeArgs),
    /// Check the CRDs along every upgrade edge (replaces, skips, skipRange) for changes that
    /// break stored objects or clients.
    #[command(
        after_help = "Examples:\n  olm catalog check-upgrades catalog/\n  olm catalog check-upgrades catalog/ -o json"
    )]
    CheckUpgrades(super::upgrade_check::CheckUpgradesArgs),
    /// Write a package's `olm.package` blob (like `opm init`).
    Init(super::catalog_opm::InitArgs),
    /// Turn a package's FBC into a basic or substitutes template (like `opm alpha
    /// convert-template`).
    ConvertTemplate(super::catalog_opm::ConvertTemplateArgs),
    /// List the packages, channels or bundles of a catalog directory or image (like `opm
    /// alpha list`).
    #[command(subcommand)]
    List(super::catalog_opm::ListCommand),
}

pub async fn run(cmd: CatalogCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        CatalogCommand::Render(a) => render_cmd(a).await,
        CatalogCommand::Template(a) => template_cmd(a),
        CatalogCommand::Validate(a) => validate_cmd(a),
        CatalogCommand::Graph(a) => graph_cmd(a),
        CatalogCommand::UpgradePath(a) => upgrade_cmd(a),
        CatalogCommand::Add(a) => add_cmd(a),
        CatalogCommand::Build(args) => super::image::catalog_build(args).await,
        CatalogCommand::Serve(a) => super::serve::run(a).await,
        CatalogCommand::CheckUpgrades(a) => Ok(super::upgrade_check::check_upgrades(a)),
        CatalogCommand::Init(a) => super::catalog_opm::init_cmd(a),
        CatalogCommand::ConvertTemplate(a) => super::catalog_opm::convert_cmd(a),
        CatalogCommand::List(c) => super::catalog_opm::list_cmd(c).await,
    }
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum FbcFormat {
    Json,
    Yaml,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum MigrateLevel {
    /// Keep every manifest as an `olm.bundle.object` property.
    None,
    /// One `olm.csv.metadata` property instead of the manifests.
    #[value(name = "bundle-object-to-csv-metadata")]
    CsvMetadata,
}

/// How bundles are written; the default is the compact `olm.csv.metadata` form.
#[derive(Debug, Args)]
pub struct FormArgs {
    /// `bundle-object-to-csv-metadata` (default) or `none` (embed every manifest).
    #[arg(long, value_enum, default_value = "bundle-object-to-csv-metadata")]
    pub migrate_level: MigrateLevel,
    /// Shorthand for `--migrate-level none`: embed manifests as `olm.bundle.object`.
    #[arg(long)]
    pub bundle_objects: bool,
}

impl FormArgs {
    fn form(&self) -> Form {
        if self.bundle_objects || self.migrate_level == MigrateLevel::None {
            Form::BundleObjects
        } else {
            Form::CsvMetadata
        }
    }
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Bundle directories, catalog directories or files, and bundle or catalog images
    /// (`oci:<dir>[:tag]` or registry references), like `opm render`.
    #[arg(required = true)]
    pub refs: Vec<String>,
    #[command(flatten)]
    pub registry: super::args::RegistryArgs,
    #[arg(short, long, value_enum, default_value = "json")]
    pub output: FbcFormat,
    /// The bundle image reference to record for a single bundle directory (opm's
    /// `--image-ref-template` for one bundle): the bundle is then written as
    /// `olm.csv.metadata`, as opm writes a bundle that has an image.
    #[arg(long)]
    pub image: Option<String>,
    /// As opm: `none` (default) keeps each catalog's form and writes bundle directories as
    /// `olm.bundle.object`; `bundle-object-to-csv-metadata` turns every bundle that has an
    /// image into `olm.csv.metadata`.
    #[arg(long, value_enum, default_value = "none")]
    pub migrate_level: MigrateLevel,
    /// Embed every manifest as `olm.bundle.object` even for a bundle that has an image (opm
    /// writes those as `olm.csv.metadata`).
    #[arg(long, conflicts_with = "migrate_level")]
    pub bundle_objects: bool,
}

impl RenderArgs {
    /// The form of a bundle rendered from a directory or image with reference `image`.
    fn bundle_form(&self, image: &str) -> Form {
        if self.bundle_objects {
            Form::BundleObjects
        } else {
            render::opm_form(image)
        }
    }

    fn migrate_level(&self) -> render::MigrateLevel {
        match self.migrate_level {
            MigrateLevel::None => render::MigrateLevel::None,
            MigrateLevel::CsvMetadata => render::MigrateLevel::BundleObjectToCsvMetadata,
        }
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  olm catalog template templates/example-operator.yaml -o yaml > catalog/example-operator/catalog.yaml\n  olm catalog template semver semver.yaml --bundle-dir quay.io/org/op-bundle:v0.2.0=bundle/"
)]
pub struct TemplateArgs {
    /// `[KIND] FILE`: the template kind (basic, semver, substitutes; by default the one its
    /// `schema` names, as opm detects it) and the template file (YAML or JSON).
    #[arg(num_args = 1..=2, required = true, value_name = "[KIND] FILE")]
    pub args: Vec<String>,
    #[arg(short, long, value_enum, default_value = "json")]
    pub output: FbcFormat,
    /// Render IMAGE from a local bundle directory: `--bundle-dir IMAGE=DIR` (repeatable).
    #[arg(long = "bundle-dir", value_name = "IMAGE=DIR")]
    pub bundle_dirs: Vec<String>,
    /// Reuse bundles already rendered in this catalog (matched by image).
    #[arg(long)]
    pub reuse: Vec<PathBuf>,
    /// Write to this file (atomically) instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub form: FormArgs,
    /// Copy each bundle CSV's `olm.skipRange` annotation onto its channel entries (opm's
    /// semver template drops it; off by default so output matches opm).
    #[arg(long)]
    pub skip_range_from_csv: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ReportFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The catalog directory (or a single catalog file).
    pub dir: PathBuf,
    #[arg(short, long, value_enum, default_value = "text")]
    pub output: ReportFormat,
    /// Treat warnings as errors.
    #[arg(long)]
    pub strict: bool,
    /// Also report, per package, which bundles OLM v1 (operator-controller) would refuse.
    #[arg(long)]
    pub olmv1: bool,
    /// With --olmv1: for operator-controller's experimental feature set.
    #[arg(long, requires = "olmv1")]
    pub olmv1_experimental: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum GraphFormat {
    Mermaid,
    Dot,
    Svg,
    /// One self-contained page: every package's SVG with a package/channel picker.
    Html,
}

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// The catalog directory (or file).
    pub dir: PathBuf,
    #[arg(short = 'p', long = "package")]
    pub package: Option<String>,
    #[arg(long, value_enum, default_value = "mermaid")]
    pub format: GraphFormat,
    /// Only edges from this bundle's version upwards.
    #[arg(long)]
    pub minimum_edge: Option<String>,
    /// Mark what OLM v0 ignores (entries skipped by newer entries and edges into them).
    #[arg(long)]
    pub draw_v0_semantics: bool,
    /// Write to this file (atomically) instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct UpgradePathArgs {
    /// The catalog directory (or file).
    pub dir: PathBuf,
    #[arg(short = 'p', long = "package")]
    pub package: String,
    /// The installed bundle: its name or its version.
    #[arg(long)]
    pub from: String,
    /// Default: the package's default channel.
    #[arg(long)]
    pub channel: Option<String>,
    #[arg(short, long, value_enum, default_value = "text")]
    pub output: ReportFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum GenerateArg {
    Minor,
    Major,
    Both,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The catalog directory; the package lives in `<dir>/<package>/`.
    pub catalog_dir: PathBuf,
    /// The released bundle: a bundle directory (with --image) or its image reference.
    #[arg(long)]
    pub bundle: String,
    /// The image the bundle directory was pushed as.
    #[arg(long)]
    pub image: Option<String>,
    /// Semver templates: candidate,fast,stable (any of). Basic templates: channel names.
    #[arg(long, value_delimiter = ',', required = true)]
    pub channels: Vec<String>,
    /// The template (default `<dir>/<package>/template.yaml`, created as olm.semver).
    #[arg(long)]
    pub template: Option<PathBuf>,
    /// Basic templates: skipRange of the new entries.
    #[arg(long)]
    pub skip_range: Option<String>,
    /// Channels a new semver template generates.
    #[arg(long, value_enum, default_value = "minor")]
    pub generate: GenerateArg,
    /// Copy each bundle CSV's `olm.skipRange` onto its channel entries after rendering (opm's
    /// semver template drops it).
    #[arg(long)]
    pub skip_range_from_csv: bool,
    /// Show what would change; write nothing; exit 1 if anything would.
    #[arg(long)]
    pub check: bool,
    #[command(flatten)]
    pub form: FormArgs,
}

fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        // `olm ... | head` closing the pipe is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(e).context("cannot write to stdout"),
    }
}

pub(super) fn emit(text: &str, out: Option<&Path>) -> anyhow::Result<()> {
    match out {
        Some(p) => {
            olm_bundler::atomic_write::write_atomic(p, text.as_bytes())?;
            Ok(())
        }
        None => print(text),
    }
}

pub(super) fn fbc_text(cfg: &DeclarativeConfig, format: FbcFormat) -> anyhow::Result<String> {
    Ok(match format {
        FbcFormat::Json => cfg.to_json(),
        FbcFormat::Yaml => cfg.to_yaml().context("cannot write YAML")?,
    })
}

/// Pulls a bundle or catalog image and renders it: a catalog image's FBC lives where its
/// `operators.operatorframework.io.index.configs.v1` label points; a bundle image is rendered
/// with its reference recorded as the bundle's `image`, as opm does.
async fn render_image(
    reference: &str,
    form: Form,
    registry: &super::args::RegistryArgs,
) -> anyhow::Result<DeclarativeConfig> {
    use anyhow::Context as _;
    let opts = registry.options()?;
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let pulled = olm_bundler::image::transfer::pull_to_dir(reference, dir.path(), &opts)
        .await
        .with_context(|| format!("cannot pull {reference}"))?;
    let labels = &pulled.config.config.labels;
    if let Some(configs) = labels.get(olm_bundler::serve::image::CONFIGS_LABEL) {
        let root = pulled.rootfs.join(configs.trim_start_matches('/'));
        return render::render_ref(&root.to_string_lossy())
            .with_context(|| format!("{reference}: rendering its catalog at {configs}"));
    }
    if pulled.rootfs.join("manifests").is_dir() && pulled.rootfs.join("metadata").is_dir() {
        // The same code as a bundle directory, with the image reference recorded.
        let mut cfg = DeclarativeConfig::default();
        cfg.bundles
            .push(render::render_bundle_dir(&pulled.rootfs, reference, form)?);
        return Ok(cfg);
    }
    anyhow::bail!(
        "{reference}: neither a catalog image (no {} label) nor a bundle image (no manifests/ and metadata/)",
        olm_bundler::serve::image::CONFIGS_LABEL
    )
}

async fn render_cmd(a: RenderArgs) -> anyhow::Result<ExitCode> {
    if a.image.is_some() && a.refs.len() != 1 {
        anyhow::bail!("--image applies to a single bundle directory");
    }
    let mut cfg = DeclarativeConfig::default();
    for r in &a.refs {
        let p = Path::new(r);
        if let Some(image) = &a.image {
            if !(p.join("manifests").is_dir() && p.join("metadata").is_dir()) {
                anyhow::bail!("{r}: --image applies to a bundle directory");
            }
            let form = a.bundle_form(image);
            cfg.bundles.push(render::render_bundle_dir(p, image, form)?);
        } else if catalog_source::is_image_ref(r) {
            cfg.merge(render_image(r, a.bundle_form(r), &a.registry).await?);
        } else if a.bundle_objects && p.join("manifests").is_dir() && p.join("metadata").is_dir() {
            cfg.bundles
                .push(render::render_bundle_dir(p, "", Form::BundleObjects)?);
        } else {
            cfg.merge(render::render_ref(r)?);
        }
    }
    render::migrate(&mut cfg, a.migrate_level());
    // Streamed to stdout blob by blob: a render of a large catalog never holds its output.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = match a.output {
        FbcFormat::Json => cfg.write_json(&mut out),
        FbcFormat::Yaml => cfg.write_go_yaml(&mut out),
    }
    .and_then(|()| out.flush());
    match written {
        Ok(()) => Ok(ExitCode::SUCCESS),
        // `olm ... | head` closing the pipe is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::SUCCESS),
        Err(e) => Err(e).context("cannot write to stdout"),
    }
}

fn parse_bundle_dirs(list: &[String]) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    let mut out = BTreeMap::new();
    for item in list {
        let Some((image, dir)) = item.rsplit_once('=') else {
            anyhow::bail!("--bundle-dir {item:?}: expected IMAGE=DIR");
        };
        if image.is_empty() || dir.is_empty() {
            anyhow::bail!("--bundle-dir {item:?}: expected IMAGE=DIR");
        }
        out.insert(image.to_string(), PathBuf::from(dir));
    }
    Ok(out)
}

fn template_cmd(a: TemplateArgs) -> anyhow::Result<ExitCode> {
    let mut resolver = BundleResolver {
        dirs: parse_bundle_dirs(&a.bundle_dirs)?,
        form: a.form.form(),
        ..Default::default()
    };
    for r in &a.reuse {
        resolver.reuse_catalog(r)?;
    }
    let (kind, file) = match a.args.as_slice() {
        [file] => (None, PathBuf::from(file)),
        [kind, file] => match template::TemplateKind::from_name(kind) {
            Some(k) => (Some(k), PathBuf::from(file)),
            None => {
                eprintln!(
                    "error: unknown template kind {kind:?} (basic, semver, substitutes; or leave it out to use the template's schema)"
                );
                return Ok(ExitCode::from(2));
            }
        },
        _ => unreachable!("clap takes one or two values"),
    };
    let mut cfg = template::render_file(&file, kind, &resolver)?;
    if a.skip_range_from_csv {
        template::skip_ranges_from_csvs(&mut cfg);
    }
    emit(&fbc_text(&cfg, a.output)?, a.out.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

/// Loads and validates; load failures become error diagnostics so they print the same way.
fn load_and_validate(dir: &Path) -> (Option<DeclarativeConfig>, Report) {
    match load::load_dir_keeping(dir, load::Keep::Structure) {
        Ok(cfg) => {
            let report = validate::validate(&cfg);
            (Some(cfg), report)
        }
        Err(errs) => {
            let mut report = Report::default();
            for e in errs.0 {
                let mut d =
                    Diagnostic::new(Severity::Error, "load", &Default::default(), e.to_string());
                d.fix = "fix the file so it parses as YAML/JSON catalog blobs, or list it in .indexignore".into();
                report.push(d);
            }
            (None, report)
        }
    }
}

fn validate_cmd(a: ValidateArgs) -> anyhow::Result<ExitCode> {
    if !a.dir.exists() {
        eprintln!("error: {}: no such file or directory", a.dir.display());
        return Ok(ExitCode::from(2));
    }
    let started = std::time::Instant::now();
    let (cfg, report) = load_and_validate(&a.dir);
    tracing::debug!(elapsed = ?started.elapsed(), "loaded and validated");
    // The process ends right after printing: skip freeing a possibly huge catalog blob by blob.
    std::mem::forget(cfg);
    let mut failed = report.has_errors() || (a.strict && report.warnings().next().is_some());
    let olmv1 = match a.olmv1 && !report.has_errors() {
        true => Some(super::olmv1::check(&a.dir, a.olmv1_experimental)?),
        false => None,
    };
    if let Some(v) = &olmv1 {
        failed |= super::olmv1::failed(v);
    }
    match a.output {
        ReportFormat::Json if olmv1.is_some() => print(&super::olmv1::json(
            &report.to_json(),
            olmv1.as_deref().unwrap_or_default(),
        )?)?,
        ReportFormat::Text => {
            let text = report.to_text();
            if failed {
                eprint!("{text}");
            } else {
                print(&text)?;
            }
        }
        ReportFormat::Json => print(&report.to_json())?,
    }
    if let (Some(v), ReportFormat::Text) = (&olmv1, a.output) {
        print(&super::olmv1::text(v, a.olmv1_experimental))?;
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn graph_cmd(a: GraphArgs) -> anyhow::Result<ExitCode> {
    let cfg = load::load_dir_keeping(&a.dir, load::Keep::Structure)?;
    let format = match a.format {
        GraphFormat::Mermaid => graph::Format::Mermaid,
        GraphFormat::Dot => graph::Format::Dot,
        GraphFormat::Svg => graph::Format::Svg,
        GraphFormat::Html => graph::Format::Html,
    };
    let text = graph::render(
        &cfg,
        format,
        &graph::Options {
            package: a.package,
            minimum_edge: a.minimum_edge,
            v0_semantics: a.draw_v0_semantics,
            title: Some(a.dir.display().to_string()),
        },
    )?;
    emit(&text, a.out.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

fn upgrade_cmd(a: UpgradePathArgs) -> anyhow::Result<ExitCode> {
    let cfg = load::load_dir_keeping(&a.dir, load::Keep::Structure)?;
    let m = match model::Model::from_declcfg(&cfg) {
        Ok((m, _)) => m,
        Err(report) => {
            eprint!("{}", report.to_text());
            anyhow::bail!(
                "{}: the catalog does not validate; fix it first",
                a.dir.display()
            );
        }
    };
    let (channel, steps) = upgrade::upgrade_path(&m, &a.package, &a.from, a.channel.as_deref())?;
    match a.output {
        ReportFormat::Text => {
            let mut s = String::new();
            if steps.is_empty() {
                s.push_str(&format!(
                    "{} is already the head of channel {channel:?}\n",
                    a.from
                ));
            } else {
                s.push_str(&format!("channel {channel:?}: {} update(s)\n", steps.len()));
                for (i, st) in steps.iter().enumerate() {
                    s.push_str(&format!(
                        "{}. {} -> {} ({}) via {}\n",
                        i + 1,
                        st.from,
                        st.to,
                        st.to_version,
                        st.via
                    ));
                }
            }
            print(&s)?;
        }
        ReportFormat::Json => {
            let steps: Vec<serde_json::Value> = steps
                .iter()
                .map(|s| {
                    serde_json::json!({"from": s.from, "to": s.to, "version": s.to_version.to_string(), "via": s.via})
                })
                .collect();
            let v = serde_json::json!({"package": a.package, "channel": channel, "steps": steps});
            print(&format!("{}\n", serde_json::to_string_pretty(&v)?))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn add_cmd(a: AddArgs) -> anyhow::Result<ExitCode> {
    let opts = add::AddOptions {
        catalog_dir: a.catalog_dir,
        bundle: a.bundle,
        image: a.image,
        channels: a.channels,
        template: a.template,
        skip_range: a.skip_range,
        generate: match a.generate {
            GenerateArg::Minor => add::Generate::Minor,
            GenerateArg::Major => add::Generate::Major,
            GenerateArg::Both => add::Generate::Both,
        },
        skip_range_from_csv: a.skip_range_from_csv,
        form: a.form.form(),
    };
    let outcome = match add::add(&opts) {
        Ok(o) => o,
        Err(add::AddError::Invalid(report)) => {
            eprint!("{}", report.to_text());
            anyhow::bail!("not written: the re-rendered catalog does not validate");
        }
        Err(e) => return Err(e.into()),
    };
    for w in outcome.report.warnings() {
        eprintln!("{w}");
    }
    if a.check {
        let diff = outcome.files.diff_against(&outcome.package_dir, &[]);
        for d in &diff {
            println!("would change {}", outcome.package_dir.join(d).display());
        }
        return Ok(if diff.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let changes = outcome.files.write(&outcome.package_dir, &[])?;
    eprintln!(
        "added {} to package {:?}: {} written, {} unchanged ({} and {})",
        outcome.bundle,
        outcome.package,
        changes.written.len(),
        changes.unchanged,
        outcome.template.display(),
        outcome.catalog.display()
    );
    Ok(ExitCode::SUCCESS)
}
