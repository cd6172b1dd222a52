//! The validated catalog: packages -> channels -> entries, with bundles shared per package.
//!
//! Built only from a [`DeclarativeConfig`] that passed [`validate`](super::validate), so every
//! channel has exactly one head, every entry names a bundle of its package, and every bundle
//! has a parsed version. Unlike operator-registry's model, a bundle is stored once per package
//! (not once per channel), and channel entries carry the upgrade edges; the lookups a catalog
//! server needs (by name, head, default channel, replaced-by/skipped-by, GVK providers) are
//! methods here.

use std::collections::{BTreeMap, HashMap};

use semver::Version;

use super::declcfg::{self, DeclarativeConfig, Icon, Property, RelatedImage};
use super::diagnostic::Report;
use super::property::{Gvk, PackageRequired, TypedProperty};
use super::validate;
use crate::grammar::semver_range::Range;

/// Why a catalog directory could not become a model.
#[derive(Debug, thiserror::Error)]
pub enum ModelLoadError {
    #[error(transparent)]
    Load(super::load::LoadErrors),
    #[error("invalid catalog:\n{0}")]
    Invalid(Report),
}

/// A whole catalog.
#[derive(Debug, Clone, Default)]
pub struct Model {
    packages: BTreeMap<String, Package>,
}

/// A package with its channels and bundles.
#[derive(Debug, Clone)]
pub struct Package {
    pub name: String,
    pub description: String,
    pub icon: Option<Icon>,
    pub default_channel: String,
    pub properties: Vec<Property>,
    /// Deprecation message for the whole package, if deprecated.
    pub deprecation: Option<String>,
    pub channels: BTreeMap<String, Channel>,
    pub bundles: BTreeMap<String, Bundle>,
}

/// A channel: its entries in file order plus the computed head.
#[derive(Debug, Clone)]
pub struct Channel {
    pub name: String,
    pub package: String,
    pub properties: Vec<Property>,
    pub deprecation: Option<String>,
    pub entries: Vec<ChannelEntry>,
    index: HashMap<String, usize>,
    head: usize,
}

/// A bundle's place in one channel: the upgrade edges that lead to it.
#[derive(Debug, Clone)]
pub struct ChannelEntry {
    pub name: String,
    pub replaces: Option<String>,
    pub skips: Vec<String>,
    pub skip_range: Option<Range>,
}

/// A bundle of a package (shared by all channels listing it).
#[derive(Debug, Clone)]
pub struct Bundle {
    pub name: String,
    pub package: String,
    pub image: String,
    pub properties: Vec<Property>,
    pub related_images: Vec<RelatedImage>,
    pub version: Version,
    pub release: Option<String>,
    pub provided_gvks: Vec<Gvk>,
    pub required_gvks: Vec<Gvk>,
    pub required_packages: Vec<PackageRequired>,
    pub deprecation: Option<String>,
    /// Names of the channels listing this bundle, sorted.
    pub channels: Vec<String>,
}

/// Names a channel entry across the catalog.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct EntryRef<'a> {
    pub package: &'a str,
    pub channel: &'a str,
    pub bundle: &'a str,
}

impl Bundle {
    /// The manifests embedded as `olm.bundle.object` properties, as JSON text, in order.
    pub fn objects(&self) -> Vec<String> {
        super::property::bundle_objects(&self.properties)
    }

    /// The ClusterServiceVersion among [`objects`](Self::objects), as JSON text.
    pub fn csv_json(&self) -> Option<String> {
        self.objects()
            .into_iter()
            .find(|o| super::property::is_csv_json(o))
    }

    /// The `olm.csv.metadata` property, if present.
    pub fn csv_metadata(&self) -> Option<super::property::CsvMetadata> {
        self.properties
            .iter()
            .enumerate()
            .find_map(|(i, p)| match p.parse(i) {
                Ok(TypedProperty::CsvMetadata(m)) => Some(*m),
                _ => None,
            })
    }
}

