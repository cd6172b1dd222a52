//! The catalog as the server holds it.
//!
//! Converting the validated model to `api.Bundle`s once, up front, makes every RPC a lookup plus
//! a clone. The conversion result is an [`Index`] (small: names, edges, properties) and a payload
//! file holding each bundle's CSV JSON and manifests (large: most of a catalog's bytes). Only
//! the index lives in memory; payloads are read from the file when an RPC needs them, so a
//! catalog of tens of megabytes is served from a few megabytes of RAM. Payloads are only needed
//! by `GetBundle`-style RPCs and by `ListBundles` for bundles without an image.

use std::collections::HashMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use prost::Message;

use super::proto::api;
use super::proto::cache::{self, Index};
use super::stub_csv;
use crate::catalog::declcfg::{Meta, RelatedImage};
use crate::catalog::model::{self, Model};
use crate::catalog::property::{
    CsvMetadata, Gvk, Property, TYPE_BUNDLE_OBJECT, TYPE_CSV_METADATA, TYPE_GVK, TYPE_GVK_REQUIRED,
    TYPE_PACKAGE, TYPE_PACKAGE_REQUIRED,
};

/// Bumped whenever the index or payload encoding changes; old caches are then rebuilt.
pub const FORMAT: u32 = 2;

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

/// A payload already in the payload file (see [`Written`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenPayload {
    pub offset: u64,
    pub length: u64,
    /// Whether the bundle's CSV is synthesised.
    pub stub: bool,
}

/// Payloads written before the index is built, by package and bundle name: those of bundles
/// whose manifests were written as their files were parsed (and dropped from the catalog).
#[derive(Debug, Default)]
pub struct Written {
    pub payloads: HashMap<(String, String), WrittenPayload>,
    /// Bytes already in the payload file; the index build appends after them.
    pub end: u64,
}

impl Written {
    /// Appends an encoded payload (when there is one) to `out` and records where it is.
    pub fn record<W: Write>(
        &mut self,
        out: &mut W,
        package: String,
        name: String,
        bytes: Option<Vec<u8>>,
        stub: bool,
    ) -> std::io::Result<()> {
        let (offset, length) = match bytes {
            None => (0, 0),
            Some(bytes) => {
                out.write_all(&bytes)?;
                let at = self.end;
                self.end += bytes.len() as u64;
                (at, bytes.len() as u64)
            }
        };
        self.payloads.insert(
            (package, name),
            WrittenPayload {
                offset,
                length,
                stub,
            },
        );
        Ok(())
    }
}

/// Converts the model to the index, appending payloads to `payloads` (offsets count from the
/// writer's start). `others` are the blobs of custom schemas, served by the experimental API.
pub fn build_index<W: Write>(
    model: &Model,
    others: &[Meta],
    digest: &str,
    payloads: &mut W,
) -> std::io::Result<Index> {
    build_index_after(model, others, digest, payloads, &Written::default())
}

