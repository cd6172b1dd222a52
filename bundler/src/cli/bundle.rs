//! `olm bundle ...`: generate, validate, build.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};

use olm_bundler::bundle::generate::config;
use olm_bundler::bundle::load::{BundleDir, LoadError};
use olm_bundler::bundle::validate::{self, Finding, Level, Options, Report, Suite};
use olm_bundler::grammar::semver_range;
use olm_bundler::ops::bundle_generate::{self, BundleGenerateError, Manifests, Mode, Outcome};
use olm_bundler::ops::bundle_source;
use olm_bundler::yaml::YamlError;

use super::args::OutputFormat;
use super::progress::Spinner;

#[derive(Debug, Subcommand)]
pub enum BundleCommand {
    /// Generate a registry+v1 bundle (CSV, CRDs, annotations, bundle.Dockerfile) from an
    /// operator's manifests and a CSV base.
    #[command(disable_version_flag = true)]
    #[command(
        after_help = "Examples:\n  olm bundle generate --config operator/olm/bundle.yaml --check\n  kustomize build config/manifests | olm bundle generate --manifests - --package memcached-operator --version 0.0.1 --channels alpha -o bundle"
    )]
    Generate(Box<GenerateArgs>),
    /// Validate a bundle directory as operator-framework/api's validators do.
    #[command(
        after_help = "Examples:\n  olm bundle validate bundle/ -s all\n  olm bundle validate quay.io/org/my-operator-bundle:v0.1.0 -o json"
    )]
    Validate(ValidateArgs),
    /// Build the bundle image (one layer: manifests/, metadata/, tests/scorecard/).
    #[command(
        after_help = "Examples:\n  olm bundle build bundle/ -t oci:target/bundle:v0.1.0\n  olm bundle build bundle/ -t localhost:5000/org/my-operator-bundle:v0.1.0 --push"
    )]
    Build(super::image::BundleBuildArgs),
    /// Compare the CRDs of two bundles (directories or images) and fail on changes that
    /// break stored objects or clients, as OLM v1's CRD upgrade-safety preflight would.
    #[command(
        after_help = "Examples:\n  olm bundle check-upgrade quay.io/org/my-operator-bundle:v0.1.0 bundle/"
    )]
    CheckUpgrade(super::upgrade_check::CheckUpgradeArgs),
}

pub async fn run(cmd: BundleCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BundleCommand::Generate(args) => Ok(run_generate(*args).await),
        BundleCommand::Validate(args) => Ok(run_validate(args).await),
        BundleCommand::Build(args) => super::image::bundle_build(args).await,
        BundleCommand::CheckUpgrade(args) => Ok(super::upgrade_check::check_upgrade(args).await),
    }
}

/// Exit code 2: bad usage or unreadable input.
fn usage(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {msg}");
    ExitCode::from(2)
}

fn failure(err: &anyhow::Error) -> ExitCode {
    super::report(err);
    ExitCode::FAILURE
}

/// `olm bundle generate`. Every setting can also come from `--config <file>` (YAML with the
/// same names as the flags, e.g. `csv-base:`, `default-channel:`; paths relative to the
/// config file); flags win over the file.
#[derive(Debug, Args, Default)]
pub struct GenerateArgs {
    /// YAML file with the settings below (flags override it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The operator's manifests: a directory (searched recursively), one multi-document YAML
    /// file, or `-` for a stream on stdin (e.g. `kustomize build config/default | ...`).
    #[arg(long, alias = "input-dir")]
    pub manifests: Option<String>,
    /// The CSV base with the hand-written metadata (display name, description, icon, ...).
    /// Optional when the manifests include it (`kustomize build config/manifests`).
    #[arg(long)]
    pub csv_base: Option<PathBuf>,
    /// Package name; the CSV is named `<package>.v<version>`.
    #[arg(long)]
    pub package: Option<String>,
    /// Operator version (semver).
    #[arg(long)]
    pub version: Option<String>,
    /// Channels, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub channels: Vec<String>,
    /// Default channel (one of --channels).
    #[arg(long)]
    pub default_channel: Option<String>,
    /// The CSV this version replaces (`<package>.v<previous>`).
    #[arg(long)]
    pub replaces: Option<String>,
    /// CSVs this version skips, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub skips: Vec<String>,
    /// `olm.skipRange` annotation, e.g. `>=0.1.0 <0.2.1`.
    #[arg(long)]
    pub skip_range: Option<String>,
    /// Minimum Kubernetes version, e.g. `1.25.0`.
    #[arg(long)]
    pub min_kube_version: Option<String>,
    /// Also write tests/scorecard/config.yaml (and its labels) with operator-sdk's default
    /// tests, when the manifests hold no scorecard Configuration (config/scorecard) of their
    /// own; when they do, that one is written.
    #[arg(long)]
    pub scorecard: bool,
    /// Scorecard test image of the default tests (implies --scorecard).
    #[arg(long)]
    pub scorecard_image: Option<String>,
    /// ServiceAccounts besides the Deployments' whose RBAC goes into the CSV, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub extra_service_accounts: Vec<String>,
    /// Beyond operator-sdk: list every container image in relatedImages (by tag, named after
    /// the container) besides RELATED_IMAGE_* variables, keep the base's relatedImages, and
    /// set the containerImage annotation to the operator's image.
    #[arg(long)]
    pub related_images_from_containers: bool,
    /// Beyond operator-sdk: fill empty owned-CRD displayName (from the kind) and description
    /// (from the schema), as `operator-sdk generate kustomize manifests` does in Go bases.
    #[arg(long)]
    pub fill_crd_descriptions: bool,
    /// operator-sdk's flag: pin every image of the CSV by digest (containers, init
    /// containers, RELATED_IMAGE_* variables, relatedImages, image references in
    /// annotations), asking each image's registry, and list them all in relatedImages.
    #[arg(long)]
    pub use_image_digests: bool,
    /// Credentials and TLS for --use-image-digests.
    #[command(flatten)]
    pub registry: super::args::RegistryArgs,
    /// Output directory.
    #[arg(long, short = 'o', alias = "output-dir")]
    pub output: Option<PathBuf>,
    /// operator-sdk's flag, accepted so `$(BUNDLE_GEN_FLAGS)` works unchanged: olm always
    /// rewrites the files it owns (and keeps createdAt when nothing else changed).
    #[arg(long, hide = true)]
    pub overwrite: bool,
    /// Do not write; exit 1 and print a diff when the output directory is not what would be
    /// generated (for CI).
    #[arg(long)]
    pub check: bool,
}

