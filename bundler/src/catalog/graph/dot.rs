//! Graphviz DOT.

use std::fmt::Write as _;

use super::model::{EdgeKind, PackageGraph};

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
