//! `WATCH_NAMESPACE`: which namespaces the operator reconciles.
//!
//! Same convention as operator-sdk Go operators, so OLM can drive it: empty means all
//! namespaces (AllNamespaces install mode), one name means that namespace (OwnNamespace /
//! SingleNamespace), and a comma-separated list means exactly those (MultiNamespace, where OLM
//! sets it from the `olm.targetNamespaces` annotation).

use std::collections::BTreeSet;

/// The namespaces to watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WatchNamespaces {
    All,
    /// One or more namespaces, sorted and without duplicates.
    Some(BTreeSet<String>),
}

/// A WATCH_NAMESPACE value that is not a namespace list.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "WATCH_NAMESPACE: {name:?} is not a valid namespace name (lowercase RFC 1123 label, at most 63 characters)"
)]
pub struct InvalidNamespace {
    pub name: String,
}

/// Whether `s` is an RFC 1123 DNS label, as namespace names must be.
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

impl WatchNamespaces {
    /// Parses a WATCH_NAMESPACE value. Whitespace around names and empty list items (a trailing
    /// comma) are ignored; a value with no names at all means all namespaces.
    pub fn parse(value: &str) -> Result<Self, InvalidNamespace> {
        let mut set = BTreeSet::new();
        for raw in value.split(',') {
            let name = raw.trim();
            if name.is_empty() {
                continue;
            }
            if !is_dns_label(name) {
                return Err(InvalidNamespace {
                    name: name.to_string(),
                });
            }
            set.insert(name.to_string());
        }
        Ok(if set.is_empty() {
            Self::All
        } else {
            Self::Some(set)
        })
    }

    /// The namespaces, or `None` for all.
    pub fn names(&self) -> Option<&BTreeSet<String>> {
        match self {
            Self::All => None,
            Self::Some(s) => Some(s),
        }
    }

    /// Whether objects in `ns` are in scope.
    pub fn contains(&self, ns: &str) -> bool {
        match self {
            Self::All => true,
            Self::Some(s) => s.contains(ns),
        }
    }
}

impl std::fmt::Display for WatchNamespaces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::All => f.write_str("all namespaces"),
            Self::Some(s) => f.write_str(&s.iter().cloned().collect::<Vec<_>>().join(",")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(names: &[&str]) -> WatchNamespaces {
        WatchNamespaces::Some(names.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn empty_means_all() {
        assert_eq!(WatchNamespaces::parse("").unwrap(), WatchNamespaces::All);
        assert_eq!(WatchNamespaces::parse(" , ").unwrap(), WatchNamespaces::All);
    }

    #[test]
    fn one_and_many() {
        assert_eq!(WatchNamespaces::parse("team-a").unwrap(), some(&["team-a"]));
        assert_eq!(
            WatchNamespaces::parse("b, a,b,").unwrap(),
            some(&["a", "b"])
        );
        assert!(WatchNamespaces::parse("a,b").unwrap().contains("b"));
        assert!(!WatchNamespaces::parse("a,b").unwrap().contains("c"));
        assert!(WatchNamespaces::All.contains("anything"));
    }

    #[test]
    fn invalid_names_are_rejected_with_the_name() {
        let err = WatchNamespaces::parse("ok,Bad_Name").unwrap_err();
        assert_eq!(err.name, "Bad_Name");
        assert!(err.to_string().contains("WATCH_NAMESPACE"));
        assert!(WatchNamespaces::parse(&"a".repeat(64)).is_err());
        assert!(WatchNamespaces::parse("-a").is_err());
    }
}
