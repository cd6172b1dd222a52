//! What go-yaml decodes into `interface{}` (maps keyed by any scalar), and the step that makes
//! JSON of it: sigs.k8s.io/yaml's `convertToJSONableObject` (keys to strings, or an error for
//! keys JSON cannot have) followed by `encoding/json`'s `Marshal` (which refuses NaN and
//! infinities) and Go's float64 text.

use std::collections::HashMap;

use serde_json::{Map, Number, Value};

use super::gofmt;

/// A Go value as go-yaml v2 decodes it into `interface{}`.
#[derive(Debug, Clone, PartialEq)]
pub enum GoValue {
    Nil,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Str(String),
    Seq(Vec<GoValue>),
    Map(GoMap),
}

/// Go's `map[interface{}]interface{}`: keys compare by type and value; the order kept here is
/// the order keys were first set (Go's own is random).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GoMap {
    entries: Vec<(GoValue, GoValue)>,
    index: HashMap<KeyId, usize>,
}

/// A key's identity under Go's `==` (NaN equals nothing, so it has none).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyId {
    Nil,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(u64),
    Str(String),
}

impl KeyId {
    fn of(k: &GoValue) -> Option<KeyId> {
        Some(match k {
            GoValue::Nil => KeyId::Nil,
            GoValue::Bool(b) => KeyId::Bool(*b),
            GoValue::Int(i) => KeyId::Int(*i),
            GoValue::Uint(u) => KeyId::Uint(*u),
            GoValue::Float(f) if f.is_nan() => return None,
            // +0 and -0 are the same key.
            GoValue::Float(f) => KeyId::Float(if *f == 0.0 { 0 } else { f.to_bits() }),
            GoValue::Str(s) => KeyId::Str(s.clone()),
            GoValue::Seq(_) | GoValue::Map(_) => return None,
        })
    }
}

impl GoMap {
    /// Sets `k` to `v` (Go's `SetMapIndex`); says whether `k` was there already.
    pub fn set(&mut self, k: GoValue, v: GoValue) -> bool {
        match KeyId::of(&k) {
            Some(id) => match self.index.get(&id) {
                Some(&i) => {
                    self.entries[i] = (k, v);
                    true
                }
                None => {
                    self.index.insert(id, self.entries.len());
                    self.entries.push((k, v));
                    false
                }
            },
            None => {
                self.entries.push((k, v));
                false
            }
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (&GoValue, &GoValue)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// A Go byte string as `encoding/json` writes it: each byte that is not part of valid UTF-8
/// becomes U+FFFD.
pub fn go_string(bytes: Vec<u8>) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let bytes = e.into_bytes();
            let mut out = String::with_capacity(bytes.len() + 8);
            let mut rest = &bytes[..];
            while !rest.is_empty() {
                match std::str::from_utf8(rest) {
                    Ok(s) => {
                        out.push_str(s);
                        break;
                    }
                    Err(e) => {
                        let good = e.valid_up_to();
                        out.push_str(std::str::from_utf8(&rest[..good]).unwrap_or_default());
                        out.push('\u{fffd}');
                        rest = &rest[good + 1..];
                    }
                }
            }
            out
        }
    }
}

/// A finite float64 as the JSON number Go writes: integral values below 1e21 are written
/// without a fraction, so they are integers to every JSON reader.
pub fn float_number(f: f64) -> Number {
    if f == f.trunc() && f.abs() < 1e21 && !(f == 0.0 && f.is_sign_negative()) {
        if f.abs() < 9007199254740992.0 {
            return Number::from(f as i64);
        }
        // Go prints the shortest digits that read back the same, padded with zeros.
        let text = format!("{f}");
        if let Ok(i) = text.parse::<i64>() {
            return Number::from(i);
        }
        if let Ok(u) = text.parse::<u64>() {
            return Number::from(u);
        }
    }
    Number::from_f64(f).unwrap_or_else(|| Number::from(0))
}

/// Why a decoded document cannot become JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConvertError {
    /// `convertToJSONableObject`: a null or uint64 key.
    Key(String),
    /// `json.Marshal`: NaN or an infinity.
    Unsupported(String),
}

