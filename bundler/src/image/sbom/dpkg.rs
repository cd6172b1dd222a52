//! Which Debian package owns a file, as `dpkg -S` answers it, without running dpkg: the file
//! lists `<root>/var/lib/dpkg/info/<package>[:<arch>].list` say which package installed a
//! path, and `<root>/var/lib/dpkg/status` gives the installed version, architecture and
//! maintainer. A host without a dpkg database owns nothing (not an error).

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::path::{Path, PathBuf};

const INFO_DIR: &str = "var/lib/dpkg/info";
const STATUS: &str = "var/lib/dpkg/status";
/// A status file or file list larger than this is not a dpkg database we trust.
const MAX_FILE: u64 = 256 << 20;

#[derive(Debug, thiserror::Error)]
#[error("{path}: {what}")]
pub struct DpkgError {
    pub path: PathBuf,
    pub what: String,
}

/// An installed Debian package.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct DebPackage {
    pub name: String,
    pub version: String,
    pub arch: String,
    /// `Name <email>` from the status file.
    pub maintainer: Option<String>,
}

/// The distribution the packages come from (`/etc/os-release`): the purl namespace and its
/// `distro` qualifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distro {
    /// `debian`, `ubuntu`...
    pub id: String,
    pub version_id: Option<String>,
}

impl DebPackage {
    /// `pkg:deb/debian/libc6@2.36-9%2Bdeb12u10?arch=amd64&distro=debian-12`, as syft writes it.
    pub fn purl(&self, distro: &Distro) -> String {
        use super::spdx::purl_escape as esc;
        let mut purl = format!(
            "pkg:deb/{}/{}@{}?arch={}",
            esc(&distro.id),
            esc(&self.name),
            esc(&self.version),
            esc(&self.arch)
        );
        if let Some(v) = &distro.version_id {
            purl.push_str(&format!("&distro={}-{}", esc(&distro.id), esc(v)));
        }
        purl
    }
}

fn read_bounded(path: &Path) -> Result<Option<String>, DpkgError> {
    let err = |what: String| DpkgError {
        path: path.to_path_buf(),
        what,
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(format!("cannot read: {e}"))),
    };
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| err(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(err(format!("larger than {MAX_FILE} bytes")));
    }
    // Paths in file lists are bytes; lossy text is enough to compare with our UTF-8 paths.
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// The distribution under `root`: `ID` and `VERSION_ID` of `etc/os-release` (or
/// `usr/lib/os-release`); Debian when neither says.
pub fn distro(root: &Path) -> Distro {
    let text = ["etc/os-release", "usr/lib/os-release"]
        .iter()
        .find_map(|p| read_bounded(&root.join(p)).ok().flatten())
        .unwrap_or_default();
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
            .map(|v| v.trim().trim_matches('"').to_string())
            .filter(|v| !v.is_empty())
    };
    Distro {
        id: field("ID").unwrap_or_else(|| "debian".into()),
        version_id: field("VERSION_ID"),
    }
}

/// The other spellings of an absolute path on a merged-/usr system (`/lib/x` and
/// `/usr/lib/x`), since dpkg records the path the package shipped.
fn aliases(path: &str) -> Vec<String> {
    let mut out = vec![path.to_string()];
    for top in ["/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/"] {
        if let Some(rest) = path.strip_prefix(top) {
            out.push(format!("/usr{top}{rest}"));
        } else if let Some(rest) = path.strip_prefix("/usr").and_then(|p| p.strip_prefix(top)) {
            out.push(format!("{top}{rest}"));
        }
    }
    out
}

/// The package owning each of `paths` (absolute paths as the host under `root` has them),
/// for those dpkg knows. A path is also tried through merged-/usr aliases and its real
/// path (a symlink such as `/lib64/ld-linux-x86-64.so.2` may be listed under its target).
pub fn owners(
    root: &Path,
    paths: &BTreeSet<String>,
) -> Result<BTreeMap<String, DebPackage>, DpkgError> {
    let Some(status) = read_bounded(&root.join(STATUS))? else {
        return Ok(BTreeMap::new());
    };
    let real_root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    // Every spelling we look for → the path asked about.
    let mut wanted: BTreeMap<String, String> = BTreeMap::new();
    for p in paths {
        let mut names = aliases(p);
        if let Ok(real) = std::fs::canonicalize(root.join(p.trim_start_matches('/')))
            && let Ok(rel) = real.strip_prefix(&real_root)
        {
            names.extend(aliases(&format!("/{}", rel.display())));
        }
        for n in names {
            wanted.entry(n).or_insert_with(|| p.clone());
        }
    }
    // Package name → its installed architectures.
    let mut installed: std::collections::HashMap<String, Vec<DebPackage>> = Default::default();
    for p in parse_status(&status) {
        installed.entry(p.name.clone()).or_default().push(p);
    }
    let info = root.join(INFO_DIR);
    let mut lists: Vec<PathBuf> = match std::fs::read_dir(&info) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "list"))
            .collect(),
        Err(_) => return Ok(BTreeMap::new()),
    };
    lists.sort();
    let mut out = BTreeMap::new();
    for list in lists {
        let Some(stem) = list.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let (name, arch) = match stem.split_once(':') {
            Some((n, a)) => (n, Some(a)),
            None => (stem, None),
        };
        let Some(pkg) = installed
            .get(name)
            .and_then(|v| v.iter().find(|p| arch.is_none_or(|a| a == p.arch)))
        else {
            continue;
        };
        let Some(text) = read_bounded(&list)? else {
            continue;
        };
        for line in text.lines() {
            if let Some(asked) = wanted.get(line) {
                out.entry(asked.clone()).or_insert_with(|| pkg.clone());
            }
        }
    }
    Ok(out)
}

