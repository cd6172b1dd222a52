//! `olm catalog site`: the catalog browser as static files.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use olm_bundler::ops::catalog_site::{self, SiteCmdError, SiteRequest};

use super::args::{RegistryArgs, UnpackArgs};
use super::output::{failure, print, usage};

#[derive(Debug, Args)]
pub struct SiteArgs {
    /// A catalog directory, or a catalog image (pulled first).
    pub catalog: String,
    /// The directory to write (replaced whole; if it exists it must be empty or a site
    /// written before): index.html, packages/<name>.html, search.json.
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: PathBuf,
    /// The catalog's name in titles and install snippets (CatalogSource, ClusterCatalog).
    /// Default: the directory's name, or the image repository's last component.
    #[arg(long)]
    pub catalog_name: Option<String>,
    /// The namespace of the CatalogSource the OLM v0 snippets subscribe from.
    #[arg(long, default_value = "olm")]
    pub catalog_namespace: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
}

pub async fn site_cmd(a: SiteArgs) -> anyhow::Result<ExitCode> {
    let req = SiteRequest {
        catalog: a.catalog,
        out: a.output.clone(),
        catalog_name: a.catalog_name,
        catalog_namespace: a.catalog_namespace,
        registry: a.registry.reading(&a.unpack)?,
    };
    match catalog_site::site(req).await {
        Ok(stats) => {
            print(&format!(
                "wrote {} packages ({} bytes) to {}\n",
                stats.packages,
                stats.bytes,
                a.output.display()
            ))?;
            Ok(ExitCode::SUCCESS)
        }
        Err(e @ SiteCmdError::Missing(_)) => Ok(usage(e)),
        Err(e) => Ok(failure(e)),
    }
}
