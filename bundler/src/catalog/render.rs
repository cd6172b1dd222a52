//! `olm catalog render`: a registry+v1 bundle directory becomes an `olm.bundle` blob, the way
//! `opm render` builds it (operator-registry `alpha/action/render.go`,
//! `pkg/registry/registry_to_model.go`), and catalog directories are re-rendered.
//!
//! Properties: `metadata/properties.yaml`, the derived `olm.package`, the CSV's `olm.properties`
//! annotation, `olm.gvk` for every CRD version and owned APIService, `olm.gvk.required` for
//! required CRDs/APIServices and `olm.gvk` dependencies, `olm.package.required` for package
//! dependencies, other dependency types copied; deduplicated, sorted by type then value, and
//! either one `olm.bundle.object` per manifest or a single `olm.csv.metadata` last.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value};

use super::declcfg::{Blob, Bundle, DeclarativeConfig, RelatedImage, SCHEMA_BUNDLE};
use super::load;
use super::property::{
    CsvMetadata, Property, TYPE_BUNDLE_OBJECT, TYPE_CSV_METADATA, TYPE_GVK, TYPE_PACKAGE,
};
use super::spill::Spill;
use crate::bundle::load::{BundleDir, LoadError as BundleLoadError};
use crate::confined::{EntryKind, RelPath, Tree};

/// How manifests are carried in the rendered bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Form {
    /// One `olm.csv.metadata` property (opm's `bundle-object-to-csv-metadata` migration): much
    /// smaller catalogs, what OpenShift 4.17+ catalogs require.
    #[default]
    CsvMetadata,
    /// One `olm.bundle.object` per manifest (the pre-migration form).
    BundleObjects,
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Bundle(#[from] BundleLoadError),
    #[error("{dir}: {message}")]
    Invalid { dir: String, message: String },
    #[error(transparent)]
    Catalog(#[from] super::load::LoadErrors),
    #[error(
        "{0}: no such bundle or catalog directory or file (images are pulled first: `olm catalog render` does that for image references)"
    )]
    ImageRef(String),
    #[error("write the rendered catalog to a temporary file (TMPDIR): {0}")]
    Spill(std::io::Error),
}

fn invalid(dir: &Path, message: impl Into<String>) -> RenderError {
    RenderError::Invalid {
        dir: dir.display().to_string(),
        message: message.into(),
    }
}

/// opm's `--migrate-level`: which migrations run on what was rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MigrateLevel {
    /// opm's default: catalogs keep their form.
    #[default]
    None,
    /// `bundle-object-to-csv-metadata`: bundles with an image and a CSV object get one
    /// `olm.csv.metadata` instead of their `olm.bundle.object`s.
    BundleObjectToCsvMetadata,
}

/// Runs [`finish_bundle`] on every bundle.
pub fn migrate(cfg: &mut DeclarativeConfig, level: MigrateLevel) {
    for b in &mut cfg.bundles {
        finish_bundle(b, level);
    }
}

/// What `opm render` does to every bundle it writes once it is read, whatever it was read
/// from: the migrations of `level` (a bundle without an image, such as a rendered directory,
/// or without a CSV object is left as it is). One bundle at a time, so a streamed render
/// ([`spill_ref`]) applies it as each bundle is read.
pub fn finish_bundle(b: &mut Bundle, level: MigrateLevel) {
    if level != MigrateLevel::None && !b.image.is_empty() {
        migrate_to_csv_metadata(b);
    }
}

/// What a reference given to `opm render` is, once it is known to be no image.
enum Input {
    /// Has `manifests/` and `metadata/`: rendered in the `olm.bundle.object` form (no image).
    BundleDir,
    /// A catalog directory or file, kept in its form.
    Catalog,
}

fn input_kind(reference: &str) -> Result<Input, RenderError> {
    let path = Path::new(reference);
    // host: a reference the user named (an image's files are rendered from a Tree)
    if path.is_dir() && path.join("manifests").is_dir() && path.join("metadata").is_dir() {
        return Ok(Input::BundleDir);
    }
    // host: as above
    if path.is_dir() && path.join("metadata/annotations.yaml").is_file() {
        // Looks like a bundle but is not one: read as a catalog it would give one error per
        // manifest. opm refuses it too.
        return Err(invalid(
            path,
            "a bundle directory needs manifests/ beside metadata/ (its manifests are not in manifests/)",
        ));
    }
    // host: as above
    if path.exists() {
        return Ok(Input::Catalog);
    }
    Err(RenderError::ImageRef(reference.to_string()))
}

