//! `olm catalog filter SOURCE -o DIR`: keep what a cluster needs of a catalog.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use olm_bundler::catalog::filter::FilterSpec;
use olm_bundler::catalog::write_fs::Format;
use olm_bundler::ops::catalog_filter::{self, FilterRequest, Selection};

use super::args::{FbcFormat, FilterArgs, RegistryArgs};
use super::output::usage;

#[derive(Debug, Args)]
pub struct FilterCmdArgs {
    /// The catalog: a directory or file, or an image (`oci:<dir>[:tag]`, a registry reference).
    pub source: String,
    /// The directory the filtered catalog is written to, replaced as a whole.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    #[arg(long, value_enum, default_value = "json")]
    pub output_format: FbcFormat,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub async fn filter_cmd(a: FilterCmdArgs) -> anyhow::Result<ExitCode> {
    let selection = match &a.filter.config {
        Some(file) => Selection::Config(file.clone()),
        None => match FilterSpec::from_flags(&a.filter.flags()) {
            Ok(spec) => Selection::Spec(spec),
            Err(e) => return Ok(usage(e)),
        },
    };
    let format = match a.output_format {
        FbcFormat::Json => Format::Json,
        FbcFormat::Yaml => Format::Yaml,
    };
    let req = FilterRequest {
        source: a.source,
        output: a.output,
        format,
        selection,
        registry: a.registry.options()?,
    };
    let outcome = catalog_filter::filter_catalog(&req).await?;
    eprint!("{}", outcome.summary(&req.output));
    Ok(ExitCode::SUCCESS)
}