impl Channel {
    /// The head: the entry nothing replaces or skips.
    pub fn head(&self) -> &ChannelEntry {
        &self.entries[self.head]
    }

    pub fn entry(&self, bundle: &str) -> Option<&ChannelEntry> {
        self.index.get(bundle).map(|i| &self.entries[*i])
    }

    /// Entries whose `replaces` is `bundle`.
    pub fn replaced_by<'a>(&'a self, bundle: &'a str) -> impl Iterator<Item = &'a ChannelEntry> {
        self.entries
            .iter()
            .filter(move |e| e.replaces.as_deref() == Some(bundle))
    }

    /// Entries whose `skips` list `bundle`.
    pub fn skipped_by<'a>(&'a self, bundle: &'a str) -> impl Iterator<Item = &'a ChannelEntry> {
        self.entries
            .iter()
            .filter(move |e| e.skips.iter().any(|s| s == bundle))
    }

    /// Entries whose skipRange contains `version`.
    pub fn skip_ranging<'a>(
        &'a self,
        version: &'a Version,
    ) -> impl Iterator<Item = &'a ChannelEntry> {
        self.entries
            .iter()
            .filter(move |e| e.skip_range.as_ref().is_some_and(|r| r.contains(version)))
    }
}

impl Package {
    pub fn channel(&self, name: &str) -> Option<&Channel> {
        self.channels.get(name)
    }

    pub fn default_channel(&self) -> Option<&Channel> {
        self.channels.get(&self.default_channel)
    }

    pub fn bundle(&self, name: &str) -> Option<&Bundle> {
        self.bundles.get(name)
    }

    /// The bundle at the head of `channel`.
    pub fn channel_head(&self, channel: &str) -> Option<&Bundle> {
        let c = self.channels.get(channel)?;
        self.bundles.get(&c.head().name)
    }
}

impl Model {
    /// Validates and builds; the report holds warnings on success and errors on failure.
    pub fn from_declcfg(cfg: &DeclarativeConfig) -> Result<(Model, Report), Report> {
        let (report, facts) = validate::validate_with_facts(cfg);
        if report.has_errors() {
            return Err(report);
        }
        Ok((build(cfg.clone(), facts), report))
    }

    /// Like [`from_declcfg`](Self::from_declcfg) but consumes the blobs, so their strings move
    /// into the model instead of being copied (what a server wants for big catalogs).
    pub fn from_declcfg_owned(cfg: DeclarativeConfig) -> Result<(Model, Report), Report> {
        let (report, facts) = validate::validate_with_facts(&cfg);
        if report.has_errors() {
            return Err(report);
        }
        Ok((build(cfg, facts), report))
    }

    /// Loads a catalog directory (or file), validates it and builds the model.
    pub fn load(dir: &std::path::Path) -> Result<(Model, Report), ModelLoadError> {
        let cfg = super::load::load_dir(dir).map_err(ModelLoadError::Load)?;
        Model::from_declcfg_owned(cfg).map_err(ModelLoadError::Invalid)
    }

    pub fn packages(&self) -> impl Iterator<Item = &Package> {
        self.packages.values()
    }

    pub fn package(&self, name: &str) -> Option<&Package> {
        self.packages.get(name)
    }

    pub fn channel(&self, package: &str, channel: &str) -> Option<&Channel> {
        self.packages.get(package)?.channels.get(channel)
    }

    /// A bundle by name within a package's channel (the entry and the bundle).
    pub fn bundle_in_channel(
        &self,
        package: &str,
        channel: &str,
        bundle: &str,
    ) -> Option<(&ChannelEntry, &Bundle)> {
        let p = self.packages.get(package)?;
        let e = p.channels.get(channel)?.entry(bundle)?;
        Some((e, p.bundles.get(bundle)?))
    }

