//! The catalog as the server holds it: the index in memory (names, edges, properties) and
//! the payload file (each bundle's CSV JSON and manifests: most of a catalog's bytes), read
//! when an RPC needs a payload. Built by [`crate::serve::index`]; nothing here parses a
//! catalog.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use prost::Message;

use super::stub_csv;
use crate::catalog::property::CsvMetadata;
use crate::serve::proto::api;
use crate::serve::proto::cache::{self, Index};

/// Bumped whenever the index or payload encoding changes; old caches are then rebuilt.
pub const FORMAT: u32 = 3;

/// Why the store could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("read {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("decode {path}: {source}")]
    Decode {
        path: PathBuf,
        source: prost::DecodeError,
    },
    #[error("{path}: {message}")]
    Corrupt { path: PathBuf, message: String },
}

/// Where payloads are read from: the cache's payload file, or memory (a store built in
/// memory for tests and benchmarks).
#[derive(Debug)]
pub(crate) enum Payloads {
    File { file: File, path: PathBuf },
    Memory(Vec<u8>),
}

/// A loaded catalog with the lookups the RPCs need.
#[derive(Debug)]
pub struct Store {
    index: Index,
    packages: HashMap<String, usize>,
    /// Per package: channel name -> channel position, bundle name -> bundle position.
    channels: Vec<HashMap<String, usize>>,
    bundles: Vec<HashMap<String, usize>>,
    /// Every (package, channel, entry) position in ListBundles order.
    entries: Vec<(u32, u32, u32)>,
    payloads: Payloads,
}

/// One channel entry, resolved.
#[derive(Debug, Clone, Copy)]
pub struct EntryView<'a> {
    pub package: &'a cache::Package,
    pub channel: &'a cache::Channel,
    pub entry: &'a cache::Entry,
    pub bundle: &'a cache::Bundle,
}

impl<'a> EntryView<'a> {
    pub fn bundle_name(&self) -> &'a str {
        self.bundle
            .base
            .as_ref()
            .map(|b| b.csv_name.as_str())
            .unwrap_or_default()
    }

    pub fn provides(&self, group: &str, version: &str, kind: &str) -> bool {
        self.bundle.base.as_ref().is_some_and(|b| {
            b.provided_apis
                .iter()
                .any(|g| g.group == group && g.version == version && g.kind == kind)
        })
    }
}

impl Store {
    /// Opens a store from an index and its payload file.
    pub fn open(index: Index, payload_path: &Path) -> Result<Store, StoreError> {
        let file = File::open(payload_path).map_err(|source| StoreError::Io {
            path: payload_path.to_path_buf(),
            source,
        })?;
        let len = file
            .metadata()
            .map_err(|source| StoreError::Io {
                path: payload_path.to_path_buf(),
                source,
            })?
            .len();
        for p in &index.packages {
            let spans = p
                .bundles
                .iter()
                .map(|b| ("bundle", b.payload_offset, b.payload_length));
            let stub = ("package", p.stub_offset, p.stub_length);
            for (what, offset, length) in spans.chain(std::iter::once(stub)) {
                if offset.saturating_add(length) > len {
                    return Err(StoreError::Corrupt {
                        path: payload_path.to_path_buf(),
                        message: format!(
                            "{what} payload at {offset}+{length} lies beyond the end of the file ({len} bytes)"
                        ),
                    });
                }
            }
        }
        Ok(Store::new(
            index,
            Payloads::File {
                file,
                path: payload_path.to_path_buf(),
            },
        ))
    }

