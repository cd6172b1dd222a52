//! JSON read as Go's `encoding/json` (`json.Unmarshal` into structs) reads it, for every
//! document whose meaning a signature vouches for: cosign's simple-signing payloads, in-toto
//! statements, DSSE envelopes and the manifests that carry them. A verifier that reads such a
//! document unlike cosign would check one thing while cosign (or any Go verifier) trusts
//! another, so a document on which the two readings could differ is refused instead.
//!
//! What Go does, from `encoding/json`'s documentation and source (`decode.go`, `fold.go`,
//! `scanner.go`), and what this module does with it:
//!
//! | Go | here |
//! |---|---|
//! | The whole input is checked first (`checkValid`): RFC 8259 JSON, one value, whitespace only space, tab, CR and LF, no byte-order mark, nesting at most 10000 deep | the same checks, same limit; a failure is a syntax error |
//! | A key matches a struct field by its tag name exactly, else case-insensitively under Unicode simple folding (`foldName`, equal to `bytes.EqualFold`) | the same; for the ASCII names these documents use, the only non-ASCII runes that fold onto them are U+212A KELVIN SIGN (k) and U+017F LATIN SMALL LETTER LONG S (s); U+0130 and U+0131 fold only to themselves |
//! | Several keys matching one field: each is decoded into it in turn, so the last wins (a nested object is even merged into the earlier one) | **refused**, in either order, whether the keys are spelt the same or differ in case: serde and most other readers keep the first or fail, so the readings would differ |
//! | A key matching no field is skipped | the same |
//! | `null` into a string or struct leaves it as it was; into a map, slice or interface it sets nil | the same (a missing value reads as `null`) |
//! | A value of the wrong type (a number into a string, an array into a struct): an `UnmarshalTypeError`, so `Unmarshal` fails | the same: an error naming the field |
//! | Keys of a map (`map[string]T`): any text, duplicates last-wins | the same |
//! | A number into `interface{}`: `float64` (`strconv.ParseFloat`); out of range is an error | the same; an integral value within 2^53 is kept as an integer for printing |
//! | Strings: escapes `\" \\ \/ \b \f \n \r \t \uXXXX`; a UTF-16 surrogate pair joins, a lone surrogate becomes U+FFFD; each byte of invalid UTF-8 becomes U+FFFD (`utf8.DecodeRune`); control characters are a syntax error | the same, keys included |

use std::collections::BTreeMap;

use serde_json::Value;

/// Go's `maxNestingDepth`.
const MAX_DEPTH: usize = 10_000;

/// A JSON value as Go's decoder sees the document: an object keeps every member in order,
/// duplicates too; strings are Go's unquoted text; numbers keep their literal.
#[derive(Debug, Clone, PartialEq)]
pub enum GoValue {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<GoValue>),
    Object(Vec<(String, GoValue)>),
}

impl GoValue {
    fn kind(&self) -> &'static str {
        match self {
            GoValue::Null => "null",
            GoValue::Bool(_) => "bool",
            GoValue::Number(_) => "number",
            GoValue::String(_) => "string",
            GoValue::Array(_) => "array",
            GoValue::Object(_) => "object",
        }
    }
}

/// Why a document was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoJsonError {
    #[error("not JSON (at byte {offset}): {what}")]
    Syntax { offset: usize, what: String },
    #[error(
        "keys {first:?} and {second:?} both name field {field:?}{at}: Go's encoding/json reads the last, other readers the first; refused so no reader can take the other"
    )]
    Ambiguous {
        field: String,
        first: String,
        second: String,
        at: String,
    },
    #[error("{at}: a {found} where Go's encoding/json takes {wanted}")]
    Type {
        at: String,
        found: &'static str,
        wanted: &'static str,
    },
    #[error("{at}: number {literal} is out of the range of a float64")]
    Range { at: String, literal: String },
    /// A free-form value (`optional`, a predicate) nested deeper than `olm` reads it. Go
    /// reads up to 10000 levels; no real annotation or SBOM comes near the limit, and a
    /// document `olm` cannot read as Go does is refused, never read otherwise.
    #[error(
        "{at}: nested {depth} levels deep, deeper than olm reads a free-form value ({limit}); refused"
    )]
    TooDeep {
        at: String,
        depth: usize,
        limit: usize,
    },
}

