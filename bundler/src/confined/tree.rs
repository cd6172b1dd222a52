//! [`Tree`]: a directory the files of a catalog, a bundle or an archive are read from.

use std::ffi::{OsStr, OsString};
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cap_std::fs::Dir;

use super::RelPath;

/// A directory tree read by [`RelPath`]s.
///
/// - **Confined** ([`Tree::confined`]): an unpacked image or a mirror archive. Every path is
///   opened relative to a directory handle on the tree's root (`cap_std::fs::Dir`), which
///   refuses to leave it: a symbolic link that would lead out (an absolute target, too many
///   `..`) fails with an error instead of reaching the host, even if the unpacker's own
///   guarantees were bypassed. Links that stay inside (the unpacker stores them so) are
///   followed as usual.
/// - **Host** ([`Tree::host`]): a directory the user named on the command line, read with
///   ordinary calls, links followed wherever they go, as opm's `os.DirFS` follows them.
///
/// [`Tree::subtree`] narrows either to a directory inside it; a confined subtree still
/// resolves links against the whole root (an image's `/configs/x -> ../shared/x` works).
#[derive(Clone, Debug)]
pub struct Tree {
    kind: Kind,
    /// Where reads start, below the root.
    base: RelPath,
    /// The root as it is shown in messages (the host path it was opened from).
    shown: PathBuf,
}

#[derive(Clone, Debug)]
enum Kind {
    Host,
    Confined(Arc<Dir>),
}

/// What a path in a tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    File,
    Symlink,
    /// A device, FIFO or socket: never read.
    Other,
}

/// A path's kind and size.
#[derive(Debug, Clone, Copy)]
pub struct Meta {
    pub kind: EntryKind,
    pub len: u64,
}

fn kind_of(ft: std::fs::FileType) -> EntryKind {
    if ft.is_dir() {
        EntryKind::Dir
    } else if ft.is_file() {
        EntryKind::File
    } else if ft.is_symlink() {
        EntryKind::Symlink
    } else {
        EntryKind::Other
    }
}

fn cap_kind(ft: cap_std::fs::FileType) -> EntryKind {
    if ft.is_dir() {
        EntryKind::Dir
    } else if ft.is_file() {
        EntryKind::File
    } else if ft.is_symlink() {
        EntryKind::Symlink
    } else {
        EntryKind::Other
    }
}

/// A tree made in memory, with no files of its own (a bundle rebuilt from a catalog): paths
/// read from it are relative to the working directory, as an empty root always was.
impl Default for Tree {
    fn default() -> Self {
        Tree::host(Path::new(""))
    }
}

impl Tree {
    /// A directory (or a single file) the user named: read with host calls.
    pub fn host(path: &Path) -> Tree {
        Tree {
            kind: Kind::Host,
            base: RelPath::root(),
            shown: path.to_path_buf(),
        }
    }

    /// The directory at `root` (an unpacked image, an archive), every read confined to it.
    /// `root` itself is the caller's own (a scratch directory, an argument): the one host
    /// path opened here.
    pub fn confined(root: &Path) -> io::Result<Tree> {
        let dir = Dir::open_ambient_dir(root, cap_std::ambient_authority())?;
        Ok(Tree {
            kind: Kind::Confined(Arc::new(dir)),
            base: RelPath::root(),
            shown: root.to_path_buf(),
        })
    }

    /// The tree of the directory `rel` names, inside this one (same root).
    pub fn subtree(&self, rel: &RelPath) -> Tree {
        Tree {
            kind: self.kind.clone(),
            base: self.base.join(rel),
            shown: self.shown.clone(),
        }
    }

    /// Whether reads are confined to a root.
    pub fn is_confined(&self) -> bool {
        matches!(self.kind, Kind::Confined(_))
    }

    /// Where this tree starts below its root.
    pub fn base(&self) -> &RelPath {
        &self.base
    }

    /// `rel` as messages show it: the host path the root was opened from, then the names.
    /// For messages only: nothing is ever opened by this path.
    pub fn shown(&self, rel: &RelPath) -> PathBuf {
        let mut out = self.shown.clone();
        out.extend(self.base.names());
        out.extend(rel.names());
        out
    }

    /// The tree's own directory as messages show it.
    pub fn shown_root(&self) -> PathBuf {
        self.shown(&RelPath::root())
    }

    fn host_path(&self, rel: &RelPath) -> PathBuf {
        // Host trees are the user's: the one join, of a listing's own names, lives here.
        self.shown(rel)
    }

