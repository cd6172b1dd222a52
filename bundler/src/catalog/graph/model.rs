//! The package/channel upgrade graph [`build`] computes from a catalog: bundles by version, edges
//! (`replace`, `skip`, `skipRange`), heads, the default channel and deprecations.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use semver::Version;

use crate::catalog::declcfg::{DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE};
use crate::catalog::property::TYPE_PACKAGE;
use crate::grammar::semver_range::{self, Range};

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only this package.
    pub package: Option<String>,
    /// Only edges whose source version is at least this bundle's (opm `--minimum-edge`).
    pub minimum_edge: Option<String>,
    /// Mark what OLM v0 ignores: entries a newer entry skipped, and edges into them.
    pub v0_semantics: bool,
    /// What the HTML page is titled after (the catalog directory); "catalog" when None.
    pub title: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    #[error("package {0:?} not found in the catalog")]
    UnknownPackage(String),
    #[error("unknown minimum edge name: {0:?}")]
    UnknownMinimumEdge(String),
    #[error("bundle {bundle:?} has {count} {TYPE_PACKAGE:?} properties, expected exactly 1")]
    PackageProperty { bundle: String, count: usize },
    #[error("bundle {bundle:?} has invalid version {version:?}: {message}")]
    Version {
        bundle: String,
        version: String,
        message: String,
    },
    #[error(
        "channel {channel:?} of package {package:?} lists {bundle:?}, which has no olm.bundle blob"
    )]
    MissingBundle {
        package: String,
        channel: String,
        bundle: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EdgeKind {
    Replace,
    Skip,
    SkipRange(String),
}

#[derive(Debug, Clone)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
    /// Ignored by OLM v0 (only set with `v0_semantics`).
    pub ignored: bool,
}

#[derive(Debug, Clone)]
pub struct ChannelGraph {
    pub name: String,
    pub deprecated: bool,
    /// Entries by decreasing version.
    pub nodes: Vec<(String, Version)>,
    pub head: Option<String>,
    pub skipped: BTreeSet<String>,
    pub edges: Vec<Edge>,
}

#[derive(Debug, Clone)]
pub struct PackageGraph {
    pub name: String,
    pub deprecated: bool,
    pub deprecated_bundles: BTreeSet<String>,
    /// The package's `defaultChannel` (None without an `olm.package` blob or when empty).
    pub default_channel: Option<String>,
    pub channels: Vec<ChannelGraph>,
}