impl GenerateArgs {
    /// What the flags set, over the `--config` file.
    fn overrides(self) -> config::Overrides {
        config::Overrides {
            manifests: self.manifests,
            csv_base: self.csv_base,
            package: self.package,
            version: self.version,
            channels: self.channels,
            default_channel: self.default_channel,
            replaces: self.replaces,
            skips: self.skips,
            skip_range: self.skip_range,
            min_kube_version: self.min_kube_version,
            scorecard: self.scorecard,
            scorecard_image: self.scorecard_image,
            extra_service_accounts: self.extra_service_accounts,
            related_images_from_containers: self.related_images_from_containers,
            fill_crd_descriptions: self.fill_crd_descriptions,
            use_image_digests: self.use_image_digests,
            output: self.output,
        }
    }
}

async fn run_generate(args: GenerateArgs) -> ExitCode {
    let mode = if args.check { Mode::Check } else { Mode::Write };
    let registry = match args.registry.options() {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let file = match args.config.as_deref().map(config::LoadedConfig::load) {
        None => None,
        Some(Ok(f)) => Some(f),
        Some(Err(e)) => return usage(e),
    };
    let mut settings = match config::resolve(args.overrides(), file.as_ref()) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let manifests = match settings.manifests.take().as_deref() {
        None => return generate_error(BundleGenerateError::NoManifests),
        Some("-") => {
            let mut text = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut text) {
                return usage(format!("cannot read the manifests from stdin: {e}"));
            }
            Manifests::Stream {
                name: "<stdin>".into(),
                text,
            }
        }
        Some(path) => Manifests::Path(PathBuf::from(path)),
    };
    let out = settings.output.clone();
    let (warnings, outcome) =
        match bundle_generate::run_resolving(settings, &manifests, mode, &registry).await {
            Ok(r) => r,
            Err(e) => return generate_error(e),
        };
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    match outcome {
        Outcome::UpToDate => {
            println!("{} is up to date", out.display());
            ExitCode::SUCCESS
        }
        Outcome::Stale(stale) => {
            for f in &stale {
                print!("{}", f.diff);
            }
            eprintln!(
                "error: {} is stale: {} file(s) differ from what `olm bundle generate` produces ({}); regenerate it and commit the result",
                out.display(),
                stale.len(),
                stale
                    .iter()
                    .map(|f| f.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            ExitCode::FAILURE
        }
        Outcome::Written { changes, report } => {
            eprintln!(
                "{}: {} written, {} removed, {} unchanged",
                out.display(),
                changes.written.len(),
                changes.removed.len(),
                changes.unchanged
            );
            for f in &report.findings {
                eprintln!("{}", render_finding(f));
            }
            if report.passed(false) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn generate_error(e: BundleGenerateError) -> ExitCode {
    if e.is_usage() {
        usage(e)
    } else {
        failure(&anyhow::Error::new(e))
    }
}

/// `olm bundle validate <dir>`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The bundle: a directory, or an image (`oci:<dir>[:tag]` or a registry reference), which
    /// is pulled and unpacked to a temporary directory first.
    pub bundle: String,
    #[command(flatten)]
    pub registry: super::args::RegistryArgs,
    /// Optional suites to run too, comma-separated or repeated: operatorhub, capabilities,
    /// categories, good-practices, deprecated-apis, object, or all; and olmv1 (what OLM v1's
    /// operator-controller refuses) or olmv1-experimental (its experimental feature set).
    #[arg(
        long = "select-optional",
        short = 's',
        visible_alias = "suite",
        value_delimiter = ','
    )]
    pub select_optional: Vec<String>,
    /// Settings of optional suites: `k8s-version=1.25`.
    #[arg(long = "optional-values", value_delimiter = ',')]
    pub optional_values: Vec<String>,
    /// Output format.
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Text)]
    pub output: OutputFormat,
    /// Fail on warnings too.
    #[arg(long)]
    pub strict: bool,
    /// Custom categories for the categories suite: JSON `{"categories":[...]}` or a file
    /// holding it.
    #[arg(long, env = "OPERATOR_BUNDLE_CATEGORIES", hide_env_values = true)]
    pub categories: Option<String>,
}

