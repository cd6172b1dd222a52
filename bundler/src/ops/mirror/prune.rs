//! What a mirror configuration put in the destination, and `--prune`: the images an earlier
//! run of the same configuration copied that the new selection no longer needs are deleted
//! (oc-mirror v2's delete workflow, in the same run).
//!
//! Each run to a registry keeps a record in the destination itself, so a prune from another
//! machine knows what was mirrored: an image `<to>/olm-mirror-metadata:<catalog name>` whose
//! manifest annotation lists the mirrored images. Without `--prune` the record grows (what is
//! in the mirror from this configuration); with it, it becomes the new selection's. A prune
//! deletes only what the record lists, never an image that the new selection still uses (by
//! digest, in the same repository), never anything outside the destination's registry and
//! prefix; an index goes with its images. `--dry-run` prints the plan, deletes nothing and
//! keeps the record as it was.

use std::collections::{BTreeSet, HashSet};

use crate::image::copy::{CopyError, Endpoint, Engine, Source};
use crate::image::layer::LayerBuilder;
use crate::image::model::{self, Artifact, ImageBuilder};
use crate::image::reference::Reference;
use crate::image::registry::RegistryError;

use super::plan::Destination;

/// The repository (under the destination's prefix) the records live in.
pub const METADATA_REPOSITORY: &str = "olm-mirror-metadata";
/// The manifest annotation holding a record's images (a JSON array of references).
pub const ANNOTATION_IMAGES: &str = "io.olm.mirror.images";

#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error("the mirror record {record}: {message}")]
    Record { record: String, message: String },
    #[error("the mirror record {record}: {error}")]
    Copy {
        record: String,
        error: Box<CopyError>,
    },
    #[error("pruning {image}: {error}")]
    Delete {
        image: String,
        error: Box<RegistryError>,
    },
}

/// What one prune did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Default)]
pub struct Pruned {
    /// The images deleted (or to delete), sorted.
    pub images: Vec<String>,
    pub dry_run: bool,
}

/// Where the record of catalog `name` lives.
fn record_ref(to: &Destination, name: &str) -> Reference {
    Reference::with_tag(
        to.registry().to_string(),
        to.repository(METADATA_REPOSITORY),
        name.to_string(),
    )
}

/// Whether `r` is where this destination mirrors to (its registry, under its prefix).
fn inside(to: &Destination, r: &Reference) -> bool {
    r.registry() == to.registry() && r.repository().starts_with(&to.repository(""))
}

/// The images an earlier run recorded (none when there is no record).
async fn read(engine: &Engine, to: &Destination, name: &str) -> Result<Vec<String>, PruneError> {
    let at = record_ref(to, name);
    let err = |message: String| PruneError::Record {
        record: at.whole(),
        message,
    };
    let fetched = match engine
        .manifest(Source::Endpoint(&Endpoint::Registry(at.clone())))
        .await
    {
        Ok(f) => f,
        Err(CopyError::Registry(RegistryError::NotFound { .. })) => return Ok(Vec::new()),
        Err(e) => return Err(err(e.to_string())),
    };
    let manifest =
        model::parse_manifest(&fetched.bytes, &fetched.digest).map_err(|e| err(e.to_string()))?;
    let Some(list) = manifest.annotations.get(ANNOTATION_IMAGES) else {
        return Err(err(format!("no {ANNOTATION_IMAGES} annotation")));
    };
    let images: Vec<String> =
        serde_json::from_str(list).map_err(|e| err(format!("{ANNOTATION_IMAGES}: {e}")))?;
    for i in &images {
        let r: Reference = i
            .parse()
            .map_err(|e| err(format!("{ANNOTATION_IMAGES}: {i:?}: {e}")))?;
        if !inside(to, &r) {
            return Err(err(format!(
                "{ANNOTATION_IMAGES}: {i} is not under the destination {}/{}",
                to.registry(),
                to.repository("")
            )));
        }
    }
    Ok(images)
}

/// Writes the record of catalog `name`.
async fn write(
    engine: &Engine,
    to: &Destination,
    name: &str,
    images: &BTreeSet<String>,
    created: u64,
) -> Result<(), PruneError> {
    let at = record_ref(to, name);
    let list = serde_json::to_string(images).unwrap_or_default();
    // One empty layer: some registries refuse an image without any.
    let empty = LayerBuilder::new(created)
        .finish()
        .map_err(|e| PruneError::Record {
            record: at.whole(),
            message: e.to_string(),
        })?;
    let image = ImageBuilder::new("linux", "amd64", created)
        .layer(empty, "olm catalog mirror: the mirror's record")
        .annotation(ANNOTATION_IMAGES, list)
        .build();
    engine
        .copy(
            Source::Built(&Artifact::Image(image)),
            &Endpoint::Registry(at.clone()),
            None,
        )
        .await
        .map(|_| ())
        .map_err(|error| PruneError::Copy {
            record: at.whole(),
            error: Box::new(error),
        })
}

