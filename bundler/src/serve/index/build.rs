//! The index build: the validated catalog model converted once, up front, to the server's
//! [`Index`] (small: names, edges, properties) and payload file (large: each bundle's CSV
//! JSON and manifests), so every RPC is a lookup plus a clone and only the index lives in
//! memory.

use std::collections::HashMap;
use std::io::Write;

use prost::Message;

use crate::catalog::declcfg::{Meta, RelatedImage};
use crate::catalog::model::{self, Model};
use crate::catalog::property::{
    Gvk, Property, TYPE_BUNDLE_OBJECT, TYPE_CSV_METADATA, TYPE_GVK, TYPE_GVK_REQUIRED,
    TYPE_PACKAGE, TYPE_PACKAGE_REQUIRED,
};
use crate::serve::proto::api;
use crate::serve::proto::cache::{self, Index};
use crate::serve::runtime::store::{FORMAT, Payloads, Store};

/// A store built entirely in memory (tests, benchmarks), payloads included.
pub fn in_memory(model: &Model, others: &[Meta]) -> Store {
    let mut payloads = Vec::new();
    // Writing to a Vec cannot fail.
    let index = build_index(model, others, "", &mut payloads).unwrap_or_default();
    Store::new(index, Payloads::Memory(payloads))
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
