//! Where the release's images go: OCI layouts under the config's `layouts` directory, or a
//! registry (`--registry`), and how the release refers to them afterwards (by digest, in the
//! repository they were published to).

use anyhow::Context as _;

use crate::image::model::Artifact;
use crate::image::reference::ImageRef;
use crate::image::registry::RegistryOptions;
use crate::image::transfer;
use crate::release::config;

/// An image the release made.
#[derive(Debug, Clone)]
pub struct MadeImage {
    /// `operator`, `bundle` or `catalog`.
    pub what: &'static str,
    /// `<repository>@sha256:...`
    pub pinned: String,
    /// Manifest, config and layers, in bytes.
    pub size: u64,
    /// Where it was stored, and what the upload did.
    pub stored: String,
    /// The reference it was stored under (`registry/repo:version` or `oci:DIR:version`).
    pub location: String,
}

pub(super) struct Publisher {
    pub(super) registry: Option<String>,
    pub(super) layouts: std::path::PathBuf,
    pub(super) version: String,
    pub(super) opts: RegistryOptions,
}

impl Publisher {
    /// Where an image of `repository` is published, and so how the release refers to it:
    /// the configured repository, or its path on `--registry` (a catalog pushed there must
    /// name bundles and images a cluster can pull from there).
    pub(super) fn repository(&self, repository: &str) -> String {
        match &self.registry {
            Some(host) => config::on_registry(repository, host),
            None => repository.to_string(),
        }
    }

    /// Stores the image (layout or registry) and returns `<repository>@<digest>` in the
    /// repository it is published to.
    pub(super) async fn publish(
        &self,
        what: &'static str,
        repository: &str,
        image: &Artifact,
    ) -> anyhow::Result<MadeImage> {
        let published = self.repository(repository);
        let dest = match &self.registry {
            Some(_) => format!("{published}:{}", self.version),
            None => format!("oci:{}:{}", self.layouts.join(what).display(), self.version),
        };
        let dest_ref = ImageRef::parse(&dest).with_context(|| format!("destination {dest}"))?;
        let stored = transfer::store(&dest_ref, image, &self.opts)
            .await
            .with_context(|| format!("storing the {what} image to {dest}"))?;
        Ok(MadeImage {
            what,
            pinned: config::pinned(&published, &stored.digest),
            size: image.total_size(),
            stored: match &stored.push {
                Some(r) => format!("{dest}: {}", r.summary()),
                None => format!("wrote {dest}"),
            },
            location: dest,
        })
    }
}

/// `1.4 MiB`, `12.0 KiB`, `900 B`.
pub fn human(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{bytes} B")
    }
}
