//! JSON indented by four spaces, as `opm render -o json` writes it, straight from the typed
//! blobs.
//!
//! The writer used to turn each blob into a `serde_json::Value` first, which parsed every raw
//! property value (most of a catalog's bytes) back into a tree only to print it. [`Pretty4`]
//! is serde_json's `PrettyFormatter` with four spaces, and writes a raw value by re-indenting
//! its text: the bytes are those the tree would have printed. A raw value's text is copied
//! as it is where the tree would print the same text (a string without escapes, or with the
//! escapes serde_json writes; an integer that fits an `i64`/`u64` without change) and where opm
//! keeps the text (Go's escapes of `<`, `>` and `&`, which the tree would undo); a string
//! or number in another form is printed through serde_json, and a value whose objects repeat
//! a key (or have a key with escapes) goes through a tree, as before.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::Formatter;

/// serde_json's `PrettyFormatter` with a four-space indent, writing raw values re-indented
/// (the same bytes as a tree of them would give).
#[derive(Default)]
pub struct Pretty4 {
    current_indent: usize,
    has_value: bool,
    /// Where a raw value is re-indented before it is known to be plain.
    scratch: Vec<u8>,
    /// The keys of the objects being re-indented, innermost last.
    keys: Vec<(usize, usize)>,
    /// For sorting one object's keys.
    sorted: Vec<(usize, usize)>,
}

/// Writes `value` as JSON indented by four spaces into `out` (cleared first).
pub fn to_vec<T: Serialize + ?Sized>(value: &T, out: &mut Vec<u8>) -> serde_json::Result<()> {
    out.clear();
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, Pretty4::default());
    value.serialize(&mut ser)
}

fn indent<W: ?Sized + Write>(w: &mut W, n: usize) -> io::Result<()> {
    const SPACES: &[u8] = &[b' '; 64];
    let mut left = n * 4;
    while left > 0 {
        let k = left.min(SPACES.len());
        w.write_all(&SPACES[..k])?;
        left -= k;
    }
    Ok(())
}

impl Formatter for Pretty4 {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current_indent += 1;
        self.has_value = false;
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current_indent -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            indent(w, self.current_indent)?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.current_indent)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current_indent += 1;
        self.has_value = false;
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.current_indent -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            indent(w, self.current_indent)?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.current_indent)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn write_raw_fragment<W: ?Sized + Write>(&mut self, w: &mut W, raw: &str) -> io::Result<()> {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let (level, had) = (self.current_indent, self.has_value);
        self.keys.clear();
        let mut r = Reindent {
            text: raw.as_bytes(),
            raw,
            pos: 0,
        };
        let done = r
            .value(self, &mut scratch)
            .and_then(|()| match r.skip_ws() {
                None => Ok(()),
                Some(_) => Err(Fallback), // text after the value: not ours to judge
            });
        let result = match done {
            Ok(()) => w.write_all(&scratch),
            Err(Fallback) => {
                // Through a tree, as the writer always did.
                self.current_indent = level;
                self.has_value = had;
                let tree: serde_json::Value =
                    serde_json::from_str(raw).map_err(io::Error::other)?;
                let mut ser = serde_json::Serializer::with_formatter(&mut *w, &mut *self);
                tree.serialize(&mut ser).map_err(io::Error::other)
            }
        };
        self.scratch = scratch;
        result
    }
}

impl Formatter for &mut Pretty4 {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        (**self).begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        (**self).end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        (**self).begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        (**self).end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        (**self).begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        (**self).end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        (**self).begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        (**self).begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        (**self).end_object_value(w)
    }
}

/// The raw value is not in the plain form: print it through a tree.
struct Fallback;

/// A re-indenter over valid JSON text (a raw value was checked when it was made).
struct Reindent<'a> {
    text: &'a [u8],
    raw: &'a str,
    pos: usize,
}

