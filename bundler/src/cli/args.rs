//! Flag groups that several commands share (like cargo's command prelude): each command file
//! imports these, never another command's file.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use kube::Client;
use olm_bundler::deploy::bundle_catalog::CatalogBuild;
use olm_bundler::deploy::flow::FlowOptions;
use olm_bundler::deploy::objects::{Approval, CatalogAddress, InstallMode, parse_go_duration};
use olm_bundler::deploy::olmv1::objects::UpgradePolicy;
use olm_bundler::image::auth::Credentials;
use olm_bundler::image::limits::{self, UnpackLimits};
use olm_bundler::image::model::Artifact;
use olm_bundler::image::reference::ImageRef;
use olm_bundler::image::registry::RegistryOptions;
use olm_bundler::ops::image_output;
use olm_bundler::ops::install::SpecInputs;
use olm_bundler::ops::olmv1::V1Inputs;

/// How to reach registries: shared by every command that talks to one.
#[derive(Debug, Clone, Args)]
pub struct RegistryArgs {
    /// Credentials as USER:PASSWORD (otherwise from the auth files).
    #[arg(
        long,
        value_name = "USER:PASSWORD",
        env = "OLM_REGISTRY_CREDS",
        hide_env_values = true
    )]
    pub creds: Option<String>,
    /// The auth file to use (the only one read; the one `registry login` writes) [default:
    /// $REGISTRY_AUTH_FILE, else podman's auth.json files and docker's config.json].
    #[arg(long, value_name = "FILE")]
    pub authfile: Option<PathBuf>,
    /// Use plain HTTP (loopback registries without TLS get it without asking).
    #[arg(long)]
    pub plain_http: bool,
    /// PEM file of CA certificates to trust for the registry.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// Do not verify the registry's TLS certificate.
    #[arg(long)]
    pub insecure_skip_tls_verify: bool,
    /// Retries on 5xx answers and dropped connections (exponential backoff).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub retries: u32,
    /// Blobs transferred at once (connections per run).
    #[arg(long, default_value_t = olm_bundler::image::registry::DEFAULT_CONCURRENCY, value_name = "N", value_parser = parse_jobs)]
    pub jobs: usize,
}

fn parse_jobs(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=64).contains(&n) => Ok(n),
        _ => Err(format!("{s:?}: expected a number from 1 to 64")),
    }
}

impl RegistryArgs {
    pub fn options(&self) -> anyhow::Result<RegistryOptions> {
        let creds = self.creds.as_deref().map(Credentials::parse).transpose()?;
        Ok(RegistryOptions {
            creds,
            authfile: self.authfile.clone(),
            plain_http: self.plain_http,
            ca_file: self.ca_file.clone(),
            insecure_skip_tls_verify: self.insecure_skip_tls_verify,
            retries: self.retries,
            retry_delay: Duration::from_millis(250),
            concurrency: self.jobs,
            progress: olm_bundler::ops::progress::drawn(),
            unpack: Default::default(),
        })
    }
}

/// Bounds on what one image may unpack to: shared by every command that unpacks an image it
/// reads (an image is someone else's input; a small layer can expand without end).
#[derive(Debug, Clone, Args)]
pub struct UnpackArgs {
    /// The most one image may unpack to, all its layers together (a sparse file counts at its
    /// full size); K, M, G and T are powers of 1024.
    #[arg(long, value_name = "SIZE", default_value = "8G", value_parser = limits::parse_size)]
    pub max_unpack_bytes: u64,
    /// The most entries (files, directories, links) one image may unpack to.
    #[arg(long, value_name = "N", default_value_t = limits::UNPACK_ENTRIES)]
    pub max_unpack_entries: u64,
}

impl RegistryArgs {
    /// [`RegistryArgs::options`] for a command that unpacks what it pulls, within `unpack`.
    pub fn reading(&self, unpack: &UnpackArgs) -> anyhow::Result<RegistryOptions> {
        Ok(RegistryOptions {
            unpack: UnpackLimits {
                bytes: unpack.max_unpack_bytes,
                entries: unpack.max_unpack_entries,
            },
            ..self.options()?
        })
    }
}

