//! Bundle, package and channel properties (`{"type": ..., "value": ...}`).
//!
//! A property is stored raw ([`Property`]: its type and its JSON value, exactly as read) so
//! that unknown types and fields survive a load/write round trip and a property that is never
//! looked at is never rejected (opm only parses the properties of bundles). [`Property::parse`]
//! gives the typed view of the well-known types; builders produce values with opm's key order.
//!
//! Values are held as compact JSON text (opm keeps `json.RawMessage`), not as value trees: a
//! catalog's properties are most of its bytes, and a tree costs several allocations per node,
//! so raw text keeps a loaded catalog near its size on disk. The gRPC server sends exactly
//! this text.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

pub const TYPE_PACKAGE: &str = "olm.package";
pub const TYPE_PACKAGE_REQUIRED: &str = "olm.package.required";
pub const TYPE_GVK: &str = "olm.gvk";
pub const TYPE_GVK_REQUIRED: &str = "olm.gvk.required";
pub const TYPE_BUNDLE_OBJECT: &str = "olm.bundle.object";
pub const TYPE_CSV_METADATA: &str = "olm.csv.metadata";
pub const TYPE_CONSTRAINT: &str = "olm.constraint";
pub const TYPE_CHANNEL: &str = "olm.channel";

/// One property as written in the catalog.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Property {
    #[serde(rename = "type", default)]
    pub ty: String,
    /// The value as compact JSON, keys in the order read; `null` when absent.
    #[serde(default = "null_raw", deserialize_with = "compact_raw")]
    value: Box<RawValue>,
}

impl PartialEq for Property {
    fn eq(&self, other: &Self) -> bool {
        self.ty == other.ty && self.value.get() == other.value.get()
    }
}

fn null_raw() -> Box<RawValue> {
    RawValue::from_string("null".into()).unwrap_or_else(|_| unreachable!("null is JSON"))
}

/// Reads a value as raw JSON and drops insignificant whitespace, so a value read from
/// indented JSON and the same value read from YAML are the same text.
fn compact_raw<'de, D: Deserializer<'de>>(d: D) -> Result<Box<RawValue>, D::Error> {
    let raw = Box::<RawValue>::deserialize(d)?;
    if !has_space_between_tokens(raw.get()) {
        return Ok(raw);
    }
    let text = minify(raw.get());
    RawValue::from_string(text).map_err(serde::de::Error::custom)
}

/// Whether valid JSON text has whitespace outside its strings (values read from trees never
/// do; values read from indented JSON files do).
fn has_space_between_tokens(json: &str) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    for b in json.bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
        } else if b == b'"' {
            in_string = true;
        } else if matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
            return true;
        }
    }
    false
}

/// Removes the whitespace between JSON tokens (not inside strings) of valid JSON text.
pub fn minify(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\n' | '\r' | '\t') {
            out.push(c);
        }
    }
    out
}

/// `olm.package`: the bundle's own package and version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PackageProperty {
    #[serde(rename = "packageName", default)]
    pub package_name: String,
    #[serde(default)]
    pub version: String,
    /// Newer opm: a release suffix that orders rebuilds of one version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
}

/// `olm.package.required`: a dependency on another package within a blang range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct PackageRequired {
    #[serde(rename = "packageName", default)]
    pub package_name: String,
    #[serde(rename = "versionRange", default)]
    pub version_range: String,
}

/// `olm.gvk` / `olm.gvk.required`: an API group/version/kind (opm's key order).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
pub struct Gvk {
    #[serde(default)]
    pub group: String,
    #[serde(default)]
    pub kind: String,
    #[serde(default)]
    pub version: String,
}

impl std::fmt::Display for Gvk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}/{}", self.version, self.kind)
        } else {
            write!(f, "{}/{}/{}", self.group, self.version, self.kind)
        }
    }
}

/// `olm.bundle.object`: one manifest of the bundle, base64 of its JSON (or a file reference).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct BundleObject {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub r#ref: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub data: String,
}

