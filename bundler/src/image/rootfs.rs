//! The parts every application image shares (ko's and distroless' conventions): a base layer
//! with a non-root user and group (uid/gid 65532), CA certificates and a writable /tmp; a layer
//! with the binary's shared-library closure when it is dynamic; and a layer with the binary.
//!
//! Splitting them keeps pushes cheap: a new build of the binary changes only the last layer,
//! so the base and library layers are already in the registry.

use std::path::{Path, PathBuf};

use super::elf::{self, ElfError, ElfInfo};
use super::layer::{Layer, LayerBuilder, LayerError, NONROOT_ID, Owner};
use super::model::{ImageBuilder, Platform};

/// Where hosts keep the PEM bundle of trusted CAs (Debian, Ubuntu, Alpine, Arch...).
pub const HOST_CA_BUNDLE: &str = "/etc/ssl/certs/ca-certificates.crt";
/// Where the image gets it (the path Go, OpenSSL and rustls-native-certs look at first).
pub const IMAGE_CA_BUNDLE: &str = "etc/ssl/certs/ca-certificates.crt";

const PASSWD: &str = "root:x:0:0:root:/root:/sbin/nologin\n\
nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n";
const GROUP: &str = "root:x:0:\nnonroot:x:65532:\n";
const NSSWITCH: &str = "passwd: files\ngroup: files\nhosts: files dns\n";

/// The user application images run as.
pub fn nonroot_user() -> String {
    format!("{NONROOT_ID}:{NONROOT_ID}")
}

#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error(transparent)]
    Layer(#[from] LayerError),
    #[error(transparent)]
    Elf(#[from] ElfError),
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: no CA certificate bundle on this host; pass --ca-certs <file> or --no-ca-certs"
    )]
    NoCaBundle { path: PathBuf },
    #[error("{path}: {what}")]
    Input { path: PathBuf, what: String },
    #[error("SOURCE_DATE_EPOCH: {0}")]
    Epoch(#[from] crate::reproducible::EpochError),
    #[error(
        "{first} and {second} are both {platform} binaries: a multi-platform image holds one image per platform"
    )]
    SamePlatform {
        platform: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error(transparent)]
    Model(#[from] super::model::ModelError),
}

/// The platform a binary's ELF header names.
pub fn platform_of(binary: &Path) -> Result<Platform, BuildError> {
    let info = elf::read(binary)?;
    let (arch, variant) = info.oci_arch().ok_or_else(|| ElfError::Machine {
        path: binary.to_path_buf(),
        machine: info.machine,
    })?;
    Ok(Platform {
        os: "linux".into(),
        architecture: arch.into(),
        variant: variant.map(str::to_string),
    })
}

/// The platform of each binary, in order; two binaries of one platform are refused, naming
/// both files (checked before anything is built).
pub fn distinct_platforms(binaries: &[PathBuf]) -> Result<Vec<Platform>, BuildError> {
    let mut out: Vec<Platform> = Vec::with_capacity(binaries.len());
    for (i, b) in binaries.iter().enumerate() {
        let p = platform_of(b)?;
        if let Some(j) = out.iter().position(|q| *q == p) {
            return Err(BuildError::SamePlatform {
                platform: p.to_string(),
                first: binaries[j].clone(),
                second: binaries[i].clone(),
            });
        }
        out.push(p);
    }
    Ok(out)
}

/// The base layer: passwd, group, nsswitch, CA certificates, /tmp and the nonroot home.
/// `ca_bundle` is the host file to copy, `None` to leave certificates out.
pub fn base_layer(ca_bundle: Option<&Path>, mtime: u64) -> Result<Layer, BuildError> {
    let mut b = LayerBuilder::new(mtime);
    b.file("etc/passwd", PASSWD.as_bytes().to_vec(), 0o644, Owner::Root)?;
    b.file("etc/group", GROUP.as_bytes().to_vec(), 0o644, Owner::Root)?;
    b.file(
        "etc/nsswitch.conf",
        NSSWITCH.as_bytes().to_vec(),
        0o644,
        Owner::Root,
    )?;
    b.dir("home/nonroot", 0o700, Owner::Nonroot)?;
    b.dir("root", 0o700, Owner::Root)?;
    b.dir("tmp", 0o1777, Owner::Root)?;
    if let Some(path) = ca_bundle {
        let data = std::fs::read(path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                BuildError::NoCaBundle {
                    path: path.to_path_buf(),
                }
            } else {
                BuildError::Read {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })?;
        b.file(IMAGE_CA_BUNDLE, data, 0o644, Owner::Root)?;
    }
    Ok(b.finish()?)
}

