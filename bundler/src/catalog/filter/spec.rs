//! What a filter keeps: oc-mirror v2's operator selection (`mirror.operators[]` of an
//! ImageSetConfiguration), plus `--upgrade-from`.
//!
//! A [`FilterSpec`] is checked when it is made ([`FilterSpec::new`]), with the rules oc-mirror
//! checks before filtering (its config validation and the catalog filter's own): a package
//! listed once, a channel listed once per package, no package range together with a channel
//! range, no `full: true` together with a range. So [`filter`](super::filter) never meets a
//! selection that contradicts itself.

use std::collections::HashSet;

use semver::Version;

use crate::grammar::mm_semver::{Bounds, LooseVersion};
use crate::grammar::semver_range;

/// The selection of one catalog.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FilterSpec {
    full: bool,
    packages: Vec<PackageFilter>,
    unknown_names: UnknownNames,
}

/// What a listed package or channel the catalog does not have does to a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnknownNames {
    /// An error: a typo on the command line selects nothing.
    #[default]
    Refuse,
    /// Left out with a warning, as oc-mirror leaves it out of an ImageSetConfiguration's
    /// selection, as long as something else of the package (or catalog) is still selected.
    Ignore,
}

/// One package to keep, and which of its bundles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFilter {
    pub name: String,
    /// The package's new default channel; required when the channels kept leave out the
    /// catalog's default channel.
    pub default_channel: Option<String>,
    /// Which bundles of each kept channel (channels with a range of their own use that).
    pub select: Select,
    /// The channels to keep; none listed keeps every channel.
    pub channels: Vec<ChannelFilter>,
}

/// Which bundles of a package's channels to keep.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Select {
    /// The head of each channel, or every bundle when the spec is `full`.
    #[default]
    Heads,
    /// In each channel, the bundles in the range (oc-mirror's `minVersion`/`maxVersion`).
    Range(Bounds),
    /// In each channel, only the bundles OLM walks from this installed version to the head.
    UpgradeFrom(Version),
}

/// One channel to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelFilter {
    pub name: String,
    /// The channel's own `minVersion`/`maxVersion`.
    pub range: Option<Bounds>,
}

/// A selection that contradicts itself, with oc-mirror's words where it has them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("package name must be specified")]
    NoPackageName,
    #[error("package {0:?}: channel name must be specified")]
    NoChannelName(String),
    #[error("duplicate package entry {0:?}")]
    DuplicatePackage(String),
    #[error("operator {package:?}: duplicate channel entry {channel:?}")]
    DuplicateChannel { package: String, channel: String },
    #[error(
        "operator {0:?}: mixing both filtering by minVersion/maxVersion and filtering by channel minVersion/maxVersion is not allowed"
    )]
    MixedRanges(String),
    #[error("Full: true cannot be mixed with versionRange")]
    FullWithRange,
    #[error("operator {0:?}: --upgrade-from cannot be mixed with full or with a version range")]
    UpgradeFromMixed(String),
    #[error("{flag} {value:?} must respect semantic versioning notation")]
    BadVersion { flag: String, value: String },
    #[error("{flag} needs --package")]
    NeedsPackage { flag: String },
    #[error(
        "{flag} applies to one package, and {count} are given: use --config with an ImageSetConfiguration to filter each package its own way"
    )]
    OnePackageOnly { flag: String, count: usize },
}

impl FilterSpec {
    /// A checked selection: `full` keeps every bundle of what is selected (oc-mirror's
    /// `full: true`); no packages selects every package.
    pub fn new(full: bool, packages: Vec<PackageFilter>) -> Result<FilterSpec, SpecError> {
        let mut names = HashSet::new();
        for p in &packages {
            if p.name.is_empty() {
                return Err(SpecError::NoPackageName);
            }
            if !names.insert(p.name.as_str()) {
                return Err(SpecError::DuplicatePackage(p.name.clone()));
            }
            let mut channels = HashSet::new();
            for c in &p.channels {
                if c.name.is_empty() {
                    return Err(SpecError::NoChannelName(p.name.clone()));
                }
                if !channels.insert(c.name.as_str()) {
                    return Err(SpecError::DuplicateChannel {
                        package: p.name.clone(),
                        channel: c.name.clone(),
                    });
                }
            }
            let channel_range = p.channels.iter().any(|c| c.range.is_some());
            match &p.select {
                Select::Range(_) if channel_range => {
                    return Err(SpecError::MixedRanges(p.name.clone()));
                }
                Select::Range(_) if full => return Err(SpecError::FullWithRange),
                Select::UpgradeFrom(_) if full || channel_range => {
                    return Err(SpecError::UpgradeFromMixed(p.name.clone()));
                }
                _ if full && channel_range => return Err(SpecError::FullWithRange),
                _ => {}
            }
        }
        Ok(FilterSpec {
            full,
            packages,
            unknown_names: UnknownNames::Refuse,
        })
    }