/// The flags that decide the OLM objects, shared by `olm install` and `olm deploy generate`.
#[derive(Debug, Clone, Args)]
pub struct SpecArgs {
    /// Namespace of the CatalogSource, OperatorGroup and Subscription [default: the package name].
    #[arg(long, short = 'n')]
    pub namespace: Option<String>,
    /// Channel to follow [default: the package's default channel; with --bundle, the bundle's
    /// default channel, which the built catalog publishes it in].
    #[arg(long)]
    pub channel: Option<String>,
    /// Namespaces the operator watches: own (its namespace), single, multi, all.
    #[arg(long, default_value = "own", value_parser = parse_mode)]
    pub install_mode: InstallMode,
    /// Target namespaces for --install-mode single|multi (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub target_namespaces: Vec<String>,
    /// installPlanApproval of the Subscription: Automatic or Manual.
    #[arg(long, default_value = "Automatic", value_parser = parse_approval)]
    pub approval: Approval,
    /// CSV to start from instead of the channel head (e.g. to upgrade later).
    #[arg(long)]
    pub starting_csv: Option<String>,
    /// Name of the CatalogSource [default: <package>-catalog].
    #[arg(long)]
    pub catalog_name: Option<String>,
    /// Display name of the CatalogSource [default: "<package> catalog"].
    #[arg(long)]
    pub display_name: Option<String>,
    /// Publisher shown for the CatalogSource.
    #[arg(long)]
    pub publisher: Option<String>,
    /// How often OLM polls the catalog image for a new digest (Go duration).
    #[arg(long, default_value = "10m")]
    pub poll_interval: String,
    /// Name of the OperatorGroup to create when the namespace has none [default: <package>-og].
    #[arg(long)]
    pub operator_group_name: Option<String>,
}

fn parse_mode(s: &str) -> Result<InstallMode, String> {
    InstallMode::parse(s).map_err(|e| e.message)
}

fn parse_approval(s: &str) -> Result<Approval, String> {
    Approval::parse(s).map_err(|e| e.message)
}

pub fn parse_address(s: &str) -> Result<CatalogAddress, String> {
    CatalogAddress::parse(s).map_err(|e| e.message)
}

pub fn parse_timeout(s: &str) -> Result<Duration, String> {
    parse_go_duration(s)
}

impl SpecArgs {
    /// The library's inputs, naming `package`.
    pub fn inputs(&self, package: &str) -> SpecInputs {
        SpecInputs {
            package: package.to_string(),
            namespace: self.namespace.clone(),
            channel: self.channel.clone(),
            install_mode: self.install_mode,
            target_namespaces: self.target_namespaces.clone(),
            approval: self.approval,
            starting_csv: self.starting_csv.clone(),
            catalog_name: self.catalog_name.clone(),
            display_name: self.display_name.clone(),
            publisher: self.publisher.clone(),
            poll_interval: self.poll_interval.clone(),
            operator_group_name: self.operator_group_name.clone(),
        }
    }
}

/// OLM v1: the names of a ClusterExtension's objects (with `--olm-v1`).
#[derive(Debug, Clone, Default, Args)]
pub struct V1NameArgs {
    /// OLM v1: name of the ClusterExtension [default: the package name].
    #[arg(long)]
    pub extension_name: Option<String>,
    /// OLM v1: the ServiceAccount operator-controller installs as, in the install namespace
    /// [default: <extension>-installer].
    #[arg(long)]
    pub service_account: Option<String>,
}

/// OLM v1: which bundle the ClusterExtension installs (with `--olm-v1`, and `deploy generate`).
#[derive(Debug, Clone, Default, Args)]
pub struct V1FilterArgs {
    /// OLM v1: version constraint of the ClusterExtension (`1.2.3`, `>=1.0.0, <2.0.0`, `1.2.x`)
    /// [default: the newest the channel offers].
    #[arg(long, value_name = "RANGE")]
    pub version_range: Option<String>,
    /// OLM v1: upgradeConstraintPolicy: CatalogProvided (follow the catalog's upgrade edges) or
    /// SelfCertified (any version the filters allow) [default: CatalogProvided].
    #[arg(long, value_parser = parse_policy)]
    pub upgrade_constraint_policy: Option<UpgradePolicy>,
}

fn parse_policy(s: &str) -> Result<UpgradePolicy, String> {
    UpgradePolicy::parse(s).map_err(|e| e.message)
}

/// The library's OLM v1 inputs from the shared flag groups.
pub fn v1_inputs(
    package: &str,
    names: &V1NameArgs,
    filter: &V1FilterArgs,
    spec: Option<&SpecArgs>,
) -> V1Inputs {
    V1Inputs {
        package: package.to_string(),
        extension_name: names.extension_name.clone(),
        namespace: spec.and_then(|s| s.namespace.clone()),
        service_account: names.service_account.clone(),
        channel: spec.and_then(|s| s.channel.clone()),
        version: filter.version_range.clone(),
        upgrade_policy: filter.upgrade_constraint_policy,
        catalog_name: spec.and_then(|s| s.catalog_name.clone()),
        poll_interval: spec.map(|s| s.poll_interval.clone()),
    }
}

