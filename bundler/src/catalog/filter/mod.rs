//! `olm catalog filter`: keep only what a cluster needs of a catalog, as oc-mirror v2 does.
//!
//! oc-mirror hands its ImageSetConfiguration's `mirror.operators[]` selection to the catalog
//! filter of `github.com/sherine-k/catalog-filter` (`mirror-config/v1alpha1`); [`filter`]
//! follows that code:
//! - no package listed: the head of every channel of every package (`full`: the catalog as
//!   it is);
//! - a package: its channels (those listed, or all), each cut to its head, to every bundle
//!   with `full`, or to a version range (the channel's own, else the package's), by semver
//!   along the channel's `replaces` chain ([`channel::Graph::in_range`]), never by
//!   `skipRange`; a prerelease only matches a range that names one;
//! - a listed package or channel the catalog does not have is left out, as oc-mirror leaves
//!   it out, with a warning, when the spec says so ([`UnknownNames::Ignore`], an
//!   ImageSetConfiguration's), else it is an error; a package none of whose channels exists,
//!   or a list none of whose packages does, is an error either way;
//! - the default channel must stay (a `defaultChannel` names a new one), and a range that
//!   empties it is an error; a version pin (`minVersion == maxVersion`) that empties a listed
//!   channel is an error too (oc-mirror writes both as catalogs opm rejects); another channel
//!   a range empties is dropped;
//! - kept entries keep their `replaces`/`skips` as written, bundles no kept channel lists go,
//!   deprecations of what went go.
//!
//! Beyond oc-mirror, [`Select::UpgradeFrom`] keeps only the bundles OLM walks from an
//! installed version to each channel's head ([`upgrade`]), the smallest catalog that still
//! upgrades. Every result is checked with `opm validate`'s rules before it is returned.

mod channel;
pub mod isc;
pub mod spec;
mod upgrade_from;

use std::collections::{BTreeSet, HashMap, HashSet};

use semver::Version;

use super::declcfg::{self, DeclarativeConfig};
use super::diagnostic::Report;
use super::property::{PackageProperty, TYPE_PACKAGE};
use crate::grammar::mm_semver::{self, Bounds};
use crate::grammar::semver_range;
use channel::Graph;
pub use spec::{
    ChannelFilter, FilterFlags, FilterSpec, PackageFilter, Select, SpecError, UnknownNames,
};

/// Why a catalog could not be filtered; messages carry oc-mirror's words where it has them.
#[derive(Debug, thiserror::Error)]
pub enum FilterError {
    #[error("package {package:?} is not in the catalog (packages: {known})")]
    UnknownPackage { package: String, known: String },
    #[error("channel {channel:?} is not in package {package:?} (channels: {known})")]
    UnknownChannel {
        package: String,
        channel: String,
        known: String,
    },
    #[error("no package listed is in the catalog ({listed}; packages: {known})")]
    NoPackageKnown { listed: String, known: String },
    #[error("package {package:?} bundle {bundle:?}: {message}")]
    BundleVersion {
        package: String,
        bundle: String,
        message: String,
    },
    #[error("invalid default channel configuration for package {package:?}: {message}")]
    DefaultChannel { package: String, message: String },
    #[error("package {package:?} channel {channel:?} unable to filter head of channel: {message}")]
    Head {
        package: String,
        channel: String,
        message: String,
    },
    #[error("package {package:?} channel {channel:?}: {message}")]
    Channel {
        package: String,
        channel: String,
        message: String,
    },
    #[error("error finding specific bundle: specific version {version} not found in bundles")]
    SpecificVersion { version: String },
    #[error(
        "package {package:?} channel {channel:?} has version range {range:?} that results in an empty channel{oc_mirror}"
    )]
    EmptyChannel {
        package: String,
        channel: String,
        range: String,
        /// What oc-mirror does instead, when it writes an invalid catalog here.
        oc_mirror: String,
    },
    #[error("package {package:?} channel {channel:?}: {error}")]
    Upgrade {
        package: String,
        channel: String,
        error: Box<super::upgrade::UpgradeError>,
    },
    #[error("package {package:?} does not validate, so it has no upgrade graph to walk:\n{report}")]
    UpgradeGraph {
        package: String,
        report: Box<Report>,
    },
    #[error(
        "package {package:?}: the filter selects no bundle (channels: {channels}; versions: {versions})"
    )]
    NothingSelected {
        package: String,
        channels: String,
        versions: String,
    },
    #[error("the filtered catalog does not validate:\n{0}")]
    Invalid(Box<Report>),
}

