//! `olm catalog render|template|validate|graph|upgrade-path|add`: the FBC commands.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use olm_bundler::catalog::declcfg::TextFormat;
use olm_bundler::catalog::render::Form;
use olm_bundler::catalog::{add, graph, load, olmv1, upgrade};
use olm_bundler::ops::catalog_render::{self, CatalogRenderError, RenderRequest};
use olm_bundler::ops::catalog_source;
use olm_bundler::ops::catalog_template::{self, CatalogTemplateError, TemplateRequest};
use olm_bundler::ops::catalog_validate::{self, Olmv1};

use super::args::{RegistryArgs, UnpackArgs};
use super::catalog_args::{FbcFormat, MigrateLevel};
use super::output::{emit, exit, json_text, model_error, print, show, usage};

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
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
    #[arg(short, long, value_enum, default_value = "json")]
    pub output: FbcFormat,
    /// The bundle image reference to record for a single bundle directory (opm's
    /// `--image-ref-template` for one bundle); with `--migrate-level
    /// bundle-object-to-csv-metadata` the bundle is then written as `olm.csv.metadata`.
    #[arg(long)]
    pub image: Option<String>,
    /// As opm: `none` (default) keeps each catalog's form and writes bundle directories and
    /// bundle images as `olm.bundle.object`; `bundle-object-to-csv-metadata` turns every
    /// bundle that has an image into `olm.csv.metadata`.
    #[arg(long, value_enum, default_value = "none")]
    pub migrate_level: MigrateLevel,
    /// Embed every manifest as `olm.bundle.object`: the default, as in opm (kept for scripts
    /// that pass it).
    #[arg(long, conflicts_with = "migrate_level")]
    pub bundle_objects: bool,
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

pub async fn render_cmd(a: RenderArgs) -> anyhow::Result<ExitCode> {
    let req = RenderRequest {
        refs: a.refs,
        image: a.image,
        bundle_objects: a.bundle_objects,
        migrate: a.migrate_level.level(),
        registry: a.registry.reading(&a.unpack)?,
        catalogs_only: false,
    };
    let format = TextFormat::yaml_if(a.output == FbcFormat::Yaml);
    let spill = match catalog_render::render(&req, format).await {
        Ok(spill) => spill,
        Err(CatalogRenderError::Usage(msg)) => return Ok(usage(msg)),
        Err(e) => return Err(e.into()),
    };
    // Written only once every input has been read: nothing reaches stdout on an error.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let written = spill
        .write_to(&mut out)
        .and_then(|()| std::io::Write::flush(&mut out));
    super::output::written(written)?;
    Ok(ExitCode::SUCCESS)
}

pub fn template_cmd(a: TemplateArgs) -> anyhow::Result<ExitCode> {
    let (form, skip_range_from_csv) = (a.form.form(), a.skip_range_from_csv);
    let (args, bundle_dirs, reuse) = (a.args, a.bundle_dirs, a.reuse);
    let req = TemplateRequest {
        args,
        bundle_dirs,
        reuse,
        form,
        skip_range_from_csv,
    };
    let cfg = match catalog_template::render(&req) {
        Ok(cfg) => cfg,
        Err(CatalogTemplateError::Usage(msg)) => return Ok(usage(msg)),
        Err(e) => return Err(e.into()),
    };
    emit(&a.output.text(&cfg)?, a.out.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

pub fn validate_cmd(a: ValidateArgs) -> anyhow::Result<ExitCode> {
    if !a.dir.exists() {
        return Ok(usage(format!(
            "{}: no such file or directory",
            a.dir.display()
        )));
    }
    let olmv1 = Olmv1::from_flags(a.olmv1, a.olmv1_experimental);
    let mut v = catalog_validate::validate(&a.dir, a.strict, olmv1)?;
    // The process ends right after printing: skip freeing a possibly huge catalog blob by blob.
    std::mem::forget(v.catalog.take());
    match a.output {
        ReportFormat::Json => print(&v.to_json())?,
        ReportFormat::Text if v.failed => eprint!("{}", v.report.to_text()),
        ReportFormat::Text => print(&v.report.to_text())?,
    }
    if let (Some(verdicts), ReportFormat::Text) = (&v.olmv1, a.output) {
        print(&olmv1::to_text(verdicts, a.olmv1_experimental))?;
    }
    Ok(exit(v.failed))
}

pub fn graph_cmd(a: GraphArgs) -> anyhow::Result<ExitCode> {
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

pub fn upgrade_cmd(a: UpgradePathArgs) -> anyhow::Result<ExitCode> {
    let m = catalog_source::load_local_model(&a.dir, load::Keep::Structure).map_err(model_error)?;
    let (channel, steps) = upgrade::upgrade_path(&m, &a.package, &a.from, a.channel.as_deref())?;
    let text = match a.output {
        ReportFormat::Text => upgrade::path_text(&a.from, &channel, &steps),
        ReportFormat::Json => json_text(&upgrade::path_json(&a.package, &channel, &steps)),
    };
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

pub fn add_cmd(a: AddArgs) -> anyhow::Result<ExitCode> {
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
        let lines = outcome.would_change();
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        return Ok(show(&text, !lines.is_empty()));
    }
    eprintln!("{}", outcome.write()?);
    Ok(ExitCode::SUCCESS)
}