/// How to pack one Linux binary into an image.
#[derive(Debug, Clone)]
pub struct BinarySpec {
    /// The binary on the host.
    pub binary: PathBuf,
    /// Absolute path inside the image, e.g. `/usr/local/bin/manager`.
    pub install_path: String,
    /// Filesystem root to find shared libraries under (normally `/`).
    pub sysroot: PathBuf,
    /// Extra library directories, searched after RPATH and before the system ones.
    pub library_path: Vec<String>,
}

/// The binary's layers and what its ELF header says about the platform.
pub struct BinaryLayers {
    pub elf: ElfInfo,
    /// The interpreter and shared libraries; `None` for a static binary.
    pub libraries: Option<Layer>,
    /// The binary itself (plus whatever the caller added to the same builder).
    pub app: Layer,
}

/// Reads the binary's ELF headers, packs its library closure, and puts the binary at
/// `install_path` (mode 0755, root-owned so the non-root user cannot replace it). `extra`
/// may add more entries to the binary's layer (e.g. a symlink to it).
pub fn binary_layers(
    spec: &BinarySpec,
    mtime: u64,
    extra: impl FnOnce(&mut LayerBuilder) -> Result<(), LayerError>,
) -> Result<BinaryLayers, BuildError> {
    let info = elf::read(&spec.binary)?;
    if info.oci_arch().is_none() {
        return Err(ElfError::Machine {
            path: spec.binary.clone(),
            machine: info.machine,
        }
        .into());
    }
    let libraries = if info.is_static() {
        None
    } else {
        let closure = elf::closure(&spec.binary, &spec.sysroot, &spec.library_path)?;
        let mut b = LayerBuilder::new(mtime);
        for (image_path, host) in &closure.files {
            b.host_file(image_path, host, 0o755, Owner::Root)?;
        }
        Some(b.finish()?)
    };
    let mut app = LayerBuilder::new(mtime);
    app.host_file(&spec.install_path, &spec.binary, 0o755, Owner::Root)?;
    extra(&mut app)?;
    Ok(BinaryLayers {
        elf: info,
        libraries,
        app: app.finish()?,
    })
}

/// Starts an image for the binary: platform from its ELF machine, base layer, library layer,
/// binary layer, non-root user, PATH and SSL_CERT_FILE.
pub fn app_image(
    layers: BinaryLayers,
    base: Layer,
    created: u64,
    created_by: &str,
) -> ImageBuilder {
    let (arch, variant) = layers.elf.oci_arch().unwrap_or(("amd64", None));
    let mut builder = ImageBuilder::new("linux", arch, created)
        .variant(variant.map(str::to_string))
        .layer(
            base,
            format!("{created_by}: base (passwd, group, CA certificates)"),
        );
    if let Some(libs) = layers.libraries {
        builder = builder.layer(libs, format!("{created_by}: shared libraries"));
    }
    builder
        .layer(layers.app, format!("{created_by}: application"))
        .user(nonroot_user())
        .env("PATH=/usr/local/bin:/usr/bin:/bin")
        .env(format!("SSL_CERT_FILE=/{IMAGE_CA_BUNDLE}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_layer_has_nonroot_user_and_optional_certs() {
        let dir = tempfile::tempdir().unwrap();
        let ca = dir.path().join("ca.pem");
        std::fs::write(&ca, "-----BEGIN CERTIFICATE-----\n").unwrap();
        let with = base_layer(Some(&ca), 0).unwrap();
        let without = base_layer(None, 0).unwrap();
        assert_ne!(with.digest, without.digest);
        let missing = base_layer(Some(&dir.path().join("nope.pem")), 0);
        assert!(matches!(missing, Err(BuildError::NoCaBundle { .. })));
    }
}