/// Renders a reference as `opm render` does: a bundle directory (has `manifests/` and
/// `metadata/`; `olm.bundle.object` form) or a catalog directory or file (kept in its form,
/// each bundle [normalised](normalise) as opm does). Images are pulled by the caller.
/// Migrations are the caller's ([`migrate`]).
pub fn render_ref(reference: &str) -> Result<DeclarativeConfig, RenderError> {
    let path = Path::new(reference);
    let mut cfg = DeclarativeConfig::default();
    match input_kind(reference)? {
        Input::BundleDir => cfg
            .bundles
            .push(render_bundle_dir(path, "", Form::BundleObjects)?),
        Input::Catalog => {
            cfg = load::load_dir(path)?;
            cfg.bundles.iter_mut().for_each(normalise);
        }
    }
    Ok(cfg)
}

/// [`render_ref`] of a catalog tree (an image's configs, read confined to the image): each
/// bundle [normalised](normalise).
pub fn render_tree(tree: &Tree) -> Result<DeclarativeConfig, RenderError> {
    let mut cfg = load::load_tree(tree)?;
    cfg.bundles.iter_mut().for_each(normalise);
    Ok(cfg)
}

/// [`render_ref`] written into `spill` as input number `input`, each bundle finished
/// ([`finish_bundle`] with `level`) and each blob written as it is read: a catalog is never
/// held whole.
pub fn spill_ref(
    reference: &str,
    spill: &Spill,
    input: u32,
    level: MigrateLevel,
) -> Result<(), RenderError> {
    let path = Path::new(reference);
    match input_kind(reference)? {
        Input::BundleDir => {
            let b = render_bundle_dir(path, "", Form::BundleObjects)?;
            spill_bundle(b, spill, input, level)
        }
        Input::Catalog => spill_catalog(&Tree::host(path), spill, input, level),
    }
}

/// One rendered bundle, finished, into `spill` as input number `input`.
pub fn spill_bundle(
    mut b: Bundle,
    spill: &Spill,
    input: u32,
    level: MigrateLevel,
) -> Result<(), RenderError> {
    finish_bundle(&mut b, level);
    let mut source = spill.source(u64::from(input) << 32);
    source.push(Blob::Bundle(&b)).map_err(RenderError::Spill)?;
    source.finish().map_err(RenderError::Spill)
}

/// A config rendered whole (a legacy sqlite index), its bundles finished, into `spill` as
/// input number `input`.
pub fn spill_config(
    mut cfg: DeclarativeConfig,
    spill: &Spill,
    input: u32,
    level: MigrateLevel,
) -> Result<(), RenderError> {
    migrate(&mut cfg, level);
    let mut source = spill.source(u64::from(input) << 32);
    cfg.blobs()
        .try_for_each(|b| source.push(b))
        .map_err(RenderError::Spill)?;
    source.finish().map_err(RenderError::Spill)
}

/// The catalog files of `tree` (or the tree itself when it is a file), parsed on all cores,
/// into `spill` as input number `input`. Every file that fails to parse is reported, as
/// [`load::load_dir`] reports them.
pub fn spill_catalog(
    tree: &Tree,
    spill: &Spill,
    input: u32,
    level: MigrateLevel,
) -> Result<(), RenderError> {
    enum Failed {
        Load(load::LoadError),
        Spill(std::io::Error),
    }
    impl From<load::LoadError> for Failed {
        fn from(e: load::LoadError) -> Self {
            Failed::Load(e)
        }
    }
    let files = load::catalog_files(tree).map_err(|e| load::LoadErrors(vec![e]))?;
    let numbered: Vec<(u64, &load::CatalogFile)> = (0u64..).zip(files.iter()).collect();
    let size =
        |(_, file): &(u64, &load::CatalogFile)| tree.metadata(&file.rel).map_or(0, |m| m.len);
    let done = crate::parallel::map_heaviest_first(&numbered, size, |&(n, file)| {
        let spilled = load::with_file_bytes(tree, file, |bytes| {
            let mut source = spill.source(u64::from(input) << 32 | n);
            load::for_each_blob(&file.path, bytes, |cfg| {
                let mut one = std::mem::take(cfg);
                for b in &mut one.bundles {
                    normalise(b);
                    finish_bundle(b, level);
                }
                one.blobs()
                    .try_for_each(|b| source.push(b).map_err(Failed::Spill))
            })?;
            source.finish().map_err(Failed::Spill)
        });
        spilled.map_err(Failed::Load)?
    });
    let mut errors = Vec::new();
    for r in done {
        match r {
            Ok(()) => {}
            Err(Failed::Load(e)) => errors.push(e),
            Err(Failed::Spill(e)) => return Err(RenderError::Spill(e)),
        }
    }
    match errors.is_empty() {
        true => Ok(()),
        false => Err(load::LoadErrors(errors).into()),
    }
}

