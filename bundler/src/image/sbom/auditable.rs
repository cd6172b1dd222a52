//! The Rust crates compiled into a binary, from the `.dep-v0` section cargo-auditable writes:
//! zlib-compressed JSON `{"packages":[{"name","version","source","kind","dependencies",
//! "root"}]}` (the `auditable-serde` format that syft, trivy and `cargo audit bin` read).
//!
//! The section is input from a file we did not write: its compressed and decompressed sizes
//! are bounded, and every field is checked before it reaches a purl.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The ELF section cargo-auditable writes.
pub const SECTION: &str = ".dep-v0";
/// At most this much JSON (cargo-auditable's own reader allows 8 MiB by default).
pub const MAX_JSON: u64 = 8 << 20;
/// At most this much compressed data in the section.
pub const MAX_SECTION: u64 = 8 << 20;

#[derive(Debug, thiserror::Error)]
#[error("{path}: section {SECTION}: {what}")]
pub struct AuditableError {
    pub path: PathBuf,
    pub what: String,
}

/// Whether cargo needed a crate to build the binary (`build`: build scripts, proc macros)
/// or it is compiled into it (`runtime`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Build,
    #[default]
    Runtime,
}

/// One crate of the dependency tree.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Crate {
    pub name: String,
    pub version: String,
    /// `crates.io`, `git`, `local`, `registry` or `other`.
    pub source: String,
    #[serde(default)]
    pub kind: Kind,
    /// Indices into the package list.
    #[serde(default)]
    pub dependencies: Vec<usize>,
    /// The crate the binary was built from.
    #[serde(default)]
    pub root: bool,
}

#[derive(Deserialize)]
struct VersionInfo {
    packages: Vec<Crate>,
}

/// Decompresses and checks the section's bytes; `path` names the binary in errors.
pub fn decode(section: &[u8], path: &Path) -> Result<Vec<Crate>, AuditableError> {
    let bad = |what: String| AuditableError {
        path: path.to_path_buf(),
        what,
    };
    if section.len() as u64 > MAX_SECTION {
        return Err(bad(format!(
            "{} bytes (at most {MAX_SECTION})",
            section.len()
        )));
    }
    let mut json = Vec::new();
    flate2::read::ZlibDecoder::new(section)
        .take(MAX_JSON + 1)
        .read_to_end(&mut json)
        .map_err(|e| bad(format!("not a zlib stream: {e}")))?;
    if json.len() as u64 > MAX_JSON {
        return Err(bad(format!("decompresses to more than {MAX_JSON} bytes")));
    }
    let info: VersionInfo = serde_json::from_slice(&json)
        .map_err(|e| bad(format!("not cargo-auditable's dependency JSON: {e}")))?;
    let n = info.packages.len();
    for (i, c) in info.packages.iter().enumerate() {
        let valid_name = !c.name.is_empty()
            && c.name.len() <= 64
            && c.name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid_name {
            return Err(bad(format!(
                "packages[{i}].name {:?} is not a crate name",
                c.name
            )));
        }
        if semver::Version::parse(&c.version).is_err() {
            return Err(bad(format!(
                "packages[{i}].version {:?} is not a semver version",
                c.version
            )));
        }
        if let Some(d) = c.dependencies.iter().find(|&&d| d >= n || d == i) {
            return Err(bad(format!(
                "packages[{i}].dependencies names package {d} (of {n})"
            )));
        }
    }
    Ok(info.packages)
}

/// The crate's package URL, as syft's rust-audit cataloger writes it.
pub fn purl(c: &Crate) -> String {
    format!(
        "pkg:cargo/{}@{}",
        c.name,
        super::spdx::purl_escape(&c.version)
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write as _;

    pub(crate) fn compress(json: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(json).unwrap();
        z.finish().unwrap()
    }

    pub(crate) const SAMPLE: &str = r#"{"packages":[
        {"name":"adler","version":"0.2.3","source":"crates.io"},
        {"name":"cc","version":"1.0.73","source":"crates.io","kind":"build"},
        {"name":"demo","version":"0.1.0","source":"local","dependencies":[0,1],"root":true}
    ]}"#;

    #[test]
    fn decodes_cargo_auditable_json() {
        let crates = decode(&compress(SAMPLE.as_bytes()), Path::new("bin")).unwrap();
        assert_eq!(crates.len(), 3);
        assert_eq!(crates[1].kind, Kind::Build);
        assert_eq!(crates[0].kind, Kind::Runtime);
        assert!(crates[2].root);
        assert_eq!(crates[2].dependencies, [0, 1]);
        assert_eq!(purl(&crates[0]), "pkg:cargo/adler@0.2.3");
        let pre = Crate {
            version: "1.0.0-rc.1+build.5".into(),
            ..crates[0].clone()
        };
        assert_eq!(purl(&pre), "pkg:cargo/adler@1.0.0-rc.1%2Bbuild.5");
    }

    #[test]
    fn hostile_sections_are_errors_naming_the_file() {
        let p = Path::new("/usr/local/bin/op");
        let e = decode(b"not zlib", p).unwrap_err().to_string();
        assert!(
            e.starts_with("/usr/local/bin/op: section .dep-v0: not a zlib"),
            "{e}"
        );
        // A zlib bomb stops at the bound instead of filling memory.
        let bomb = compress(&vec![b' '; (MAX_JSON + 10) as usize]);
        let e = decode(&bomb, p).unwrap_err().to_string();
        assert!(e.contains("more than"), "{e}");
        for (json, want) in [
            (
                r#"{"packages":[{"name":"a/../b","version":"1.0.0","source":"crates.io"}]}"#,
                "not a crate name",
            ),
            (
                r#"{"packages":[{"name":"a","version":"x","source":"crates.io"}]}"#,
                "not a semver",
            ),
            (
                r#"{"packages":[{"name":"a","version":"1.0.0","source":"crates.io","dependencies":[5]}]}"#,
                "names package 5",
            ),
            (r#"{"packages":"no"}"#, "dependency JSON"),
        ] {
            let e = decode(&compress(json.as_bytes()), p)
                .unwrap_err()
                .to_string();
            assert!(e.contains(want), "{json}: {e}");
        }
    }
}