/// `olm.csv.metadata`: the CSV fields a catalog UI needs, in place of whole manifests. Nested
/// API structures are kept as JSON values: they are copied from the CSV, never interpreted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CsvMetadata {
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub annotations: Map<String, Value>,
    /// Always written (a Go struct, never omitted).
    #[serde(rename = "apiServiceDefinitions", default = "empty_object")]
    pub api_service_definitions: Value,
    /// Always written (a Go struct, never omitted).
    #[serde(rename = "crdDescriptions", default = "empty_object")]
    pub crd_descriptions: Value,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(
        rename = "displayName",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub display_name: String,
    #[serde(
        rename = "installModes",
        default,
        skip_serializing_if = "Vec::is_empty"
    )]
    pub install_modes: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub labels: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub maintainers: Vec<Value>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub maturity: String,
    #[serde(
        rename = "minKubeVersion",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub min_kube_version: String,
    #[serde(rename = "nativeAPIs", default, skip_serializing_if = "Vec::is_empty")]
    pub native_apis: Vec<Value>,
    /// Always written (a Go struct, never omitted).
    #[serde(default = "empty_object")]
    pub provider: Value,
}

impl Default for CsvMetadata {
    fn default() -> Self {
        CsvMetadata {
            annotations: Map::new(),
            api_service_definitions: empty_object(),
            crd_descriptions: empty_object(),
            description: String::new(),
            display_name: String::new(),
            install_modes: Vec::new(),
            keywords: Vec::new(),
            labels: Map::new(),
            links: Vec::new(),
            maintainers: Vec::new(),
            maturity: String::new(),
            min_kube_version: String::new(),
            native_apis: Vec::new(),
            provider: empty_object(),
        }
    }
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// `olm.constraint`: a generic dependency (CEL, gvk, package, or all/any/not compositions).
/// Kept as JSON apart from the failure message, which tools show to users.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Constraint {
    #[serde(
        rename = "failureMessage",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub failure_message: String,
    #[serde(flatten)]
    pub body: Map<String, Value>,
}

/// The manifests embedded as `olm.bundle.object` properties, as JSON text, in order (what
/// both the on-disk and the model bundle carry).
pub fn bundle_objects(properties: &[Property]) -> Vec<String> {
    properties
        .iter()
        .filter(|p| p.ty == TYPE_BUNDLE_OBJECT)
        .filter_map(|p| p.value_as::<BundleObject>().ok())
        .filter_map(|o| crate::grammar::go_base64::decode(&o.data))
        .filter_map(|bytes| String::from_utf8(bytes).ok())
        .collect()
}

/// Whether a manifest's JSON is a ClusterServiceVersion. Reads only `kind` (the rest is
/// skipped, not built), so scanning a bundle's CRDs for its CSV stays cheap.
pub fn is_csv_json(json: &str) -> bool {
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(borrow, default)]
        kind: Option<std::borrow::Cow<'a, str>>,
    }
    serde_json::from_str::<Kind>(json)
        .is_ok_and(|k| k.kind.as_deref() == Some("ClusterServiceVersion"))
}

/// The typed view of a property.
#[derive(Debug, Clone, PartialEq)]
pub enum TypedProperty {
    Package(PackageProperty),
    PackageRequired(PackageRequired),
    Gvk(Gvk),
    GvkRequired(Gvk),
    BundleObject(BundleObject),
    CsvMetadata(Box<CsvMetadata>),
    Constraint(Constraint),
    /// Any other type: only required to hold a JSON value.
    Other,
}

/// A property value that does not fit its type (opm: `parse property[i] of type "t": ...`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parse property[{index}] of type {ty:?}: {message}")]
pub struct PropertyError {
    pub index: usize,
    pub ty: String,
    pub message: String,
}

/// Deserialises raw JSON into `T`; the message leaves out serde_json's position inside the
/// value, which means nothing to a reader of the catalog file.
fn typed<T: serde::de::DeserializeOwned>(raw: &RawValue) -> Result<T, String> {
    // Every typed value is a struct, which Go's encoding/json fills from an object only;
    // serde would also fill one from an array, in field order.
    if raw.get().starts_with('[') {
        let name = std::any::type_name::<T>().rsplit("::").next().unwrap_or("");
        return Err(format!("invalid type: sequence, expected struct {name}"));
    }
    serde_json::from_str(raw.get()).map_err(|e| {
        let m = e.to_string();
        match m.rfind(" at line ") {
            Some(i) => m[..i].to_string(),
            None => m,
        }
    })
}

