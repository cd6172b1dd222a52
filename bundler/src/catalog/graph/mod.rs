//! `olm catalog graph`: the upgrade graph of each channel as Mermaid (the text `opm alpha
//! render-graph` writes), Graphviz DOT, or an SVG drawn here.
//!
//! Edges point from the older bundle to the one that upgrades it: `replace`, `skip`, and
//! `skipRange(<range>)` for every channel entry whose version the range covers. Heads and
//! deprecated packages/channels/bundles are marked.

mod dot;
mod html;
mod mermaid;
mod model;
mod summary;
mod svg;

pub use dot::dot;
pub use html::html;
pub use mermaid::mermaid;
pub use model::{ChannelGraph, Edge, EdgeKind, GraphError, Options, PackageGraph, build};
pub use summary::{ChannelSummary, summarize};
pub use svg::{size as svg_size, svg, xml};

use super::declcfg::DeclarativeConfig;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Mermaid,
    Dot,
    Svg,
    /// One self-contained page with every package's SVG and a package/channel picker.
    Html,
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
        Format::Html => html(&g, opts.title.as_deref().unwrap_or("catalog")),
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
