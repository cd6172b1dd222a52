//! Where blobs were seen: a small record, kept across runs, of the registry repositories that
//! hold each blob (as containers-image's blob-info cache keeps one), so a push to another
//! repository of the same registry can mount the blob instead of uploading it.
//!
//! The record is `${XDG_CACHE_HOME:-~/.cache}/olm/blob-locations.json` (or the file
//! `OLM_BLOB_LOCATIONS` names; `OLM_BLOB_LOCATIONS=off` keeps it in memory only). It holds no
//! secret and no content, only digests and repository names; losing it costs uploads, never
//! correctness, since every mount is checked by the registry.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Repositories remembered per blob, newest first.
const PER_BLOB: usize = 8;
/// Blobs remembered in all; the least recently seen go first.
const BLOBS: usize = 50_000;

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    /// When the blob was last seen (seconds since the epoch).
    t: u64,
    /// `registry/repository` names, newest first.
    at: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    blobs: HashMap<String, Record>,
}

/// The blob locations of this run, loaded lazily and saved by [`BlobLocations::save`].
#[derive(Debug)]
pub struct BlobLocations {
    path: Option<PathBuf>,
    state: Mutex<Option<File>>,
    changed: Mutex<bool>,
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The file the record lives in, from the environment; `None` to keep it in memory.
pub fn default_path() -> Option<PathBuf> {
    match std::env::var_os("OLM_BLOB_LOCATIONS") {
        Some(v) if v == "off" => return None,
        Some(v) if !v.is_empty() => return Some(PathBuf::from(v)),
        _ => {}
    }
    let base = match std::env::var_os("XDG_CACHE_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(std::env::var_os("HOME")?).join(".cache"),
    };
    Some(base.join("olm/blob-locations.json"))
}

fn read(path: &PathBuf) -> File {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            tracing::debug!(path = %path.display(), error = %e, "blob locations unreadable; starting afresh");
            File::default()
        }),
        Err(_) => File::default(),
    }
}

impl BlobLocations {
    pub fn new(path: Option<PathBuf>) -> Self {
        BlobLocations {
            path,
            state: Mutex::new(None),
            changed: Mutex::new(false),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut File) -> T) -> T {
        let mut guard = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let file = guard.get_or_insert_with(|| self.path.as_ref().map(read).unwrap_or_default());
        f(file)
    }

    /// The repositories of `registry` known to hold `digest`, newest first.
    pub fn repositories(&self, digest: &str, registry: &str) -> Vec<String> {
        let prefix = format!("{registry}/");
        self.with(|f| {
            f.blobs.get(digest).map_or_else(Vec::new, |r| {
                r.at.iter()
                    .filter_map(|n| n.strip_prefix(&prefix).map(str::to_string))
                    .collect()
            })
        })
    }

    /// Remembers that `registry/repository` holds `digest`.
    pub fn record(&self, digest: &str, registry: &str, repository: &str) {
        let name = format!("{registry}/{repository}");
        self.with(|f| {
            let r = f.blobs.entry(digest.to_string()).or_default();
            r.t = now();
            r.at.retain(|n| *n != name);
            r.at.insert(0, name);
            r.at.truncate(PER_BLOB);
        });
        *self.changed.lock().unwrap_or_else(|p| p.into_inner()) = true;
    }

    /// Writes the record back, merged with what other runs wrote meanwhile. Failing to save
    /// is only logged: the record is an optimisation.
    pub fn save(&self) {
        let Some(path) = &self.path else {
            return;
        };
        if !std::mem::take(&mut *self.changed.lock().unwrap_or_else(|p| p.into_inner())) {
            return;
        }
        let mine = self
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .unwrap_or_default();
        let mut merged = read(path);
        for (digest, rec) in mine.blobs {
            let into = merged.blobs.entry(digest).or_default();
            if rec.t >= into.t {
                let mut at = rec.at;
                at.append(&mut into.at);
                let mut seen = std::collections::HashSet::new();
                at.retain(|n| seen.insert(n.clone()));
                at.truncate(PER_BLOB);
                *into = Record { t: rec.t, at };
            }
        }
        if merged.blobs.len() > BLOBS {
            let mut by_age: Vec<(u64, String)> =
                merged.blobs.iter().map(|(d, r)| (r.t, d.clone())).collect();
            by_age.sort();
            for (_, d) in by_age.iter().take(merged.blobs.len() - BLOBS) {
                merged.blobs.remove(d);
            }
        }
        merged.version = 1;
        let result = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .map_err(|e| e.to_string())
            .and_then(|()| serde_json::to_vec(&merged).map_err(|e| e.to_string()))
            .and_then(|bytes| {
                crate::atomic_write::write_atomic(path, &bytes).map_err(|e| e.to_string())
            });
        if let Err(e) = result {
            tracing::debug!(path = %path.display(), error = %e, "cannot save blob locations");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locations_are_per_registry_newest_first_and_survive_a_save() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/locations.json");
        let a = BlobLocations::new(Some(path.clone()));
        a.record("sha256:x", "r1:5000", "ns/one");
        a.record("sha256:x", "r1:5000", "ns/two");
        a.record("sha256:x", "r2", "other");
        assert_eq!(a.repositories("sha256:x", "r1:5000"), ["ns/two", "ns/one"]);
        assert_eq!(a.repositories("sha256:x", "r2"), ["other"]);
        assert!(a.repositories("sha256:y", "r1:5000").is_empty());
        a.save();

        // Another run meanwhile saw the blob elsewhere: both survive the merge.
        let b = BlobLocations::new(Some(path.clone()));
        b.record("sha256:x", "r1:5000", "ns/three");
        b.save();
        let c = BlobLocations::new(Some(path));
        assert_eq!(
            c.repositories("sha256:x", "r1:5000"),
            ["ns/three", "ns/two", "ns/one"]
        );
    }

    #[test]
    fn an_unwritable_or_corrupt_file_is_no_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.json");
        std::fs::write(&path, b"{not json").unwrap();
        let a = BlobLocations::new(Some(path));
        assert!(a.repositories("sha256:x", "r").is_empty());
        a.record("sha256:x", "r", "n");
        a.save();
        let none = BlobLocations::new(Some(PathBuf::from("/proc/forbidden/l.json")));
        none.record("sha256:x", "r", "n");
        none.save();
    }
}
