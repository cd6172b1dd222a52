//! `olm catalog mirror`: a catalog, filtered to what a cluster needs, copied with every image
//! it references into another registry (or onto a disk and from there into a registry), for
//! clusters that cannot reach the original registries.
//!
//! One run: read the catalog (a directory or an image), keep what the selection names
//! ([`crate::catalog::filter`], oc-mirror v2's semantics), list the images its bundles need
//! (each bundle image and its related images), leave out the blocked ones, copy the rest
//! through the one copy engine (digests and indexes kept, blobs the destination has never
//! sent again), rebuild the catalog as a catalog image at the destination, and write what the
//! cluster needs to use the mirror ([`outputs`]). Images go to `<to>/<original repository
//! path>`, by digest or by tag as the catalog references them ([`plan`]).
//!
//! An image that cannot be copied does not stop the others; the run then fails before the
//! catalog image is pushed (or, with `continue_on_error`, after, listing them). A re-run copies
//! only what is missing.

pub mod archive;
pub mod node_config;
pub mod outputs;
pub mod plan;
pub mod prune;
pub mod rewrite;
pub mod signatures;
pub mod tags;

use std::path::{Path, PathBuf};

use futures::StreamExt as _;

use crate::catalog::declcfg::DeclarativeConfig;
use crate::catalog::filter::isc::BlockedImages;
use crate::catalog::filter::{FilterError, FilterSpec};
use crate::catalog::images;
use crate::catalog::write_fs::{self, Format, WriteFsError};
use crate::image::copy::{CopyError, Endpoint, Engine, Source};
use crate::image::layout::Layout;
use crate::image::reference::Reference;
use crate::image::registry::RegistryOptions;
use crate::image::{human_bytes, rootfs};
use crate::ops::catalog_filter::{self, CatalogFilterError, Selection};
use crate::scratch::ScratchDir;
use crate::serve::image::CatalogImage;
use archive::{ArchiveError, ArchivedCatalog, ArchivedImage, Manifest};
use outputs::{MirroredCatalog, OutputError};
use plan::{Destination, Left, Planned};

/// Where a mirror reads from.
#[derive(Debug, Clone)]
pub enum MirrorFrom {
    /// A catalog (directory or image) and what to keep of it. With an ImageSetConfiguration
    /// and no source, every catalog the file lists.
    Catalog {
        source: Option<String>,
        selection: Selection,
    },
    /// An archive an earlier `--to-archive` run wrote: no source registry is contacted.
    Archive(PathBuf),
}

/// Where a mirror writes to.
#[derive(Debug, Clone)]
pub enum MirrorTo {
    Registry(Destination),
    Archive(PathBuf),
}

#[derive(Debug, Clone)]
pub struct MirrorRequest {
    pub from: MirrorFrom,
    pub to: MirrorTo,
    /// Images to leave out (regular expressions, as oc-mirror's `blockedImages`).
    pub excludes: Vec<String>,
    /// The mirrored catalog names the mirrored images (for clusters without registry mirror
    /// configuration).
    pub rewrite_references: bool,
    /// Where the cluster files go.
    pub output: PathBuf,
    /// The node mirror configurations written beside the mirror sets ([`node_config`]).
    pub node: node_config::NodeOptions,
    /// Images copied by digest also get tags in the mirror ([`tags`]).
    pub digest_tags: bool,
    /// Delete what an earlier run of the same configuration mirrored and this one does not
    /// need ([`prune`]); with `dry_run`, only say what.
    pub prune: bool,
    pub dry_run: bool,
    pub continue_on_error: bool,
    /// The mirrored catalog image's repository path and tag, instead of the source's.
    pub target_catalog: Option<String>,
    pub target_tag: Option<String>,
    /// The name of the CatalogSource, ClusterCatalog and mirror sets.
    pub catalog_name: Option<String>,
    pub catalog_namespace: String,
    /// The `olm` binaries the rebuilt catalog image serves with (one per platform).
    pub olm_binaries: Vec<PathBuf>,
    pub registry: RegistryOptions,
    /// Signatures: carried along (the default), left out, or required.
    pub signatures: signatures::SignaturePolicy,
}

