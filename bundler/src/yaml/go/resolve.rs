//! go-yaml v2's scalar typing (`resolve.go`): YAML 1.1 booleans and nulls, integers in any
//! base Go's `strconv.ParseInt(s, 0, 64)` reads (so `0644` is octal), floats of YAML's own
//! shape, and everything else a string. Explicit tags either agree or fail the document.

pub const STR: &str = "tag:yaml.org,2002:str";
pub const BOOL: &str = "tag:yaml.org,2002:bool";
pub const INT: &str = "tag:yaml.org,2002:int";
pub const FLOAT: &str = "tag:yaml.org,2002:float";
pub const NULL: &str = "tag:yaml.org,2002:null";
pub const TIMESTAMP: &str = "tag:yaml.org,2002:timestamp";
pub const BINARY: &str = "tag:yaml.org,2002:binary";
pub const MERGE: &str = "tag:yaml.org,2002:merge";

/// A scalar's value as go-yaml types it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Resolved {
    Null,
    Bool(bool),
    /// Go's `int`.
    Int(i64),
    /// Go's `uint64`, for integers above `i64::MAX`.
    Uint(u64),
    Float(f64),
    /// The text itself (`!!str`, or what nothing else reads).
    Str,
    /// A timestamp: decoded into `interface{}`, go-yaml keeps its text.
    Timestamp,
}

/// How the first byte of a plain scalar narrows what it may be (`resolveTable`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Hint {
    None,
    Sign,
    Digit,
    Map,
    Dot,
}

fn hint(b: u8) -> Hint {
    match b {
        b'+' | b'-' => Hint::Sign,
        b'0'..=b'9' => Hint::Digit,
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => Hint::Map,
        b'.' => Hint::Dot,
        _ => Hint::None,
    }
}

/// The words go-yaml reads as something other than a string (`resolveMapList`).
fn lookup(s: &str) -> Option<Resolved> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Resolved::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Resolved::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// The tag a resolved value carries.
fn tag_of(r: Resolved) -> &'static str {
    match r {
        Resolved::Null => NULL,
        Resolved::Bool(_) => BOOL,
        Resolved::Int(_) | Resolved::Uint(_) => INT,
        Resolved::Float(_) => FLOAT,
        Resolved::Str => STR,
        Resolved::Timestamp => TIMESTAMP,
    }
}

/// `!!int` as `!!str`, as go-yaml writes tags in messages.
pub fn short_tag(tag: &str) -> String {
    match tag.strip_prefix("tag:yaml.org,2002:") {
        Some(rest) => format!("!!{rest}"),
        None => tag.to_string(),
    }
}

/// A plain scalar without a tag: what go-yaml makes of it (never fails).
#[inline]
pub fn plain(s: &str) -> Resolved {
    let h = match s.as_bytes().first() {
        None => return Resolved::Null,
        Some(&b) => hint(b),
    };
    if h == Hint::None {
        return Resolved::Str;
    }
    untagged(s, h, true)
}

/// Whether a plain scalar is read as its own text (no lookup needed for most strings).
#[inline]
pub fn plain_is_text(s: &str) -> bool {
    matches!(plain(s), Resolved::Str)
}

/// A plain scalar's JSON value, `None` for NaN and the infinities (the document then fails,
/// as `json.Marshal` refuses them).
pub fn plain_value(s: &str) -> Option<serde_json::Value> {
    use serde_json::Value;
    Some(match plain(s) {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::from(i),
        Resolved::Uint(u) => Value::from(u),
        Resolved::Float(f) if f.is_finite() => Value::Number(super::value::float_number(f)),
        Resolved::Float(_) => return None,
        Resolved::Str | Resolved::Timestamp => Value::String(s.to_string()),
    })
}

/// A plain mapping key that becomes exactly its text as a JSON key (not `<<`, which merges).
pub fn is_plain_key(s: &str) -> bool {
    s != "<<" && plain_is_text(s)
}

fn untagged(s: &str, h: Hint, timestamps: bool) -> Resolved {
    if let Some(r) = lookup(s) {
        return r;
    }
    match h {
        Hint::Map | Hint::None => Resolved::Str,
        Hint::Dot => match dot_float(s) {
            Some(f) => Resolved::Float(f),
            None => Resolved::Str,
        },
        Hint::Digit | Hint::Sign => {
            if timestamps && is_timestamp(s) {
                return Resolved::Timestamp;
            }
            number(s).unwrap_or(Resolved::Str)
        }
    }
}

