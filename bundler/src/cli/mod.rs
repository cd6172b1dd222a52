//! Command-line surface of `olm`. This file holds the command tree and sends each command to
//! its file; a command's file holds its clap arguments, one call into the library and the
//! printing. Command files never import each other: they share only `args` (flag groups) and
//! `output` (printing, exit codes), like cargo's command prelude.
//!
//! Exit codes: 0 success, 1 failure (including validation errors), 2 usage errors (clap) and
//! the I/O failures a command chooses to report as such.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod args;
mod bundle;
mod catalog;
mod catalog_args;
mod catalog_filter;
mod catalog_mirror;
mod catalog_opm;
mod catalog_site;
mod check;
mod deploy;
mod image;
mod image_trust;
mod install;
mod output;
mod registry;
mod release;
mod scorecard;
mod serve;
mod upgrade_check;

#[derive(Debug, Parser)]
#[command(
    name = "olm",
    version,
    about = "Package operators for OLM: bundles, daemon-free images, file-based catalogs, installs",
    propagate_version = true
)]
pub struct Cli {
    /// More log output (-v debug, -vv trace). RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// No progress (spinners, bars, step lines); results and errors are printed as always.
    /// Progress is drawn only when stderr is a terminal anyway.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Coloring: auto, always, never. `auto` colours only a terminal, and not when
    /// NO_COLOR is set.
    #[arg(long, global = true, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// registry+v1 bundles: generate, validate, build.
    #[command(subcommand)]
    Bundle(BundleCommand),
    /// OCI images: build an operator image, push, pull, inspect, copy; sign, verify, attest.
    #[command(subcommand)]
    Image(ImageCommands),
    /// Registry credentials: log in and out, where podman and skopeo read them.
    #[command(subcommand)]
    Registry(registry::RegistryCommand),
    /// File-based catalogs: render, template, validate, graph, serve, build.
    #[command(subcommand)]
    Catalog(CatalogCommand),
    /// Certification: preflight's operator and container checks, offline, fixes named.
    #[command(subcommand)]
    Check(check::CheckCommand),
    /// Install manifests for OLM and for plain clusters.
    #[command(subcommand)]
    Deploy(deploy::DeployCommand),
    /// Install a package from a catalog image through a Subscription, and wait for it.
    #[command(
        after_help = "Examples:\n  olm install --catalog quay.io/org/my-catalog:latest --package my-operator --channel stable\n  olm install --olm-v1 --catalog quay.io/org/my-catalog:v1 --package my-operator --bundle-dir bundle/\n  olm install --catalog-address 192.168.1.10:50051 --package my-operator\n  olm install --bundle localhost:5000/org/my-operator-bundle:v0.1.0 --index-image localhost:5000/org/one-bundle-catalog"
    )]
    Install(Box<install::InstallArgs>),
    /// Move an installed package to the next version its Subscription resolves.
    #[command(
        after_help = "Examples:\n  olm upgrade my-operator\n  olm upgrade my-operator --catalog quay.io/org/my-catalog:v2\n  olm upgrade my-operator --olm-v1 --version-range 0.3.x"
    )]
    Upgrade(install::UpgradeArgs),
    /// Remove what `olm install` created, in order, waiting for each deletion.
    #[command(
        after_help = "Examples:\n  olm uninstall my-operator\n  olm uninstall my-operator --olm-v1"
    )]
    Uninstall(install::UninstallArgs),
    /// Show the Subscription, InstallPlan, CSV and Deployments of an installed package.
    #[command(
        after_help = "Examples:\n  olm status my-operator\n  olm status my-operator -o json\n  olm status my-operator --olm-v1"
    )]
    Status(install::StatusArgs),
    /// The whole release: manifests, bundle, operator/bundle/catalog images, catalog/, deploy/.
    #[command(disable_version_flag = true)]
    #[command(
        after_help = "Examples:\n  olm release\n  olm release --version 0.3.0 --replaces reverse-words-operator.v0.2.1 --registry localhost:5000"
    )]
    Release(Box<release::ReleaseArgs>),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish).
    #[command(
        after_help = "Examples:\n  olm completion bash > ~/.local/share/bash-completion/completions/olm\n  olm completion zsh > \"${fpath[1]}/_olm\"\n  olm completion fish > ~/.config/fish/completions/olm.fish"
    )]
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// `olm image ...`: building and moving images, and signing and verifying them.
#[derive(Debug, Subcommand)]
pub enum ImageCommands {
    #[command(flatten)]
    Move(image::ImageCommand),
    #[command(flatten)]
    Trust(image_trust::TrustCommand),
}

