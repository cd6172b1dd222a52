//! The on-disk file-based catalog: the blobs exactly as written (`olm.package`, `olm.channel`,
//! `olm.bundle`, `olm.deprecations`, and any other schema kept verbatim), before validation.
//!
//! Field names, order and `omitempty` behaviour follow operator-registry's `alpha/declcfg`, so
//! what we write is what opm writes. Each blob remembers where it came from ([`Source`]) so
//! validation can name the file and line.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use super::property::Property;

pub const SCHEMA_PACKAGE: &str = "olm.package";
pub const SCHEMA_CHANNEL: &str = "olm.channel";
pub const SCHEMA_BUNDLE: &str = "olm.bundle";
pub const SCHEMA_DEPRECATIONS: &str = "olm.deprecations";

/// Where a blob was read: file and 1-based line of the document start. Empty for blobs that
/// were built in memory (render, templates).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Source {
    pub file: Option<Arc<Path>>,
    pub line: u32,
}

impl Source {
    pub fn new(file: Arc<Path>, line: u32) -> Self {
        Source {
            file: Some(file),
            line,
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            Some(p) if self.line > 0 => write!(f, "{}:{}", p.display(), self.line),
            Some(p) => write!(f, "{}", p.display()),
            None => f.write_str("<generated>"),
        }
    }
}

/// A package icon. `base64data` is kept as the base64 text (checked at load) because nothing
/// here needs the pixels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Icon {
    #[serde(rename = "base64data", default, deserialize_with = "canonical_base64")]
    pub data: String,
    #[serde(rename = "mediatype", default)]
    pub media_type: String,
}

/// opm holds `base64data` as bytes: it decodes the text (line breaks ignored) and writes it
/// back as canonical base64, so a YAML `|` block (with its trailing newline) comes out as one
/// plain line. Text that is not base64 is kept for validation to report.
fn canonical_base64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let text = String::deserialize(d)?;
    if !text.contains(['\n', '\r']) {
        return Ok(text);
    }
    Ok(match crate::grammar::go_base64::decode(&text) {
        Some(bytes) => crate::grammar::go_base64::encode(&bytes),
        None => text,
    })
}

/// `olm.package`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Package {
    #[serde(default = "schema_package")]
    pub schema: String,
    #[serde(default)]
    pub name: String,
    #[serde(
        rename = "defaultChannel",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub default_channel: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icon: Option<Icon>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
    #[serde(skip)]
    pub source: Source,
}

fn schema_package() -> String {
    SCHEMA_PACKAGE.into()
}
fn schema_channel() -> String {
    SCHEMA_CHANNEL.into()
}
fn schema_bundle() -> String {
    SCHEMA_BUNDLE.into()
}
fn schema_deprecations() -> String {
    SCHEMA_DEPRECATIONS.into()
}

/// `olm.channel`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Channel {
    #[serde(default = "schema_channel")]
    pub schema: String,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub package: String,
    #[serde(default)]
    pub entries: Vec<ChannelEntry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
    #[serde(skip)]
    pub source: Source,
}

/// One entry of a channel: a bundle name and its upgrade edges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ChannelEntry {
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub replaces: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skips: Vec<String>,
    #[serde(
        rename = "skipRange",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub skip_range: String,
}

/// An image the bundle's operator uses, for mirroring.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RelatedImage {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub image: String,
}

/// `olm.bundle`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Bundle {
    #[serde(default = "schema_bundle")]
    pub schema: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub package: String,
    /// Always written, possibly empty (a bundle rendered from a directory has no image).
    #[serde(default)]
    pub image: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<Property>,
    #[serde(
        rename = "relatedImages",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub related_images: Vec<RelatedImage>,
    #[serde(skip)]
    pub source: Source,
}

impl Bundle {
    /// The ClusterServiceVersion among the bundle's `olm.bundle.object`s, parsed (`None` for
    /// bundles in the `olm.csv.metadata` form).
    pub fn csv_object(&self) -> Option<Value> {
        super::property::bundle_objects(&self.properties)
            .into_iter()
            .find(|o| super::property::is_csv_json(o))
            .and_then(|o| serde_json::from_str(&o).ok())
    }
}

