//! `--rewrite-references` inside the bundles: each kept bundle's manifests (the CSV's
//! deployments and their containers, init containers, `RELATED_IMAGE_*` variables,
//! `relatedImages`, the `containerImage` annotation; any manifest file) name the mirrored
//! images instead of the originals, so a cluster with no registry mirror configuration
//! installs from the mirror alone. Every whole occurrence of a mirrored image's reference is
//! replaced and nothing else changes: the files keep their other bytes. The bundle image is
//! rebuilt from them, pushed beside the original in the mirror (tagged with its own digest
//! tag), and the catalog names it, its digest the new one.
//!
//! The rewritten images carry no signature of the original's (it cannot cover them): a
//! signing step signs what [`rewrite_bundles`] returns, the one list of images the mirror made.

use std::collections::HashMap;
use std::path::Path;

use futures::StreamExt as _;

use crate::bundle::image::{BundleImageError, build_bundle_image_over};
use crate::catalog::declcfg::DeclarativeConfig;
use crate::image::copy::{CopyError, Endpoint, Engine, Source};
use crate::image::model::Artifact;
use crate::image::reference::Reference;
use crate::image::transfer::{self, TransferError};

use super::plan::Planned;
use super::tags::digest_tag;

#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    #[error("{bundle}: pulling its bundle image {image} from the mirror: {error}")]
    Pull {
        bundle: String,
        image: String,
        error: Box<TransferError>,
    },
    #[error("{bundle}: {path}: {error}")]
    Io {
        bundle: String,
        path: String,
        error: std::io::Error,
    },
    #[error("{bundle}: rebuilding its bundle image: {error}")]
    Build {
        bundle: String,
        error: Box<BundleImageError>,
    },
    #[error("{bundle}: pushing the rewritten bundle image to {dest}: {error}")]
    Push {
        bundle: String,
        dest: String,
        error: Box<CopyError>,
    },
    #[error("{0}")]
    Epoch(String),
}

/// A bundle image the mirror rebuilt: the one it replaces and the new one, pinned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebuilt {
    pub bundle: String,
    pub original: String,
    pub pinned: String,
}

/// Characters that continue an image reference: an occurrence followed or preceded by one is
/// part of a longer reference, not this one.
fn continues_reference(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | ':' | '@' | '/')
}

/// `text` with every whole occurrence of a `from` replaced by its `to` (the longest `from`
/// first where several start at one place); `None` when nothing was replaced.
pub fn replace_references(text: &str, moved: &[(&str, &str)]) -> Option<String> {
    let mut keys: Vec<&(&str, &str)> = moved
        .iter()
        .filter(|(from, to)| !from.is_empty() && from != to && text.contains(from))
        .collect();
    if keys.is_empty() {
        return None;
    }
    keys.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    let (mut out, mut changed, mut i) = (String::with_capacity(text.len()), false, 0);
    let mut prev: Option<char> = None;
    while i < text.len() {
        let rest = &text[i..];
        let hit = (!prev.is_some_and(continues_reference))
            .then(|| {
                keys.iter().find(|(from, _)| {
                    rest.starts_with(from)
                        && !rest[from.len()..]
                            .chars()
                            .next()
                            .is_some_and(continues_reference)
                })
            })
            .flatten();
        if let Some((from, to)) = hit {
            out.push_str(to);
            prev = from.chars().last();
            i += from.len();
            changed = true;
        } else {
            let c = rest.chars().next().expect("not at the end");
            out.push(c);
            prev = Some(c);
            i += c.len_utf8();
        }
    }
    changed.then_some(out)
}

/// Rewrites the files under `dir` (recursively) in place; returns how many changed.
fn rewrite_tree(dir: &Path, moved: &[(&str, &str)], bundle: &str) -> Result<usize, RewriteError> {
    let io = |path: &Path, error| RewriteError::Io {
        bundle: bundle.to_string(),
        path: path.display().to_string(),
        error,
    };
    let mut changed = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| io(dir, e))?
        .collect::<Result<_, _>>()
        .map_err(|e| io(dir, e))?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let kind = e.file_type().map_err(|err| io(&path, err))?;
        if kind.is_dir() {
            changed += rewrite_tree(&path, moved, bundle)?;
        } else if kind.is_file() {
            let bytes = crate::image::limits::read_file(
                &path,
                "a bundle manifest file",
                crate::bundle::load::MAX_MANIFEST_FILE,
            )
            .map_err(|err| {
                let err = match err {
                    crate::image::limits::ReadFileError::Io(e) => e,
                    other => std::io::Error::other(other.to_string()),
                };
                io(&path, err)
            })?;
            // Only text can name an image.
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            if let Some(new) = replace_references(&text, moved) {
                std::fs::write(&path, new).map_err(|err| io(&path, err))?;
                changed += 1;
            }
        }
    }
    Ok(changed)
}

