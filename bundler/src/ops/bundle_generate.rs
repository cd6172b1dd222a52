//! `olm bundle generate` as a library call, and the generation step `olm release` shares with
//! it: manifests in (a directory, a file or a stream), the CSV base found (a file, or the
//! ClusterServiceVersion among the manifests), the bundle generated, then written, or compared
//! with what is on disk (`--check`), and read back through the default validators.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::atomic_write::{TreeChanges, WriteError};
use crate::bundle::generate::config::{Settings, SettingsError};
use crate::bundle::generate::input::{self, SourceObject};
use crate::bundle::generate::{self, GenerateError, GenerateInput, Generated, OWNED_DIRS, digests};
use crate::bundle::load::LoadError;
use crate::bundle::validate::{self, Options, Report};
use crate::image::reference::ImageRef;
use crate::image::registry::RegistryOptions;
use crate::image::transfer;
use crate::reproducible::EpochError;
use crate::yaml::{self, YamlError};

/// Where the manifests come from.
#[derive(Debug, Clone)]
pub enum Manifests {
    /// A stream already read (stdin), with the name errors use (`<stdin>`).
    Stream { name: String, text: String },
    /// A directory (recursively) or one multi-document file.
    Path(PathBuf),
}

/// What one `olm bundle generate` does with the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Write the owned files atomically and validate what was written.
    Write,
    /// Write nothing; report the files that differ.
    Check,
}

#[derive(Debug, Error)]
pub enum BundleGenerateError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error("--manifests is required (a directory, a file, or - for stdin)")]
    NoManifests,
    #[error("--manifests {0}: no such file or directory (use - to read a stream from stdin)")]
    ManifestsNotFound(PathBuf),
    #[error("cannot read the operator manifests")]
    ReadManifests(#[source] GenerateError),
    #[error(transparent)]
    CsvBaseUnreadable(YamlError),
    #[error("cannot read the CSV base")]
    CsvBase(#[source] YamlError),
    #[error(
        "the manifests hold no ClusterServiceVersion: give the CSV base with --csv-base (`csv-base:` in a bundle config)"
    )]
    NoCsvBase,
    #[error(transparent)]
    CsvBaseAmbiguous(GenerateError),
    #[error(transparent)]
    Options(GenerateError),
    #[error("cannot generate the bundle")]
    Generate(#[source] GenerateError),
    #[error("--use-image-digests: cannot resolve {image} ({place}) to a digest: {message}")]
    Resolve {
        image: String,
        place: String,
        message: String,
    },
    #[error(transparent)]
    Epoch(#[from] EpochError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("cannot read back the generated bundle")]
    ReadBack(#[source] LoadError),
}

impl BundleGenerateError {
    /// A mistake in how the command was called or an input that is not there (exit code 2),
    /// rather than input that is there and wrong (exit code 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            Self::Settings(_)
                | Self::NoManifests
                | Self::ManifestsNotFound(_)
                | Self::CsvBaseUnreadable(_)
                | Self::NoCsvBase
                | Self::Options(_)
                | Self::Epoch(_)
                | Self::Write(_)
        )
    }
}

/// One file that differs from what would be generated, with its unified diff.
#[derive(Debug, Clone)]
pub struct StaleFile {
    pub path: PathBuf,
    pub diff: String,
}

/// The result of [`run`].
#[derive(Debug)]
pub enum Outcome {
    /// `Mode::Check`, and the output directory is what would be generated.
    UpToDate,
    /// `Mode::Check`, and these files differ (or are missing, or are extra).
    Stale(Vec<StaleFile>),
    /// `Mode::Write`: what changed on disk, and the default validators' report of it.
    Written {
        changes: TreeChanges,
        report: Report,
    },
}

impl Outcome {
    /// What to tell the user about `out`: text for stdout, lines for stderr, and whether the
    /// command failed (a stale directory, or a written bundle the validators reject).
    pub fn summary(&self, out: &Path) -> (String, Vec<String>, bool) {
        let out = out.display();
        match self {
            Outcome::UpToDate => (format!("{out} is up to date\n"), Vec::new(), false),
            Outcome::Stale(stale) => {
                let diffs: String = stale.iter().map(|f| f.diff.as_str()).collect();
                let names: Vec<String> =
                    stale.iter().map(|f| f.path.display().to_string()).collect();
                let msg = format!(
                    "error: {out} is stale: {} file(s) differ from what `olm bundle generate` produces ({}); regenerate it and commit the result",
                    stale.len(),
                    names.join(", ")
                );
                (diffs, vec![msg], true)
            }
            Outcome::Written { changes, report } => {
                let mut lines = vec![format!(
                    "{out}: {} written, {} removed, {} unchanged",
                    changes.written.len(),
                    changes.removed.len(),
                    changes.unchanged
                )];
                lines.extend(report.findings.iter().map(|f| f.with_hint()));
                (String::new(), lines, !report.passed(false))
            }
        }
    }
}

/// The manifests `arg` names: `-` for a stream read from stdin, else a path.
pub fn manifests_arg(arg: &str) -> std::io::Result<Manifests> {
    if arg != "-" {
        return Ok(Manifests::Path(PathBuf::from(arg)));
    }
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
    Ok(Manifests::Stream {
        name: "<stdin>".into(),
        text,
    })
}

