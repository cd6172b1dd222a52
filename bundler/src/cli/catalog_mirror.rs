//! `olm catalog mirror`: a filtered catalog and every image it needs, into another registry
//! or onto a disk and from there into a registry.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use olm_bundler::ops::image_trust;
use olm_bundler::ops::mirror::node_config::{NodeConfig, NodeOptions};
use olm_bundler::ops::mirror::plan::Destination;
use olm_bundler::ops::mirror::signatures::SignaturePolicy;
use olm_bundler::ops::mirror::{self, MirrorError, MirrorFrom, MirrorRequest, MirrorTo};

use super::args::{RegistryArgs, UnpackArgs};
use super::catalog_args::FilterArgs;
use super::output::{exit, failure, usage};

#[derive(Debug, Args)]
pub struct MirrorArgs {
    /// The catalog: a directory, or an image (`oci:<dir>[:tag]`, a registry reference). With
    /// --config and no SOURCE, every catalog the file lists.
    #[arg(required_unless_present_any = ["from_archive", "config"])]
    pub source: Option<String>,
    /// Mirror into this registry, under this repository prefix (`host[:port][/prefix]`).
    #[arg(
        long,
        value_name = "REGISTRY[/PREFIX]",
        required_unless_present = "to_archive"
    )]
    pub to: Option<String>,
    /// Mirror onto disk instead: a directory to carry to the inside network. What applies at
    /// the registry (signing, node configurations) goes to the --from-archive run.
    #[arg(long, value_name = "DIR", conflicts_with_all = [
        "to", "from_archive", "rewrite_references", "sign_key", "mirror_config", "node_ca",
        "node_skip_verify",
    ])]
    pub to_archive: Option<PathBuf>,
    /// Mirror what a --to-archive run stored into --to (the source registry is not needed).
    #[arg(long, value_name = "DIR", conflicts_with = "source")]
    pub from_archive: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Leave out images matching this regular expression (repeatable; as blockedImages).
    #[arg(long = "exclude", value_name = "PATTERN")]
    pub excludes: Vec<String>,
    /// Make the mirrored catalog name the mirrored images (clusters without
    /// ImageDigestMirrorSet support: plain Kubernetes, OLM v1 anywhere).
    #[arg(long)]
    pub rewrite_references: bool,
    /// Where idms.yaml, itms.yaml, catalogsource.yaml, clustercatalog.yaml, mapping.txt and
    /// the node mirror configurations go.
    #[arg(long, default_value = "olm-mirror", value_name = "DIR")]
    pub output: PathBuf,
    /// Node mirror configurations to write beside idms.yaml: containerd (certs.d/*/hosts.toml),
    /// crio (registries.conf, also podman's), k3s (registries.yaml, also RKE2's), all, none.
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub mirror_config: String,
    /// The mirror's CA certificate as a path on the nodes (node mirror configurations).
    #[arg(long, value_name = "PATH")]
    pub node_ca: Option<String>,
    /// Nodes skip verifying the mirror's TLS certificate (node mirror configurations).
    #[arg(long)]
    pub node_skip_verify: bool,
    /// Do not tag images copied by digest (untagged, a registry's garbage collection of
    /// untagged manifests deletes them).
    #[arg(long)]
    pub no_digest_tags: bool,
    /// Delete from the mirror what an earlier run of this configuration copied and this one
    /// no longer needs (from the record the mirror keeps; nothing else is touched).
    #[arg(long)]
    pub prune: bool,
    /// Print the plan and change nothing: each image and where it would go, the catalog
    /// image's destination, and with --prune what would be deleted.
    #[arg(long)]
    pub dry_run: bool,
    /// Push the catalog even when images could not be copied (listed; exit code 1).
    #[arg(long)]
    pub continue_on_error: bool,
    /// The mirrored catalog image's repository path [default: the source's].
    #[arg(long, value_name = "PATH")]
    pub target_catalog: Option<String>,
    /// The mirrored catalog image's tag [default: the source's, or latest].
    #[arg(long, value_name = "TAG")]
    pub target_tag: Option<String>,
    /// Name of the CatalogSource, ClusterCatalog and mirror sets [default: from the catalog].
    #[arg(long, value_name = "NAME")]
    pub catalog_name: Option<String>,
    /// Namespace of the CatalogSource.
    #[arg(long, default_value = "openshift-marketplace", value_name = "NS")]
    pub catalog_namespace: String,
    /// The olm binary the mirrored catalog image serves with [default: this olm]; repeat
    /// with other architectures' builds for a multi-platform catalog image.
    #[arg(long, value_name = "PATH")]
    pub olm_binary: Vec<PathBuf>,
    /// Leave the images' signatures and attestations (cosign's sha256-<hex>.sig, .att, .sbom)
    /// behind; by default they are copied with the images.
    #[arg(long, conflicts_with = "verify_key")]
    pub remove_signatures: bool,
    /// Copy nothing of a catalog unless every image of it has a signature that verifies with
    /// this public key (cosign.pub).
    #[arg(long, value_name = "FILE")]
    pub verify_key: Option<PathBuf>,
    /// Sign the images the mirror makes (the filtered catalog image and, with
    /// --rewrite-references, the rebuilt bundle images) with this cosign key; the password
    /// comes from COSIGN_PASSWORD or a prompt.
    #[arg(long, value_name = "FILE")]
    pub sign_key: Option<PathBuf>,
    #[command(flatten)]
    pub registry: RegistryArgs,
    #[command(flatten)]
    pub unpack: UnpackArgs,
}

