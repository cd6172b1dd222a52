//! oc-mirror v2's `ImageSetConfiguration` (`mirror.openshift.io/v2alpha1`), read so that an
//! oc-mirror user's file works unchanged.
//!
//! What a catalog filter and a mirror act on is read into types: `mirror.operators[]` (each
//! catalog's selection, as a [`FilterSpec`]) and `mirror.blockedImages`. What oc-mirror
//! accepts but these commands do not act on (`mirror.platform`, `additionalImages`, `helm`,
//! `samples`, `archiveSize`, an operator's `skipDependencies`, `platforms`,
//! `targetCatalogSourceTemplate`) is accepted and listed in [`ImageSetConfig::ignored`], for
//! a warning. A field oc-mirror does not know is refused, as oc-mirror refuses it; so are
//! the mistakes oc-mirror's config validation refuses, with its messages, each naming the
//! file and the field.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::spec::{ChannelFilter, FilterSpec, PackageFilter, Select, UnknownNames};
use crate::grammar::mm_semver::{Bounds, LooseVersion};
use crate::yaml::{self, YamlError};

pub const API_VERSION: &str = "mirror.openshift.io/v2alpha1";
pub const KIND: &str = "ImageSetConfiguration";

/// The parts of an ImageSetConfiguration that filtering and mirroring act on.
#[derive(Debug, Clone)]
pub struct ImageSetConfig {
    /// `mirror.operators[]`, in file order.
    pub catalogs: Vec<CatalogSelection>,
    pub blocked_images: BlockedImages,
    /// Fields accepted but not acted on, as paths (`mirror.platform`,
    /// `mirror.operators[0].skipDependencies`).
    pub ignored: Vec<String>,
}

/// One `mirror.operators[]` entry.
#[derive(Debug, Clone)]
pub struct CatalogSelection {
    /// The catalog image, as written (`registry/repo:tag`, `docker://...`, `oci:///path`).
    pub catalog: String,
    /// Where the mirrored catalog goes instead of the source's repository path.
    pub target_catalog: Option<String>,
    /// The tag the mirrored catalog gets instead of the source's.
    pub target_tag: Option<String>,
    pub spec: FilterSpec,
}

impl CatalogSelection {
    /// Whether `source` (a command-line catalog image) is this entry's catalog: compared
    /// without a `docker://` transport, and with `oci://` read as `oci:`.
    pub fn names(&self, source: &str) -> bool {
        fn plain(s: &str) -> &str {
            s.strip_prefix("docker://").unwrap_or(s)
        }
        fn oci(s: &str) -> Option<&str> {
            s.strip_prefix("oci://").or_else(|| s.strip_prefix("oci:"))
        }
        match (oci(&self.catalog), oci(source)) {
            (Some(a), Some(b)) => a.trim_end_matches('/') == b.trim_end_matches('/'),
            (None, None) => plain(&self.catalog) == plain(source),
            _ => false,
        }
    }
}

/// `mirror.blockedImages`: images a mirror leaves out.
#[derive(Debug, Clone, Default)]
pub struct BlockedImages {
    patterns: Vec<(String, regex::Regex)>,
}

