//! `olm catalog graph`: the upgrade graph of each channel as Mermaid (the text `opm alpha
//! render-graph` writes), Graphviz DOT, or an SVG drawn here.
//!
//! Edges point from the older bundle to the one that upgrades it: `replace`, `skip`, and
//! `skipRange(<range>)` for every channel entry whose version the range covers. Heads and
//! deprecated packages/channels/bundles are marked.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::fmt::Write as _;

use semver::Version;

use super::declcfg::{DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE};
use super::property::TYPE_PACKAGE;
use crate::grammar::semver_range::{self, Range};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Mermaid,
    Dot,
    Svg,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Only this package.
    pub package: Option<String>,
    /// Only edges whose source version is at least this bundle's (opm `--minimum-edge`).
    pub minimum_edge: Option<String>,
    /// Mark what OLM v0 ignores: entries a newer entry skipped, and edges into them.
    pub v0_semantics: bool,
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
            let head = super::validate::channel_head(c.entries.iter())
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
            channels,
        });
    }
    Ok(out)
}

/// Mermaid, line for line what `opm alpha render-graph` writes.
pub fn mermaid(graphs: &[PackageGraph]) -> String {
    let mut s = String::new();
    s.push_str("graph LR\n");
    s.push_str("  classDef deprecated fill:#E8960F\n");
    s.push_str("  classDef skipped stroke:#FF0000,stroke-width:4px\n");
    s.push_str("  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px\n");
    let mut link = 0usize;
    let mut red_links = Vec::new();
    let mut classes: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut styles = Vec::new();
    for p in graphs {
        let _ = writeln!(s, "  %% package {:?}", p.name);
        let _ = writeln!(s, "  subgraph {:?}", p.name);
        if p.deprecated {
            styles.push(format!("style {} fill:#989695", p.name));
        }
        for c in &p.channels {
            let cid = format!("{}-{}", p.name, c.name);
            let _ = writeln!(s, "    %% channel {:?}", c.name);
            let _ = writeln!(s, "    subgraph {cid}[{:?}]", c.name);
            if c.deprecated {
                styles.push(format!("style {cid} fill:#DCD0FF"));
            }
            let node = |n: &str| format!("{cid}-{n}[{n:?}]");
            for (name, _) in &c.nodes {
                let id = format!("{cid}-{name}");
                let dep = p.deprecated_bundles.contains(name);
                let skp = c.skipped.contains(name);
                match (dep, skp) {
                    (true, true) => classes.entry("deprecatedskipped").or_default().insert(id),
                    (true, false) => classes.entry("deprecated").or_default().insert(id),
                    (false, true) => classes.entry("skipped").or_default().insert(id),
                    _ => false,
                };
                let _ = writeln!(s, "      {}", node(name));
                for e in c.edges.iter().filter(|e| &e.to == name) {
                    let label = match &e.kind {
                        EdgeKind::Replace => "-- replace -->".to_string(),
                        EdgeKind::Skip => "-- skip -->".to_string(),
                        EdgeKind::SkipRange(r) => format!("-- \"skipRange({r})\" -->"),
                    };
                    let _ = writeln!(s, "      {}{label} {}", node(&e.from), node(&e.to));
                    if e.ignored {
                        red_links.push(link.to_string());
                    }
                    link += 1;
                }
            }
            s.push_str("    end\n");
        }
        s.push_str("  end\n");
    }
    for st in styles {
        s.push_str(&st);
        s.push('\n');
    }
    for (class, ids) in classes {
        let ids: Vec<String> = ids.into_iter().collect();
        let _ = writeln!(s, "class {} {class}", ids.join(","));
    }
    if !red_links.is_empty() {
        let _ = writeln!(
            s,
            "linkStyle {} stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;",
            red_links.join(",")
        );
    }
    s
}

