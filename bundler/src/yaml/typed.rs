//! Typed configuration read as sigs.k8s.io/yaml reads it into a Go struct: YAML becomes JSON,
//! then the JSON fills the struct, and where the struct wants a string and the YAML holds a
//! number or a boolean, the text Go would write for it is used (`convertToJSONableObject`
//! with a target: `version: 1.10` into a string field is `"1.1"`, `enabled: yes` is `"true"`).
//!
//! [`from_value`] is `serde_json::from_value` with that one leniency: a deserializer over a
//! JSON value that answers a request for a string from a number or a boolean.

use serde::de::{
    self, DeserializeOwned, DeserializeSeed, IntoDeserializer, MapAccess, SeqAccess, Visitor,
};
use serde_json::{Map, Number, Value};

use std::cell::RefCell;

/// Where in the document a value failed: keys and indices from the top.
pub type FieldPath = Vec<String>;

/// `T` from a decoded YAML document, numbers and booleans read as text where `T` wants text;
/// an error comes with the path of the value that failed. The path costs nothing while
/// reading succeeds: each map entry and sequence item adds its key or index as an error
/// passes out through it.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, (serde_json::Error, FieldPath)> {
    let failed = RefCell::new(FieldPath::new());
    let r = T::deserialize(Lenient(value, &failed));
    r.map_err(|e| {
        let mut path = failed.into_inner();
        path.reverse();
        (e, path)
    })
}

/// The segments an error has passed out through, innermost first.
type Failed = RefCell<FieldPath>;

/// `r`, with `segment` noted when it is an error on its way out.
fn note<T>(
    r: Result<T, serde_json::Error>,
    failed: &Failed,
    segment: impl FnOnce() -> String,
) -> Result<T, serde_json::Error> {
    if r.is_err() {
        failed.borrow_mut().push(segment());
    }
    r
}

/// The text sigs.k8s.io/yaml gives a number for a string target (floats with 32-bit
/// precision, as it formats them).
fn number_text(n: &Number) -> String {
    match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => i.to_string(),
        (_, Some(u), _) => u.to_string(),
        (_, _, Some(f)) => super::go::gofmt_float32(f),
        _ => n.to_string(),
    }
}

struct Lenient<'f>(Value, &'f Failed);

impl<'de> de::Deserializer<'de> for Lenient<'_> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let Lenient(value, failed) = self;
        match value {
            Value::Array(items) => visitor.visit_seq(Seq {
                iter: items.into_iter(),
                index: 0,
                failed,
            }),
            Value::Object(map) => visitor.visit_map(Entries {
                iter: map.into_iter(),
                value: None,
                failed,
            }),
            other => de::Deserializer::deserialize_any(other, visitor),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Number(n) => visitor.visit_string(number_text(&n)),
            Value::Bool(b) => visitor.visit_string(b.to_string()),
            other => Lenient(other, self.1).deserialize_any(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(Lenient(other, self.1)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Number(n) => visitor.visit_enum(number_text(&n).into_deserializer()),
            Value::Bool(b) => visitor.visit_enum(b.to_string().into_deserializer()),
            other => de::Deserializer::deserialize_enum(other, name, variants, visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes byte_buf unit
        unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

struct Seq<'f> {
    iter: std::vec::IntoIter<Value>,
    index: usize,
    failed: &'f Failed,
}

impl<'de> SeqAccess<'de> for Seq<'_> {
    type Error = serde_json::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        let Some(v) = self.iter.next() else {
            return Ok(None);
        };
        let index = self.index;
        self.index += 1;
        let r = seed.deserialize(Lenient(v, self.failed));
        note(r, self.failed, || index.to_string()).map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

struct Entries<'f> {
    iter: <Map<String, Value> as IntoIterator>::IntoIter,
    value: Option<(String, Value)>,
    failed: &'f Failed,
}

impl<'de> MapAccess<'de> for Entries<'_> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        match self.iter.next() {
            Some((k, v)) => {
                // Read from a borrow: a struct's field name is matched without a copy, and
                // the key stays here to name the entry should its value fail.
                let r = seed.deserialize(de::value::StrDeserializer::<serde_json::Error>::new(&k));
                let r = note(r, self.failed, || k.clone());
                self.value = Some((k, v));
                r.map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let (k, v) = self.value.take().unwrap_or_default();
        let r = seed.deserialize(Lenient(v, self.failed));
        note(r, self.failed, || k)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug, PartialEq)]
    struct Cfg {
        name: String,
        version: Option<String>,
        #[serde(default)]
        tags: Vec<String>,
        count: u32,
        #[serde(default)]
        extra: std::collections::BTreeMap<String, String>,
    }

    #[test]
    fn numbers_and_booleans_fill_string_fields_as_go_writes_them() {
        let cfg: Cfg = super::from_value(json!({
            "name": 123, "version": 1.1, "tags": [true, "x"], "count": 3, "extra": {"a": 7}
        }))
        .map_err(|(e, _)| e)
        .unwrap();
        assert_eq!(cfg.name, "123");
        assert_eq!(cfg.version.as_deref(), Some("1.1"));
        assert_eq!(cfg.tags, ["true", "x"]);
        assert_eq!(cfg.extra["a"], "7");
        // Not the other way round: text does not fill a number; the error names the field.
        let (_, path) = super::from_value::<Cfg>(json!({"name": "a", "count": "3"})).unwrap_err();
        assert_eq!(path, ["count"]);
        let (_, path) =
            super::from_value::<Cfg>(json!({"name": "a", "count": 1, "tags": ["x", [1]]}))
                .unwrap_err();
        assert_eq!(path, ["tags", "1"]);
    }

    #[test]
    fn values_of_any_shape_are_kept() {
        let v: serde_json::Value = super::from_value(json!({"a": [1, {"b": null}]}))
            .map_err(|(e, _)| e)
            .unwrap();
        assert_eq!(v, json!({"a": [1, {"b": null}]}));
    }
}