/// Keeps of `cfg` what `spec` selects (see the module documentation), and checks the result
/// with `opm validate`'s rules. A name the spec ignores (see [`UnknownNames`]) is logged as
/// a warning.
pub fn filter(cfg: DeclarativeConfig, spec: &FilterSpec) -> Result<DeclarativeConfig, FilterError> {
    filter_reporting(cfg, spec, &mut |w| tracing::warn!("{w}"))
}

/// [`filter`], handing each warning (one per name left out) to `warn`.
pub fn filter_reporting(
    cfg: DeclarativeConfig,
    spec: &FilterSpec,
    warn: &mut dyn FnMut(String),
) -> Result<DeclarativeConfig, FilterError> {
    let out = select(cfg, spec, warn)?;
    let report = super::validate::validate(&out);
    if report.has_errors() {
        return Err(FilterError::Invalid(Box::new(report)));
    }
    Ok(out)
}

/// Drops from `cfg` (one file of a catalog, as it is read) what [`filter`] would drop anyway:
/// every blob of a package `spec` does not name, but the package's name, which the filter
/// lists when a name is wrong. Filtering a few packages of a large catalog then never holds
/// the rest of it. Nothing is dropped when `spec` names no package.
pub fn prune_unselected(cfg: &mut DeclarativeConfig, spec: &FilterSpec) {
    if spec.packages().is_empty() {
        return;
    }
    let named = |p: &str| spec.package(p).is_some();
    for p in cfg.packages.iter_mut().filter(|p| !named(&p.name)) {
        *p = declcfg::Package {
            schema: std::mem::take(&mut p.schema),
            name: std::mem::take(&mut p.name),
            ..Default::default()
        };
    }
    cfg.channels.retain(|c| named(&c.package));
    cfg.bundles.retain(|b| named(&b.package));
    cfg.deprecations.retain(|d| named(&d.package));
    cfg.others
        .retain(|o| o.package.is_empty() || named(&o.package));
}

/// The bundles kept so far, by package.
type Kept = HashMap<String, BTreeSet<String>>;

fn select(
    mut cfg: DeclarativeConfig,
    spec: &FilterSpec,
    warn: &mut dyn FnMut(String),
) -> Result<DeclarativeConfig, FilterError> {
    if spec.full() && spec.packages().is_empty() {
        // oc-mirror mirrors such a catalog whole, without filtering it.
        return Ok(cfg);
    }
    let known;
    let spec = if spec.packages().is_empty() {
        spec
    } else {
        known = known_names(&cfg, spec, warn)?;
        &known
    };
    // The upgrade graphs of whole packages, as the catalog has them.
    let graphs = upgrade_from::Graphs::new(&cfg, spec)?;
    if !spec.packages().is_empty() {
        keep_selected(&mut cfg, spec);
    }
    let versions = bundle_versions(&cfg)?;
    // The defaults as the catalog has them: a range may not empty these.
    let catalog_defaults: HashMap<String, String> = cfg
        .packages
        .iter()
        .map(|p| (p.name.clone(), p.default_channel.clone()))
        .collect();
    set_default_channels(&mut cfg, spec)?;
    let mut kept = Kept::new();
    let mut emptied = Vec::new();
    for (i, ch) in cfg.channels.iter_mut().enumerate() {
        let pf = spec.package(&ch.package);
        let current = cfg.packages.iter().find(|p| p.name == ch.package);
        let is_default = |d: Option<&String>| d.is_some_and(|d| *d == ch.name);
        // A channel that may not go empty: the catalog's default, or the new one.
        let catalog_default = is_default(catalog_defaults.get(&ch.package));
        let default = catalog_default || is_default(current.map(|p| &p.default_channel));
        let listed = pf.is_some_and(|p| p.channels.iter().any(|c| c.name == ch.name));
        let how = rule(spec, pf, &ch.name);
        let pinned = matches!(how, Rule::Range(r) if r.exact().is_some());
        let names = match how {
            Rule::All => ch.entries.iter().map(|e| e.name.clone()).collect(),
            Rule::Head => {
                let head = Graph::new(ch).map_err(|message| FilterError::Head {
                    package: ch.package.clone(),
                    channel: ch.name.clone(),
                    message,
                })?;
                let head = head.head().to_string();
                ch.entries.retain(|e| e.name == head);
                BTreeSet::from([head])
            }
            Rule::Range(range) => {
                let v = versions.get(&ch.package);
                let names = in_range(ch, range, v)?;
                ch.entries.retain(|e| names.contains(&e.name));
                names
            }
            Rule::UpgradeFrom(from) => match graphs.walk(ch, from)? {
                Ok(names) => names,
                Err(error) if default => {
                    return Err(FilterError::Upgrade {
                        package: ch.package.clone(),
                        channel: ch.name.clone(),
                        error: Box::new(error),
                    });
                }
                Err(_) => {
                    ch.entries.clear();
                    BTreeSet::new()
                }
            },
        };
        if ch.entries.is_empty() {
            // Where oc-mirror's filter misses the empty channel, it writes a catalog opm
            // rejects; the error says so, as a user comparing the two tools will ask.
            let oc_mirror = if pinned {
                "; oc-mirror would write an invalid catalog here (it keeps the channel with no entry, which opm rejects)"
            } else if default && !catalog_default {
                "; oc-mirror would write an invalid catalog here (it drops the channel and keeps it as the package's defaultChannel, which opm rejects)"
            } else {
                ""
            };
            if default || (pinned && listed) {
                return Err(empty_channel(ch, pf, oc_mirror));
            }
            emptied.push(i);
        }
        kept.entry(ch.package.clone()).or_default().extend(names);
    }
    let mut i = 0;
    cfg.channels.retain(|_| {
        i += 1;
        !emptied.contains(&(i - 1))
    });
    keep_listed_bundles(&mut cfg, &kept);
    trim_deprecations(&mut cfg);
    for p in spec.packages() {
        if !cfg.bundles.iter().any(|b| b.package == p.name) {
            return Err(nothing_selected(p));
        }
    }
    Ok(cfg)
}

