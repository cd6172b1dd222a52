//! The directory a layer is applied to, as a handle whose every operation stays inside it.
//!
//! Paths are resolved one component at a time from open directory handles (`cap_std::fs::Dir`,
//! which refuses to leave its directory), the way `openat2(RESOLVE_IN_ROOT)` and Go's
//! `securejoin` resolve them for container runtimes: a symbolic link met in a parent position
//! is followed *inside* the root (an absolute target starts again at the root, `..` stops at
//! it), never on the host. Symbolic links the image creates are written in a canonical form,
//! `../` up to the root then plain names, so that a later reader that follows them with
//! ordinary host calls (the catalog loader, `olm catalog serve`) still cannot leave the root.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

use cap_std::fs::Dir;

/// Linux's limit on symbolic links followed in one resolution (`MAXSYMLINKS`).
const MAX_LINK_HOPS: usize = 40;

/// Why an entry was refused: said in the error that names the layer and the entry.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("{0:?} is not a directory")]
    NotADirectory(PathBuf),
    #[error("too many levels of symbolic links")]
    LinkLoop,
    #[error("a hard link must name a regular file inside the image; {0:?} is not one")]
    HardLinkTarget(PathBuf),
    #[error("the name leads outside the image (\"..\")")]
    Escape,
    #[error("whiteout of {0:?} is not a name")]
    BadWhiteout(String),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A directory reached inside the root: its handle and its physical path from the root.
pub struct Resolved {
    pub dir: Dir,
    pub path: PathBuf,
}

/// The root of an unpacked image.
pub struct Root {
    dir: Dir,
    /// The last parent directory resolved, by the logical path asked for: entries of one
    /// directory come together in a layer, so most lookups are one map probe. Dropped whenever
    /// the tree changes in a way that could change a resolution (a removal, a new link).
    last: Option<(PathBuf, Resolved)>,
}

impl Root {
    /// Opens `path` (which must exist) as the root.
    pub fn open(path: &Path) -> io::Result<Self> {
        let dir = Dir::open_ambient_dir(path, cap_std::ambient_authority())?;
        Ok(Root { dir, last: None })
    }

    /// Forgets the cached resolution: the tree changed.
    pub fn changed(&mut self) {
        self.last = None;
    }

    /// The directory `logical` names, resolved inside the root. With `create`, missing
    /// directories are made (0755); without, a missing one gives `None`.
    pub fn dir(&mut self, logical: &Path, create: bool) -> Result<Option<&Resolved>, Refusal> {
        let hit = matches!(&self.last, Some((p, _)) if p == logical);
        if !hit {
            let Some(resolved) = self.resolve(logical, create)? else {
                return Ok(None);
            };
            self.last = Some((logical.to_path_buf(), resolved));
        }
        Ok(self.last.as_ref().map(|(_, r)| r))
    }

    fn resolve(&self, logical: &Path, create: bool) -> Result<Option<Resolved>, Refusal> {
        // Components still to walk, last first; a link's target is pushed in front of them.
        let mut pending: Vec<OsString> = Vec::new();
        push_components(&mut pending, logical)?;
        // The physical chain walked so far: handles and names, root excluded.
        let mut handles: Vec<Dir> = Vec::new();
        let mut names: Vec<OsString> = Vec::new();
        let mut hops = 0;
        while let Some(name) = pending.pop() {
            if name == ".." {
                handles.pop();
                names.pop();
                continue;
            }
            let cur = handles.last().unwrap_or(&self.dir);
            let meta = match cur.symlink_metadata(&name) {
                Ok(m) => Some(m),
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(e.into()),
            };
            match meta {
                None if !create => return Ok(None),
                None => {
                    match cur.create_dir(&name) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(e.into()),
                    }
                    let next = cur.open_dir(&name)?;
                    handles.push(next);
                    names.push(name);
                }
                Some(m) if m.file_type().is_symlink() => {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Err(Refusal::LinkLoop);
                    }
                    let target = cur.read_link_contents(&name)?;
                    if target.is_absolute() {
                        handles.clear();
                        names.clear();
                    }
                    push_link_components(&mut pending, &target);
                }
                Some(m) if m.is_dir() => {
                    let next = cur.open_dir(&name)?;
                    handles.push(next);
                    names.push(name);
                }
                Some(_) => {
                    let mut at: PathBuf = names.iter().collect();
                    at.push(&name);
                    return Err(Refusal::NotADirectory(at));
                }
            }
        }
        let dir = match handles.pop() {
            Some(d) => d,
            None => self.dir.try_clone()?,
        };
        Ok(Some(Resolved {
            dir,
            path: names.iter().collect(),
        }))
    }
}

/// Pushes a relative entry path's names onto `pending` (last first). Entry names are data: a
/// `..` in one is refused rather than resolved.
fn push_components(pending: &mut Vec<OsString>, path: &Path) -> Result<(), Refusal> {
    let mut names = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(n) => names.push(n.to_os_string()),
            Component::CurDir | Component::RootDir => {}
            Component::ParentDir | Component::Prefix(_) => return Err(Refusal::Escape),
        }
    }
    pending.extend(names.into_iter().rev());
    Ok(())
}

