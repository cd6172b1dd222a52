//! Mermaid, the text `opm alpha render-graph` writes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::model::{EdgeKind, PackageGraph};

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