#[derive(Debug, Subcommand)]
pub enum BundleCommand {
    /// Generate a registry+v1 bundle (CSV, CRDs, annotations, bundle.Dockerfile) from an
    /// operator's manifests and a CSV base.
    #[command(disable_version_flag = true)]
    #[command(
        after_help = "Examples:\n  olm bundle generate --config operator/olm/bundle.yaml --check\n  kustomize build config/manifests | olm bundle generate --manifests - --package memcached-operator --version 0.0.1 --channels alpha -o bundle"
    )]
    Generate(Box<bundle::GenerateArgs>),
    /// Validate a bundle directory as operator-framework/api's validators do.
    #[command(
        after_help = "Examples:\n  olm bundle validate bundle/ -s all\n  olm bundle validate quay.io/org/my-operator-bundle:v0.1.0 -o json"
    )]
    Validate(bundle::ValidateArgs),
    /// Build the bundle image (one layer: manifests/, metadata/, tests/scorecard/).
    #[command(
        after_help = "Examples:\n  olm bundle build bundle/ -t oci:target/bundle:v0.1.0\n  olm bundle build bundle/ -t localhost:5000/org/my-operator-bundle:v0.1.0 --push"
    )]
    Build(bundle::BundleBuildArgs),
    /// Compare the CRDs of two bundles (directories or images) and fail on changes that
    /// break stored objects or clients, as OLM v1's CRD upgrade-safety preflight would.
    #[command(
        after_help = "Examples:\n  olm bundle check-upgrade quay.io/org/my-operator-bundle:v0.1.0 bundle/"
    )]
    CheckUpgrade(upgrade_check::CheckUpgradeArgs),
    /// Run operator-sdk scorecard's tests: the built-in ones in-process, offline; tests of
    /// other images as pods when given a cluster.
    #[command(
        after_help = "Examples:\n  olm bundle scorecard bundle/\n  olm bundle scorecard bundle/ --selector suite=olm -o json\n  olm bundle scorecard quay.io/org/my-operator-bundle:v0.1.0 -o xunit"
    )]
    Scorecard(scorecard::ScorecardArgs),
}

#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Render bundle directories and catalog directories to FBC (like `opm render`).
    #[command(
        after_help = "Examples:\n  olm catalog render bundle/ -o yaml\n  olm catalog render quay.io/org/my-catalog:latest -o json > index.json"
    )]
    Render(catalog::RenderArgs),
    /// Render a catalog template (olm.template.basic or olm.semver) to FBC.
    Template(catalog::TemplateArgs),
    /// Validate a catalog directory: every `opm validate` rule plus extra warnings.
    #[command(
        after_help = "Examples:\n  olm catalog validate catalog/ --strict\n  olm catalog validate catalog/ --olmv1 -o json"
    )]
    Validate(catalog::ValidateArgs),
    /// Draw the upgrade graph of each channel (mermaid as `opm alpha render-graph`, dot, svg, html).
    #[command(
        after_help = "Examples:\n  olm catalog graph catalog/ --format svg --out graph.svg\n  olm catalog graph catalog/ --format html --out graphs.html"
    )]
    Graph(catalog::GraphArgs),
    /// The updates OLM would apply from an installed version to the channel head.
    #[command(
        after_help = "Examples:\n  olm catalog upgrade-path catalog/ --package reverse-words-operator --from 0.1.0"
    )]
    UpgradePath(catalog::UpgradePathArgs),
    /// Keep what a cluster needs of a catalog, as oc-mirror v2 filters it, into a directory.
    #[command(
        after_help = "Examples:\n  olm catalog filter quay.io/org/catalog:v1 -o filtered --package my-operator --channel stable --min-version 1.2.0\n  olm catalog filter catalog/ -o filtered --config imageset-config.yaml\n  olm catalog filter catalog/ -o filtered --package my-operator --upgrade-from 1.0.0"
    )]
    Filter(catalog_filter::FilterCmdArgs),
    /// Copy a filtered catalog and every image it needs into another registry, or onto a disk
    /// and from there into a registry; writes ImageDigestMirrorSet, CatalogSource and
    /// ClusterCatalog for the cluster.
    #[command(after_help = "Examples:
  olm catalog mirror quay.io/org/catalog:v1 --to mirror.local:5000/olm --package my-operator
  olm catalog mirror quay.io/org/catalog:v1 --to-archive /media/usb/mirror --config imageset-config.yaml
  olm catalog mirror --from-archive /media/usb/mirror --to mirror.local:5000/olm
  olm catalog mirror catalog/ --to registry.internal/olm --rewrite-references")]
    Mirror(Box<catalog_mirror::MirrorArgs>),
    /// Add a released bundle to a package's template and re-render the package.
    #[command(
        after_help = "Examples:\n  olm catalog add catalog/ --bundle bundle/ --image quay.io/org/my-operator-bundle:v0.2.0 --channels candidate,fast"
    )]
    Add(catalog::AddArgs),
    /// Build the catalog image: FBC under /configs, served by `olm catalog serve` on :50051.
    #[command(
        after_help = "Examples:\n  olm catalog build catalog/ -t oci:target/catalog:latest\n  olm catalog build catalog/ -t localhost:5000/org/my-catalog:latest --push"
    )]
    Build(serve::CatalogBuildArgs),
    /// Serve the catalog over operator-registry's gRPC API (like `opm serve`), port 50051.
    #[command(
        after_help = "Examples:\n  olm catalog serve catalog/ --port 50051\n  olm catalog serve catalog/ --cache-dir /tmp/cache --cache-only"
    )]
    Serve(serve::ServeArgs),
    /// Write the catalog browser (a grid of packages with search, a page per package with
    /// its description, channels, versions, upgrade graph, CRDs and install snippets) as
    /// static files; `olm catalog serve --http-port` serves the same pages at `/`.
    #[command(
        after_help = "Examples:\n  olm catalog site catalog/ -o site/\n  olm catalog site quay.io/org/catalog:v1 -o site/ --catalog-namespace operators"
    )]
    Site(catalog_site::SiteArgs),
    /// Check the CRDs along every upgrade edge (replaces, skips, skipRange) for changes that
    /// break stored objects or clients.
    #[command(
        after_help = "Examples:\n  olm catalog check-upgrades catalog/\n  olm catalog check-upgrades catalog/ -o json"
    )]
    CheckUpgrades(upgrade_check::CheckUpgradesArgs),
    /// Write a package's `olm.package` blob (like `opm init`).
    Init(catalog_opm::InitArgs),
    /// Turn a package's FBC into a basic or substitutes template (like `opm alpha
    /// convert-template`).
    ConvertTemplate(catalog_opm::ConvertTemplateArgs),
    /// List the packages, channels or bundles of a catalog directory or image (like `opm
    /// alpha list`).
    #[command(subcommand)]
    List(catalog_opm::ListCommand),
    /// Write a legacy sqlite index or a catalog as a catalog directory (like `opm migrate`).
    #[command(after_help = "Examples:\n  olm catalog migrate index.db catalog/ -o yaml")]
    Migrate(catalog_opm::MigrateArgs),
}