    /// Every channel entry of the catalog, in package, channel, entry order.
    pub fn entries(&self) -> impl Iterator<Item = (EntryRef<'_>, &ChannelEntry, &Bundle)> {
        self.packages.values().flat_map(|p| {
            p.channels.values().flat_map(move |c| {
                c.entries.iter().filter_map(move |e| {
                    let b = p.bundles.get(&e.name)?;
                    Some((
                        EntryRef {
                            package: &p.name,
                            channel: &c.name,
                            bundle: &e.name,
                        },
                        e,
                        b,
                    ))
                })
            })
        })
    }

    /// Entries (any package/channel) whose `replaces` is `bundle`.
    pub fn entries_replacing<'a>(
        &'a self,
        bundle: &'a str,
    ) -> impl Iterator<Item = (EntryRef<'a>, &'a ChannelEntry, &'a Bundle)> {
        self.entries()
            .filter(move |(_, e, _)| e.replaces.as_deref() == Some(bundle))
    }

    /// Entries whose bundle provides `gvk`.
    pub fn providers_of<'a>(
        &'a self,
        gvk: &'a Gvk,
    ) -> impl Iterator<Item = (EntryRef<'a>, &'a ChannelEntry, &'a Bundle)> {
        self.entries()
            .filter(move |(_, _, b)| b.provided_gvks.contains(gvk))
    }
}

/// The model of a validated catalog; `facts` are its bundles' facts, in `cfg.bundles` order.
fn build(cfg: DeclarativeConfig, facts: Vec<validate::BundleFacts>) -> Model {
    let mut packages: BTreeMap<String, Package> = BTreeMap::new();
    for p in cfg.packages {
        if packages.contains_key(&p.name) {
            continue;
        }
        packages.insert(
            p.name.clone(),
            Package {
                name: p.name,
                description: p.description,
                icon: p.icon,
                default_channel: p.default_channel,
                properties: p.properties,
                deprecation: None,
                channels: BTreeMap::new(),
                bundles: BTreeMap::new(),
            },
        );
    }
    for (b, facts) in cfg.bundles.into_iter().zip(facts) {
        let Some(p) = packages.get_mut(&b.package) else {
            continue;
        };
        let Some(version) = facts.version else {
            continue;
        };
        p.bundles.insert(
            b.name.clone(),
            Bundle {
                name: b.name,
                package: b.package,
                image: b.image,
                properties: b.properties,
                related_images: b.related_images,
                version,
                release: facts.release,
                provided_gvks: facts.provided,
                required_gvks: facts.required_gvks,
                required_packages: facts.required_packages,
                deprecation: None,
                channels: Vec::new(),
            },
        );
    }
    for c in &cfg.channels {
        let Some(p) = packages.get_mut(&c.package) else {
            continue;
        };
        let head_name = validate::channel_head(c.entries.iter())
            .map(|e| e.name.clone())
            .unwrap_or_default();
        let entries: Vec<ChannelEntry> = c.entries.iter().map(entry).collect();
        let index: HashMap<String, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.clone(), i))
            .collect();
        let head = index.get(&head_name).copied().unwrap_or(0);
        for e in &entries {
            if let Some(b) = p.bundles.get_mut(&e.name) {
                b.channels.push(c.name.clone());
            }
        }
        p.channels.insert(
            c.name.clone(),
            Channel {
                name: c.name.clone(),
                package: c.package.clone(),
                properties: c.properties.clone(),
                deprecation: None,
                entries,
                index,
                head,
            },
        );
    }
    for p in packages.values_mut() {
        for b in p.bundles.values_mut() {
            b.channels.sort();
        }
    }
    for d in &cfg.deprecations {
        let Some(p) = packages.get_mut(&d.package) else {
            continue;
        };
        for e in &d.entries {
            let msg = Some(e.message.clone());
            match e.reference.schema.as_str() {
                declcfg::SCHEMA_PACKAGE => p.deprecation = msg,
                declcfg::SCHEMA_CHANNEL => {
                    if let Some(c) = p.channels.get_mut(&e.reference.name) {
                        c.deprecation = msg;
                    }
                }
                declcfg::SCHEMA_BUNDLE => {
                    if let Some(b) = p.bundles.get_mut(&e.reference.name) {
                        b.deprecation = msg;
                    }
                }
                _ => {}
            }
        }
    }
    Model { packages }
}

