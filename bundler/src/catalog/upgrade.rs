//! `olm catalog upgrade-path`: the updates OLM's resolver would apply, one at a time, from an
//! installed bundle to the channel head.
//!
//! OLM (operator-lifecycle-manager `resolver`, `cache/predicates.go`) offers, for installed CSV
//! `cur`, the channel entries with `replaces == cur`, `cur` in `skips`, or `cur`'s version in
//! `skipRange`. It orders a channel from its head along `replaces`, leaving out every entry
//! some entry skips (such entries are never offered), and prefers the candidate closest to the
//! head. Repeating that until the head is reached gives the path.

use std::collections::{HashMap, HashSet};

use semver::Version;

use super::model::{Bundle, Channel, Model};
use crate::grammar::semver_range;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UpgradeError {
    #[error("package {0:?} not found")]
    UnknownPackage(String),
    #[error("channel {channel:?} not found in package {package:?} (channels: {known})")]
    UnknownChannel {
        package: String,
        channel: String,
        known: String,
    },
    #[error("no bundle of package {package:?} is named or versioned {from:?}")]
    UnknownFrom { package: String, from: String },
    #[error(
        "{from} ({version}) has no update in channel {channel:?}: no entry replaces it, skips it, or has a skipRange covering {version}"
    )]
    Stuck {
        from: String,
        version: Version,
        channel: String,
    },
}

/// One update step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub from: String,
    pub to: String,
    pub to_version: Version,
    /// Why OLM offers it: `replaces`, `skips` or `skipRange <range>`.
    pub via: String,
}

/// The channel's entries in OLM's preference order: the head's replaces chain, without
/// entries some entry skips.
pub fn preference_order(channel: &Channel) -> Vec<&str> {
    let skipped: HashSet<&str> = channel
        .entries
        .iter()
        .flat_map(|e| e.skips.iter().map(String::as_str))
        .collect();
    let by_name: HashMap<&str, _> = channel
        .entries
        .iter()
        .map(|e| (e.name.as_str(), e))
        .collect();
    let mut order = Vec::new();
    let mut seen = HashSet::new();
    let mut cur = Some(channel.head());
    while let Some(e) = cur {
        if !seen.insert(e.name.as_str()) {
            break;
        }
        if !skipped.contains(e.name.as_str()) || order.is_empty() {
            order.push(e.name.as_str());
        }
        cur = e.replaces.as_deref().and_then(|r| by_name.get(r).copied());
    }
    order
}

/// Computes the path from `from` (a bundle name, or a version as in `0.1.0`/`v0.1.0`) to the
/// head of `channel` (default: the package's default channel).
pub fn upgrade_path(
    model: &Model,
    package: &str,
    from: &str,
    channel: Option<&str>,
) -> Result<(String, Vec<Step>), UpgradeError> {
    let pkg = model
        .package(package)
        .ok_or_else(|| UpgradeError::UnknownPackage(package.into()))?;
    let channel_name = channel.unwrap_or(&pkg.default_channel);
    let ch = pkg
        .channel(channel_name)
        .ok_or_else(|| UpgradeError::UnknownChannel {
            package: package.into(),
            channel: channel_name.into(),
            known: pkg.channels.keys().cloned().collect::<Vec<_>>().join(", "),
        })?;
    let start: &Bundle = match pkg.bundle(from) {
        Some(b) => b,
        None => {
            let v = semver_range::parse_version_tolerant(from).ok();
            v.and_then(|v| {
                pkg.bundles
                    .values()
                    .find(|b| semver_range::compare(&b.version, &v).is_eq())
            })
            .ok_or_else(|| UpgradeError::UnknownFrom {
                package: package.into(),
                from: from.into(),
            })?
        }
    };
    let order = preference_order(ch);
    let head = ch.head().name.clone();
    let mut steps = Vec::new();
    let mut cur_name = start.name.clone();
    let mut cur_version = start.version.clone();
    let mut visited = HashSet::new();
    while cur_name != head {
        if !visited.insert(cur_name.clone()) {
            break;
        }
        let mut best: Option<(usize, &str, String)> = None;
        for (rank, name) in order.iter().enumerate() {
            let Some(e) = ch.entry(name) else { continue };
            let via = if e.replaces.as_deref() == Some(cur_name.as_str()) {
                Some("replaces".to_string())
            } else if e.skips.contains(&cur_name) {
                Some("skips".to_string())
            } else {
                e.skip_range
                    .as_ref()
                    .filter(|r| r.contains(&cur_version))
                    .map(|r| format!("skipRange {r}"))
            };
            if let Some(via) = via
                && best.as_ref().is_none_or(|(r, _, _)| rank < *r)
            {
                best = Some((rank, name, via));
            }
        }
        let Some((_, next, via)) = best else {
            return Err(UpgradeError::Stuck {
                from: cur_name,
                version: cur_version,
                channel: channel_name.into(),
            });
        };
        let Some(nb) = pkg.bundle(next) else { break };
        steps.push(Step {
            from: cur_name.clone(),
            to: next.to_string(),
            to_version: nb.version.clone(),
            via,
        });
        cur_name = next.to_string();
        cur_version = nb.version.clone();
    }
    Ok((channel_name.to_string(), steps))
}