impl Reindent<'_> {
    /// The next byte that is not whitespace (not consumed).
    fn skip_ws(&mut self) -> Option<u8> {
        while let Some(&b) = self.text.get(self.pos) {
            if !matches!(b, b' ' | b'\n' | b'\r' | b'\t') {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    fn value(&mut self, f: &mut Pretty4, out: &mut Vec<u8>) -> Result<(), Fallback> {
        let io = |_| Fallback;
        match self.skip_ws().ok_or(Fallback)? {
            b'{' => {
                self.pos += 1;
                f.begin_object(out).map_err(io)?;
                let keys_from = f.keys.len();
                let mut first = true;
                loop {
                    match self.skip_ws().ok_or(Fallback)? {
                        b'}' => {
                            self.pos += 1;
                            break;
                        }
                        b',' => {
                            self.pos += 1;
                            continue;
                        }
                        b'"' => {}
                        _ => return Err(Fallback),
                    }
                    let (start, end, escaped) = self.string()?;
                    if escaped {
                        return Err(Fallback); // a key whose text may repeat another's
                    }
                    f.keys.push((start, end));
                    f.begin_object_key(out, first).map_err(io)?;
                    first = false;
                    out.extend_from_slice(&self.text[start - 1..end + 1]);
                    if self.skip_ws() != Some(b':') {
                        return Err(Fallback);
                    }
                    self.pos += 1;
                    f.begin_object_value(out).map_err(io)?;
                    self.value(f, out)?;
                    f.end_object_value(out).map_err(io)?;
                }
                if f.keys.len() - keys_from > 1 && self.repeats(f, keys_from) {
                    return Err(Fallback); // the tree keeps the last of repeated keys
                }
                f.keys.truncate(keys_from);
                f.end_object(out).map_err(io)
            }
            b'[' => {
                self.pos += 1;
                f.begin_array(out).map_err(io)?;
                let mut first = true;
                loop {
                    match self.skip_ws().ok_or(Fallback)? {
                        b']' => {
                            self.pos += 1;
                            break;
                        }
                        b',' => {
                            self.pos += 1;
                            continue;
                        }
                        _ => {}
                    }
                    f.begin_array_value(out, first).map_err(io)?;
                    first = false;
                    self.value(f, out)?;
                    f.end_array_value(out).map_err(io)?;
                }
                f.end_array(out).map_err(io)
            }
            b'"' => {
                let (start, end, escaped) = self.string()?;
                let token = &self.raw[start - 1..end + 1];
                if !escaped || canonical_escapes(&self.text[start..end]) {
                    out.extend_from_slice(token.as_bytes());
                } else {
                    let s: String = serde_json::from_str(token).map_err(|_| Fallback)?;
                    serde_json::to_writer(&mut *out, &s).map_err(|_| Fallback)?;
                }
                Ok(())
            }
            _ => {
                // A number or a literal: up to the next delimiter.
                let start = self.pos;
                while let Some(&b) = self.text.get(self.pos) {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    self.pos += 1;
                }
                let token = &self.raw[start..self.pos];
                if matches!(token, "true" | "false" | "null") || plain_integer(token.as_bytes()) {
                    out.extend_from_slice(token.as_bytes());
                } else {
                    let v: serde_json::Value = serde_json::from_str(token).map_err(|_| Fallback)?;
                    serde_json::to_writer(&mut *out, &v).map_err(|_| Fallback)?;
                }
                Ok(())
            }
        }
    }

    /// The string starting at the current `"`: the range of its contents and whether it has
    /// escapes; the position moves past its closing quote.
    fn string(&mut self) -> Result<(usize, usize, bool), Fallback> {
        let start = self.pos + 1;
        let mut i = start;
        let mut escaped = false;
        loop {
            let at = memchr::memchr2(b'"', b'\\', &self.text[i..]).ok_or(Fallback)?;
            i += at;
            if self.text[i] == b'\\' {
                escaped = true;
                i += 2;
                continue;
            }
            self.pos = i + 1;
            return Ok((start, i, escaped));
        }
    }

    /// Whether the keys of the object read last (from `from` in `f.keys`) repeat one.
    fn repeats(&self, f: &mut Pretty4, from: usize) -> bool {
        f.sorted.clear();
        f.sorted.extend_from_slice(&f.keys[from..]);
        let text = self.text;
        f.sorted
            .sort_unstable_by(|a, b| text[a.0..a.1].cmp(&text[b.0..b.1]));
        f.sorted
            .windows(2)
            .any(|w| text[w[0].0..w[0].1] == text[w[1].0..w[1].1])
    }
}

/// Whether a string's contents use only the escapes serde_json writes (`\"`, `\\`, `\b`, `\f`,
/// `\n`, `\r`, `\t`, and `\u00xx` (lower-case hex) for the other control characters) or the
/// ones Go's `json.Marshal` writes for `<`, `>`, `&`, U+2028 and U+2029 (`\u003c`, `\u003e`,
/// `\u0026`, `\u2028`, `\u2029`): opm copies a property value's text as it is, so a value that
/// came escaped stays escaped.
fn canonical_escapes(s: &[u8]) -> bool {
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &s[i..]) {
        i += at;
        match s.get(i + 1) {
            Some(b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
            Some(b'u') => {
                let Some(hex) = s.get(i + 2..i + 6) else {
                    return false;
                };
                let lower_hex = |b: &u8| b.is_ascii_digit() || (b'a'..=b'f').contains(b);
                if hex[0] != b'0' || hex[1] != b'0' || !hex.iter().all(lower_hex) {
                    return false;
                }
                if matches!(hex, b"003c" | b"003e" | b"0026" | b"2028" | b"2029") {
                    i += 6;
                    continue;
                }
                // Only control characters without a short escape.
                if !matches!(hex[2], b'0' | b'1') {
                    return false;
                }
                let code = (hex[2] - b'0') * 16 + hex_value(hex[3]);
                if matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                    return false;
                }
                i += 6;
            }
            _ => return false,
        }
    }
    true
}

fn hex_value(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        _ => b - b'a' + 10,
    }
}