/// Go's `json.Marshal` of an unstructured object: keys sorted, floats as Go writes them
/// (`100.0` is `100`), `<`, `>`, `&`, U+2028 and U+2029 escaped.
pub fn go_json(v: &Value) -> String {
    let sorted = super::declcfg::sort_keys(v.clone());
    let s = super::gonum::to_compact_string(&sorted);
    if !s.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

fn arr_at<'a>(v: &'a Value, ptr: &str) -> &'a [Value] {
    v.pointer(ptr)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Renders one bundle directory. `image` is the bundle image reference to record (empty for a
/// directory that has not been pushed).
pub fn render_bundle_dir(dir: &Path, image: &str, form: Form) -> Result<Bundle, RenderError> {
    render_bundle_tree(&Tree::host(dir), image, form)
}

/// [`render_bundle_dir`] of the bundle `tree` holds (an unpacked bundle image, read confined
/// to it).
pub fn render_bundle_tree(tree: &Tree, image: &str, form: Form) -> Result<Bundle, RenderError> {
    let bd = BundleDir::load_tree(tree)?;
    let dir = bd.root.as_path();
    let ob = super::opm_bundle::read(&bd).map_err(|m| invalid(dir, m))?;
    let csv = &ob.csv.object;
    let package = bd.package().unwrap_or("").to_string();
    if package.is_empty() {
        return Err(invalid(
            dir,
            format!(
                "metadata/annotations.yaml: `{}` is missing",
                crate::bundle::load::keys::PACKAGE
            ),
        ));
    }
    let name = str_at(csv, "/metadata/name").to_string();
    if name.is_empty() {
        return Err(invalid(dir, "the CSV has no metadata.name"));
    }
    // opm reads a missing version as empty (the bundle renders with version "").
    let version = match csv.pointer("/spec/version") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(invalid(
                dir,
                format!(
                    "{}: spec.version must be a string (a semantic version), found {}",
                    ob.csv.file.display(),
                    crate::bundle::validate::v::type_name(other)
                ),
            ));
        }
    };

    let mut props: Vec<Property> = Vec::new();
    for (i, p) in bd.properties.iter().enumerate() {
        let Some(ty) = p.get("type").and_then(Value::as_str) else {
            return Err(invalid(
                dir,
                format!("metadata/properties.yaml: properties[{i}] must be {{type, value}}"),
            ));
        };
        let value = p.get("value").unwrap_or(&Value::Null);
        props.push(match ty {
            // opm parses these two and builds them again.
            TYPE_GVK | TYPE_PACKAGE => Property::new(ty, &super::declcfg::sort_keys(value.clone())),
            _ => copied_property(ty, value),
        });
    }
    props.push(Property::package(&package, &version));
    if let Some(ann) = csv
        .pointer("/metadata/annotations/olm.properties")
        .and_then(Value::as_str)
    {
        for p in annotation_properties(ann).map_err(|e| {
            invalid(
                dir,
                format!("CSV {name:?}: annotation olm.properties must be a JSON list of {{type, value}}: {e}"),
            )
        })? {
            props.push(p);
        }
    }
    let objects = &ob.objects;
    // Provided APIs: every version of every CRD in the bundle, and owned APIServices.
    for m in objects {
        if m.kind() != "CustomResourceDefinition" {
            continue;
        }
        let o = &m.object;
        let group = str_at(o, "/spec/group");
        let kind = str_at(o, "/spec/names/kind");
        let mut versions: BTreeSet<&str> = arr_at(o, "/spec/versions")
            .iter()
            .map(|v| str_at(v, "/name"))
            .filter(|v| !v.is_empty())
            .collect();
        let legacy = str_at(o, "/spec/version");
        if !legacy.is_empty() {
            versions.insert(legacy);
        }
        for v in versions {
            props.push(Property::gvk(group, v, kind));
        }
    }
    for a in arr_at(csv, "/spec/apiservicedefinitions/owned") {
        props.push(Property::gvk(
            str_at(a, "/group"),
            str_at(a, "/version"),
            str_at(a, "/kind"),
        ));
    }
    for c in arr_at(csv, "/spec/customresourcedefinitions/required") {
        let crd_name = str_at(c, "/name");
        let group = crd_name.split_once('.').map(|(_, g)| g).unwrap_or("");
        props.push(Property::gvk_required(
            group,
            str_at(c, "/version"),
            str_at(c, "/kind"),
        ));
    }
    for a in arr_at(csv, "/spec/apiservicedefinitions/required") {
        props.push(Property::gvk_required(
            str_at(a, "/group"),
            str_at(a, "/version"),
            str_at(a, "/kind"),
        ));
    }
    let (deps_file, deps) = opm_dependencies(&bd);
    for (i, d) in deps.iter().enumerate() {
        let ty = str_at(d, "/type");
        let at = || format!("{deps_file}: dependencies[{i}] (type {ty})");
        match ty {
            "olm.gvk" => {
                let v = typed_dependency(d, &["group", "version", "kind"])
                    .map_err(|m| invalid(dir, format!("{}: {m}", at())))?;
                props.push(Property::gvk_required(
                    str_at(v, "/group"),
                    str_at(v, "/version"),
                    str_at(v, "/kind"),
                ));
            }
            "olm.package" => {
                let v = typed_dependency(d, &["packageName", "version"])
                    .map_err(|m| invalid(dir, format!("{}: {m}", at())))?;
                props.push(Property::package_required(
                    str_at(v, "/packageName"),
                    str_at(v, "/version"),
                ));
            }
            "" => {
                return Err(invalid(
                    dir,
                    format!("{deps_file}: dependencies[{i}] has no type"),
                ));
            }
            // olm.label, olm.constraint and any other type: copied as read.
            other => props.push(copied_property(
                other,
                d.get("value").unwrap_or(&Value::Null),
            )),
        }
    }

    // Only one olm.package survives: the last one seen.
    if let Some(last) = props.iter().rposition(|p| p.ty == TYPE_PACKAGE) {
        let mut i = 0;
        props.retain(|p| {
            let keep = p.ty != TYPE_PACKAGE || i == last;
            i += 1;
            keep
        });
    }
    // Deduplicate by (type, value bytes), then sort by them, as opm sorts its properties.
    props.sort_by(|a, b| (&a.ty, a.raw()).cmp(&(&b.ty, b.raw())));
    props.dedup();

    match form {
        Form::BundleObjects => {
            // opm sorts every property by (type, value text), bundle objects included, then
            // moves the bundle objects to the end: they come out ordered by their base64 text,
            // not by file name.
            let mut objects: Vec<String> = objects
                .iter()
                .map(|m| crate::grammar::go_base64::encode(go_json(&m.object).as_bytes()))
                .collect();
            objects.sort();
            props.extend(objects.into_iter().map(Property::bundle_object));
        }
        Form::CsvMetadata => props.push(Property::build(TYPE_CSV_METADATA, &csv_metadata(csv))),
    }

    let mut related: Vec<RelatedImage> = Vec::new();
    for ri in arr_at(csv, "/spec/relatedImages") {
        related.push(RelatedImage {
            name: str_at(ri, "/name").to_string(),
            image: str_at(ri, "/image").to_string(),
        });
    }
    let mut extra: Vec<String> = Vec::new();
    if !image.is_empty() {
        extra.push(image.to_string());
    }
    for d in arr_at(csv, "/spec/install/spec/deployments") {
        for key in [
            "/spec/template/spec/initContainers",
            "/spec/template/spec/containers",
        ] {
            for c in arr_at(d, key) {
                let img = str_at(c, "/image");
                if !img.is_empty() {
                    extra.push(img.to_string());
                }
            }
        }
    }
    for img in extra {
        if !related.iter().any(|r| r.image == img) {
            related.push(RelatedImage {
                name: String::new(),
                image: img,
            });
        }
    }

    let mut bundle = Bundle {
        schema: SCHEMA_BUNDLE.into(),
        name,
        package,
        image: image.to_string(),
        properties: props,
        related_images: related,
        source: Default::default(),
    };
    normalise(&mut bundle);
    Ok(bundle)
}

