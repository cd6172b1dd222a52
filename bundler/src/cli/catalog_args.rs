//! Flag groups of the catalog commands (render, migrate, filter, mirror): shared like
//! `args`, kept apart so each file stays short.

use std::path::PathBuf;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use olm_bundler::catalog::declcfg::DeclarativeConfig;
use olm_bundler::catalog::filter::{FilterFlags, SpecError};
use olm_bundler::catalog::render;
use olm_bundler::ops::catalog_filter::Selection;

/// opm's `--migrate-level`: the last migration to run on what was rendered.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum MigrateLevel {
    /// Keep every manifest as an `olm.bundle.object` property.
    None,
    /// One `olm.csv.metadata` property instead of the manifests.
    #[value(name = "bundle-object-to-csv-metadata")]
    CsvMetadata,
}

impl MigrateLevel {
    pub fn level(self) -> render::MigrateLevel {
        match self {
            MigrateLevel::None => render::MigrateLevel::None,
            MigrateLevel::CsvMetadata => render::MigrateLevel::BundleObjectToCsvMetadata,
        }
    }
}

/// How a file-based catalog is written.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum FbcFormat {
    Json,
    Yaml,
}

impl FbcFormat {
    pub fn text(self, cfg: &DeclarativeConfig) -> anyhow::Result<String> {
        cfg.to_text(self == FbcFormat::Yaml)
            .context("cannot write YAML")
    }
}

/// Which packages, channels and bundles of a catalog to keep, as oc-mirror v2 selects them:
/// shared by `olm catalog filter` and `olm catalog mirror`. The per-package flags apply to
/// exactly one --package; --config filters each package its own way.
#[derive(Debug, Clone, Default, Args)]
pub struct FilterArgs {
    /// Keep this package (repeatable) [default: every package].
    #[arg(long = "package", value_name = "NAME")]
    pub packages: Vec<String>,
    /// Keep this channel of the package (repeatable) [default: every channel].
    #[arg(long = "channel", value_name = "NAME")]
    pub channels: Vec<String>,
    /// The package's new default channel, needed when --channel leaves out the default.
    #[arg(long, value_name = "NAME")]
    pub default_channel: Option<String>,
    /// In each channel, the bundles from this version (oc-mirror's minVersion).
    #[arg(long, value_name = "VERSION")]
    pub min_version: Option<String>,
    /// In each channel, the bundles up to this version (oc-mirror's maxVersion).
    #[arg(long, value_name = "VERSION")]
    pub max_version: Option<String>,
    /// Every bundle of what is kept, not only channel heads (oc-mirror's `full: true`).
    #[arg(long)]
    pub full: bool,
    /// Only the bundles OLM installs on the way from this version to each channel head.
    #[arg(long, value_name = "VERSION")]
    pub upgrade_from: Option<String>,
    /// An oc-mirror v2 ImageSetConfiguration: its mirror.operators[] entry for the catalog.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["packages", "channels", "default_channel", "min_version", "max_version", "full", "upgrade_from"])]
    pub config: Option<PathBuf>,
    /// With --config: a package or channel the catalog does not have is an error, not a
    /// warning (oc-mirror leaves it out and goes on).
    #[arg(long, requires = "config", conflicts_with_all = ["packages", "channels", "default_channel", "min_version", "max_version", "full", "upgrade_from"])]
    pub strict: bool,
}

impl FilterArgs {
    /// Where the selection comes from: the ImageSetConfiguration, else the flags.
    pub fn selection(&self) -> Result<Selection, SpecError> {
        Selection::new(self.config.clone(), self.strict, &self.flags())
    }

    /// The flags as the library takes them.
    pub fn flags(&self) -> FilterFlags {
        FilterFlags {
            packages: self.packages.clone(),
            channels: self.channels.clone(),
            default_channel: self.default_channel.clone(),
            min_version: self.min_version.clone(),
            max_version: self.max_version.clone(),
            upgrade_from: self.upgrade_from.clone(),
            full: self.full,
        }
    }
}
