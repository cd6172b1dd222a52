//! What a mirror configuration put in the destination, and `--prune`: the images an earlier
//! run of the same configuration copied that the new selection no longer needs are deleted
//! (oc-mirror v2's delete workflow, in the same run).
//!
//! Each run to a registry keeps a record per catalog in the destination itself, so a prune
//! from another machine knows what was mirrored: an image
//! `<to>/olm-mirror-metadata:<catalog name>` whose one layer holds `images.json`, the mirrored
//! images (a JSON array of references; a gzipped layer, as a list in an annotation would soon
//! pass a registry's manifest size limit). Without `--prune` the record grows (what is in the
//! mirror from this configuration); with it, it becomes what the new selection copied. A
//! prune runs once, after every catalog of the run: it deletes only what a record lists, never
//! an image that any catalog of the run plans (copied or not) or that another record under
//! the destination lists (by digest, in the same repository), never anything outside the
//! destination's registry and prefix; an index goes with its images, and the cosign
//! signatures and attestations of what it deletes go with them. `--dry-run` prints the plan,
//! deletes nothing and keeps the records as they were.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::Read as _;

use crate::image::copy::{CopyError, Endpoint, Engine, Source};
use crate::image::layer::{LayerBuilder, Owner};
use crate::image::model::{self, Artifact, ImageBuilder};
use crate::image::reference::Reference;
use crate::image::registry::RegistryError;
use crate::image::sign::store::{self, Attachment};

use super::plan::Destination;

/// The repository (under the destination's prefix) the records live in.
pub const METADATA_REPOSITORY: &str = "olm-mirror-metadata";
/// The file in a record's layer that lists its images.
pub const RECORD_FILE: &str = "images.json";
/// The manifest annotation older records held their images in (still read).
pub const ANNOTATION_IMAGES: &str = "io.olm.mirror.images";
/// The largest record read, unpacked: about 400,000 references.
const RECORD_BYTES: u64 = 64 << 20;

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

