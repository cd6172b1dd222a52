//! A channel's upgrade graph as oc-mirror's catalog filter builds it (`newChannel`), and its
//! version-range selection (`filterByVersionRange`).
//!
//! Names that an entry replaces or skips but that are not entries of the channel are nodes
//! too (the filter follows `replaces` into them), so a range can keep a bundle the channel
//! only names.

use std::collections::{BTreeSet, HashMap, HashSet};

use semver::Version;

use crate::catalog::declcfg::Channel;
use crate::grammar::mm_semver::Bounds;

/// The nodes and edges of one channel.
#[derive(Debug)]
pub(super) struct Graph<'a> {
    names: Vec<&'a str>,
    replaces: Vec<Option<usize>>,
    skips: Vec<Vec<usize>>,
    head: usize,
}

impl<'a> Graph<'a> {
    /// Builds the graph and checks it as the filter does: one head (an entry nothing replaces
    /// or skips), no cycle, no duplicate or self-referencing entry. The error is the filter's
    /// messages, one a line.
    pub(super) fn new(ch: &'a Channel) -> Result<Graph<'a>, String> {
        if ch.entries.is_empty() {
            return Err("channel has no entries".into());
        }
        let mut g = Graph {
            names: Vec::new(),
            replaces: Vec::new(),
            skips: Vec::new(),
            head: 0,
        };
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut node = |g: &mut Graph<'a>, name: &'a str| -> usize {
            *index.entry(name).or_insert_with(|| {
                g.names.push(name);
                g.replaces.push(None);
                g.skips.push(Vec::new());
                g.names.len() - 1
            })
        };
        let mut errs = Vec::new();
        let mut seen = HashSet::new();
        let mut incoming: HashMap<usize, HashSet<usize>> = HashMap::new();
        for e in &ch.entries {
            let me = node(&mut g, &e.name);
            if !seen.insert(e.name.as_str()) {
                errs.push(format!("duplicate channel entry {:?}", e.name));
                continue;
            }
            if !e.replaces.is_empty() {
                if e.replaces == e.name {
                    errs.push(format!(
                        "invalid channel entry {:?}: replaces itself",
                        e.name
                    ));
                }
                let r = node(&mut g, &e.replaces);
                incoming.entry(r).or_default().insert(me);
                g.replaces[me] = Some(r);
            }
            let mut skips = Vec::new();
            for s in &e.skips {
                if *s == e.name {
                    errs.push(format!("invalid channel entry {:?}: skips itself", e.name));
                }
                let t = node(&mut g, s);
                incoming.entry(t).or_default().insert(me);
                if !skips.contains(&t) {
                    skips.push(t);
                }
            }
            g.skips[me] = skips;
        }
        let heads: Vec<usize> = ch
            .entries
            .iter()
            .map(|e| node(&mut g, &e.name))
            .filter(|i| incoming.get(i).is_none_or(HashSet::is_empty))
            .collect();
        match heads.len() {
            0 => errs.push("no channel heads found".into()),
            1 => {}
            _ => {
                let mut names: Vec<&str> = heads.iter().map(|&i| g.names[i]).collect();
                names.sort();
                errs.push(format!(
                    "multiple channel heads found: [{}]",
                    names.join(" ")
                ));
            }
        }
        if !errs.is_empty() {
            return Err(errs.join("\n"));
        }
        g.head = heads[0];
        // Walk down from the head, removing each edge as it is followed: an edge left means
        // a cycle the walk never entered.
        let mut queue = vec![g.head];
        while let Some(cur) = queue.pop() {
            for next in g.replaces[cur].iter().chain(&g.skips[cur]) {
                if let Some(from) = incoming.get_mut(next) {
                    from.remove(&cur);
                    if from.is_empty() {
                        incoming.remove(next);
                        queue.push(*next);
                    }
                }
            }
        }
        if !incoming.is_empty() {
            return Err("detected a cycle in the upgrade graph of the channel".into());
        }
        Ok(g)
    }

    /// The head's name.
    pub(super) fn head(&self) -> &'a str {
        self.names[self.head]
    }

