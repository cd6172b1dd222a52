//! Reading a catalog directory the way opm's `declcfg.LoadFS` does.
//!
//! The directory is walked recursively; `.indexignore` files (gitignore syntax, applying below
//! their directory) and the paths they match are skipped; every other file is parsed whatever
//! its extension. A file whose first non-space byte is `{` is a stream of JSON objects,
//! otherwise it is YAML documents separated by `---` lines (the Kubernetes decoder's rule).
//!
//! Memory: each file is read, split into documents and each document parsed and converted into
//! its typed blob on its own, so the peak is one file's text plus what the catalog keeps, not
//! a whole-catalog syntax tree. Files are parsed on all cores and merged in path order, so the
//! result is deterministic.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::declcfg::{
    Bundle, Channel, DeclarativeConfig, Deprecation, Meta, Package, SCHEMA_BUNDLE, SCHEMA_CHANNEL,
    SCHEMA_DEPRECATIONS, SCHEMA_PACKAGE, Source,
};
use super::ignore::IgnoreSet;
use super::property::{Property, TYPE_BUNDLE_OBJECT, TYPE_CSV_METADATA};
use crate::confined::{self, EntryKind, RelPath, Tree};
use crate::yaml::{self, PropertyRead, YamlError};

/// A catalog file or blob that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Yaml(#[from] YamlError),
    #[error("{at}: {message}")]
    Blob { at: Source, message: String },
    #[error("{0}: no such file or directory")]
    Missing(PathBuf),
    #[error("{0}: a symbolic link that leads out of the image or archive being read; refused")]
    Outside(PathBuf),
}

/// All the files that failed, in path order.
#[derive(Debug, thiserror::Error)]
pub struct LoadErrors(pub Vec<LoadError>);

impl std::fmt::Display for LoadErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// What a load keeps of each bundle's `olm.csv.metadata`, the bulk of a modern catalog.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Keep {
    /// Everything, verbatim (render, serve, templates).
    #[default]
    All,
    /// The upgrade graph and what validation reads: an `olm.csv.metadata` value that is an
    /// object becomes `{}`, and an `olm.bundle.object` whose data is base64 gets empty data,
    /// as soon as its file is read (validation checks no more than that), so `validate`,
    /// `graph` and `upgrade-path` hold little more than the graph.
    Structure,
}

/// Loads every catalog file under `root` (or `root` itself when it is a file), a directory
/// the user named.
pub fn load_dir(root: &Path) -> Result<DeclarativeConfig, LoadErrors> {
    load_dir_keeping(root, Keep::All)
}

/// [`load_dir`], keeping only what `keep` says.
pub fn load_dir_keeping(root: &Path, keep: Keep) -> Result<DeclarativeConfig, LoadErrors> {
    load_tree_keeping(&Tree::host(root), keep)
}

/// Loads every catalog file of `tree` (an unpacked image's configs, confined to the image).
pub fn load_tree(tree: &Tree) -> Result<DeclarativeConfig, LoadErrors> {
    load_tree_keeping(tree, Keep::All)
}

/// [`load_tree`], keeping only what `keep` says.
pub fn load_tree_keeping(tree: &Tree, keep: Keep) -> Result<DeclarativeConfig, LoadErrors> {
    load_tree_with(tree, keep, |_, _| ()).map(|(cfg, _)| cfg)
}

/// [`load_dir`] with [`load_files_with`]'s `per_file`.
pub fn load_dir_with<T: Send>(
    root: &Path,
    keep: Keep,
    per_file: impl Fn(&[u8], &mut DeclarativeConfig) -> T + Sync,
) -> Result<(DeclarativeConfig, Vec<T>), LoadErrors> {
    load_tree_with(&Tree::host(root), keep, per_file)
}

/// [`load_files_with`] for the catalog files of `tree`.
pub fn load_tree_with<T: Send>(
    tree: &Tree,
    keep: Keep,
    per_file: impl Fn(&[u8], &mut DeclarativeConfig) -> T + Sync,
) -> Result<(DeclarativeConfig, Vec<T>), LoadErrors> {
    let files = catalog_files(tree).map_err(|e| LoadErrors(vec![e]))?;
    load_files_with(tree, &files, keep, per_file)
}

/// One catalog file of a [`Tree`]: where it is in the tree (what is opened) and its path as
/// messages show it (what errors and blob sources name).
#[derive(Debug, Clone)]
pub struct CatalogFile {
    pub rel: RelPath,
    pub path: PathBuf,
}

/// The files opm would read in `tree`, sorted by path (the tree itself when it is a file).
pub fn catalog_files(tree: &Tree) -> Result<Vec<CatalogFile>, LoadError> {
    let root = RelPath::root();
    let meta = tree
        .metadata(&root)
        .map_err(|e| match confined::is_escape(&e) {
            true => LoadError::Outside(tree.shown_root()),
            false => LoadError::Missing(tree.shown_root()),
        })?;
    if meta.kind == EntryKind::File {
        return Ok(vec![CatalogFile {
            path: tree.shown_root(),
            rel: root,
        }]);
    }
    let mut out = Vec::new();
    let mut ignores = IgnoreSet::default();
    walk(tree, &root, &mut ignores, &mut out)?;
    Ok(out)
}