impl ConvertError {
    pub fn message(&self) -> String {
        match self {
            ConvertError::Key(m) | ConvertError::Unsupported(m) => m.clone(),
        }
    }
}

/// `convertToJSONableObject` then `json.Marshal`: the JSON value of a decoded document.
pub fn to_json(v: GoValue) -> Result<Value, ConvertError> {
    let mut non_finite = 0usize;
    let json = convert(&v, &mut non_finite)?;
    if non_finite > 0 {
        // Marshal walks maps by sorted key: the first bad float on that walk is reported.
        let f = first_non_finite(&v).unwrap_or(f64::NAN);
        return Err(ConvertError::Unsupported(format!(
            "json: unsupported value: {}",
            gofmt::float_g64(f)
        )));
    }
    Ok(json)
}

/// The string a key becomes (`convertToJSONableObject`).
pub fn key_string(k: &GoValue, v: &GoValue) -> Result<String, ConvertError> {
    Ok(match k {
        GoValue::Str(s) => s.clone(),
        GoValue::Int(i) => i.to_string(),
        GoValue::Float(f) => match gofmt::float_g32(*f).as_str() {
            "+Inf" => ".inf".into(),
            "-Inf" => "-.inf".into(),
            "NaN" => ".nan".into(),
            s => s.into(),
        },
        GoValue::Bool(b) => b.to_string(),
        GoValue::Nil => {
            return Err(ConvertError::Key(format!(
                "unsupported map key of type: %!s(<nil>), key: <nil>, value: {}",
                gofmt::sharp_v(v, true)
            )));
        }
        other => {
            let ty = match other {
                GoValue::Uint(_) => "uint64",
                GoValue::Seq(_) => "[]interface {}",
                _ => "map[interface {}]interface {}",
            };
            return Err(ConvertError::Key(format!(
                "unsupported map key of type: {ty}, key: {}, value: {}",
                gofmt::sharp_v(other, true),
                gofmt::sharp_v(v, true)
            )));
        }
    })
}

fn convert(v: &GoValue, non_finite: &mut usize) -> Result<Value, ConvertError> {
    Ok(match v {
        GoValue::Nil => Value::Null,
        GoValue::Bool(b) => Value::Bool(*b),
        GoValue::Int(i) => Value::Number(Number::from(*i)),
        GoValue::Uint(u) => Value::Number(Number::from(*u)),
        GoValue::Float(f) if f.is_finite() => Value::Number(float_number(*f)),
        GoValue::Float(_) => {
            *non_finite += 1;
            Value::Null
        }
        GoValue::Str(s) => Value::String(s.clone()),
        GoValue::Seq(items) => Value::Array(
            items
                .iter()
                .map(|i| convert(i, non_finite))
                .collect::<Result<_, _>>()?,
        ),
        GoValue::Map(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m.iter() {
                let key = key_string(k, v)?;
                out.insert(key, convert(v, non_finite)?);
            }
            Value::Object(out)
        }
    })
}

/// The first NaN or infinity `json.Marshal` meets (maps in sorted key order, the last value
/// set for a key winning).
fn first_non_finite(v: &GoValue) -> Option<f64> {
    match v {
        GoValue::Float(f) if !f.is_finite() => Some(*f),
        GoValue::Seq(items) => items.iter().find_map(first_non_finite),
        GoValue::Map(m) => {
            let mut by_key: std::collections::BTreeMap<String, &GoValue> = Default::default();
            for (k, v) in m.iter() {
                if let Ok(key) = key_string(k, v) {
                    by_key.insert(key, v);
                }
            }
            by_key.values().find_map(|v| first_non_finite(v))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integral_floats_are_integers() {
        assert_eq!(float_number(1.0).to_string(), "1");
        assert_eq!(float_number(1.5).to_string(), "1.5");
        assert_eq!(float_number(1e19).as_u64(), Some(10000000000000000000));
        assert!(float_number(1e20).is_f64());
        assert!(float_number(1e21).is_f64());
        assert!(float_number(-0.0).is_f64());
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(
            go_string(b"a\xffb\xe2\x82".to_vec()),
            "a\u{fffd}b\u{fffd}\u{fffd}"
        );
    }
}
