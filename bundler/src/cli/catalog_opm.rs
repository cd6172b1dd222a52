//! The opm commands people reach for beside render/validate/serve: `init`, `convert-template`,
//! `list` and `migrate` (opm `init`, `alpha convert-template`, `alpha list`, `migrate`).
//! Options in, one library call, print.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use olm_bundler::ops::catalog_migrate::{self, MigrateRequest};
use olm_bundler::ops::catalog_source;

use olm_bundler::catalog::list::{self, Listing};
use olm_bundler::catalog::{convert, init};

use super::args::{RegistryArgs, UnpackArgs};
use super::catalog_args::{FbcFormat, MigrateLevel};
use super::output::{emit, model_error};

/// `olm catalog init <package> --default-channel C [--icon F] [--description F]`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  olm catalog init example-operator --default-channel stable \
--description README.md --icon icon.png -o yaml > catalog/example-operator/package.yaml"
)]
pub struct InitArgs {
    /// The package name.
    pub package: String,
    /// The channel subscriptions use when they name none.
    #[arg(long, short = 'c')]
    pub default_channel: String,
    /// A file with the package description (markdown), kept verbatim.
    #[arg(long, short = 'd', value_name = "FILE")]
    pub description: Option<PathBuf>,
    /// An image file for the package icon (PNG, JPEG, GIF, ...; its type from its bytes).
    #[arg(long, short = 'i', value_name = "FILE")]
    pub icon: Option<PathBuf>,
    #[arg(short, long, value_enum, default_value = "json")]
    pub output: FbcFormat,
    /// Write to this file (atomically) instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn init_cmd(a: InitArgs) -> anyhow::Result<ExitCode> {
    let cfg = init::init(&init::InitOptions {
        package: &a.package,
        default_channel: &a.default_channel,
        description: a.description.as_deref(),
        icon: a.icon.as_deref(),
    })?;
    emit(&a.output.text(&cfg)?, a.out.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ConvertKind {
    /// `olm.template.basic`: bundles become their image only, rendered again from it.
    Basic,
    /// `olm.template.substitutes`: the blobs kept whole, no substitutions yet.
    Substitutes,
}

/// `olm catalog convert-template basic|substitutes <catalog file>`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  olm catalog convert-template basic catalog/example-operator/catalog.yaml -o yaml \
> templates/example-operator.yaml\n  olm catalog template templates/example-operator.yaml -o yaml   # gives the catalog back"
)]
pub struct ConvertTemplateArgs {
    /// The template kind to write.
    #[arg(value_enum)]
    pub kind: ConvertKind,
    /// A catalog file (one package's `catalog.yaml` or `.json`).
    pub file: PathBuf,
    #[arg(short, long, value_enum, default_value = "json")]
    pub output: FbcFormat,
    /// Write to this file (atomically) instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn convert_cmd(a: ConvertTemplateArgs) -> anyhow::Result<ExitCode> {
    let kind = match a.kind {
        ConvertKind::Basic => convert::TargetKind::Basic,
        ConvertKind::Substitutes => convert::TargetKind::Substitutes,
    };
    let template = convert::to_template(kind, convert::read_blobs(&a.file)?);
    let text = match a.output {
        FbcFormat::Json => convert::to_json(&template),
        FbcFormat::Yaml => convert::to_yaml(&template)?,
    };
    emit(&text, a.out.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum ListFormat {
    Table,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum ListCommand {
    /// Packages: name, display name, default channel.
    #[command(
        after_help = "Examples:\n  olm catalog list packages catalog/\n  olm catalog list packages quay.io/org/catalog:latest -o json"
    )]
    Packages(ListArgs),
    /// Channels: package, channel, head.
    #[command(
        after_help = "Examples:\n  olm catalog list channels catalog/ reverse-words-operator"
    )]
    Channels(ListArgs),
    /// Bundles: package, channel, bundle, replaces, skips, skip range, image.
    #[command(
        after_help = "Examples:\n  olm catalog list bundles catalog/ reverse-words-operator -o json"
    )]
    Bundles(ListArgs),
}

/// What a `list` command reads.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// A catalog directory, or a catalog image (registry reference or `oci:<dir>[:tag]`).
    pub catalog: String,
    /// Only this package (channels and bundles).
    pub package: Option<String>,
    #[arg(short, long, value_enum, default_value = "table")]
    pub output: ListFormat,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
}

pub async fn list_cmd(cmd: ListCommand) -> anyhow::Result<ExitCode> {
    let (what, a) = match cmd {
        ListCommand::Packages(a) => (Listing::Packages, a),
        ListCommand::Channels(a) => (Listing::Channels, a),
        ListCommand::Bundles(a) => (Listing::Bundles, a),
    };
    if what == Listing::Packages && a.package.is_some() {
        return Ok(super::output::usage(
            "`list packages` takes no package name",
        ));
    }
    let loaded = catalog_source::load_model(&a.catalog, &a.registry.reading(&a.unpack)?).await;
    let m = loaded.map_err(model_error)?;
    let text = list::render(&m, what, a.package.as_deref(), a.output == ListFormat::Json)?;
    emit(&text, None)?;
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// An sqlite index database or index image, or a catalog directory or image.
    pub index: String,
    /// Where `<package>/catalog.json` (or `.yaml`) go; it must be empty or not exist.
    pub output_dir: PathBuf,
    #[arg(short, long, value_enum, default_value = "json")]
    pub output: FbcFormat,
    #[arg(long, value_enum, default_value = "none")]
    pub migrate_level: MigrateLevel,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
}

pub async fn migrate_cmd(a: MigrateArgs) -> anyhow::Result<ExitCode> {
    let req = MigrateRequest {
        index: a.index,
        output_dir: a.output_dir,
        yaml: a.output == FbcFormat::Yaml,
        migrate: a.migrate_level.level(),
        registry: a.registry.reading(&a.unpack)?,
    };
    let written = catalog_migrate::migrate(&req).await?.len();
    eprintln!("wrote {written} files in {}", req.output_dir.display());
    Ok(ExitCode::SUCCESS)
}
