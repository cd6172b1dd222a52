//! Versions and version bounds the way oc-mirror reads an ImageSetConfiguration's
//! `minVersion`/`maxVersion`: `github.com/Masterminds/semver/v3` (v3.5), not blang.
//!
//! oc-mirror checks each bound with Masterminds' lenient `NewVersion` (`v` prefix, one to three
//! numeric parts, prerelease, build metadata) and hands the catalog filter the range
//! `>=MIN`, ` <=MAX` or `>=MIN <=MAX`, which Masterminds' `NewConstraint` reads. Its rules
//! differ from blang's ([`super::semver_range`]) in ways a filter's result shows:
//! - a prerelease version matches only when some bound of the range has a prerelease itself
//!   (`>=1.0.0 <=2.0.0` never keeps `1.5.0-rc.1`, `>=1.0.0-0 <=2.0.0` does);
//! - a short upper bound covers its whole minor or major: `<=1.2` is `<1.3.0`, `<=1` is
//!   `<2.0.0`; a short lower bound is padded with zeros (`>=1.2` is `>=1.2.0`);
//! - build metadata never counts.

use std::cmp::Ordering;

use semver::{BuildMetadata, Prerelease, Version};

/// A version Masterminds' `NewVersion` refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct MmError(pub String);

/// Which parts of a bound were left out (`1` or `1.2`): Masterminds' "dirty" constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Short {
    No,
    /// Only `MAJOR` was given.
    Minor,
    /// `MAJOR.MINOR` was given.
    Patch,
}

/// A version written the way Masterminds' `NewVersion` accepts it, with how it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LooseVersion {
    /// The parts given, missing ones as zero.
    pub version: Version,
    short: Short,
    text: String,
}

impl LooseVersion {
    /// Parses like Masterminds `NewVersion`: `v?N(.N)?(.N)?(-pre)?(+build)?`, numeric parts that
    /// fit 64 bits (leading zeros allowed), prerelease identifiers without leading zeros.
    pub fn parse(s: &str) -> Result<LooseVersion, MmError> {
        let bad = || MmError(format!("{s:?} is not a semantic version"));
        let body = s.strip_prefix('v').unwrap_or(s);
        let (rest, build) = match body.split_once('+') {
            Some((r, b)) => (r, Some(b)),
            None => (body, None),
        };
        let (nums, pre) = match rest.split_once('-') {
            Some((n, p)) => (n, Some(p)),
            None => (rest, None),
        };
        let parts: Vec<&str> = nums.split('.').collect();
        if parts.len() > 3 {
            return Err(bad());
        }
        let mut n = [0u64; 3];
        for (i, p) in parts.iter().enumerate() {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            n[i] = p.parse().map_err(|_| bad())?;
        }
        let idents_ok = |t: &str| {
            t.split('.')
                .all(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'))
        };
        let pre = match pre {
            None => Prerelease::EMPTY,
            Some(p) if idents_ok(p) => Prerelease::new(p).map_err(|_| bad())?,
            Some(_) => return Err(bad()),
        };
        let build = match build {
            None => BuildMetadata::EMPTY,
            Some(b) if idents_ok(b) => BuildMetadata::new(b).map_err(|_| bad())?,
            Some(_) => return Err(bad()),
        };
        let short = match parts.len() {
            1 => Short::Minor,
            2 => Short::Patch,
            _ => Short::No,
        };
        Ok(LooseVersion {
            version: Version {
                major: n[0],
                minor: n[1],
                patch: n[2],
                pre,
                build,
            },
            short,
            text: s.to_string(),
        })
    }

    /// The version as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// A version range as oc-mirror builds it from a minimum and a maximum, read with
/// Masterminds' rules; at least one bound is present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounds {
    min: Option<LooseVersion>,
    max: Option<LooseVersion>,
}

impl Bounds {
    /// The range of `min` and `max`; `None` when both are absent.
    pub fn new(min: Option<LooseVersion>, max: Option<LooseVersion>) -> Option<Bounds> {
        (min.is_some() || max.is_some()).then_some(Bounds { min, max })
    }

    pub fn min(&self) -> Option<&LooseVersion> {
        self.min.as_ref()
    }

    pub fn max(&self) -> Option<&LooseVersion> {
        self.max.as_ref()
    }

    /// The range text oc-mirror hands the filter, which its messages quote: `>=MIN`,
    /// ` <=MAX` (with the leading space) or `>=MIN <=MAX`.
    pub fn range_text(&self) -> String {
        let mut s = String::new();
        if let Some(min) = &self.min {
            s.push_str(">=");
            s.push_str(min.as_str());
        }
        if let Some(max) = &self.max {
            s.push_str(" <=");
            s.push_str(max.as_str());
        }
        s
    }

