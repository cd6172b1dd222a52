//! Catalog templates: `olm.template.basic` and `olm.semver` (operator-registry
//! `alpha/template/basic` and `alpha/template/semver`), rendered to FBC.
//!
//! Templates name bundles by image. Rendering an image needs the registry; offline, a
//! [`BundleResolver`] maps images to local bundle directories (`--bundle-dir IMAGE=DIR`) or
//! reuses blobs already rendered into an existing catalog (what `olm catalog add` relies on to
//! re-render a package without pulling every old bundle again).

mod substitutes;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use semver::Version;
use serde_json::{Map, Value};

use super::declcfg::{
    Bundle, Channel, ChannelEntry, DeclarativeConfig, Icon, Package, SCHEMA_BUNDLE, SCHEMA_CHANNEL,
    SCHEMA_PACKAGE,
};
use super::render::{self, Form, RenderError};
use crate::grammar::semver_range;

pub const SCHEMA_BASIC: &str = "olm.template.basic";
pub const SCHEMA_SEMVER: &str = "olm.semver";
pub const SCHEMA_SUBSTITUTES: &str = "olm.template.substitutes";

#[derive(Debug, thiserror::Error)]
pub enum TemplateError {
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    /// Two entries render to the same bundle name (a version added twice, with two images).
    #[error("{path}: duplicate bundle name {name:?}")]
    DuplicateBundle { path: String, name: String },
    #[error(transparent)]
    Yaml(#[from] crate::yaml::YamlError),
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error(transparent)]
    Load(#[from] super::load::LoadError),
    #[error("--bundle-dir {0:?}: expected IMAGE=DIR")]
    BundleDirArg(String),
}

fn invalid(path: &Path, message: impl Into<String>) -> TemplateError {
    TemplateError::Invalid {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// A rendered bundle plus what a package blob may take from its CSV.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub bundle: Bundle,
    pub description: Option<String>,
    pub icon: Option<Icon>,
}

/// Turns template bundle images into rendered bundles without a registry.
#[derive(Debug, Clone, Default)]
pub struct BundleResolver {
    /// Image reference -> local bundle directory.
    pub dirs: BTreeMap<String, PathBuf>,
    /// Blobs already rendered, by image (from an existing catalog).
    pub existing: HashMap<String, Bundle>,
    /// Package blobs of the existing catalog (icon/description fallback).
    pub existing_packages: HashMap<String, Package>,
    pub form: Form,
}

impl BundleResolver {
    /// Adds the bundles of an existing catalog directory or file for reuse.
    pub fn reuse_catalog(&mut self, path: &Path) -> Result<(), super::load::LoadErrors> {
        let cfg = super::load::load_dir(path)?;
        for b in cfg.bundles {
            if !b.image.is_empty() {
                self.existing.insert(b.image.clone(), b);
            }
        }
        for p in cfg.packages {
            self.existing_packages.insert(p.name.clone(), p);
        }
        Ok(())
    }

    /// Renders (or reuses) the bundle for `image`. `base` resolves relative directory refs.
    pub fn resolve(&self, image: &str, base: &Path) -> Result<Resolved, RenderError> {
        if let Some(dir) = self.dirs.get(image) {
            return resolve_dir(dir, image, self.form);
        }
        if let Some(b) = self.existing.get(image) {
            let mut b = b.clone();
            b.source = Default::default();
            if self.form == Form::CsvMetadata {
                render::migrate_to_csv_metadata(&mut b);
            }
            let pkg = self.existing_packages.get(&b.package);
            return Ok(Resolved {
                description: pkg.map(|p| p.description.clone()).filter(|d| !d.is_empty()),
                icon: pkg.and_then(|p| p.icon.clone()),
                bundle: b,
            });
        }
        let local = base.join(image);
        if local.join("manifests").is_dir() && local.join("metadata").is_dir() {
            return resolve_dir(&local, "", self.form);
        }
        Err(RenderError::ImageRef(format!(
            "{image} (map it to a local bundle directory with --bundle-dir {image}=<dir>)"
        )))
    }
}

fn resolve_dir(dir: &Path, image: &str, form: Form) -> Result<Resolved, RenderError> {
    let bundle = render::render_bundle_dir(dir, image, form)?;
    let bd = crate::bundle::load::BundleDir::load(dir)?;
    let csv = bd
        .csvs()
        .next()
        .map(|m| m.object.clone())
        .unwrap_or_default();
    let description = csv
        .pointer("/spec/description")
        .and_then(Value::as_str)
        .map(str::to_string);
    let icon = csv
        .pointer("/spec/icon/0")
        .map(|i| Icon {
            data: i
                .get("base64data")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            media_type: i
                .get("mediatype")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        })
        .filter(|i| !i.data.is_empty());
    Ok(Resolved {
        bundle,
        description,
        icon,
    })
}

/// A field of a Go-decoded struct: Go's `encoding/json` matches keys case-insensitively and
/// the last match wins, so `Schema:` and `Entries:` (as opm's own docs write them) work.
fn field<'a>(obj: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    obj.iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v)
        .next_back()
}

/// Reads a template file (YAML or JSON, one document).
pub fn read_template(path: &Path) -> Result<Value, TemplateError> {
    let docs = crate::yaml::load_documents(path)?;
    match docs.len() {
        1 => Ok(docs.into_iter().next().unwrap_or_default()),
        0 => Err(invalid(path, "template is empty")),
        n => Err(invalid(
            path,
            format!("template must be one document, found {n}"),
        )),
    }
}

/// The `schema` of a template (`template input missing required 'schema' field` otherwise).
pub fn template_schema(path: &Path, v: &Value) -> Result<String, TemplateError> {
    v.as_object()
        .and_then(|o| field(o, "schema"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| invalid(path, "template input missing required 'schema' field"))
}

/// The template kinds `olm catalog template` renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TemplateKind {
    Basic,
    Semver,
    Substitutes,
}

impl TemplateKind {
    /// The kind named on the command line: opm's type (`basic`) or its schema
    /// (`olm.template.basic`).
    pub fn from_name(name: &str) -> Option<TemplateKind> {
        match name {
            "basic" | SCHEMA_BASIC => Some(TemplateKind::Basic),
            "semver" | SCHEMA_SEMVER => Some(TemplateKind::Semver),
            "substitutes" | SCHEMA_SUBSTITUTES => Some(TemplateKind::Substitutes),
            _ => None,
        }
    }