    fn full(&self, rel: &RelPath) -> RelPath {
        self.base.join(rel)
    }

    /// What `rel` is, a link followed (inside the root for a confined tree).
    pub fn metadata(&self, rel: &RelPath) -> io::Result<Meta> {
        match &self.kind {
            Kind::Host => std::fs::metadata(self.host_path(rel)).map(|m| Meta {
                kind: kind_of(m.file_type()),
                len: m.len(),
            }),
            Kind::Confined(dir) => dir.metadata(self.full(rel).for_handle()).map(|m| Meta {
                kind: cap_kind(m.file_type()),
                len: m.len(),
            }),
        }
    }

    /// What `rel` is, a link not followed.
    pub fn symlink_metadata(&self, rel: &RelPath) -> io::Result<Meta> {
        match &self.kind {
            Kind::Host => std::fs::symlink_metadata(self.host_path(rel)).map(|m| Meta {
                kind: kind_of(m.file_type()),
                len: m.len(),
            }),
            Kind::Confined(dir) => {
                dir.symlink_metadata(self.full(rel).for_handle())
                    .map(|m| Meta {
                        kind: cap_kind(m.file_type()),
                        len: m.len(),
                    })
            }
        }
    }

    /// Whether `rel` is a directory (a link followed).
    pub fn is_dir(&self, rel: &RelPath) -> bool {
        self.metadata(rel).is_ok_and(|m| m.kind == EntryKind::Dir)
    }

    /// Whether `rel` is a regular file (a link followed).
    pub fn is_file(&self, rel: &RelPath) -> bool {
        self.metadata(rel).is_ok_and(|m| m.kind == EntryKind::File)
    }

    /// Opens `rel` for reading, refusing anything but a regular file (a link followed).
    pub fn open_regular(&self, rel: &RelPath) -> io::Result<std::fs::File> {
        let file = self.open(rel)?;
        match file.metadata()?.is_file() {
            true => Ok(file),
            false => Err(io::Error::other("not a regular file")),
        }
    }

    /// The entries of the directory `rel`, sorted by name, each with its kind (a link not
    /// followed). Entries that cannot be read are left out, as the loaders always did.
    pub fn read_dir(&self, rel: &RelPath) -> io::Result<Vec<(OsString, EntryKind)>> {
        let mut out: Vec<(OsString, EntryKind)> = match &self.kind {
            Kind::Host => std::fs::read_dir(self.host_path(rel))?
                .filter_map(Result::ok)
                .filter_map(|e| Some((e.file_name(), kind_of(e.file_type().ok()?))))
                .collect(),
            Kind::Confined(dir) => dir
                .read_dir(self.full(rel).for_handle())?
                .filter_map(Result::ok)
                .filter_map(|e| Some((e.file_name(), cap_kind(e.file_type().ok()?))))
                .collect(),
        };
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    }

    /// Opens the file `rel` for reading.
    pub fn open(&self, rel: &RelPath) -> io::Result<std::fs::File> {
        match &self.kind {
            Kind::Host => std::fs::File::open(self.host_path(rel)),
            Kind::Confined(dir) => dir
                .open(self.full(rel).for_handle())
                .map(cap_std::fs::File::into_std),
        }
    }

    /// Reads the file `rel` whole into `buf` (cleared first, its memory reused).
    pub fn read_into(&self, rel: &RelPath, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.clear();
        self.open(rel)?.read_to_end(buf).map(drop)
    }

    /// Reads the file `rel` whole.
    pub fn read(&self, rel: &RelPath) -> io::Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.read_into(rel, &mut buf)?;
        Ok(buf)
    }

    /// Reads the regular file `rel`, refusing more than `limit` bytes (the read itself is
    /// bounded: a FIFO or a link to `/dev/zero` never ends). `None` when the file is larger.
    pub fn read_bounded(&self, rel: &RelPath, limit: u64) -> io::Result<Option<Vec<u8>>> {
        let file = self.open_regular(rel)?;
        let meta = file.metadata()?;
        if meta.len() > limit {
            return Ok(None);
        }
        let mut data = Vec::with_capacity(meta.len() as usize);
        file.take(limit + 1).read_to_end(&mut data)?;
        Ok((data.len() as u64 <= limit).then_some(data))
    }
}