    /// The bundles a range keeps, as the filter chooses them: along the head's `replaces`
    /// chain, counting for each node the in-range bundles at or below it (itself, its skips,
    /// and the chain below, each counted once, from the bottom up), the new head is the
    /// lowest node that still counts them all and the tail the first node that counts none;
    /// every chain node from the new head down to the tail (excluded) is kept, in range or
    /// not (so the channel stays connected), with those of their skips that are in range.
    /// `version` gives a name's bundle version (`None`: no such bundle).
    pub(super) fn in_range<'v>(
        &self,
        range: &Bounds,
        version: impl Fn(&str) -> Option<&'v Version>,
    ) -> BTreeSet<String> {
        let in_range = |i: usize| version(self.names[i]).is_some_and(|v| range.contains(v));
        let mut chain = vec![self.head];
        while let Some(next) = self.replaces[*chain.last().expect("never empty")] {
            chain.push(next);
        }
        let mut seen = HashSet::new();
        let mut counts = vec![0usize; chain.len()];
        let mut below = 0;
        for (k, &node) in chain.iter().enumerate().rev() {
            let mut count = below;
            for n in std::iter::once(node).chain(self.skips[node].iter().copied()) {
                if in_range(n) && seen.insert(n) {
                    count += 1;
                }
            }
            counts[k] = count;
            below = count;
        }
        let total = counts[0];
        let top = counts.iter().rposition(|&c| c == total).unwrap_or(0);
        let bottom = counts.iter().position(|&c| c == 0).unwrap_or(chain.len());
        let mut keep = BTreeSet::new();
        for &node in chain.iter().take(bottom).skip(top) {
            keep.insert(self.names[node].to_string());
            for &s in &self.skips[node] {
                if in_range(s) {
                    keep.insert(self.names[s].to_string());
                }
            }
        }
        keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::declcfg::ChannelEntry;
    use crate::grammar::mm_semver::LooseVersion;

    fn channel(entries: &[(&str, &str, &[&str])]) -> Channel {
        Channel {
            name: "c".into(),
            package: "p".into(),
            entries: entries
                .iter()
                .map(|(n, r, s)| ChannelEntry {
                    name: n.to_string(),
                    replaces: r.to_string(),
                    skips: s.iter().map(|s| s.to_string()).collect(),
                    skip_range: String::new(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn graph_errors_are_the_filters() {
        let c = channel(&[("a", "", &[]), ("b", "", &[])]);
        assert_eq!(
            Graph::new(&c).unwrap_err(),
            "multiple channel heads found: [a b]"
        );
        let c = channel(&[("a", "b", &[]), ("b", "a", &[])]);
        assert_eq!(Graph::new(&c).unwrap_err(), "no channel heads found");
        let c = channel(&[("h", "a", &[]), ("a", "b", &[]), ("b", "a", &[])]);
        assert_eq!(
            Graph::new(&c).unwrap_err(),
            "detected a cycle in the upgrade graph of the channel"
        );
        let c = channel(&[("a", "a", &[])]);
        assert_eq!(
            Graph::new(&c).unwrap_err(),
            "invalid channel entry \"a\": replaces itself\nno channel heads found"
        );
        let c = channel(&[("b", "a", &["x"]), ("a", "", &[])]);
        assert_eq!(Graph::new(&c).unwrap().head(), "b");
    }

    #[test]
    fn a_range_keeps_the_chain_that_connects_it() {
        // v5 -> v4 -> v3 -> v2 -> v1 by replaces; v4 also skips v3b.
        let c = channel(&[
            ("v1", "", &[]),
            ("v2", "v1", &[]),
            ("v3", "v2", &[]),
            ("v3b", "", &[]),
            ("v4", "v3", &["v3b"]),
            ("v5", "v4", &[]),
        ]);
        let versions: HashMap<&str, Version> = [
            ("v1", "1.0.0"),
            ("v2", "2.0.0"),
            ("v3", "3.0.0"),
            ("v3b", "3.5.0"),
            ("v4", "4.0.0"),
            ("v5", "5.0.0"),
        ]
        .into_iter()
        .map(|(n, v)| (n, Version::parse(v).unwrap()))
        .collect();
        let g = Graph::new(&c).unwrap();
        let keep = |min: Option<&str>, max: Option<&str>| -> Vec<String> {
            let p = |s: Option<&str>| s.map(|s| LooseVersion::parse(s).unwrap());
            let r = Bounds::new(p(min), p(max)).unwrap();
            g.in_range(&r, |n| versions.get(n)).into_iter().collect()
        };
        assert_eq!(keep(Some("2.0.0"), Some("3.0.0")), ["v2", "v3"]);
        // 3.5.0 is reached only through v4's skips: v4 is kept to hold it.
        assert_eq!(keep(Some("3.5.0"), Some("3.5.0")), ["v3b", "v4"]);
        assert_eq!(keep(Some("4.0.0"), None), ["v4", "v5"]);
        assert!(keep(Some("9.0.0"), None).is_empty());
    }
}