fn dot_id(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Graphviz DOT: one cluster per channel, heads bold, deprecated entries orange.
pub fn dot(graphs: &[PackageGraph]) -> String {
    let mut s = String::from(
        "digraph upgrades {\n  rankdir=LR;\n  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n",
    );
    for p in graphs {
        let _ = writeln!(
            s,
            "  subgraph {} {{",
            dot_id(&format!("cluster_{}", p.name))
        );
        let _ = writeln!(
            s,
            "    label={};",
            dot_id(&format!(
                "{}{}",
                p.name,
                if p.deprecated { " (deprecated)" } else { "" }
            ))
        );
        for c in &p.channels {
            let cid = format!("{}-{}", p.name, c.name);
            let _ = writeln!(s, "    subgraph {} {{", dot_id(&format!("cluster_{cid}")));
            let _ = writeln!(
                s,
                "      label={};",
                dot_id(&format!(
                    "{}{}",
                    c.name,
                    if c.deprecated { " (deprecated)" } else { "" }
                ))
            );
            if c.deprecated {
                s.push_str("      style=filled; fillcolor=\"#DCD0FF\";\n");
            }
            for (n, _) in &c.nodes {
                let mut attrs = vec![format!("label={}", dot_id(n))];
                if c.head.as_deref() == Some(n) {
                    attrs.push("penwidth=3".into());
                    attrs.push("xlabel=\"head\"".into());
                }
                if p.deprecated_bundles.contains(n) {
                    attrs.push("style=\"rounded,filled\"".into());
                    attrs.push("fillcolor=\"#E8960F\"".into());
                }
                if c.skipped.contains(n) {
                    attrs.push("color=\"#FF0000\"".into());
                }
                let _ = writeln!(
                    s,
                    "      {} [{}];",
                    dot_id(&format!("{cid}-{n}")),
                    attrs.join(", ")
                );
            }
            for e in &c.edges {
                let (label, style) = match &e.kind {
                    EdgeKind::Replace => ("replace".to_string(), "solid"),
                    EdgeKind::Skip => ("skip".to_string(), "dashed"),
                    EdgeKind::SkipRange(r) => (format!("skipRange({r})"), "dotted"),
                };
                let color = if e.ignored { ", color=\"#FF0000\"" } else { "" };
                let _ = writeln!(
                    s,
                    "      {} -> {} [label={}, style={style}{color}];",
                    dot_id(&format!("{cid}-{}", e.from)),
                    dot_id(&format!("{cid}-{}", e.to)),
                    dot_id(&label)
                );
            }
            s.push_str("    }\n");
        }
        s.push_str("  }\n");
    }
    s.push_str("}\n");
    s
}

fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// An SVG drawn without external tools. Each channel is a column, entries one per row from
/// newest (top) to oldest, so a long channel stays readable: `replace` edges are solid arcs
/// on the left, `skip` edges dashed arcs on the right, and each skipRange is a bracket beside
/// the entries it covers. Heads have a thick border; deprecated entries are orange; entries
/// that v0 semantics ignore are outlined red.
pub fn svg(graphs: &[PackageGraph]) -> String {
    const ROW: f64 = 28.0;
    const BOX_W: f64 = 240.0;
    const BOX_H: f64 = 20.0;
    const COL_W: f64 = 420.0;
    const TOP: f64 = 70.0;
    let columns: usize = graphs.iter().map(|p| p.channels.len().max(1)).sum();
    let rows: usize = graphs
        .iter()
        .flat_map(|p| p.channels.iter().map(|c| c.nodes.len()))
        .max()
        .unwrap_or(0);
    let width = (columns.max(1) as f64) * COL_W + 40.0;
    let height = TOP + rows as f64 * ROW + 60.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12">"#
    );
    s.push_str(r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#333"/></marker></defs>"##);
    s.push('\n');
    let _ = writeln!(s, r##"<rect width="100%" height="100%" fill="#ffffff"/>"##);
    let mut col = 0usize;
    for p in graphs {
        let px = 20.0 + col as f64 * COL_W;
        let _ = writeln!(
            s,
            r##"<text x="{px}" y="22" font-size="16" font-weight="bold"{}>{}{}</text>"##,
            if p.deprecated {
                r##" fill="#989695""##
            } else {
                ""
            },
            xml(&p.name),
            if p.deprecated { " (deprecated)" } else { "" }
        );
        for c in &p.channels {
            let x0 = 20.0 + col as f64 * COL_W;
            let bx = x0 + 80.0;
            let _ = writeln!(
                s,
                r##"<text x="{bx}" y="48" font-size="14"{}>{}{}</text>"##,
                if c.deprecated {
                    r##" fill="#7a5cc4""##
                } else {
                    ""
                },
                xml(&c.name),
                if c.deprecated { " (deprecated)" } else { "" }
            );
            let row_of: BTreeMap<&str, usize> = c
                .nodes
                .iter()
                .enumerate()
                .map(|(i, (n, _))| (n.as_str(), i))
                .collect();
            let cy = |i: usize| TOP + i as f64 * ROW + BOX_H / 2.0;
            let mut range_offset = 0.0;
            for e in &c.edges {
                let (Some(&a), Some(&b)) = (row_of.get(e.from.as_str()), row_of.get(e.to.as_str()))
                else {
                    continue;
                };
                let bend = 12.0 + (a as f64 - b as f64).abs().sqrt() * 10.0;
                let red = if e.ignored { "#FF0000" } else { "" };
                match &e.kind {
                    EdgeKind::Replace => {
                        let x = bx;
                        let _ = writeln!(
                            s,
                            r##"<path d="M {x} {} C {} {} {} {} {x} {}" fill="none" stroke="{}" stroke-width="1.5" marker-end="url(#arrow)"/>"##,
                            cy(a),
                            x - bend,
                            cy(a),
                            x - bend,
                            cy(b),
                            cy(b),
                            if red.is_empty() { "#333" } else { red }
                        );
                    }
                    EdgeKind::Skip => {
                        let x = bx + BOX_W;
                        let _ = writeln!(
                            s,
                            r##"<path d="M {x} {} C {} {} {} {} {x} {}" fill="none" stroke="{}" stroke-dasharray="4 3" marker-end="url(#arrow)"/>"##,
                            cy(a),
                            x + bend,
                            cy(a),
                            x + bend,
                            cy(b),
                            cy(b),
                            if red.is_empty() { "#888" } else { red }
                        );
                    }
                    EdgeKind::SkipRange(_) => {}
                }
            }
            // skipRange brackets: one per entry with a range, spanning the covered rows.
            let mut by_target: BTreeMap<&str, (String, Vec<usize>)> = BTreeMap::new();
            for e in &c.edges {
                if let EdgeKind::SkipRange(r) = &e.kind
                    && let Some(&a) = row_of.get(e.from.as_str())
                {
                    by_target
                        .entry(e.to.as_str())
                        .or_insert_with(|| (r.clone(), Vec::new()))
                        .1
                        .push(a);
                }
            }
            for (target, (range, covered)) in by_target {
                let (Some(lo), Some(hi), Some(&t)) = (
                    covered.iter().min(),
                    covered.iter().max(),
                    row_of.get(target),
                ) else {
                    continue;
                };
                let x = bx + BOX_W + 60.0 + range_offset;
                range_offset = (range_offset + 8.0) % 64.0;
                let _ = writeln!(
                    s,
                    r##"<g stroke="#2f6fb5" fill="none"><title>{} skipRange {}</title><path d="M {} {} H {x} V {} H {}"/><path d="M {x} {} H {}" stroke-dasharray="2 2" marker-end="url(#arrow)"/></g>"##,
                    xml(target),
                    xml(&range),
                    x - 4.0,
                    cy(*lo) - 6.0,
                    cy(*hi) + 6.0,
                    x - 4.0,
                    cy(t),
                    bx + BOX_W + 2.0
                );
            }
            for (i, (n, v)) in c.nodes.iter().enumerate() {
                let y = TOP + i as f64 * ROW;
                let head = c.head.as_deref() == Some(n.as_str());
                let fill = if p.deprecated_bundles.contains(n) {
                    "#E8960F"
                } else if head {
                    "#dff0d8"
                } else {
                    "#f4f6f8"
                };
                let stroke = if c.skipped.contains(n) {
                    "#FF0000"
                } else {
                    "#333"
                };
                let _ = writeln!(
                    s,
                    r##"<g><title>{} ({v}){}</title><rect x="{bx}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="{fill}" stroke="{stroke}" stroke-width="{}"/><text x="{}" y="{}">{}</text></g>"##,
                    xml(n),
                    if head { ", channel head" } else { "" },
                    if head { 3 } else { 1 },
                    bx + 6.0,
                    y + 14.0,
                    xml(n)
                );
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" text-anchor="end" fill="#666">{v}</text>"##,
                    bx - 30.0,
                    y + 14.0
                );
            }
            col += 1;
        }
        if p.channels.is_empty() {
            col += 1;
        }
    }
    let _ = writeln!(
        s,
        r##"<text x="20" y="{}" fill="#666">solid: replace  dashed: skip  blue bracket: skipRange  thick border: head  orange: deprecated  red: ignored by OLM v0</text>"##,
        height - 20.0
    );
    s.push_str("</svg>\n");
    s
}

/// Renders in the chosen format.
pub fn render(
    cfg: &DeclarativeConfig,
    format: Format,
    opts: &Options,
) -> Result<String, GraphError> {
    let g = build(cfg, opts)?;
    Ok(match format {
        Format::Mermaid => mermaid(&g),
        Format::Dot => dot(&g),
        Format::Svg => svg(&g),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::load::load_bytes;
    use std::path::Path;

    /// operator-registry `write_test.go` TestWriteMermaidChannels/SuccessNoFilters.
    const FIXTURE: &str = r#"{"schema":"olm.package","name":"anakin","defaultChannel":"dark"}
{"schema":"olm.channel","package":"anakin","name":"dark","entries":[{"name":"anakin.v0.0.1"},{"name":"anakin.v0.1.0","replaces":"anakin.v0.0.1"},{"name":"anakin.v0.1.1","replaces":"anakin.v0.0.1","skips":["anakin.v0.1.0"]}]}
{"schema":"olm.channel","package":"anakin","name":"light","entries":[{"name":"anakin.v0.0.1"},{"name":"anakin.v0.1.0","replaces":"anakin.v0.0.1"}]}
{"schema":"olm.bundle","package":"anakin","name":"anakin.v0.0.1","image":"x/a:1","properties":[{"type":"olm.package","value":{"packageName":"anakin","version":"0.0.1"}}]}
{"schema":"olm.bundle","package":"anakin","name":"anakin.v0.1.0","image":"x/a:2","properties":[{"type":"olm.package","value":{"packageName":"anakin","version":"0.1.0"}}]}
{"schema":"olm.bundle","package":"anakin","name":"anakin.v0.1.1","image":"x/a:3","properties":[{"type":"olm.package","value":{"packageName":"anakin","version":"0.1.1"}}]}
{"schema":"olm.package","name":"boba-fett","defaultChannel":"mando"}
{"schema":"olm.channel","package":"boba-fett","name":"mando","entries":[{"name":"boba-fett.v1.0.0"},{"name":"boba-fett.v2.0.0","replaces":"boba-fett.v1.0.0"}]}
{"schema":"olm.bundle","package":"boba-fett","name":"boba-fett.v1.0.0","image":"x/b:1","properties":[{"type":"olm.package","value":{"packageName":"boba-fett","version":"1.0.0"}}]}
{"schema":"olm.bundle","package":"boba-fett","name":"boba-fett.v2.0.0","image":"x/b:2","properties":[{"type":"olm.package","value":{"packageName":"boba-fett","version":"2.0.0"}}]}
{"schema":"olm.deprecations","package":"anakin","entries":[{"reference":{"schema":"olm.bundle","name":"anakin.v0.0.1"},"message":"m"},{"reference":{"schema":"olm.channel","name":"light"},"message":"m"},{"reference":{"schema":"olm.package"},"message":"m"}]}
"#;

    const GOLDEN: &str = r#"graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "anakin"
  subgraph "anakin"
    %% channel "dark"
    subgraph anakin-dark["dark"]
      anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]-- skip --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]
      anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-dark-anakin.v0.0.1["anakin.v0.0.1"]
    end
    %% channel "light"
    subgraph anakin-light["light"]
      anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-light-anakin.v0.0.1["anakin.v0.0.1"]-- replace --> anakin-light-anakin.v0.1.0["anakin.v0.1.0"]
      anakin-light-anakin.v0.0.1["anakin.v0.0.1"]
    end
  end
  %% package "boba-fett"
  subgraph "boba-fett"
    %% channel "mando"
    subgraph boba-fett-mando["mando"]
      boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]-- replace --> boba-fett-mando-boba-fett.v2.0.0["boba-fett.v2.0.0"]
      boba-fett-mando-boba-fett.v1.0.0["boba-fett.v1.0.0"]
    end
  end
style anakin fill:#989695
style anakin-light fill:#DCD0FF
class anakin-dark-anakin.v0.0.1,anakin-light-anakin.v0.0.1 deprecated
class anakin-dark-anakin.v0.1.0 skipped
linkStyle 2 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;
"#;

    #[test]
    fn mermaid_matches_opm_golden() {
        let cfg = load_bytes(Path::new("c.json"), FIXTURE.as_bytes()).unwrap();
        let out = render(
            &cfg,
            Format::Mermaid,
            &Options {
                v0_semantics: true,
                ..Default::default()
            },
        )
        .unwrap();
        pretty_assertions::assert_eq!(out, GOLDEN);
    }

    #[test]
    fn skip_range_edges_and_other_formats() {
        let cat = FIXTURE.replace(
            r#"{"name":"anakin.v0.1.1","replaces":"anakin.v0.0.1","skips":["anakin.v0.1.0"]}"#,
            r#"{"name":"anakin.v0.1.1","replaces":"anakin.v0.0.1","skips":["anakin.v0.1.0"],"skipRange":">=0.1.0 <0.1.1"}"#,
        );
        let cfg = load_bytes(Path::new("c.json"), cat.as_bytes()).unwrap();
        let opts = Options {
            package: Some("anakin".into()),
            ..Default::default()
        };
        let m = render(&cfg, Format::Mermaid, &opts).unwrap();
        assert!(m.contains(r#"anakin-dark-anakin.v0.1.0["anakin.v0.1.0"]-- "skipRange(>=0.1.0 <0.1.1)" --> anakin-dark-anakin.v0.1.1["anakin.v0.1.1"]"#), "{m}");
        assert!(!m.contains("boba"));
        assert!(!m.contains("linkStyle"), "no v0 marks without v0 semantics");
        let d = render(&cfg, Format::Dot, &opts).unwrap();
        assert!(d.starts_with("digraph") && d.contains("label=\"replace\""));
        let svg = render(&cfg, Format::Svg, &opts).unwrap();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert!(svg.contains("channel head"));
        let e = render(
            &cfg,
            Format::Mermaid,
            &Options {
                package: Some("nope".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "package \"nope\" not found in the catalog");
    }

    #[test]
    fn minimum_edge_filters_older_edges() {
        let cfg = load_bytes(Path::new("c.json"), FIXTURE.as_bytes()).unwrap();
        let opts = Options {
            minimum_edge: Some("anakin.v0.1.0".into()),
            ..Default::default()
        };
        let m = render(&cfg, Format::Mermaid, &opts).unwrap();
        assert!(!m.contains("-- replace -->"), "{m}");
        assert!(m.contains("-- skip -->"));
        let e = render(
            &cfg,
            Format::Mermaid,
            &Options {
                minimum_edge: Some("zz".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "unknown minimum edge name: \"zz\"");
    }
}
