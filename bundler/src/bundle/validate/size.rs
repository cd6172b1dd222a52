//! Bundle size: OLM unpacks a bundle into one ConfigMap, so the gzip+base64 size of its files
//! must stay under 1 MiB (operator-framework/api `internal/bundle.go`). Measured over every
//! file under the bundle root, as upstream does.

use crate::confined::{EntryKind, RelPath, Tree};
use std::io::Write;

use base64::Engine;

use super::{Ctx, Finding};

const V: &str = "size";
/// The ConfigMap budget OLM unpacks a bundle into.
pub const MAX_BUNDLE_SIZE: u64 = 1 << 20;

/// Compressed (gzip, then base64) and raw sizes of every file of `tree`.
pub fn bundle_size(tree: &Tree) -> std::io::Result<(u64, u64)> {
    let mut compressed = 0u64;
    let mut raw = 0u64;
    let mut stack = vec![RelPath::root()];
    while let Some(dir) = stack.pop() {
        for (name, kind) in tree.read_dir(&dir)? {
            let rel = dir.child(&name).map_err(std::io::Error::other)?;
            match kind {
                EntryKind::Dir => stack.push(rel),
                EntryKind::File => {
                    let bytes = tree.read(&rel)?;
                    raw += bytes.len() as u64;
                    compressed += compressed_len(&bytes)?;
                }
                _ => {}
            }
        }
    }
    Ok((compressed, raw))
}

/// `len(base64(gzip(bytes)))`.
pub fn compressed_len(bytes: &[u8]) -> std::io::Result<u64> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(bytes)?;
    let gz = gz.finish()?;
    Ok(base64::engine::general_purpose::STANDARD.encode(&gz).len() as u64)
}

/// Decimal units as upstream prints them (`1.0 MB`, `512 B`).
pub fn format_bytes(n: u64) -> String {
    if n < 1000 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1000.0;
    for unit in ["kB", "MB", "GB"] {
        if value < 1000.0 || unit == "GB" {
            return format!("{value:.1} {unit}");
        }
        value /= 1000.0;
    }
    unreachable!("the loop returns at GB")
}

pub fn validate(ctx: &Ctx<'_>) -> Vec<Finding> {
    let (compressed, raw) = match bundle_size(&ctx.bundle.tree) {
        Ok(s) => s,
        Err(e) => {
            return vec![
                Finding::warning(V, "size", format!("unable to check the bundle size: {e}"))
                    .file(ctx.bundle.root.clone()),
            ];
        }
    };
    let detail = format!(
        "size=~{} , max={}. Bundle uncompressed size is {}",
        format_bytes(compressed),
        format_bytes(MAX_BUNDLE_SIZE),
        format_bytes(raw)
    );
    if compressed > MAX_BUNDLE_SIZE {
        vec![
            Finding::error(V, "size", format!("maximum bundle compressed size with gzip size exceeded: {detail}"))
                .hint("OLM stores the unpacked bundle in one ConfigMap: shrink CRD descriptions (e.g. controller-gen crd:maxDescLen=0), drop unneeded manifests, or split the operator"),
        ]
    } else if compressed * 100 > MAX_BUNDLE_SIZE * 85 {
        vec![
            Finding::warning(
                V,
                "size",
                format!("nearing maximum bundle compressed size with gzip: {detail}"),
            )
            .hint("the bundle is above 85% of OLM's 1 MiB ConfigMap budget"),
        ]
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_decimal() {
        assert_eq!(format_bytes(999), "999 B");
        assert_eq!(format_bytes(1 << 20), "1.0 MB");
        assert_eq!(format_bytes(1500), "1.5 kB");
    }
}
