//! A package's `olm.package` blob from its name, default channel, README and icon, as `opm
//! init` writes it (operator-registry `alpha/action/init.go`).

use std::path::Path;

use base64::Engine as _;

use super::declcfg::{DeclarativeConfig, Icon, Package, SCHEMA_PACKAGE};

#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error("{path}: cannot read the {what}: {source}")]
    Read {
        path: String,
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{path}: detected invalid type {detected:?}: not an image")]
    NotAnImage { path: String, detected: String },
    #[error("{path}: the description is not UTF-8")]
    DescriptionNotUtf8 { path: String },
}

/// What `olm catalog init` is given.
#[derive(Debug, Clone, Default)]
pub struct InitOptions<'a> {
    pub package: &'a str,
    pub default_channel: &'a str,
    pub description: Option<&'a Path>,
    pub icon: Option<&'a Path>,
}

fn read(path: &Path, what: &'static str) -> Result<Vec<u8>, InitError> {
    std::fs::read(path).map_err(|source| InitError::Read {
        path: path.display().to_string(),
        what,
        source,
    })
}

/// Builds the package blob: the description verbatim, the icon base64-encoded with the media
/// type its magic bytes say (opm accepts only images it recognises, so SVG is refused as opm
/// refuses it).
pub fn init(opts: &InitOptions<'_>) -> Result<DeclarativeConfig, InitError> {
    let mut pkg = Package {
        schema: SCHEMA_PACKAGE.into(),
        name: opts.package.into(),
        default_channel: opts.default_channel.into(),
        ..Default::default()
    };
    if let Some(p) = opts.description {
        pkg.description = String::from_utf8(read(p, "description")?).map_err(|_| {
            InitError::DescriptionNotUtf8 {
                path: p.display().to_string(),
            }
        })?;
    }
    if let Some(p) = opts.icon {
        let data = read(p, "icon")?;
        let media_type = image_media_type(&data).ok_or_else(|| InitError::NotAnImage {
            path: p.display().to_string(),
            detected: String::new(),
        })?;
        pkg.icon = Some(Icon {
            data: base64::engine::general_purpose::STANDARD.encode(&data),
            media_type: media_type.into(),
        });
    }
    let mut cfg = DeclarativeConfig::default();
    cfg.packages.push(pkg);
    Ok(cfg)
}

/// The image media types h2non/filetype (what opm uses) recognises by magic bytes.
pub fn image_media_type(b: &[u8]) -> Option<&'static str> {
    let at = |off: usize, magic: &[u8]| {
        b.len() >= off + magic.len() && &b[off..off + magic.len()] == magic
    };
    if at(0, &[0xFF, 0xD8, 0xFF]) {
        Some("image/jpeg")
    } else if at(0, &[0x89, b'P', b'N', b'G']) {
        Some("image/png")
    } else if at(0, b"GIF8") {
        Some("image/gif")
    } else if at(0, b"RIFF") && at(8, b"WEBP") {
        Some("image/webp")
    } else if at(0, b"BM") {
        Some("image/bmp")
    } else if at(0, &[0x49, 0x49, 0x2A, 0x00]) || at(0, &[0x4D, 0x4D, 0x00, 0x2A]) {
        Some("image/tiff")
    } else if at(0, &[0x00, 0x00, 0x01, 0x00]) {
        Some("image/vnd.microsoft.icon")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn media_types_from_magic_bytes() {
        assert_eq!(image_media_type(b"\x89PNG\r\n\x1a\n"), Some("image/png"));
        assert_eq!(image_media_type(b"GIF89a"), Some("image/gif"));
        assert_eq!(image_media_type(b"<svg xmlns="), None);
    }

    #[test]
    fn package_blob_without_files() {
        let cfg = init(&InitOptions {
            package: "foo",
            default_channel: "stable",
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            cfg.to_yaml().unwrap(),
            "---\ndefaultChannel: stable\nname: foo\nschema: olm.package\n"
        );
    }
}
