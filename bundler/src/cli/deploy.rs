//! `olm deploy ...`: the checked-in install manifests.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, Subcommand};
use olm_bundler::deploy::generate::{self, GenerateOptions};

use olm_bundler::ops::olmv1 as v1ops;

use super::args::{SpecArgs, V1FilterArgs, V1NameArgs, v1_inputs};

#[derive(Debug, Subcommand)]
pub enum DeployCommand {
    /// Write <output>/olm (CatalogSource, OperatorGroup, Subscription, kustomization), with
    /// --bundle <output>/olmv1 (ClusterCatalog, ClusterExtension, installer ServiceAccount and
    /// RBAC), and with --manifests <output>/plain (the install without OLM).
    #[command(
        after_help = "Examples:\n  olm deploy generate --catalog-image quay.io/org/my-catalog:v0.2.1 --package my-operator --channel stable\n  olm deploy generate --catalog-image quay.io/org/my-catalog:v0.2.1 --package my-operator --bundle bundle/"
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
}

pub async fn run(cmd: DeployCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DeployCommand::Generate(args) => generate_cmd(args),
    }
}

fn generate_cmd(args: GenerateArgs) -> anyhow::Result<ExitCode> {
    let spec = args
        .spec
        .inputs(&args.package)
        .to_spec(&args.catalog_image)?;
    let plain = match args.manifests.as_deref() {
        None => None,
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("<stdin>: cannot read manifests")?;
            Some(generate::parse_manifests("<stdin>", &text)?)
        }
        Some(dir) => Some(generate::load_manifests_dir(Path::new(dir))?),
    };
    let olmv1 = match &args.bundle {
        None => None,
        Some(dir) => Some(v1ops::generate_install(
            &v1_inputs(
                &args.package,
                &args.v1_names,
                &args.v1_filter,
                Some(&args.spec),
            ),
            &args.catalog_image,
            dir,
        )?),
    };
    for n in olmv1.iter().flat_map(|v| &v.rbac.notes) {
        eprintln!("note: {n}");
    }
    let generated = generate::generate(&GenerateOptions { spec, plain, olmv1 })?;
    let root = &args.output;
    if args.check {
        let stale = generated.tree.diff_against(root, &generated.owned_dirs);
        if stale.is_empty() {
            println!(
                "{} is up to date ({} files)",
                root.display(),
                generated.tree.len()
            );
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "{} is stale; re-run the command in {}/README.md without --check:",
            root.display(),
            root.display()
        );
        for rel in stale {
            eprintln!("  {}", describe_difference(&generated.tree, root, &rel));
        }
        return Ok(ExitCode::FAILURE);
    }
    let changes = generated
        .tree
        .write(root, &generated.owned_dirs)
        .context("writing the deploy tree")?;
    for p in &changes.written {
        println!("wrote {}", root.join(p).display());
    }
    for p in &changes.removed {
        println!("removed {}", root.join(p).display());
    }
    println!(
        "{}: {} written, {} removed, {} unchanged",
        root.display(),
        changes.written.len(),
        changes.removed.len(),
        changes.unchanged
    );
    Ok(ExitCode::SUCCESS)
}

/// `missing x`, `extra x`, or `x: line N differs` (the first differing line).
fn describe_difference(
    tree: &olm_bundler::atomic_write::FileTree,
    root: &Path,
    rel: &Path,
) -> String {
    let shown = root.join(rel).display().to_string();
    let Some(want) = tree.get(rel) else {
        return format!("extra   {shown} (not generated any more)");
    };
    let Ok(have) = std::fs::read(root.join(rel)) else {
        return format!("missing {shown}");
    };
    let want = String::from_utf8_lossy(want);
    let have = String::from_utf8_lossy(&have);
    let mut w = want.lines();
    let mut h = have.lines();
    let mut line = 1;
    loop {
        match (w.next(), h.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (Some(a), Some(b)) => {
                return format!("differs {shown}:{line}: have {b:?}, want {a:?}");
            }
            (Some(a), None) => return format!("differs {shown}:{line}: missing line {a:?}"),
            (None, Some(b)) => return format!("differs {shown}:{line}: extra line {b:?}"),
            (None, None) => return format!("differs {shown} (line endings)"),
        }
    }
}
