//! `olm bundle validate`: the suites and their settings read from the command line's words,
//! the bundle fetched (a directory, or an image pulled), loaded and validated.

use thiserror::Error;

use crate::bundle::load::{BundleDir, LoadError};
use crate::bundle::validate::{self, Finding, Options, Report, Suite};
use crate::grammar::semver_range;
use crate::image::registry::RegistryOptions;
use crate::ops::bundle_source::{self, BundleSourceError};
use crate::yaml::YamlError;

/// What to validate, in the command line's words.
#[derive(Debug, Clone, Default)]
pub struct ValidateRequest {
    /// A bundle directory or image.
    pub bundle: String,
    /// Optional suites (`operatorhub`, `all`, `olmv1`, ...), each possibly comma-separated.
    pub suites: Vec<String>,
    /// Suite settings: `k8s-version=1.25`, `index-path=bundle.Dockerfile`.
    pub optional_values: Vec<String>,
    /// Custom categories: JSON `{"categories":[...]}` or a file holding it.
    pub categories: Option<String>,
    pub registry: RegistryOptions,
}

#[derive(Debug, Error)]
pub enum BundleValidateError {
    /// A suite, setting or path that cannot be used (exit code 2).
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Source(#[from] BundleSourceError),
}

impl BundleValidateError {
    pub fn is_usage(&self) -> bool {
        match self {
            Self::Usage(_) => true,
            Self::Source(e) => e.is_usage(),
        }
    }
}

/// The validators' options from the request's words.
pub fn options(req: &ValidateRequest) -> Result<Options, BundleValidateError> {
    let usage = BundleValidateError::Usage;
    let mut opts = Options::default();
    for s in &req.suites {
        opts.suites.extend(Suite::parse(s).map_err(usage)?);
    }
    for kv in &req.optional_values {
        match kv.split_once('=') {
            Some(("k8s-version", v)) => {
                let version = semver_range::parse_version_tolerant(v).map_err(|_| {
                    usage(format!(
                        "invalid value informed via the k8s key option : {v}"
                    ))
                })?;
                opts.k8s_version = Some(version);
            }
            Some(("index-path", v)) if !v.is_empty() => {
                opts.index_path = Some(std::path::PathBuf::from(v));
            }
            _ => {
                return Err(usage(format!(
                    "unknown --optional-values entry {kv:?}; supported: k8s-version=<version>, index-path=<Dockerfile>"
                )));
            }
        }
    }
    if opts.suites.contains(&Suite::Categories)
        && let Some(spec) = &req.categories
    {
        let categories = validate::load_custom_categories(spec)
            .map_err(|e| usage(format!("OPERATOR_BUNDLE_CATEGORIES: {e}")))?;
        opts.custom_categories = Some(categories);
    }
    Ok(opts)
}

/// Validates the bundle `req` names. A bundle whose files do not parse is a report with one
/// load error (nothing else can be checked); an unreadable one is a usage error.
pub async fn validate(req: &ValidateRequest) -> Result<Report, BundleValidateError> {
    let opts = options(req)?;
    // Kept until validation is done: an unpacked image lives in it.
    let bundle = bundle_source::fetch(&req.bundle, &req.registry).await?;
    match BundleDir::load_tree(bundle.tree()) {
        Ok(b) => Ok(validate::validate(&b, &opts)),
        Err(e @ (LoadError::Yaml(YamlError::Io { .. }) | LoadError::NotADirectory(_))) => {
            Err(BundleValidateError::Usage(e.to_string()))
        }
        Err(e) => {
            Ok(Report {
                findings: vec![Finding::error("load", "parse", e.to_string()).hint(
                    "fix the file's syntax; nothing else can be checked until the bundle loads",
                )],
            })
        }
    }
}