/// [`build_index`] for a payload file that already holds the payloads in `written` (its
/// bundles' payloads are taken from there, the rest appended).
pub fn build_index_after<W: Write>(
    model: &Model,
    others: &[Meta],
    digest: &str,
    payloads: &mut W,
    written: &Written,
) -> std::io::Result<Index> {
    // Converting a bundle (decoding its manifests) is the expensive part: done
    // on all cores, a slice at a time so only one slice of encoded payloads is held at once,
    // and written in model order so the files do not depend on scheduling.
    const SLICE: usize = 64;
    let jobs: Vec<&model::Bundle> = model.packages().flat_map(|p| p.bundles.values()).collect();
    let mut offset = written.end;
    let mut converted = Vec::with_capacity(jobs.len());
    let mut needs_stub = Vec::with_capacity(jobs.len());
    let key = |b: &model::Bundle| (b.package.clone(), b.name.clone());
    for slice in jobs.chunks(SLICE) {
        let encoded = crate::parallel::map(slice, |b| match written.payloads.get(&key(b)) {
            Some(w) => (base_of(b), Err(*w)),
            None => {
                let (base, bytes, stub) = encode_bundle(b);
                (base, Ok((bytes, stub)))
            }
        });
        for (base, payload) in encoded {
            let (payload_offset, payload_length) = match payload {
                Err(w) => {
                    needs_stub.push(w.stub);
                    (w.offset, w.length)
                }
                Ok((None, stub)) => {
                    needs_stub.push(stub);
                    (0, 0)
                }
                Ok((Some(bytes), stub)) => {
                    needs_stub.push(stub);
                    payloads.write_all(&bytes)?;
                    let at = offset;
                    offset += bytes.len() as u64;
                    (at, bytes.len() as u64)
                }
            };
            converted.push(cache::Bundle {
                base: Some(base),
                payload_offset,
                payload_length,
            });
        }
    }
    let mut converted = converted.into_iter();
    let mut needs_stub = needs_stub.into_iter();
    let mut packages = Vec::new();
    for p in model.packages() {
        let names: Vec<&String> = p.bundles.keys().collect();
        let position: HashMap<&str, u32> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i as u32))
            .collect();
        let bundles: Vec<cache::Bundle> = converted.by_ref().take(names.len()).collect();
        let (mut stub_offset, mut stub_length) = (0, 0);
        // Counted, not `any`: every one of the package's flags must be consumed.
        if needs_stub.by_ref().take(names.len()).filter(|s| *s).count() > 0 {
            let bytes = package_stub(p).encode_to_vec();
            payloads.write_all(&bytes)?;
            (stub_offset, stub_length) = (offset, bytes.len() as u64);
            offset += stub_length;
        }
        let mut channels = Vec::new();
        for c in p.channels.values() {
            let entries: Vec<cache::Entry> = c
                .entries
                .iter()
                .filter_map(|e| {
                    Some(cache::Entry {
                        bundle: *position.get(e.name.as_str())?,
                        replaces: e.replaces.clone().unwrap_or_default(),
                        skips: e.skips.clone(),
                        skip_range: e
                            .skip_range
                            .as_ref()
                            .map(|r| r.as_str().to_string())
                            .unwrap_or_default(),
                    })
                })
                .collect();
            channels.push(cache::Channel {
                name: c.name.clone(),
                head: position.get(c.head().name.as_str()).copied().unwrap_or(0),
                deprecation: deprecation(&c.deprecation),
                entries,
            });
        }
        let custom_blobs = others
            .iter()
            .filter(|o| o.package == p.name)
            .map(|o| cache::CustomBlob {
                schema: o.schema.clone(),
                json: serde_json::to_string(&o.blob).unwrap_or_default(),
            })
            .collect();
        packages.push(cache::Package {
            name: p.name.clone(),
            default_channel: p.default_channel.clone(),
            deprecation: deprecation(&p.deprecation),
            channels,
            bundles,
            custom_blobs,
            stub_offset,
            stub_length,
        });
    }
    Ok(Index {
        format: FORMAT,
        digest: digest.to_string(),
        packages,
    })
}

fn deprecation(message: &Option<String>) -> Option<api::Deprecation> {
    message
        .as_ref()
        .map(|m| api::Deprecation { message: m.clone() })
}

/// A bundle's index entry (the channel-independent `api.Bundle`, as opm's
/// `ConvertModelBundleToAPIBundle` fills it), its encoded payload (`None` when it has none),
/// and whether its CSV is synthesised (so its package needs a [`cache::PackageStub`]).
fn encode_bundle(b: &model::Bundle) -> (api::Bundle, Option<Vec<u8>>, bool) {
    let (bytes, stub) = encode_payload(&b.properties, &b.related_images);
    (base_of(b), bytes, stub)
}

/// A bundle's encoded payload from its properties and related images (`None` when it has
/// none), and whether its CSV is synthesised.
pub fn encode_payload(
    properties: &[Property],
    related_images: &[RelatedImage],
) -> (Option<Vec<u8>>, bool) {
    let mut payload = payload_of(properties, related_images);
    let stub = payload.csv_stub.is_some();
    if payload.csv_json.is_empty() && payload.object.is_empty() && !stub {
        return (None, false);
    }
    if payload.object.len() == 1 && payload.object[0] == payload.csv_json {
        payload.object.clear();
        payload.object_is_csv = true;
    }
    (Some(payload.encode_to_vec()), stub)
}

/// What a package gives its bundles' synthesised CSVs.
fn package_stub(p: &model::Package) -> cache::PackageStub {
    cache::PackageStub {
        description: p.description.clone(),
        icon: p.icon.as_ref().map(|i| cache::Icon {
            base64data: i.data.clone(),
            mediatype: i.media_type.clone(),
        }),
    }
}