/// `(repository, digest)` an image names now (a tag resolved); `None` when it is gone.
async fn resolve(engine: &Engine, r: &Reference) -> Result<Option<String>, RegistryError> {
    if let Some(d) = r.digest() {
        return Ok(Some(d.to_string()));
    }
    engine
        .client(r.registry())
        .await?
        .head_manifest(r.repository(), r.manifest_ref())
        .await
}

/// Deletes `r` (and, for an index, its images) unless `keep` holds it.
async fn delete(
    engine: &Engine,
    r: &Reference,
    digest: &str,
    keep: &HashSet<(String, String)>,
) -> Result<(), RegistryError> {
    let client = engine.client(r.registry()).await?;
    let repo = r.repository();
    let mut digests = vec![digest.to_string()];
    if let Ok(m) = client.get_manifest(repo, digest).await
        && model::is_index(&m.media_type)
        && let Ok(index) = model::parse_index(&m.bytes, &m.digest)
    {
        digests.extend(index.manifests.iter().map(|d| d.digest.clone()));
    }
    for d in digests {
        if !keep.contains(&(repo.to_string(), d.clone())) {
            client.delete_manifest(repo, &d).await?;
        }
    }
    Ok(())
}

/// Records what this run mirrored of catalog `name` (`now`), and with `prune` deletes what
/// the earlier record lists and `now` does not.
pub async fn record_and_prune(
    engine: &Engine,
    to: &Destination,
    name: &str,
    now: &[String],
    prune: bool,
    dry_run: bool,
    created: u64,
) -> Result<Pruned, PruneError> {
    let before = read(engine, to, name).await?;
    let now_set: BTreeSet<String> = now.iter().cloned().collect();
    let mut pruned = Pruned {
        dry_run,
        ..Default::default()
    };
    if prune {
        let mut keep = HashSet::new();
        for i in &now_set {
            let r: Reference = i.parse().map_err(|e| PruneError::Record {
                record: record_ref(to, name).whole(),
                message: format!("{i}: {e}"),
            })?;
            if let Ok(Some(d)) = resolve(engine, &r).await {
                keep.insert((r.repository().to_string(), d));
            }
        }
        for i in before.iter().filter(|i| !now_set.contains(*i)) {
            let Ok(r) = i.parse::<Reference>() else {
                continue; // refused when read
            };
            let digest = resolve(engine, &r)
                .await
                .map_err(|error| PruneError::Delete {
                    image: i.clone(),
                    error: Box::new(error),
                })?;
            let Some(digest) = digest else { continue };
            if keep.contains(&(r.repository().to_string(), digest.clone())) {
                continue;
            }
            if !dry_run {
                delete(engine, &r, &digest, &keep)
                    .await
                    .map_err(|error| PruneError::Delete {
                        image: i.clone(),
                        error: Box::new(error),
                    })?;
            }
            pruned.images.push(i.clone());
        }
        pruned.images.sort();
    }
    if dry_run {
        return Ok(pruned);
    }
    let record: BTreeSet<String> = if prune {
        now_set
    } else {
        before.into_iter().chain(now_set).collect()
    };
    write(engine, to, name, &record, created).await?;
    Ok(pruned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_live_under_the_prefix_and_name_only_what_is_inside_it() {
        let to = Destination::parse("m.local:5000/ocp").unwrap();
        assert_eq!(
            record_ref(&to, "cat-v1").whole(),
            "m.local:5000/ocp/olm-mirror-metadata:cat-v1"
        );
        let r = |s: &str| s.parse::<Reference>().unwrap();
        assert!(inside(&to, &r("m.local:5000/ocp/org/op:v1")));
        assert!(!inside(&to, &r("m.local:5000/other/org/op:v1")));
        assert!(!inside(&to, &r("m.local:5001/ocp/org/op:v1")));
        assert!(!inside(&to, &r("m.local:5000/ocpx/op:v1")));
        let bare = Destination::parse("m.local:5000").unwrap();
        assert!(inside(&bare, &r("m.local:5000/anything:v1")));
    }
}