#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// The request does not fit together (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Read(#[from] CatalogFilterError),
    #[error("{catalog}: {error}")]
    Filter { catalog: String, error: FilterError },
    #[error(transparent)]
    Archive(#[from] ArchiveError),
    #[error(transparent)]
    Write(#[from] WriteFsError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Rewrite(#[from] rewrite::RewriteError),
    #[error(transparent)]
    Prune(#[from] prune::PruneError),
    #[error(transparent)]
    Sign(#[from] signatures::SignMadeError),
    #[error("building the mirrored catalog image of {catalog}: {error}")]
    Build {
        catalog: String,
        error: Box<rootfs::BuildError>,
    },
    #[error("pushing the mirrored catalog image to {dest}: {error}")]
    PushCatalog { dest: String, error: Box<CopyError> },
    #[error(
        "{} image(s) could not be copied (the others were; a re-run copies only what is missing; --continue-on-error writes the catalog without them):\n{}",
        failures.len(),
        failures.iter().map(Failure::line).collect::<Vec<_>>().join("\n")
    )]
    Incomplete { failures: Vec<Failure> },
    #[error(
        "{} image(s) do not verify with --verify-key; nothing of the catalog was copied:\n{}",
        failures.len(),
        failures.iter().map(Failure::line).collect::<Vec<_>>().join("\n")
    )]
    Unverified { failures: Vec<Failure> },
    #[error("{0}")]
    Io(String),
}

/// An image that could not be copied.
#[derive(Debug, Clone)]
pub struct Failure {
    pub image: String,
    pub used_by: Vec<String>,
    pub reason: String,
}

impl Failure {
    fn line(&self) -> String {
        format!(
            "  {} (used by {}): {}",
            self.image,
            self.used_by.join(", "),
            self.reason
        )
    }
}

/// What one catalog's mirror did.
#[derive(Debug, Clone, Default)]
pub struct CatalogReport {
    pub source: String,
    /// The mirrored catalog image, pinned (none for an archive).
    pub catalog_image: Option<String>,
    pub packages: usize,
    pub bundles: usize,
    /// Images copied now / already complete at the destination.
    pub images_copied: usize,
    pub images_present: usize,
    pub left_out: Vec<Left>,
    pub failures: Vec<Failure>,
    pub outputs: Vec<PathBuf>,
    /// Bundle images rebuilt with references rewritten (`--rewrite-references`).
    pub rebuilt: Vec<rewrite::Rebuilt>,
    /// Signature tags written for images the mirror made (`--sign-key`).
    pub signed: Vec<String>,
    /// `--dry-run`: each image and where it would go (`SOURCE -> DESTINATION`).
    pub would_mirror: Vec<String>,
    /// A `--dry-run` plan: nothing was copied.
    pub dry_run: bool,
}

/// What the whole run did.
#[derive(Debug, Clone, Default)]
pub struct MirrorReport {
    pub catalogs: Vec<CatalogReport>,
    pub blobs_uploaded: usize,
    pub bytes_uploaded: u64,
    pub blobs_mounted: usize,
    pub blobs_present: usize,
    /// What `--prune` deleted (or would), once for the whole run.
    pub pruned: prune::Pruned,
    /// The node mirror configurations, written once for the run at the top of the output
    /// (a node has one file per registry, whatever the catalogs).
    pub node_outputs: Vec<PathBuf>,
}

impl MirrorReport {
    /// Whether an image failed (with `continue_on_error`): the run exits 1.
    pub fn failed(&self) -> bool {
        self.catalogs.iter().any(|c| !c.failures.is_empty())
    }

    /// The summary printed at the end.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for c in &self.catalogs {
            if c.dry_run {
                out.push_str(&format!(
                    "{}: {} package(s), {} bundle(s), {} image(s) to mirror (--dry-run: nothing copied, pushed, written or deleted)",
                    c.source,
                    c.packages,
                    c.bundles,
                    c.would_mirror.len()
                ));
            } else {
                out.push_str(&format!(
                    "{}: {} package(s), {} bundle(s), {} image(s): {} copied, {} already there",
                    c.source,
                    c.packages,
                    c.bundles,
                    c.images_copied + c.images_present + c.failures.len(),
                    c.images_copied,
                    c.images_present
                ));
            }
            if let Some(img) = &c.catalog_image {
                out.push_str(&format!("\n  catalog image: {img}"));
            }
            for l in &c.left_out {
                out.push_str(&format!(
                    "\n  left out: {} (used by {}): {}",
                    l.image,
                    l.used_by.join(", "),
                    l.why
                ));
            }
            for f in &c.failures {
                out.push_str(&format!(
                    "\n  not copied: {} (used by {}): {}",
                    f.image,
                    f.used_by.join(", "),
                    f.reason
                ));
            }
            for w in &c.would_mirror {
                out.push_str(&format!("\n  would mirror: {w}"));
            }
            for r in &c.rebuilt {
                out.push_str(&format!(
                    "\n  rewritten bundle {}: {} (was {})",
                    r.bundle, r.pinned, r.original
                ));
            }
            if !c.signed.is_empty() {
                out.push_str(&format!(
                    "\n  signed with --sign-key: {} signature(s) ({})",
                    c.signed.len(),
                    c.signed.join(", ")
                ));
            }
            for o in &c.outputs {
                out.push_str(&format!("\n  wrote {}", o.display()));
            }
            out.push('\n');
        }
        for o in &self.node_outputs {
            out.push_str(&format!("wrote {}\n", o.display()));
        }
        let verb = if self.pruned.dry_run {
            "would prune"
        } else {
            "pruned"
        };
        for i in &self.pruned.images {
            out.push_str(&format!("{verb}: {i}\n"));
        }
        if self.blobs_uploaded == 0 {
            out.push_str(&format!(
                "0 blobs transferred: the destination had everything ({} blob(s) present, {} mounted)\n",
                self.blobs_present, self.blobs_mounted
            ));
        } else {
            out.push_str(&format!(
                "{} blob(s) transferred ({}), {} mounted from another repository, {} already present\n",
                self.blobs_uploaded,
                human_bytes(self.bytes_uploaded),
                self.blobs_mounted,
                self.blobs_present
            ));
        }
        out
    }
}

