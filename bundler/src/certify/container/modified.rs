//! HasModifiedFiles: a file a package installed in one layer, changed by a later layer
//! without the package manager, as preflight's `HasModifiedFilesCheck.validate` decides it
//! for rpm packages; dpkg packages are judged by the same walk (olm's addition): a package
//! file changed while the package's version stays the same is a modification.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::dpkg::DbFiles;
use super::layers::{LayerScan, RpmDb};
use super::rpm;

/// Which database a package came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Source {
    #[default]
    Rpm,
    Dpkg,
}

/// What the walk reads of a package.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    pub name: String,
    pub version: String,
    pub release: String,
    pub arch: String,
    pub vendor: String,
    pub install_time: i64,
    pub source: Source,
}

/// One layer, as the walk sees it.
#[derive(Debug, Clone, Default)]
pub struct LayerRef {
    pub files: BTreeMap<String, u32>,
    /// Packages by key (`name-version-release-arch`).
    pub packages: HashMap<String, Meta>,
    /// Package files (normalised, exclusions applied) to their package's key.
    pub owners: HashMap<String, String>,
    /// Whether this layer wrote a package database (the first layer always counts).
    pub has_db: bool,
}

/// preflight's `directoryIsExcluded`, `pathIsExcluded` and `prefixAndSuffixIsExcluded`
/// (the directory test is a plain prefix test, so `etcd/` is excluded with `etc/`).
pub fn excluded(path: &str) -> bool {
    const DIRS: [&str; 6] = [
        "etc",
        "var",
        "run",
        "usr/lib/.build-id",
        "usr/tmp",
        "usr/share/openstack-dashboard",
    ];
    const PATHS: [&str; 6] = [
        "etc/resolv.conf",
        "etc/hostname",
        "etc",
        "etc/",
        "run",
        "run/",
    ];
    PATHS.contains(&path)
        || DIRS.iter().any(|d| path.starts_with(d))
        || (path.starts_with("usr/") && path.ends_with(".cache"))
}

/// `normalize`: cleaned, without the leading `/` (the root stays `/`).
fn normalize(p: &str) -> String {
    if p == "/" {
        return p.into();
    }
    super::layers::clean(p.trim_start_matches('/'))
}

fn rpm_owners(pkgs: &[rpm::Package]) -> (HashMap<String, Meta>, HashMap<String, String>) {
    let mut metas = HashMap::new();
    let mut owners: HashMap<String, String> = HashMap::new();
    for p in pkgs {
        let key = p.nvra_key();
        metas.insert(
            key.clone(),
            Meta {
                name: p.name.clone(),
                version: p.version.clone(),
                release: p.release.clone(),
                arch: p.arch.clone(),
                vendor: p.vendor.clone(),
                install_time: p.install_time,
                source: Source::Rpm,
            },
        );
        let dirs: std::collections::HashSet<&str> =
            p.dir_names.iter().map(String::as_str).collect();
        for (path, flags) in &p.files {
            if dirs.contains(path.as_str()) || flags & rpm::OK_FILE_FLAGS != 0 {
                continue;
            }
            let n = normalize(path);
            if excluded(&n) {
                continue;
            }
            // The same package for another architecture owns the same file: keep the first.
            if let Some(prev) = owners.get(&n).and_then(|k| metas.get(k))
                && prev.name == p.name
                && prev.version == p.version
                && prev.release == p.release
                && prev.arch != p.arch
            {
                continue;
            }
            owners.insert(n, key.clone());
        }
    }
    (metas, owners)
}

fn dpkg_owners(db: &DbFiles) -> (HashMap<String, Meta>, HashMap<String, String>) {
    let mut metas = HashMap::new();
    let mut owners = HashMap::new();
    for (p, files) in db.packages() {
        let key = format!("{}-{}--{}", p.name, p.version, p.arch);
        metas.insert(
            key.clone(),
            Meta {
                name: p.name.clone(),
                version: p.version.clone(),
                release: String::new(),
                arch: p.arch.clone(),
                vendor: p.maintainer.clone(),
                install_time: 0,
                source: Source::Dpkg,
            },
        );
        for f in files {
            let n = normalize(&f);
            if !excluded(&n) {
                owners.insert(n, key.clone());
            }
        }
    }
    (metas, owners)
}

