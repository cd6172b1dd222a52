//! A catalog written as a directory, laid out as opm's `declcfg.WriteFS` lays it out (and
//! oc-mirror writes the catalogs it filters): `<root>/<package>/catalog.json` (or `.yaml`)
//! per package, with the blobs of no package in `<root>/catalog.json`. Each file holds what
//! `opm render` writes for those blobs, so the bytes do not depend on the run.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::declcfg::{self, DeclarativeConfig};
use crate::atomic_write::WriteError;

/// The file format, as `opm render -o` names it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Format {
    /// JSON indented by four spaces (opm's default, and what oc-mirror writes).
    #[default]
    Json,
    /// YAML, `---` before each blob.
    Yaml,
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "json" => Ok(Format::Json),
            "yaml" => Ok(Format::Yaml),
            _ => Err(format!("{s:?}: json or yaml")),
        }
    }
}

impl Format {
    pub fn extension(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Yaml => "yaml",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WriteFsError {
    #[error("invalid package name {0:?}: must be a single local path element")]
    PackageName(String),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// Writes `cfg` under `root` (a fresh directory), one file per package, and returns the
/// files written relative to `root`, in order. Each file is flushed to disk before the next.
pub fn write_fs(
    cfg: DeclarativeConfig,
    root: &Path,
    format: Format,
) -> Result<Vec<PathBuf>, WriteFsError> {
    let (packages, rootless) = split_by_package(cfg);
    let ext = format.extension();
    let bad =
        |n: &String| n.is_empty() || matches!(n.as_str(), "." | "..") || n.contains(['/', '\\']);
    if let Some(name) = packages.keys().find(|n| bad(n)) {
        return Err(WriteFsError::PackageName(name.clone()));
    }
    let mut written = Vec::with_capacity(packages.len() + 1);
    for (name, part) in &packages {
        let rel = declcfg::package_file(Path::new(""), name, ext);
        write_file(part, &root.join(&rel), format)?;
        written.push(rel);
    }
    if !rootless.is_empty() {
        let rel = PathBuf::from(format!("catalog.{ext}"));
        write_file(&rootless, &root.join(&rel), format)?;
        written.push(rel);
    }
    Ok(written)
}

/// The blobs of each package (by name; a channel, bundle or deprecation names its package),
/// and the blobs of none. The blobs are moved, not copied.
pub fn split_by_package(
    cfg: DeclarativeConfig,
) -> (BTreeMap<String, DeclarativeConfig>, DeclarativeConfig) {
    let mut packages: BTreeMap<String, DeclarativeConfig> = BTreeMap::new();
    let mut rootless = DeclarativeConfig::default();
    for p in cfg.packages {
        packages.entry(p.name.clone()).or_default().packages.push(p);
    }
    for c in cfg.channels {
        packages
            .entry(c.package.clone())
            .or_default()
            .channels
            .push(c);
    }
    for b in cfg.bundles {
        packages
            .entry(b.package.clone())
            .or_default()
            .bundles
            .push(b);
    }
    for d in cfg.deprecations {
        packages
            .entry(d.package.clone())
            .or_default()
            .deprecations
            .push(d);
    }
    for o in cfg.others {
        match o.package.is_empty() {
            true => rootless.others.push(o),
            false => packages
                .entry(o.package.clone())
                .or_default()
                .others
                .push(o),
        }
    }
    (packages, rootless)
}

fn write_file(cfg: &DeclarativeConfig, path: &Path, format: Format) -> Result<(), WriteError> {
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| WriteError {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let file = std::fs::File::create(path).map_err(fail)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    match format {
        Format::Json => cfg.write_json(&mut out),
        Format::Yaml => cfg.write_go_yaml(&mut out),
    }
    .and_then(|()| out.flush())
    .map_err(fail)?;
    let file = out.into_inner().map_err(|e| fail(e.into_error()))?;
    file.sync_all().map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::load::load_bytes;

    const CAT: &str = r#"{"schema":"olm.package","name":"b","defaultChannel":"s"}
{"schema":"olm.channel","name":"s","package":"b","entries":[{"name":"b.v1.0.0"}]}
{"schema":"olm.bundle","name":"b.v1.0.0","package":"b","image":"x/b:1","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}}]}
{"schema":"olm.package","name":"a"}
{"schema":"x.global","note":1}
"#;

    #[test]
    fn one_file_per_package_and_one_for_the_rest() {
        let cfg = load_bytes(Path::new("c.json"), CAT.as_bytes()).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let files = write_fs(cfg.clone(), dir.path(), Format::Json).unwrap();
        assert_eq!(
            files,
            [
                PathBuf::from("a/catalog.json"),
                PathBuf::from("b/catalog.json"),
                PathBuf::from("catalog.json")
            ]
        );
        let (parts, _) = split_by_package(cfg.clone());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b/catalog.json")).unwrap(),
            parts["b"].to_json()
        );
        // Reading the directory back gives the catalog again.
        let mut back = crate::catalog::load::load_dir(dir.path()).unwrap();
        back.clear_sources();
        let mut want = cfg;
        want.clear_sources();
        assert_eq!(back.to_json(), want.to_json());
        let yaml = tempfile::tempdir().unwrap();
        let files = write_fs(want, yaml.path(), Format::Yaml).unwrap();
        assert_eq!(files[0], PathBuf::from("a/catalog.yaml"));
        assert!(
            std::fs::read_to_string(yaml.path().join("a/catalog.yaml"))
                .unwrap()
                .starts_with("---\n")
        );
    }

    #[test]
    fn a_package_name_that_is_a_path_is_refused() {
        let cfg = load_bytes(
            Path::new("c.json"),
            br#"{"schema":"olm.package","name":"../evil"}"#,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let e = write_fs(cfg, dir.path(), Format::Json).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid package name \"../evil\": must be a single local path element"
        );
    }
}
