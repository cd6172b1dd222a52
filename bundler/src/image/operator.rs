//! The operator image from any Linux binary (what ko does for Go): base layer, the binary's
//! shared-library closure when it is dynamic, the binary, OCI labels, entrypoint and a
//! non-root user. No shell, no package manager: only what the binary needs.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::model::{Artifact, Image, ImageIndex};
use super::rootfs::{self, BinarySpec, BuildError};

/// The standard OCI annotation keys we set as labels.
pub mod labels {
    pub const SOURCE: &str = "org.opencontainers.image.source";
    pub const REVISION: &str = "org.opencontainers.image.revision";
    pub const VERSION: &str = "org.opencontainers.image.version";
    pub const LICENSES: &str = "org.opencontainers.image.licenses";
    pub const TITLE: &str = "org.opencontainers.image.title";
}

/// Everything that decides the operator image's bytes.
#[derive(Debug, Clone)]
pub struct OperatorImage {
    pub binary: BinarySpec,
    /// Arguments after the entrypoint (the config's `Cmd`).
    pub args: Vec<String>,
    /// Extra `KEY=VALUE` environment entries.
    pub env: Vec<String>,
    /// The CA bundle to copy in; `None` for none.
    pub ca_bundle: Option<PathBuf>,
    /// `org.opencontainers.image.*` values and any other labels.
    pub labels: BTreeMap<String, String>,
    /// Files copied to `/licenses/<file name>` (the license directory certification asks for).
    pub license_files: Vec<PathBuf>,
    /// The config's `created` time (seconds since the epoch).
    pub created: u64,
}

impl OperatorImage {
    /// An image for `binary` installed at `/usr/local/bin/<file name>`, with the host's CA
    /// bundle, the libraries found under `/`, and the build time from `SOURCE_DATE_EPOCH`.
    pub fn for_binary(binary: PathBuf) -> Result<Self, BuildError> {
        let name = binary
            .file_name()
            .and_then(|n| n.to_str())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| BuildError::Input {
                path: binary.clone(),
                what: "has no usable file name".into(),
            })?
            .to_string();
        Ok(OperatorImage {
            binary: BinarySpec {
                install_path: format!("/usr/local/bin/{name}"),
                binary,
                sysroot: PathBuf::from("/"),
                library_path: Vec::new(),
            },
            args: Vec::new(),
            env: Vec::new(),
            ca_bundle: Some(PathBuf::from(rootfs::HOST_CA_BUNDLE)),
            labels: BTreeMap::new(),
            license_files: Vec::new(),
            created: crate::reproducible::source_date_epoch()?,
        })
    }

    /// Builds the image (its layers spooled to temporary files).
    pub fn build(&self) -> Result<Image, BuildError> {
        let base = rootfs::base_layer(self.ca_bundle.as_deref(), self.created)?;
        self.build_on(&self.binary, base)
    }

    /// Builds one image per binary, each for the platform its ELF header names, in one
    /// index (the first binary is `self.binary`; `others` are the other platforms' builds of
    /// the same program, installed at the same path). Two binaries of one platform are
    /// refused. With no others, the single image.
    pub fn build_all(&self, others: &[PathBuf]) -> Result<Artifact, BuildError> {
        if others.is_empty() {
            return Ok(Artifact::Image(self.build()?));
        }
        let all: Vec<PathBuf> = std::iter::once(self.binary.binary.clone())
            .chain(others.iter().cloned())
            .collect();
        rootfs::distinct_platforms(&all)?;
        let base = rootfs::base_layer(self.ca_bundle.as_deref(), self.created)?;
        let images = all
            .iter()
            .map(|b| {
                let spec = BinarySpec {
                    binary: b.clone(),
                    ..self.binary.clone()
                };
                self.build_on(&spec, base.clone())
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Artifact::Index(ImageIndex::of(images)?))
    }

    fn build_on(
        &self,
        binary: &BinarySpec,
        base: super::layer::Layer,
    ) -> Result<Image, BuildError> {
        let layers = rootfs::binary_layers(binary, self.created, |app| {
            for f in &self.license_files {
                let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("LICENSE");
                app.host_file(
                    &format!("licenses/{name}"),
                    f,
                    0o644,
                    super::layer::Owner::Root,
                )?;
            }
            Ok(())
        })?;
        let mut builder = rootfs::app_image(layers, base, self.created, "olm image build")
            .entrypoint(vec![self.binary.install_path.clone()])
            .cmd(self.args.clone())
            .labels(self.labels.clone());
        for e in &self.env {
            builder = builder.env(e.clone());
        }
        Ok(builder.build())
    }
}