/// What opm's `Render.Run` does to every bundle of every reference it renders, catalogs
/// included: `olm.bundle.object` and `olm.csv.metadata` properties moved last (in their
/// order), and `relatedImages` sorted by image with Go's `sort.Slice`, which is not stable:
/// entries sharing an image come out in that algorithm's order.
pub fn normalise(b: &mut Bundle) {
    let is_object = |p: &Property| p.ty == TYPE_BUNDLE_OBJECT || p.ty == TYPE_CSV_METADATA;
    if b.properties
        .iter()
        .rev()
        .skip_while(|p| is_object(p))
        .any(is_object)
    {
        let (mut others, objects): (Vec<Property>, Vec<Property>) =
            std::mem::take(&mut b.properties)
                .into_iter()
                .partition(|p| !is_object(p));
        others.extend(objects);
        b.properties = others;
    }
    super::gosort::sort_slice(&mut b.related_images, |x, y| x.image < y.image);
}

/// A property opm copies from a metadata file: its value went through Go's YAML-to-JSON
/// conversion (`json.Marshal`), so its keys are sorted and `<`, `>`, `&` are escaped in every
/// string, however deeply nested.
fn copied_property(ty: &str, value: &Value) -> Property {
    let text = go_json(value);
    match serde_json::value::RawValue::from_string(text) {
        Ok(raw) => Property::from_raw(ty.to_string(), raw),
        Err(_) => Property::new(ty, value),
    }
}