/// What a deprecation entry points at.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
pub struct PackageScopedReference {
    #[serde(default)]
    pub schema: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct DeprecationEntry {
    #[serde(default)]
    pub reference: PackageScopedReference,
    #[serde(default)]
    pub message: String,
}

/// `olm.deprecations`: at most one per package.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Deprecation {
    #[serde(default = "schema_deprecations")]
    pub schema: String,
    #[serde(default)]
    pub package: String,
    #[serde(default)]
    pub entries: Vec<DeprecationEntry>,
    #[serde(skip)]
    pub source: Source,
}

/// A blob of a schema we do not model, kept verbatim.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Meta {
    pub schema: String,
    pub package: String,
    pub name: String,
    pub blob: Value,
    pub source: Source,
}

/// A whole catalog as loaded from disk (or built by render/templates).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeclarativeConfig {
    pub packages: Vec<Package>,
    pub channels: Vec<Channel>,
    pub bundles: Vec<Bundle>,
    pub deprecations: Vec<Deprecation>,
    pub others: Vec<Meta>,
}

impl DeclarativeConfig {
    /// Forgets where every blob was read from (for a config read from files that are about
    /// to go, or rebuilt from its own output).
    pub fn clear_sources(&mut self) {
        let sources = (self.packages.iter_mut().map(|p| &mut p.source))
            .chain(self.channels.iter_mut().map(|c| &mut c.source))
            .chain(self.bundles.iter_mut().map(|b| &mut b.source))
            .chain(self.deprecations.iter_mut().map(|d| &mut d.source))
            .chain(self.others.iter_mut().map(|o| &mut o.source));
        for s in sources {
            *s = Default::default();
        }
    }

    /// Appends everything of `other`.
    pub fn merge(&mut self, other: DeclarativeConfig) {
        self.packages.extend(other.packages);
        self.channels.extend(other.channels);
        self.bundles.extend(other.bundles);
        self.deprecations.extend(other.deprecations);
        self.others.extend(other.others);
    }

    /// The blobs grouped by the package they belong to (`""`: blobs of no package), each
    /// group in its original order: how opm's `WriteFS` splits a catalog into one file per
    /// package.
    pub fn into_packages(self) -> std::collections::BTreeMap<String, DeclarativeConfig> {
        let mut out: std::collections::BTreeMap<String, DeclarativeConfig> = Default::default();
        for p in self.packages {
            out.entry(p.name.clone()).or_default().packages.push(p);
        }
        for c in self.channels {
            out.entry(c.package.clone()).or_default().channels.push(c);
        }
        for b in self.bundles {
            out.entry(b.package.clone()).or_default().bundles.push(b);
        }
        for d in self.deprecations {
            out.entry(d.package.clone())
                .or_default()
                .deprecations
                .push(d);
        }
        for o in self.others {
            out.entry(o.package.clone()).or_default().others.push(o);
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.packages.is_empty()
            && self.channels.is_empty()
            && self.bundles.is_empty()
            && self.deprecations.is_empty()
            && self.others.is_empty()
    }

    /// Every blob as a JSON value, grouped and ordered as opm writes them: per package (by
    /// name) the package, its channels, bundles, other blobs (stable by schema) and
    /// deprecations; then blobs that belong to no package.
    pub fn ordered_values(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.visit_ordered(|v| out.push(v));
        out
    }

    /// Calls `f` with each blob as a JSON value, in [`ordered_values`](Self::ordered_values)
    /// order, one at a time (writers use this so a big catalog is never copied whole).
    pub fn visit_ordered(&self, mut f: impl FnMut(Value)) {
        self.visit_blobs(|b| f(b.value()));
    }

    /// Calls `f` with each blob, in [`ordered_values`](Self::ordered_values) order.
    pub fn visit_blobs<'a>(&'a self, mut f: impl FnMut(Blob<'a>)) {
        let mut blobs: Vec<Blob<'a>> = self.blobs().collect();
        // Stable: blobs in the same place keep the order they were read in.
        blobs.sort_by_key(|b| b.place());
        for b in blobs {
            f(b);
        }
    }

    /// Every blob, by kind (packages, channels, bundles, others, deprecations), each kind in
    /// the order it was read.
    pub fn blobs(&self) -> impl Iterator<Item = Blob<'_>> {
        (self.packages.iter().map(Blob::Package))
            .chain(self.channels.iter().map(Blob::Channel))
            .chain(self.bundles.iter().map(Blob::Bundle))
            .chain(self.others.iter().map(Blob::Other))
            .chain(self.deprecations.iter().map(Blob::Deprecation))
    }