fn walk(
    tree: &Tree,
    dir: &RelPath,
    ignores: &mut IgnoreSet,
    out: &mut Vec<CatalogFile>,
) -> Result<(), LoadError> {
    let io = |rel: &RelPath, source| {
        LoadError::Yaml(YamlError::Io {
            path: tree.shown(rel),
            source,
        })
    };
    let entries = tree.read_dir(dir).map_err(|e| io(dir, e))?;
    let rel_dir = dir.as_relative_path();
    let ignore_file = dir
        .child(std::ffi::OsStr::new(".indexignore"))
        .map_err(|e| io(dir, std::io::Error::other(e)))?;
    let pushed = if tree.is_file(&ignore_file) {
        let text = tree
            .read(&ignore_file)
            .and_then(|b| String::from_utf8(b).map_err(std::io::Error::other))
            .map_err(|e| io(&ignore_file, e))?;
        ignores.push(rel_dir.clone(), &text);
        true
    } else {
        false
    };
    for (name, kind) in entries {
        if name == ".indexignore" {
            continue;
        }
        let Ok(rel) = dir.child(&name) else {
            continue;
        };
        // Symlinked directories are not followed (no loops); symlinked files are read.
        let is_dir = kind == EntryKind::Dir;
        // host: not a host path, the entry's path below the tree for .indexignore's patterns
        if ignores.is_ignored(&rel_dir.join(&name), is_dir) {
            continue;
        }
        if is_dir {
            walk(tree, &rel, ignores, out)?;
            continue;
        }
        let file = match kind {
            EntryKind::File => true,
            EntryKind::Symlink => match tree.metadata(&rel) {
                Ok(m) => m.kind == EntryKind::File,
                // A link out of a confined tree: said, not skipped like a dangling one.
                Err(e) if confined::is_escape(&e) => {
                    return Err(LoadError::Outside(tree.shown(&rel)));
                }
                Err(_) => false,
            },
            _ => false,
        };
        if file {
            out.push(CatalogFile {
                path: tree.shown(&rel),
                rel,
            });
        }
    }
    if pushed {
        ignores.pop();
    }
    Ok(())
}

/// Parses the files of `tree` on all cores and merges them in the given order.
pub fn load_files(tree: &Tree, files: &[CatalogFile]) -> Result<DeclarativeConfig, LoadErrors> {
    load_files_keeping(tree, files, Keep::All)
}

/// [`load_files`], keeping only what `keep` says.
pub fn load_files_keeping(
    tree: &Tree,
    files: &[CatalogFile],
    keep: Keep,
) -> Result<DeclarativeConfig, LoadErrors> {
    load_files_with(tree, files, keep, |_, _| ()).map(|(cfg, _)| cfg)
}

