//! A mirror on disk, to carry into an air-gapped network: plain files, `tar` them if a
//! single file travels better.
//!
//! ```text
//! ARCHIVE/olm-mirror.json     what it holds (this module), written last
//! ARCHIVE/images/             one OCI image layout with every image; each entry's
//!                             org.opencontainers.image.ref.name is the image's reference as
//!                             the catalog writes it, so blobs shared by images are stored once
//! ARCHIVE/catalogs/<n>/       each filtered catalog, as a catalog directory
//! ```
//!
//! A second run into the same archive adds what is new and keeps the rest.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_write;
use crate::confined::{RelPath, Tree};
use crate::image::limits;

pub const MANIFEST: &str = "olm-mirror.json";
pub const IMAGES: &str = "images";
pub const CATALOGS: &str = "catalogs";

/// `olm-mirror.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    /// The format's version.
    pub version: u32,
    pub catalogs: Vec<ArchivedCatalog>,
}

/// One catalog of an archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchivedCatalog {
    /// The source catalog as named when it was archived (an image or a directory).
    pub source: String,
    /// The repository path the mirrored catalog image gets (under the destination).
    pub target_repository: String,
    pub target_tag: String,
    /// The filtered catalog, relative to the archive: plain names only, so it cannot name
    /// anything outside the archive (an archive carried across an air gap is input).
    #[serde(deserialize_with = "catalog_dir")]
    pub catalog_dir: RelPath,
    /// Every image the catalog needs that the archive holds, by its reference.
    pub images: Vec<ArchivedImage>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ArchivedImage {
    /// As the catalog writes it; the entry's name in `images/`.
    pub reference: String,
    /// The digest the archive holds for it (an index's, for a multi-platform image).
    pub digest: String,
    /// The bundles that use it (`package/bundle`).
    pub used_by: Vec<String>,
}

/// `catalogDir`, read strictly: the error names the field and the value.
fn catalog_dir<'de, D: serde::Deserializer<'de>>(d: D) -> Result<RelPath, D::Error> {
    let text = String::deserialize(d)?;
    let rel = RelPath::parse(&text).map_err(|why| {
        serde::de::Error::custom(format_args!(
            "catalogDir {text:?} is refused: {why}; it must name a directory inside the archive"
        ))
    })?;
    // Only what olm writes: `catalogs/<name>`. Any other directory of the archive (its image
    // layout `images`, the archive itself) would be replaced by the next --to-archive run.
    let names: Vec<_> = rel.names().collect();
    let inside = names.len() == 2 && names[0] == CATALOGS;
    if !inside {
        return Err(serde::de::Error::custom(format_args!(
            "catalogDir {text:?} is refused: a catalog of the archive lives in {CATALOGS}/<name>, as olm writes it"
        )));
    }
    Ok(rel)
}

#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error(
        "{}: {} in a mirror archive; refused (olm writes plain files and directories only, and a link could lead reads or writes out of the archive)",
        path.display(),
        match kind { true => "a symbolic link", false => "a device, FIFO or socket" }
    )]
    Link { path: PathBuf, kind: bool },
    #[error("{}: cannot open the archive: {source}", dir.display())]
    Open {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a mirror archive (no {MANIFEST}); make one with olm catalog mirror SOURCE --to-archive DIR", dir.display())]
    NotAnArchive { dir: PathBuf },
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a mirror archive manifest: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error(transparent)]
    TooLarge(#[from] crate::image::model::ModelError),
    #[error("{path}: version {version} of the archive format; this olm reads version 1")]
    Version { path: PathBuf, version: u32 },
    #[error(transparent)]
    Write(#[from] atomic_write::WriteError),
}

impl Manifest {
    /// The manifest of the archive `dir`; `None` when the directory holds none yet.
    pub fn read(dir: &Path) -> Result<Option<Manifest>, ArchiveError> {
        let path = dir.join(MANIFEST);
        // Carried across an air gap: input like any other, bounded like a layout's index.
        let bytes = match limits::read_file(
            &path,
            "a mirror archive's manifest",
            limits::LAYOUT_INDEX_BYTES,
        ) {
            Ok(b) => b,
            Err(limits::ReadFileError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(None);
            }
            Err(limits::ReadFileError::Io(source)) => {
                return Err(ArchiveError::Read { path, source });
            }
            Err(limits::ReadFileError::TooLarge(e)) => return Err(e.into()),
        };
        let m: Manifest = serde_json::from_slice(&bytes).map_err(|source| ArchiveError::Json {
            path: path.clone(),
            source,
        })?;
        if m.version != 1 {
            return Err(ArchiveError::Version {
                path,
                version: m.version,
            });
        }
        Ok(Some(m))
    }

    /// The manifest of an archive to read from: it must exist.
    pub fn open(dir: &Path) -> Result<Manifest, ArchiveError> {
        Manifest::read(dir)?.ok_or_else(|| ArchiveError::NotAnArchive {
            dir: dir.to_path_buf(),
        })
    }

    /// Adds (or replaces, for the same source) a catalog's entry.
    pub fn put(&mut self, catalog: ArchivedCatalog) {
        self.version = 1;
        match self
            .catalogs
            .iter_mut()
            .find(|c| c.source == catalog.source)
        {
            Some(c) => *c = catalog,
            None => self.catalogs.push(catalog),
        }
    }

    /// Where the next catalog's directory goes (`catalogs/<n>`), or the one `source` had.
    pub fn catalog_dir_for(&self, source: &str) -> RelPath {
        match self.catalogs.iter().find(|c| c.source == source) {
            Some(c) => c.catalog_dir.clone(),
            None => {
                RelPath::parse(&format!("{CATALOGS}/{}", self.catalogs.len())).unwrap_or_default()
            }
        }
    }

    /// Writes the manifest, atomically (after everything it names).
    pub fn write(&self, dir: &Path) -> Result<(), ArchiveError> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        atomic_write::write_atomic(&dir.join(MANIFEST), &bytes)?;
        Ok(())
    }
}