/// The images left out on purpose: `--exclude` and the configuration's `blockedImages`.
struct Blocked(Vec<BlockedImages>);

impl Blocked {
    /// The pattern that blocks an image, tested on its source and its destination as
    /// oc-mirror tests them.
    fn pattern(&self, source: &str, dest: &str) -> Option<String> {
        self.0
            .iter()
            .find_map(|b| b.blocking(source).or_else(|| b.blocking(dest)))
            .map(str::to_string)
    }
}

/// One catalog to mirror.
struct Job {
    source: String,
    spec: FilterSpec,
    target_catalog: Option<String>,
    target_tag: Option<String>,
}

fn usage(msg: impl Into<String>) -> MirrorError {
    MirrorError::Usage(msg.into())
}

/// Runs the mirror `req` describes.
pub async fn mirror(req: &MirrorRequest) -> Result<MirrorReport, MirrorError> {
    if let (MirrorFrom::Archive(_), MirrorTo::Archive(_)) = (&req.from, &req.to) {
        return Err(usage(
            "--from-archive goes to a registry: pass --to REGISTRY[/PREFIX]",
        ));
    }
    if (req.prune || req.dry_run) && matches!(req.to, MirrorTo::Archive(_)) {
        return Err(usage(
            "--prune and --dry-run apply to a registry: pass them to the --from-archive run",
        ));
    }
    if req.rewrite_references && matches!(req.to, MirrorTo::Archive(_)) {
        return Err(usage(
            "--rewrite-references applies when the images reach their registry: pass it to the --from-archive run",
        ));
    }
    let mut blocked = Blocked(vec![
        BlockedImages::new(&req.excludes).map_err(|e| usage(format!("--exclude: {e}")))?,
    ]);
    let jobs = match &req.from {
        MirrorFrom::Catalog { source, selection } => {
            jobs(source.as_deref(), selection, &mut blocked)?
        }
        MirrorFrom::Archive(_) => Vec::new(),
    };
    // What an archive holds, read once (a --from-archive run mirrors each of its catalogs),
    // after the archive is checked: no link in it, and every path its manifest names inside it.
    let archived = match &req.from {
        MirrorFrom::Archive(dir) => {
            archive::open_checked(dir)?;
            Some(Manifest::open(dir)?)
        }
        MirrorFrom::Catalog { .. } => None,
    };
    // An archive written to is checked the same way before anything is copied into it.
    // host: the archive directory the user named
    if let MirrorTo::Archive(dir) = &req.to
        && dir.exists()
    {
        archive::open_checked(dir)?;
        Manifest::read(dir)?;
    }
    let several = jobs.len() > 1 || archived.as_ref().is_some_and(|m| m.catalogs.len() > 1);
    if several
        && (req.target_catalog.is_some() || req.target_tag.is_some() || req.catalog_name.is_some())
    {
        return Err(usage(
            "--target-catalog, --target-tag and --catalog-name name one catalog; the configuration lists several (use its targetCatalog and targetTag)",
        ));
    }
    let engine = Engine::new(&req.registry);
    let mut report = MirrorReport::default();
    let mut uses = Vec::new();
    let mut planned_all: Vec<Vec<Planned>> = Vec::new();
    let result = async {
        match &req.from {
            MirrorFrom::Catalog { .. } => {
                for job in &jobs {
                    let c = match &req.to {
                        MirrorTo::Registry(to) => {
                            let (c, used, planned) = catalog_to_registry(
                                req,
                                &engine,
                                job,
                                to,
                                &blocked,
                                several,
                                &mut report,
                            )
                            .await?;
                            uses.push(used);
                            planned_all.push(planned);
                            c
                        }
                        MirrorTo::Archive(dir) => {
                            catalog_to_archive(req, &engine, job, dir, &blocked, &mut report)
                                .await?
                        }
                    };
                    report.catalogs.push(c);
                }
            }
            MirrorFrom::Archive(dir) => {
                let MirrorTo::Registry(to) = &req.to else {
                    unreachable!("checked above")
                };
                for entry in archived.iter().flat_map(|m| &m.catalogs) {
                    let (c, used, planned) = archive_to_registry(
                        req,
                        &engine,
                        dir,
                        entry,
                        to,
                        &blocked,
                        several,
                        &mut report,
                    )
                    .await?;
                    uses.push(used);
                    planned_all.push(planned);
                    report.catalogs.push(c);
                }
            }
        }
        if let MirrorTo::Registry(to) = &req.to {
            if !req.dry_run {
                let everything: Vec<Planned> = planned_all.concat();
                let plain_http = engine
                    .client(to.registry())
                    .await
                    .is_ok_and(|c| c.plain_http());
                let node_files = node_config::files(&everything, plain_http, &req.node)?;
                report.node_outputs = outputs::write(&req.output, &node_files)?;
            }
            report.pruned = record_and_prune(req, &engine, to, &uses).await?;
        }
        Ok::<_, MirrorError>(())
    }
    .await;
    engine.finish();
    result?;
    Ok(report)
}