    /// JSON as `opm render -o json` writes it: each blob indented by four spaces, one after
    /// another.
    pub fn to_json(&self) -> String {
        let mut out = Vec::new();
        self.write_json(&mut out).expect("writing to memory");
        String::from_utf8(out).expect("serde_json writes UTF-8")
    }

    /// [`to_json`](Self::to_json) streamed chunk by chunk, so a large render never holds its
    /// whole output in memory.
    pub fn write_json(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.write_blobs(out, |b, chunk| TextFormat::Json.append(b, chunk))
    }

    /// YAML exactly as `opm render -o yaml` writes it (go-yaml v2 through sigs.k8s.io/yaml):
    /// `---` before every document.
    pub fn to_go_yaml(&self) -> String {
        let mut out = Vec::new();
        self.write_go_yaml(&mut out).expect("writing to memory");
        String::from_utf8(out).expect("the YAML writer writes UTF-8")
    }

    /// [`to_go_yaml`](Self::to_go_yaml) streamed chunk by chunk.
    pub fn write_go_yaml(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        self.write_blobs(out, |b, chunk| TextFormat::GoYaml.append(b, chunk))
    }

    /// Writes every blob, in [`visit_blobs`](Self::visit_blobs) order, as `format` appends it
    /// to a chunk. The blobs are formatted on all cores, a chunk of roughly [`CHUNK_BYTES`] at
    /// a time, while this thread writes the finished chunks in order, at most
    /// [`CHUNKS_AHEAD`] ahead: the output does not depend on scheduling and memory stays
    /// bounded. The first write error stops the work and is returned.
    fn write_blobs(
        &self,
        out: &mut dyn std::io::Write,
        format: impl Fn(Blob<'_>, &mut Vec<u8>) + Sync,
    ) -> std::io::Result<()> {
        let mut blobs = Vec::new();
        self.visit_blobs(|b| blobs.push(b));
        let mut chunks: Vec<&[Blob<'_>]> = Vec::new();
        let (mut start, mut size) = (0, 0);
        for (i, b) in blobs.iter().enumerate() {
            size += b.approx_len();
            if size >= CHUNK_BYTES {
                chunks.push(&blobs[start..=i]);
                (start, size) = (i + 1, 0);
            }
        }
        if start < blobs.len() {
            chunks.push(&blobs[start..]);
        }
        // Written chunks' buffers are formatted into again: fresh ones for every chunk would
        // cost a page fault every few kilobytes of output.
        let spares = std::sync::Mutex::new(Vec::<Vec<u8>>::new());
        let spare = || {
            spares
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        crate::parallel::try_for_each_ordered(
            &chunks,
            CHUNKS_AHEAD,
            |chunk| {
                let mut text = spare().pop().unwrap_or_default();
                for b in *chunk {
                    format(*b, &mut text);
                }
                text
            },
            |mut text| {
                let written = out.write_all(&text);
                text.clear();
                spare().push(text);
                written
            },
        )
    }

    /// [`write_json`](Self::write_json) or, with `yaml`, [`write_go_yaml`](Self::write_go_yaml),
    /// then a flush.
    pub fn write_as(&self, out: &mut dyn std::io::Write, yaml: bool) -> std::io::Result<()> {
        match yaml {
            true => self.write_go_yaml(out)?,
            false => self.write_json(out)?,
        }
        out.flush()
    }

    /// The config as `opm render` writes it: JSON indented by four spaces, or YAML.
    pub fn to_text(&self, yaml: bool) -> Result<String, serde_saphyr::SerializeError> {
        if yaml {
            self.to_yaml()
        } else {
            Ok(self.to_json())
        }
    }

    /// YAML with keys sorted: `---` before every document.
    pub fn to_yaml(&self) -> Result<String, serde_saphyr::SerializeError> {
        let mut out = String::new();
        let mut err = None;
        self.visit_ordered(|v| {
            if err.is_some() {
                return;
            }
            match crate::yaml::to_yaml(&sort_keys(v)) {
                Ok(doc) => {
                    out.push_str("---\n");
                    out.push_str(&doc);
                }
                Err(e) => err = Some(e),
            }
        });
        match err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }
}

/// How many bytes of blobs (by [`Blob::approx_len`]) the writers format as one piece of work.
const CHUNK_BYTES: usize = 64 << 10;
/// How many formatted chunks the writers let the workers run ahead of the output.
const CHUNKS_AHEAD: usize = 2;

/// The two texts `opm render` writes a catalog as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextFormat {
    /// `-o json`: each blob indented by four spaces, then a newline.
    Json,
    /// `-o yaml`: go-yaml v2 through sigs.k8s.io/yaml, `---` before every document.
    GoYaml,
}

impl TextFormat {
    /// YAML when `yaml`, else JSON.
    pub fn yaml_if(yaml: bool) -> TextFormat {
        match yaml {
            true => TextFormat::GoYaml,
            false => TextFormat::Json,
        }
    }

    /// Appends `b` to `chunk` as opm writes it in this format.
    pub fn append(self, b: Blob<'_>, chunk: &mut Vec<u8>) {
        match self {
            TextFormat::Json => append_json(b, chunk),
            TextFormat::GoYaml => {
                chunk.extend_from_slice(b"---\n");
                chunk.extend_from_slice(super::goyaml::to_string(&b.value()).as_bytes());
            }
        }
    }
}

/// [`TextFormat::Json`]: straight from the typed blob, raw property values re-indented as
/// text (the bytes their trees would give; see `opm_json`).
fn append_json(b: Blob<'_>, chunk: &mut Vec<u8>) {
    /// [`opm_json::to_vec`](super::opm_json::to_vec) appending to the chunk.
    fn append<T: Serialize + ?Sized>(value: &T, chunk: &mut Vec<u8>) -> serde_json::Result<()> {
        let pretty = super::opm_json::Pretty4::default();
        value.serialize(&mut serde_json::Serializer::with_formatter(chunk, pretty))
    }
    let start = chunk.len();
    // Room for the blob's text up front (indenting at most doubles it): growing the buffer
    // around a large blob by doubling would copy it several times.
    chunk.reserve(2 * b.approx_len());
    let direct = match b {
        Blob::Package(p) => append(p, chunk),
        Blob::Channel(c) => append(c, chunk),
        Blob::Bundle(b) => append(b, chunk),
        Blob::Deprecation(d) => append(d, chunk),
        Blob::Other(o) => append(&o.blob, chunk),
    };
    if direct.is_err() {
        chunk.truncate(start);
        chunk.extend_from_slice(json_pretty4(&b.value()).as_bytes());
    }
    chunk.push(b'\n');
}

/// One blob of a catalog, as [`DeclarativeConfig::visit_blobs`] gives it.
#[derive(Clone, Copy)]
pub enum Blob<'a> {
    Package(&'a Package),
    Channel(&'a Channel),
    Bundle(&'a Bundle),
    /// A blob of a schema we do not model.
    Other(&'a Meta),
    Deprecation(&'a Deprecation),
}

/// Where a blob goes in what opm writes (`declcfg.WriteJSON`/`WriteYAML`): grouped by package
/// (sorted by name), in each the package, its channels (by name), bundles (by name), blobs of
/// other schemas (by schema) and deprecations; then the blobs of no package. Blobs in the same
/// place keep the order they were read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place<'a> {
    /// A blob of another schema without a package: after every package.
    pub rootless: bool,
    pub package: &'a str,
    /// Package, channel, bundle, other schema, deprecation.
    pub rank: u8,
    /// What the kind is sorted by within its package.
    pub name: &'a str,
}

impl<'a> Blob<'a> {
    /// Where the blob goes in opm's output.
    pub fn place(&self) -> Place<'a> {
        let at = |package, rank, name| Place {
            rootless: false,
            package,
            rank,
            name,
        };
        match *self {
            Blob::Package(p) => at(&p.name, 0, ""),
            Blob::Channel(c) => at(&c.package, 1, &c.name),
            Blob::Bundle(b) => at(&b.package, 2, &b.name),
            Blob::Other(o) if o.package.is_empty() => Place {
                rootless: true,
                ..at("", 3, "")
            },
            Blob::Other(o) => at(&o.package, 3, &o.schema),
            Blob::Deprecation(d) => at(&d.package, 4, ""),
        }
    }
}

impl Blob<'_> {
    /// The blob as a JSON value.
    pub fn value(&self) -> Value {
        use erased::Ser;
        match *self {
            Blob::Package(p) => p.value(),
            Blob::Channel(c) => c.value(),
            Blob::Bundle(b) => b.value(),
            Blob::Other(o) => o.blob.clone(),
            Blob::Deprecation(d) => d.value(),
        }
    }

    /// A cheap guess of the blob's written size (its text, less the indentation), to cut the
    /// writers' work into even pieces.
    fn approx_len(&self) -> usize {
        let props =
            |ps: &[Property]| -> usize { ps.iter().map(|p| p.ty.len() + p.raw().len() + 32).sum() };
        match *self {
            Blob::Package(p) => {
                let icon = p.icon.as_ref().map_or(0, |i| i.data.len());
                p.name.len() + p.description.len() + icon + props(&p.properties) + 64
            }
            Blob::Channel(c) => {
                let entry = |e: &ChannelEntry| {
                    e.name.len() + e.replaces.len() + e.skip_range.len() + e.skips.len() * 64 + 48
                };
                c.entries.iter().map(entry).sum::<usize>() + props(&c.properties) + 64
            }
            Blob::Bundle(b) => {
                let images: usize = b.related_images.iter().map(|r| r.image.len() + 64).sum();
                b.image.len() + images + props(&b.properties) + 128
            }
            Blob::Other(_) => 1024,
            Blob::Deprecation(d) => d.entries.iter().map(|e| e.message.len() + 96).sum(),
        }
    }
}

mod erased {
    use serde_json::Value;
    pub trait Ser {
        fn value(&self) -> Value;
    }
    impl<T: serde::Serialize> Ser for T {
        fn value(&self) -> Value {
            serde_json::to_value(self).unwrap_or(Value::Null)
        }
    }
}

/// JSON with four-space indentation, as Go's `json.Encoder.SetIndent("", "    ")`.
pub fn json_pretty4(v: &Value) -> String {
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    if v.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(buf).unwrap_or_default()
}

/// Sorts object keys recursively (sigs.k8s.io/yaml writes YAML with sorted keys).
pub fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = Map::new();
            for (k, v) in entries {
                out.insert(k, sort_keys(v));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

/// Where a catalog directory keeps one package: `<root>/<package>/catalog.<ext>` (opm
/// `WriteFS`).
pub fn package_file(root: &Path, package: &str, ext: &str) -> PathBuf {
    root.join(package).join(format!("catalog.{ext}"))
}

/// Whether a package name can be a directory of its own under a catalog root: one plain path
/// element (a pulled catalog is input; its names must not lead elsewhere).
pub fn is_plain_package_name(name: &str) -> bool {
    !name.is_empty() && !matches!(name, "." | "..") && !name.contains(['/', '\\'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icon_block_text_becomes_canonical_base64() {
        let p: Package = serde_json::from_value(serde_json::json!({
            "schema": "olm.package", "name": "p",
            "icon": {"base64data": "aGVs\nbG8=\n", "mediatype": "image/png"}
        }))
        .unwrap();
        assert_eq!(p.icon.unwrap().data, "aGVsbG8=");
    }

    #[test]
    fn bundle_writes_image_even_when_empty_and_omits_empty_lists() {
        let b = Bundle {
            schema: SCHEMA_BUNDLE.into(),
            name: "a.v1.0.0".into(),
            package: "a".into(),
            ..Default::default()
        };
        let v = serde_json::to_value(&b).unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"schema":"olm.bundle","name":"a.v1.0.0","package":"a","image":""}"#
        );
    }

    #[test]
    fn write_order_follows_opm() {
        let mut cfg = DeclarativeConfig::default();
        cfg.bundles.push(Bundle {
            schema: SCHEMA_BUNDLE.into(),
            name: "b.v2".into(),
            package: "b".into(),
            ..Default::default()
        });
        cfg.packages.push(Package {
            schema: SCHEMA_PACKAGE.into(),
            name: "b".into(),
            ..Default::default()
        });
        cfg.others.push(Meta {
            schema: "x.rootless".into(),
            blob: serde_json::json!({"schema": "x.rootless"}),
            ..Default::default()
        });
        cfg.channels.push(Channel {
            schema: SCHEMA_CHANNEL.into(),
            name: "stable".into(),
            package: "a".into(),
            ..Default::default()
        });
        let schemas: Vec<String> = cfg
            .ordered_values()
            .iter()
            .map(|v| format!("{}:{}", v["schema"], v["name"]))
            .collect();
        assert_eq!(
            schemas,
            vec![
                "\"olm.channel\":\"stable\"",
                "\"olm.package\":\"b\"",
                "\"olm.bundle\":\"b.v2\"",
                "\"x.rootless\":null"
            ]
        );
        assert!(
            cfg.to_json()
                .starts_with("{\n    \"schema\": \"olm.channel\"")
        );
    }

    /// A catalog big enough for the writers to cut it into many chunks.
    fn many_bundles() -> DeclarativeConfig {
        let mut cfg = DeclarativeConfig::default();
        for i in 0..300 {
            cfg.bundles.push(Bundle {
                schema: SCHEMA_BUNDLE.into(),
                name: format!("p{}.v{i}", i % 7),
                package: format!("p{}", i % 7),
                image: format!("quay.io/p/b:{i}"),
                properties: vec![
                    Property::package(&format!("p{}", i % 7), &format!("1.0.{i}")),
                    Property::new("x.note", &serde_json::json!({"text": "n".repeat(i * 7)})),
                ],
                ..Default::default()
            });
        }
        cfg.others.push(Meta {
            schema: "x.rootless".into(),
            blob: serde_json::json!({"schema": "x.rootless", "n": [1, 2]}),
            ..Default::default()
        });
        cfg
    }

    #[test]
    fn chunked_writers_give_the_blobs_in_order() {
        let cfg = many_bundles();
        let (mut json, mut yaml) = (String::new(), String::new());
        cfg.visit_ordered(|v| {
            json.push_str(&json_pretty4(&v));
            json.push('\n');
            yaml.push_str("---\n");
            yaml.push_str(&crate::catalog::goyaml::to_string(&v));
        });
        assert_eq!(cfg.to_json(), json);
        assert_eq!(cfg.to_go_yaml(), yaml);
    }

    #[test]
    fn the_first_write_error_stops_the_writers() {
        /// Takes `left` bytes, then fails every write.
        struct Full {
            left: usize,
            failed_writes: usize,
        }
        impl std::io::Write for Full {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                if self.left == 0 {
                    self.failed_writes += 1;
                    return Err(std::io::Error::other("disk full"));
                }
                let n = buf.len().min(self.left);
                self.left -= n;
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let cfg = many_bundles();
        for yaml in [false, true] {
            let mut out = Full {
                left: 100_000,
                failed_writes: 0,
            };
            let written = if yaml {
                cfg.write_go_yaml(&mut out)
            } else {
                cfg.write_json(&mut out)
            };
            assert_eq!(written.unwrap_err().to_string(), "disk full");
            assert_eq!(out.failed_writes, 1);
        }
    }
}