impl BlockedImages {
    /// Compiles each `name` as a regular expression, as oc-mirror's config validation does.
    pub fn new(patterns: &[String]) -> Result<BlockedImages, String> {
        let mut out = Vec::with_capacity(patterns.len());
        for p in patterns {
            let re = regex::Regex::new(p)
                .map_err(|e| format!("blocked image {p:?}: invalid regular expression: {e}"))?;
            out.push((p.clone(), re));
        }
        Ok(BlockedImages { patterns: out })
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether oc-mirror leaves `reference` out. As its `excludeImages` does: a transport
    /// (`docker://`, `oci://`) is cut off at the first `://`, and each pattern is searched
    /// anywhere in the rest (Go's `regexp.MatchString`, unanchored: `alpine` blocks
    /// `docker.io/library/alpine:3` and `quay.io/x/notalpine`). oc-mirror tests an image's
    /// source and its mirrored destination: call this with both.
    pub fn is_blocked(&self, reference: &str) -> bool {
        self.blocking(reference).is_some()
    }

    /// The first pattern that blocks `reference`.
    pub fn blocking(&self, reference: &str) -> Option<&str> {
        let r = match reference.split_once("://") {
            Some((_, rest)) => rest.split("://").next().unwrap_or(rest),
            None => reference,
        };
        self.patterns
            .iter()
            .find(|(_, re)| re.is_match(r))
            .map(|(p, _)| p.as_str())
    }
}

/// An ImageSetConfiguration that cannot be used: every problem, each with its field.
#[derive(Debug, thiserror::Error)]
pub enum IscError {
    #[error(transparent)]
    Read(#[from] YamlError),
    #[error("{}", problems_text(file, problems))]
    Invalid {
        file: PathBuf,
        /// `(field path, message)`.
        problems: Vec<(String, String)>,
    },
}

fn problems_text(file: &Path, problems: &[(String, String)]) -> String {
    let line = |(field, message): &(String, String)| match field.is_empty() {
        true => format!("{}: {message}", file.display()),
        false => format!("{}: {field}: {message}", file.display()),
    };
    problems.iter().map(line).collect::<Vec<_>>().join("\n")
}

impl ImageSetConfig {
    /// Reads and checks an ImageSetConfiguration file (YAML or JSON).
    pub fn load(path: &Path) -> Result<ImageSetConfig, IscError> {
        let bytes = yaml::read_file(path)?;
        let text = yaml::utf8(path, &bytes)?;
        ImageSetConfig::parse(path, text)
    }

    /// Reads and checks the text of an ImageSetConfiguration; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<ImageSetConfig, IscError> {
        let doc: Value = yaml::parse_one(path, text)?;
        let mut r = Reader::default();
        let cfg = r.config(&doc);
        match r.problems.is_empty() {
            true => Ok(cfg),
            false => Err(IscError::Invalid {
                file: path.to_path_buf(),
                problems: r.problems,
            }),
        }
    }
}

/// Walks the document, collecting problems and ignored fields.
#[derive(Default)]
struct Reader {
    problems: Vec<(String, String)>,
    ignored: Vec<String>,
}

impl Reader {
    fn problem(&mut self, field: &str, message: impl Into<String>) {
        self.problems.push((field.to_string(), message.into()));
    }

    /// The mapping at `field`, its unknown keys refused and its known-but-ignored keys noted.
    fn object<'v>(
        &mut self,
        v: &'v Value,
        field: &str,
        known: &[&str],
        ignored: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Value::Object(m) = v else {
            self.problem(field, format!("expected a mapping, found {}", kind(v)));
            return None;
        };
        for (k, val) in m {
            let at = join(field, k);
            if ignored.contains(&k.as_str()) {
                if !is_empty(val) {
                    self.ignored.push(at);
                }
            } else if !known.contains(&k.as_str()) {
                self.problem(&at, "unknown field (oc-mirror v2 refuses it too)");
            }
        }
        Some(m)
    }

