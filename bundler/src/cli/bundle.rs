//! `olm bundle generate|validate|build`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use olm_bundler::bundle::generate::config;
use olm_bundler::bundle::image::build_bundle_image;
use olm_bundler::ops::bundle_generate::{self, BundleGenerateError, Mode, manifests_arg};
use olm_bundler::ops::bundle_source;
use olm_bundler::ops::bundle_validate::{self, ValidateRequest};
use olm_bundler::reproducible::source_date_epoch;

use super::args::{OutputArgs, OutputFormat, RegistryArgs, UnpackArgs};
use super::output::{exit, failure, json_text, print, show, usage};
use olm_bundler::ops::progress::Spinner;

/// `olm bundle generate`. Every setting can also come from `--config <file>` (YAML with the
/// same names as the flags, e.g. `csv-base:`, `default-channel:`; paths relative to the
/// config file); flags win over the file.
#[derive(Debug, Args)]
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
    pub registry: RegistryArgs,
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

pub async fn generate(args: GenerateArgs) -> ExitCode {
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
    let manifests = match settings.manifests.take().as_deref().map(manifests_arg) {
        None => return generate_error(BundleGenerateError::NoManifests),
        Some(Ok(m)) => m,
        Some(Err(e)) => return usage(format!("cannot read the manifests from stdin: {e}")),
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
    let (stdout, stderr, failed) = outcome.summary(&out);
    let written = print(&stdout);
    for line in stderr {
        eprintln!("{line}");
    }
    match written {
        Ok(()) => exit(failed),
        Err(e) => failure(e),
    }
}

fn generate_error(e: BundleGenerateError) -> ExitCode {
    if e.is_usage() { usage(e) } else { failure(e) }
}

/// `olm bundle validate <dir>`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The bundle: a directory, or an image (`oci:<dir>[:tag]` or a registry reference), which
    /// is pulled and unpacked to a temporary directory first.
    pub bundle: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
    /// Optional suites to run too, comma-separated or repeated: operatorhub, capabilities,
    /// categories, good-practices, deprecated-apis, object, community, or all; olmv1 and
    /// olmv1-experimental (what OLM v1's operator-controller refuses, by feature set).
    #[arg(
        long = "select-optional",
        short = 's',
        visible_alias = "suite",
        value_delimiter = ','
    )]
    pub select_optional: Vec<String>,
    /// Settings of optional suites: `k8s-version=1.25`, `index-path=bundle.Dockerfile`.
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

pub async fn validate(args: ValidateArgs) -> ExitCode {
    let registry = match args.registry.reading(&args.unpack) {
        Ok(o) => o,
        Err(e) => return usage(e),
    };
    let req = ValidateRequest {
        bundle: args.bundle.clone(),
        suites: args.select_optional,
        optional_values: args.optional_values,
        categories: args.categories,
        registry,
    };
    let pulling = bundle_source::names_an_image(&args.bundle)
        .then(|| Spinner::start(format!("Pulling {}", args.bundle)));
    let report = match bundle_validate::validate(&req).await {
        Ok(r) => r,
        Err(e) if e.is_usage() => return usage(e),
        Err(e) => return failure(e),
    };
    drop(pulling);
    let text = match args.output {
        OutputFormat::Json => json_text(&report.to_json(args.strict)),
        OutputFormat::Text => report.to_text(Path::new(&args.bundle), args.strict),
    };
    show(&text, !report.passed(args.strict))
}

/// `olm bundle build <bundle dir> -t <ref>`.
#[derive(Debug, Args)]
pub struct BundleBuildArgs {
    /// The bundle directory (holding manifests/ and metadata/).
    pub bundle_dir: PathBuf,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

pub async fn build(args: BundleBuildArgs) -> anyhow::Result<ExitCode> {
    let dest = match args.output.destination() {
        Ok(d) => d,
        Err(msg) => return Ok(usage(msg)),
    };
    let opts = args.registry.options()?;
    let image = build_bundle_image(&args.bundle_dir, source_date_epoch()?)?;
    args.output.deliver(&image.into(), &dest, &opts).await
}