/// The CSV's `olm.properties` annotation: a JSON list of properties whose values opm keeps as
/// written (key order and escapes), without the whitespace.
fn annotation_properties(text: &str) -> Result<Vec<Property>, String> {
    #[derive(serde::Deserialize)]
    struct Raw {
        #[serde(rename = "type", default)]
        ty: Option<String>,
        #[serde(default)]
        value: Option<Box<serde_json::value::RawValue>>,
    }
    let list: Vec<Raw> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(list.len());
    for (i, r) in list.into_iter().enumerate() {
        let ty = r.ty.ok_or_else(|| format!("entry {i} has no type"))?;
        let value = match r.value {
            Some(v) => super::property::minify(v.get()),
            None => "null".to_string(),
        };
        let raw = serde_json::value::RawValue::from_string(value).map_err(|e| e.to_string())?;
        out.push(Property::from_raw(ty, raw));
    }
    Ok(out)
}

/// The value of an `olm.gvk` or `olm.package` dependency, which opm decodes into a struct of
/// strings: a missing value ("unexpected end of JSON input"), a value that is not a map, or a
/// field that is not a string is refused.
fn typed_dependency<'a>(d: &'a Value, fields: &[&str]) -> Result<&'a Value, String> {
    let example = fields
        .iter()
        .map(|f| format!("{f}: ..."))
        .collect::<Vec<_>>()
        .join(", ");
    match d.get("value") {
        None => Err(format!(
            "has no value (opm: unexpected end of JSON input); give it `value: {{{example}}}`"
        )),
        Some(v @ Value::Null) => Ok(v),
        Some(v @ Value::Object(m)) => {
            for f in fields {
                if let Some(x) = m.get(*f).filter(|x| !x.is_string() && !x.is_null()) {
                    return Err(format!(
                        "value.{f} must be a string, found {} (quote it)",
                        crate::bundle::validate::v::type_name(x)
                    ));
                }
            }
            Ok(v)
        }
        Some(other) => Err(format!(
            "value must be a map `{{{example}}}`, found {}",
            crate::bundle::validate::v::type_name(other)
        )),
    }
}

