//! One line per channel (head, bundles, edges): what `olm release` prints instead of a graph.

use std::fmt;

use super::model::PackageGraph;

/// The shape of one channel's upgrade graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelSummary {
    pub package: String,
    pub channel: String,
    /// None when the channel has no single head (an invalid catalog).
    pub head: Option<String>,
    pub bundles: usize,
    pub edges: usize,
    pub default: bool,
    pub deprecated: bool,
}

impl fmt::Display for ChannelSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{}/{}: head {}, {} bundle{}, {} edge{}",
            self.package,
            self.channel,
            self.head.as_deref().unwrap_or("(none)"),
            self.bundles,
            plural(self.bundles),
            self.edges,
            plural(self.edges)
        )?;
        if self.default {
            f.write_str(" (default)")?;
        }
        if self.deprecated {
            f.write_str(" (deprecated)")?;
        }
        Ok(())
    }
}

/// Every channel of every package, in the graphs' order.
pub fn summarize(graphs: &[PackageGraph]) -> Vec<ChannelSummary> {
    graphs
        .iter()
        .flat_map(|p| {
            p.channels.iter().map(move |c| ChannelSummary {
                package: p.name.clone(),
                channel: c.name.clone(),
                head: c.head.clone(),
                bundles: c.nodes.len(),
                edges: c.edges.len(),
                default: p.default_channel.as_deref() == Some(c.name.as_str()),
                deprecated: p.deprecated || c.deprecated,
            })
        })
        .collect()
}
