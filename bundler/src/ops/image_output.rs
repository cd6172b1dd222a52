//! Where an image command's result goes: the `-t`/`--push` destination, checked before any
//! build; storing the image there (a layout or a registry) and writing `--digestfile`; and the
//! inputs the build commands share (labels, the CA bundle to copy in); the SBOM a build
//! writes beside its output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::atomic_write;
use crate::image::model::{Artifact, Platform};
use crate::image::reference::ImageRef;
use crate::image::registry::RegistryOptions;
use crate::image::rootfs;
use crate::image::sbom::{self, SbomError, SbomOptions};
use crate::image::transfer::{self, Stored};

/// The layout builds go to when `-t` is not given.
pub const DEFAULT_DEST: &str = "oci:oci-layout";

/// Why an image could not be stored, or its digest written.
#[derive(Debug, thiserror::Error)]
pub enum DeliverError {
    #[error(transparent)]
    Transfer(#[from] transfer::TransferError),
    #[error(transparent)]
    DigestFile(#[from] atomic_write::WriteError),
}

/// The destination `-t` (default [`DEFAULT_DEST`]) names, checked against `--push` before
/// anything is built, so a usage mistake costs no build time. `Err` is a usage message.
pub fn destination(tag: Option<&str>, push: bool) -> Result<ImageRef, String> {
    let text = tag.unwrap_or(DEFAULT_DEST);
    let dest = ImageRef::parse(text).map_err(|e| format!("-t: {e}"))?;
    match (&dest, push) {
        (ImageRef::Registry(_), false) => Err(format!(
            "-t {text} names a registry: add --push to push it, or write a local layout with -t oci:<dir>[:tag]"
        )),
        (ImageRef::Layout { .. }, true) => Err(format!(
            "--push needs a registry reference in -t (got {text})"
        )),
        _ => Ok(dest),
    }
}

/// Stores a built image (or index) at `dest` and writes its digest to `digestfile`.
pub async fn deliver(
    image: &Artifact,
    dest: &ImageRef,
    digestfile: Option<&Path>,
    opts: &RegistryOptions,
) -> Result<Stored, DeliverError> {
    let stored = transfer::store(dest, image, opts).await?;
    if let Some(report) = &stored.push {
        tracing::info!("{}: {}", dest, report.summary());
    } else {
        tracing::info!("{}: wrote {}", dest, stored.digest);
    }
    if let Some(path) = digestfile {
        atomic_write::write_atomic(path, stored.digest.as_bytes())?;
    }
    Ok(stored)
}

/// Why an image's SBOM could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum SbomFileError {
    #[error(transparent)]
    Sbom(#[from] SbomError),
    #[error(transparent)]
    Write(#[from] atomic_write::WriteError),
}

/// Where `olm image build` writes the SBOM when `--sbom` does not say: beside an OCI layout
/// directory (`oci:target/operator:v1` gives `target/operator.spdx.json`), as `olm release`
/// writes `<layouts>/operator.spdx.json` beside `<layouts>/operator`. A push has no local
/// output to sit beside: there the SBOM is written only with `--sbom`.
pub fn default_sbom_path(dest: &ImageRef) -> Option<PathBuf> {
    let ImageRef::Layout { dir, .. } = dest else {
        return None;
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n != "." && n != "..");
    Some(match name {
        Some(n) => dir.with_file_name(format!("{n}.spdx.json")),
        None => dir.join("sbom.spdx.json"),
    })
}

/// The name an SBOM gives the image: the repository it is pushed to, else the binary's file
/// name.
pub fn sbom_name(dest: &ImageRef, binary: &Path) -> String {
    match dest {
        ImageRef::Registry(r) => r.name(),
        ImageRef::Layout { .. } => binary
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "image".into()),
    }
}

/// The SPDX 2.3 JSON SBOM of an image built from host binaries (its libraries' Debian
/// packages come from this host's dpkg database), for `olm release` to write or attest.
pub fn image_sbom(image: &Artifact, name: &str) -> Result<Vec<u8>, SbomError> {
    let opts = SbomOptions {
        name: name.to_string(),
        sysroot: PathBuf::from("/"),
    };
    sbom::spdx_json(image, &opts)
}

/// Writes the SBOM of a build that goes to `dest`: to `path`, else to
/// [`default_sbom_path`]; nothing with `skip`. Returns where it went.
pub fn write_build_sbom(
    image: &Artifact,
    dest: &ImageRef,
    binary: &Path,
    path: Option<&Path>,
    skip: bool,
) -> Result<Option<PathBuf>, SbomFileError> {
    let Some(path) = path
        .map(Path::to_path_buf)
        .or_else(|| default_sbom_path(dest))
        .filter(|_| !skip)
    else {
        return Ok(None);
    };
    let bytes = image_sbom(image, &sbom_name(dest, binary))?;
    atomic_write::write_atomic(&path, &bytes)?;
    tracing::info!("{}: wrote the SBOM of {}", path.display(), image.digest());
    Ok(Some(path))
}

/// `KEY=VALUE` labels; `Err` names the malformed one.
pub fn parse_labels(items: &[String]) -> Result<BTreeMap<String, String>, String> {
    items
        .iter()
        .map(|item| match item.split_once('=') {
            Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
            _ => Err(format!("--label {item:?}: expected KEY=VALUE")),
        })
        .collect()
}

/// The CA bundle to copy into an image: the given file, none, or the host's.
pub fn ca_bundle(ca_certs: Option<&Path>, none: bool) -> Option<PathBuf> {
    if none {
        None
    } else {
        Some(
            ca_certs
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(rootfs::HOST_CA_BUNDLE)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations_are_checked_before_building() {
        assert!(destination(None, false).is_ok());
        let e = destination(Some("quay.io/a/b:1"), false).unwrap_err();
        assert!(e.contains("add --push"), "{e}");
        let e = destination(Some("oci:dir"), true).unwrap_err();
        assert!(e.contains("--push needs a registry reference"), "{e}");
        assert!(destination(Some("quay.io/a/b:1"), true).is_ok());
    }

    #[test]
    fn sboms_go_beside_layouts() {
        let at = |s: &str| default_sbom_path(&ImageRef::parse(s).unwrap());
        assert_eq!(
            at("oci:target/operator:v1"),
            Some(PathBuf::from("target/operator.spdx.json"))
        );
        assert_eq!(at("oci:layout/"), Some(PathBuf::from("layout.spdx.json")));
        assert_eq!(at("oci:."), Some(PathBuf::from("./sbom.spdx.json")));
        assert_eq!(at("localhost:5000/a/b:1"), None);
        let name = |s: &str| sbom_name(&ImageRef::parse(s).unwrap(), Path::new("/x/op"));
        assert_eq!(name("localhost:5000/a/b:1"), "localhost:5000/a/b");
        assert_eq!(name("oci:dir:1"), "op");
    }

    #[test]
    fn labels_and_ca_bundles() {
        let l = parse_labels(&["a=b".into(), "c=".into()]).unwrap();
        assert_eq!(l["a"], "b");
        assert_eq!(l["c"], "");
        assert!(parse_labels(&["=x".into()]).is_err());
        assert_eq!(ca_bundle(None, true), None);
        assert_eq!(
            ca_bundle(Some(Path::new("/x.pem")), false),
            Some(PathBuf::from("/x.pem"))
        );
    }
}

/// What `olm image build` makes an operator image of, in the command line's words.
#[derive(Debug, Clone, Default)]
pub struct OperatorImageRequest {
    /// One binary per platform (one: a single image; several: an index of one image each).
    pub binaries: Vec<PathBuf>,
    /// Where the binary goes in the image (absolute); default `/usr/local/bin/<name>`.
    pub install_path: Option<String>,
    pub library_path: Vec<String>,
    pub args: Vec<String>,
    /// `KEY=VALUE` environment entries.
    pub env: Vec<String>,
    /// `KEY=VALUE` labels.
    pub labels: Vec<String>,
    pub source: Option<String>,
    pub revision: Option<String>,
    pub version: Option<String>,
    pub licenses: Option<String>,
    /// License files copied into `/licenses/`.
    pub license_files: Vec<PathBuf>,
    pub ca_certs: Option<PathBuf>,
    pub no_ca_certs: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum OperatorImageError {
    /// A flag's value cannot be used (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error("building the image for {binary}")]
    Build {
        binary: String,
        #[source]
        source: rootfs::BuildError,
    },
}

/// Builds the operator image `req` describes: one image, or with several binaries an index
/// of one image per platform (all installed at the first binary's path).
pub fn operator_image(req: &OperatorImageRequest) -> Result<Artifact, OperatorImageError> {
    use crate::image::operator::{OperatorImage, labels};
    let usage = OperatorImageError::Usage;
    let Some((first, others)) = req.binaries.split_first() else {
        return Err(usage("--binary: at least one binary is needed".into()));
    };
    let build = |source| OperatorImageError::Build {
        binary: req
            .binaries
            .iter()
            .map(|b| b.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        source,
    };
    let mut spec = OperatorImage::for_binary(first.clone()).map_err(build)?;
    if let Some(p) = &req.install_path {
        if !p.starts_with('/') {
            return Err(usage(format!("--install-path {p:?}: must be absolute")));
        }
        spec.binary.install_path = p.clone();
    }
    if let Some(e) = req.env.iter().find(|e| !e.contains('=')) {
        return Err(usage(format!("--env {e:?}: expected KEY=VALUE")));
    }
    spec.binary.library_path = req.library_path.clone();
    spec.args = req.args.clone();
    spec.env = req.env.clone();
    spec.ca_bundle = ca_bundle(req.ca_certs.as_deref(), req.no_ca_certs);
    spec.labels = parse_labels(&req.labels).map_err(usage)?;
    let mut names = std::collections::BTreeSet::new();
    for f in &req.license_files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if !f.is_file() || name.is_empty() {
            return Err(usage(format!(
                "--license {}: not a readable file",
                f.display()
            )));
        }
        if !names.insert(name.to_string()) {
            return Err(usage(format!(
                "--license {}: another license file is named {name:?}",
                f.display()
            )));
        }
    }
    spec.license_files = req.license_files.clone();
    for (key, value) in [
        (labels::SOURCE, &req.source),
        (labels::REVISION, &req.revision),
        (labels::VERSION, &req.version),
        (labels::LICENSES, &req.licenses),
    ] {
        if let Some(v) = value {
            spec.labels.insert(key.to_string(), v.clone());
        }
    }
    spec.build_all(others).map_err(build)
}

/// Why an image could not be moved.
#[derive(Debug, thiserror::Error)]
pub enum MoveError {
    /// The references do not fit the command (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Reference(#[from] crate::image::reference::RefError),
    #[error(transparent)]
    Transfer(#[from] transfer::TransferError),
    #[error(transparent)]
    Unpack(#[from] crate::image::unpack::UnpackError),
    #[error(transparent)]
    Deliver(#[from] DeliverError),
}

/// Which way `olm image push|pull|copy` moves an image: push reads a layout and writes a
/// registry, pull writes a layout (or only unpacks), copy goes anywhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Push,
    Pull,
    Copy,
}

/// Copies `source` to `destination` (when given) through the copy engine, after checking
/// the two fit `direction`; `rootfs` also unpacks the image's files there. An index moves
/// whole unless `platform` picks one image. Returns the digest the destination names (or,
/// when only unpacked, the unpacked image's) and, when stored, its pinned reference.
pub async fn move_image(
    direction: Direction,
    source: &str,
    destination: Option<&str>,
    rootfs: Option<&Path>,
    digestfile: Option<&Path>,
    platform: Option<&Platform>,
    opts: &RegistryOptions,
) -> Result<(String, Option<Stored>), MoveError> {
    let src = ImageRef::parse(source)?;
    let dst = destination.map(ImageRef::parse).transpose()?;
    let to_registry = dst.as_ref().map(ImageRef::is_registry);
    let usage = match (direction, src.is_registry(), to_registry) {
        (Direction::Push, true, _) => Some(format!(
            "{source}: push reads a local OCI layout (oci:<dir>[:tag]); use `olm image copy` between registries"
        )),
        (Direction::Push, _, Some(false)) => Some(format!(
            "{}: push needs a registry reference as destination",
            destination.unwrap_or_default()
        )),
        (Direction::Pull, _, Some(true)) => Some(format!(
            "{}: pull writes a local OCI layout (oci:<dir>[:tag]); use `olm image copy` between registries",
            dst.as_ref().map(ToString::to_string).unwrap_or_default()
        )),
        _ => None,
    };
    if let Some(msg) = usage {
        return Err(MoveError::Usage(msg));
    }
    let mut digest = None;
    if let Some(root) = rootfs {
        // A directory this run makes is removed again when the unpack fails or is
        // interrupted (a bomb stopped at the limit leaves nothing); one that was there is the
        // user's and stays.
        let made = (!root.exists()).then(|| crate::scratch::remove_on_signal(root));
        let pulled = match transfer::pull_to_dir_for(source, platform, root, opts).await {
            Ok(p) => p,
            Err(e) => {
                if made.is_some() {
                    let _ = std::fs::remove_dir_all(root);
                }
                return Err(e.into());
            }
        };
        drop(made);
        tracing::info!(
            "{}: unpacked {} into {}",
            src,
            pulled.digest,
            root.display()
        );
        digest = Some(pulled.digest);
    }
    let stored = match &dst {
        Some(d) => {
            let stored = transfer::copy(&src, d, platform, opts).await?;
            if let Some(report) = &stored.push {
                tracing::info!("{}: {}", d, report.summary());
            } else {
                tracing::info!(
                    "{}: wrote {} ({} blobs written, {} present)",
                    d,
                    stored.digest,
                    stored.copied.uploaded.len(),
                    stored.copied.present.len()
                );
            }
            digest = Some(stored.digest.clone());
            Some(stored)
        }
        None => None,
    };
    let digest = digest.unwrap_or_default();
    if let Some(path) = digestfile {
        atomic_write::write_atomic(path, digest.as_bytes()).map_err(DeliverError::DigestFile)?;
    }
    Ok((digest, stored))
}
