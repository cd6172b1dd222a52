//! JSON text the block reader wrote, as serde_json raw values without parsing it again.
//!
//! `RawValue::from_string` parses its text to check it, which costs as much as the rest of
//! reading a property value; text the reader wrote through serde_json is JSON by construction.
//! serde_json serialises a [`RawValue`] as a struct of a reserved name whose one field its
//! serializers write verbatim; [`Written`] serialises the same way, so
//! `to_raw_value(&Written(text))` is `text` as a raw value. Debug builds (every test) still
//! parse each text, and a test below fails if serde_json ever serialises it otherwise.

use serde::Serialize;
use serde_json::value::RawValue;

/// The struct name serde_json gives a raw value when serialising it.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// JSON text this program wrote, serialised verbatim.
struct Written<'a>(&'a str);

impl Serialize for Written<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct(RAW_VALUE_TOKEN, 1)?;
        s.serialize_field(RAW_VALUE_TOKEN, self.0)?;
        s.end()
    }
}

/// `json` (written by this program through serde_json) as a raw value.
pub fn raw_value(json: &str) -> Box<RawValue> {
    debug_assert!(
        serde_json::from_str::<serde::de::IgnoredAny>(json).is_ok(),
        "not JSON: {json}"
    );
    serde_json::value::to_raw_value(&Written(json)).unwrap_or_else(|_| {
        RawValue::from_string("null".into()).unwrap_or_else(|_| unreachable!("null is JSON"))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn written_text_is_the_raw_value_verbatim() {
        for json in [
            r#"{"a":[1,"x\"y",null,{}],"b":2.5}"#,
            "\"s\"",
            "[]",
            "null",
            "-1e5",
        ] {
            let raw = super::raw_value(json);
            assert_eq!(raw.get(), json);
            assert_eq!(serde_json::to_string(&raw).unwrap(), json);
        }
    }
}