pub async fn mirror_cmd(a: MirrorArgs) -> anyhow::Result<ExitCode> {
    let to = match (&a.to, &a.to_archive) {
        (_, Some(dir)) => MirrorTo::Archive(dir.clone()),
        (Some(t), None) => match Destination::parse(t) {
            Ok(d) => MirrorTo::Registry(d),
            Err(e) => return Ok(usage(format!("--to {e}"))),
        },
        (None, None) => return Ok(usage("--to REGISTRY[/PREFIX] or --to-archive DIR")),
    };
    let from = match &a.from_archive {
        Some(dir) => MirrorFrom::Archive(dir.clone()),
        None => match a.filter.selection() {
            Ok(selection) => MirrorFrom::Catalog {
                source: a.source.clone(),
                selection,
            },
            Err(e) => return Ok(usage(e)),
        },
    };
    let kinds = match NodeConfig::parse_list(&a.mirror_config) {
        Ok(k) => k,
        Err(e) => return Ok(usage(format!("--mirror-config {e}"))),
    };
    let olm_binaries = match a.olm_binary.is_empty() {
        false => a.olm_binary.clone(),
        true => vec![std::env::current_exe()?],
    };
    let req = MirrorRequest {
        from,
        to,
        excludes: a.excludes,
        rewrite_references: a.rewrite_references,
        output: a.output,
        node: NodeOptions {
            kinds,
            ca: a.node_ca,
            skip_verify: a.node_skip_verify,
        },
        digest_tags: !a.no_digest_tags,
        prune: a.prune,
        dry_run: a.dry_run,
        continue_on_error: a.continue_on_error,
        target_catalog: a.target_catalog,
        target_tag: a.target_tag,
        catalog_name: a.catalog_name,
        catalog_namespace: a.catalog_namespace,
        olm_binaries,
        registry: a.registry.reading(&a.unpack)?,
        signatures: SignaturePolicy {
            remove: a.remove_signatures,
            verify_key: match &a.verify_key {
                Some(path) => Some(image_trust::load_public_key(path)?),
                None => None,
            },
            sign_key: match &a.sign_key {
                Some(path) => Some(std::sync::Arc::new(image_trust::load_private_key(path)?)),
                None => None,
            },
        },
    };
    match mirror::mirror(&req).await {
        Ok(report) => {
            eprint!("{}", report.text());
            Ok(exit(report.failed()))
        }
        Err(MirrorError::Usage(msg)) => Ok(usage(msg)),
        Err(e) => Ok(failure(e)),
    }
}