    pub(crate) fn new(index: Index, payloads: Payloads) -> Store {
        let mut packages = HashMap::new();
        let mut channels = Vec::new();
        let mut bundles = Vec::new();
        let mut entries = Vec::new();
        for (pi, p) in index.packages.iter().enumerate() {
            packages.insert(p.name.clone(), pi);
            channels.push(
                p.channels
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.name.clone(), i))
                    .collect(),
            );
            bundles.push(
                p.bundles
                    .iter()
                    .enumerate()
                    .filter_map(|(i, b)| Some((b.base.as_ref()?.csv_name.clone(), i)))
                    .collect(),
            );
            for (ci, c) in p.channels.iter().enumerate() {
                for (ei, e) in c.entries.iter().enumerate() {
                    if (e.bundle as usize) < p.bundles.len() {
                        entries.push((pi as u32, ci as u32, ei as u32));
                    }
                }
            }
        }
        Store {
            index,
            packages,
            channels,
            bundles,
            entries,
            payloads,
        }
    }

    /// Packages sorted by name.
    pub fn packages(&self) -> &[cache::Package] {
        &self.index.packages
    }

    pub fn package(&self, name: &str) -> Option<&cache::Package> {
        self.packages.get(name).map(|i| &self.index.packages[*i])
    }

    pub fn channel(&self, package: &str, channel: &str) -> Option<&cache::Channel> {
        let pi = *self.packages.get(package)?;
        let ci = *self.channels[pi].get(channel)?;
        Some(&self.index.packages[pi].channels[ci])
    }

    /// The entry of `bundle` in `package`/`channel`.
    pub fn entry(&self, package: &str, channel: &str, bundle: &str) -> Option<EntryView<'_>> {
        let pi = *self.packages.get(package)?;
        let p = &self.index.packages[pi];
        let c = &p.channels[*self.channels[pi].get(channel)?];
        let bi = *self.bundles[pi].get(bundle)?;
        let entry = c.entries.iter().find(|e| e.bundle as usize == bi)?;
        Some(EntryView {
            package: p,
            channel: c,
            entry,
            bundle: &p.bundles[bi],
        })
    }

    /// The head entry of a channel.
    pub fn head<'a>(
        &'a self,
        p: &'a cache::Package,
        c: &'a cache::Channel,
    ) -> Option<EntryView<'a>> {
        let entry = c.entries.iter().find(|e| e.bundle == c.head)?;
        Some(EntryView {
            package: p,
            channel: c,
            entry,
            bundle: p.bundles.get(c.head as usize)?,
        })
    }

    /// The number of channel entries (= bundles ListBundles sends).
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    /// Entry `i` in ListBundles order.
    pub fn entry_at(&self, i: usize) -> Option<EntryView<'_>> {
        let (pi, ci, ei) = *self.entries.get(i)?;
        let p = &self.index.packages[pi as usize];
        let c = &p.channels[ci as usize];
        let entry = &c.entries[ei as usize];
        Some(EntryView {
            package: p,
            channel: c,
            entry,
            bundle: &p.bundles[entry.bundle as usize],
        })
    }

    /// Every entry in ListBundles order.
    pub fn entries(&self) -> impl Iterator<Item = EntryView<'_>> {
        (0..self.entries.len()).filter_map(|i| self.entry_at(i))
    }

    /// Whether `bundle` (a name) is an entry of the channel.
    pub fn channel_has(&self, p: &cache::Package, c: &cache::Channel, bundle: &str) -> bool {
        c.entries.iter().any(|e| {
            p.bundles
                .get(e.bundle as usize)
                .and_then(|b| b.base.as_ref())
                .is_some_and(|b| b.csv_name == bundle)
        })
    }

    /// The api.Bundle of an entry: channel fields set; `payload` decides whether csvJson and
    /// object are filled (read from the payload file).
    pub fn api_bundle(&self, e: &EntryView<'_>, payload: bool) -> Result<api::Bundle, StoreError> {
        let mut b = e.bundle.base.clone().unwrap_or_default();
        b.channel_name = e.channel.name.clone();
        b.replaces = e.entry.replaces.clone();
        b.skips = e.entry.skips.clone();
        b.skip_range = e.entry.skip_range.clone();
        if payload && e.bundle.payload_length > 0 {
            let p: cache::Payload =
                self.read_at(e.bundle.payload_offset, e.bundle.payload_length)?;
            let (csv_json, object) = match &p.csv_stub {
                Some(stub) => {
                    let csv_json = self.synthesize(e.package, &b, stub)?;
                    let object = match (p.object.is_empty(), csv_json.is_empty()) {
                        (false, _) => p.object,
                        (true, false) => vec![csv_json.clone()],
                        (true, true) => Vec::new(),
                    };
                    (csv_json, object)
                }
                None if p.object_is_csv => (p.csv_json.clone(), vec![p.csv_json]),
                None => (p.csv_json, p.object),
            };
            b.csv_json = csv_json;
            b.object = object;
        }
        Ok(b)
    }

    /// The stub CSV for a bundle without a CSV manifest, from the first of its
    /// `olm.csv.metadata` values that parses (empty when none does, as before the stub existed).
    fn synthesize(
        &self,
        package: &cache::Package,
        bundle: &api::Bundle,
        stub: &cache::CsvStub,
    ) -> Result<String, StoreError> {
        let mut last_error = None;
        let meta = stub.csv_metadata.iter().find_map(|raw| {
            serde_json::from_str::<CsvMetadata>(raw)
                .map_err(|e| last_error = Some(e))
                .ok()
        });
        let Some(meta) = meta else {
            // Validation only requires an object here (as opm's does); a value of the wrong
            // shape leaves the bundle without a CSV, which the operator author should hear of.
            tracing::warn!(
                package = %bundle.package_name,
                bundle = %bundle.csv_name,
                error = %last_error.map(|e| e.to_string()).unwrap_or_default(),
                "olm.csv.metadata does not fit the CSV metadata schema; serving no CSV for this bundle"
            );
            return Ok(String::new());
        };
        let package_stub: cache::PackageStub = if package.stub_length > 0 {
            self.read_at(package.stub_offset, package.stub_length)?
        } else {
            cache::PackageStub::default()
        };
        Ok(stub_csv::synthesize(&stub_csv::StubSource {
            name: &bundle.csv_name,
            version: &bundle.version,
            meta: &meta,
            related_images: &stub.related_images,
            package: &package_stub,
        }))
    }

    /// Decodes the message stored at `offset..offset + len` of the payloads.
    fn read_at<M: Message + Default>(&self, offset: u64, len: u64) -> Result<M, StoreError> {
        let start = offset as usize;
        let len = len as usize;
        match &self.payloads {
            Payloads::Memory(bytes) => {
                let slice = bytes.get(start..start.saturating_add(len)).ok_or_else(|| {
                    StoreError::Corrupt {
                        path: PathBuf::from("<memory>"),
                        message: "payload out of range".into(),
                    }
                })?;
                M::decode(slice).map_err(|source| StoreError::Decode {
                    path: PathBuf::from("<memory>"),
                    source,
                })
            }
            Payloads::File { file, path } => {
                use std::os::unix::fs::FileExt;
                let mut buf = vec![0u8; len];
                file.read_exact_at(&mut buf, offset)
                    .map_err(|source| StoreError::Io {
                        path: path.clone(),
                        source,
                    })?;
                M::decode(buf.as_slice()).map_err(|source| StoreError::Decode {
                    path: path.clone(),
                    source,
                })
            }
        }
    }
}