impl Property {
    /// The property a parsed `{type, value}` tree deserialises to, without serde's detour
    /// (a value deserialiser turns a raw value into text through `Display`, the loader's
    /// slowest step). `Err` gives the tree back when it is not of that shape, for the caller
    /// to deserialise and report serde's error.
    pub fn from_tree(tree: Value) -> Result<Property, Value> {
        if !Property::is_plain_tree(&tree) {
            return Err(tree);
        }
        let Value::Object(mut map) = tree else {
            return Err(tree);
        };
        let ty = match map.remove("type") {
            Some(Value::String(s)) => s,
            _ => String::new(),
        };
        let value = match map.get("value") {
            // A tree serialises to compact JSON; no whitespace to drop, nothing to validate.
            Some(v) => serde_json::value::to_raw_value(v).unwrap_or_else(|_| null_raw()),
            None => null_raw(),
        };
        Ok(Property { ty, value })
    }

    /// The property of type `ty` with the raw value `value` (compact JSON, as the YAML
    /// reader writes property values).
    pub fn from_raw(ty: String, value: Box<RawValue>) -> Property {
        Property { ty, value }
    }

    /// Whether [`from_tree`](Self::from_tree) reads `tree` as deserialising it would: an
    /// object whose `type`, if present, is a string.
    pub fn is_plain_tree(tree: &Value) -> bool {
        match tree {
            Value::Object(map) => map.get("type").is_none_or(Value::is_string),
            _ => false,
        }
    }

    /// Builds a property from a typed value (keys in the order of the Rust struct, which is
    /// opm's order).
    pub fn build<T: Serialize>(ty: &str, value: &T) -> Property {
        // Serialising these plain structs cannot fail; a failure would give `null`.
        let value = serde_json::value::to_raw_value(value).unwrap_or_else(|_| null_raw());
        Property {
            ty: ty.to_string(),
            value,
        }
    }

    /// A property of any type with a JSON value.
    pub fn new(ty: &str, value: &Value) -> Property {
        Property::build(ty, value)
    }

    /// The value as compact JSON text (what opm keeps and serves).
    pub fn raw(&self) -> &str {
        self.value.get()
    }

