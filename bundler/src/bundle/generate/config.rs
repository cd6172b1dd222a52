//! The settings of one bundle generation, from flags and a config file (`olm bundle generate
//! --config`, `bundle-config:` of `olm release`): one reading, so both commands agree on names,
//! defaults, relative paths and messages.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;

use super::{DEFAULT_SCORECARD_IMAGE, GenerateOptions};
use crate::yaml::{self, YamlError};

/// The config file: the flags of `olm bundle generate` by the same names (`csv-base:`,
/// `default-channel:`, ...); paths are relative to the file's directory.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct BundleConfig {
    pub manifests: Option<String>,
    pub csv_base: Option<PathBuf>,
    pub package: Option<String>,
    pub version: Option<String>,
    #[serde(default)]
    pub channels: Channels,
    pub default_channel: Option<String>,
    pub replaces: Option<String>,
    #[serde(default)]
    pub skips: Vec<String>,
    pub skip_range: Option<String>,
    pub min_kube_version: Option<String>,
    #[serde(default)]
    pub scorecard: bool,
    pub scorecard_image: Option<String>,
    #[serde(default)]
    pub extra_service_accounts: Vec<String>,
    #[serde(default)]
    pub related_images_from_containers: bool,
    #[serde(default)]
    pub fill_crd_descriptions: bool,
    #[serde(default)]
    pub use_image_digests: bool,
    pub output: Option<PathBuf>,
}

/// Channels as a YAML list or a comma-separated string.
#[derive(Debug, Default, Deserialize)]
#[serde(untagged)]
pub enum Channels {
    #[default]
    None,
    List(Vec<String>),
    Text(String),
}

impl Channels {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            Channels::None => Vec::new(),
            Channels::List(v) => v.clone(),
            Channels::Text(s) => s.split(',').map(|c| c.trim().to_string()).collect(),
        }
    }
}

/// A config file as read, with the directory its relative paths start from.
#[derive(Debug)]
pub struct LoadedConfig {
    pub path: PathBuf,
    pub config: BundleConfig,
}

impl LoadedConfig {
    pub fn load(path: &Path) -> Result<Self, YamlError> {
        Ok(Self {
            path: path.to_path_buf(),
            config: yaml::load_one(path)?,
        })
    }

    /// `p` as seen from the working directory (relative paths start at the file's directory),
    /// normalised so messages show `bundle`, not `operator/olm/../../bundle`.
    pub fn resolve_path(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            return p.to_path_buf();
        }
        let base = self.path.parent().unwrap_or(Path::new(""));
        lexically_normal(&base.join(p))
    }
}

/// What flags set; `None`/empty leaves the config file's value.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub manifests: Option<String>,
    pub csv_base: Option<PathBuf>,
    pub package: Option<String>,
    pub version: Option<String>,
    pub channels: Vec<String>,
    pub default_channel: Option<String>,
    pub replaces: Option<String>,
    pub skips: Vec<String>,
    pub skip_range: Option<String>,
    pub min_kube_version: Option<String>,
    pub scorecard: bool,
    pub scorecard_image: Option<String>,
    pub extra_service_accounts: Vec<String>,
    pub related_images_from_containers: bool,
    pub fill_crd_descriptions: bool,
    pub use_image_digests: bool,
    pub output: Option<PathBuf>,
}

/// The resolved settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// A directory, a file, or `-` (stdin); `None` when neither flag nor file names one
    /// (`olm release` reads its manifests from release.yaml).
    pub manifests: Option<String>,
    /// `None`: the CSV base comes with the manifests (`kustomize build config/manifests`).
    pub csv_base: Option<PathBuf>,
    pub output: PathBuf,
    /// operator-sdk's `--use-image-digests`: the caller resolves the CSV's images through
    /// their registries and sets `options.image_digests`.
    pub use_image_digests: bool,
    /// Every option but `created_at`, which the caller sets when it knows the content is new.
    pub options: GenerateOptions,
}

