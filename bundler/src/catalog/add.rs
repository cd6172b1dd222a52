//! `olm catalog add`: cut a release into a catalog. The released bundle is added to the
//! package's template (`<catalog>/<package>/template.yaml`, created as an `olm.semver`
//! template when missing) and the package is re-rendered to `<catalog>/<package>/catalog.yaml`.
//! Bundles already in the rendered catalog are reused by image, so older releases need no
//! registry access. Nothing is written unless the result validates.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::declcfg::{DeclarativeConfig, SCHEMA_BUNDLE, SCHEMA_CHANNEL, SCHEMA_PACKAGE};
use super::diagnostic::Report;
use super::render::Form;
use super::template::{
    self, BundleResolver, SCHEMA_BASIC, SCHEMA_SEMVER, SemverTemplate, TemplateError,
};
use crate::atomic_write::FileTree;

/// Which channels a new semver template generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Generate {
    #[default]
    Minor,
    Major,
    Both,
}

#[derive(Debug, Clone)]
pub struct AddOptions {
    pub catalog_dir: PathBuf,
    /// A bundle directory (needs `image`) or a bundle image already rendered in the catalog.
    pub bundle: String,
    /// The released bundle image reference.
    pub image: Option<String>,
    /// Semver templates: archetypes (candidate, fast, stable). Basic templates: channel names.
    pub channels: Vec<String>,
    pub template: Option<PathBuf>,
    /// Basic templates: a skipRange for the new entries.
    pub skip_range: Option<String>,
    /// For a new semver template.
    pub generate: Generate,
    /// Copy each CSV's `olm.skipRange` onto its channel entries (see
    /// [`template::skip_ranges_from_csvs`]).
    pub skip_range_from_csv: bool,
    pub form: Form,
}

#[derive(Debug)]
pub struct AddOutcome {
    pub package: String,
    pub bundle: String,
    pub template: PathBuf,
    pub catalog: PathBuf,
    /// Files to write, relative to the package directory.
    pub files: FileTree,
    pub package_dir: PathBuf,
    pub report: Report,
}

#[derive(Debug, thiserror::Error)]
pub enum AddError {
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error(transparent)]
    Render(#[from] super::render::RenderError),
    #[error("{0}")]
    Usage(String),
    #[error("the re-rendered catalog does not validate:\n{0}")]
    Invalid(Report),
    #[error(transparent)]
    Load(#[from] super::load::LoadErrors),
    #[error("cannot write YAML: {0}")]
    Yaml(String),
}

/// Adds the bundle and re-renders; returns the files to write (nothing is written here).
impl AddOutcome {
    /// `--check`: the files that would change, as lines for the user (none: nothing would).
    pub fn would_change(&self) -> Vec<String> {
        let diff = self.files.diff_against(&self.package_dir, &[]);
        let path = |d: &PathBuf| self.package_dir.join(d).display().to_string();
        diff.iter()
            .map(|d| format!("would change {}", path(d)))
            .collect()
    }

    /// Writes the package's files; returns the line that says what was written.
    pub fn write(&self) -> Result<String, crate::atomic_write::WriteError> {
        let changes = self.files.write(&self.package_dir, &[])?;
        Ok(format!(
            "added {} to package {:?}: {} written, {} unchanged ({} and {})",
            self.bundle,
            self.package,
            changes.written.len(),
            changes.unchanged,
            self.template.display(),
            self.catalog.display()
        ))
    }
}

pub fn add(opts: &AddOptions) -> Result<AddOutcome, AddError> {
    if opts.channels.is_empty() {
        return Err(AddError::Usage(
            "--channels must name at least one channel".into(),
        ));
    }
    let mut resolver = BundleResolver {
        form: opts.form,
        ..Default::default()
    };
    let bundle_path = Path::new(&opts.bundle);
    let image = if bundle_path.is_dir() {
        let image = opts.image.clone().ok_or_else(|| {
            AddError::Usage(format!(
                "{}: a bundle directory needs --image <the bundle image it was pushed as>",
                opts.bundle
            ))
        })?;
        resolver
            .dirs
            .insert(image.clone(), bundle_path.to_path_buf());
        image
    } else {
        opts.bundle.clone()
    };
    // Render the new bundle first to learn its package and name.
    let probe_resolver = resolver.clone();
    let probe = probe_resolver.resolve(&image, Path::new("."));
    let new_bundle = match probe {
        Ok(r) => r.bundle,
        Err(e) => {
            // Maybe it is already in the catalog: look there.
            let mut r = resolver.clone();
            if opts.catalog_dir.exists() {
                r.reuse_catalog(&opts.catalog_dir)?;
            }
            r.resolve(&image, Path::new("."))
                .map_err(|_| AddError::Render(e))?
                .bundle
        }
    };
    let package = new_bundle.package.clone();
    let package_dir = opts.catalog_dir.join(&package);
    let catalog_path = package_dir.join("catalog.yaml");
    let template_path = opts
        .template
        .clone()
        .unwrap_or_else(|| package_dir.join("template.yaml"));
    if catalog_path.exists() {
        resolver.reuse_catalog(&catalog_path)?;
    }

    let tpl: Value = if template_path.exists() {
        template::read_template(&template_path)?
    } else if catalog_path.exists() {
        return Err(AddError::Usage(format!(
            "{} exists but its template {} does not; pass --template <file>",
            catalog_path.display(),
            template_path.display()
        )));
    } else {
        let (major, minor) = match opts.generate {
            Generate::Minor => (false, true),
            Generate::Major => (true, false),
            Generate::Both => (true, true),
        };
        SemverTemplate {
            generate_major: major,
            generate_minor: minor,
            default_preference: if minor { "minor" } else { "major" }.into(),
            ..Default::default()
        }
        .to_value()
    };
    let schema = template::template_schema(&template_path, &tpl)?;
    let (new_tpl, cfg) = if schema == SCHEMA_SEMVER {
        let mut t = template::parse_semver(&template_path, &tpl)?;
        for ch in &opts.channels {
            let list = match ch.as_str() {
                "candidate" => &mut t.candidate,
                "fast" => &mut t.fast,
                "stable" => &mut t.stable,
                other => {
                    return Err(AddError::Usage(format!(
                        "{}: semver templates take the archetypes candidate, fast and stable, not {other:?}",
                        template_path.display()
                    )));
                }
            };
            if !list.contains(&image) {
                list.push(image.clone());
            }
        }
        let cfg = template::render_semver(&template_path, &t, &resolver)?;
        (t.to_value(), cfg)
    } else if schema == SCHEMA_BASIC {
        let t = add_to_basic(&tpl, &package, &new_bundle.name, &image, opts)?;
        let cfg = template::render_basic(&template_path, &t, &resolver)?;
        (t, cfg)
    } else {
        return Err(AddError::Usage(format!(
            "{}: template has unknown schema ({schema:?}), should be {SCHEMA_SEMVER:?} or {SCHEMA_BASIC:?}",
            template_path.display()
        )));
    };
    let mut cfg = cfg;
    if opts.skip_range_from_csv {
        template::skip_ranges_from_csvs(&mut cfg);
    }
    let report = super::validate::validate(&cfg);
    if report.has_errors() {
        return Err(AddError::Invalid(report));
    }
    let mut files = FileTree::new();
    let yaml = cfg.to_yaml().map_err(|e| AddError::Yaml(e.to_string()))?;
    files.insert(rel(&package_dir, &catalog_path), yaml.into_bytes());
    let tpl_yaml = crate::yaml::to_yaml(&new_tpl).map_err(|e| AddError::Yaml(e.to_string()))?;
    files.insert(rel(&package_dir, &template_path), tpl_yaml.into_bytes());
    if template_path.parent() == Some(package_dir.as_path()) {
        let name = template_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        files.insert(
            ".indexignore",
            format!("# the template, not catalog content\n{name}\n"),
        );
    }
    Ok(AddOutcome {
        package,
        bundle: new_bundle.name,
        template: template_path,
        catalog: catalog_path,
        files,
        package_dir,
        report,
    })
}

fn rel(base: &Path, p: &Path) -> PathBuf {
    p.strip_prefix(base)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| p.to_path_buf())
}

