//! `olm catalog filter SOURCE -o DIR`: keep what a cluster needs of a catalog.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use olm_bundler::catalog::write_fs::Format;
use olm_bundler::ops::catalog_filter::{self, FilterRequest};

use super::args::{RegistryArgs, UnpackArgs};
use super::catalog_args::FilterArgs;

#[derive(Debug, Args)]
pub struct FilterCmdArgs {
    /// The catalog: a directory or file, or an image (`oci:<dir>[:tag]`, a registry reference).
    pub source: String,
    /// The directory the filtered catalog is written to, replaced as a whole.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// `json` (what opm and oc-mirror write) or `yaml`.
    #[arg(long, default_value = "json", value_name = "FORMAT")]
    pub output_format: Format,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
}

pub async fn filter_cmd(a: FilterCmdArgs) -> anyhow::Result<ExitCode> {
    let selection = match a.filter.selection() {
        Ok(s) => s,
        Err(e) => return Ok(super::output::usage(e)),
    };
    let (source, output, format) = (a.source, a.output, a.output_format);
    let registry = a.registry.reading(&a.unpack)?;
    let req = FilterRequest {
        source,
        output,
        format,
        selection,
        registry,
    };
    let outcome = catalog_filter::filter_catalog(&req).await?;
    eprint!("{}", outcome.summary(&req.output));
    Ok(ExitCode::SUCCESS)
}