/// Which cluster, and how long to wait.
#[derive(Debug, Clone, Args)]
pub struct ClusterArgs {
    /// Kubeconfig file [default: $KUBECONFIG, then ~/.kube/config, then in-cluster].
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context [default: the current context].
    #[arg(long)]
    pub context: Option<String>,
    /// Give up after this long (Go duration: 90s, 5m, 1h).
    #[arg(long, default_value = "5m", value_parser = parse_timeout)]
    pub timeout: Duration,
    /// How often to poll the cluster while waiting.
    #[arg(long, default_value = "2s", value_parser = parse_timeout, hide = true)]
    pub poll: Duration,
}

impl ClusterArgs {
    pub async fn client(&self) -> anyhow::Result<Client> {
        Ok(olm_bundler::deploy::cluster::client(
            self.kubeconfig.as_deref(),
            self.context.as_deref(),
        )
        .await?)
    }

    pub fn flow_options(&self) -> FlowOptions {
        FlowOptions {
            timeout: self.timeout,
            interval: self.poll.max(Duration::from_millis(100)),
        }
    }
}

/// How `--bundle` publishes the catalog it builds: shared by `olm install` and `olm upgrade`.
#[derive(Debug, Clone, Args)]
pub struct PublishArgs {
    /// Where to push the catalog image built for --bundle; a reference without a tag gets the
    /// CSV name as tag [default: the bundle's repository with `-index` appended, tagged with
    /// the CSV name]. The cluster must be able to pull it.
    #[arg(long, value_name = "REF")]
    pub index_image: Option<String>,
    /// The olm binary the catalog image serves the catalog with (Linux, for the cluster's
    /// architecture) [default: this olm].
    #[arg(long, value_name = "PATH")]
    pub olm_binary: Option<PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
}

impl PublishArgs {
    /// `--index-image`/`--olm-binary` without `--bundle` build nothing: a usage mistake (clap's
    /// `requires` cannot say it, as `--bundle` conflicts with `--catalog`).
    pub fn unused_without_bundle(&self, bundle: Option<&String>) -> Option<ExitCode> {
        let flag = match (&self.index_image, &self.olm_binary) {
            (Some(_), _) => "--index-image",
            (None, Some(_)) => "--olm-binary",
            (None, None) => return None,
        };
        let msg = format!(
            "{flag} applies only with --bundle (it names how the bundle's catalog is built)"
        );
        bundle.is_none().then(|| super::output::usage(msg))
    }

    /// The catalog image build of `olm catalog build` (host CA bundle when present,
    /// SOURCE_DATE_EPOCH) and the registry options of `olm image push`.
    pub fn catalog_build(&self) -> anyhow::Result<CatalogBuild> {
        let mut registry = self.registry.reading(&self.unpack)?;
        // The step spinners already show the push; per-blob bars would fight with them.
        registry.progress = false;
        let olm_binary = match &self.olm_binary {
            Some(p) => p.clone(),
            None => std::env::current_exe().context("finding the running olm binary")?,
        };
        Ok(CatalogBuild::on_this_host(olm_binary, registry)?)
    }
}

/// How a check's report is printed.
#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum OutputFormat {
    #[default]
    Text,
    /// `{"passed":bool,"outputs":[{"type","message",...}]}`
    Json,
}

/// Where a build goes: shared by the three build commands.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Where to put the image: `oci:<dir>[:tag]` (default `oci:oci-layout`), or a registry
    /// reference together with --push.
    #[arg(short = 't', long = "tag", value_name = "REF")]
    pub tag: Option<String>,
    /// Push to the registry named by -t.
    #[arg(long)]
    pub push: bool,
    /// Write the image digest (sha256:...) to this file.
    #[arg(long, value_name = "FILE")]
    pub digestfile: Option<PathBuf>,
}

impl OutputArgs {
    /// The destination, checked before anything is built (a mistake costs no build time).
    pub fn destination(&self) -> Result<ImageRef, String> {
        image_output::destination(self.tag.as_deref(), self.push)
    }

    /// Stores `image` (or an index) at `dest` (and its digest file) and prints its pinned
    /// reference.
    pub async fn deliver(
        &self,
        image: &Artifact,
        dest: &ImageRef,
        opts: &RegistryOptions,
    ) -> anyhow::Result<ExitCode> {
        let file = self.digestfile.as_deref();
        let stored = image_output::deliver(image, dest, file, opts).await?;
        super::output::print(&format!("{}\n", stored.pinned))?;
        Ok(ExitCode::SUCCESS)
    }
}