/// The dependencies opm reads (operator-registry `NewImageInput`), with the file they are in:
/// not only `metadata/dependencies.yaml` but the first file of `metadata/`, in name order,
/// that is not the annotations file and holds a non-empty `dependencies` list (real bundles
/// keep them in `properties.yaml`).
fn opm_dependencies(bd: &BundleDir) -> (String, Vec<Value>) {
    let default = || {
        (
            "metadata/dependencies.yaml".to_string(),
            bd.dependencies.clone(),
        )
    };
    let Ok(metadata) = RelPath::parse("metadata") else {
        return default();
    };
    let Ok(entries) = bd.tree.read_dir(&metadata) else {
        return default();
    };
    let mut annotations_found = false;
    for (name, kind) in entries {
        let Ok(rel) = metadata.child(&name) else {
            continue;
        };
        if kind != EntryKind::File {
            continue;
        }
        let path = bd.tree.shown(&rel);
        let Ok(bytes) = bd.tree.read(&rel) else {
            continue;
        };
        let Ok(docs) = crate::yaml::utf8(&path, &bytes)
            .and_then(|text| crate::yaml::parse_documents(&path, text))
        else {
            continue;
        };
        let Some(doc) = docs.into_iter().next() else {
            continue;
        };
        if !annotations_found
            && doc
                .get("annotations")
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
        {
            annotations_found = true;
            continue;
        }
        if let Some(Value::Array(list)) = doc.get("dependencies")
            && !list.is_empty()
        {
            return (format!("metadata/{}", name.to_string_lossy()), list.clone());
        }
    }
    default()
}

/// Drops keys whose value is Go's "empty" (`""`, `[]`, `{}`, null, false, 0): the CSV types
/// opm marshals tag nearly every optional field `omitempty`.
fn omit_empty(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let v = omit_empty(v);
                let empty = match &v {
                    Value::Null => true,
                    Value::String(s) => s.is_empty(),
                    Value::Array(a) => a.is_empty(),
                    Value::Object(o) => o.is_empty(),
                    _ => false,
                };
                if !empty {
                    out.insert(k.clone(), v);
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(omit_empty).collect()),
        other => other.clone(),
    }
}

fn obj_at(v: &Value, ptr: &str) -> Value {
    match v.pointer(ptr) {
        Some(o @ Value::Object(_)) => omit_empty(o),
        _ => Value::Object(Map::new()),
    }
}

fn list_at(v: &Value, ptr: &str) -> Vec<Value> {
    arr_at(v, ptr).iter().map(omit_empty).collect()
}