/// After every catalog of the run: with `--prune`, deletes what the records list and nothing
/// of the run or another record uses (or, with `--dry-run`, says what); then the records.
async fn record_and_prune(
    req: &MirrorRequest,
    engine: &Engine,
    to: &Destination,
    uses: &[prune::CatalogUse],
) -> Result<prune::Pruned, MirrorError> {
    if req.dry_run && !req.prune {
        return Ok(prune::Pruned {
            dry_run: true,
            ..Default::default()
        });
    }
    let plan = prune::plan(engine, to, uses, req.prune).await?;
    if req.dry_run {
        return Ok(prune::Pruned {
            images: plan.images(),
            dry_run: true,
        });
    }
    let images = if req.prune {
        prune::apply(engine, &plan).await?
    } else {
        Vec::new()
    };
    let created =
        crate::reproducible::source_date_epoch().map_err(|e| MirrorError::Io(e.to_string()))?;
    prune::write_records(engine, to, &plan, uses, created).await?;
    Ok(prune::Pruned {
        images,
        dry_run: false,
    })
}

/// The catalogs to mirror and the images the configuration blocks.
fn jobs(
    source: Option<&str>,
    selection: &Selection,
    blocked: &mut Blocked,
) -> Result<Vec<Job>, MirrorError> {
    match (selection, source) {
        (Selection::Spec(spec), Some(s)) => Ok(vec![Job {
            source: s.to_string(),
            spec: spec.clone(),
            target_catalog: None,
            target_tag: None,
        }]),
        (Selection::Spec(_), None) => Err(usage(
            "name the catalog to mirror (a directory or an image), or pass --config with an ImageSetConfiguration",
        )),
        (Selection::Config { file, strict }, source) => {
            let isc = catalog_filter::load_config(file, "olm catalog mirror")?;
            blocked.0.push(isc.blocked_images.clone());
            let entries = catalog_filter::entries(&isc, file, source, *strict)?;
            Ok(entries
                .into_iter()
                .map(|e| Job {
                    // A source named on the command line reads the catalog from there (a
                    // local copy of the entry's image, say); else the entry's own catalog.
                    source: source
                        .map(str::to_string)
                        .unwrap_or_else(|| oci_form(&e.catalog)),
                    spec: e.spec,
                    target_catalog: e.target_catalog,
                    target_tag: e.target_tag,
                })
                .collect())
        }
    }
}

/// oc-mirror writes layouts as `oci:///path` and registry images as `docker://ref`.
fn oci_form(catalog: &str) -> String {
    if let Some(path) = catalog.strip_prefix("oci://") {
        format!("oci:{path}")
    } else {
        catalog
            .strip_prefix("docker://")
            .unwrap_or(catalog)
            .to_string()
    }
}

/// The filtered catalog of a job.
async fn selected(job: &Job, opts: &RegistryOptions) -> Result<DeclarativeConfig, MirrorError> {
    let cfg = catalog_filter::read_catalog(&job.source, opts, Some(&job.spec)).await?;
    catalog_filter::filter_warning(cfg, &job.spec, &job.source).map_err(|error| {
        MirrorError::Filter {
            catalog: job.source.clone(),
            error,
        }
    })
}

