//! [`RelPath`]: a path named by outside data, checked once when it is read.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Path, PathBuf};

/// A path below a directory, named by outside data (an image label, an archive's metadata, a
/// directory listing): a sequence of plain names, none empty, `.`, `..` or holding a NUL byte
/// or a `/`. It cannot name anything above the directory it is taken from, and it is only ever
/// opened through a [`super::Tree`], never joined onto a host path. The empty sequence is the
/// directory itself ([`RelPath::root`]); parsing never yields it from text unless the form
/// allows it ([`RelPath::in_image`]).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct RelPath {
    /// The names joined by `/`: no leading, trailing or doubled `/`.
    text: OsString,
}

/// Why a text is not a [`RelPath`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PathRefusal {
    #[error("the path is empty")]
    Empty,
    #[error("the path is absolute")]
    Absolute,
    #[error("the path climbs out of its directory (\"..\")")]
    ParentDir,
    #[error("the path has an empty component")]
    EmptyComponent,
    #[error("the path has a \".\" component")]
    CurDir,
    #[error("the path holds a NUL byte")]
    Nul,
    #[error("not a single name")]
    NotAName,
}

/// How strictly a text is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// Every component a plain name: what `olm` itself writes into metadata.
    Strict,
    /// A path inside an image, as a label or a layer entry names it: `/` is the image's
    /// root, and `.` and empty components (`//`, a trailing `/`) are dropped, as Go's
    /// `filepath.Join` drops them. `..` is refused all the same.
    InImage,
}

impl RelPath {
    /// The directory itself.
    pub fn root() -> RelPath {
        RelPath::default()
    }

    /// A strict relative path: `catalogs/0`, never `/x`, `a/../b`, `a//b`, `./a`, `a/` or "".
    pub fn parse(text: &str) -> Result<RelPath, PathRefusal> {
        Self::read(text.as_bytes(), Form::Strict)
    }

    /// [`RelPath::parse`] of bytes that may not be UTF-8.
    pub fn parse_os(text: &OsStr) -> Result<RelPath, PathRefusal> {
        Self::read(text.as_bytes(), Form::Strict)
    }

    /// A path inside an image as a label names it (`/configs`, `configs/`, `./configs`): a
    /// leading `/` means the image's root, `.` and empty components are dropped. "" and `/`
    /// are the root itself (Go's loaders then read the whole image). `..` and NUL are refused.
    pub fn in_image(text: &str) -> Result<RelPath, PathRefusal> {
        Self::read(text.as_bytes(), Form::InImage)
    }

    /// [`RelPath::in_image`] of a name that may not be UTF-8 (a layer's entry).
    pub fn in_image_os(text: &OsStr) -> Result<RelPath, PathRefusal> {
        Self::read(text.as_bytes(), Form::InImage)
    }

    fn read(bytes: &[u8], form: Form) -> Result<RelPath, PathRefusal> {
        if bytes.contains(&0) {
            return Err(PathRefusal::Nul);
        }
        if form == Form::Strict {
            if bytes.is_empty() {
                return Err(PathRefusal::Empty);
            }
            if bytes[0] == b'/' {
                return Err(PathRefusal::Absolute);
            }
        }
        let mut text = Vec::with_capacity(bytes.len());
        for name in bytes.split(|&b| b == b'/') {
            match name {
                b".." => return Err(PathRefusal::ParentDir),
                b"" | b"." if form == Form::InImage => {}
                b"" => return Err(PathRefusal::EmptyComponent),
                b"." => return Err(PathRefusal::CurDir),
                name => {
                    if !text.is_empty() {
                        text.push(b'/');
                    }
                    text.extend_from_slice(name);
                }
            }
        }
        Ok(RelPath {
            text: OsString::from_vec(text),
        })
    }

    /// Whether this is the directory itself.
    pub fn is_root(&self) -> bool {
        self.text.is_empty()
    }

    /// This path and one more name (from a directory listing): refused unless `name` is a
    /// single plain name.
    pub fn child(&self, name: &OsStr) -> Result<RelPath, PathRefusal> {
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes == b"." || bytes == b".." || bytes.contains(&b'/') {
            return Err(PathRefusal::NotAName);
        }
        if bytes.contains(&0) {
            return Err(PathRefusal::Nul);
        }
        Ok(self.join_unchecked(bytes))
    }

    /// This path followed by `rest`.
    pub fn join(&self, rest: &RelPath) -> RelPath {
        self.join_unchecked(rest.text.as_bytes())
    }

    fn join_unchecked(&self, rest: &[u8]) -> RelPath {
        if rest.is_empty() {
            return self.clone();
        }
        let mut text = self.text.clone().into_vec();
        if !text.is_empty() {
            text.push(b'/');
        }
        text.extend_from_slice(rest);
        RelPath {
            text: OsString::from_vec(text),
        }
    }

    /// The names, first to last.
    pub fn names(&self) -> impl Iterator<Item = &OsStr> {
        self.text
            .as_bytes()
            .split(|&b| b == b'/')
            .filter(|n| !n.is_empty())
            .map(OsStr::from_bytes)
    }

    /// The last name (`None` for the root).
    pub fn file_name(&self) -> Option<&OsStr> {
        self.names().last()
    }

    /// All names but the last (the root's parent is `None`).
    pub fn parent(&self) -> Option<RelPath> {
        if self.is_root() {
            return None;
        }
        let bytes = self.text.as_bytes();
        let cut = bytes.iter().rposition(|&b| b == b'/').unwrap_or(0);
        Some(RelPath {
            text: OsStr::from_bytes(&bytes[..cut]).to_os_string(),
        })
    }