/// Builds `olm.csv.metadata` from a CSV (opm `MustBuildCSVMetadata`).
pub fn csv_metadata(csv: &Value) -> CsvMetadata {
    let strmap = |ptr: &str| -> Map<String, Value> {
        csv.pointer(ptr)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    CsvMetadata {
        annotations: strmap("/metadata/annotations"),
        api_service_definitions: obj_at(csv, "/spec/apiservicedefinitions"),
        crd_descriptions: obj_at(csv, "/spec/customresourcedefinitions"),
        description: str_at(csv, "/spec/description").to_string(),
        display_name: str_at(csv, "/spec/displayName").to_string(),
        install_modes: list_at(csv, "/spec/installModes"),
        keywords: arr_at(csv, "/spec/keywords")
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        labels: strmap("/metadata/labels"),
        links: list_at(csv, "/spec/links"),
        maintainers: list_at(csv, "/spec/maintainers"),
        maturity: str_at(csv, "/spec/maturity").to_string(),
        min_kube_version: str_at(csv, "/spec/minKubeVersion").to_string(),
        native_apis: list_at(csv, "/spec/nativeAPIs"),
        provider: obj_at(csv, "/spec/provider"),
    }
}

/// Replaces a bundle's `olm.bundle.object`s by one `olm.csv.metadata` (opm's
/// `bundle-object-to-csv-metadata` migration): only when it has a CSV object and no
/// `olm.csv.metadata` yet.
pub fn migrate_to_csv_metadata(b: &mut Bundle) {
    if b.properties.iter().any(|p| p.ty == TYPE_CSV_METADATA) {
        return;
    }
    let Some(csv) = b.csv_object() else { return };
    b.properties.retain(|p| p.ty != TYPE_BUNDLE_OBJECT);
    b.properties
        .push(Property::build(TYPE_CSV_METADATA, &csv_metadata(&csv)));
}

/// Used by tests and `add`: the property types present, in order.
pub fn property_types(b: &Bundle) -> Vec<&str> {
    b.properties.iter().map(|p| p.ty.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_json_sorts_and_escapes() {
        let v = serde_json::json!({"b": "<a&b>", "a": {"z": 1, "y": [2]}});
        assert_eq!(
            go_json(&v),
            r#"{"a":{"y":[2],"z":1},"b":"\u003ca\u0026b\u003e"}"#
        );
    }

    /// A bundle directory with one CSV (`csv_spec` under `spec:`) and the given metadata files.
    fn bundle_dir(csv_spec: &str, metadata: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("manifests")).unwrap();
        std::fs::create_dir_all(root.join("metadata")).unwrap();
        std::fs::write(
            root.join("metadata/annotations.yaml"),
            "annotations:\n  operators.operatorframework.io.bundle.package.v1: foo\n",
        )
        .unwrap();
        for (file, text) in metadata {
            std::fs::write(root.join("metadata").join(file), text).unwrap();
        }
        std::fs::write(
            root.join("manifests/foo.csv.yaml"),
            format!("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: foo.v0.1.0\nspec:\n{csv_spec}"),
        )
        .unwrap();
        dir
    }

    #[test]
    fn values_from_metadata_files_are_escaped_as_go_marshals_them() {
        let dir = bundle_dir(
            "  version: 0.1.0\n",
            &[
                (
                    "properties.yaml",
                    "properties:\n- type: olm.constraint\n  value:\n    failureMessage: needs <bar> & baz\n    package: {packageName: bar, versionRange: '>=1.0.0'}\n- type: olm.maxOpenShiftVersion\n  value: '<4.9'\n",
                ),
                (
                    "dependencies.yaml",
                    "dependencies:\n- type: olm.package\n  value: {packageName: bar, version: '<0.1.0'}\n- type: olm.label\n  value: {label: 'a&b'}\n",
                ),
            ],
        );
        let b = render_bundle_dir(dir.path(), "", Form::BundleObjects).unwrap();
        let raw = |ty: &str| {
            b.properties
                .iter()
                .find(|p| p.ty == ty)
                .map(|p| p.raw().to_string())
                .unwrap_or_else(|| panic!("no {ty}"))
        };
        assert_eq!(
            raw("olm.constraint"),
            r#"{"failureMessage":"needs \u003cbar\u003e \u0026 baz","package":{"packageName":"bar","versionRange":"\u003e=1.0.0"}}"#
        );
        assert_eq!(raw("olm.maxOpenShiftVersion"), r#""\u003c4.9""#);
        // opm builds package dependencies itself (no escaping) and copies the type of others.
        assert_eq!(
            raw("olm.package.required"),
            r#"{"packageName":"bar","versionRange":"<0.1.0"}"#
        );
        assert_eq!(raw("olm.label"), r#"{"label":"a\u0026b"}"#);
        let text = DeclarativeConfig {
            bundles: vec![b],
            ..Default::default()
        }
        .to_json();
        assert!(text.contains(r#""versionRange": "\u003e=1.0.0""#), "{text}");
    }

    #[test]
    fn dependencies_opm_cannot_decode_are_refused_with_the_field() {
        for (deps, want) in [
            (
                "- type: olm.gvk\n",
                "dependencies[0] (type olm.gvk): has no value",
            ),
            ("- type: olm.gvk\n  value: x\n", "value must be a map"),
            (
                "- type: olm.package\n  value: {packageName: bar, version: 1}\n",
                "value.version must be a string, found a number (quote it)",
            ),
        ] {
            let dir = bundle_dir(
                "  version: 0.1.0\n",
                &[("dependencies.yaml", &format!("dependencies:\n{deps}"))],
            );
            let e = render_bundle_dir(dir.path(), "", Form::BundleObjects)
                .unwrap_err()
                .to_string();
            assert!(e.contains("metadata/dependencies.yaml"), "{e}");
            assert!(e.contains(want), "{deps}: {e}");
        }
        // A null value is decoded as empty, as Go does.
        let dir = bundle_dir(
            "  version: 0.1.0\n",
            &[(
                "dependencies.yaml",
                "dependencies:\n- type: olm.gvk\n  value:\n",
            )],
        );
        assert!(render_bundle_dir(dir.path(), "", Form::BundleObjects).is_ok());
    }

    #[test]
    fn a_csv_without_a_version_renders_with_an_empty_one() {
        let dir = bundle_dir("  displayName: Foo\n", &[]);
        let b = render_bundle_dir(dir.path(), "", Form::BundleObjects).unwrap();
        let pkg = b.properties.iter().find(|p| p.ty == TYPE_PACKAGE).unwrap();
        assert_eq!(pkg.raw(), r#"{"packageName":"foo","version":""}"#);
        let dir = bundle_dir("  version: [1]\n", &[]);
        let e = render_bundle_dir(dir.path(), "", Form::BundleObjects).unwrap_err();
        assert!(
            e.to_string().contains("spec.version must be a string"),
            "{e}"
        );
    }

    #[test]
    fn normalise_moves_manifests_last_and_sorts_related_images_as_go_does() {
        let mut b = Bundle {
            properties: vec![
                Property::bundle_object("b".into()),
                Property::package("foo", "1.0.0"),
                Property::bundle_object("a".into()),
                Property::gvk("g", "v1", "K"),
            ],
            // Thirteen entries, twelve sharing an image: Go's sort moves its pivot to the front
            // (see gosort's tests), where a stable sort would keep them in order.
            related_images: (0..13)
                .map(|i| RelatedImage {
                    name: format!("n{i}"),
                    image: if i == 0 { "b" } else { "a" }.to_string(),
                })
                .collect(),
            ..Default::default()
        };
        normalise(&mut b);
        assert_eq!(
            property_types(&b),
            [
                "olm.package",
                "olm.gvk",
                "olm.bundle.object",
                "olm.bundle.object"
            ]
        );
        assert_eq!(b.properties[2].str_field("data").as_deref(), Some("b"));
        let names: Vec<&str> = b.related_images.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "n6", "n1", "n2", "n3", "n4", "n5", "n7", "n8", "n9", "n10", "n11", "n12", "n0"
            ]
        );
    }

    #[test]
    fn image_refs_are_a_clear_error() {
        let e = render_ref("quay.io/foo/bar:v1").unwrap_err();
        assert!(e.to_string().contains("images are pulled first"), "{e}");
    }

    #[test]
    fn renders_a_minimal_bundle() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("manifests")).unwrap();
        std::fs::create_dir_all(root.join("metadata")).unwrap();
        std::fs::write(
            root.join("metadata/annotations.yaml"),
            "annotations:\n  operators.operatorframework.io.bundle.package.v1: foo\n",
        )
        .unwrap();
        std::fs::write(
            root.join("metadata/dependencies.yaml"),
            "dependencies:\n- type: olm.package\n  value: {packageName: bar, version: '>=1.0.0'}\n",
        )
        .unwrap();
        std::fs::write(
            root.join("manifests/foo.csv.yaml"),
            r#"apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v0.1.0
spec:
  version: 0.1.0
  displayName: Foo
  provider: {name: Acme}
  customresourcedefinitions:
    required:
    - {name: bars.bar.io, version: v1, kind: Bar}
  install:
    spec:
      deployments:
      - spec: {template: {spec: {containers: [{image: "quay.io/acme/foo:v0.1.0"}]}}}
"#,
        )
        .unwrap();
        std::fs::write(
            root.join("manifests/crd.yaml"),
            "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: foos.foo.io}\nspec:\n  group: foo.io\n  names: {kind: Foo}\n  versions: [{name: v1}, {name: v1beta1}]\n",
        )
        .unwrap();
        let b =
            render_bundle_dir(root, "quay.io/acme/foo-bundle:v0.1.0", Form::CsvMetadata).unwrap();
        assert_eq!(b.name, "foo.v0.1.0");
        assert_eq!(
            property_types(&b),
            vec![
                "olm.gvk",
                "olm.gvk",
                "olm.gvk.required",
                "olm.package",
                "olm.package.required",
                "olm.csv.metadata"
            ]
        );
        assert_eq!(b.properties[1].value()["version"], "v1beta1");
        assert_eq!(b.properties[2].value()["group"], "bar.io");
        assert_eq!(b.related_images.len(), 2);
        assert_eq!(b.related_images[0].image, "quay.io/acme/foo-bundle:v0.1.0");
        let objs = render_bundle_dir(root, "", Form::BundleObjects).unwrap();
        assert_eq!(
            objs.properties
                .iter()
                .filter(|p| p.ty == TYPE_BUNDLE_OBJECT)
                .count(),
            2
        );
        let mut migrated = objs.clone();
        migrate_to_csv_metadata(&mut migrated);
        assert_eq!(property_types(&migrated).last(), Some(&"olm.csv.metadata"));
        // Same content; key order inside copied API structures follows each source (the
        // bundle objects are key-sorted JSON), so compare as trees.
        assert_eq!(
            migrated
                .properties
                .last()
                .map(|p| (p.ty.clone(), p.value())),
            b.properties.last().map(|p| (p.ty.clone(), p.value())),
            "migration equals direct rendering"
        );
    }
}
