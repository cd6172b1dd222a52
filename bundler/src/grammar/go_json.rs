//! Go's `encoding/json` output for unstructured values (`map[string]interface{}`), in one
//! place for every writer that must match Go byte for byte (opm's catalogs, cosign's
//! payloads):
//! - strings: `<`, `>`, `&`, U+2028 and U+2029 become `\u003c`, `\u003e`, `\u0026`,
//!   `\u2028`, `\u2029` (HTML-safe output, its default). Those characters occur in JSON text
//!   only inside strings, so escaping the text escapes the strings.
//! - numbers as Go writes a `float64`: the shortest text that reads back the same, plain
//!   decimal for `1e-6 <= |f| < 1e21`, else exponent form with at least one exponent digit
//!   and an explicit sign (`1e+21`, `1.5e-7`). So `100.0` becomes `100`.
//! - object keys sorted (Go maps).

use std::io;

use serde_json::ser::{CompactFormatter, Formatter};
use serde_json::{Map, Value};

/// Go's text for a finite `float64` (`encoding/json` `floatEncoder`).
pub fn go_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Rust's `{:e}` is `1.5e-7` / `1e21`; Go adds `+` to positive exponents.
        let s = format!("{f:e}");
        match s.split_once('e') {
            Some((mant, exp)) if !exp.starts_with('-') => format!("{mant}e+{exp}"),
            _ => s,
        }
    } else {
        // Rust's Display of f64 is the shortest round-trip digits in plain decimal, as Go's
        // `strconv.FormatFloat(f, 'f', -1, 64)` (zero included, `-0` too).
        format!("{f}")
    }
}

/// A serde_json formatter that writes floats the Go way and everything else as `F` does.
pub struct GoFloats<F>(pub F);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[inline]
        fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.0.$name(w $(, $arg)*)
        }
    )*};
}

impl<F: Formatter> Formatter for GoFloats<F> {
    fn write_f64<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f64) -> io::Result<()> {
        w.write_all(go_float(value).as_bytes())
    }
    fn write_f32<W: ?Sized + io::Write>(&mut self, w: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(w, f64::from(value))
    }
    delegate! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }
}

/// Compact JSON of `v` with Go's float text.
pub fn to_compact_string<T: serde::Serialize + ?Sized>(v: &T) -> String {
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, GoFloats(CompactFormatter));
    if v.serialize(&mut ser).is_err() {
        return String::new();
    }
    String::from_utf8(buf).unwrap_or_default()
}

/// Sorts object keys recursively, as Go writes a map.
pub fn sort_keys(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut out = Map::new();
            for (k, v) in entries {
                out.insert(k, sort_keys(v));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sort_keys).collect()),
        other => other,
    }
}

/// Go's `json.Marshal` of an unstructured value: keys sorted, floats as Go writes them, HTML
/// characters escaped, no newline.
pub fn marshal(v: &Value) -> String {
    escape_html(&to_compact_string(&sort_keys(v.clone())))
}

/// `json` (serde_json's output) as Go would have escaped it.
pub fn escape_html(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_follow_go_encoding_json() {
        for (f, go) in [
            (100.0, "100"),
            (0.5, "0.5"),
            (-2.25, "-2.25"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (0.000001, "0.000001"),
            (0.0000001, "1e-7"),
            (1.5e-7, "1.5e-7"),
            (0.0, "0"),
            (123456789.125, "123456789.125"),
        ] {
            assert_eq!(go_float(f), go, "{f}");
        }
    }

    #[test]
    fn compact_json_uses_go_floats_and_keeps_integers() {
        let v = serde_json::json!({"a": 100.0, "b": [1, 2.5, 1e-9], "c": 18446744073709551615u64});
        assert_eq!(
            to_compact_string(&v),
            r#"{"a":100,"b":[1,2.5,1e-9],"c":18446744073709551615}"#
        );
    }

    #[test]
    fn escapes_what_go_escapes() {
        assert_eq!(
            escape_html("{\"a\":\"<b> & \u{2028}\"}"),
            "{\"a\":\"\\u003cb\\u003e \\u0026 \\u2028\"}"
        );
    }

    #[test]
    fn marshal_sorts_escapes_and_writes_go_floats() {
        let v = serde_json::json!({"z": 1.0, "a": {"y": "<&>", "b": [2.50, 1e21]}});
        assert_eq!(
            marshal(&v),
            r#"{"a":{"b":[2.5,1e+21],"y":"\u003c\u0026\u003e"},"z":1}"#
        );
    }
}