    /// `[KIND] FILE` as the command line gives them: the kind when one is named, and the file.
    pub fn from_args(args: &[String]) -> Result<(Option<TemplateKind>, PathBuf), String> {
        match args {
            [file] => Ok((None, PathBuf::from(file))),
            [kind, file] => match TemplateKind::from_name(kind) {
                Some(k) => Ok((Some(k), PathBuf::from(file))),
                None => Err(format!(
                    "unknown template kind {kind:?} (basic, semver, substitutes; or leave it out to use the template's schema)"
                )),
            },
            _ => Err("expected [KIND] FILE".into()),
        }
    }

    /// The kind a template's `schema` names (opm's auto-detection).
    pub fn detect(path: &Path, tpl: &Value) -> Result<TemplateKind, TemplateError> {
        let schema = tpl
            .as_object()
            .and_then(|o| field(o, "schema"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if schema.is_empty() {
            return Err(invalid(
                path,
                "template input missing required 'schema' field",
            ));
        }
        match schema {
            SCHEMA_BASIC => Ok(TemplateKind::Basic),
            SCHEMA_SEMVER => Ok(TemplateKind::Semver),
            SCHEMA_SUBSTITUTES => Ok(TemplateKind::Substitutes),
            other => Err(invalid(
                path,
                format!(
                    "unknown template schema: {other} (supported: {SCHEMA_BASIC}, {SCHEMA_SEMVER}, {SCHEMA_SUBSTITUTES})"
                ),
            )),
        }
    }
}

/// Reads and renders a template of `kind`, or of the kind its `schema` names when `None`.
pub fn render_file(
    path: &Path,
    kind: Option<TemplateKind>,
    resolver: &BundleResolver,
) -> Result<DeclarativeConfig, TemplateError> {
    let tpl = read_template(path)?;
    let kind = match kind {
        Some(k) => k,
        None => TemplateKind::detect(path, &tpl)?,
    };
    match kind {
        TemplateKind::Basic => render_basic(path, &tpl, resolver),
        TemplateKind::Semver => render_semver(path, &parse_semver(path, &tpl)?, resolver),
        TemplateKind::Substitutes => substitutes::render_substitutes(path, &tpl, resolver),
    }
}

/// Renders an `olm.template.basic`: each `olm.bundle` entry (only `schema` and `image`) is
/// replaced by the rendered bundle; other blobs pass through.
pub fn render_basic(
    path: &Path,
    tpl: &Value,
    resolver: &BundleResolver,
) -> Result<DeclarativeConfig, TemplateError> {
    let schema = template_schema(path, tpl)?;
    if schema != SCHEMA_BASIC {
        return Err(invalid(
            path,
            format!("template has unknown schema ({schema:?}), should be {SCHEMA_BASIC:?}"),
        ));
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let entries = tpl
        .as_object()
        .and_then(|o| field(o, "entries"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut cfg = DeclarativeConfig::default();
    for (i, e) in entries.into_iter().enumerate() {
        let Value::Object(obj) = &e else {
            return Err(invalid(path, format!("entries[{i}] must be an object")));
        };
        if obj.get("schema").and_then(Value::as_str) == Some(SCHEMA_BUNDLE) {
            if obj.keys().any(|k| k != "schema" && k != "image") {
                return Err(invalid(
                    path,
                    format!("entries[{i}]: unexpected fields present in basic template bundle"),
                ));
            }
            let image = obj.get("image").and_then(Value::as_str).unwrap_or("");
            if image.is_empty() {
                return Err(invalid(
                    path,
                    format!("entries[{i}]: bundle image must be set"),
                ));
            }
            cfg.bundles.push(resolver.resolve(image, base)?.bundle);
        } else {
            let src = super::declcfg::Source::new(std::sync::Arc::from(path), 0);
            super::load::add_blob(&mut cfg, e, src)?;
        }
    }
    for b in cfg
        .packages
        .iter_mut()
        .map(|p| &mut p.source)
        .chain(cfg.channels.iter_mut().map(|c| &mut c.source))
    {
        *b = Default::default();
    }
    Ok(cfg)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Archetype {
    Candidate,
    Fast,
    Stable,
}

impl Archetype {
    fn name(self) -> &'static str {
        match self {
            Archetype::Candidate => "candidate",
            Archetype::Fast => "fast",
            Archetype::Stable => "stable",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Major,
    Minor,
}

/// The parsed `olm.semver` template.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SemverTemplate {
    pub generate_major: bool,
    pub generate_minor: bool,
    /// `major` or `minor`.
    pub default_preference: String,
    pub candidate: Vec<String>,
    pub fast: Vec<String>,
    pub stable: Vec<String>,
}

fn lower_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.to_lowercase(), lower_keys(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(lower_keys).collect()),
        other => other.clone(),
    }
}

/// Parses an `olm.semver` template: keys case-insensitive, unknown keys rejected.
pub fn parse_semver(path: &Path, tpl: &Value) -> Result<SemverTemplate, TemplateError> {
    let v = lower_keys(tpl);
    let Some(obj) = v.as_object() else {
        return Err(invalid(path, "template must be an object"));
    };
    let schema = obj.get("schema").and_then(Value::as_str).unwrap_or("");
    if schema.is_empty() {
        return Err(invalid(
            path,
            "template input missing required 'schema' field",
        ));
    }
    if schema != SCHEMA_SEMVER {
        return Err(invalid(
            path,
            format!("readFile: input file has unknown schema, should be {SCHEMA_SEMVER:?}"),
        ));
    }
    let mut t = SemverTemplate::default();
    let mut major = None;
    let mut minor = None;
    for (k, val) in obj {
        match k.as_str() {
            "schema" => {}
            "generatemajorchannels" => major = Some(as_bool(path, k, val)?),
            "generateminorchannels" => minor = Some(as_bool(path, k, val)?),
            "defaultchanneltypepreference" => {
                t.default_preference = val
                    .as_str()
                    .ok_or_else(|| invalid(path, format!("{k} must be a string")))?
                    .to_string()
            }
            "candidate" | "fast" | "stable" => {
                let list = bundles_of(path, k, val)?;
                match k.as_str() {
                    "candidate" => t.candidate = list,
                    "fast" => t.fast = list,
                    _ => t.stable = list,
                }
            }
            other => {
                return Err(invalid(
                    path,
                    format!("unknown field {other:?} in olm.semver template"),
                ));
            }
        }
    }
    let (major, minor) = match (major.unwrap_or(false), minor.unwrap_or(false)) {
        (false, false) => (false, true),
        x => x,
    };
    t.generate_major = major;
    t.generate_minor = minor;
    match t.default_preference.as_str() {
        "" => t.default_preference = if minor { "minor" } else { "major" }.into(),
        "minor" if !minor => {
            return Err(invalid(
                path,
                "schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels",
            ));
        }
        "major" if !major => {
            return Err(invalid(
                path,
                "schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating major-version channels",
            ));
        }
        "minor" | "major" => {}
        other => {
            return Err(invalid(
                path,
                format!(
                    "unknown DefaultChannelTypePreference: {other:?}\nValid values are 'major' or 'minor'"
                ),
            ));
        }
    }
    Ok(t)
}

fn as_bool(path: &Path, k: &str, v: &Value) -> Result<bool, TemplateError> {
    v.as_bool()
        .ok_or_else(|| invalid(path, format!("{k} must be true or false")))
}

fn bundles_of(path: &Path, k: &str, v: &Value) -> Result<Vec<String>, TemplateError> {
    if v.is_null() {
        return Ok(Vec::new());
    }
    let Some(o) = v.as_object() else {
        return Err(invalid(
            path,
            format!("{k} must be an object with `bundles`"),
        ));
    };
    let mut out = Vec::new();
    for (key, list) in o {
        if key != "bundles" {
            return Err(invalid(path, format!("unknown field {key:?} in {k}")));
        }
        for (i, b) in list.as_array().into_iter().flatten().enumerate() {
            let image = b.get("image").and_then(Value::as_str).unwrap_or("");
            if image.is_empty() || b.as_object().is_some_and(|o| o.len() != 1) {
                return Err(invalid(
                    path,
                    format!("{k}.bundles[{i}] must be {{image: <bundle image>}}"),
                ));
            }
            out.push(image.to_string());
        }
    }
    Ok(out)
}

impl SemverTemplate {
    /// Writes the template back as YAML (README-style keys).
    pub fn to_value(&self) -> Value {
        let list = |v: &Vec<String>| serde_json::json!({"bundles": v.iter().map(|i| serde_json::json!({"image": i})).collect::<Vec<_>>()});
        let mut m = Map::new();
        m.insert("schema".into(), SCHEMA_SEMVER.into());
        m.insert("generateMajorChannels".into(), self.generate_major.into());
        m.insert("generateMinorChannels".into(), self.generate_minor.into());
        m.insert(
            "defaultChannelTypePreference".into(),
            self.default_preference.clone().into(),
        );
        m.insert("candidate".into(), list(&self.candidate));
        m.insert("fast".into(), list(&self.fast));
        m.insert("stable".into(), list(&self.stable));
        Value::Object(m)
    }
}

struct Tuple {
    arch: Archetype,
    kind: Kind,
    channel: String,
    name: String,
    version: Version,
    index: usize,
}

/// Renders an `olm.semver` template.
pub fn render_semver(
    path: &Path,
    t: &SemverTemplate,
    resolver: &BundleResolver,
) -> Result<DeclarativeConfig, TemplateError> {
    let base = path.parent().unwrap_or(Path::new("."));
    // Render each image once.
    let mut rendered: BTreeMap<String, Resolved> = BTreeMap::new();
    for image in t.candidate.iter().chain(&t.fast).chain(&t.stable) {
        if !rendered.contains_key(image) {
            rendered.insert(image.clone(), resolver.resolve(image, base)?);
        }
    }
    if rendered.is_empty() {
        return Err(invalid(
            path,
            "render: no bundles specified or no bundles could be rendered",
        ));
    }
    let mut package = String::new();
    let mut versions: HashMap<String, Version> = HashMap::new();
    let mut by_name: BTreeMap<String, &Resolved> = BTreeMap::new();
    for (image, r) in &rendered {
        let b = &r.bundle;
        if package.is_empty() {
            package = b.package.clone();
        } else if b.package != package {
            return Err(invalid(
                path,
                format!("bundle {image:?} does not belong to this package: {package:?}"),
            ));
        }
        if by_name.insert(b.name.clone(), r).is_some() {
            return Err(TemplateError::DuplicateBundle {
                path: path.display().to_string(),
                name: b.name.clone(),
            });
        }
        let v = b
            .properties
            .iter()
            .find(|p| p.ty == super::property::TYPE_PACKAGE)
            .and_then(|p| p.str_field("version"))
            .unwrap_or_default();
        let v = v.as_str();
        let v = semver_range::parse_version(v).map_err(|e| {
            invalid(
                path,
                format!("bundle {:?} has invalid version {v:?}: {e}", b.name),
            )
        })?;
        versions.insert(b.name.clone(), v);
    }
    {
        let mut seen: HashMap<String, &str> = HashMap::new();
        for (name, v) in &versions {
            let key = Version {
                build: semver::BuildMetadata::EMPTY,
                ..v.clone()
            }
            .to_string();
            if let Some(other) = seen.insert(key, name) {
                let mut pair = [other, name.as_str()];
                pair.sort();
                return Err(invalid(
                    path,
                    format!(
                        "encountered bundle versions which differ only by build metadata, which cannot be ordered: {}, {}",
                        pair[0], pair[1]
                    ),
                ));
            }
        }
    }

    let pref = if t.default_preference == "major" {
        Kind::Major
    } else {
        Kind::Minor
    };
    let mut channels: BTreeMap<String, Channel> = BTreeMap::new();
    let mut tuples: Vec<Tuple> = Vec::new();
    // High-water channel: (archetype, first version, preferred kind, minor over major).
    let mut hwc: Option<((Archetype, Version, bool, Kind), String)> = None;
    for (arch, images) in [
        (Archetype::Candidate, &t.candidate),
        (Archetype::Fast, &t.fast),
        (Archetype::Stable, &t.stable),
    ] {
        let mut names: Vec<(&Version, String)> = images
            .iter()
            .filter_map(|i| rendered.get(i))
            .map(|r| (&versions[&r.bundle.name], r.bundle.name.clone()))
            .collect();
        names.sort_by(|a, b| semver_range::compare(a.0, b.0));
        names.dedup_by(|a, b| a.1 == b.1);
        for (v, name) in names {
            let mut kinds = Vec::new();
            if t.generate_major {
                kinds.push((Kind::Major, format!("{}-v{}", arch.name(), v.major)));
            }
            if t.generate_minor {
                kinds.push((
                    Kind::Minor,
                    format!("{}-v{}.{}", arch.name(), v.major, v.minor),
                ));
            }
            for (kind, cname) in kinds {
                let ch = channels.entry(cname.clone()).or_insert_with(|| {
                    let key = (arch, v.clone(), kind == pref, kind);
                    let better = match &hwc {
                        None => true,
                        Some((cur, _)) => key > *cur,
                    };
                    if better {
                        hwc = Some((key, cname.clone()));
                    }
                    Channel {
                        schema: SCHEMA_CHANNEL.into(),
                        name: cname.clone(),
                        package: package.clone(),
                        ..Default::default()
                    }
                });
                ch.entries.push(ChannelEntry {
                    name: name.clone(),
                    ..Default::default()
                });
                tuples.push(Tuple {
                    arch,
                    kind,
                    channel: cname,
                    name: name.clone(),
                    version: v.clone(),
                    index: ch.entries.len() - 1,
                });
            }
        }
    }
    link(&mut tuples, &mut channels);

    let default_channel = hwc.map(|(_, n)| n).unwrap_or_default();
    let head = channels
        .get(&default_channel)
        .and_then(|c| super::validate::channel_head(c.entries.iter()).ok())
        .and_then(|e| by_name.get(&e.name));
    let mut cfg = DeclarativeConfig::default();
    cfg.packages.push(Package {
        schema: SCHEMA_PACKAGE.into(),
        name: package,
        default_channel,
        icon: head.and_then(|r| r.icon.clone()),
        description: head.and_then(|r| r.description.clone()).unwrap_or_default(),
        ..Default::default()
    });
    cfg.channels.extend(channels.into_values());
    cfg.bundles.extend(rendered.into_values().map(|r| r.bundle));
    Ok(cfg)
}

/// Links entries: within each run of equal (archetype, kind, major), the last entry of every
/// minor stream replaces the last entry of the previous minor stream and skips every other
/// earlier entry of the run.
fn link(tuples: &mut [Tuple], channels: &mut BTreeMap<String, Channel>) {
    tuples.sort_by(|a, b| {
        (a.arch, a.kind)
            .cmp(&(b.arch, b.kind))
            .then_with(|| semver_range::compare(&a.version, &b.version))
    });
    let mut i = 0;
    while i < tuples.len() {
        let mut j = i;
        while j < tuples.len()
            && tuples[j].arch == tuples[i].arch
            && tuples[j].kind == tuples[i].kind
            && tuples[j].version.major == tuples[i].version.major
        {
            j += 1;
        }
        let run = &tuples[i..j];
        let mut prev_ymax: Option<&str> = None;
        for (k, t) in run.iter().enumerate() {
            let last_of_y = run
                .get(k + 1)
                .is_none_or(|n| n.version.minor != t.version.minor);
            if !last_of_y {
                continue;
            }
            let mut skips: Vec<String> = run[..k]
                .iter()
                .map(|x| x.name.clone())
                .filter(|n| Some(n.as_str()) != prev_ymax)
                .collect();
            skips.sort();
            skips.dedup();
            if let Some(e) = channels
                .get_mut(&t.channel)
                .and_then(|c| c.entries.get_mut(t.index))
            {
                e.replaces = prev_ymax.unwrap_or("").to_string();
                e.skips = skips;
            }
            prev_ymax = Some(&t.name);
        }
        i = j;
    }
}

/// The `olm.skipRange` annotation of a bundle's CSV, from its `olm.csv.metadata` or from the
/// CSV among its `olm.bundle.object`s.
pub fn csv_skip_range(b: &Bundle) -> Option<String> {
    use super::property::{CsvMetadata, TYPE_CSV_METADATA};
    const ANNOTATION: &str = "olm.skipRange";
    if let Some(meta) = b
        .properties
        .iter()
        .filter(|p| p.ty == TYPE_CSV_METADATA)
        .find_map(|p| p.value_as::<CsvMetadata>().ok())
    {
        return meta
            .annotations
            .get(ANNOTATION)?
            .as_str()
            .map(str::to_string);
    }
    b.csv_object().and_then(|csv| {
        csv.pointer("/metadata/annotations")?
            .get(ANNOTATION)?
            .as_str()
            .map(str::to_string)
    })
}

/// Copies each bundle's CSV `olm.skipRange` onto its channel entries that have none.
///
/// opm's semver template never writes `skipRange` (its entries get `replaces` and `skips`
/// only), so a catalog rendered from one loses the range its CSVs declare; maintainers add it
/// back after rendering (with yq, typically). This does that step, opt-in
/// (`--skip-range-from-csv`), so plain renders stay byte-identical to opm's.
pub fn skip_ranges_from_csvs(cfg: &mut DeclarativeConfig) {
    let ranges: HashMap<(&str, &str), String> = cfg
        .bundles
        .iter()
        .filter_map(|b| Some(((b.package.as_str(), b.name.as_str()), csv_skip_range(b)?)))
        .collect();
    let mut set: Vec<(usize, usize, String)> = Vec::new();
    for (ci, c) in cfg.channels.iter().enumerate() {
        for (ei, e) in c.entries.iter().enumerate() {
            if e.skip_range.is_empty()
                && let Some(r) = ranges.get(&(c.package.as_str(), e.name.as_str()))
            {
                set.push((ci, ei, r.clone()));
            }
        }
    }
    for (ci, ei, r) in set {
        cfg.channels[ci].entries[ei].skip_range = r;
    }
}

/// `IMAGE=DIR` pairs (`--bundle-dir`): render IMAGE from the local bundle directory DIR.
pub fn parse_bundle_dirs(
    list: &[String],
) -> Result<std::collections::BTreeMap<String, PathBuf>, TemplateError> {
    let mut out = std::collections::BTreeMap::new();
    for item in list {
        match item.rsplit_once('=') {
            Some((image, dir)) if !image.is_empty() && !dir.is_empty() => {
                out.insert(image.to_string(), PathBuf::from(dir));
            }
            _ => return Err(TemplateError::BundleDirArg(item.clone())),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundle(pkg: &str, v: &str) -> Bundle {
        Bundle {
            schema: SCHEMA_BUNDLE.into(),
            name: format!("{pkg}.v{v}"),
            package: pkg.into(),
            image: format!("quay.io/x/{pkg}:{v}"),
            properties: vec![super::super::property::Property::package(pkg, v)],
            ..Default::default()
        }
    }

    fn resolver(versions: &[&str]) -> BundleResolver {
        let mut r = BundleResolver::default();
        for v in versions {
            let b = bundle("foo", v);
            r.existing.insert(b.image.clone(), b);
        }
        r
    }

    fn entries(cfg: &DeclarativeConfig, ch: &str) -> Vec<(String, String, Vec<String>)> {
        cfg.channels
            .iter()
            .find(|c| c.name == ch)
            .unwrap()
            .entries
            .iter()
            .map(|e| (e.name.clone(), e.replaces.clone(), e.skips.clone()))
            .collect()
    }

    #[test]
    fn major_channel_linking_matches_opm() {
        let tpl: Value = serde_json::json!({
            "Schema": "olm.semver", "GenerateMajorChannels": true, "GenerateMinorChannels": false,
            "Candidate": {"Bundles": [
                {"Image": "quay.io/x/foo:2.0.1"}, {"Image": "quay.io/x/foo:2.1.0"},
                {"Image": "quay.io/x/foo:2.1.1"}, {"Image": "quay.io/x/foo:2.2.0"}]}
        });
        let p = Path::new("t.yaml");
        let t = parse_semver(p, &tpl).unwrap();
        let cfg = render_semver(p, &t, &resolver(&["2.0.1", "2.1.0", "2.1.1", "2.2.0"])).unwrap();
        assert_eq!(cfg.packages[0].default_channel, "candidate-v2");
        assert_eq!(
            entries(&cfg, "candidate-v2"),
            vec![
                ("foo.v2.0.1".into(), "".into(), vec![]),
                ("foo.v2.1.0".into(), "".into(), vec![]),
                (
                    "foo.v2.1.1".into(),
                    "foo.v2.0.1".into(),
                    vec!["foo.v2.1.0".to_string()]
                ),
                (
                    "foo.v2.2.0".into(),
                    "foo.v2.1.1".into(),
                    vec!["foo.v2.0.1".to_string(), "foo.v2.1.0".to_string()]
                ),
            ]
        );
    }

    #[test]
    fn skip_ranges_come_from_csv_metadata_and_bundle_objects() {
        use super::super::property::{Property, TYPE_CSV_METADATA};
        let mut cfg = render_semver(
            Path::new("t.yaml"),
            &parse_semver(
                Path::new("t.yaml"),
                &serde_json::json!({
                    "schema": "olm.semver", "generateMajorChannels": true,
                    "generateMinorChannels": false,
                    "stable": {"bundles": [{"image": "quay.io/x/foo:0.1.0"}, {"image": "quay.io/x/foo:0.2.0"}]}
                }),
            )
            .unwrap(),
            &resolver(&["0.1.0", "0.2.0"]),
        )
        .unwrap();
        assert!(
            cfg.channels[0]
                .entries
                .iter()
                .all(|e| e.skip_range.is_empty())
        );
        // 0.2.0 declares its range in olm.csv.metadata; 0.1.0 in the CSV among its objects.
        let csv = serde_json::json!({"kind": "ClusterServiceVersion",
            "metadata": {"annotations": {"olm.skipRange": "<0.1.0"}}});
        let data =
            base64::Engine::encode(&base64::engine::general_purpose::STANDARD, csv.to_string());
        for b in &mut cfg.bundles {
            if b.name == "foo.v0.2.0" {
                b.properties.push(Property::new(
                    TYPE_CSV_METADATA,
                    &serde_json::json!({"annotations": {"olm.skipRange": ">=0.1.0 <0.2.0"}}),
                ));
            } else {
                b.properties.push(Property::bundle_object(data.clone()));
            }
        }
        skip_ranges_from_csvs(&mut cfg);
        let ranges: Vec<(&str, &str)> = cfg.channels[0]
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.skip_range.as_str()))
            .collect();
        assert_eq!(
            ranges,
            vec![("foo.v0.1.0", "<0.1.0"), ("foo.v0.2.0", ">=0.1.0 <0.2.0")]
        );
        let report = super::super::validate::validate(&cfg);
        assert!(!report.has_errors(), "{}", report.to_text());
    }

    #[test]
    fn minor_channels_default_to_stable_high_water() {
        let tpl: Value = serde_json::json!({
            "schema": "olm.semver",
            "candidate": {"bundles": [{"image": "quay.io/x/foo:0.1.0"}, {"image": "quay.io/x/foo:0.2.0"}, {"image": "quay.io/x/foo:0.2.1"}]},
            "fast": {"bundles": [{"image": "quay.io/x/foo:0.1.0"}, {"image": "quay.io/x/foo:0.2.1"}]},
            "stable": {"bundles": [{"image": "quay.io/x/foo:0.1.0"}, {"image": "quay.io/x/foo:0.2.1"}]}
        });
        let p = Path::new("t.yaml");
        let t = parse_semver(p, &tpl).unwrap();
        assert!(t.generate_minor && !t.generate_major);
        let cfg = render_semver(p, &t, &resolver(&["0.1.0", "0.2.0", "0.2.1"])).unwrap();
        assert_eq!(cfg.packages[0].default_channel, "stable-v0.2");
        // The head of a minor channel replaces the previous minor channel's head.
        assert_eq!(
            entries(&cfg, "stable-v0.2"),
            vec![("foo.v0.2.1".into(), "foo.v0.1.0".into(), vec![])]
        );
        assert_eq!(
            entries(&cfg, "candidate-v0.2"),
            vec![
                ("foo.v0.2.0".into(), "".into(), vec![]),
                (
                    "foo.v0.2.1".into(),
                    "foo.v0.1.0".into(),
                    vec!["foo.v0.2.0".to_string()]
                )
            ]
        );
        let report = super::super::validate::validate(&cfg);
        assert!(!report.has_errors(), "{}", report.to_text());
    }

    #[test]
    fn semver_template_errors() {
        let p = Path::new("t.yaml");
        let e = parse_semver(p, &serde_json::json!({"schema": "olm.semver", "generateMajorChannels": true, "generateMinorChannels": false, "defaultChannelTypePreference": "minor"})).unwrap_err();
        assert!(e.to_string().contains("schema attribute mismatch"), "{e}");
        let e = parse_semver(p, &serde_json::json!({"schema": "olm.other"})).unwrap_err();
        assert!(e.to_string().contains("unknown schema"), "{e}");
        let e =
            parse_semver(p, &serde_json::json!({"schema": "olm.semver", "bogus": 1})).unwrap_err();
        assert!(e.to_string().contains("bogus"), "{e}");
        let t = parse_semver(p, &serde_json::json!({"schema": "olm.semver"})).unwrap();
        let e = render_semver(p, &t, &BundleResolver::default()).unwrap_err();
        assert!(e.to_string().contains("no bundles"), "{e}");
    }

    #[test]
    fn basic_template_rejects_extra_bundle_fields_and_renders_bundles() {
        let p = Path::new("t.yaml");
        let tpl = serde_json::json!({"schema": "olm.template.basic", "entries": [
            {"schema": "olm.package", "name": "foo", "defaultChannel": "stable"},
            {"schema": "olm.channel", "package": "foo", "name": "stable", "entries": [{"name": "foo.v0.1.0"}]},
            {"schema": "olm.bundle", "image": "quay.io/x/foo:0.1.0"}
        ]});
        let cfg = render_basic(p, &tpl, &resolver(&["0.1.0"])).unwrap();
        assert_eq!(cfg.bundles[0].name, "foo.v0.1.0");
        assert!(!super::super::validate::validate(&cfg).has_errors());
        let bad = serde_json::json!({"schema": "olm.template.basic", "entries": [
            {"schema": "olm.bundle", "image": "quay.io/x/foo:0.1.0", "name": "x"}]});
        let e = render_basic(p, &bad, &resolver(&["0.1.0"])).unwrap_err();
        assert!(
            e.to_string()
                .contains("unexpected fields present in basic template bundle")
        );
        let e = render_basic(p, &tpl, &BundleResolver::default()).unwrap_err();
        assert!(e.to_string().contains("--bundle-dir"), "{e}");
    }

    /// Go decodes struct fields case-insensitively: opm's semver README writes `Schema:`.
    #[test]
    fn template_keys_match_case_insensitively_the_last_one_winning() {
        let p = Path::new("t.yaml");
        let tpl = serde_json::json!({"Schema": "olm.template.basic", "ENTRIES": [
            {"schema": "olm.package", "name": "foo", "defaultChannel": "stable"}]});
        assert_eq!(TemplateKind::detect(p, &tpl).unwrap(), TemplateKind::Basic);
        let cfg = render_basic(p, &tpl, &BundleResolver::default()).unwrap();
        assert_eq!(cfg.packages[0].name, "foo");
        let twice = serde_json::json!({"schema": "olm.semver", "Schema": "olm.template.basic"});
        assert_eq!(
            TemplateKind::detect(p, &twice).unwrap(),
            TemplateKind::Basic
        );
    }
}
