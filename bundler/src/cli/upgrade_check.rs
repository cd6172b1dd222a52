//! `olm bundle check-upgrade OLD NEW` and `olm catalog check-upgrades <catalog>`: CRD upgrade
//! safety, printed as text or JSON. Exit 1 on a breaking change, 2 on unusable input.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use olm_bundler::ops::bundle_source;
use olm_bundler::ops::upgrade_check::{self, UpgradeCheckError};

use super::args::{OutputFormat, RegistryArgs, UnpackArgs};
use super::output::{failure, json_text, show, usage};
use olm_bundler::ops::progress::Spinner;

/// `olm bundle check-upgrade OLD NEW`.
#[derive(Debug, Args)]
pub struct CheckUpgradeArgs {
    /// The bundle installed today: a directory, or an image (`oci:<dir>[:tag]` or a
    /// registry reference).
    pub old: String,
    /// The bundle that replaces it: a directory or an image.
    pub new: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
}

/// `olm catalog check-upgrades <catalog>`.
#[derive(Debug, Args)]
pub struct CheckUpgradesArgs {
    /// The catalog directory (or file).
    pub dir: PathBuf,
    /// Only this package.
    #[arg(short = 'p', long = "package")]
    pub package: Option<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// Also fail (exit 1) when an edge could not be checked (olm.csv.metadata catalogs).
    #[arg(long)]
    pub strict: bool,
}

/// Prints the error of a check that could not run: exit 2 for unusable input, 1 otherwise.
fn not_checked(e: UpgradeCheckError) -> ExitCode {
    if e.is_usage() {
        return usage(e);
    }
    if let UpgradeCheckError::Invalid { report, .. } = &e {
        eprint!("{}", report.to_text());
    }
    failure(e)
}

pub async fn check_upgrade(a: CheckUpgradeArgs) -> ExitCode {
    let registry = match a.registry.reading(&a.unpack) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let pulling = [&a.old, &a.new]
        .iter()
        .any(|b| bundle_source::names_an_image(b))
        .then(|| Spinner::start("Pulling bundle images"));
    let report = match upgrade_check::check_bundles(&a.old, &a.new, &registry).await {
        Ok(r) => r,
        Err(e) => return not_checked(e),
    };
    drop(pulling);
    let text = match a.output {
        OutputFormat::Json => json_text(&report.to_json()),
        OutputFormat::Text => report.to_text(""),
    };
    show(&text, !report.passed())
}

pub fn check_upgrades(a: CheckUpgradesArgs) -> ExitCode {
    let report = match upgrade_check::check_catalog(&a.dir, a.package.as_deref()) {
        Ok(r) => r,
        Err(e) => return not_checked(e),
    };
    let text = match a.output {
        OutputFormat::Json => json_text(&report.to_json(a.strict)),
        OutputFormat::Text => report.to_text(),
    };
    show(&text, !report.passed_strict(a.strict))
}