    /// The path as text (lossy), `/`-separated; the root is "".
    pub fn to_string_lossy(&self) -> std::borrow::Cow<'_, str> {
        self.text.to_string_lossy()
    }

    /// The relative path handed to a directory handle's calls (`.` for the root). Only
    /// [`super::Tree`] opens it; it stays private so that no caller joins it onto a host path.
    pub(super) fn for_handle(&self) -> &Path {
        if self.is_root() {
            Path::new(".")
        } else {
            Path::new(&self.text)
        }
    }

    /// The path as a relative `Path`, for messages and for the unpacker's own resolver, which
    /// walks it name by name from a directory handle.
    pub fn as_relative_path(&self) -> PathBuf {
        PathBuf::from(&self.text)
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_string_lossy())
    }
}

impl fmt::Debug for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.to_string_lossy())
    }
}

impl serde::Serialize for RelPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string_lossy())
    }
}

/// Read strictly ([`RelPath::parse`]): metadata `olm` writes holds only plain names.
impl<'de> serde::Deserialize<'de> for RelPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        RelPath::parse(&text)
            .map_err(|why| serde::de::Error::custom(format_args!("path {text:?}: {why}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every form, and what each reading says of it.
    #[test]
    fn accepted_and_refused_texts() {
        use PathRefusal::*;
        let ok = |s: &str| Ok::<String, PathRefusal>(s.to_string());
        type Verdict = Result<String, PathRefusal>;
        let table: &[(&str, Verdict, Verdict)] = &[
            // text, strict, in an image
            ("configs", ok("configs"), ok("configs")),
            ("catalogs/0", ok("catalogs/0"), ok("catalogs/0")),
            ("/configs", Err(Absolute), ok("configs")),
            ("configs/", Err(EmptyComponent), ok("configs")),
            ("./configs", Err(CurDir), ok("configs")),
            ("/configs/", Err(Absolute), ok("configs")),
            ("//configs//sub/./x", Err(Absolute), ok("configs/sub/x")),
            ("a//b", Err(EmptyComponent), ok("a/b")),
            ("", Err(Empty), ok("")),
            ("/", Err(Absolute), ok("")),
            (".", Err(CurDir), ok("")),
            ("..", Err(ParentDir), Err(ParentDir)),
            ("../../x", Err(ParentDir), Err(ParentDir)),
            ("/../../../../etc", Err(Absolute), Err(ParentDir)),
            ("configs/../configs", Err(ParentDir), Err(ParentDir)),
            ("a/..", Err(ParentDir), Err(ParentDir)),
            ("/abs", Err(Absolute), ok("abs")),
            ("a\0b", Err(Nul), Err(Nul)),
            ("...", ok("..."), ok("...")),
            ("..a/b..", ok("..a/b.."), ok("..a/b..")),
            (".hidden", ok(".hidden"), ok(".hidden")),
            ("a\\..\\b", ok("a\\..\\b"), ok("a\\..\\b")),
            ("sp ace/ü", ok("sp ace/ü"), ok("sp ace/ü")),
        ];
        for (text, strict, image) in table {
            let got = RelPath::parse(text).map(|p| p.to_string());
            assert_eq!(&got, strict, "strict {text:?}");
            let got = RelPath::in_image(text).map(|p| p.to_string());
            assert_eq!(&got, image, "in an image {text:?}");
        }
    }

    #[test]
    fn children_are_single_names() {
        let base = RelPath::parse("configs").unwrap();
        assert_eq!(
            base.child(OsStr::new("a.json")).unwrap().to_string(),
            "configs/a.json"
        );
        assert_eq!(
            RelPath::root().child(OsStr::new("x")).unwrap().to_string(),
            "x"
        );
        for bad in ["", ".", "..", "a/b", "/", "a\0"] {
            assert!(base.child(OsStr::new(bad)).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn joins_parents_and_names() {
        let a = RelPath::parse("a/b").unwrap();
        let c = RelPath::parse("c").unwrap();
        assert_eq!(a.join(&c).to_string(), "a/b/c");
        assert_eq!(RelPath::root().join(&c), c);
        assert_eq!(a.join(&RelPath::root()), a);
        assert_eq!(a.parent().unwrap().to_string(), "a");
        assert_eq!(c.parent().unwrap(), RelPath::root());
        assert_eq!(RelPath::root().parent(), None);
        assert_eq!(a.file_name(), Some(OsStr::new("b")));
        assert_eq!(a.names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(RelPath::root().names().count(), 0);
        assert_eq!(RelPath::root().for_handle(), Path::new("."));
    }

    #[test]
    fn non_utf8_names_are_kept() {
        let raw = OsStr::from_bytes(b"a/\xff");
        let p = RelPath::parse_os(raw).unwrap();
        assert_eq!(p.file_name(), Some(OsStr::from_bytes(b"\xff")));
        assert!(RelPath::in_image_os(OsStr::from_bytes(b"/x/../\xff")).is_err());
    }

    #[test]
    fn deserialized_strictly() {
        let p: RelPath = serde_json::from_str(r#""catalogs/0""#).unwrap();
        assert_eq!(p.to_string(), "catalogs/0");
        assert_eq!(serde_json::to_string(&p).unwrap(), r#""catalogs/0""#);
        let e = serde_json::from_str::<RelPath>(r#""../../x""#).unwrap_err();
        assert!(
            e.to_string()
                .contains(r#"path "../../x": the path climbs out"#),
            "{e}"
        );
    }
}