/// A required setting that neither a flag nor the config file gives, or a bad value.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum SettingsError {
    #[error("{flag} is required{} ({example})", in_file(.file, .key))]
    Missing {
        flag: &'static str,
        key: &'static str,
        file: Option<PathBuf>,
        example: &'static str,
    },
    #[error("{field} {value:?} is not a semantic version (MAJOR.MINOR.PATCH): {reason}")]
    Version {
        field: String,
        value: String,
        reason: String,
    },
}

fn in_file(file: &Option<PathBuf>, key: &str) -> String {
    match file {
        Some(f) => format!(" (or `{key}:` in {})", f.display()),
        None => String::new(),
    }
}

/// Flags over the config file, then defaults (output `bundle`; the scorecard image when
/// `scorecard` is set).
pub fn resolve(flags: Overrides, file: Option<&LoadedConfig>) -> Result<Settings, SettingsError> {
    let empty = BundleConfig::default();
    let cfg = file.map(|f| &f.config).unwrap_or(&empty);
    let at = |p: &PathBuf| match file {
        Some(f) => f.resolve_path(p),
        None => p.clone(),
    };
    let missing = |flag, key, example| SettingsError::Missing {
        flag,
        key,
        file: file.map(|f| f.path.clone()),
        example,
    };
    let manifests = flags.manifests.or_else(|| {
        cfg.manifests.as_ref().map(|m| {
            if m == "-" {
                m.clone()
            } else {
                at(&PathBuf::from(m)).display().to_string()
            }
        })
    });
    let package = flags
        .package
        .or_else(|| cfg.package.clone())
        .ok_or_else(|| {
            missing(
                "--package",
                "package",
                "the OLM package name, e.g. my-operator",
            )
        })?;
    let (version_field, version_text) = match flags.version {
        Some(v) => ("--version".to_string(), v),
        None => match (&cfg.version, file) {
            (Some(v), Some(f)) => (format!("{}: version", f.path.display()), v.clone()),
            _ => return Err(missing("--version", "version", "semver, e.g. 0.1.0")),
        },
    };
    let version = semver::Version::parse(version_text.trim_start_matches('v')).map_err(|e| {
        SettingsError::Version {
            field: version_field,
            value: version_text.clone(),
            reason: e.to_string(),
        }
    })?;
    let mut channels = if flags.channels.is_empty() {
        cfg.channels.to_vec()
    } else {
        flags.channels
    };
    channels.retain(|c| !c.is_empty());
    if channels.is_empty() {
        return Err(missing(
            "--channels",
            "channels",
            "comma-separated, e.g. stable",
        ));
    }
    let scorecard_image = flags
        .scorecard_image
        .or_else(|| cfg.scorecard_image.clone())
        .or_else(|| {
            (flags.scorecard || cfg.scorecard).then(|| DEFAULT_SCORECARD_IMAGE.to_string())
        });
    let or_file = |v: Vec<String>, f: &Vec<String>| if v.is_empty() { f.clone() } else { v };
    Ok(Settings {
        manifests,
        csv_base: flags.csv_base.or_else(|| cfg.csv_base.as_ref().map(at)),
        output: flags
            .output
            .or_else(|| cfg.output.as_ref().map(at))
            .unwrap_or_else(|| PathBuf::from("bundle")),
        use_image_digests: flags.use_image_digests || cfg.use_image_digests,
        options: GenerateOptions {
            package,
            version,
            channels,
            default_channel: flags
                .default_channel
                .or_else(|| cfg.default_channel.clone()),
            replaces: flags.replaces.or_else(|| cfg.replaces.clone()),
            skips: or_file(flags.skips, &cfg.skips),
            skip_range: flags.skip_range.or_else(|| cfg.skip_range.clone()),
            min_kube_version: flags
                .min_kube_version
                .or_else(|| cfg.min_kube_version.clone()),
            scorecard_image,
            extra_service_accounts: or_file(
                flags.extra_service_accounts,
                &cfg.extra_service_accounts,
            ),
            related_images_from_containers: flags.related_images_from_containers
                || cfg.related_images_from_containers,
            fill_crd_descriptions: flags.fill_crd_descriptions || cfg.fill_crd_descriptions,
            image_digests: None,
            created_at: String::new(),
        },
    })
}