    fn string(&mut self, m: &Map<String, Value>, field: &str, key: &str) -> Option<String> {
        match m.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(v) => {
                let hint = match v {
                    Value::Number(_) => " (quote it: YAML reads it as a number)",
                    _ => "",
                };
                self.problem(
                    &join(field, key),
                    format!("expected a string, found {}{hint}", kind(v)),
                );
                None
            }
        }
    }

    fn boolean(&mut self, m: &Map<String, Value>, field: &str, key: &str) -> bool {
        match m.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                self.problem(
                    &join(field, key),
                    format!("expected true or false, found {}", kind(v)),
                );
                false
            }
        }
    }

    fn list<'v>(&mut self, m: &'v Map<String, Value>, field: &str, key: &str) -> &'v [Value] {
        match m.get(key) {
            None | Some(Value::Null) => &[],
            Some(Value::Array(a)) => a,
            Some(v) => {
                self.problem(
                    &join(field, key),
                    format!("expected a list, found {}", kind(v)),
                );
                &[]
            }
        }
    }

    fn config(&mut self, doc: &Value) -> ImageSetConfig {
        let mut cfg = ImageSetConfig {
            catalogs: Vec::new(),
            blocked_images: BlockedImages::default(),
            ignored: Vec::new(),
        };
        let Some(top) = self.object(doc, "", &["apiVersion", "kind", "mirror"], &["archiveSize"])
        else {
            return cfg;
        };
        match self.string(top, "", "kind") {
            None => self.problem("kind", "configuration missing `kind`"),
            Some(k) if k == KIND => {}
            Some(k) => self.problem("kind", format!("cannot parse {k:?} as {KIND:?}")),
        }
        match self.string(top, "", "apiVersion") {
            Some(a) if a == API_VERSION => {}
            found => {
                let found = found.map_or("nothing".to_string(), |a| format!("{a:?}"));
                self.problem(
                    "apiVersion",
                    format!("expected {API_VERSION:?} (oc-mirror v2's ImageSetConfiguration), found {found}"),
                );
            }
        }
        if top.contains_key("delete") {
            self.problems.retain(|(f, _)| f != "delete");
            self.problem("delete", format!("delete: is not allowed in {KIND}"));
        }
        let Some(mirror) = top.get("mirror") else {
            self.problem("mirror", "configuration missing the `mirror` stanza");
            return cfg;
        };
        let Some(mirror) = self.object(
            mirror,
            "mirror",
            &["operators", "blockedImages"],
            &["platform", "additionalImages", "helm", "samples"],
        ) else {
            return cfg;
        };
        let mut names = Vec::new();
        for (i, op) in self.list(mirror, "mirror", "operators").iter().enumerate() {
            let field = format!("mirror.operators[{i}]");
            cfg.catalogs.extend(self.catalog(op, &field));
            // oc-mirror's unique name of a catalog: where it comes from and where it goes.
            let name = ["catalog", "targetCatalog", "targetTag"].map(|k| op.get(k).cloned());
            if names.contains(&name) {
                let catalog = op
                    .get("catalog")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                self.problem(
                    &field,
                    format!("catalog {catalog:?}: duplicate found in configuration"),
                );
            }
            names.push(name);
        }
        let mut patterns = Vec::new();
        for (i, b) in self
            .list(mirror, "mirror", "blockedImages")
            .iter()
            .enumerate()
        {
            let field = format!("mirror.blockedImages[{i}]");
            let Some(m) = self.object(b, &field, &["name"], &[]) else {
                continue;
            };
            match self.string(m, &field, "name") {
                Some(p) => match regex::Regex::new(&p) {
                    Ok(_) => patterns.push(p),
                    Err(e) => self.problem(
                        &join(&field, "name"),
                        format!("blocked image {p:?}: invalid regular expression: {e}"),
                    ),
                },
                None => self.problem(&join(&field, "name"), "required"),
            }
        }
        cfg.blocked_images = BlockedImages::new(&patterns).unwrap_or_default();
        cfg.ignored = std::mem::take(&mut self.ignored);
        cfg
    }

    fn catalog(&mut self, op: &Value, field: &str) -> Option<CatalogSelection> {
        let before = self.problems.len();
        let m = self.object(
            op,
            field,
            &["catalog", "full", "targetCatalog", "targetTag", "packages"],
            &[
                "skipDependencies",
                "targetCatalogSourceTemplate",
                "platforms",
            ],
        )?;
        let catalog = self.string(m, field, "catalog").unwrap_or_default();
        if catalog.is_empty() {
            self.problem(&join(field, "catalog"), "required");
        }
        let full = self.boolean(m, field, "full");
        let target_catalog = self.string(m, field, "targetCatalog");
        let target_tag = self.string(m, field, "targetTag");
        let mut packages: Vec<PackageFilter> = Vec::new();
        for (j, p) in self.list(m, field, "packages").iter().enumerate() {
            let at = format!("{field}.packages[{j}]");
            let Some(p) = self.package(p, &at, &catalog, j) else {
                continue;
            };
            if packages.iter().any(|q| q.name == p.name) {
                self.problem(
                    &at,
                    format!("catalog {catalog:?}: duplicate package entry {:?}", p.name),
                );
                continue;
            }
            packages.push(p);
        }
        if self.problems.len() > before {
            // Already said in oc-mirror's words; the spec's own check would repeat it.
            return None;
        }
        match FilterSpec::new(full, packages) {
            Ok(spec) => Some(CatalogSelection {
                catalog,
                target_catalog,
                target_tag,
                // oc-mirror selects what exists of the names listed.
                spec: spec.with_unknown_names(UnknownNames::Ignore),
            }),
            Err(e) => {
                self.problem(field, format!("catalog {catalog:?}: {e}"));
                None
            }
        }
    }

    fn package(
        &mut self,
        p: &Value,
        field: &str,
        catalog: &str,
        index: usize,
    ) -> Option<PackageFilter> {
        let m = self.object(
            p,
            field,
            &[
                "name",
                "channels",
                "defaultChannel",
                "minVersion",
                "maxVersion",
            ],
            &[],
        )?;
        let name = self.string(m, field, "name").unwrap_or_default();
        let who = format!("catalog {catalog:?}: operator {name:?}");
        let range = self.range(m, field, &who);
        let mut channels: Vec<ChannelFilter> = Vec::new();
        for (k, c) in self.list(m, field, "channels").iter().enumerate() {
            let at = format!("{field}.channels[{k}]");
            let Some(cm) = self.object(c, &at, &["name", "minVersion", "maxVersion"], &[]) else {
                continue;
            };
            let cname = self.string(cm, &at, "name").unwrap_or_default();
            let crange = self.range(cm, &at, &format!("{who}: channel {cname:?}"));
            if cname.is_empty() {
                self.problem(
                    &join(&at, "name"),
                    format!("package {name:?} at index [{index}] is invalid: channel {cname:?} at index [{k}] is invalid: name must be specified"),
                );
            } else if channels.iter().any(|d| d.name == cname) {
                self.problem(&at, format!("{who}: duplicate channel entry {cname:?}"));
            }
            if crange.is_some() && range.is_some() {
                self.problem(&at, format!("{who}: mixing both filtering by minVersion/maxVersion and filtering by channel minVersion/maxVersion is not allowed"));
            }
            channels.push(ChannelFilter {
                name: cname,
                range: crange,
            });
        }
        if name.is_empty() {
            self.problem(
                &join(field, "name"),
                format!("package {name:?} at index [{index}] is invalid: name must be specified"),
            );
            return None;
        }
        Some(PackageFilter {
            name,
            default_channel: self
                .string(m, field, "defaultChannel")
                .filter(|d| !d.is_empty()),
            select: range.map_or(Select::Heads, Select::Range),
            channels,
        })
    }

    /// `minVersion`/`maxVersion`, each a version Masterminds' `NewVersion` accepts.
    fn range(&mut self, m: &Map<String, Value>, field: &str, who: &str) -> Option<Bounds> {
        let mut bound = |key: &str| {
            let s = self.string(m, field, key).filter(|s| !s.is_empty())?;
            LooseVersion::parse(&s)
                .map_err(|_| {
                    self.problem(
                        &join(field, key),
                        format!("{who}: {key} {s:?} must respect semantic versioning notation"),
                    );
                })
                .ok()
        };
        let (min, max) = (bound("minVersion"), bound("maxVersion"));
        Bounds::new(min, max)
    }
}

fn join(field: &str, key: &str) -> String {
    match field.is_empty() {
        true => key.to_string(),
        false => format!("{field}.{key}"),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Bool(b) => !b,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