/// Adds a bundle to a basic template: the bundle entry, and an entry in each channel that
/// replaces the channel's current head.
fn add_to_basic(
    tpl: &Value,
    package: &str,
    bundle: &str,
    image: &str,
    opts: &AddOptions,
) -> Result<Value, AddError> {
    let mut t = tpl.clone();
    let Some(entries) = t.get_mut("entries").and_then(Value::as_array_mut) else {
        return Err(AddError::Usage(
            "basic template has no `entries` list".into(),
        ));
    };
    let has_package = entries.iter().any(|e| {
        e.get("schema").and_then(Value::as_str) == Some(SCHEMA_PACKAGE)
            && e.get("name").and_then(Value::as_str) == Some(package)
    });
    if !has_package {
        entries.insert(
            0,
            json!({"schema": SCHEMA_PACKAGE, "name": package, "defaultChannel": opts.channels[0]}),
        );
    }
    for ch in &opts.channels {
        let pos = entries.iter().position(|e| {
            e.get("schema").and_then(Value::as_str) == Some(SCHEMA_CHANNEL)
                && e.get("name").and_then(Value::as_str) == Some(ch.as_str())
                && e.get("package").and_then(Value::as_str) == Some(package)
        });
        let pos = match pos {
            Some(p) => p,
            None => {
                entries.push(
                    json!({"schema": SCHEMA_CHANNEL, "package": package, "name": ch, "entries": []}),
                );
                entries.len() - 1
            }
        };
        let mut cfg = DeclarativeConfig::default();
        super::load::add_blob(&mut cfg, entries[pos].clone(), Default::default())
            .map_err(|e| AddError::Usage(e.to_string()))?;
        let current = &cfg.channels[0].entries;
        if current.iter().any(|e| e.name == bundle) {
            return Err(AddError::Usage(format!(
                "bundle {bundle:?} is already in channel {ch:?}"
            )));
        }
        let head = if current.is_empty() {
            None
        } else {
            Some(
                super::validate::channel_head(current.iter())
                    .map_err(|e| AddError::Usage(format!("channel {ch:?}: {e}")))?
                    .name
                    .clone(),
            )
        };
        let mut entry = serde_json::Map::new();
        entry.insert("name".into(), bundle.into());
        if let Some(h) = head {
            entry.insert("replaces".into(), h.into());
        }
        if let Some(r) = &opts.skip_range {
            entry.insert("skipRange".into(), r.clone().into());
        }
        if let Some(list) = entries[pos]
            .get_mut("entries")
            .and_then(Value::as_array_mut)
        {
            list.push(Value::Object(entry));
        }
    }
    let has_bundle = entries.iter().any(|e| {
        e.get("schema").and_then(Value::as_str) == Some(SCHEMA_BUNDLE)
            && e.get("image").and_then(Value::as_str) == Some(image)
    });
    if !has_bundle {
        entries.push(json!({"schema": SCHEMA_BUNDLE, "image": image}));
    }
    Ok(t)
}