impl Tree {
    /// Replaces the directory `rel` of this confined tree with one `fill` writes, as a whole:
    /// `fill` writes into a fresh directory of ours at the tree's root (`.olm-new-<random>`, made
    /// exclusively,
    /// its host path handed to `fill`), which is then renamed into place through directory
    /// handles. `rel`'s parents are made or followed inside the root only; an old `rel`
    /// (whatever it is, a link included) is moved aside and removed without following links.
    /// Nothing outside the root is created, replaced or deleted. When `fill` fails nothing
    /// changes. `fail` makes the caller's error of a path (as shown) and an I/O error.
    pub fn replace_dir<T, E>(
        &self,
        rel: &RelPath,
        fill: impl FnOnce(&Path) -> Result<T, E>,
        fail: impl Fn(PathBuf, io::Error) -> E,
    ) -> Result<T, E> {
        let target = self.full(rel);
        let (Kind::Confined(root), Some(name), Some(parent)) =
            (&self.kind, target.file_name(), target.parent())
        else {
            let why = "only a directory inside a confined tree is replaced";
            return Err(fail(self.shown(rel), io::Error::other(why)));
        };
        // A random name made exclusively: another process sharing the directory can neither
        // guess it nor have made it first.
        let mut attempt = 0;
        let (fresh, token) = loop {
            let token = format!("{:016x}", crate::scratch::random_u64());
            let fresh = format!(".olm-new-{token}");
            match root.create_dir(&fresh) {
                Ok(()) => break (fresh, token),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 16 => {
                    attempt += 1;
                }
                Err(e) => return Err(fail(self.shown.join(&fresh), e)),
            }
        };
        // A name of ours under the root the caller opened: never a path from outside data.
        let filled = match fill(&self.shown.join(&fresh)) {
            Ok(v) => v,
            Err(e) => {
                let _ = remove_any(root, OsStr::new(&fresh));
                return Err(e);
            }
        };
        let swapped = (|| -> io::Result<()> {
            let dir = match parent.is_root() {
                true => root.try_clone()?,
                false => {
                    root.create_dir_all(parent.for_handle())?;
                    root.open_dir(parent.for_handle())?
                }
            };
            let aside = format!(".{}.old-{token}", name.to_string_lossy());
            let had = match dir.symlink_metadata(name) {
                Ok(_) => {
                    let _ = remove_any(&dir, OsStr::new(&aside));
                    dir.rename(name, &dir, &aside)?;
                    true
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => false,
                Err(e) => return Err(e),
            };
            if let Err(e) = root.rename(&fresh, &dir, name) {
                if had {
                    let _ = dir.rename(&aside, &dir, name);
                }
                return Err(e);
            }
            if had {
                remove_any(&dir, OsStr::new(&aside))?;
            }
            Ok(())
        })();
        if swapped.is_err() {
            let _ = remove_any(root, OsStr::new(&fresh));
        }
        swapped.map_err(|e| fail(self.shown(rel), e))?;
        Ok(filled)
    }

    /// Every path below the tree's own directory that is a symbolic link or a special file
    /// (a device, FIFO or socket), in name order: none for a tree `olm` wrote itself.
    pub fn links_and_specials(&self) -> io::Result<Vec<RelPath>> {
        let mut out = Vec::new();
        let mut stack = vec![RelPath::root()];
        while let Some(dir) = stack.pop() {
            for (name, kind) in self.read_dir(&dir)? {
                let Ok(rel) = dir.child(&name) else {
                    continue;
                };
                match kind {
                    EntryKind::Dir => stack.push(rel),
                    EntryKind::File => {}
                    EntryKind::Symlink | EntryKind::Other => out.push(rel),
                }
            }
        }
        out.sort();
        Ok(out)
    }
}

/// Removes `name` from `dir` whatever it is (a directory with everything in it), without
/// following it when it is a link. A missing name is not an error.
fn remove_any(dir: &Dir, name: &OsStr) -> io::Result<()> {
    match dir.symlink_metadata(name) {
        Ok(m) if m.is_dir() => dir.remove_dir_all(name),
        Ok(_) => dir.remove_file(name),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Whether an error says a path led out of a confined tree (what a hostile link gives).
pub fn is_escape(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied
        && e.to_string().contains("outside of the filesystem")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn rel(s: &str) -> RelPath {
        RelPath::parse(s).unwrap()
    }

    /// A root with a catalog under `configs`, links inside and out, and a canary outside.
    fn area() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("configs/p")).unwrap();
        std::fs::create_dir_all(root.join("shared")).unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        std::fs::write(tmp.path().join("outside/secret"), "SECRET").unwrap();
        std::fs::write(root.join("configs/p/c.json"), "inside").unwrap();
        std::fs::write(root.join("shared/s.json"), "shared").unwrap();
        symlink("../../shared/s.json", root.join("configs/p/up.json")).unwrap();
        symlink(
            tmp.path().join("outside/secret"),
            root.join("configs/p/abs.json"),
        )
        .unwrap();
        symlink("../../../outside/secret", root.join("configs/p/climb.json")).unwrap();
        symlink(tmp.path().join("outside"), root.join("configs/out")).unwrap();
        (tmp, root)
    }

    #[test]
    fn confined_reads_follow_links_inside_and_refuse_links_out() {
        let (_tmp, root) = area();
        let tree = Tree::confined(&root).unwrap().subtree(&rel("configs"));
        assert_eq!(tree.read(&rel("p/c.json")).unwrap(), b"inside");
        assert_eq!(tree.read(&rel("p/up.json")).unwrap(), b"shared");
        for out in ["p/abs.json", "p/climb.json", "out/secret"] {
            let e = tree.read(&rel(out)).unwrap_err();
            assert!(is_escape(&e), "{out}: {e}");
            assert!(tree.metadata(&rel(out)).is_err(), "{out}");
        }
        assert!(tree.read_dir(&rel("out")).is_err());
        let names: Vec<_> = tree.read_dir(&rel("p")).unwrap();
        assert_eq!(
            names.iter().map(|(n, _)| n.as_os_str()).collect::<Vec<_>>(),
            ["abs.json", "c.json", "climb.json", "up.json"].map(OsStr::new)
        );
        assert_eq!(names[1].1, EntryKind::File);
        assert_eq!(names[0].1, EntryKind::Symlink);
        assert!(tree.is_dir(&RelPath::root()));
        assert_eq!(tree.shown(&rel("p/c.json")), root.join("configs/p/c.json"));
    }

    #[test]
    fn host_trees_follow_links_anywhere() {
        let (_tmp, root) = area();
        let tree = Tree::host(&root.join("configs"));
        assert_eq!(tree.read(&rel("p/abs.json")).unwrap(), b"SECRET");
        assert!(!tree.is_confined());
    }

    #[test]
    fn bounded_reads_stop_at_the_limit() {
        let (_tmp, root) = area();
        let tree = Tree::confined(&root).unwrap();
        assert_eq!(
            tree.read_bounded(&rel("configs/p/c.json"), 6).unwrap(),
            Some(b"inside".to_vec())
        );
        assert_eq!(
            tree.read_bounded(&rel("configs/p/c.json"), 5).unwrap(),
            None
        );
        assert!(tree.read_bounded(&rel("configs"), 5).is_err());
    }

    #[test]
    fn replacing_a_directory_never_leaves_the_root() {
        let (tmp, root) = area();
        let tree = Tree::confined(&root).unwrap();
        let fail = |p: PathBuf, e: io::Error| format!("{}: {e}", p.display());
        let write = |dir: &Path| std::fs::write(dir.join("new"), "new").map_err(|e| e.to_string());
        // New, then replaced.
        tree.replace_dir(&rel("a/b"), write, fail).unwrap();
        assert_eq!(std::fs::read(root.join("a/b/new")).unwrap(), b"new");
        tree.replace_dir(&rel("a/b"), write, fail).unwrap();
        // Through a link out, or of a link out: refused, or the link alone replaced.
        symlink(tmp.path().join("outside"), root.join("linked")).unwrap();
        assert!(tree.replace_dir(&rel("linked/x"), write, fail).is_err());
        tree.replace_dir(&rel("linked"), write, fail).unwrap();
        assert!(root.join("linked").is_dir() && !root.join("linked").is_symlink());
        assert_eq!(
            std::fs::read(tmp.path().join("outside/secret")).unwrap(),
            b"SECRET"
        );
        assert_eq!(
            std::fs::read_dir(tmp.path().join("outside"))
                .unwrap()
                .count(),
            1
        );
        // A failed fill changes nothing and leaves nothing behind.
        let failing = |_: &Path| Err::<(), String>("no".into());
        assert!(tree.replace_dir(&rel("a/b"), failing, fail).is_err());
        assert_eq!(std::fs::read(root.join("a/b/new")).unwrap(), b"new");
        let leftovers: Vec<_> = std::fs::read_dir(&root)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
        let specials = tree.links_and_specials().unwrap();
        let specials: Vec<String> = specials.iter().map(|r| r.to_string()).collect();
        assert_eq!(
            specials,
            [
                "configs/out",
                "configs/p/abs.json",
                "configs/p/climb.json",
                "configs/p/up.json"
            ]
        );
    }
}