/// How deep a free-form value ([`any`]) may nest.
pub const MAX_ANY_DEPTH: usize = 256;

/// Dropped without recursion: a document may nest 10000 levels (Go's limit), more than the
/// stack of a worker thread holds one frame per level of.
impl Drop for GoValue {
    fn drop(&mut self) {
        fn take(v: &mut GoValue, into: &mut Vec<GoValue>) {
            match v {
                GoValue::Array(items) => into.append(items),
                GoValue::Object(members) => into.extend(members.drain(..).map(|(_, m)| m)),
                _ => {}
            }
        }
        let mut pending = Vec::new();
        take(self, &mut pending);
        while let Some(mut v) = pending.pop() {
            take(&mut v, &mut pending);
        }
    }
}

/// How deep `v` nests (a scalar is 0), walked without recursion.
fn depth_of(v: &GoValue) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 0usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            GoValue::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            GoValue::Object(members) => stack.extend(members.iter().map(|(_, m)| (m, d + 1))),
            _ => {}
        }
    }
    deepest
}

fn syntax(offset: usize, what: impl Into<String>) -> GoJsonError {
    GoJsonError::Syntax {
        offset,
        what: what.into(),
    }
}

/// Parses `bytes` as Go's decoder does: [`GoJsonError::Syntax`] for anything `checkValid`
/// refuses.
pub fn parse(bytes: &[u8]) -> Result<GoValue, GoJsonError> {
    Parser { b: bytes, i: 0 }.document()
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

enum Open {
    Array(Vec<GoValue>),
    Object(Vec<(String, GoValue)>, String),
}

impl Parser<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn unexpected(&self, looking_for: &str) -> GoJsonError {
        match self.peek() {
            None => syntax(self.i, format!("unexpected end of input {looking_for}")),
            Some(c) => syntax(
                self.i,
                format!("invalid character {:?} {looking_for}", char::from(c)),
            ),
        }
    }

    /// A key and its colon, the parser on the value after it.
    fn key(&mut self) -> Result<String, GoJsonError> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.unexpected("looking for beginning of object key string"));
        }
        let key = self.string()?;
        self.ws();
        if self.peek() != Some(b':') {
            return Err(self.unexpected("after object key"));
        }
        self.i += 1;
        Ok(key)
    }

    fn document(mut self) -> Result<GoValue, GoJsonError> {
        let mut stack: Vec<Open> = Vec::new();
        'value: loop {
            self.ws();
            let mut value = match self.peek() {
                Some(open @ (b'{' | b'[')) => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(syntax(self.i, "exceeded max depth"));
                    }
                    self.i += 1;
                    self.ws();
                    match (open, self.peek()) {
                        (b'{', Some(b'}')) => {
                            self.i += 1;
                            GoValue::Object(Vec::new())
                        }
                        (b'[', Some(b']')) => {
                            self.i += 1;
                            GoValue::Array(Vec::new())
                        }
                        (b'{', _) => {
                            let key = self.key()?;
                            stack.push(Open::Object(Vec::new(), key));
                            continue 'value;
                        }
                        _ => {
                            stack.push(Open::Array(Vec::new()));
                            continue 'value;
                        }
                    }
                }
                Some(b'"') => GoValue::String(self.string()?),
                Some(b't') => self.literal(b"true", GoValue::Bool(true))?,
                Some(b'f') => self.literal(b"false", GoValue::Bool(false))?,
                Some(b'n') => self.literal(b"null", GoValue::Null)?,
                Some(b'-' | b'0'..=b'9') => self.number()?,
                _ => return Err(self.unexpected("looking for beginning of value")),
            };
            // The value is complete: put it in its parent, closing every parent it completes.
            loop {
                self.ws();
                match stack.last_mut() {
                    None => {
                        if self.i < self.b.len() {
                            return Err(self.unexpected("after top-level value"));
                        }
                        return Ok(value);
                    }
                    Some(Open::Array(items)) => {
                        items.push(value);
                        match self.peek() {
                            Some(b',') => {
                                self.i += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.i += 1;
                                let Some(Open::Array(items)) = stack.pop() else {
                                    unreachable!("the last frame is an array")
                                };
                                value = GoValue::Array(items);
                            }
                            _ => return Err(self.unexpected("after array element")),
                        }
                    }
                    Some(Open::Object(members, key)) => {
                        members.push((std::mem::take(key), value));
                        match self.peek() {
                            Some(b',') => {
                                self.i += 1;
                                *key = self.key()?;
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.i += 1;
                                let Some(Open::Object(members, _)) = stack.pop() else {
                                    unreachable!("the last frame is an object")
                                };
                                value = GoValue::Object(members);
                            }
                            _ => return Err(self.unexpected("after object key:value pair")),
                        }
                    }
                }
            }
        }
    }

    fn literal(&mut self, word: &[u8], value: GoValue) -> Result<GoValue, GoJsonError> {
        for want in word {
            if self.peek() != Some(*want) {
                let word = String::from_utf8_lossy(word);
                let want = char::from(*want);
                return Err(self.unexpected(&format!("in literal {word} (expecting {want:?})")));
            }
            self.i += 1;
        }
        Ok(value)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`, as Go's scanner takes it.
    fn number(&mut self) -> Result<GoValue, GoJsonError> {
        let start = self.i;
        let digits = |p: &mut Self| {
            let from = p.i;
            while let Some(b'0'..=b'9') = p.peek() {
                p.i += 1;
            }
            p.i > from
        };
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.peek() {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.unexpected("in numeric literal")),
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            if !digits(self) {
                return Err(self.unexpected("after decimal point in numeric literal"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            if !digits(self) {
                return Err(self.unexpected("in exponent of numeric literal"));
            }
        }
        let text = std::str::from_utf8(&self.b[start..self.i]).unwrap_or_default();
        Ok(GoValue::Number(text.to_string()))
    }

    /// A string literal, unquoted as Go's `unquoteBytes` does.
    fn string(&mut self) -> Result<String, GoJsonError> {
        self.i += 1; // the opening quote
        let start = self.i;
        // The common case: no escapes, valid UTF-8.
        while let Some(&c) = self.b.get(self.i) {
            match c {
                b'"' => {
                    if let Ok(s) = std::str::from_utf8(&self.b[start..self.i]) {
                        self.i += 1;
                        return Ok(s.to_string());
                    }
                    break;
                }
                b'\\' => break,
                c if c < 0x20 => break,
                _ => self.i += 1,
            }
        }
        self.i = start;
        let mut out = String::new();
        loop {
            let Some(&c) = self.b.get(self.i) else {
                return Err(syntax(self.i, "unexpected end of input in string literal"));
            };
            match c {
                b'"' => {
                    self.i += 1;
                    return Ok(out);
                }
                c if c < 0x20 => {
                    return Err(syntax(
                        self.i,
                        format!("invalid character {:?} in string literal", char::from(c)),
                    ));
                }
                b'\\' => {
                    let at = self.i;
                    let esc = self.b.get(self.i + 1).copied();
                    self.i += 2;
                    match esc {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => {
                            let Some(r) = self.hex4(self.i) else {
                                return Err(syntax(at, "invalid \\u escape in string literal"));
                            };
                            self.i += 4;
                            if (0xD800..0xE000).contains(&r) {
                                // A pair only when a low surrogate escape follows at once.
                                let low = match self.b.get(self.i..self.i + 2) {
                                    Some(b"\\u") => self.hex4(self.i + 2),
                                    _ => None,
                                };
                                match low {
                                    Some(lo) if r < 0xDC00 && (0xDC00..0xE000).contains(&lo) => {
                                        let c = 0x10000 + ((r - 0xD800) << 10) + (lo - 0xDC00);
                                        out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                                        self.i += 6;
                                    }
                                    _ => out.push('\u{FFFD}'),
                                }
                            } else {
                                out.push(char::from_u32(r).unwrap_or('\u{FFFD}'));
                            }
                        }
                        Some(c) => {
                            return Err(syntax(
                                at + 1,
                                format!(
                                    "invalid character {:?} in string escape code",
                                    char::from(c)
                                ),
                            ));
                        }
                        None => {
                            return Err(syntax(
                                at,
                                "unexpected end of input in string escape code",
                            ));
                        }
                    }
                }
                c if c < 0x80 => {
                    out.push(char::from(c));
                    self.i += 1;
                }
                c => {
                    // `utf8.DecodeRune`: a valid sequence is one rune; anything else is one
                    // U+FFFD for its first byte.
                    let len = match c {
                        0xC2..=0xDF => 2,
                        0xE0..=0xEF => 3,
                        0xF0..=0xF4 => 4,
                        _ => 0,
                    };
                    let decoded = self
                        .b
                        .get(self.i..self.i + len)
                        .filter(|_| len > 0)
                        .and_then(|s| std::str::from_utf8(s).ok());
                    match decoded {
                        Some(s) => {
                            out.push_str(s);
                            self.i += len;
                        }
                        None => {
                            out.push('\u{FFFD}');
                            self.i += 1;
                        }
                    }
                }
            }
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.b.get(at..at + 4)?;
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(digits).ok()?, 16).ok()
    }
}

/// Whether `key` names the field `field` (an ASCII name) as Go matches it: exactly, or equal
/// under `foldName` (ASCII letters without case; U+212A is `K`, U+017F is `S`).
pub fn folds_to(key: &str, field: &str) -> bool {
    let mut k = key.chars();
    for f in field.bytes() {
        let c = match k.next() {
            Some('\u{212A}') => b'K',
            Some('\u{017F}') => b'S',
            Some(c) if c.is_ascii() => (c as u8).to_ascii_uppercase(),
            _ => return false,
        };
        if c != f.to_ascii_uppercase() {
            return false;
        }
    }
    k.next().is_none()
}

/// The members of a Go struct read from a JSON object: which member each field takes.
pub struct Fields<'a, const N: usize> {
    values: [Option<&'a GoValue>; N],
    at: String,
    names: [&'static str; N],
}

/// Matches the members of `v` (a JSON object, or `null`: all fields absent) to the fields
/// `names` of a Go struct at `at` (a path for messages: `critical.image`). Two members on one
/// field are refused; members on no field are skipped.
pub fn fields<'a, const N: usize>(
    v: Option<&'a GoValue>,
    names: [&'static str; N],
    at: &str,
) -> Result<Fields<'a, N>, GoJsonError> {
    let mut values: [Option<&'a GoValue>; N] = [None; N];
    let mut keys: [Option<&'a str>; N] = [None; N];
    let members = match v {
        None | Some(GoValue::Null) => &[][..],
        Some(GoValue::Object(m)) => &m[..],
        Some(other) => {
            return Err(GoJsonError::Type {
                at: shown(at),
                found: other.kind(),
                wanted: "an object",
            });
        }
    };
    for (key, value) in members {
        // Exact first, then folded (no two names here fold alike, so the order is moot).
        let Some(i) = names
            .iter()
            .position(|n| n == key)
            .or_else(|| names.iter().position(|n| folds_to(key, n)))
        else {
            continue;
        };
        if let Some(first) = keys[i] {
            return Err(GoJsonError::Ambiguous {
                field: names[i].to_string(),
                first: first.to_string(),
                second: key.clone(),
                at: match at {
                    "" => String::new(),
                    at => format!(" in {at}"),
                },
            });
        }
        keys[i] = Some(key);
        values[i] = Some(value);
    }
    Ok(Fields {
        values,
        at: at.to_string(),
        names,
    })
}

fn shown(at: &str) -> String {
    match at {
        "" => "the document".into(),
        at => at.into(),
    }
}

impl<'a, const N: usize> Fields<'a, N> {
    fn path(&self, i: usize) -> String {
        match self.at.as_str() {
            "" => self.names[i].to_string(),
            at => format!("{at}.{}", self.names[i]),
        }
    }

    fn index(&self, name: &str) -> usize {
        self.names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("{name} is not one of the fields {:?}", self.names))
    }

    /// The raw member a field took, and the path to it.
    pub fn get(&self, name: &str) -> (Option<&'a GoValue>, String) {
        let i = self.index(name);
        (self.values[i], self.path(i))
    }

    /// A `string` field: `""` when absent or `null`.
    pub fn string(&self, name: &str) -> Result<String, GoJsonError> {
        let (v, at) = self.get(name);
        string(v, &at)
    }

    /// A struct field: its own fields `names`.
    pub fn object<const M: usize>(
        &self,
        name: &str,
        names: [&'static str; M],
    ) -> Result<Fields<'a, M>, GoJsonError> {
        let (v, at) = self.get(name);
        fields(v, names, &at)
    }

    /// A slice field: its elements (none when absent or `null`).
    pub fn array(&self, name: &str) -> Result<&'a [GoValue], GoJsonError> {
        let (v, at) = self.get(name);
        match v {
            None | Some(GoValue::Null) => Ok(&[]),
            Some(GoValue::Array(items)) => Ok(items),
            Some(other) => Err(GoJsonError::Type {
                at,
                found: other.kind(),
                wanted: "an array",
            }),
        }
    }

    /// A `map[string]string` field: `None` when absent or `null`; duplicate keys last-wins.
    pub fn string_map(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, GoJsonError> {
        let (v, at) = self.get(name);
        match v {
            None | Some(GoValue::Null) => Ok(None),
            Some(GoValue::Object(members)) => {
                let mut out = BTreeMap::new();
                for (k, v) in members {
                    out.insert(k.clone(), string(Some(v), &format!("{at}.{k}"))?);
                }
                Ok(Some(out))
            }
            Some(other) => Err(GoJsonError::Type {
                at,
                found: other.kind(),
                wanted: "an object",
            }),
        }
    }

    /// A `map[string]interface{}` field: `None` when absent or `null`.
    pub fn any_map(&self, name: &str) -> Result<Option<BTreeMap<String, Value>>, GoJsonError> {
        let (v, at) = self.get(name);
        match v {
            None | Some(GoValue::Null) => Ok(None),
            Some(GoValue::Object(members)) => {
                let mut out = BTreeMap::new();
                for (k, v) in members {
                    out.insert(k.clone(), any(v, &format!("{at}.{k}"))?);
                }
                Ok(Some(out))
            }
            Some(other) => Err(GoJsonError::Type {
                at,
                found: other.kind(),
                wanted: "an object",
            }),
        }
    }

    /// An `interface{}` field (absent: `null`).
    pub fn any(&self, name: &str) -> Result<Value, GoJsonError> {
        let (v, at) = self.get(name);
        v.map_or(Ok(Value::Null), |v| any(v, &at))
    }

    /// An `int64` field: 0 when absent or `null`; only an integer literal in range.
    pub fn int(&self, name: &str) -> Result<i64, GoJsonError> {
        let (v, at) = self.get(name);
        match v {
            None | Some(GoValue::Null) => Ok(0),
            Some(GoValue::Number(n)) => n.parse().map_err(|_| GoJsonError::Type {
                at,
                found: "number that is not an int64",
                wanted: "an int64",
            }),
            Some(other) => Err(GoJsonError::Type {
                at,
                found: other.kind(),
                wanted: "a number",
            }),
        }
    }
}

/// A `string`: `""` for absent or `null`.
pub fn string(v: Option<&GoValue>, at: &str) -> Result<String, GoJsonError> {
    match v {
        None | Some(GoValue::Null) => Ok(String::new()),
        Some(GoValue::String(s)) => Ok(s.clone()),
        Some(other) => Err(GoJsonError::Type {
            at: shown(at),
            found: other.kind(),
            wanted: "a string",
        }),
    }
}

/// An `interface{}` as Go builds it (`map[string]interface{}`, `[]interface{}`, `float64`,
/// `string`, `bool`, nil), as a JSON value: duplicate keys last-wins, numbers through
/// `float64` (an integral one within 2^53 kept as an integer, which Go prints alike; `-0`
/// kept a float, as Go prints it).
/// A value nested deeper than [`MAX_ANY_DEPTH`] is refused before it is converted (the
/// conversion, and whatever prints or drops the result, recurse once per level).
pub fn any(v: &GoValue, at: &str) -> Result<Value, GoJsonError> {
    let depth = depth_of(v);
    if depth > MAX_ANY_DEPTH {
        return Err(GoJsonError::TooDeep {
            at: shown(at),
            depth,
            limit: MAX_ANY_DEPTH,
        });
    }
    any_within(v, at)
}

fn any_within(v: &GoValue, at: &str) -> Result<Value, GoJsonError> {
    Ok(match v {
        GoValue::Null => Value::Null,
        GoValue::Bool(b) => Value::Bool(*b),
        GoValue::String(s) => Value::String(s.clone()),
        GoValue::Number(n) => {
            let f: f64 = n.parse().unwrap_or(f64::INFINITY);
            if !f.is_finite() {
                return Err(GoJsonError::Range {
                    at: shown(at),
                    literal: n.clone(),
                });
            }
            // Negative zero stays a float: Go keeps its sign and prints it `-0`.
            let negative_zero = f == 0.0 && f.is_sign_negative();
            if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 && !negative_zero {
                Value::from(f as i64)
            } else {
                Value::from(f)
            }
        }
        GoValue::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| any_within(v, &format!("{at}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        GoValue::Object(members) => {
            let mut out = serde_json::Map::new();
            for (k, v) in members {
                out.insert(k.clone(), any_within(v, &format!("{at}.{k}"))?);
            }
            Value::Object(out)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> GoValue {
        GoValue::String(v.into())
    }

    #[test]
    fn syntax_is_checked_as_go_checks_it() {
        for ok in [
            "{}",
            " [1, -0, 0.5, 1e5, 1E+5, -1.5e-3] ",
            "\t\"x\"\r\n",
            "null",
            r#"{"a":{"b":[true,false,null]}}"#,
        ] {
            assert!(parse(ok.as_bytes()).is_ok(), "{ok}");
        }
        for bad in [
            "",
            " ",
            "{",
            "[1,]",
            r#"{"a":1,}"#,
            "01",
            "1.",
            ".5",
            "+1",
            "1e",
            "-",
            "NaN",
            "tru",
            "nulll",
            "{} {}",
            "\u{feff}{}",
            "{'a':1}",
            r#""\x""#,
            r#""\'""#,
            "\"a\u{1}\"",
            r#""\u12""#,
            "[1 2]",
            r#"{"a" 1}"#,
            r#"{1:2}"#,
            "\u{a0}{}",
        ] {
            let e = parse(bad.as_bytes()).unwrap_err();
            assert!(matches!(e, GoJsonError::Syntax { .. }), "{bad:?}: {e}");
        }
        // Go's scanner stops at 10000 levels.
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(deep(10_000).as_bytes()).is_ok());
        assert!(parse(deep(10_001).as_bytes()).is_err());
    }

    #[test]
    fn free_form_values_nested_past_the_limit_are_refused_not_overflowed() {
        let nested = |n: usize| format!("{{\"o\":{}1{}}}", "[".repeat(n), "]".repeat(n));
        let ok = parse(nested(MAX_ANY_DEPTH).as_bytes()).unwrap();
        assert!(fields(Some(&ok), ["o"], "").unwrap().any("o").is_ok());
        // Go reads 10000 levels; olm refuses past its limit, in a thread with a small stack,
        // instead of recursing once per level.
        let deep = parse(nested(9_990).as_bytes()).unwrap();
        let e = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn_scoped(s, || {
                    fields(Some(&deep), ["o"], "")
                        .unwrap()
                        .any("o")
                        .unwrap_err()
                })
                .unwrap()
                .join()
                .unwrap()
        });
        assert!(
            matches!(e, GoJsonError::TooDeep { depth: 9_990, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("deeper than olm reads"), "{e}");
    }

    #[test]
    fn strings_are_unquoted_as_go_unquotes_them() {
        let one = |json: &[u8]| match &parse(json).unwrap() {
            GoValue::String(s) => s.clone(),
            v => panic!("{v:?}"),
        };
        assert_eq!(one(br#""a\"\\\/\b\f\n\r\t""#), "a\"\\/\u{8}\u{c}\n\r\t");
        assert_eq!(one(br#""\u00e9\uD83D\uDE00""#), "é😀");
        // Lone surrogates: each one U+FFFD, what follows read on its own.
        assert_eq!(one(br#""\ud800""#), "\u{FFFD}");
        assert_eq!(one(br#""\ud800\u0041""#), "\u{FFFD}A");
        assert_eq!(one(br#""\udc00\ud800""#), "\u{FFFD}\u{FFFD}");
        assert_eq!(one(br#""\ud800x""#), "\u{FFFD}x");
        // Invalid UTF-8: one U+FFFD per byte, as utf8.DecodeRune steps.
        assert_eq!(one(b"\"a\xffb\""), "a\u{FFFD}b");
        assert_eq!(one(b"\"\xe2\x82\""), "\u{FFFD}\u{FFFD}");
        assert_eq!(one(b"\"\xed\xa0\x80\""), "\u{FFFD}\u{FFFD}\u{FFFD}");
        assert_eq!(one(b"\"\xc0\xaf\""), "\u{FFFD}\u{FFFD}");
        assert_eq!(one("\"ſ€😀\"".as_bytes()), "ſ€😀");
        // Keys too.
        assert_eq!(
            parse(br#"{"\u0063ritical":1}"#).unwrap(),
            GoValue::Object(vec![("critical".into(), GoValue::Number("1".into()))])
        );
    }

    #[test]
    fn field_names_fold_as_go_folds_them() {
        for (key, field, same) in [
            ("critical", "critical", true),
            ("Critical", "critical", true),
            ("CRITICAL", "critical", true),
            ("docKer-reference", "docker-reference", true),
            ("doc\u{212A}er-reference", "docker-reference", true),
            ("\u{17F}ubject", "subject", true),
            ("\u{17F}UBJECT", "subject", true),
            // Dotted and dotless i fold only to themselves.
            ("\u{130}dentity", "identity", false),
            ("\u{131}dentity", "identity", false),
            ("docker_reference", "docker-reference", false),
            ("dockerreference", "docker-reference", false),
            ("critical ", "critical", false),
            ("critica", "critical", false),
            ("predicatetype", "predicateType", true),
            ("PAYLOADTYPE", "payloadType", true),
            ("_TYPE", "_type", true),
        ] {
            assert_eq!(folds_to(key, field), same, "{key:?} ~ {field:?}");
        }
    }

    /// What Go's `json.Unmarshal` leaves in `critical.image.docker-manifest-digest` of a
    /// `payload.SimpleContainerImage` for each document, per the rules in the module's
    /// table; `None` where this module refuses (Go's result then depends on key order, which
    /// another reader does not follow). Both orders of each pair of keys are tried.
    #[test]
    fn differential_table_against_go_rules() {
        let digest = |doc: &str| -> Result<String, GoJsonError> {
            let v = parse(doc.as_bytes())?;
            let top = fields(Some(&v), ["critical", "optional"], "")?;
            top.object("critical", ["identity", "image", "type"])?
                .object("image", ["docker-manifest-digest"])
                .and_then(|i| i.string("docker-manifest-digest"))
        };
        let img = |members: &str| format!(r#"{{"critical":{{"image":{{{members}}}}}}}"#);
        let cases: &[(&str, Option<&str>)] = &[
            (r#""docker-manifest-digest":"A""#, Some("A")),
            (r#""Docker-Manifest-Digest":"B""#, Some("B")),
            ("\"doc\u{212A}er-manifest-digest\":\"K\"", Some("K")),
            ("\"docker-manifest-dige\u{17F}t\":\"S\"", Some("S")),
            (r#""docker-manifest-digest":null"#, Some("")),
            (r#""docker_manifest_digest":"X""#, Some("")),
            (
                r#""docker-manifest-digest":"A","other":"Z","other":"Y""#,
                Some("A"),
            ),
        ];
        for (members, go) in cases {
            let got = digest(&img(members)).ok();
            assert_eq!(got.as_deref(), *go, "{members}");
        }
        // Pairs that land on one field, in both orders.
        let spellings = [
            r#""docker-manifest-digest":"A""#,
            r#""Docker-Manifest-Digest":"B""#,
            r#""DOCKER-MANIFEST-DIGEST":"C""#,
            "\"doc\u{212A}er-manifest-digest\":\"K\"",
            r#""docker-manifest-digest":null"#,
        ];
        for a in spellings {
            for b in spellings {
                for doc in [img(&format!("{a},{b}")), img(&format!("{b},{a}"))] {
                    let e = digest(&doc).unwrap_err();
                    assert!(matches!(e, GoJsonError::Ambiguous { .. }), "{doc}: {e}");
                }
            }
        }
        // One level up too: two `critical`s, two `image`s.
        for doc in [
            r#"{"critical":{"image":{"docker-manifest-digest":"A"}},"Critical":{"image":{"docker-manifest-digest":"B"}}}"#,
            r#"{"Critical":{},"critical":{"image":{"docker-manifest-digest":"A"}}}"#,
            r#"{"critical":{"image":{"docker-manifest-digest":"A"},"IMAGE":{}}}"#,
        ] {
            let e = digest(doc).unwrap_err();
            assert!(e.to_string().contains("both name field"), "{e}");
        }
        // Wrong types fail Go's Unmarshal; null structs are zero values.
        for doc in [
            r#"{"critical":{"image":{"docker-manifest-digest":5}}}"#,
            r#"{"critical":{"image":"sha256:x"}}"#,
            r#"{"critical":[]}"#,
            r#"[]"#,
        ] {
            assert!(
                matches!(digest(doc), Err(GoJsonError::Type { .. })),
                "{doc}"
            );
        }
        assert_eq!(digest(r#"{"critical":null}"#).unwrap(), "");
        assert_eq!(digest("null").unwrap(), "");
    }

    #[test]
    fn interfaces_and_maps_read_as_go_builds_them() {
        let v = parse(br#"{"o":{"a":1,"a":2.5,"b":[1e2,-0.0,"x",null,true],"c":{"d":1,"d":2}}}"#)
            .unwrap();
        let f = fields(Some(&v), ["o"], "").unwrap();
        let m = f.any_map("o").unwrap().unwrap();
        // Map keys last-wins, at every level; numbers as float64.
        assert_eq!(m["a"], serde_json::json!(2.5));
        assert_eq!(m["b"], serde_json::json!([100, -0.0, "x", null, true]));
        assert!(m["b"][1].as_f64().is_some_and(|z| z.is_sign_negative()));
        assert_eq!(m["c"], serde_json::json!({"d": 2}));
        let null = parse(br#"{"o":null}"#).unwrap();
        assert_eq!(
            fields(Some(&null), ["o"], "")
                .unwrap()
                .any_map("o")
                .unwrap(),
            None
        );
        let big = parse(br#"{"o":{"n":1e400}}"#).unwrap();
        let e = fields(Some(&big), ["o"], "")
            .unwrap()
            .any_map("o")
            .unwrap_err();
        assert!(matches!(e, GoJsonError::Range { .. }), "{e}");
        // Correctly rounded, as strconv.ParseFloat rounds (serde_json's default reader is one
        // unit in the last place off on this one; the fuzzer found it).
        let long = parse(br#"{"o":{"n":66666666666666666666666666666666666}}"#).unwrap();
        let n = fields(Some(&long), ["o"], "")
            .unwrap()
            .any_map("o")
            .unwrap()
            .unwrap();
        assert_eq!(n["n"].as_f64(), Some(6.666666666666666e34));
        let strings = parse(br#"{"d":{"sha256":"a","sha256":"b","x":null}}"#).unwrap();
        let d = fields(Some(&strings), ["d"], "")
            .unwrap()
            .string_map("d")
            .unwrap()
            .unwrap();
        assert_eq!((d["sha256"].as_str(), d["x"].as_str()), ("b", ""));
        let bad = parse(br#"{"d":{"sha256":1}}"#).unwrap();
        assert!(
            fields(Some(&bad), ["d"], "")
                .unwrap()
                .string_map("d")
                .is_err()
        );
        assert_eq!(s("x"), GoValue::String("x".into()));
    }
}
