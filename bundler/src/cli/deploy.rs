//! `olm deploy ...`: the checked-in install manifests.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use olm_bundler::ops::deploy_generate::{self, DeployRequest, SigningPolicy};

use super::args::{SpecArgs, V1FilterArgs, V1NameArgs, v1_inputs};
use super::output::print;

#[derive(Debug, Subcommand)]
pub enum DeployCommand {
    /// Write <output>/olm (CatalogSource, OperatorGroup, Subscription, kustomization), with
    /// --bundle <output>/olmv1 (ClusterCatalog, ClusterExtension, installer ServiceAccount and
    /// RBAC), and with --manifests <output>/plain (the install without OLM).
    #[command(
        after_help = "Examples:\n  olm deploy generate --catalog-image quay.io/org/my-catalog:v0.2.1 --package my-operator --channel stable\n  olm deploy generate --catalog-image quay.io/org/my-catalog:v0.2.1 --package my-operator --bundle bundle/\n  olm deploy generate --catalog-image quay.io/org/my-catalog:v0.2.1 --package my-operator --verify-key cosign.pub --signed-repository quay.io/org/my-operator --signed-repository quay.io/org/my-operator-bundle"
    )]
    Generate(GenerateArgs),
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Catalog image the CatalogSource serves (overridable later through kustomize `images:`).
    #[arg(long)]
    pub catalog_image: String,
    /// OLM package to subscribe to (the catalog's `olm.package` name).
    #[arg(long)]
    pub package: String,
    #[command(flatten)]
    pub spec: SpecArgs,
    /// The operator's own manifests for the plain install: a directory of YAML files, or `-`
    /// for a YAML stream on stdin (e.g. `<operator> manifests --include-namespace`).
    #[arg(long)]
    pub manifests: Option<String>,
    /// The operator's bundle directory: also write <output>/olmv1, OLM v1's install, with the
    /// installer ServiceAccount's least-privilege RBAC derived from this bundle.
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<PathBuf>,
    #[command(flatten)]
    pub v1_names: V1NameArgs,
    #[command(flatten)]
    pub v1_filter: V1FilterArgs,
    /// Root of the generated tree.
    #[arg(long, short, default_value = "deploy")]
    pub output: PathBuf,
    /// Write nothing; exit 1 listing the files that differ from what would be generated.
    #[arg(long)]
    pub check: bool,
    /// Also write <output>/policy: an OpenShift ClusterImagePolicy and a containers
    /// policy.json + registries.d file that make a cluster require signatures by this public
    /// key (cosign.pub) for the catalog image's repository and each --signed-repository.
    #[arg(long, value_name = "FILE")]
    pub verify_key: Option<PathBuf>,
    /// Another repository the policy covers (the operator's, the bundle's); repeatable.
    #[arg(long, value_name = "REPO", requires = "verify_key")]
    pub signed_repository: Vec<String>,
}

pub async fn run(cmd: DeployCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DeployCommand::Generate(args) => generate_cmd(args),
    }
}

fn generate_cmd(args: GenerateArgs) -> anyhow::Result<ExitCode> {
    let olmv1 = args.bundle.map(|dir| {
        let inputs = v1_inputs(
            &args.package,
            &args.v1_names,
            &args.v1_filter,
            Some(&args.spec),
        );
        (inputs, dir)
    });
    let req = DeployRequest {
        spec: args.spec.inputs(&args.package),
        catalog_image: args.catalog_image,
        manifests: args.manifests,
        olmv1,
        output: args.output,
        check: args.check,
        signing: args.verify_key.map(|public_key| SigningPolicy {
            public_key,
            repositories: args.signed_repository,
        }),
    };
    let (deployed, notes) = deploy_generate::generate(&req)?;
    for n in notes {
        eprintln!("note: {n}");
    }
    let (out, err, failed) = deployed.report(&req.output);
    eprint!("{err}");
    print(&out)?;
    Ok(super::output::exit(failed))
}