pub async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Bundle(c) => match c {
            BundleCommand::Generate(a) => Ok(bundle::generate(*a).await),
            BundleCommand::Validate(a) => Ok(bundle::validate(a).await),
            BundleCommand::Build(a) => bundle::build(a).await,
            BundleCommand::CheckUpgrade(a) => Ok(upgrade_check::check_upgrade(a).await),
            BundleCommand::Scorecard(a) => Ok(scorecard::scorecard(a).await),
        },
        Command::Image(ImageCommands::Move(c)) => image::run(c).await,
        Command::Image(ImageCommands::Trust(c)) => image_trust::run(c).await,
        Command::Registry(c) => registry::run(c).await,
        Command::Catalog(c) => match c {
            CatalogCommand::Render(a) => catalog::render_cmd(a).await,
            CatalogCommand::Template(a) => catalog::template_cmd(a),
            CatalogCommand::Validate(a) => catalog::validate_cmd(a),
            CatalogCommand::Graph(a) => catalog::graph_cmd(a),
            CatalogCommand::UpgradePath(a) => catalog::upgrade_cmd(a),
            CatalogCommand::Add(a) => catalog::add_cmd(a),
            CatalogCommand::Filter(a) => catalog_filter::filter_cmd(a).await,
            CatalogCommand::Mirror(a) => catalog_mirror::mirror_cmd(*a).await,
            CatalogCommand::Build(a) => serve::catalog_build(a).await,
            CatalogCommand::Serve(a) => serve::run(a).await,
            CatalogCommand::Site(a) => catalog_site::site_cmd(a).await,
            CatalogCommand::CheckUpgrades(a) => Ok(upgrade_check::check_upgrades(a)),
            CatalogCommand::Init(a) => catalog_opm::init_cmd(a),
            CatalogCommand::ConvertTemplate(a) => catalog_opm::convert_cmd(a),
            CatalogCommand::List(c) => catalog_opm::list_cmd(c).await,
            CatalogCommand::Migrate(a) => catalog_opm::migrate_cmd(a).await,
        },
        Command::Check(c) => check::run(c).await,
        Command::Deploy(c) => deploy::run(c).await,
        Command::Install(a) => install::install(*a).await,
        Command::Upgrade(a) => install::upgrade(a).await,
        Command::Uninstall(a) => install::uninstall(a).await,
        Command::Status(a) => install::status(a).await,
        Command::Release(a) => release::run(*a).await,
        Command::Completion { shell } => {
            use clap::CommandFactory as _;
            clap_complete::generate(shell, &mut Cli::command(), "olm", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `--color WHEN`, spelled as cargo spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl From<ColorChoice> for olm_bundler::ops::progress::ColorWhen {
    fn from(c: ColorChoice) -> Self {
        match c {
            ColorChoice::Auto => Self::Auto,
            ColorChoice::Always => Self::Always,
            ColorChoice::Never => Self::Never,
        }
    }
}

impl Cli {
    /// The log level: `-v` count, at least debug under `catalog serve --debug` (opm's flag).
    /// Set once for the process, so the server's blocking tasks and connections log too.
    pub fn verbosity(&self) -> u8 {
        match &self.command {
            Command::Catalog(CatalogCommand::Serve(a)) if a.debug => self.verbose.max(1),
            _ => self.verbose,
        }
    }
}

pub use output::report;