/// Rewrites the bundles of `cfg` (whose images already name the mirror) that name mirrored
/// images, pushes each rebuilt bundle image next to the original's mirrored copy, and points
/// the catalog at it. Returns the images built, for signing.
pub async fn rewrite_bundles(
    engine: &Engine,
    cfg: &mut DeclarativeConfig,
    planned: &[Planned],
) -> Result<Vec<Rebuilt>, RewriteError> {
    let pairs: Vec<(String, String)> = planned
        .iter()
        .map(|p| (p.written.clone(), p.dest.whole()))
        .collect();
    let moved: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let mirrored: HashMap<String, &Reference> =
        planned.iter().map(|p| (p.dest.whole(), &p.dest)).collect();
    let created =
        crate::reproducible::source_date_epoch().map_err(|e| RewriteError::Epoch(e.to_string()))?;
    let moved = &moved;
    let mirrored = &mirrored;
    // A few bundles at a time through the run's engine; the catalog is changed after, in
    // its own order.
    let at_once = engine.options().concurrency.max(1);
    let todo = cfg
        .bundles
        .iter()
        .enumerate()
        .filter_map(|(i, b)| mirrored.get(&b.image).map(|at| (i, b, *at)));
    let mut done: Vec<(usize, String)> = futures::stream::iter(todo)
        .map(|(i, b, at)| async move {
            rebuild_one(engine, &b.name, &b.image, at, moved, created)
                .await
                .map(|pinned| pinned.map(|p| (i, p)))
        })
        .buffer_unordered(at_once)
        .filter_map(|r| async move { r.transpose() })
        .collect::<Vec<Result<_, _>>>()
        .await
        .into_iter()
        .collect::<Result<_, _>>()?;
    done.sort();
    let mut rebuilt = Vec::new();
    for (i, pinned) in done {
        let b = &mut cfg.bundles[i];
        for r in &mut b.related_images {
            if r.image == b.image {
                r.image = pinned.clone();
            }
        }
        rebuilt.push(Rebuilt {
            bundle: b.name.clone(),
            original: std::mem::replace(&mut b.image, pinned.clone()),
            pinned,
        });
    }
    Ok(rebuilt)
}

/// Pulls bundle `name` (`image`, mirrored at `at`), rewrites its manifests and pushes the
/// rebuilt image beside the mirrored copy; its pinned reference, or `None` when no file
/// names a mirrored image.
async fn rebuild_one(
    engine: &Engine,
    name: &str,
    image: &str,
    at: &Reference,
    moved: &[(&str, &str)],
    created: u64,
) -> Result<Option<String>, RewriteError> {
    let scratch = crate::scratch::ScratchDir::new().map_err(|error| RewriteError::Io {
        bundle: name.to_string(),
        path: "a temporary directory".into(),
        error,
    })?;
    let pulled = transfer::pull_to_dir_with(engine, image, None, scratch.path())
        .await
        .map_err(|error| RewriteError::Pull {
            bundle: name.to_string(),
            image: image.to_string(),
            error: Box::new(error),
        })?;
    let manifests = scratch.path().join("manifests");
    if !manifests.is_dir() || rewrite_tree(&manifests, moved, name)? == 0 {
        return Ok(None);
    }
    // The original's labels stay (a vendor's, a build's), the annotations laid over them.
    let labels = pulled.config.config.labels;
    let built = build_bundle_image_over(scratch.path(), created, labels).map_err(|error| {
        RewriteError::Build {
            bundle: name.to_string(),
            error: Box::new(error),
        }
    })?;
    let dest = Reference::with_digest(
        at.registry().to_string(),
        at.repository().to_string(),
        built.digest.clone(),
    )
    .tagged(digest_tag(&built.digest));
    let pushed = engine
        .copy(
            Source::Built(&Artifact::Image(built)),
            &Endpoint::Registry(dest.clone()),
            None,
        )
        .await
        .map_err(|error| RewriteError::Push {
            bundle: name.to_string(),
            dest: dest.whole(),
            error: Box::new(error),
        })?;
    Ok(Some(pushed.pinned))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_references_are_replaced() {
        let moved = [
            ("quay.io/a/op:v1", "m.local/x/a/op:v1"),
            ("quay.io/a/op@sha256:ab", "m.local/x/a/op@sha256:ab"),
        ];
        let text = "image: quay.io/a/op:v1\n  value: \"quay.io/a/op@sha256:ab\"\nother: quay.io/a/op:v1.2 xquay.io/a/op:v1\ncontainerImage: quay.io/a/op:v1";
        assert_eq!(
            replace_references(text, &moved).unwrap(),
            "image: m.local/x/a/op:v1\n  value: \"m.local/x/a/op@sha256:ab\"\nother: quay.io/a/op:v1.2 xquay.io/a/op:v1\ncontainerImage: m.local/x/a/op:v1"
        );
        assert_eq!(replace_references("image: other/op:v1\n", &moved), None);
    }

    #[test]
    fn a_bundle_file_past_the_bound_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("huge.yaml");
        // Sparse: no disk used.
        std::fs::File::create(&big)
            .unwrap()
            .set_len(crate::bundle::load::MAX_MANIFEST_FILE + 1)
            .unwrap();
        let err = rewrite_tree(dir.path(), &[("q.io/a/op:v1", "m.io/p/a/op:v1")], "b")
            .unwrap_err()
            .to_string();
        assert!(err.contains("huge.yaml"), "{err}");
    }

    #[test]
    fn files_keep_their_other_bytes() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        let csv =
            "# a comment\nspec:\n  relatedImages:\n  - image: q.io/a/op:v1   # kept spacing\n";
        std::fs::write(dir.path().join("sub/csv.yaml"), csv).unwrap();
        std::fs::write(dir.path().join("crd.yaml"), "kind: CRD\n").unwrap();
        std::fs::write(dir.path().join("bin"), [0xff, 0xfe, 0x00]).unwrap();
        let n = rewrite_tree(dir.path(), &[("q.io/a/op:v1", "m.io/p/a/op:v1")], "b").unwrap();
        assert_eq!(n, 1);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/csv.yaml")).unwrap(),
            csv.replace("q.io/a/op:v1", "m.io/p/a/op:v1")
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("crd.yaml")).unwrap(),
            "kind: CRD\n"
        );
    }
}