async fn run_validate(args: ValidateArgs) -> ExitCode {
    let mut opts = Options::default();
    for s in &args.select_optional {
        match Suite::parse(s) {
            Ok(suites) => opts.suites.extend(suites),
            Err(e) => return usage(e),
        }
    }
    for kv in &args.optional_values {
        match kv.split_once('=') {
            Some(("k8s-version", v)) => match semver_range::parse_version_tolerant(v) {
                Ok(ver) => opts.k8s_version = Some(ver),
                Err(_) => {
                    return usage(format!(
                        "invalid value informed via the k8s key option : {v}"
                    ));
                }
            },
            _ => {
                return usage(format!(
                    "unknown --optional-values entry {kv:?}; supported: k8s-version=<version>"
                ));
            }
        }
    }
    if opts.suites.contains(&Suite::Categories)
        && let Some(spec) = &args.categories
    {
        match validate::load_custom_categories(spec) {
            Ok(c) => opts.custom_categories = Some(c),
            Err(e) => return usage(format!("OPERATOR_BUNDLE_CATEGORIES: {e}")),
        }
    }
    let registry = match args.registry.options() {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    // Kept alive until validation is done: an unpacked image lives in it.
    let pulling = bundle_source::names_an_image(&args.bundle)
        .then(|| Spinner::start(format!("Pulling {}", args.bundle)));
    let bundle = match bundle_source::fetch(&args.bundle, &registry).await {
        Ok(b) => b,
        Err(e) if e.is_usage() => return usage(e),
        Err(e) => return failure(&anyhow::Error::new(e)),
    };
    drop(pulling);
    let path = bundle.dir();
    let report =
        match BundleDir::load(path) {
            Ok(b) => validate::validate(&b, &opts),
            // Unreadable files are I/O failures; malformed content is a validation error.
            Err(e @ (LoadError::Yaml(YamlError::Io { .. }) | LoadError::NotADirectory(_))) => {
                return usage(e);
            }
            Err(e) => Report {
                findings: vec![Finding::error("load", "parse", e.to_string()).hint(
                    "fix the file's syntax; nothing else can be checked until the bundle loads",
                )],
            },
        };
    match args.output {
        OutputFormat::Json => match serde_json::to_string_pretty(&report.to_json(args.strict)) {
            Ok(s) => println!("{s}"),
            Err(e) => return usage(e),
        },
        OutputFormat::Text => print_text(Path::new(&args.bundle), &report, args.strict),
    }
    if report.passed(args.strict) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn render_finding(f: &Finding) -> String {
    let mut s = f.to_string();
    if let Some(h) = &f.hint {
        s.push_str(&format!("\n    hint: {h}"));
    }
    s
}

/// Findings grouped by validator, errors first within each group.
fn print_text(path: &Path, report: &Report, strict: bool) {
    let validators: BTreeSet<&str> = report.findings.iter().map(|f| f.validator).collect();
    let order = ["load", "format", "objects", "csv", "crd", "bundle", "size"];
    let mut names: Vec<&str> = order
        .iter()
        .copied()
        .filter(|v| validators.contains(v))
        .collect();
    names.extend(validators.iter().copied().filter(|v| !order.contains(v)));
    for v in names {
        println!("{v}:");
        for level in [Level::Error, Level::Warning] {
            for f in report
                .findings
                .iter()
                .filter(|f| f.validator == v && f.level == level)
            {
                println!("  {}", render_finding(f).replace('\n', "\n  "));
            }
        }
    }
    let errors = report.errors().count();
    let warnings = report.warnings().count();
    if report.passed(strict) {
        println!(
            "{}: all validation tests have completed successfully ({warnings} warning(s))",
            path.display()
        );
    } else if errors == 0 {
        println!(
            "{}: FAILED: {warnings} warning(s) with --strict",
            path.display()
        );
    } else {
        println!(
            "{}: FAILED: {errors} error(s), {warnings} warning(s)",
            path.display()
        );
    }
}