/// How one channel is cut.
enum Rule<'a> {
    All,
    Head,
    Range(&'a Bounds),
    UpgradeFrom(&'a Version),
}

/// The channel's own range, else its package's (oc-mirror's precedence), else full or head.
fn rule<'a>(spec: &'a FilterSpec, pf: Option<&'a PackageFilter>, channel: &str) -> Rule<'a> {
    let own = pf
        .and_then(|p| p.channels.iter().find(|c| c.name == channel))
        .and_then(|c| c.range.as_ref());
    match (own, pf.map(|p| &p.select)) {
        (Some(r), _) | (None, Some(Select::Range(r))) => Rule::Range(r),
        (None, Some(Select::UpgradeFrom(v))) => Rule::UpgradeFrom(v),
        _ if spec.full() => Rule::All,
        _ => Rule::Head,
    }
}

/// The spec without the names `cfg` does not have. Each is an error, or, when the spec
/// ignores unknown names, a warning, as oc-mirror (its catalog filter keeps the packages and
/// channels listed that exist) goes on without it. A package none of whose listed channels
/// exists stays an error (oc-mirror fails on its default channel then), and so does a list
/// of packages none of which exists (oc-mirror selects nothing).
fn known_names(
    cfg: &DeclarativeConfig,
    spec: &FilterSpec,
    warn: &mut dyn FnMut(String),
) -> Result<FilterSpec, FilterError> {
    let list = |names: &mut dyn Iterator<Item = &str>| {
        let set: BTreeSet<&str> = names.collect();
        set.into_iter().collect::<Vec<_>>().join(", ")
    };
    let ignore = spec.unknown_names() == UnknownNames::Ignore;
    let mut ignored: Vec<FilterError> = Vec::new();
    let mut left_out = |e: FilterError| match ignore {
        true => {
            ignored.push(e);
            Ok(())
        }
        false => Err(e),
    };
    for p in spec.packages() {
        if !cfg.packages.iter().any(|q| q.name == p.name) {
            left_out(FilterError::UnknownPackage {
                package: p.name.clone(),
                known: list(&mut cfg.packages.iter().map(|q| q.name.as_str())),
            })?;
            continue;
        }
        let channels = cfg.channels.iter().filter(|c| c.package == p.name);
        let unknown = p
            .channels
            .iter()
            .filter(|c| !channels.clone().any(|ch| ch.name == c.name));
        let all_unknown = !p.channels.is_empty() && unknown.clone().count() == p.channels.len();
        for c in unknown {
            let e = FilterError::UnknownChannel {
                package: p.name.clone(),
                channel: c.name.clone(),
                known: list(&mut channels.clone().map(|ch| ch.name.as_str())),
            };
            if all_unknown {
                return Err(e);
            }
            left_out(e)?;
        }
    }
    let has_package = |name: &str| cfg.packages.iter().any(|q| q.name == name);
    if !spec.packages().iter().any(|p| has_package(&p.name)) {
        return Err(FilterError::NoPackageKnown {
            listed: list(&mut spec.packages().iter().map(|p| p.name.as_str())),
            known: list(&mut cfg.packages.iter().map(|q| q.name.as_str())),
        });
    }
    for e in &ignored {
        warn(format!("{e}: ignored, as oc-mirror does"));
    }
    let has_channel = |package: &str, channel: &str| {
        cfg.channels
            .iter()
            .any(|c| c.package == package && c.name == channel)
    };
    Ok(spec.retain_names(
        |p| has_package(&p.name),
        |p, c| has_channel(&p.name, &c.name),
    ))
}

/// Drops every blob of a package the spec does not name, and the channels it leaves out
/// (catalog-filter `filterByPackageAndChannels`); blobs of no package stay.
fn keep_selected(cfg: &mut DeclarativeConfig, spec: &FilterSpec) {
    let named = |p: &str| spec.package(p).is_some();
    cfg.packages.retain(|p| named(&p.name));
    cfg.channels.retain(|c| {
        spec.package(&c.package)
            .is_some_and(|p| p.channels.is_empty() || p.channels.iter().any(|f| f.name == c.name))
    });
    cfg.bundles.retain(|b| named(&b.package));
    cfg.deprecations.retain(|d| named(&d.package));
    cfg.others
        .retain(|o| o.package.is_empty() || named(&o.package));
}

/// Every bundle's version, by package and name. As the filter does, a bundle without an
/// `olm.package` property or with a version that is not strict semver stops the filter.
fn bundle_versions(
    cfg: &DeclarativeConfig,
) -> Result<HashMap<String, HashMap<String, Version>>, FilterError> {
    let mut out: HashMap<String, HashMap<String, Version>> = HashMap::new();
    for b in &cfg.bundles {
        let fail = |message: String| FilterError::BundleVersion {
            package: b.package.clone(),
            bundle: b.name.clone(),
            message,
        };
        let Some(p) = b.properties.iter().find(|p| p.ty == TYPE_PACKAGE) else {
            return Err(fail("the bundle has no olm.package property".into()));
        };
        let pp: PackageProperty = p.value_as().map_err(fail)?;
        let v = semver_range::parse_version(&pp.version)
            .map_err(|e| fail(format!("version {:?}: {e}", pp.version)))?;
        out.entry(b.package.clone())
            .or_default()
            .insert(b.name.clone(), v);
    }
    Ok(out)
}

/// catalog-filter `setDefaultChannel`: a `defaultChannel` replaces the package's, and must be
/// among the channels kept; without one, the package's own must be kept.
fn set_default_channels(cfg: &mut DeclarativeConfig, spec: &FilterSpec) -> Result<(), FilterError> {
    for p in &mut cfg.packages {
        let Some(pf) = spec.package(&p.name) else {
            continue;
        };
        let kept = |c: &str| {
            cfg.channels
                .iter()
                .any(|ch| ch.package == p.name && ch.name == c)
        };
        let message = match &pf.default_channel {
            None if p.default_channel.is_empty() || kept(&p.default_channel) => continue,
            None => format!(
                "the default channel {:?} was filtered out, a new default channel must be configured for this package",
                p.default_channel
            ),
            Some(d) if kept(d) => {
                p.default_channel = d.clone();
                continue;
            }
            Some(d) => format!(
                "specified default channel override {d:?} does not exist in the filtered output"
            ),
        };
        return Err(FilterError::DefaultChannel {
            package: p.name.clone(),
            message,
        });
    }
    Ok(())
}

/// The entries a range keeps in `ch`. A range whose bounds are written alike names one
/// version: that bundle of the package, wherever it is (oc-mirror's OCPBUGS-61497 fix).
fn in_range(
    ch: &declcfg::Channel,
    range: &Bounds,
    versions: Option<&HashMap<String, Version>>,
) -> Result<BTreeSet<String>, FilterError> {
    let version = |n: &str| versions.and_then(|v| v.get(n));
    if let Some(exact) = range.exact() {
        // oc-mirror takes any bundle of that version (a map's random pick): prefer one the
        // channel lists, then the first name.
        let mut matching: Vec<&String> = versions
            .into_iter()
            .flatten()
            .filter(|(_, v)| mm_semver::same_version(v, &exact.version))
            .map(|(n, _)| n)
            .collect();
        matching.sort_by_key(|n| (!ch.entries.iter().any(|e| e.name == **n), *n));
        return match matching.first() {
            Some(n) => Ok(BTreeSet::from([(*n).clone()])),
            None => Err(FilterError::SpecificVersion {
                version: exact.as_str().to_string(),
            }),
        };
    }
    let graph = Graph::new(ch).map_err(|message| FilterError::Channel {
        package: ch.package.clone(),
        channel: ch.name.clone(),
        message,
    })?;
    Ok(graph.in_range(range, version))
}

fn empty_channel(
    ch: &declcfg::Channel,
    pf: Option<&PackageFilter>,
    oc_mirror: &str,
) -> FilterError {
    let own = pf
        .and_then(|p| p.channels.iter().find(|c| c.name == ch.name))
        .and_then(|c| c.range.as_ref());
    let range = match (own, pf.map(|p| &p.select)) {
        (Some(r), _) | (None, Some(Select::Range(r))) => r.range_text(),
        _ => String::new(),
    };
    FilterError::EmptyChannel {
        package: ch.package.clone(),
        channel: ch.name.clone(),
        range,
        oc_mirror: oc_mirror.to_string(),
    }
}

/// Keeps the bundles selected that a kept channel still lists (a range can name a bundle the
/// channel only references; a catalog may not hold a bundle outside every channel), sorted
/// by package and name as the filter sorts them.
fn keep_listed_bundles(cfg: &mut DeclarativeConfig, kept: &Kept) {
    let listed: HashSet<(&str, &str)> = cfg
        .channels
        .iter()
        .flat_map(|c| {
            c.entries
                .iter()
                .map(move |e| (c.package.as_str(), e.name.as_str()))
        })
        .collect();
    let keep: HashSet<(String, String)> = cfg
        .bundles
        .iter()
        .filter(|b| {
            kept.get(&b.package).is_some_and(|k| k.contains(&b.name))
                && listed.contains(&(b.package.as_str(), b.name.as_str()))
        })
        .map(|b| (b.package.clone(), b.name.clone()))
        .collect();
    cfg.bundles
        .retain(|b| keep.contains(&(b.package.clone(), b.name.clone())));
    cfg.bundles
        .sort_by(|a, b| (&a.package, &a.name).cmp(&(&b.package, &b.name)));
}

/// Drops deprecation entries of bundles and channels that went (a deprecation of something
/// missing fails `opm validate`).
fn trim_deprecations(cfg: &mut DeclarativeConfig) {
    let bundles: HashSet<(&str, &str)> = cfg
        .bundles
        .iter()
        .map(|b| (b.package.as_str(), b.name.as_str()))
        .collect();
    let channels: HashSet<(&str, &str)> = cfg
        .channels
        .iter()
        .map(|c| (c.package.as_str(), c.name.as_str()))
        .collect();
    for d in &mut cfg.deprecations {
        let pkg = d.package.as_str();
        d.entries.retain(|e| match e.reference.schema.as_str() {
            declcfg::SCHEMA_BUNDLE => bundles.contains(&(pkg, e.reference.name.as_str())),
            declcfg::SCHEMA_CHANNEL => channels.contains(&(pkg, e.reference.name.as_str())),
            _ => true,
        });
    }
}

fn nothing_selected(p: &PackageFilter) -> FilterError {
    let channels = match p.channels.is_empty() {
        true => "all".to_string(),
        false => p
            .channels
            .iter()
            .map(|c| match &c.range {
                Some(r) => format!("{} ({})", c.name, r.range_text().trim()),
                None => c.name.clone(),
            })
            .collect::<Vec<_>>()
            .join(", "),
    };
    let versions = match &p.select {
        Select::Heads => "channel heads".to_string(),
        Select::Range(r) => r.range_text().trim().to_string(),
        Select::UpgradeFrom(v) => format!("upgrades from {v}"),
    };
    FilterError::NothingSelected {
        package: p.name.clone(),
        channels,
        versions,
    }
}

#[cfg(test)]
mod tests;
