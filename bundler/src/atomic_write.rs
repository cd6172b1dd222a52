//! File-system writes that never leave a half-written file behind.
//!
//! Every output of the tool goes through here: the bytes land in a temporary file in the same
//! directory, are flushed, and then renamed over the target, so a crash or a full disk leaves
//! either the old file or the new one.

use std::io::Write;
use std::path::{Path, PathBuf};

/// An output that could not be written, naming the path.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot write: {source}")]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

fn werr(path: &Path) -> impl FnOnce(std::io::Error) -> WriteError + '_ {
    move |source| WriteError {
        path: path.to_path_buf(),
        source,
    }
}

/// Writes `bytes` to `path` atomically, creating parent directories. Returns `false` without
/// touching the file when it already holds exactly these bytes (keeps mtimes stable, so
/// re-running a generator is a no-op for make-style tools).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<bool, WriteError> {
    if let Ok(existing) = std::fs::read(path)
        && existing == bytes
    {
        return Ok(false);
    }
    write_new(path, bytes, false)?;
    Ok(true)
}

/// [`write_atomic`] for secrets (auth files): the file, and the temporary file before it, are
/// created with mode 0600, a missing parent directory with 0700, so no other user can read
/// the bytes at any moment. Always writes.
pub fn write_atomic_private(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    write_new(path, bytes, true)
}

fn write_new(path: &Path, bytes: &[u8], private: bool) -> Result<(), WriteError> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if private {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    } else {
        std::fs::create_dir_all(dir)
    }
    .map_err(werr(dir))?;
    // A random name made exclusively (never one a leftover, or a link someone planted, could
    // hold), with the mode the file would get from a plain create: 0666 less the umask, or
    // 0600 for a secret.
    let mode = if private { 0o600 } else { 0o666 };
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{}.tmp-", side_name(path)))
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(werr(path))?;
    let _partial = crate::scratch::remove_on_signal(tmp.path());
    tmp.write_all(bytes).map_err(werr(path))?;
    tmp.as_file().sync_all().map_err(werr(path))?;
    tmp.persist(path).map_err(|e| werr(path)(e.error))?;
    Ok(())
}

/// The file name of `path` for the temporary names beside it.
fn side_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into())
}

/// Fills a fresh directory beside `dir` with `fill`, then puts it in `dir`'s place with a
/// rename, so `dir` is either what it was or the whole new tree, never part of it. An old
/// `dir` is moved aside first and removed last; when `fill` fails nothing changes.
pub fn replace_dir<T, E: From<WriteError>>(
    dir: &Path,
    fill: impl FnOnce(&Path) -> Result<T, E>,
) -> Result<T, E> {
    let parent = match dir.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(parent).map_err(werr(parent))?;
    // Random names made exclusively, with the mode a plain `mkdir` gives (0777 less the
    // umask): the new tree becomes `dir` itself.
    let side = |what: &str| {
        use std::os::unix::fs::PermissionsExt as _;
        tempfile::Builder::new()
            .prefix(&format!(".{}.{what}-", side_name(dir)))
            .permissions(std::fs::Permissions::from_mode(0o777))
            .tempdir_in(parent)
            .map_err(werr(parent))
    };
    let tmp_dir = side("tmp")?;
    let _partial = crate::scratch::remove_on_signal(tmp_dir.path());
    // On an error the tree is removed when `tmp_dir` drops.
    let filled = fill(tmp_dir.path())?;
    let tmp = tmp_dir.keep();
    let swapped = (|| {
        if dir.exists() {
            // Renamed over an empty directory of our own making: a name nobody else holds.
            // (Not removed by an interrupt: until the next rename it is the only copy.)
            let old = side("old").map_err(|e| e.source)?.keep();
            std::fs::rename(dir, &old)?;
            if let Err(e) = std::fs::rename(&tmp, dir) {
                let _ = std::fs::rename(&old, dir);
                return Err(e);
            }
            std::fs::remove_dir_all(&old)
        } else {
            std::fs::rename(&tmp, dir)
        }
    })();
    if swapped.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    swapped.map_err(werr(dir))?;
    Ok(filled)
}

/// A set of files to write under one root, replaced as a whole.
///
/// Generators (bundle, catalog, deploy) build the complete tree in memory first; only when every
/// file has been produced without error is anything written. Files under `root` that are not in
/// the set are removed afterwards (for the directories the generator owns), so a renamed CRD
/// does not leave its old file behind.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FileTree {
    files: std::collections::BTreeMap<PathBuf, Vec<u8>>,
}

/// What writing a tree changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TreeChanges {
    pub written: Vec<PathBuf>,
    pub removed: Vec<PathBuf>,
    pub unchanged: usize,
}

impl TreeChanges {
    pub fn is_empty(&self) -> bool {
        self.written.is_empty() && self.removed.is_empty()
    }
}

impl FileTree {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a file at a path relative to the tree root.
    pub fn insert(&mut self, rel: impl Into<PathBuf>, bytes: impl Into<Vec<u8>>) {
        self.files.insert(rel.into(), bytes.into());
    }