/// Builds the per-channel graphs of the catalog (sorted by package and channel name).
pub fn build(cfg: &DeclarativeConfig, opts: &Options) -> Result<Vec<PackageGraph>, GraphError> {
    let mut versions: BTreeMap<(&str, &str), Version> = BTreeMap::new();
    for b in &cfg.bundles {
        let pkgs: Vec<_> = b
            .properties
            .iter()
            .filter(|p| p.ty == TYPE_PACKAGE)
            .collect();
        if pkgs.len() != 1 {
            return Err(GraphError::PackageProperty {
                bundle: b.name.clone(),
                count: pkgs.len(),
            });
        }
        let v = pkgs[0].str_field("version").unwrap_or_default();
        let v = v.as_str();
        let parsed = semver_range::parse_version(v).map_err(|e| GraphError::Version {
            bundle: b.name.clone(),
            version: v.into(),
            message: e.to_string(),
        })?;
        versions.insert((&b.package, &b.name), parsed);
    }
    let mut names: BTreeSet<&str> = cfg.packages.iter().map(|p| p.name.as_str()).collect();
    names.extend(cfg.channels.iter().map(|c| c.package.as_str()));
    if let Some(p) = &opts.package {
        if !names.contains(p.as_str()) {
            return Err(GraphError::UnknownPackage(p.clone()));
        }
        names.retain(|n| n == p);
    }
    let mut floor: Option<(String, Version)> = None;
    if let Some(min) = &opts.minimum_edge {
        let found = versions
            .iter()
            .find(|((pkg, n), _)| *n == min && opts.package.as_deref().is_none_or(|p| p == *pkg));
        match found {
            Some(((pkg, _), v)) => {
                floor = Some((pkg.to_string(), v.clone()));
                names.retain(|n| *n == *pkg);
            }
            None => return Err(GraphError::UnknownMinimumEdge(min.clone())),
        }
    }
    let mut out = Vec::new();
    for pkg in names {
        let mut deprecated = false;
        let mut dep_channels = HashSet::new();
        let mut dep_bundles = BTreeSet::new();
        for d in cfg.deprecations.iter().filter(|d| d.package == pkg) {
            for e in &d.entries {
                match e.reference.schema.as_str() {
                    SCHEMA_PACKAGE => deprecated = true,
                    SCHEMA_CHANNEL => {
                        dep_channels.insert(e.reference.name.clone());
                    }
                    SCHEMA_BUNDLE => {
                        dep_bundles.insert(e.reference.name.clone());
                    }
                    _ => {}
                }
            }
        }
        let mut chans: Vec<_> = cfg.channels.iter().filter(|c| c.package == pkg).collect();
        chans.sort_by(|a, b| a.name.cmp(&b.name));
        let mut channels = Vec::new();
        for c in chans {
            let mut nodes = Vec::new();
            for e in &c.entries {
                let v = versions.get(&(pkg, e.name.as_str())).ok_or_else(|| {
                    GraphError::MissingBundle {
                        package: pkg.into(),
                        channel: c.name.clone(),
                        bundle: e.name.clone(),
                    }
                })?;
                nodes.push((e, v.clone()));
            }
            nodes.sort_by(|a, b| {
                semver_range::compare(&b.1, &a.1).then_with(|| a.0.name.cmp(&b.0.name))
            });
            let keep = |v: &Version| {
                floor
                    .as_ref()
                    .is_none_or(|(_, f)| semver_range::compare(v, f) != std::cmp::Ordering::Less)
            };
            let version_of = |n: &str| nodes.iter().find(|(e, _)| e.name == n).map(|x| &x.1);
            let mut edges = Vec::new();
            let mut skipped: BTreeSet<String> = BTreeSet::new();
            let mut skipped_nodes = BTreeSet::new();
            for (e, _) in &nodes {
                let is_skipped = opts.v0_semantics && skipped.contains(&e.name);
                if is_skipped {
                    skipped_nodes.insert(e.name.clone());
                }
                for s in &e.skips {
                    if version_of(s).is_some_and(|v| !keep(v)) {
                        continue;
                    }
                    let ignored = opts.v0_semantics && skipped.contains(s);
                    edges.push(Edge {
                        from: s.clone(),
                        to: e.name.clone(),
                        kind: EdgeKind::Skip,
                        ignored,
                    });
                    skipped.insert(s.clone());
                }
                if !e.skip_range.is_empty() {
                    match Range::parse(&e.skip_range) {
                        Ok(r) => {
                            for (x, xv) in &nodes {
                                if r.contains(xv) && keep(xv) {
                                    edges.push(Edge {
                                        from: x.name.clone(),
                                        to: e.name.clone(),
                                        kind: EdgeKind::SkipRange(e.skip_range.clone()),
                                        ignored: is_skipped,
                                    });
                                }
                            }
                        }
                        Err(err) => tracing::warn!(
                            "ignoring invalid SkipRange for package/edge {:?}/{:?}: {err}",
                            pkg,
                            e.name
                        ),
                    }
                }
                if !e.replaces.is_empty() && version_of(&e.replaces).is_none_or(keep) {
                    edges.push(Edge {
                        from: e.replaces.clone(),
                        to: e.name.clone(),
                        kind: EdgeKind::Replace,
                        ignored: is_skipped,
                    });
                }
            }
            let head = crate::catalog::validate::channel_head(c.entries.iter())
                .ok()
                .map(|e| e.name.clone());
            channels.push(ChannelGraph {
                name: c.name.clone(),
                deprecated: dep_channels.contains(&c.name),
                nodes: nodes
                    .into_iter()
                    .map(|(e, v)| (e.name.clone(), v))
                    .collect(),
                head,
                skipped: skipped_nodes,
                edges,
            });
        }
        out.push(PackageGraph {
            name: pkg.into(),
            deprecated,
            deprecated_bundles: dep_bundles,
            default_channel: cfg
                .packages
                .iter()
                .find(|p| p.name == pkg && !p.default_channel.is_empty())
                .map(|p| p.default_channel.clone()),
            channels,
        });
    }
    Ok(out)
}
