//! dpkg's database as an image leaves it: `var/lib/dpkg/status` (or distroless'
//! `status.d/<package>` files), one stanza per package, and `var/lib/dpkg/info/<package>.list`
//! and `.md5sums`, the files each package installed. preflight reads only rpm's database;
//! olm reads dpkg's too, so a Debian-based image's package files are checked as well.

use std::collections::{BTreeMap, BTreeSet};

/// One installed Debian package.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Package {
    pub name: String,
    pub version: String,
    pub arch: String,
    pub maintainer: String,
    /// Absolute paths of its config files (`Conffiles:`).
    pub conffiles: Vec<String>,
}

/// The installed packages of a status file (stanzas whose `Status:` ends in `installed`;
/// distroless' status.d stanzas have no `Status:` and count as installed).
pub fn parse_status(text: &str) -> Vec<Package> {
    let mut out = Vec::new();
    for stanza in text.split("\n\n") {
        let mut p = Package::default();
        let mut status: Option<&str> = None;
        let mut in_conffiles = false;
        for line in stanza.lines() {
            if let Some(rest) = line.strip_prefix(' ') {
                if in_conffiles && let Some(path) = rest.split_whitespace().next() {
                    p.conffiles.push(path.to_string());
                }
                continue;
            }
            in_conffiles = false;
            let Some((k, v)) = line.split_once(':') else {
                continue;
            };
            let v = v.trim();
            match k {
                "Package" => p.name = v.to_string(),
                "Version" => p.version = v.to_string(),
                "Architecture" => p.arch = v.to_string(),
                "Maintainer" => p.maintainer = v.to_string(),
                "Status" => status = Some(v),
                "Conffiles" => in_conffiles = true,
                _ => {}
            }
        }
        if !p.name.is_empty() && status.is_none_or(|s| s.ends_with(" installed")) {
            out.push(p);
        }
    }
    out
}

/// The package database an image has at some layer: its files by path.
#[derive(Debug, Clone, Default)]
pub struct DbFiles(BTreeMap<String, Vec<u8>>);

impl DbFiles {
    /// Applies one layer's writes and removals.
    pub fn apply(&mut self, changes: &[(String, Option<Vec<u8>>)]) {
        for (path, data) in changes {
            match data {
                Some(d) => {
                    self.0.insert(path.clone(), d.clone());
                }
                None if path.ends_with('/') => self.0.retain(|k, _| !k.starts_with(path.as_str())),
                None => {
                    self.0.remove(path);
                }
            }
        }
    }

    /// Whether a status file exists.
    pub fn has_status(&self) -> bool {
        self.0
            .keys()
            .any(|k| k == "var/lib/dpkg/status" || k.starts_with("var/lib/dpkg/status.d/"))
    }

    /// The installed packages, with the paths (relative, without the leading `/`) each owns,
    /// directories and config files left out.
    pub fn packages(&self) -> Vec<(Package, BTreeSet<String>)> {
        let mut packages = Vec::new();
        for (path, data) in &self.0 {
            let status_d = path.starts_with("var/lib/dpkg/status.d/")
                && !path.ends_with(".md5sums")
                && !path.ends_with(".list");
            if path == "var/lib/dpkg/status" || status_d {
                packages.extend(parse_status(&String::from_utf8_lossy(data)));
            }
        }
        packages.sort_by(|a, b| a.name.cmp(&b.name));
        packages.dedup_by(|a, b| a.name == b.name);
        packages
            .into_iter()
            .map(|p| {
                let files = self.owned_files(&p);
                (p, files)
            })
            .collect()
    }

    fn owned_files(&self, p: &Package) -> BTreeSet<String> {
        let mut paths = BTreeSet::new();
        let stems = [p.name.clone(), format!("{}:{}", p.name, p.arch)];
        for stem in &stems {
            for dir in ["var/lib/dpkg/info/", "var/lib/dpkg/status.d/"] {
                if let Some(list) = self.0.get(&format!("{dir}{stem}.list")) {
                    for line in String::from_utf8_lossy(list).lines() {
                        paths.insert(line.trim_start_matches('/').to_string());
                    }
                }
                if let Some(sums) = self.0.get(&format!("{dir}{stem}.md5sums")) {
                    for line in String::from_utf8_lossy(sums).lines() {
                        if let Some((_, path)) = line.split_once("  ") {
                            paths.insert(path.trim_start_matches('/').to_string());
                        }
                    }
                }
            }
        }
        paths.retain(|p| !p.is_empty() && p != ".");
        // Directories: every path another path is under.
        let dirs: BTreeSet<String> = paths
            .iter()
            .flat_map(|p| {
                let mut parents = Vec::new();
                let mut rest = p.as_str();
                while let Some((parent, _)) = rest.rsplit_once('/') {
                    parents.push(parent.to_string());
                    rest = parent;
                }
                parents
            })
            .collect();
        let conf: BTreeSet<String> = p
            .conffiles
            .iter()
            .map(|c| c.trim_start_matches('/').to_string())
            .collect();
        paths
            .into_iter()
            .filter(|p| !dirs.contains(p) && !conf.contains(p))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_and_lists_give_packages_and_their_files() {
        let status = "Package: libc6\nStatus: install ok installed\nVersion: 2.36-9\nArchitecture: amd64\nMaintainer: GNU Libc Maintainers <debian-glibc@lists.debian.org>\nConffiles:\n /etc/ld.so.conf.d/x86_64-linux-gnu.conf 593ad12389ab2b6f952e7ede67b8fbbf\n\nPackage: gone\nStatus: deinstall ok config-files\nVersion: 1\n";
        let mut db = DbFiles::default();
        db.apply(&[
            ("var/lib/dpkg/status".into(), Some(status.as_bytes().to_vec())),
            (
                "var/lib/dpkg/info/libc6:amd64.list".into(),
                Some(b"/.\n/lib\n/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu/libc.so.6\n/etc/ld.so.conf.d/x86_64-linux-gnu.conf\n".to_vec()),
            ),
            (
                "var/lib/dpkg/info/libc6:amd64.md5sums".into(),
                Some(b"0123  lib/x86_64-linux-gnu/libm.so.6\n".to_vec()),
            ),
        ]);
        assert!(db.has_status());
        let pkgs = db.packages();
        assert_eq!(pkgs.len(), 1);
        assert_eq!(pkgs[0].0.version, "2.36-9");
        let files: Vec<&str> = pkgs[0].1.iter().map(String::as_str).collect();
        assert_eq!(
            files,
            [
                "lib/x86_64-linux-gnu/libc.so.6",
                "lib/x86_64-linux-gnu/libm.so.6"
            ]
        );
        db.apply(&[("var/lib/dpkg/".into(), None)]);
        assert!(!db.has_status());
    }
}