/// The installed packages of a status file (stanzas whose `Status` ends in `installed`).
fn parse_status(text: &str) -> Vec<DebPackage> {
    let mut out = Vec::new();
    for stanza in text.split("\n\n") {
        let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
        for line in stanza.lines() {
            if line.starts_with([' ', '\t']) {
                continue;
            }
            if let Some((k, v)) = line.split_once(':') {
                fields.insert(k, v.trim());
            }
        }
        let installed = fields
            .get("Status")
            .is_some_and(|s| s.split_whitespace().last() == Some("installed"));
        if let (true, Some(name), Some(version), Some(arch)) = (
            installed,
            fields.get("Package"),
            fields.get("Version"),
            fields.get("Architecture"),
        ) {
            out.push(DebPackage {
                name: name.to_string(),
                version: version.to_string(),
                arch: arch.to_string(),
                maintainer: fields.get("Maintainer").map(|m| m.to_string()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_root() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let info = root.path().join(INFO_DIR);
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(
            root.path().join(STATUS),
            "Package: libc6\nStatus: install ok installed\nMaintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>\nArchitecture: amd64\nMulti-Arch: same\nVersion: 2.36-9+deb12u10\nDescription: GNU C Library\n continued\n\n\
             Package: libc6\nStatus: install ok installed\nArchitecture: i386\nVersion: 2.36-9+deb12u10\n\n\
             Package: gone\nStatus: deinstall ok config-files\nArchitecture: amd64\nVersion: 1\n\n\
             Package: tzdata\nStatus: install ok installed\nArchitecture: all\nVersion: 2024a-0+deb12u1\n",
        )
        .unwrap();
        std::fs::write(
            info.join("libc6:amd64.list"),
            "/.\n/lib\n/lib/x86_64-linux-gnu/libc.so.6\n/lib64/ld-linux-x86-64.so.2\n",
        )
        .unwrap();
        std::fs::write(
            info.join("libc6:i386.list"),
            "/lib/i386-linux-gnu/libc.so.6\n",
        )
        .unwrap();
        std::fs::write(info.join("gone.list"), "/usr/lib/gone.so\n").unwrap();
        std::fs::write(info.join("tzdata.list"), "/usr/share/zoneinfo/UTC\n").unwrap();
        std::fs::create_dir_all(root.path().join("etc")).unwrap();
        std::fs::write(
            root.path().join("etc/os-release"),
            "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nVERSION_ID=\"12\"\nID=debian\n",
        )
        .unwrap();
        root
    }

    #[test]
    fn owners_as_dpkg_s_finds_them() {
        let root = fake_root();
        let paths: BTreeSet<String> = [
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/lib/i386-linux-gnu/libc.so.6",
            "/usr/lib/gone.so",
            "/usr/share/zoneinfo/UTC",
            "/usr/local/bin/op",
        ]
        .map(String::from)
        .into();
        let found = owners(root.path(), &paths).unwrap();
        let libc = &found["/usr/lib/x86_64-linux-gnu/libc.so.6"];
        assert_eq!((libc.name.as_str(), libc.arch.as_str()), ("libc6", "amd64"));
        assert_eq!(libc.version, "2.36-9+deb12u10");
        assert_eq!(found["/lib/i386-linux-gnu/libc.so.6"].arch, "i386");
        assert_eq!(found["/usr/share/zoneinfo/UTC"].arch, "all");
        assert!(!found.contains_key("/usr/lib/gone.so"), "not installed");
        assert!(!found.contains_key("/usr/local/bin/op"));
        let d = distro(root.path());
        assert_eq!(
            libc.purl(&d),
            "pkg:deb/debian/libc6@2.36-9%2Bdeb12u10?arch=amd64&distro=debian-12"
        );
    }

    #[test]
    fn no_database_owns_nothing() {
        let root = tempfile::tempdir().unwrap();
        let paths: BTreeSet<String> = ["/lib/libc.so.6".to_string()].into();
        assert!(owners(root.path(), &paths).unwrap().is_empty());
        assert_eq!(distro(root.path()).id, "debian");
    }

    #[test]
    fn merged_usr_aliases() {
        assert_eq!(
            aliases("/lib/x86_64-linux-gnu/libc.so.6"),
            [
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/usr/lib/x86_64-linux-gnu/libc.so.6"
            ]
        );
        assert_eq!(
            aliases("/usr/lib64/ld.so"),
            ["/usr/lib64/ld.so", "/lib64/ld.so"]
        );
    }
}