/// `resolve(tag, in)` for a scalar with tag `tag` (`""` when implicit): the tag it resolves
/// to and the value, or go-yaml's error.
pub fn resolve<'t>(tag: &'t str, s: &str) -> Result<(&'t str, Resolved), String> {
    if !matches!(tag, "" | STR | BOOL | INT | FLOAT | NULL | TIMESTAMP) {
        return Ok((tag, Resolved::Str));
    }
    let h = match s.as_bytes().first() {
        None => Hint::Map,
        Some(&b) => hint(b),
    };
    let r = if h != Hint::None && tag != STR && tag != BINARY {
        untagged(s, h, tag.is_empty() || tag == TIMESTAMP)
    } else {
        Resolved::Str
    };
    let rtag = tag_of(r);
    if tag.is_empty() || tag == rtag || tag == STR || tag == BINARY {
        return Ok((rtag, r));
    }
    if tag == FLOAT
        && let Resolved::Int(v) = r
    {
        return Ok((FLOAT, Resolved::Float(v as f64)));
    }
    Err(format!(
        "cannot decode {} `{}` as a {}",
        short_tag(rtag),
        s,
        short_tag(tag)
    ))
}

/// A float after a leading `.`, as Go's `strconv.ParseFloat` reads it (finite only).
fn dot_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 1;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i == 1 {
        return None;
    }
    if i < b.len() {
        if !matches!(b[i], b'e' | b'E') {
            return None;
        }
        i += 1;
        if i < b.len() && matches!(b[i], b'+' | b'-') {
            i += 1;
        }
        let digits = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == digits || i != b.len() {
            return None;
        }
    }
    finite(s)
}