/// Pushes a link target's names onto `pending` (last first); `..` is kept, the walk pops the
/// physical chain for it and stops at the root.
fn push_link_components(pending: &mut Vec<OsString>, target: &Path) {
    let names: Vec<OsString> = target
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    pending.extend(names.into_iter().rev());
}

/// The text to store for a link created in `link_dir` (its physical path from the root) whose
/// image target is `target`: the target itself when following it can only go down from the
/// link's directory, or up at most to the root (`olm`, `usr/lib/x`, `../lib/x` one level deep),
/// else [`canonical_link`]. A `..` after a name could climb out through a link (`x/../..`
/// with `x -> .`), and an absolute target means the host's root to the host.
pub fn link_text(link_dir: &Path, target: &Path) -> PathBuf {
    let depth = link_dir
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .count();
    let mut ups = 0;
    let mut named = false;
    let mut safe = !target.as_os_str().is_empty();
    for c in target.components() {
        match c {
            Component::ParentDir if !named => ups += 1,
            Component::Normal(_) => named = true,
            Component::CurDir => {}
            _ => safe = false,
        }
    }
    if safe && ups <= depth {
        target.to_path_buf()
    } else {
        canonical_link(link_dir, target)
    }
}

/// The canonical text of a link created in `link_dir` (its physical path from the root) whose
/// image target is `target`: `../` back to the root, then
/// the target's names as a container would resolve them lexically (absolute from the root,
/// relative from the link's directory, `..` stopping at the root). Every link in the tree then
/// resolves inside the root whatever follows it, host calls included.
pub fn canonical_link(link_dir: &Path, target: &Path) -> PathBuf {
    let dir_names: Vec<&OsStr> = link_dir
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let mut names = if target.is_absolute() {
        Vec::new()
    } else {
        dir_names.clone()
    };
    for c in target.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::ParentDir => {
                names.pop();
            }
            _ => {}
        }
    }
    let mut out: PathBuf = std::iter::repeat_n(OsStr::new(".."), dir_names.len()).collect();
    out.extend(names);
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Removes `name` from `dir` whatever it is (a directory with everything in it), without
/// following it when it is a link. A missing name is not an error.
pub fn remove_any(dir: &Dir, name: &OsStr) -> io::Result<bool> {
    match dir.symlink_metadata(name) {
        Ok(m) if m.is_dir() => dir.remove_dir_all(name).map(|()| true),
        Ok(_) => dir.remove_file(name).map(|()| true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_links_climb_to_the_root_then_name_the_target() {
        let at = |dir: &str, t: &str| canonical_link(Path::new(dir), Path::new(t));
        assert_eq!(at("", "/etc/passwd"), PathBuf::from("etc/passwd"));
        assert_eq!(at("a/b", "/etc"), PathBuf::from("../../etc"));
        assert_eq!(at("a/b", "c"), PathBuf::from("../../a/b/c"));
        assert_eq!(at("a/b", "../../../../x"), PathBuf::from("../../x"));
        assert_eq!(at("a", "/"), PathBuf::from(".."));
        assert_eq!(at("", ".."), PathBuf::from("."));
        assert_eq!(at("usr", "lib/../bin"), PathBuf::from("../usr/bin"));
    }

    #[test]
    fn links_that_cannot_climb_out_keep_their_text() {
        let at = |dir: &str, t: &str| link_text(Path::new(dir), Path::new(t));
        assert_eq!(at("bin", "olm"), PathBuf::from("olm"));
        assert_eq!(at("lib", "../usr/lib/x"), PathBuf::from("../usr/lib/x"));
        assert_eq!(at("", "../x"), PathBuf::from("x"));
        assert_eq!(at("a", "/etc"), PathBuf::from("../etc"));
        assert_eq!(at("a/b", "x/../../y"), PathBuf::from("../../a/y"));
    }

    #[test]
    fn parents_resolve_inside_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let root_path = tmp.path().join("root");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&root_path).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root_path.join("evil")).unwrap();
        std::os::unix::fs::symlink("../../..", root_path.join("up")).unwrap();
        std::os::unix::fs::symlink("loop", root_path.join("loop")).unwrap();
        let mut root = Root::open(&root_path).unwrap();
        let r = root.dir(Path::new("evil/x"), true).unwrap().unwrap();
        assert_eq!(r.path, outside.strip_prefix("/").unwrap().join("x"));
        assert!(root_path.join(&r.path).is_dir());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        let r = root.dir(Path::new("up/y"), true).unwrap().unwrap();
        assert_eq!(r.path, PathBuf::from("y"));
        assert!(matches!(
            root.dir(Path::new("loop/z"), true),
            Err(Refusal::LinkLoop)
        ));
        assert!(matches!(
            root.dir(Path::new("a/../b"), true),
            Err(Refusal::Escape)
        ));
    }
}