    /// The one version the range names when min and max are written alike (the filter then
    /// keeps that one bundle, OCPBUGS-61497).
    pub fn exact(&self) -> Option<&LooseVersion> {
        match (&self.min, &self.max) {
            (Some(a), Some(b)) if a.as_str() == b.as_str() => Some(a),
            _ => None,
        }
    }

    /// Whether `v` satisfies the range (Masterminds `Constraints.Check`).
    pub fn contains(&self, v: &Version) -> bool {
        // Prereleases are considered for the whole AND group once any bound has one.
        let with_pre = [&self.min, &self.max]
            .into_iter()
            .flatten()
            .any(|b| !b.version.pre.is_empty());
        if !v.pre.is_empty() && !with_pre {
            return false;
        }
        let above_min = self
            .min
            .as_ref()
            .is_none_or(|m| v.cmp_precedence(&m.version) != Ordering::Less);
        above_min && self.max.as_ref().is_none_or(|m| at_most(v, m))
    }
}

/// Masterminds' `<=`: a full bound compares; a short one only caps the parts it names.
fn at_most(v: &Version, max: &LooseVersion) -> bool {
    let m = &max.version;
    match max.short {
        Short::No => v.cmp_precedence(m) != Ordering::Greater,
        Short::Minor => v.major <= m.major,
        Short::Patch => v.major < m.major || (v.major == m.major && v.minor <= m.minor),
    }
}

/// Masterminds `Version.Equal`: precedence only.
pub fn same_version(a: &Version, b: &Version) -> bool {
    a.cmp_precedence(b) == Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn range(min: Option<&str>, max: Option<&str>) -> Bounds {
        let p = |s: Option<&str>| s.map(|s| LooseVersion::parse(s).unwrap());
        Bounds::new(p(min), p(max)).unwrap()
    }

    #[test]
    fn new_version_accepts_what_masterminds_accepts() {
        for ok in [
            "1",
            "1.2",
            "1.2.3",
            "v1.2.3",
            "01.2.3",
            "1.2.3-rc.1",
            "1.2-rc",
            "1.2.3+b.1",
            "v1",
        ] {
            assert!(LooseVersion::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "v",
            "1.2.3.4",
            "1..2",
            "x",
            "1.x",
            "1.2.3-",
            "1.2.3-01",
            "1.2.3+",
            "V1.2.3",
            " 1.2.3",
            "1.2.3-a..b",
            ">=1.0.0",
        ] {
            assert!(LooseVersion::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(LooseVersion::parse("01.2").unwrap().version, v("1.2.0"));
    }

    #[test]
    fn range_text_is_what_oc_mirror_builds() {
        assert_eq!(range(Some("1.0.0"), None).range_text(), ">=1.0.0");
        assert_eq!(range(None, Some("2.0.0")).range_text(), " <=2.0.0");
        assert_eq!(range(Some("v1.0"), Some("2")).range_text(), ">=v1.0 <=2");
        assert!(range(Some("1.0.0"), Some("1.0.0")).exact().is_some());
        assert!(range(Some("1.0.0"), Some("v1.0.0")).exact().is_none());
    }

    /// Verdicts of Masterminds v3.5 `NewConstraint(r).Check(NewVersion(v))`.
    #[test]
    fn check_follows_masterminds() {
        let cases: &[(Option<&str>, Option<&str>, &str, bool)] = &[
            (Some("1.0.0"), None, "1.0.0", true),
            (Some("1.0.0"), None, "0.9.9", false),
            (Some("1.0.0"), None, "1.5.0-rc.1", false),
            (Some("1.0.0-0"), None, "1.5.0-rc.1", true),
            (Some("1.0.0"), Some("2.0.0-0"), "1.5.0-rc.1", true),
            (Some("1.0.0"), Some("2.0.0"), "2.0.0-rc.1", false),
            (None, Some("1.2"), "1.2.9", true),
            (None, Some("1.2"), "1.3.0", false),
            (None, Some("1.2"), "0.9.0", true),
            (None, Some("1"), "1.99.0", true),
            (None, Some("1"), "2.0.0", false),
            (Some("1.2"), None, "1.2.0", true),
            (Some("1.2"), None, "1.1.9", false),
            (Some("1.0.0+a"), Some("1.0.0+b"), "1.0.0+c", true),
            (Some("1.34.1-5"), Some("1.42.0-5"), "1.42.0-4", true),
            (
                Some("1.34.1-5"),
                Some("1.42.0-5"),
                "1.42.0-5-0.1687199951.p",
                false,
            ),
            (Some("1.34.1-5"), Some("1.42.0-5"), "1.42.0-6", false),
            (None, Some("1.2-rc"), "1.2.5-rc", true),
        ];
        for (min, max, ver, want) in cases {
            assert_eq!(
                range(*min, *max).contains(&v(ver)),
                *want,
                "{min:?} {max:?} {ver}"
            );
        }
    }
}