    /// The value as a JSON tree (`Null` when absent). Parses the text: for occasional use.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.value.get()).unwrap_or(Value::Null)
    }

    /// The value read as `T`.
    pub fn value_as<T: serde::de::DeserializeOwned>(&self) -> Result<T, String> {
        typed(&self.value)
    }

    /// A string field of an object value (`None` when absent or not a string).
    pub fn str_field(&self, key: &str) -> Option<String> {
        #[derive(Deserialize)]
        struct Field<'a>(
            #[serde(borrow)] std::collections::HashMap<std::borrow::Cow<'a, str>, &'a RawValue>,
        );
        let Field(fields) = serde_json::from_str(self.value.get()).ok()?;
        serde_json::from_str::<String>(fields.get(key)?.get()).ok()
    }

    /// Whether the value is missing or `null`.
    pub fn is_null(&self) -> bool {
        self.value.get() == "null"
    }

    /// Whether the value is a JSON object.
    pub fn is_object(&self) -> bool {
        self.value.get().starts_with('{')
    }

    pub fn package(name: &str, version: &str) -> Property {
        Property::build(
            TYPE_PACKAGE,
            &PackageProperty {
                package_name: name.into(),
                version: version.into(),
                release: None,
            },
        )
    }

    pub fn gvk(group: &str, version: &str, kind: &str) -> Property {
        Property::build(
            TYPE_GVK,
            &Gvk {
                group: group.into(),
                kind: kind.into(),
                version: version.into(),
            },
        )
    }

    pub fn gvk_required(group: &str, version: &str, kind: &str) -> Property {
        Property::build(
            TYPE_GVK_REQUIRED,
            &Gvk {
                group: group.into(),
                kind: kind.into(),
                version: version.into(),
            },
        )
    }

    pub fn package_required(name: &str, range: &str) -> Property {
        Property::build(
            TYPE_PACKAGE_REQUIRED,
            &PackageRequired {
                package_name: name.into(),
                version_range: range.into(),
            },
        )
    }

    pub fn bundle_object(data_b64: String) -> Property {
        Property::build(
            TYPE_BUNDLE_OBJECT,
            &BundleObject {
                r#ref: String::new(),
                data: data_b64,
            },
        )
    }

    /// Parses the value according to the type. `index` is the property's position, for the
    /// error text.
    pub fn parse(&self, index: usize) -> Result<TypedProperty, PropertyError> {
        let fail = |message: String| PropertyError {
            index,
            ty: self.ty.clone(),
            message,
        };
        if self.is_null() {
            return Err(fail("value must be set".into()));
        }
        Ok(match self.ty.as_str() {
            TYPE_PACKAGE => TypedProperty::Package(typed(&self.value).map_err(fail)?),
            TYPE_PACKAGE_REQUIRED => {
                TypedProperty::PackageRequired(typed(&self.value).map_err(fail)?)
            }
            TYPE_GVK => TypedProperty::Gvk(typed(&self.value).map_err(fail)?),
            TYPE_GVK_REQUIRED => TypedProperty::GvkRequired(typed(&self.value).map_err(fail)?),
            TYPE_BUNDLE_OBJECT => {
                let o: BundleObject = typed(&self.value).map_err(fail)?;
                if !o.r#ref.is_empty() && !o.data.is_empty() {
                    return Err(fail(
                        "fields 'ref' and 'data' are mutually exclusive".into(),
                    ));
                }
                if !o.data.is_empty() && crate::grammar::go_base64::decode(&o.data).is_none() {
                    return Err(fail("data is not valid base64".into()));
                }
                TypedProperty::BundleObject(o)
            }
            TYPE_CSV_METADATA => {
                TypedProperty::CsvMetadata(Box::new(typed(&self.value).map_err(fail)?))
            }
            TYPE_CONSTRAINT => TypedProperty::Constraint(typed(&self.value).map_err(fail)?),
            _ => TypedProperty::Other,
        })
    }

    /// The compact JSON of the value, as opm stores it (`json.RawMessage`).
    pub fn value_json(&self) -> String {
        self.value.get().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builders_use_opm_key_order() {
        let p = Property::gvk("example.com", "v1", "Foo");
        assert_eq!(
            p.value_json(),
            r#"{"group":"example.com","kind":"Foo","version":"v1"}"#
        );
        let p = Property::package("foo", "0.1.0");
        assert_eq!(p.value_json(), r#"{"packageName":"foo","version":"0.1.0"}"#);
    }

    #[test]
    fn wrong_types_name_the_index_and_type() {
        let p = Property::new(TYPE_PACKAGE, &json!({"packageName": 5}));
        let e = p.parse(3).unwrap_err().to_string();
        assert!(
            e.starts_with("parse property[3] of type \"olm.package\": "),
            "{e}"
        );
        let missing = Property::new("x", &Value::Null);
        assert!(missing.parse(0).is_err());
    }

    #[test]
    fn arrays_do_not_fill_typed_values() {
        // opm (encoding/json) refuses an array where the struct is expected.
        for (ty, name) in [
            (TYPE_GVK, "Gvk"),
            (TYPE_GVK_REQUIRED, "Gvk"),
            (TYPE_PACKAGE, "PackageProperty"),
            (TYPE_PACKAGE_REQUIRED, "PackageRequired"),
            (TYPE_BUNDLE_OBJECT, "BundleObject"),
        ] {
            let p = Property::new(ty, &json!(["a", "b", "c"]));
            let e = p.parse(1).unwrap_err().to_string();
            assert!(
                e.ends_with(&format!("invalid type: sequence, expected struct {name}")),
                "{ty}: {e}"
            );
        }
    }

    #[test]
    fn raw_values_serialise_verbatim() {
        for json in [r#"{"a":[1,"x\"y",null,{}],"b":2.5}"#, "\"s\"", "[]", "null"] {
            let raw = serde_json::value::RawValue::from_string(json.to_string()).unwrap();
            let p = Property::from_raw("t".into(), raw);
            assert_eq!(p.raw(), json);
            assert_eq!(
                serde_json::to_string(&p).unwrap(),
                format!(r#"{{"type":"t","value":{json}}}"#)
            );
        }
    }

    #[test]
    fn from_tree_reads_what_deserialising_reads() {
        for tree in [
            json!({"type": "olm.package", "value": {"packageName": "a", "version": "1.0.0"}}),
            json!({"type": "olm.csv.metadata", "value": {"b": [1, 2.5, null, true], "a": "x\"y\n"}}),
            json!({"type": "t"}),
            json!({"value": "v", "extra": 1}),
            json!({"type": "t", "value": null}),
            json!({}),
        ] {
            let serde: Property = serde_json::from_value(tree.clone()).unwrap();
            let direct = Property::from_tree(tree).unwrap();
            assert_eq!(direct, serde);
            assert_eq!(direct.raw(), serde.raw());
        }
        for tree in [json!({"type": 5, "value": 1}), json!([1]), json!("x")] {
            assert!(!Property::is_plain_tree(&tree));
            assert_eq!(Property::from_tree(tree.clone()).unwrap_err(), tree);
        }
    }

    #[test]
    fn csv_metadata_always_writes_struct_fields() {
        let p = Property::build(TYPE_CSV_METADATA, &CsvMetadata::default());
        assert_eq!(
            p.value_json(),
            r#"{"apiServiceDefinitions":{},"crdDescriptions":{},"provider":{}}"#
        );
    }

    #[test]
    fn unknown_types_are_kept_raw() {
        let p = Property::new("vendor.thing", &json!({"b": 1, "a": [true]}));
        assert_eq!(p.parse(0).unwrap(), TypedProperty::Other);
        assert_eq!(p.value_json(), r#"{"b":1,"a":[true]}"#);
    }

    #[test]
    fn csv_detection_reads_only_the_kind() {
        assert!(is_csv_json(
            r#"{"apiVersion":"x","kind":"ClusterServiceVersion","spec":{"a":[1]}}"#
        ));
        assert!(!is_csv_json(r#"{"kind":"CustomResourceDefinition"}"#));
        assert!(!is_csv_json(r#"{"metadata":{}}"#));
        assert!(!is_csv_json("not json"));
        // Escaped text still reads (borrowing would fail on it).
        assert!(is_csv_json(r#"{"kind":"ClusterService\u0056ersion"}"#));
        let p = Property::new("x", &serde_json::json!({"a\"b": "v", "version": "1.0.0"}));
        assert_eq!(p.str_field("a\"b").as_deref(), Some("v"));
        assert_eq!(p.str_field("version").as_deref(), Some("1.0.0"));
    }

    #[test]
    fn values_read_from_indented_json_and_from_trees_are_compact() {
        let p: Property = serde_json::from_str(
            "{\"type\": \"x\", \"value\": {\n  \"a\": \"b c\\\" d\",\n  \"n\": [1, 2]\n}}",
        )
        .unwrap();
        assert_eq!(p.raw(), r#"{"a":"b c\" d","n":[1,2]}"#);
        assert!(!has_space_between_tokens(p.raw()));
        assert!(has_space_between_tokens(r#"{"a": 1}"#));
        let q: Property =
            serde_json::from_value(json!({"type": "x", "value": {"a": "b c\" d", "n": [1, 2]}}))
                .unwrap();
        assert_eq!(p, q);
        let absent: Property = serde_json::from_str(r#"{"type": "x"}"#).unwrap();
        assert!(absent.is_null());
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            r#"{"type":"x","value":{"a":"b c\" d","n":[1,2]}}"#
        );
        assert_eq!(serde_json::to_value(&p).unwrap()["value"]["n"][1], 2);
    }
}