    /// The same selection, treating names the catalog does not have as `policy` says.
    pub fn with_unknown_names(mut self, policy: UnknownNames) -> FilterSpec {
        self.unknown_names = policy;
        self
    }

    pub fn unknown_names(&self) -> UnknownNames {
        self.unknown_names
    }

    /// The same selection without the packages and channels `keep` refuses.
    pub(super) fn retain_names(
        &self,
        mut keep_package: impl FnMut(&PackageFilter) -> bool,
        mut keep_channel: impl FnMut(&PackageFilter, &ChannelFilter) -> bool,
    ) -> FilterSpec {
        let mut out = self.clone();
        out.packages.retain(&mut keep_package);
        for p in &mut out.packages {
            let pf = p.clone();
            p.channels.retain(|c| keep_channel(&pf, c));
        }
        out
    }

    /// Keeps every bundle of every package: the catalog as it is.
    pub fn everything() -> FilterSpec {
        FilterSpec {
            full: true,
            packages: Vec::new(),
            unknown_names: UnknownNames::Refuse,
        }
    }

    pub fn full(&self) -> bool {
        self.full
    }

    pub fn packages(&self) -> &[PackageFilter] {
        &self.packages
    }

    pub fn package(&self, name: &str) -> Option<&PackageFilter> {
        self.packages.iter().find(|p| p.name == name)
    }

    /// The selection the command-line flags give (see [`FilterFlags`]).
    pub fn from_flags(f: &FilterFlags) -> Result<FilterSpec, SpecError> {
        let per_package = [
            ("--channel", !f.channels.is_empty()),
            ("--default-channel", f.default_channel.is_some()),
            ("--min-version", f.min_version.is_some()),
            ("--max-version", f.max_version.is_some()),
            ("--upgrade-from", f.upgrade_from.is_some()),
        ];
        if let Some((flag, _)) = per_package.iter().find(|(_, given)| *given) {
            let flag = flag.to_string();
            match f.packages.len() {
                0 => return Err(SpecError::NeedsPackage { flag }),
                1 => {}
                count => return Err(SpecError::OnePackageOnly { flag, count }),
            }
        }
        let bound = |flag: &str, v: &Option<String>| -> Result<Option<LooseVersion>, SpecError> {
            v.as_deref()
                .map(|s| {
                    LooseVersion::parse(s).map_err(|_| SpecError::BadVersion {
                        flag: flag.into(),
                        value: s.into(),
                    })
                })
                .transpose()
        };
        let range = Bounds::new(
            bound("--min-version", &f.min_version)?,
            bound("--max-version", &f.max_version)?,
        );
        let select = match (range, &f.upgrade_from) {
            (Some(_), Some(_)) => {
                return Err(SpecError::UpgradeFromMixed(f.packages[0].clone()));
            }
            (Some(r), None) => Select::Range(r),
            (None, Some(v)) => {
                Select::UpgradeFrom(semver_range::parse_version_tolerant(v).map_err(|_| {
                    SpecError::BadVersion {
                        flag: "--upgrade-from".into(),
                        value: v.clone(),
                    }
                })?)
            }
            (None, None) => Select::Heads,
        };
        let packages = f
            .packages
            .iter()
            .map(|name| PackageFilter {
                name: name.clone(),
                default_channel: f.default_channel.clone(),
                select: select.clone(),
                channels: f
                    .channels
                    .iter()
                    .map(|c| ChannelFilter {
                        name: c.clone(),
                        range: None,
                    })
                    .collect(),
            })
            .collect();
        FilterSpec::new(f.full, packages)
    }
}