/// Reads the manifests.
pub fn read_manifests(from: &Manifests) -> Result<Vec<SourceObject>, BundleGenerateError> {
    match from {
        Manifests::Stream { name, text } => {
            input::parse_stream(name, text).map_err(BundleGenerateError::ReadManifests)
        }
        Manifests::Path(path) if !path.exists() => {
            Err(BundleGenerateError::ManifestsNotFound(path.clone()))
        }
        Manifests::Path(path) => input::read_path(path).map_err(BundleGenerateError::ReadManifests),
    }
}

/// Generates the bundle of `settings` from `manifests` (the CSV base taken out of them when
/// `settings` names none), keeping `createdAt` when the output directory's content would not
/// change.
pub fn generate(
    settings: &Settings,
    mut manifests: Vec<SourceObject>,
) -> Result<Generated, BundleGenerateError> {
    let (csv_base, csv_base_path) = match &settings.csv_base {
        Some(path) => match yaml::load_one::<serde_json::Value>(path) {
            Ok(v) => (v, path.clone()),
            Err(e @ YamlError::Io { .. }) => return Err(BundleGenerateError::CsvBaseUnreadable(e)),
            Err(e) => return Err(BundleGenerateError::CsvBase(e)),
        },
        None => match generate::take_csv_base(&mut manifests) {
            Ok(Some(base)) => (base.object, PathBuf::from(base.source)),
            Ok(None) => return Err(BundleGenerateError::NoCsvBase),
            Err(e) => return Err(BundleGenerateError::CsvBaseAmbiguous(e)),
        },
    };
    let input = GenerateInput {
        manifests,
        csv_base,
        csv_base_path,
        options: settings.options.clone(),
        previous: generate::read_previous(&settings.output),
    };
    generate::generate(&input).map_err(|e| match e {
        e @ GenerateError::Options(_) => BundleGenerateError::Options(e),
        e => BundleGenerateError::Generate(e),
    })
}

/// With `use_image_digests` (operator-sdk's `--use-image-digests`): generates once to find
/// every image the CSV names, asks each image's registry for its digest, and sets
/// `settings.options.image_digests` so the real generation pins them.
pub async fn resolve_image_digests(
    settings: &mut Settings,
    objects: &[SourceObject],
    registry: &RegistryOptions,
) -> Result<(), BundleGenerateError> {
    if !settings.use_image_digests {
        return Ok(());
    }
    let first = generate(settings, objects.to_vec())?;
    let csv_text = first
        .tree
        .get(&first.csv_path)
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let csv: serde_json::Value = yaml::parse_one(&first.csv_path, csv_text.as_bytes())
        .map_err(|e| BundleGenerateError::Generate(GenerateError::Yaml(e)))?;
    let specs = digests::pull_specs(&csv)
        .map_err(|e| BundleGenerateError::Generate(GenerateError::Digests(e)))?;
    let mut resolved = BTreeMap::new();
    for image in digests::to_resolve(&specs) {
        let place = specs
            .iter()
            .find(|s| s.image == image)
            .map(|s| s.place.clone())
            .unwrap_or_default();
        let fail = |message: String| BundleGenerateError::Resolve {
            image: image.clone(),
            place: place.clone(),
            message,
        };
        let reference = ImageRef::parse(&image).map_err(|e| fail(e.to_string()))?;
        let pinned = transfer::resolve(&reference, registry)
            .await
            .map_err(|e| fail(e.to_string()))?;
        tracing::info!("{image} -> {pinned}");
        resolved.insert(image, pinned);
    }
    settings.options.image_digests = Some(resolved);
    Ok(())
}

/// [`run`] after [`resolve_image_digests`]: what `olm bundle generate` calls.
pub async fn run_resolving(
    mut settings: Settings,
    manifests: &Manifests,
    mode: Mode,
    registry: &RegistryOptions,
) -> Result<(Vec<String>, Outcome), BundleGenerateError> {
    let objects = read_manifests(manifests)?;
    resolve_image_digests(&mut settings, &objects, registry).await?;
    run_objects(settings, objects, mode)
}

/// `olm bundle generate`: returns the generator's warnings and what happened.
pub fn run(
    settings: Settings,
    manifests: &Manifests,
    mode: Mode,
) -> Result<(Vec<String>, Outcome), BundleGenerateError> {
    let objects = read_manifests(manifests)?;
    run_objects(settings, objects, mode)
}

fn run_objects(
    mut settings: Settings,
    objects: Vec<SourceObject>,
    mode: Mode,
) -> Result<(Vec<String>, Outcome), BundleGenerateError> {
    settings.options.created_at = generate::files::created_at_for_new_content()?;
    let generated = generate(&settings, objects)?;
    let out = &settings.output;
    let outcome = match mode {
        Mode::Check => {
            let stale = generated.tree.diff_against(out, &OWNED_DIRS);
            if stale.is_empty() {
                Outcome::UpToDate
            } else {
                Outcome::Stale(
                    stale
                        .into_iter()
                        .map(|path| StaleFile {
                            diff: unified_diff(out, &path, generated.tree.get(&path)),
                            path,
                        })
                        .collect(),
                )
            }
        }
        Mode::Write => {
            let changes = generated.tree.write(out, &OWNED_DIRS)?;
            // Check the result with the default suite, as CI would.
            let report = validate::validate_dir(out, &Options::default())
                .map_err(BundleGenerateError::ReadBack)?;
            Outcome::Written { changes, report }
        }
    };
    Ok((generated.warnings, outcome))
}

fn unified_diff(root: &Path, rel: &Path, new: Option<&[u8]>) -> String {
    let old = std::fs::read_to_string(root.join(rel)).unwrap_or_default();
    let new = new
        .map(|b| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    generate::diff::unified(&rel.display().to_string(), &old, &new)
}