/// [`load_files_keeping`], also handing each file's bytes and blobs to `per_file`, on the
/// core that read them, and giving its results in `files` order. What `per_file` takes out of
/// the blobs is never held for the whole catalog (validation checks each bundle's properties
/// there, then drops them).
pub fn load_files_with<T: Send>(
    tree: &Tree,
    files: &[CatalogFile],
    keep: Keep,
    per_file: impl Fn(&[u8], &mut DeclarativeConfig) -> T + Sync,
) -> Result<(DeclarativeConfig, Vec<T>), LoadErrors> {
    // Largest files first, so that a big file met last does not keep one core busy while
    // the others idle (the results are in `files` order all the same). A file whose size is
    // unknown weighs nothing here; reading it reports why.
    let size = |file: &CatalogFile| tree.metadata(&file.rel).map_or(0, |m| m.len);
    let results = crate::parallel::map_heaviest_first(files, size, |file| {
        with_file_bytes(tree, file, |bytes| {
            let mut cfg = load_bytes_keeping(&file.path, bytes, keep)?;
            let extra = per_file(bytes, &mut cfg);
            Ok::<_, LoadError>((cfg, extra))
        })?
    });
    tracing::debug!(files = files.len(), "parsed");
    let mut cfg = DeclarativeConfig::default();
    let mut extras = Vec::with_capacity(files.len());
    let mut errors = Vec::new();
    for r in results {
        match r {
            Ok((c, extra)) => {
                cfg.merge(c);
                extras.push(extra);
            }
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() {
        Ok((cfg, extras))
    } else {
        Err(LoadErrors(errors))
    }
}

/// Calls `f` with the content of `file`, read into a buffer this thread keeps: the loaders
/// hand the heaviest file out first, so the buffer is sized once and its pages are touched
/// once (fresh pages for every file cost more in page faults than reading them).
pub fn with_file_bytes<R>(
    tree: &Tree,
    file: &CatalogFile,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, LoadError> {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with_borrow_mut(|bytes| {
        tree.read_into(&file.rel, bytes)
            .map_err(|source| match confined::is_escape(&source) {
                true => LoadError::Outside(file.path.clone()),
                false => LoadError::Yaml(YamlError::Io {
                    path: file.path.clone(),
                    source,
                }),
            })?;
        Ok(f(bytes))
    })
}

/// Reads and parses one catalog file.
pub fn load_file(path: &Path) -> Result<DeclarativeConfig, LoadError> {
    let bytes = yaml::read_file(path)?;
    load_bytes(path, &bytes)
}

/// Parses the bytes of one catalog file named `path` (used by the fuzzer too).
pub fn load_bytes(path: &Path, bytes: &[u8]) -> Result<DeclarativeConfig, LoadError> {
    load_bytes_keeping(path, bytes, Keep::All)
}

/// [`load_bytes`], keeping only what `keep` says.
fn load_bytes_keeping(
    path: &Path,
    bytes: &[u8],
    keep: Keep,
) -> Result<DeclarativeConfig, LoadError> {
    load_bytes_reading(path, bytes, keep, true)
}

/// [`load_bytes_keeping`]; `lean` lets [`Keep::Structure`] skip building what it drops
/// (tests compare with `false`, building everything).
fn load_bytes_reading(
    path: &Path,
    bytes: &[u8],
    keep: Keep,
    lean: bool,
) -> Result<DeclarativeConfig, LoadError> {
    let mut cfg = DeclarativeConfig::default();
    read_blobs(
        path,
        bytes,
        keep,
        lean,
        &mut cfg,
        |_| Ok::<_, LoadError>(()),
    )?;
    Ok(cfg)
}

/// Parses the bytes of one catalog file named `path` blob by blob: each is added to a config
/// and `each` called with it, so it can take the blob out (and write it) before the next one
/// is read. A file is so never held as a whole catalog, only as its text.
pub fn for_each_blob<E: From<LoadError>>(
    path: &Path,
    bytes: &[u8],
    each: impl FnMut(&mut DeclarativeConfig) -> Result<(), E>,
) -> Result<(), E> {
    let mut cfg = DeclarativeConfig::default();
    read_blobs(path, bytes, Keep::All, true, &mut cfg, each)
}

/// Adds the blobs of the file to `cfg`, calling `each` after each one. The file is read as
/// opm reads it (`yaml::documents`: a JSON stream or YAML documents, Go's rules for both).
fn read_blobs<E: From<LoadError>>(
    path: &Path,
    bytes: &[u8],
    keep: Keep,
    lean: bool,
    cfg: &mut DeclarativeConfig,
    mut each: impl FnMut(&mut DeclarativeConfig) -> Result<(), E>,
) -> Result<(), E> {
    let file: Arc<Path> = Arc::from(path);
    for chunk in yaml::documents(path, bytes) {
        let chunk = chunk.map_err(LoadError::from)?;
        let line = chunk.line();
        let (value, values) = match keep {
            _ if !lean => (chunk.value().map_err(LoadError::from)?, Vec::new()),
            // Property values are written as JSON text as they are read, never built as
            // trees; with `Keep::Structure`, the `olm.csv.metadata` values `lighten`
            // would empty are not even written (most of a modern catalog's nodes). In a
            // blob where `lighten` would not empty them, the document is read again, whole.
            _ => {
                let again = chunk.yaml_copy();
                let read = chunk
                    .blob(keep == Keep::Structure)
                    .map_err(LoadError::from)?;
                match (
                    read.skipped && !lightened_anyway(&read.value, &read.values),
                    again,
                ) {
                    (true, Some(again)) => (again.value().map_err(LoadError::from)?, Vec::new()),
                    _ => (read.value, read.values),
                }
            }
        };
        if value.is_null() {
            continue;
        }
        let source = Source::new(file.clone(), line);
        add_blob_reading(cfg, value, values, source, keep)?;
        each(cfg)?;
    }
    Ok(())
}

fn blob_err(source: &Source, message: impl Into<String>) -> LoadError {
    LoadError::Blob {
        at: source.clone(),
        message: message.into(),
    }
}

/// The `schema`, `package` and `name` of a blob, keys matched case-insensitively like opm's
/// `Meta`.
fn meta_keys(obj: &Map<String, Value>, source: &Source) -> Result<[String; 3], LoadError> {
    let mut out: [String; 3] = Default::default();
    // Go's field matching folds case; ASCII keys (all of them, in practice) without
    // allocating a lowercase copy.
    let folds_to = |k: &str, key: &str| match k.is_ascii() {
        true => k.eq_ignore_ascii_case(key),
        false => k.to_lowercase() == key,
    };
    for (i, key) in ["schema", "package", "name"].iter().enumerate() {
        let mut matching = obj.iter().filter(|(k, _)| folds_to(k, key));
        let first = matching.next();
        if first.is_some() && matching.next().is_some() {
            let found: Vec<(&String, &Value)> =
                obj.iter().filter(|(k, _)| folds_to(k, key)).collect();
            let names: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
            return Err(blob_err(
                source,
                format!("duplicate keys for key {key:?}: {names:?}"),
            ));
        }
        if let Some((_, v)) = first {
            match v {
                Value::String(s) => out[i] = s.clone(),
                Value::Null => {}
                other => {
                    return Err(blob_err(
                        source,
                        format!("expected value for key {key:?} to be a string, got {other}"),
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// Renames top-level keys that differ only in case from a known field (Go's JSON decoding
/// matches field names case-insensitively).
fn canonicalize(obj: &mut Map<String, Value>, fields: &[&str]) {
    if obj.keys().all(|k| fields.contains(&k.as_str())) {
        return;
    }
    let keys: Vec<String> = obj.keys().cloned().collect();
    for k in keys {
        if fields.contains(&k.as_str()) {
            continue;
        }
        if let Some(f) = fields.iter().find(|f| f.eq_ignore_ascii_case(&k))
            && !obj.contains_key(*f)
            && let Some(v) = obj.remove(&k)
        {
            obj.insert((*f).to_string(), v);
        }
    }
}

fn typed<T: serde::de::DeserializeOwned>(
    value: Value,
    what: &str,
    source: &Source,
) -> Result<T, LoadError> {
    serde_json::from_value(value).map_err(|e| blob_err(source, format!("parse {what}: {e}")))
}

/// Rebuilds every object and list at its exact size. Parsers grow maps and vectors by
/// doubling, so a catalog kept in memory would otherwise carry spare capacity in most of its
/// nodes.
pub fn compact(value: Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m {
                out.insert(k, compact(v));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(compact).collect()),
        Value::String(mut s) => {
            s.shrink_to_fit();
            Value::String(s)
        }
        other => other,
    }
}

/// Converts one parsed document into its blob and adds it to `cfg`.
pub fn add_blob(
    cfg: &mut DeclarativeConfig,
    value: Value,
    source: Source,
) -> Result<(), LoadError> {
    add_blob_keeping(cfg, value, source, Keep::All)
}

/// [`add_blob`], keeping only what `keep` says.
fn add_blob_keeping(
    cfg: &mut DeclarativeConfig,
    value: Value,
    source: Source,
    keep: Keep,
) -> Result<(), LoadError> {
    add_blob_reading(cfg, value, Vec::new(), source, keep)
}

/// [`add_blob_keeping`] for a blob whose property values may have been read as JSON text
/// ([`yaml::BlobRead::values`], one entry per item of `properties`, the tree holding `null`
/// where an entry is given). The blob becomes what its whole tree would give.
fn add_blob_reading(
    cfg: &mut DeclarativeConfig,
    mut value: Value,
    mut values: Vec<Option<PropertyRead>>,
    source: Source,
    keep: Keep,
) -> Result<(), LoadError> {
    if !values.is_empty() && !raw_values_apply(&value, &values) {
        // Only plain bundle properties take the text; anywhere else the tree is made whole.
        restore_values(&mut value, std::mem::take(&mut values));
    }
    let Value::Object(mut obj) = value else {
        return Err(blob_err(
            &source,
            format!(
                "expected an object (a catalog blob), got {}",
                kind_of(&value)
            ),
        ));
    };
    let [schema, package, name] = meta_keys(&obj, &source)?;
    if schema.is_empty() {
        let shown = if name.is_empty() {
            "<unnamed>".to_string()
        } else {
            name.clone()
        };
        return Err(blob_err(
            &source,
            format!("object '{shown}' is missing root schema field"),
        ));
    }
    match schema.as_str() {
        SCHEMA_PACKAGE => {
            canonicalize(
                &mut obj,
                &[
                    "schema",
                    "name",
                    "defaultChannel",
                    "icon",
                    "description",
                    "properties",
                ],
            );
            let mut p: Package = typed(Value::Object(obj), "package", &source)?;
            if let Some(icon) = &p.icon
                && !icon.data.is_empty()
                && crate::grammar::go_base64::decode(&icon.data).is_none()
            {
                return Err(blob_err(
                    &source,
                    format!(
                        "parse package: icon.base64data of package {:?} is not valid base64",
                        p.name
                    ),
                ));
            }
            p.source = source;
            cfg.packages.push(p);
        }
        SCHEMA_CHANNEL => {
            canonicalize(
                &mut obj,
                &["schema", "name", "package", "entries", "properties"],
            );
            let mut c: Channel = typed(Value::Object(obj), "channel", &source)?;
            c.source = source;
            cfg.channels.push(c);
        }
        SCHEMA_BUNDLE => {
            canonicalize(
                &mut obj,
                &[
                    "schema",
                    "name",
                    "package",
                    "image",
                    "properties",
                    "relatedImages",
                ],
            );
            // Properties hold most of a catalog's bytes: converted straight from the tree
            // when they all have the plain shape (serde's path reports any other).
            let plain = match obj.get_mut("properties") {
                Some(Value::Array(items)) if all_plain(items, &values) => {
                    Some(std::mem::take(items))
                }
                _ => None,
            };
            let mut b: Bundle = typed(Value::Object(obj), "bundle", &source)?;
            // Any other shape of `properties` failed to deserialise above, so every bundle's
            // properties come through here. `Keep::Structure` empties what validation does
            // not read before it is ever serialised: each `olm.csv.metadata` once it is known
            // to be an object, and each `olm.bundle.object`'s `data` once it is known to be
            // base64 (a value that fails is kept, so validation reports it).
            if let Some(mut items) = plain {
                let mut values = values.into_iter();
                b.properties = Vec::with_capacity(items.len());
                for mut item in items.drain(..) {
                    let read = match values.next().flatten() {
                        Some(PropertyRead::Value(json)) => {
                            property_from_text(type_of(&item), json, keep)
                        }
                        Some(PropertyRead::Item {
                            ty,
                            value: Some(json),
                            ..
                        }) => property_from_text(ty, json, keep),
                        Some(PropertyRead::Item {
                            ty, value: None, ..
                        }) => Property::from_tree(serde_json::json!({ "type": ty })).ok(),
                        None => {
                            if keep == Keep::Structure {
                                lighten(&mut item);
                            }
                            Property::from_tree(item).ok()
                        }
                    };
                    b.properties.extend(read);
                }
            }
            b.source = source;
            cfg.bundles.push(b);
        }
        SCHEMA_DEPRECATIONS => {
            canonicalize(&mut obj, &["schema", "package", "entries"]);
            let mut d: Deprecation = typed(Value::Object(obj), "deprecations", &source)?;
            d.source = source;
            cfg.deprecations.push(d);
        }
        // Only blobs of unknown schemas are kept as trees; known ones become typed structs
        // whose property values are raw JSON text.
        _ => cfg.others.push(Meta {
            schema,
            package,
            name,
            blob: compact(Value::Object(obj)),
            source,
        }),
    }
    Ok(())
}

/// Whether property values read as text can go straight into `blob`'s properties: it is a
/// bundle whose `properties` are all plain, one entry of `values` per item.
fn raw_values_apply(blob: &Value, values: &[Option<PropertyRead>]) -> bool {
    let Value::Object(obj) = blob else {
        return false;
    };
    // Spelled exactly (a key in another case is rare: the tree is made whole then).
    obj.get("schema").and_then(Value::as_str) == Some(SCHEMA_BUNDLE)
        && matches!(obj.get("properties"),
            Some(Value::Array(items)) if items.len() == values.len() && all_plain(items, values))
}

/// Whether every property item is a mapping with a string `type` or none (the shape
/// [`Property::from_tree`] reads as deserialising would); `values` says how each was read.
fn all_plain(items: &[Value], values: &[Option<PropertyRead>]) -> bool {
    items
        .iter()
        .enumerate()
        .all(|(i, item)| match values.get(i) {
            Some(Some(PropertyRead::Item { .. })) => true,
            _ => Property::is_plain_tree(item),
        })
}

/// Puts the property items and values the reader did not build back into `blob`'s tree.
fn restore_values(blob: &mut Value, values: Vec<Option<PropertyRead>>) {
    let Some(Value::Array(items)) = blob.get_mut("properties") else {
        return;
    };
    // The reader wrote these texts from values it read; they parse back to them.
    let tree = |json: Box<RawValue>| serde_json::from_str(json.get()).unwrap_or(Value::Null);
    for (item, read) in items.iter_mut().zip(values) {
        match (read, item) {
            (Some(PropertyRead::Value(json)), Value::Object(map)) => {
                map.insert("value".into(), tree(json));
            }
            (
                Some(PropertyRead::Item {
                    ty,
                    value,
                    type_first,
                }),
                item,
            ) => {
                let ty = ("type".to_string(), Value::String(ty));
                let value = value.map(|json| ("value".to_string(), tree(json)));
                let keys = match type_first {
                    true => [Some(ty), value],
                    false => [value, Some(ty)],
                };
                *item = Value::Object(keys.into_iter().flatten().collect());
            }
            _ => {}
        }
    }
}

/// The `type` of a plain property item (empty when it has none).
fn type_of(item: &Value) -> String {
    match item.get("type") {
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// The property of type `ty` whose value was read as the JSON text `json`: what
/// [`Property::from_tree`] gives for the whole item, after [`lighten`] for
/// [`Keep::Structure`].
fn property_from_text(ty: String, json: Box<RawValue>, keep: Keep) -> Option<Property> {
    if keep == Keep::Structure && (ty == TYPE_CSV_METADATA || ty == TYPE_BUNDLE_OBJECT) {
        // Written before the reader knew the type (`value` came first): lighten the tree.
        let value = serde_json::from_str(json.get()).unwrap_or(Value::Null);
        let mut item = serde_json::json!({ "type": ty, "value": value });
        lighten(&mut item);
        return Property::from_tree(item).ok();
    }
    Some(Property::from_raw(ty, json))
}

/// Whether [`add_blob_keeping`] under [`Keep::Structure`] gives `blob` the same treatment as
/// the blob with its `olm.csv.metadata` values in full: it is a bundle whose properties all
/// take the plain path, where [`lighten`] empties those values (an object becomes `{}`).
fn lightened_anyway(blob: &Value, values: &[Option<PropertyRead>]) -> bool {
    let Value::Object(obj) = blob else {
        return false;
    };
    let is_bundle =
        meta_keys(obj, &Source::default()).is_ok_and(|[schema, _, _]| schema == SCHEMA_BUNDLE);
    is_bundle
        && matches!(obj.get("properties"),
            Some(Value::Array(items)) if all_plain(items, values))
}

/// For [`Keep::Structure`]: replaces a property value validation reads no further than its
/// shape by an empty one of the same shape. These values are most of a catalog's bytes.
fn lighten(item: &mut Value) {
    let ty = item["type"].as_str().unwrap_or_default();
    let bundle_object = ty == TYPE_BUNDLE_OBJECT;
    if ty != TYPE_CSV_METADATA && !bundle_object {
        return;
    }
    let Some(Value::Object(value)) = item.get_mut("value") else {
        return;
    };
    if !bundle_object {
        value.clear();
        return;
    }
    let data_ok = match value.get("data") {
        Some(Value::String(d)) => !d.is_empty() && crate::grammar::go_base64::decode(d).is_some(),
        _ => false,
    };
    if data_ok && !value.contains_key("ref") {
        value.insert("data".into(), Value::String(String::new()));
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, text: &str) -> Result<DeclarativeConfig, LoadError> {
        load_bytes(Path::new(name), text.as_bytes())
    }

    #[test]
    fn yaml_documents_and_lines() {
        let cfg = load(
            "c.yaml",
            "---\nschema: olm.package\nname: a\ndefaultChannel: s\n---\n---\nschema: olm.channel\nname: s\npackage: a\nentries:\n- name: a.v1\n",
        )
        .unwrap();
        assert_eq!(cfg.packages[0].name, "a");
        assert_eq!(cfg.packages[0].source.line, 2);
        assert_eq!(cfg.channels[0].source.line, 7);
        assert_eq!(cfg.channels[0].entries[0].name, "a.v1");
    }

    #[test]
    fn json_stream_of_concatenated_objects() {
        let cfg = load(
            "c.json",
            "{\"schema\":\"olm.package\",\"name\":\"a\"}\n\n{\"schema\":\"vendor.x\",\"package\":\"a\",\"z\":[1]}",
        )
        .unwrap();
        assert_eq!(cfg.packages.len(), 1);
        assert_eq!(cfg.others[0].schema, "vendor.x");
        assert_eq!(cfg.others[0].source.line, 3);
        assert_eq!(cfg.others[0].blob["z"][0], 1);
    }

    #[test]
    fn keys_are_case_insensitive_and_duplicates_rejected() {
        let cfg = load("c.yaml", "Schema: olm.package\nName: a\n").unwrap();
        assert_eq!(cfg.packages[0].name, "a");
        let e = load("c.yaml", "schema: olm.package\nSchema: olm.bundle\n").unwrap_err();
        assert!(
            e.to_string().contains("duplicate keys for key \"schema\""),
            "{e}"
        );
    }

    #[test]
    fn missing_schema_and_wrong_types_name_file_and_line() {
        let e = load("d/c.yaml", "---\nname: foo\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "d/c.yaml:2: object 'foo' is missing root schema field"
        );
        let e = load("c.yaml", "schema: olm.channel\nname: s\nentries: 5\n").unwrap_err();
        assert!(
            e.to_string().starts_with("c.yaml:1: parse channel: "),
            "{e}"
        );
        let e = load("c.yaml", "schema: olm.bundle\nname: [1]\n").unwrap_err();
        assert!(e.to_string().contains("to be a string"), "{e}");
    }

    #[test]
    fn syntax_errors_carry_absolute_lines() {
        let e = load(
            "c.yaml",
            "schema: olm.package\nname: a\n---\nschema: olm.bundle\nname: [x\n",
        )
        .unwrap_err();
        match e {
            LoadError::Yaml(YamlError::Syntax { line: Some(l), .. }) => assert!(l >= 5, "{l}"),
            other => panic!("{other:?}"),
        }
        let e = load("c.json", "{\"schema\": \"olm.package\", \"name\": }").unwrap_err();
        assert!(e.to_string().starts_with("c.json:1:"), "{e}");
    }

    #[test]
    fn non_object_documents_are_errors() {
        let e = load("c.yaml", "- a\n- b\n").unwrap_err();
        assert!(e.to_string().contains("expected an object"), "{e}");
        // Go's reader names the bad byte.
        let e = load_bytes(Path::new("c.yaml"), b"schema: \xff\n").unwrap_err();
        assert!(e.to_string().contains("invalid leading UTF-8 octet"), "{e}");
    }

    #[test]
    fn structure_loads_drop_csv_metadata_objects_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("c.yaml");
        std::fs::write(
            &file,
            "schema: olm.bundle\nname: a.v1\npackage: a\nproperties:\n- type: olm.csv.metadata\n  value: {displayName: A, description: long}\n- type: olm.csv.metadata\n  value: not-an-object\n- type: olm.gvk\n  value: {group: g, kind: K, version: v1}\n",
        )
        .unwrap();
        let all = load_dir(dir.path()).unwrap();
        let lean = load_dir_keeping(dir.path(), Keep::Structure).unwrap();
        let raws = |c: &DeclarativeConfig| -> Vec<String> {
            c.bundles[0]
                .properties
                .iter()
                .map(|p| p.raw().to_string())
                .collect()
        };
        assert_eq!(raws(&all)[0], r#"{"displayName":"A","description":"long"}"#);
        assert_eq!(
            raws(&lean),
            vec![
                "{}".to_string(),
                "\"not-an-object\"".to_string(),
                r#"{"group":"g","kind":"K","version":"v1"}"#.to_string()
            ]
        );
        // Validation gives the same verdict on both.
        let a = crate::catalog::validate::validate(&all);
        let l = crate::catalog::validate::validate(&lean);
        assert_eq!(a.to_text(), l.to_text());
    }

    #[test]
    fn structure_loads_empty_bundle_objects_that_decode() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("c.yaml"),
            "schema: olm.package\nname: a\ndefaultChannel: s\n---\nschema: olm.channel\nname: s\npackage: a\nentries:\n- name: a.v1\n---\nschema: olm.bundle\nname: a.v1\npackage: a\nimage: i\nproperties:\n- type: olm.package\n  value: {packageName: a, version: 1.0.0}\n- type: olm.bundle.object\n  value: {data: eyJraW5kIjoiQSJ9}\n- type: olm.bundle.object\n  value: {data: 'not base64!'}\n- type: olm.bundle.object\n  value: {ref: objects/x.yaml}\n",
        )
        .unwrap();
        let all = load_dir(dir.path()).unwrap();
        let lean = load_dir_keeping(dir.path(), Keep::Structure).unwrap();
        let raws: Vec<String> = lean.bundles[0]
            .properties
            .iter()
            .map(|p| p.raw().to_string())
            .collect();
        assert_eq!(
            raws[1..],
            [
                r#"{"data":""}"#.to_string(),
                r#"{"data":"not base64!"}"#.to_string(),
                r#"{"ref":"objects/x.yaml"}"#.to_string(),
            ]
        );
        // The undecodable one is still reported, the same way.
        let a = crate::catalog::validate::validate(&all);
        let l = crate::catalog::validate::validate(&lean);
        assert!(a.has_errors(), "{}", a.to_text());
        assert_eq!(a.to_text(), l.to_text());
    }

    /// Structure loads that skip building `olm.csv.metadata` values give what building
    /// everything and emptying them gives: values, errors and line numbers.
    /// The loader's fast reads (values left out, property values read as text) give what
    /// reading every document whole as a tree gives, for both kinds of load.
    fn lean_and_whole_agree(name: &str, bytes: &[u8]) {
        let path = Path::new(name);
        for keep in [Keep::Structure, Keep::All] {
            let lean = load_bytes_reading(path, bytes, keep, true);
            let whole = load_bytes_reading(path, bytes, keep, false);
            match (lean, whole) {
                (Ok(a), Ok(b)) => {
                    assert!(a == b, "{name} ({keep:?}): loads differ");
                    // Equality of trees ignores key order; the rendered text does not.
                    assert_eq!(a.to_json(), b.to_json(), "{name} ({keep:?})");
                }
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
                (a, b) => panic!("{name} ({keep:?}): {a:?} vs {b:?}"),
            }
        }
    }

    #[test]
    fn property_values_read_as_text_agree_with_trees() {
        let values = [
            "- type: olm.gvk\n  value:\n    group: g\n    kind: K\n    version: v1\n",
            // Every kind of scalar and collection, nested.
            "- type: x\n  value:\n    a: 1\n    b: 1.5e3\n    c: true\n    d: null\n    e: ~\n    \
             f: \"q\\n\\u00e9\"\n    g: 'it''s'\n    h: |\n      x\n      y\n    i:\n    - 1\n    \
             - k: v\n      l: []\n    - - 2\n    m: {}\n    n:\n    o: >-\n      p\n      q\n    \
             r: 0x1F\n    s: -.inf\n    t: 012\n    u: yes\n    \u{e9}: \"<&>\"\n",
            "- type: x\n  value: 0x1F\n",
            "- type: x\n  value: \"s\"\n",
            "- type: x\n  value: {}\n",
            "- type: x\n  value:\n  - a\n  - b: c\n",
            "- type: x\n  value:\n",
            "- type: x\n",
            "- value: 1\n  type: x\n",
            "- value:\n    a: b\n  type: olm.csv.metadata\n",
            "- value:\n    data: eyJhIjoxfQ==\n  type: olm.bundle.object\n",
            "- type: olm.bundle.object\n  value:\n    data: eyJhIjoxfQ==\n",
            "- type: olm.bundle.object\n  value:\n    data: not base64\n",
            "- type: olm.csv.metadata\n  value: plain\n",
            // Repeats and things the block reader leaves to the general path.
            "- type: x\n  value: 1\n  value: 2\n",
            "- type: x\n  value:\n    a: 1\n    a: 2\n",
            "- type: x\n  value:\n    \"k\": 1\n",
            "- type: x\n  value:\n    a: &x 1\n",
            "- type: x\n  value:\n    a: [1, 2]\n",
            // Items that are not just a string `type` and a `value`.
            "- type: x\n  value: 1\n  extra: 2\n",
            "- extra: 2\n  value:\n    a: 1\n  type: x\n",
            "- type:\n    a: b\n  value: 1\n",
            "- type: 5\n  value: 1\n",
            "- type: true\n",
            "- value: 1\n",
            "- type: 'q'\n  value: 1\n",
            "- type: |\n    block\n  value: 1\n",
            "- 5\n",
        ];
        for v in values {
            for schema in [
                "olm.bundle",
                "olm.package",
                "olm.channel\npackage: p",
                "vendor.x",
            ] {
                let text = format!(
                    "schema: olm.package\nname: a\n---\nname: a.v1\nproperties:\n{v}\
                     - type: olm.package\n  value:\n    packageName: a\n    version: 1.0.0\n\
                     schema: {schema}\n"
                );
                lean_and_whole_agree("c.yaml", text.as_bytes());
            }
        }
    }

    #[test]
    fn lean_structure_loads_agree_with_whole_ones() {
        let csv =
            "- type: olm.csv.metadata\n  value:\n    description: long\n    keywords:\n    - a\n";
        for text in [
            format!("image: i\nname: a.v1\npackage: a\nproperties:\n{csv}schema: olm.bundle\n"),
            // Not a bundle: its properties are kept whole (read again).
            format!("name: a\nproperties:\n{csv}schema: olm.package\n"),
            format!("name: a\nproperties:\n{csv}schema: vendor.x\n"),
            format!("package: a\nproperties:\n{csv}schema: olm.channel\nname: s\n"),
            // Properties that do not all take the plain path.
            format!("name: a.v1\nproperties:\n{csv}- type: 5\n  value: x\nschema: olm.bundle\n"),
            format!("name: a.v1\nproperties:\n{csv}- x\nschema: olm.bundle\n"),
            format!("name: a.v1\nproperties:\n{csv}Schema: olm.bundle\nschema: olm.bundle\n"),
            format!("name: a.v1\nProperties: []\nproperties:\n{csv}SCHEMA: olm.bundle\n"),
            format!("name: [a]\nproperties:\n{csv}schema: olm.bundle\n"),
            // Broken or repeated inside the left-out value.
            format!("name: a.v1\nproperties:\n{csv}    description: again\nschema: olm.bundle\n"),
            format!("name: a.v1\nproperties:\n{csv}    x: [1\nschema: olm.bundle\n"),
            format!("name: a.v1\nproperties:\n{csv}    x: \"\\q\"\nschema: olm.bundle\n"),
        ] {
            let text = format!("schema: olm.package\nname: a\n---\n{text}");
            lean_and_whole_agree("c.yaml", text.as_bytes());
        }
        // Every shared catalog file.
        if let Some(root) = crate::catalog::shared_catalogs() {
            let files = catalog_files(&Tree::host(&root)).unwrap();
            assert!(files.len() > 10, "{}", files.len());
            for f in files {
                lean_and_whole_agree(
                    &f.path.display().to_string(),
                    &std::fs::read(&f.path).unwrap(),
                );
            }
        }
    }

    #[test]
    fn walk_honours_indexignore() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/skip")).unwrap();
        std::fs::write(root.join(".indexignore"), "*.md\n/a/skip/\n").unwrap();
        std::fs::write(root.join("README.md"), "# not yaml: [").unwrap();
        std::fs::write(root.join("a/skip/x.yaml"), "garbage: [").unwrap();
        std::fs::write(
            root.join("a/catalog.yaml"),
            "schema: olm.package\nname: a\n",
        )
        .unwrap();
        std::fs::write(root.join("a/.hidden"), "schema: vendor.x\n").unwrap();
        for tree in [Tree::host(root), Tree::confined(root).unwrap()] {
            let files = catalog_files(&tree).unwrap();
            let rel: Vec<_> = files.iter().map(|f| f.rel.to_string()).collect();
            assert_eq!(rel, ["a/.hidden", "a/catalog.yaml"]);
            assert_eq!(files[1].path, root.join("a/catalog.yaml"));
        }
        let cfg = load_dir(root).unwrap();
        assert_eq!(cfg.packages.len(), 1);
        assert_eq!(cfg.others.len(), 1);
    }

    /// An image's catalog read confined to the image: a link that stays inside is read, one
    /// that leads out (as a bypassed unpacker could leave) is refused naming the file, never
    /// read from the host.
    #[test]
    fn confined_trees_read_links_inside_and_refuse_links_out() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("configs/p")).unwrap();
        std::fs::create_dir_all(root.join("shared")).unwrap();
        std::fs::write(root.join("shared/p.yaml"), "schema: olm.package\nname: p\n").unwrap();
        std::os::unix::fs::symlink("../../shared/p.yaml", root.join("configs/p/c.yaml")).unwrap();
        let tree = Tree::confined(&root)
            .unwrap()
            .subtree(&RelPath::parse("configs").unwrap());
        assert_eq!(load_tree(&tree).unwrap().packages[0].name, "p");
        std::fs::write(
            dir.path().join("secret.yaml"),
            "schema: olm.package\nname: SECRET\n",
        )
        .unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("secret.yaml"),
            root.join("configs/p/x.yaml"),
        )
        .unwrap();
        let e = load_tree(&tree).unwrap_err().to_string();
        assert!(
            e.contains("configs/p/x.yaml: a symbolic link that leads out"),
            "{e}"
        );
        // The configs directory itself a link out.
        std::os::unix::fs::symlink(dir.path(), root.join("out")).unwrap();
        let out = Tree::confined(&root)
            .unwrap()
            .subtree(&RelPath::parse("out").unwrap());
        let e = load_tree(&out).unwrap_err().to_string();
        assert!(e.contains("leads out"), "{e}");
        // Read as the user's own directory, the same link is followed.
        assert!(load_dir(&root.join("configs")).unwrap().packages.len() == 2);
    }
}