/// The rpm packages of a layer's database bytes; `None` when they do not read (preflight:
/// the layer then has no rpm database).
fn rpm_packages(db: &RpmDb, tmp: &Path) -> Option<Vec<rpm::Package>> {
    match db {
        RpmDb::BerkeleyDb(b) => rpm::read_bdb(b).ok(),
        RpmDb::Sqlite(b) => {
            let file = tempfile::NamedTempFile::new_in(tmp).ok()?;
            std::fs::write(file.path(), b).ok()?;
            rpm::read_sqlite(file.path()).ok()
        }
    }
}

/// The walk's view of each layer, from the scans in order; `tmp` holds a layer's SQLite
/// database while it is read.
pub fn layer_refs(scans: &[LayerScan], tmp: &Path) -> Vec<LayerRef> {
    let mut out: Vec<LayerRef> = Vec::with_capacity(scans.len());
    let mut rpm_state = (HashMap::new(), HashMap::new());
    let mut dpkg_state = (HashMap::new(), HashMap::new());
    let mut dpkg_db = DbFiles::default();
    for (idx, scan) in scans.iter().enumerate() {
        let rpm_found = match scan.rpmdb.as_ref().and_then(|d| rpm_packages(d, tmp)) {
            Some(pkgs) => {
                rpm_state = rpm_owners(&pkgs);
                true
            }
            None if idx == 0 => {
                rpm_state = (HashMap::new(), HashMap::new());
                true
            }
            None => false,
        };
        let dpkg_touched = !scan.dpkg.is_empty();
        if dpkg_touched {
            dpkg_db.apply(&scan.dpkg);
            dpkg_state = dpkg_owners(&dpkg_db);
        }
        let mut packages = rpm_state.0.clone();
        packages.extend(dpkg_state.0.clone());
        let mut owners = dpkg_state.1.clone();
        owners.extend(rpm_state.1.clone());
        out.push(LayerRef {
            files: scan.files.clone(),
            packages,
            owners,
            has_db: rpm_found || dpkg_touched,
        });
    }
    out
}

/// One disallowed modification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modification {
    pub layer: usize,
    pub file: String,
    pub package: String,
    pub source: Source,
    pub why: &'static str,
}

const RED_HAT: &str = "Red Hat, Inc.";

/// The walk: every package file a later layer changed outside the package manager.
/// `dist` is the `PLATFORM_ID` platform of `/etc/os-release` (`el9`), or `unknown`.
pub fn modifications(refs: &[LayerRef], dist: &str) -> Vec<Modification> {
    let mut out = Vec::new();
    for (idx, layer) in refs.iter().enumerate() {
        for (file, mode) in &layer.files {
            if idx == 0 && layer.has_db {
                continue;
            }
            let Some(current_key) = layer.owners.get(file) else {
                continue;
            };
            let previous = &refs[idx.saturating_sub(1)];
            let previous_key = previous.owners.get(file);
            if previous_key.is_none() && layer.has_db {
                continue;
            }
            let empty = Meta::default();
            let prev = previous_key
                .and_then(|k| previous.packages.get(k))
                .unwrap_or(&empty);
            let cur = layer.packages.get(current_key).unwrap_or(&empty);
            let push = |out: &mut Vec<Modification>, why| {
                out.push(Modification {
                    layer: idx,
                    file: file.clone(),
                    package: format!("{}-{}", cur.name, cur.version),
                    source: cur.source,
                    why,
                })
            };
            if previous_key == Some(current_key) {
                let before = refs[..idx]
                    .iter()
                    .rev()
                    .find_map(|l| l.files.get(file))
                    .copied()
                    .unwrap_or(0);
                let setuid_removed = before & 0o4000 != 0 && mode & 0o4000 == 0;
                let setgid_removed = before & 0o2000 != 0 && mode & 0o2000 == 0;
                if setuid_removed || setgid_removed {
                    continue;
                }
                if cur.source == Source::Rpm {
                    if !cur.release.contains(dist) && dist != "unknown" {
                        continue;
                    }
                    if cur.vendor != RED_HAT && prev.vendor != RED_HAT {
                        continue;
                    }
                    if cur.install_time > prev.install_time {
                        continue;
                    }
                }
                push(&mut out, "changed without the package manager");
                continue;
            }
            if prev.release.contains(dist) && !cur.release.contains(dist) {
                push(&mut out, "replaced by a package of another OS release");
                continue;
            }
            if prev.arch != cur.arch {
                push(&mut out, "replaced by a package of another architecture");
            }
        }
    }
    out
}