/// An integer serde_json prints back as the same text: no sign but `-`, no leading zero, no
/// `-0`, at most 18 digits.
fn plain_integer(t: &[u8]) -> bool {
    let digits = t.strip_prefix(b"-").unwrap_or(t);
    match digits {
        [b'0'] => t.len() == 1,
        [b'1'..=b'9', rest @ ..] => rest.len() < 18 && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use serde_json::value::RawValue;

    /// What the writer printed before: the value as a tree, pretty-printed by serde_json.
    fn through_tree<T: Serialize>(v: &T) -> Vec<u8> {
        let tree = serde_json::to_value(v).unwrap();
        let mut buf = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        tree.serialize(&mut serde_json::Serializer::with_formatter(&mut buf, fmt))
            .unwrap();
        buf
    }

    fn check(raw: &str) {
        #[derive(Serialize)]
        struct Holder<'a> {
            a: &'a str,
            list: Vec<&'a RawValue>,
            value: &'a RawValue,
            z: Vec<u8>,
        }
        let value = RawValue::from_string(raw.to_string()).unwrap();
        let holder = Holder {
            a: "x",
            list: vec![&value, &value],
            value: &value,
            z: vec![],
        };
        let nested = vec![vec![&holder], vec![]];
        let mut fast = Vec::new();
        to_vec(&holder, &mut fast).unwrap();
        assert_eq!(
            String::from_utf8(fast.clone()).unwrap(),
            String::from_utf8(through_tree(&holder)).unwrap(),
            "{raw}"
        );
        to_vec(&nested, &mut fast).unwrap();
        assert_eq!(
            String::from_utf8(fast).unwrap(),
            String::from_utf8(through_tree(&nested)).unwrap(),
            "{raw}"
        );
    }

    #[test]
    fn raw_values_print_as_their_trees_do() {
        for raw in [
            "null",
            "true",
            "0",
            "-0",
            "7",
            "-7",
            "123456789012345678",
            "1234567890123456789",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775809",
            "1.0",
            "1.50",
            "1e3",
            "1E+3",
            "-0.0",
            "0.1",
            "3.141592653589793238",
            "\"\"",
            "\"plain é 日本 \u{2028}\"",
            "\"a\\nb\\t\\\"q\\\" \\\\ \\r\\b\\f\"",
            "\"\\u001f\\u0000\\u007f\"",
            "\"\\u001F\"",
            "\"\\u000a\\u0009\"",
            "\"\\/\"",
            "\"\\u00e9\\ud83d\\ude00\"",
            "{}",
            "[]",
            "[{}]",
            "{\"a\":{}}",
            "{\"a\":[],\"b\":[1,[2,{}]],\"c\":{\"d\":null}}",
            "{\"b\":1,\"a\":2}",
            "{\"a\":1,\"a\":2}",
            "{\"a\":1,\"b\":{\"a\":1},\"c\":{\"x\":[{\"a\":1,\"a\":{}}]}}",
            "{\"\\u0061\":1,\"a\":2}",
            "{\"a\\n\":1}",
            " { \"a\" : [ 1 , 2 ] , \"b\" : \"x\" } ",
            "[1,\n2,\t3]",
        ] {
            check(raw);
        }
        let long: String = (0..100)
            .map(|i| format!("{{\"k{i}\":[{i},\"v\"],\"n\":"))
            .collect();
        let long = format!("{long}1{}", "}".repeat(100));
        check(&long);
    }

    #[test]
    fn go_html_escapes_are_kept_as_opm_keeps_them() {
        let raw = r#"{"a":{"r":"\u003e=1.0.0 \u0026 \u003c2"},"b":"\u003C"}"#;
        let value = RawValue::from_string(raw.to_string()).unwrap();
        let mut out = Vec::new();
        to_vec(&value, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\n    \"a\": {\n        \"r\": \"\\u003e=1.0.0 \\u0026 \\u003c2\"\n    },\n    \"b\": \"<\"\n}"
        );
    }

    #[test]
    fn blobs_print_as_their_trees_do() {
        let Some(shared) = crate::catalog::shared_catalogs() else {
            return;
        };
        let root = shared.join("community-operators-prod/catalogs/v4.20");
        let cfg = crate::catalog::load::load_dir(&root).unwrap();
        let mut out = Vec::new();
        for b in &cfg.bundles {
            to_vec(b, &mut out).unwrap();
            assert!(out == through_tree(b), "{}", b.name);
        }
        let v: Value = serde_json::json!({"k": [1, {"a": null}]});
        to_vec(&v, &mut out).unwrap();
        assert_eq!(out, through_tree(&v));
    }
}
