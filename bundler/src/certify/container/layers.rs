//! What one layer changes, read from its tar stream as preflight's `generateChangesFor` and
//! `extractRPMDB` read it: the files it adds or replaces (regular files, links, whiteouts of
//! files and directories; entries carrying a `security.capability` xattr are left out) with
//! their modes, the rpm database when the layer holds one, and the dpkg database files it
//! writes or removes.
//!
//! A layer is hostile input: paths are only compared as strings, never opened; what is kept
//! in memory is bounded ([`MAX_DB_BYTES`] for the package databases).

use std::collections::BTreeMap;
use std::io::Read;

/// The most package-database bytes one layer may carry (rpm and dpkg together).
pub const MAX_DB_BYTES: u64 = 256 << 20;

/// The rpm database files of a layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RpmDb {
    Sqlite(Vec<u8>),
    BerkeleyDb(Vec<u8>),
}

/// One layer's changes.
#[derive(Debug, Clone, Default)]
pub struct LayerScan {
    /// Paths (relative, cleaned) the layer creates, replaces or whites out, with their mode
    /// bits (setuid 0o4000 and setgid 0o2000 included).
    pub files: BTreeMap<String, u32>,
    /// The rpm database, when the layer writes one.
    pub rpmdb: Option<RpmDb>,
    /// dpkg database files written (`Some`) or removed (`None`) under `var/lib/dpkg/`; a path
    /// ending in `/` removes everything under it (an opaque whiteout).
    pub dpkg: Vec<(String, Option<Vec<u8>>)>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("reading tar: {0}")]
    Tar(#[from] std::io::Error),
    #[error("{path}: package database larger than {limit} bytes")]
    TooLarge { path: String, limit: u64 },
}

/// Go's `filepath.Clean` of a tar name, without a leading `/`.
pub fn clean(name: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in name.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        ".".into()
    } else {
        parts.join("/")
    }
}

const WHITEOUT: &str = ".wh.";

fn is_dpkg_db(path: &str) -> bool {
    path == "var/lib/dpkg/status"
        || path.starts_with("var/lib/dpkg/status.d/")
        || (path.starts_with("var/lib/dpkg/info/")
            && (path.ends_with(".list")
                || path.ends_with(".md5sums")
                || path.ends_with(".conffiles")))
}

/// Scans an uncompressed layer tar.
pub fn scan(reader: impl Read) -> Result<LayerScan, ScanError> {
    let mut archive = tar::Archive::new(reader);
    let mut out = LayerScan::default();
    let mut links = Vec::new();
    let mut rpm_files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut kept: u64 = 0;
    for entry in archive.entries()? {
        let mut entry = entry?;
        let name = clean(&String::from_utf8_lossy(&entry.path_bytes()));
        let (dir, base) = match name.rsplit_once('/') {
            Some((d, b)) => (d.to_string(), b.to_string()),
            None => (".".to_string(), name.clone()),
        };
        let (tombstone, base) = match base.strip_prefix(WHITEOUT) {
            Some(b) => (true, b.to_string()),
            None => (false, base),
        };
        let joined = if dir == "." {
            base.clone()
        } else {
            format!("{dir}/{base}")
        };
        let kind = entry.header().entry_type();
        let mode = entry.header().mode().unwrap_or(0o644);
        let capability = entry
            .pax_extensions()?
            .map(|exts| {
                exts.flatten()
                    .any(|e| e.key().ok() == Some("SCHILY.xattr.security.capability"))
            })
            .unwrap_or(false);
        if !capability {
            match kind {
                tar::EntryType::Directory if tombstone => {
                    out.files.insert(joined.clone(), mode);
                }
                tar::EntryType::Regular | tar::EntryType::Continuous => {
                    out.files.insert(joined.clone(), mode);
                }
                tar::EntryType::Symlink | tar::EntryType::Link => {
                    out.files.insert(name.clone(), mode);
                    if let Some(target) = entry.link_name_bytes() {
                        let t = String::from_utf8_lossy(&target);
                        links.push(t.trim_start_matches('/').to_string());
                    }
                }
                _ => {}
            }
        }
        let regular = matches!(kind, tar::EntryType::Regular | tar::EntryType::Continuous);
        // The rpm database: regular files under var/lib/rpm that are not whiteouts.
        if regular && !tombstone && joined.starts_with("var/lib/rpm") {
            let base = joined.rsplit('/').next().unwrap_or("");
            if matches!(base, "rpmdb.sqlite" | "Packages") && joined.matches('/').count() == 3 {
                let data = read_bounded(&mut entry, &joined, &mut kept)?;
                rpm_files.insert(base.to_string(), data);
            }
        }
        // dpkg's database: written files, and whiteouts of them or of their directories.
        if joined.starts_with("var/lib/dpkg/") {
            if tombstone && base == ".wh..opq" {
                out.dpkg.push((format!("{dir}/"), None));
            } else if tombstone {
                let gone = if kind == tar::EntryType::Directory || !is_dpkg_db(&joined) {
                    format!("{joined}/")
                } else {
                    joined.clone()
                };
                out.dpkg.push((gone, None));
            } else if regular && is_dpkg_db(&joined) {
                let data = read_bounded(&mut entry, &joined, &mut kept)?;
                out.dpkg.push((joined.clone(), Some(data)));
            }
        }
    }
    for l in links {
        out.files.remove(&l);
    }
    out.rpmdb = match (
        rpm_files.remove("rpmdb.sqlite"),
        rpm_files.remove("Packages"),
    ) {
        (Some(s), _) => Some(RpmDb::Sqlite(s)),
        (None, Some(b)) => Some(RpmDb::BerkeleyDb(b)),
        (None, None) => None,
    };
    Ok(out)
}