fn entry(e: &declcfg::ChannelEntry) -> ChannelEntry {
    ChannelEntry {
        name: e.name.clone(),
        replaces: (!e.replaces.is_empty()).then(|| e.replaces.clone()),
        skips: e.skips.clone(),
        skip_range: if e.skip_range.is_empty() {
            None
        } else {
            Range::parse(&e.skip_range).ok()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::load::load_bytes;
    use std::path::Path;

    const CAT: &str = r#"{"schema":"olm.package","name":"foo","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"foo","entries":[{"name":"foo.v0.1.0"},{"name":"foo.v0.2.0","replaces":"foo.v0.1.0","skipRange":"<0.2.0"}]}
{"schema":"olm.channel","name":"fast","package":"foo","entries":[{"name":"foo.v0.2.0"}]}
{"schema":"olm.bundle","name":"foo.v0.1.0","package":"foo","image":"quay.io/x/foo:v0.1.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.1.0"}},{"type":"olm.gvk","value":{"group":"x.io","kind":"Foo","version":"v1"}}]}
{"schema":"olm.bundle","name":"foo.v0.2.0","package":"foo","image":"quay.io/x/foo:v0.2.0","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"0.2.0"}},{"type":"olm.gvk","value":{"group":"x.io","kind":"Foo","version":"v1"}}]}
{"schema":"olm.deprecations","package":"foo","entries":[{"reference":{"schema":"olm.bundle","name":"foo.v0.1.0"},"message":"use 0.2.0"}]}
"#;

    fn model() -> Model {
        let cfg = load_bytes(Path::new("c.json"), CAT.as_bytes()).unwrap();
        Model::from_declcfg(&cfg).unwrap().0
    }

    #[test]
    fn lookups() {
        let m = model();
        let p = m.package("foo").unwrap();
        assert_eq!(p.default_channel().unwrap().name, "stable");
        assert_eq!(p.channel_head("stable").unwrap().name, "foo.v0.2.0");
        assert_eq!(p.channel_head("fast").unwrap().name, "foo.v0.2.0");
        let (e, b) = m.bundle_in_channel("foo", "stable", "foo.v0.2.0").unwrap();
        assert_eq!(e.replaces.as_deref(), Some("foo.v0.1.0"));
        assert_eq!(b.version, Version::new(0, 2, 0));
        assert_eq!(b.channels, vec!["fast", "stable"]);
        let rep: Vec<_> = m
            .entries_replacing("foo.v0.1.0")
            .map(|(r, _, _)| r.bundle)
            .collect();
        assert_eq!(rep, vec!["foo.v0.2.0"]);
        let c = p.channel("stable").unwrap();
        let v = Version::new(0, 1, 5);
        assert_eq!(c.skip_ranging(&v).count(), 1);
        let gvk = Gvk {
            group: "x.io".into(),
            kind: "Foo".into(),
            version: "v1".into(),
        };
        assert_eq!(m.providers_of(&gvk).count(), 3);
        assert_eq!(
            p.bundle("foo.v0.1.0").unwrap().deprecation.as_deref(),
            Some("use 0.2.0")
        );
    }

    #[test]
    fn invalid_catalog_gives_the_report() {
        let bad = CAT.replace(r#","replaces":"foo.v0.1.0""#, "");
        let cfg = load_bytes(Path::new("c.json"), bad.as_bytes()).unwrap();
        let report = Model::from_declcfg(&cfg).unwrap_err();
        assert!(report.to_string().contains("multiple channel heads"));
    }
}