/// The archive at `dir` (an existing directory) as a tree read and written confined to it.
pub fn open(dir: &Path) -> Result<Tree, ArchiveError> {
    Tree::confined(dir).map_err(|source| ArchiveError::Open {
        dir: dir.to_path_buf(),
        source,
    })
}

/// [`open`], refused when anything in the archive is a symbolic link or a special file:
/// `olm` writes none, and one in an archive carried across an air gap could lead a read or a
/// write out of it.
pub fn open_checked(dir: &Path) -> Result<Tree, ArchiveError> {
    let tree = open(dir)?;
    let found = tree
        .links_and_specials()
        .map_err(|source| ArchiveError::Open {
            dir: dir.to_path_buf(),
            source,
        })?;
    if let Some(first) = found.first() {
        let kind = tree
            .symlink_metadata(first)
            .is_ok_and(|m| m.kind == crate::confined::EntryKind::Symlink);
        return Err(ArchiveError::Link {
            path: tree.shown(first),
            kind,
        });
    }
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_round_trip_and_replace_a_catalog_by_source() {
        let dir = tempfile::tempdir().unwrap();
        assert!(Manifest::read(dir.path()).unwrap().is_none());
        assert!(
            Manifest::open(dir.path())
                .unwrap_err()
                .to_string()
                .contains("--to-archive")
        );
        let mut m = Manifest::default();
        let entry = |n: usize| ArchivedCatalog {
            source: "quay.io/x/cat:v1".into(),
            target_repository: "x/cat".into(),
            target_tag: "v1".into(),
            catalog_dir: RelPath::parse("catalogs/0").unwrap(),
            images: (0..n)
                .map(|i| ArchivedImage {
                    reference: format!("quay.io/x/b{i}:v1"),
                    digest: "sha256:0".into(),
                    used_by: vec![],
                })
                .collect(),
        };
        assert_eq!(
            m.catalog_dir_for("quay.io/x/cat:v1").to_string(),
            "catalogs/0"
        );
        m.put(entry(1));
        m.put(entry(2));
        assert_eq!(m.catalogs.len(), 1);
        assert_eq!(m.catalog_dir_for("other").to_string(), "catalogs/1");
        m.write(dir.path()).unwrap();
        assert_eq!(Manifest::open(dir.path()).unwrap(), m);
        std::fs::write(dir.path().join(MANIFEST), r#"{"version":2,"catalogs":[]}"#).unwrap();
        assert!(
            Manifest::open(dir.path())
                .unwrap_err()
                .to_string()
                .contains("version 2")
        );
    }

    #[test]
    fn catalog_dirs_that_leave_the_archive_are_refused_naming_the_field() {
        let dir = tempfile::tempdir().unwrap();
        for bad in [
            "../../x",
            "/abs",
            "catalogs/../../x",
            "",
            "a//b",
            "images",
            "catalogs",
            "catalogs/0/x",
        ] {
            let text = format!(
                r#"{{"version":1,"catalogs":[{{"source":"s","targetRepository":"r","targetTag":"t","catalogDir":{},"images":[]}}]}}"#,
                serde_json::to_string(bad).unwrap()
            );
            std::fs::write(dir.path().join(MANIFEST), text).unwrap();
            let e = Manifest::open(dir.path()).unwrap_err().to_string();
            assert!(e.contains(MANIFEST), "{bad}: {e}");
            assert!(
                e.contains(&format!("catalogDir {bad:?} is refused")),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn archives_holding_links_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("images/blobs")).unwrap();
        assert!(open_checked(dir.path()).is_ok());
        std::os::unix::fs::symlink("/etc", dir.path().join("images/blobs/sha256")).unwrap();
        let e = open_checked(dir.path()).unwrap_err().to_string();
        assert!(e.contains("images/blobs/sha256: a symbolic link"), "{e}");
    }
}