/// The channel-independent `api.Bundle` of a bundle (everything but its payload).
fn base_of(b: &model::Bundle) -> api::Bundle {
    let mut version = String::new();
    let mut provided = Vec::new();
    let mut required = Vec::new();
    let mut dependencies = Vec::new();
    let mut properties = Vec::new();
    for prop in &b.properties {
        match prop.ty.as_str() {
            TYPE_PACKAGE => {
                if let Some(v) = prop.str_field("version") {
                    version = v;
                }
            }
            TYPE_GVK => {
                if let Ok(g) = prop.value_as::<Gvk>() {
                    provided.push(api_gvk(&g));
                }
            }
            TYPE_GVK_REQUIRED => {
                if let Ok(g) = prop.value_as::<Gvk>() {
                    required.push(api_gvk(&g));
                    // OLM reads dependency values in the legacy registry shape.
                    dependencies.push(api::Dependency {
                        r#type: TYPE_GVK.to_string(),
                        value: serde_json::json!({
                            "group": g.group, "kind": g.kind, "version": g.version
                        })
                        .to_string(),
                    });
                }
            }
            TYPE_PACKAGE_REQUIRED => {
                let name = prop.str_field("packageName");
                let range = prop.str_field("versionRange");
                if let (Some(name), Some(range)) = (name, range) {
                    dependencies.push(api::Dependency {
                        r#type: TYPE_PACKAGE.to_string(),
                        value: serde_json::json!({"packageName": name, "version": range})
                            .to_string(),
                    });
                }
            }
            _ => {}
        }
        // The two large properties are left out: clients copy properties into CSV
        // annotations, and inlined manifests would blow etcd's object size limit.
        if prop.ty != TYPE_BUNDLE_OBJECT && prop.ty != TYPE_CSV_METADATA {
            properties.push(api::Property {
                r#type: prop.ty.clone(),
                value: prop.value_json(),
            });
        }
    }
    api::Bundle {
        csv_name: b.name.clone(),
        package_name: b.package.clone(),
        bundle_path: b.image.clone(),
        provided_apis: provided,
        required_apis: required,
        version,
        dependencies,
        properties,
        deprecation: deprecation(&b.deprecation),
        ..Default::default()
    }
}

/// What a bundle's payload holds: its CSV and manifests decoded from `olm.bundle.object`s, or
/// the inputs of the stub CSV opm serves for an `olm.csv.metadata` bundle.
fn payload_of(properties: &[Property], related_images: &[RelatedImage]) -> cache::Payload {
    let objects = crate::catalog::property::bundle_objects(properties);
    let csv_json = objects
        .iter()
        .find(|o| crate::catalog::property::is_csv_json(o))
        .cloned()
        .unwrap_or_default();
    // Without a CSV manifest, opm serves a stub built from olm.csv.metadata; that is done per
    // request (see `Store::api_bundle`), so only its inputs are kept here.
    let csv_stub = if csv_json.is_empty() {
        let csv_metadata: Vec<String> = properties
            .iter()
            .filter(|p| p.ty == TYPE_CSV_METADATA)
            .map(|p| p.value_json())
            .collect();
        (!csv_metadata.is_empty()).then(|| cache::CsvStub {
            csv_metadata,
            related_images: related_images
                .iter()
                .map(|r| cache::RelatedImage {
                    name: r.name.clone(),
                    image: r.image.clone(),
                })
                .collect(),
        })
    } else {
        None
    };
    cache::Payload {
        csv_json,
        object: objects,
        object_is_csv: false,
        csv_stub,
    }
}

fn api_gvk(g: &Gvk) -> api::GroupVersionKind {
    api::GroupVersionKind {
        group: g.group.clone(),
        version: g.version.clone(),
        kind: g.kind.clone(),
        plural: String::new(),
    }
}

/// Where payloads are read from.
#[derive(Debug)]
enum Payloads {
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
    /// Builds a store entirely in memory (tests, benchmarks, `--cache-dir` not wanted).
    pub fn from_model(model: &Model, others: &[Meta]) -> Store {
        let mut payloads = Vec::new();
        // Writing to a Vec cannot fail.
        let index = build_index(model, others, "", &mut payloads).unwrap_or_default();
        Store::new(index, Payloads::Memory(payloads))
    }

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

    fn new(index: Index, payloads: Payloads) -> Store {
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