/// The filter flags of `olm catalog filter` and `olm catalog mirror`, as given. The
/// per-package flags (`--channel`, `--default-channel`, `--min-version`, `--max-version`,
/// `--upgrade-from`) apply to exactly one `--package`; each package its own way takes an
/// ImageSetConfiguration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterFlags {
    pub packages: Vec<String>,
    pub channels: Vec<String>,
    pub default_channel: Option<String>,
    pub min_version: Option<String>,
    pub max_version: Option<String>,
    pub upgrade_from: Option<String>,
    pub full: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(packages: &[&str]) -> FilterFlags {
        FilterFlags {
            packages: packages.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn bounds(min: &str) -> Bounds {
        Bounds::new(Some(LooseVersion::parse(min).unwrap()), None).unwrap()
    }

    #[test]
    fn per_package_flags_need_exactly_one_package() {
        let mut f = flags(&[]);
        f.channels = vec!["stable".into()];
        assert_eq!(
            FilterSpec::from_flags(&f).unwrap_err().to_string(),
            "--channel needs --package"
        );
        let mut f = flags(&["a", "b"]);
        f.min_version = Some("1.0.0".into());
        let e = FilterSpec::from_flags(&f).unwrap_err().to_string();
        assert!(
            e.starts_with("--min-version applies to one package, and 2 are given: use --config"),
            "{e}"
        );
        let f = flags(&["a", "b"]);
        assert_eq!(FilterSpec::from_flags(&f).unwrap().packages().len(), 2);
    }

    #[test]
    fn flags_build_the_package_selection() {
        let mut f = flags(&["a"]);
        f.channels = vec!["stable".into(), "fast".into()];
        f.default_channel = Some("fast".into());
        f.min_version = Some("1.2".into());
        let s = FilterSpec::from_flags(&f).unwrap();
        let p = s.package("a").unwrap();
        assert_eq!(p.default_channel.as_deref(), Some("fast"));
        assert_eq!(p.channels.len(), 2);
        match &p.select {
            Select::Range(b) => assert_eq!(b.range_text(), ">=1.2"),
            other => panic!("{other:?}"),
        }
        f.min_version = Some("1.x".into());
        assert_eq!(
            FilterSpec::from_flags(&f).unwrap_err().to_string(),
            "--min-version \"1.x\" must respect semantic versioning notation"
        );
        f.min_version = None;
        f.upgrade_from = Some("v0.1".into());
        let s = FilterSpec::from_flags(&f).unwrap();
        assert_eq!(
            s.package("a").unwrap().select,
            Select::UpgradeFrom(Version::new(0, 1, 0))
        );
        f.full = true;
        assert!(matches!(
            FilterSpec::from_flags(&f),
            Err(SpecError::UpgradeFromMixed(_))
        ));
    }

    #[test]
    fn contradictions_are_refused_with_oc_mirrors_words() {
        let pkg = |select: Select, channel_range: Option<Bounds>| PackageFilter {
            name: "p".into(),
            default_channel: None,
            select,
            channels: vec![ChannelFilter {
                name: "c".into(),
                range: channel_range,
            }],
        };
        let e = FilterSpec::new(
            false,
            vec![pkg(Select::Range(bounds("1.0.0")), Some(bounds("1.0.0")))],
        );
        assert_eq!(
            e.unwrap_err().to_string(),
            "operator \"p\": mixing both filtering by minVersion/maxVersion and filtering by channel minVersion/maxVersion is not allowed"
        );
        let e = FilterSpec::new(true, vec![pkg(Select::Heads, Some(bounds("1.0.0")))]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "Full: true cannot be mixed with versionRange"
        );
        let e = FilterSpec::new(true, vec![pkg(Select::Range(bounds("1.0.0")), None)]);
        assert_eq!(e.unwrap_err(), SpecError::FullWithRange);
        assert!(FilterSpec::new(false, vec![pkg(Select::Range(bounds("1.0.0")), None)]).is_ok());
        let e = FilterSpec::new(
            false,
            vec![pkg(Select::Heads, None), pkg(Select::Heads, None)],
        );
        assert_eq!(e.unwrap_err().to_string(), "duplicate package entry \"p\"");
        let mut twice = pkg(Select::Heads, None);
        twice.channels.push(twice.channels[0].clone());
        assert_eq!(
            FilterSpec::new(false, vec![twice]).unwrap_err().to_string(),
            "operator \"p\": duplicate channel entry \"c\""
        );
    }
}