/// The updates from `from` in `channel` as text: a line per step, or that `from` is the head.
pub fn path_text(from: &str, channel: &str, steps: &[Step]) -> String {
    if steps.is_empty() {
        return format!("{from} is already the head of channel {channel:?}\n");
    }
    let mut s = format!("channel {channel:?}: {} update(s)\n", steps.len());
    for (i, st) in steps.iter().enumerate() {
        s.push_str(&format!(
            "{}. {} -> {} ({}) via {}\n",
            i + 1,
            st.from,
            st.to,
            st.to_version,
            st.via
        ));
    }
    s
}

/// The updates as JSON: `{"package","channel","steps":[{"from","to","version","via"}]}`.
pub fn path_json(package: &str, channel: &str, steps: &[Step]) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = steps
        .iter()
        .map(|s| {
            serde_json::json!({"from": s.from, "to": s.to, "version": s.to_version.to_string(), "via": s.via})
        })
        .collect();
    serde_json::json!({"package": package, "channel": channel, "steps": steps})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::load::load_bytes;
    use std::path::Path;

    fn model(channel_entries: &str, versions: &[&str]) -> Model {
        let mut s = String::from(
            r#"{"schema":"olm.package","name":"a","defaultChannel":"stable"}
"#,
        );
        s.push_str(&format!(
            r#"{{"schema":"olm.channel","package":"a","name":"stable","entries":{channel_entries}}}
"#
        ));
        for v in versions {
            s.push_str(&format!(
                r#"{{"schema":"olm.bundle","package":"a","name":"a.v{v}","image":"x/a:{v}","properties":[{{"type":"olm.package","value":{{"packageName":"a","version":"{v}"}}}}]}}
"#
            ));
        }
        let cfg = load_bytes(Path::new("c.json"), s.as_bytes()).unwrap();
        Model::from_declcfg(&cfg).unwrap().0
    }

    #[test]
    fn prefers_the_entry_closest_to_the_head() {
        // v4 replaces v3 and skipRange covers <0.4.0: from v1 OLM jumps straight to v4.
        let m = model(
            r#"[{"name":"a.v0.1.0"},{"name":"a.v0.2.0","replaces":"a.v0.1.0"},{"name":"a.v0.3.0","replaces":"a.v0.2.0"},{"name":"a.v0.4.0","replaces":"a.v0.3.0","skipRange":">=0.1.0 <0.4.0"}]"#,
            &["0.1.0", "0.2.0", "0.3.0", "0.4.0"],
        );
        let (ch, steps) = upgrade_path(&m, "a", "0.1.0", None).unwrap();
        assert_eq!(ch, "stable");
        assert_eq!(steps.len(), 1);
        assert_eq!(steps[0].to, "a.v0.4.0");
        assert!(steps[0].via.starts_with("skipRange"));
    }

    #[test]
    fn skipped_entries_are_never_offered() {
        // v2 replaces v1 but v3 skips v2: from v1 OLM never offers v2.
        let m = model(
            r#"[{"name":"a.v0.1.0"},{"name":"a.v0.2.0","replaces":"a.v0.1.0"},{"name":"a.v0.3.0","replaces":"a.v0.1.0","skips":["a.v0.2.0"]},{"name":"a.v0.4.0","replaces":"a.v0.3.0"}]"#,
            &["0.1.0", "0.2.0", "0.3.0", "0.4.0"],
        );
        let (_, steps) = upgrade_path(&m, "a", "a.v0.2.0", None).unwrap();
        assert_eq!(
            steps.iter().map(|s| s.to.as_str()).collect::<Vec<_>>(),
            vec!["a.v0.3.0", "a.v0.4.0"]
        );
        let (_, steps) = upgrade_path(&m, "a", "v0.1.0", None).unwrap();
        assert_eq!(
            steps.iter().map(|s| s.to.as_str()).collect::<Vec<_>>(),
            vec!["a.v0.3.0", "a.v0.4.0"]
        );
        let (_, steps) = upgrade_path(&m, "a", "a.v0.4.0", None).unwrap();
        assert!(steps.is_empty());
        assert!(upgrade_path(&m, "a", "9.9.9", None).is_err());
        assert!(upgrade_path(&m, "a", "0.1.0", Some("nope")).is_err());
    }
}