/// One catalog's part of a run.
#[derive(Debug, Clone, Default)]
pub struct CatalogUse {
    /// The record's name (the catalog's name).
    pub name: String,
    /// Every image the catalog's selection uses in the mirror, copied now or not (and the
    /// rebuilt bundle images): none of them is pruned.
    pub planned: Vec<String>,
    /// What this run copied (or found complete) in the mirror: what the record gains.
    pub mirrored: Vec<String>,
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

/// The images a record's layer lists: `images.json` of the gzipped tar, read up to
/// [`RECORD_BYTES`].
fn unpack_record(blob: &[u8]) -> Result<Vec<String>, String> {
    let gz = flate2::read::GzDecoder::new(blob).take(RECORD_BYTES + 1);
    let mut archive = tar::Archive::new(gz);
    for entry in archive.entries().map_err(|e| e.to_string())? {
        let mut entry = entry.map_err(|e| e.to_string())?;
        let path = entry.path().map_err(|e| e.to_string())?.into_owned();
        if path.to_str().map(|p| p.trim_start_matches("./")) != Some(RECORD_FILE) {
            continue;
        }
        let mut text = Vec::new();
        (&mut entry)
            .take(RECORD_BYTES + 1)
            .read_to_end(&mut text)
            .map_err(|e| e.to_string())?;
        if text.len() as u64 > RECORD_BYTES {
            return Err(format!("{RECORD_FILE} is larger than {RECORD_BYTES} bytes"));
        }
        return serde_json::from_slice(&text).map_err(|e| format!("{RECORD_FILE}: {e}"));
    }
    Err(format!("no {RECORD_FILE} in its layer"))
}

/// The images an earlier run recorded (none when there is no record).
async fn read(engine: &Engine, to: &Destination, name: &str) -> Result<Vec<String>, PruneError> {
    let at = record_ref(to, name);
    let err = |message: String| PruneError::Record {
        record: at.whole(),
        message,
    };
    let endpoint = Endpoint::Registry(at.clone());
    let fetched = match engine.manifest(Source::Endpoint(&endpoint)).await {
        Ok(f) => f,
        Err(CopyError::Registry(RegistryError::NotFound { .. })) => return Ok(Vec::new()),
        Err(e) => return Err(err(e.to_string())),
    };
    let manifest =
        model::parse_manifest(&fetched.bytes, &fetched.digest).map_err(|e| err(e.to_string()))?;
    let images: Vec<String> = match manifest.annotations.get(ANNOTATION_IMAGES) {
        Some(list) => {
            serde_json::from_str(list).map_err(|e| err(format!("{ANNOTATION_IMAGES}: {e}")))?
        }
        None => {
            let [layer] = &manifest.layers[..] else {
                return Err(err(format!(
                    "{} layers, a record has one",
                    manifest.layers.len()
                )));
            };
            let pinned = Endpoint::Registry(Reference::with_digest(
                at.registry().to_string(),
                at.repository().to_string(),
                fetched.digest.clone(),
            ));
            let blob =
                crate::image::copy::read_small_blob(engine, Source::Endpoint(&pinned), layer)
                    .await
                    .map_err(|e| err(e.to_string()))?;
            unpack_record(&blob).map_err(err)?
        }
    };
    for i in &images {
        let r: Reference = i
            .parse()
            .map_err(|e| err(format!("{RECORD_FILE}: {i:?}: {e}")))?;
        if !inside(to, &r) {
            return Err(err(format!(
                "{RECORD_FILE}: {i} is not under the destination {}/{}",
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
    let fail = |message: String| PruneError::Record {
        record: at.whole(),
        message,
    };
    let list = serde_json::to_vec(images).map_err(|e| fail(e.to_string()))?;
    let mut layer = LayerBuilder::new(created);
    layer
        .file(RECORD_FILE, list, 0o644, Owner::Root)
        .map_err(|e| fail(e.to_string()))?;
    let layer = layer.finish().map_err(|e| fail(e.to_string()))?;
    let image = ImageBuilder::new("linux", "amd64", created)
        .layer(layer, "olm catalog mirror: the mirror's record")
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

/// Deletes `r` (and, for an index, its images) unless `keep` holds it, with the cosign
/// attachments (`sha256-<hex>.sig`, `.att`, `.sbom`) of each digest deleted.
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
        if keep.contains(&(repo.to_string(), d.clone())) {
            continue;
        }
        client.delete_manifest(repo, &d).await?;
        for what in Attachment::ALL {
            let Ok(tag) = store::attachment_tag(&d, what) else {
                continue; // not sha256: cosign names none
            };
            if let Some(att) = client.head_manifest(repo, &tag).await? {
                client.delete_manifest(repo, &att).await?;
            }
        }
    }
    Ok(())
}

/// A prune worked out: what the records held, and what goes.
#[derive(Debug, Default)]
pub struct Plan {
    /// Each catalog's record as read (`None`: unreadable, and without `--prune` left alone).
    before: BTreeMap<String, Option<Vec<String>>>,
    /// What no catalog and no other record uses: `(reference, digest)`.
    doomed: Vec<(String, String)>,
    /// `(repository, digest)` pairs never deleted.
    keep: HashSet<(String, String)>,
    prune: bool,
}

impl Plan {
    /// What goes (or would), sorted.
    pub fn images(&self) -> Vec<String> {
        self.doomed.iter().map(|(i, _)| i.clone()).collect()
    }
}

fn parse(i: &str) -> Result<Reference, PruneError> {
    i.parse().map_err(|e| PruneError::Record {
        record: METADATA_REPOSITORY.to_string(),
        message: format!("{i}: {e}"),
    })
}

/// Reads the records of the run's catalogs and, with `prune`, works out what the records
/// list that no catalog of the run plans and no other record under the destination lists.
/// With `prune` every error stops the prune; without, an unreadable record is a warning
/// (a registry that refuses the metadata repository to this account, say) and is left alone.
pub async fn plan(
    engine: &Engine,
    to: &Destination,
    uses: &[CatalogUse],
    prune: bool,
) -> Result<Plan, PruneError> {
    let mut out = Plan {
        prune,
        ..Default::default()
    };
    for u in uses {
        let before = match read(engine, to, &u.name).await {
            Ok(b) => Some(b),
            Err(e) if !prune => {
                tracing::warn!("{e} (not updated; only --prune needs it)");
                None
            }
            Err(e) => return Err(e),
        };
        out.before.insert(u.name.clone(), before);
    }
    if !prune {
        return Ok(out);
    }
    // What stays by name: every image of the run and of every other record.
    let mut kept: BTreeSet<String> = uses
        .iter()
        .flat_map(|u| u.planned.iter().cloned())
        .collect();
    let records = record_ref(to, "x");
    let tags = engine
        .client(to.registry())
        .await
        .map_err(|e| PruneError::Record {
            record: records.whole(),
            message: e.to_string(),
        })?
        .list_tags(records.repository())
        .await
        .map_err(|e| PruneError::Record {
            record: format!("{}/{}", to.registry(), records.repository()),
            message: e.to_string(),
        })?;
    for other in tags
        .iter()
        .filter(|t| !t.starts_with("sha256-") && !out.before.contains_key(*t))
    {
        kept.extend(read(engine, to, other).await?);
    }
    for i in &kept {
        let r = parse(i)?;
        let digest = resolve(engine, &r)
            .await
            .map_err(|error| PruneError::Delete {
                image: i.clone(),
                error: Box::new(error),
            })?;
        if let Some(d) = digest {
            out.keep.insert((r.repository().to_string(), d));
        }
    }
    let listed: BTreeSet<String> = out
        .before
        .values()
        .flatten()
        .flatten()
        .filter(|i| !kept.contains(*i))
        .cloned()
        .collect();
    for i in listed {
        let r = parse(&i)?;
        let digest = resolve(engine, &r)
            .await
            .map_err(|error| PruneError::Delete {
                image: i.clone(),
                error: Box::new(error),
            })?;
        let Some(digest) = digest else { continue };
        if !out
            .keep
            .contains(&(r.repository().to_string(), digest.clone()))
        {
            out.doomed.push((i, digest));
        }
    }
    Ok(out)
}

/// Deletes what `plan` found unused; the images deleted.
pub async fn apply(engine: &Engine, plan: &Plan) -> Result<Vec<String>, PruneError> {
    for (i, digest) in &plan.doomed {
        let r = parse(i)?;
        delete(engine, &r, digest, &plan.keep)
            .await
            .map_err(|error| PruneError::Delete {
                image: i.clone(),
                error: Box::new(error),
            })?;
    }
    Ok(plan.images())
}

/// Writes each catalog's record: with `--prune` what the run copied and, of what the record
/// held, what the selection still plans (an image that failed this time is still there);
/// without, the record grows. Without `--prune` a record that cannot be written is a
/// warning.
pub async fn write_records(
    engine: &Engine,
    to: &Destination,
    plan: &Plan,
    uses: &[CatalogUse],
    created: u64,
) -> Result<(), PruneError> {
    for u in uses {
        let Some(Some(before)) = plan.before.get(&u.name) else {
            continue; // unreadable: left as it is
        };
        let planned: HashSet<&String> = u.planned.iter().collect();
        let record: BTreeSet<String> = if plan.prune {
            before
                .iter()
                .filter(|i| planned.contains(i))
                .chain(&u.mirrored)
                .cloned()
                .collect()
        } else {
            before.iter().chain(&u.mirrored).cloned().collect()
        };
        match write(engine, to, &u.name, &record, created).await {
            Ok(()) => {}
            Err(e) if !plan.prune => tracing::warn!("{e} (only --prune needs it)"),
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