    pub fn get(&self, rel: &Path) -> Option<&[u8]> {
        self.files.get(rel).map(Vec::as_slice)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&PathBuf, &Vec<u8>)> {
        self.files.iter()
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Compares the tree with what is on disk under `root`, for `--check`: returns the relative
    /// paths that differ, are missing, or are extra (within `owned_dirs`, relative to root).
    /// How `rel` under `root` differs from this tree: `missing x`, `extra x`, or
    /// `differs x:N: ...` at the first differing line.
    pub fn describe_difference(&self, root: &Path, rel: &Path) -> String {
        let shown = root.join(rel).display().to_string();
        let Some(want) = self.get(rel) else {
            return format!("extra   {shown} (not generated any more)");
        };
        let Ok(have) = std::fs::read(root.join(rel)) else {
            return format!("missing {shown}");
        };
        let want = String::from_utf8_lossy(want);
        let have = String::from_utf8_lossy(&have);
        let (mut w, mut h) = (want.lines(), have.lines());
        let mut line = 1;
        loop {
            match (w.next(), h.next()) {
                (Some(a), Some(b)) if a == b => line += 1,
                (Some(a), Some(b)) => {
                    return format!("differs {shown}:{line}: have {b:?}, want {a:?}");
                }
                (Some(a), None) => return format!("differs {shown}:{line}: missing line {a:?}"),
                (None, Some(b)) => return format!("differs {shown}:{line}: extra line {b:?}"),
                (None, None) => return format!("differs {shown} (line endings)"),
            }
        }
    }

    pub fn diff_against(&self, root: &Path, owned_dirs: &[&str]) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for (rel, bytes) in &self.files {
            match std::fs::read(root.join(rel)) {
                Ok(existing) if &existing == bytes => {}
                _ => out.push(rel.clone()),
            }
        }
        for extra in self.extra_files(root, owned_dirs) {
            out.push(extra);
        }
        out.sort();
        out
    }

    fn extra_files(&self, root: &Path, owned_dirs: &[&str]) -> Vec<PathBuf> {
        let mut extra = Vec::new();
        for dir in owned_dirs {
            let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
                continue;
            };
            for entry in entries.flatten() {
                let rel = Path::new(dir).join(entry.file_name());
                if entry.file_type().map(|t| t.is_file()).unwrap_or(false)
                    && !self.files.contains_key(&rel)
                {
                    extra.push(rel);
                }
            }
        }
        extra
    }

    /// Writes every file atomically under `root`, then removes files in `owned_dirs` that the
    /// tree does not contain.
    pub fn write(&self, root: &Path, owned_dirs: &[&str]) -> Result<TreeChanges, WriteError> {
        let mut changes = TreeChanges::default();
        for (rel, bytes) in &self.files {
            let path = root.join(rel);
            if write_atomic(&path, bytes)? {
                changes.written.push(rel.clone());
            } else {
                changes.unchanged += 1;
            }
        }
        for rel in self.extra_files(root, owned_dirs) {
            let path = root.join(&rel);
            std::fs::remove_file(&path).map_err(werr(&path))?;
            changes.removed.push(rel);
        }
        Ok(changes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_is_atomic_and_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/c.txt");
        assert!(write_atomic(&p, b"one").unwrap());
        assert!(!write_atomic(&p, b"one").unwrap());
        assert!(write_atomic(&p, b"two").unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"two");
        let leftovers: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temp files remain");
    }

    #[test]
    fn replace_dir_swaps_the_whole_tree_or_nothing() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        let fill = |files: &'static [&'static str]| {
            move |tmp: &Path| -> Result<(), WriteError> {
                for f in files {
                    std::fs::write(tmp.join(f), f).map_err(werr(tmp))?;
                }
                Ok(())
            }
        };
        replace_dir(&dir, fill(&["a", "b"])).unwrap();
        replace_dir(&dir, fill(&["c"])).unwrap();
        let names = |d: &Path| {
            let mut v: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(&dir), ["c"]);
        let failed: Result<(), WriteError> = replace_dir(&dir, |tmp| {
            std::fs::write(tmp.join("half"), "x").unwrap();
            Err(werr(tmp)(std::io::Error::other("disk full")))
        });
        assert!(failed.is_err());
        assert_eq!(names(&dir), ["c"]);
        assert_eq!(
            names(root.path()),
            ["out"],
            "no temporary directory is left"
        );
    }

    #[test]
    fn tree_removes_stale_files_in_owned_dirs_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("manifests")).unwrap();
        std::fs::write(dir.path().join("manifests/old.yaml"), "x").unwrap();
        std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
        let mut t = FileTree::new();
        t.insert("manifests/new.yaml", "y");
        assert_eq!(
            t.diff_against(dir.path(), &["manifests"]),
            vec![
                PathBuf::from("manifests/new.yaml"),
                PathBuf::from("manifests/old.yaml")
            ]
        );
        let ch = t.write(dir.path(), &["manifests"]).unwrap();
        assert_eq!(ch.removed, vec![PathBuf::from("manifests/old.yaml")]);
        assert!(dir.path().join("keep.txt").exists());
        assert!(t.diff_against(dir.path(), &["manifests"]).is_empty());
    }
}