/// The platform of `PLATFORM_ID="platform:<x>"` in an os-release file, or `unknown`.
pub fn package_dist(os_release: &str) -> String {
    for line in os_release.lines() {
        if let Some(i) = line.find("PLATFORM_ID=\"platform:") {
            let rest = &line[i + "PLATFORM_ID=\"platform:".len()..];
            let v: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if !v.is_empty() && rest[v.len()..].starts_with('"') {
                return v;
            }
        }
    }
    "unknown".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, version: &str, release: &str, vendor: &str, t: i64) -> Meta {
        Meta {
            name: name.into(),
            version: version.into(),
            release: release.into(),
            arch: "x86_64".into(),
            vendor: vendor.into(),
            install_time: t,
            source: Source::Rpm,
        }
    }

    fn layer(files: &[(&str, u32)], pkgs: &[(&str, Meta, &[&str])], has_db: bool) -> LayerRef {
        let mut l = LayerRef {
            files: files.iter().map(|(f, m)| (f.to_string(), *m)).collect(),
            has_db,
            ..Default::default()
        };
        for (key, m, owned) in pkgs {
            l.packages.insert(key.to_string(), m.clone());
            for f in *owned {
                l.owners.insert(f.to_string(), key.to_string());
            }
        }
        l
    }

    #[test]
    fn the_walk_follows_preflights_rules() {
        let bash = meta("bash", "5.1", "6.el9", RED_HAT, 100);
        let base = layer(
            &[("usr/bin/bash", 0o755)],
            &[("b1", bash.clone(), &["usr/bin/bash"])],
            true,
        );
        // A later layer without a database rewrites a Red Hat file: a modification.
        let later = layer(
            &[("usr/bin/bash", 0o755)],
            &[("b1", bash.clone(), &["usr/bin/bash"])],
            false,
        );
        let m = modifications(&[base.clone(), later], "el9");
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].layer, m[0].file.as_str()), (1, "usr/bin/bash"));
        // Updated through rpm (new version in the layer's database): allowed.
        let newer = meta("bash", "5.2", "1.el9", RED_HAT, 200);
        let updated = layer(
            &[("usr/bin/bash", 0o755)],
            &[("b2", newer, &["usr/bin/bash"])],
            true,
        );
        assert!(modifications(&[base.clone(), updated], "el9").is_empty());
        // Removing setuid is allowed.
        let su = layer(
            &[("usr/bin/su", 0o4755)],
            &[("s", bash.clone(), &["usr/bin/su"])],
            true,
        );
        let nosuid = layer(
            &[("usr/bin/su", 0o755)],
            &[("s", bash.clone(), &["usr/bin/su"])],
            false,
        );
        assert!(modifications(&[su, nosuid], "el9").is_empty());
        // A third-party package's file (vendor not Red Hat): a warning in preflight, not a failure.
        let other = meta("tool", "1", "1.el9", "Acme", 100);
        let b = layer(&[], &[("t", other.clone(), &["usr/bin/tool"])], true);
        let l = layer(
            &[("usr/bin/tool", 0o755)],
            &[("t", other, &["usr/bin/tool"])],
            false,
        );
        assert!(modifications(&[b, l], "el9").is_empty());
        // A file no package owns is never a modification.
        let l = layer(
            &[("opt/app", 0o755)],
            &[("b1", bash, &["usr/bin/bash"])],
            false,
        );
        assert!(modifications(&[base, l], "el9").is_empty());
    }

    #[test]
    fn dpkg_files_changed_without_a_version_change_are_modifications() {
        let libc = Meta {
            source: Source::Dpkg,
            ..meta("libc6", "2.36-9", "", "Debian", 0)
        };
        let base = layer(&[], &[("l", libc.clone(), &["usr/lib/libc.so.6"])], true);
        let later = layer(
            &[("usr/lib/libc.so.6", 0o755)],
            &[("l", libc, &["usr/lib/libc.so.6"])],
            false,
        );
        let m = modifications(&[base, later], "unknown");
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].source, Source::Dpkg);
    }

    #[test]
    fn exclusions_and_dist_read_as_preflight_does() {
        assert!(excluded("etc/passwd") && excluded("etcd/x") && excluded("var/lib/rpm/x"));
        assert!(excluded("usr/share/fonts/.uuid.cache") && !excluded("usr/bin/bash"));
        assert_eq!(
            package_dist("NAME=\"RHEL\"\nPLATFORM_ID=\"platform:el9\"\n"),
            "el9"
        );
        assert_eq!(package_dist("ID=debian\n"), "unknown");
    }
}