fn finite(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Integers and floats of a scalar starting with a digit or sign, in go-yaml's order:
/// `ParseInt(plain, 0, 64)`, `ParseUint`, a YAML-shaped float, then `0b`/`-0b` binary.
fn number(s: &str) -> Option<Resolved> {
    let owned;
    let plain = if s.contains('_') {
        owned = s.replace('_', "");
        owned.as_str()
    } else {
        s
    };
    if let Some(i) = parse_int(plain) {
        return Some(Resolved::Int(i));
    }
    if let Some(u) = parse_uint(plain) {
        return Some(Resolved::Uint(u));
    }
    if yaml_style_float(plain)
        && let Some(f) = finite(plain)
    {
        return Some(Resolved::Float(f));
    }
    if let Some(bits) = plain.strip_prefix("0b") {
        if let Ok(i) = i64::from_str_radix(bits, 2)
            && !bits.starts_with(['+', '-'])
        {
            return Some(Resolved::Int(i));
        }
        if let Ok(u) = u64::from_str_radix(bits, 2)
            && !bits.starts_with(['+', '-'])
        {
            return Some(Resolved::Uint(u));
        }
    } else if let Some(bits) = plain.strip_prefix("-0b")
        && !bits.starts_with(['+', '-'])
        && let Ok(i) = i64::from_str_radix(&format!("-{bits}"), 2)
    {
        return Some(Resolved::Int(i));
    }
    None
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && matches!(b[i], b'+' | b'-') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    if int_digits == 0 {
        // `\.[0-9]+`
        if i >= b.len() || b[i] != b'.' {
            return false;
        }
        i += 1;
        let frac = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == frac {
            return false;
        }
    } else if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i < b.len() && matches!(b[i], b'e' | b'E') {
        i += 1;
        if i < b.len() && matches!(b[i], b'+' | b'-') {
            i += 1;
        }
        let exp = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == exp {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseUint(s, 0, 64)` without underscores: `0x`, `0o`, `0b` and a leading
/// `0` (octal) choose the base.
pub fn parse_uint(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.is_empty() {
        return None;
    }
    let (base, digits) = if b[0] == b'0' {
        match b.get(1).map(u8::to_ascii_lowercase) {
            Some(b'b') if b.len() >= 3 => (2, &s[2..]),
            Some(b'o') if b.len() >= 3 => (8, &s[2..]),
            Some(b'x') if b.len() >= 3 => (16, &s[2..]),
            _ => (8, &s[1..]),
        }
    } else {
        (10, s)
    };
    let mut n: u64 = 0;
    for c in digits.bytes() {
        let d = (c as char).to_digit(base)?;
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Go's `strconv.ParseInt(s, 0, 64)` without underscores.
pub fn parse_int(s: &str) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let u = parse_uint(rest)?;
    if neg {
        if u > 1 << 63 {
            return None;
        }
        Some((u as i64).wrapping_neg())
    } else if u >= 1 << 63 {
        None
    } else {
        Some(u as i64)
    }
}

/// Whether go-yaml reads the text as a timestamp (`parseTimestamp`): four digits and `-`,
/// then one of its layouts as Go's `time.Parse` reads them.
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    timestamp_layouts(s)
}

/// `2006-1-2T15:4:5.999999999Z07:00` (also with `t`), `2006-1-2 15:4:5.999999999`, `2006-1-2`.
fn timestamp_layouts(s: &str) -> bool {
    let b = s.as_bytes();
    let year: i64 = s[..4].parse().unwrap_or(0);
    let mut i = 5;
    let Some(month) = getnum(b, &mut i) else {
        return false;
    };
    if b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(day) = getnum(b, &mut i) else {
        return false;
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in(year, month) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let zone = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return false,
    };
    i += 1;
    if !zone {
        while b.get(i) == Some(&b' ') {
            i += 1;
        }
    }
    let Some(hour) = getnum(b, &mut i) else {
        return false;
    };
    if b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(min) = getnum(b, &mut i) else {
        return false;
    };
    if b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(sec) = getnum(b, &mut i) else {
        return false;
    };
    if hour > 23 || min > 59 || sec > 59 {
        return false;
    }
    if matches!(b.get(i), Some(b'.' | b',')) && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    if !zone {
        return i == b.len();
    }
    match b.get(i) {
        Some(b'Z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            let tz = &b[i + 1..];
            tz.len() == 5
                && tz[0].is_ascii_digit()
                && tz[1].is_ascii_digit()
                && tz[2] == b':'
                && tz[3].is_ascii_digit()
                && tz[4].is_ascii_digit()
        }
        _ => false,
    }
}

/// One or two digits (Go's `getnum(value, false)`).
fn getnum(b: &[u8], i: &mut usize) -> Option<u32> {
    let d0 = b.get(*i).filter(|c| c.is_ascii_digit())?;
    *i += 1;
    match b.get(*i).filter(|c| c.is_ascii_digit()) {
        Some(d1) => {
            *i += 1;
            Some(u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0'))
        }
        None => Some(u32::from(d0 - b'0')),
    }
}

fn days_in(year: i64, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_scalars_resolve_as_go_yaml_does() {
        let cases: &[(&str, Resolved)] = &[
            ("", Resolved::Null),
            ("~", Resolved::Null),
            ("nULL", Resolved::Str),
            ("yes", Resolved::Bool(true)),
            ("yEs", Resolved::Str),
            ("OFF", Resolved::Bool(false)),
            ("0644", Resolved::Int(420)),
            ("+0755", Resolved::Int(493)),
            ("0o17", Resolved::Int(15)),
            ("0x1F", Resolved::Int(31)),
            ("0b101", Resolved::Int(5)),
            ("1_000", Resolved::Int(1000)),
            ("08", Resolved::Float(8.0)),
            ("1.10", Resolved::Float(1.1)),
            ("1e400", Resolved::Str),
            (".5", Resolved::Float(0.5)),
            ("1:20", Resolved::Str),
            ("2001-12-14", Resolved::Timestamp),
            ("18446744073709551615", Resolved::Uint(u64::MAX)),
            ("-9223372036854775808", Resolved::Int(i64::MIN)),
            ("1.2.3", Resolved::Str),
            ("-", Resolved::Str),
            ("=", Resolved::Str),
            ("<<", Resolved::Str),
        ];
        for (s, want) in cases {
            assert_eq!(plain(s), *want, "{s:?}");
        }
    }

    #[test]
    fn tags_agree_or_fail() {
        assert_eq!(resolve(INT, "7").unwrap().1, Resolved::Int(7));
        assert_eq!(resolve(FLOAT, "7").unwrap().1, Resolved::Float(7.0));
        assert_eq!(resolve(STR, "7").unwrap().1, Resolved::Str);
        assert_eq!(
            resolve(INT, "abc").unwrap_err(),
            "cannot decode !!str `abc` as a !!int"
        );
        assert_eq!(resolve("!custom", "x").unwrap(), ("!custom", Resolved::Str));
    }
}