fn read_bounded(entry: &mut impl Read, path: &str, kept: &mut u64) -> Result<Vec<u8>, ScanError> {
    let room = MAX_DB_BYTES.saturating_sub(*kept);
    let mut data = Vec::new();
    entry.take(room + 1).read_to_end(&mut data)?;
    if data.len() as u64 > room {
        return Err(ScanError::TooLarge {
            path: path.to_string(),
            limit: MAX_DB_BYTES,
        });
    }
    *kept += data.len() as u64;
    Ok(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tar entry: path, type, mode, content, link target.
    type Entry<'a> = (&'a str, tar::EntryType, u32, &'a [u8], Option<&'a str>);

    fn tar_of(entries: &[Entry<'_>]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (path, kind, mode, data, link) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_entry_type(*kind);
            h.set_mode(*mode);
            h.set_size(data.len() as u64);
            if let Some(l) = link {
                h.set_link_name(l).unwrap();
            }
            h.set_path(path).unwrap();
            h.set_cksum();
            b.append(&h, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn files_whiteouts_links_and_databases_are_seen() {
        use tar::EntryType::*;
        let t = tar_of(&[
            ("./usr/bin/", Directory, 0o755, b"", None),
            ("./usr/bin/su", Regular, 0o4755, b"x", None),
            ("usr/lib/.wh.old.so", Regular, 0o644, b"", None),
            ("usr/bin/sh", Symlink, 0o777, b"", Some("/usr/bin/bash")),
            ("usr/bin/bash", Regular, 0o755, b"b", None),
            ("var/lib/rpm/rpmdb.sqlite", Regular, 0o644, b"SQLite", None),
            ("var/lib/dpkg/status", Regular, 0o644, b"Package: a\n", None),
            ("var/lib/dpkg/info/.wh.b.list", Regular, 0o644, b"", None),
        ]);
        let s = scan(&t[..]).unwrap();
        let files: Vec<(&str, u32)> = s.files.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            files,
            [
                ("usr/bin/su", 0o4755),
                ("usr/lib/old.so", 0o644),
                ("usr/bin/sh", 0o777),
                ("var/lib/dpkg/info/b.list", 0o644),
                ("var/lib/dpkg/status", 0o644),
                ("var/lib/rpm/rpmdb.sqlite", 0o644),
            ]
            .into_iter()
            .collect::<BTreeMap<_, _>>()
            .into_iter()
            .collect::<Vec<_>>()
        );
        assert_eq!(s.rpmdb, Some(RpmDb::Sqlite(b"SQLite".to_vec())));
        assert_eq!(
            s.dpkg,
            [
                (
                    "var/lib/dpkg/status".to_string(),
                    Some(b"Package: a\n".to_vec())
                ),
                ("var/lib/dpkg/info/b.list".to_string(), None)
            ]
        );
        assert_eq!(clean("./a//b/../c/"), "a/c");
        assert_eq!(clean("/"), ".");
    }
}