/// The mirrored catalog image's repository path and tag: the configuration's or the flags',
/// else the source image's (a directory's name, `latest`).
fn catalog_target(
    req: &MirrorRequest,
    source: &str,
    target_catalog: Option<&str>,
    target_tag: Option<&str>,
) -> (String, String) {
    let from_image = crate::ops::catalog_source::is_image_ref(source)
        .then(|| source.parse::<Reference>().ok())
        .flatten();
    let repository = req
        .target_catalog
        .as_deref()
        .or(target_catalog)
        .map(|r| r.trim_matches('/').to_string())
        .or_else(|| from_image.as_ref().map(|r| r.repository().to_string()))
        .unwrap_or_else(|| {
            let base = Path::new(source.trim_start_matches("oci:"))
                .file_name()
                .map(|n| n.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default();
            let clean: String = base
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
                .collect();
            match clean.trim_matches('-') {
                "" => "catalog".to_string(),
                c => c.to_string(),
            }
        });
    let tag = req
        .target_tag
        .as_deref()
        .or(target_tag)
        .map(str::to_string)
        .or_else(|| {
            from_image
                .as_ref()
                .and_then(|r| r.tag().map(str::to_string))
        })
        .unwrap_or_else(|| "latest".into());
    (repository, tag)
}

/// What one image copy came to.
enum Copied {
    Done { present: bool },
    Failed(Failure),
}

/// What the copies of a catalog came to: counts, failures, and what each copy learned of
/// its image (`written -> (digest, media type)`) for the steps after it.
#[derive(Default)]
struct Copies {
    copied: usize,
    present: usize,
    failures: Vec<Failure>,
    learned: std::collections::HashMap<String, (String, String)>,
}

/// Copies every (source, destination) pair through the engine, a few images at a time,
/// counting blobs into `report`.
async fn copy_all(
    engine: &Engine,
    pairs: &[(Endpoint, Endpoint, &Planned)],
    report: &mut MirrorReport,
) -> Copies {
    let at_once = engine.options().concurrency.max(1);
    engine.expect_images(pairs.len() as u64);
    let results: Vec<(Result<crate::image::copy::Copied, CopyError>, &Planned)> =
        futures::stream::iter(pairs.iter())
            .map(|(from, to, p)| async move {
                (engine.copy(Source::Endpoint(from), to, None).await, *p)
            })
            .buffer_unordered(at_once)
            .collect()
            .await;
    let mut out = Copies::default();
    for (result, p) in results {
        let outcome = match result {
            Ok(c) => {
                out.learned
                    .insert(p.written.clone(), (c.digest.clone(), c.media_type.clone()));
                report.blobs_uploaded += c.uploaded.len();
                report.bytes_uploaded += c.uploaded_bytes();
                report.blobs_mounted += c.mounted.len();
                report.blobs_present += c.present.len();
                Copied::Done {
                    present: c.uploaded.is_empty() && c.mounted.is_empty() && !c.manifest_written,
                }
            }
            Err(e) => Copied::Failed(Failure {
                image: p.written.clone(),
                used_by: p.used_by.clone(),
                reason: e.to_string(),
            }),
        };
        match outcome {
            Copied::Done { present: true } => out.present += 1,
            Copied::Done { present: false } => out.copied += 1,
            Copied::Failed(f) => out.failures.push(f),
        }
    }
    out.failures.sort_by(|a, b| a.image.cmp(&b.image));
    out
}

/// [`copy_all`] with the signature policy: every image verified first (when asked), and the
/// signatures of the copied ones copied after them.
async fn copy_trusted(
    req: &MirrorRequest,
    engine: &Engine,
    pairs: &[(Endpoint, Endpoint, &Planned)],
    report: &mut MirrorReport,
) -> Result<Copies, MirrorError> {
    let mut verified = signatures::verify_all(engine, &req.signatures, pairs).await;
    if !verified.failures.is_empty() {
        verified.failures.sort_by(|a, b| a.image.cmp(&b.image));
        return Err(MirrorError::Unverified {
            failures: verified.failures,
        });
    }
    // What was verified is what is copied: a source named by tag is read at the verified
    // digest, so a tag moved since cannot slip an unverified image in.
    let pinned: Vec<(Endpoint, Endpoint, &Planned)> = pairs
        .iter()
        .map(|(from, to, p)| {
            let from = match (from, verified.digests.get(&p.written)) {
                (Endpoint::Registry(r), Some(d)) => Endpoint::Registry(Reference::with_digest(
                    r.registry().to_string(),
                    r.repository().to_string(),
                    d.clone(),
                )),
                _ => from.clone(),
            };
            (from, to.clone(), *p)
        })
        .collect();
    let mut copies = copy_all(engine, &pinned, report).await;
    let unsigned = signatures::copy_attachments(
        engine,
        &req.signatures,
        &pinned,
        &copies.failures,
        &copies.learned,
    )
    .await;
    copies.failures.extend(unsigned);
    copies.failures.sort_by(|a, b| a.image.cmp(&b.image));
    Ok(copies)
}

#[allow(clippy::too_many_arguments)]
async fn catalog_to_registry(
    req: &MirrorRequest,
    engine: &Engine,
    job: &Job,
    to: &Destination,
    blocked: &Blocked,
    several: bool,
    report: &mut MirrorReport,
) -> Result<(CatalogReport, prune::CatalogUse, Vec<Planned>), MirrorError> {
    let cfg = selected(job, &req.registry).await?;
    let (planned, left) = plan::plan(images::referenced(&cfg), Some(to), |s, d| {
        blocked.pattern(s, d)
    });
    let pairs = planned
        .iter()
        .map(|p| {
            (
                Endpoint::Registry(p.source.clone()),
                Endpoint::Registry(p.dest.clone()),
                p,
            )
        })
        .collect();
    let (target_repo, target_tag) = catalog_target(
        req,
        &job.source,
        job.target_catalog.as_deref(),
        job.target_tag.as_deref(),
    );
    finish_at_registry(
        req,
        engine,
        &job.source,
        cfg,
        &planned,
        left,
        pairs,
        to,
        target_repo,
        target_tag,
        several,
        report,
    )
    .await
}

#[allow(clippy::too_many_arguments)]
async fn archive_to_registry(
    req: &MirrorRequest,
    engine: &Engine,
    dir: &Path,
    entry: &ArchivedCatalog,
    to: &Destination,
    blocked: &Blocked,
    several: bool,
    report: &mut MirrorReport,
) -> Result<(CatalogReport, prune::CatalogUse, Vec<Planned>), MirrorError> {
    let tree = archive::open_checked(dir)?.subtree(&entry.catalog_dir);
    let cfg = crate::catalog::load::load_tree(&tree).map_err(CatalogFilterError::from)?;
    let uses = entry
        .images
        .iter()
        .map(|i| images::ImageUse {
            image: i.reference.clone(),
            used_by: i.used_by.clone(),
        })
        .collect();
    let (planned, left) = plan::plan(uses, Some(to), |s, d| blocked.pattern(s, d));
    let layout = Layout::new(dir.join(archive::IMAGES));
    let pairs = planned
        .iter()
        .map(|p| {
            (
                Endpoint::Layout {
                    layout: layout.clone(),
                    tag: Some(p.written.clone()),
                },
                Endpoint::Registry(p.dest.clone()),
                p,
            )
        })
        .collect();
    let (repo, tag) = (entry.target_repository.clone(), entry.target_tag.clone());
    let (repo, tag) = (
        req.target_catalog.clone().unwrap_or(repo),
        req.target_tag.clone().unwrap_or(tag),
    );
    finish_at_registry(
        req,
        engine,
        &entry.source,
        cfg,
        &planned,
        left,
        pairs,
        to,
        repo,
        tag,
        several,
        report,
    )
    .await
}

/// Copies the images, then (unless some failed) the rebuilt catalog image, then writes the
/// cluster files.
#[allow(clippy::too_many_arguments)]
async fn finish_at_registry(
    req: &MirrorRequest,
    engine: &Engine,
    source: &str,
    mut cfg: DeclarativeConfig,
    planned: &[Planned],
    left: Vec<Left>,
    pairs: Vec<(Endpoint, Endpoint, &Planned)>,
    to: &Destination,
    target_repo: String,
    target_tag: String,
    several: bool,
    report: &mut MirrorReport,
) -> Result<(CatalogReport, prune::CatalogUse, Vec<Planned>), MirrorError> {
    if req.dry_run {
        let (report, used) = dry_run(
            req,
            source,
            &cfg,
            planned,
            left,
            to,
            &target_repo,
            &target_tag,
        );
        return Ok((report, used, planned.to_vec()));
    }
    tracing::info!(
        "{source}: mirroring {} image(s) to {}",
        planned.len(),
        to.registry()
    );
    let copies = copy_trusted(req, engine, &pairs, report).await?;
    let (copied, present, mut failures) = (copies.copied, copies.present, copies.failures);
    if req.digest_tags {
        let media_types = copies
            .learned
            .iter()
            .map(|(w, (_, t))| (w.clone(), t.clone()))
            .collect();
        let (tagged, untagged) = tags::tag_all(engine, planned, &failures, &media_types).await;
        tracing::info!("{source}: {tagged} image(s) given tags in the mirror");
        failures.extend(untagged);
    }
    if !failures.is_empty() && !req.continue_on_error {
        return Err(MirrorError::Incomplete { failures });
    }
    let mut out = CatalogReport {
        source: source.to_string(),
        packages: cfg.packages.len(),
        bundles: cfg.bundles.len(),
        images_copied: copied,
        images_present: present,
        left_out: left,
        failures,
        ..Default::default()
    };
    if req.rewrite_references {
        let moved: std::collections::HashMap<&str, String> = planned
            .iter()
            .map(|p| (p.written.as_str(), p.dest.whole()))
            .collect();
        let n = images::rewrite(&mut cfg, |i| moved.get(i).cloned());
        tracing::info!("{source}: {n} image reference(s) rewritten to the mirror");
        let copied: Vec<Planned> = planned
            .iter()
            .filter(|p| !out.failures.iter().any(|f| f.image == p.written))
            .cloned()
            .collect();
        out.rebuilt = rewrite::rewrite_bundles(engine, &mut cfg, &copied).await?;
        // The originals' signatures cannot cover the rebuilt bundles: the user's key does.
        let rebuilt: Vec<String> = out.rebuilt.iter().map(|r| r.pinned.clone()).collect();
        out.signed
            .extend(signatures::sign_made(engine, &req.signatures, &rebuilt).await?);
    }
    let dest = Reference::with_tag(
        to.registry().to_string(),
        to.repository(&target_repo),
        target_tag.clone(),
    );
    let artifact = build_catalog_image(req, source, cfg)?;
    let pushed = engine
        .copy(
            Source::Built(&artifact),
            &Endpoint::Registry(dest.clone()),
            None,
        )
        .await
        .map_err(|error| MirrorError::PushCatalog {
            dest: dest.whole(),
            error: Box::new(error),
        })?;
    out.signed.extend(
        signatures::sign_made(
            engine,
            &req.signatures,
            std::slice::from_ref(&pushed.pinned),
        )
        .await?,
    );
    out.catalog_image = Some(pushed.pinned.clone());
    let name = req
        .catalog_name
        .clone()
        .unwrap_or_else(|| plan::object_name(&target_repo, Some(&target_tag)));
    let catalog = MirroredCatalog {
        name: name.clone(),
        namespace: req.catalog_namespace.clone(),
        pinned: pushed.pinned,
        source: Some(source.to_string()),
    };
    let files = outputs::files(&catalog, planned, req.rewrite_references)?;
    let dir = if several {
        // host: a Kubernetes name (plan::object_name: letters, digits, '-') under --output
        req.output.join(&name)
    } else {
        req.output.clone()
    };
    out.outputs = outputs::write(&dir, &files)?;
    // Every planned image stays out of a prune, copied now or not (with
    // --continue-on-error the catalog still names the ones that failed); the record gains
    // only what is in the mirror.
    let rebuilt = out.rebuilt.iter().map(|r| r.pinned.clone());
    let used = prune::CatalogUse {
        name,
        planned: planned
            .iter()
            .map(|p| p.dest.whole())
            .chain(rebuilt.clone())
            .collect(),
        mirrored: planned
            .iter()
            .filter(|p| !out.failures.iter().any(|f| f.image == p.written))
            .map(|p| p.dest.whole())
            .chain(rebuilt)
            .collect(),
    };
    Ok((out, used, planned.to_vec()))
}

/// `--dry-run`: the plan of a mirror run, with nothing copied, pushed, written or deleted:
/// each image and where it would go, the catalog image's destination, and with `--prune`
/// what the earlier record lists and this selection no longer uses (worked out once for the
/// run, [`record_and_prune`]).
#[allow(clippy::too_many_arguments)]
fn dry_run(
    req: &MirrorRequest,
    source: &str,
    cfg: &DeclarativeConfig,
    planned: &[Planned],
    left: Vec<Left>,
    to: &Destination,
    target_repo: &str,
    target_tag: &str,
) -> (CatalogReport, prune::CatalogUse) {
    let name = req
        .catalog_name
        .clone()
        .unwrap_or_else(|| plan::object_name(target_repo, Some(target_tag)));
    let would_mirror: Vec<String> = planned
        .iter()
        .map(|p| format!("{} -> {}", p.written, p.dest.whole()))
        .collect();
    let used = prune::CatalogUse {
        name,
        planned: planned.iter().map(|p| p.dest.whole()).collect(),
        mirrored: Vec::new(),
    };
    let dest = Reference::with_tag(
        to.registry().to_string(),
        to.repository(target_repo),
        target_tag.to_string(),
    );
    let report = CatalogReport {
        source: source.to_string(),
        packages: cfg.packages.len(),
        bundles: cfg.bundles.len(),
        left_out: left,
        would_mirror,
        catalog_image: Some(format!("{} (would be built and pushed)", dest.whole())),
        dry_run: true,
        ..Default::default()
    };
    (report, used)
}

/// The filtered catalog as a catalog image served by `olm` (one image per `olm` binary).
fn build_catalog_image(
    req: &MirrorRequest,
    source: &str,
    cfg: DeclarativeConfig,
) -> Result<crate::image::model::Artifact, MirrorError> {
    let scratch =
        ScratchDir::new().map_err(|e| MirrorError::Io(format!("a temporary directory: {e}")))?;
    let dir = scratch.path().join("configs");
    write_fs::write_fs(cfg, &dir, Format::Json)?;
    let host_ca = PathBuf::from(rootfs::HOST_CA_BUNDLE);
    let build = |error| MirrorError::Build {
        catalog: source.to_string(),
        error: Box::new(error),
    };
    CatalogImage {
        catalog_dir: dir,
        olm_binaries: req.olm_binaries.clone(),
        labels: Default::default(),
        // host: this machine's CA bundle
        ca_bundle: host_ca.is_file().then_some(host_ca),
        created: crate::reproducible::source_date_epoch()
            .map_err(|e| build(rootfs::BuildError::Epoch(e)))?,
        http_port: None,
        catalog_name: None,
        // No HTTP API in this image: no browser pages to render.
        site: None,
    }
    .build()
    .map_err(build)
}

async fn catalog_to_archive(
    req: &MirrorRequest,
    engine: &Engine,
    job: &Job,
    dir: &Path,
    blocked: &Blocked,
    report: &mut MirrorReport,
) -> Result<CatalogReport, MirrorError> {
    let cfg = selected(job, &req.registry).await?;
    let (planned, left) = plan::plan(images::referenced(&cfg), None, |s, _| blocked.pattern(s, s));
    let layout = Layout::new(dir.join(archive::IMAGES));
    layout.init().map_err(|e| MirrorError::Io(e.to_string()))?;
    // What an earlier run stored by digest is there for good: not even asked of the source.
    let index = layout.index().map_err(|e| MirrorError::Io(e.to_string()))?;
    let stored = |p: &Planned| {
        index.manifests.iter().any(|d| {
            d.annotations
                .get(crate::image::model::ANNOTATION_REF_NAME)
                .is_some_and(|n| *n == p.written)
                && p.source.digest() == Some(d.digest.as_str())
        })
    };
    let (done, todo): (Vec<&Planned>, Vec<&Planned>) = planned.iter().partition(|p| stored(p));
    tracing::info!(
        "{}: archiving {} image(s) into {} ({} already there)",
        job.source,
        todo.len(),
        dir.display(),
        done.len()
    );
    let pairs: Vec<_> = todo
        .iter()
        .map(|p| {
            (
                Endpoint::Registry(p.source.clone()),
                Endpoint::Layout {
                    layout: layout.clone(),
                    tag: Some(p.written.clone()),
                },
                *p,
            )
        })
        .collect();
    let copies = copy_trusted(req, engine, &pairs, report).await?;
    let (copied, present, failures) = (copies.copied, copies.present, copies.failures);
    if !failures.is_empty() && !req.continue_on_error {
        return Err(MirrorError::Incomplete { failures });
    }
    let mut manifest = Manifest::read(dir)?.unwrap_or_default();
    let catalog_dir = manifest.catalog_dir_for(&job.source);
    let (packages, bundles) = (cfg.packages.len(), cfg.bundles.len());
    // Written through the archive's directory handle: a link planted in the archive since the
    // check cannot take the write (or the old directory's removal) outside it.
    let write_error = |path: PathBuf, source: std::io::Error| {
        MirrorError::Io(format!("{}: cannot write: {source}", path.display()))
    };
    archive::open(dir)?.replace_dir(
        &catalog_dir,
        |tmp| write_fs::write_fs(cfg, tmp, Format::Json).map_err(MirrorError::from),
        write_error,
    )?;
    let index = layout.index().map_err(|e| MirrorError::Io(e.to_string()))?;
    let failed: std::collections::HashSet<&str> =
        failures.iter().map(|f| f.image.as_str()).collect();
    let archived = planned
        .iter()
        .filter(|p| !failed.contains(p.written.as_str()))
        .filter_map(|p| {
            let d = index.manifests.iter().find(|d| {
                d.annotations
                    .get(crate::image::model::ANNOTATION_REF_NAME)
                    .is_some_and(|n| *n == p.written)
            })?;
            Some(ArchivedImage {
                reference: p.written.clone(),
                digest: d.digest.clone(),
                used_by: p.used_by.clone(),
            })
        })
        .collect();
    let (target_repository, target_tag) = catalog_target(
        req,
        &job.source,
        job.target_catalog.as_deref(),
        job.target_tag.as_deref(),
    );
    manifest.put(ArchivedCatalog {
        source: job.source.clone(),
        target_repository,
        target_tag,
        catalog_dir,
        images: archived,
    });
    manifest.write(dir)?;
    Ok(CatalogReport {
        source: job.source.clone(),
        catalog_image: None,
        packages,
        bundles,
        images_copied: copied,
        images_present: present + done.len(),
        left_out: left,
        failures,
        outputs: vec![dir.join(archive::MANIFEST)],
        rebuilt: Vec::new(),
        signed: Vec::new(),
        would_mirror: Vec::new(),
        dry_run: false,
    })
}