/// `a/b/../c` -> `a/c`, without touching the file system. A leading `..` is kept.
pub fn lexically_normal(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(out.components().next_back(), Some(Component::Normal(_))) {
                    out.pop();
                } else {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loaded(dir: &str, text: &str) -> LoadedConfig {
        LoadedConfig {
            path: PathBuf::from(dir).join("bundle.yaml"),
            config: yaml::parse_one(Path::new("bundle.yaml"), text).unwrap(),
        }
    }

    #[test]
    fn config_relative_paths_are_shown_normalised() {
        let n = |s: &str| lexically_normal(Path::new(s));
        assert_eq!(n("operator/olm/../../bundle"), PathBuf::from("bundle"));
        assert_eq!(n("./a/./b"), PathBuf::from("a/b"));
        assert_eq!(n("../x/../y"), PathBuf::from("../y"));
        assert_eq!(n("a/.."), PathBuf::from("."));
        assert_eq!(n("/a/../b"), PathBuf::from("/b"));
    }

    #[test]
    fn flags_win_over_the_file_and_paths_start_at_the_file() {
        let f = loaded(
            "operator/olm",
            "package: p\nversion: v1.2.3\nchannels: stable, fast\nmanifests: ../manifests\n\
             csv-base: base.yaml\noutput: ../../bundle\nscorecard: true\nskips: [p.v1.0.0]\n",
        );
        let s = resolve(Overrides::default(), Some(&f)).unwrap();
        assert_eq!(s.manifests.as_deref(), Some("operator/manifests"));
        assert_eq!(s.csv_base, Some(PathBuf::from("operator/olm/base.yaml")));
        assert_eq!(s.output, PathBuf::from("bundle"));
        assert_eq!(s.options.version, semver::Version::new(1, 2, 3));
        assert_eq!(s.options.channels, ["stable", "fast"]);
        assert_eq!(s.options.skips, ["p.v1.0.0"]);
        assert_eq!(
            s.options.scorecard_image.as_deref(),
            Some(DEFAULT_SCORECARD_IMAGE)
        );
        let flags = Overrides {
            version: Some("2.0.0".into()),
            channels: vec!["alpha".into()],
            manifests: Some("-".into()),
            ..Default::default()
        };
        let s = resolve(flags, Some(&f)).unwrap();
        assert_eq!(s.options.version, semver::Version::new(2, 0, 0));
        assert_eq!(s.options.channels, ["alpha"]);
        assert_eq!(s.manifests.as_deref(), Some("-"));
    }

    #[test]
    fn missing_and_bad_settings_name_the_flag_and_the_file() {
        let f = loaded("cfg", "package: p\nchannels: stable\n");
        let e = resolve(Overrides::default(), Some(&f)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--version is required (or `version:` in cfg/bundle.yaml) (semver, e.g. 0.1.0)"
        );
        let e = resolve(Overrides::default(), None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--package is required (the OLM package name, e.g. my-operator)"
        );
        let f = loaded("cfg", "package: p\nversion: one\nchannels: stable\n");
        let e = resolve(Overrides::default(), Some(&f)).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cfg/bundle.yaml: version \"one\" is not a semantic version"),
            "{e}"
        );
        let f = loaded("cfg", "package: p\nversion: 1.0.0\nchannels: ''\n");
        let e = resolve(Overrides::default(), Some(&f)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--channels is required (or `channels:` in cfg/bundle.yaml) (comma-separated, e.g. stable)"
        );
    }
}
