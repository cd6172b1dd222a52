//! YAML as opm writes it: `sigs.k8s.io/yaml` marshals to JSON, reads that back with go-yaml v2
//! and emits it with go-yaml v2's block emitter. So keys come in go-yaml's "natural" order
//! (digit runs compared as numbers, non-letters before letters), integers stay integers and
//! floats are Go's `%g`, strings are plain unless they would read back as another type
//! (then double-quoted) or contain a line break (then a `|` literal block), long plain and
//! quoted strings fold at column 80, sequences inside mappings are not indented, and empty
//! collections are `{}` / `[]`.

use std::cmp::Ordering;

use serde_json::{Map, Value};

const BEST_WIDTH: usize = 80;

/// One YAML document (no `---`), ending in a newline.
pub fn to_string(v: &Value) -> String {
    let mut e = Emitter::default();
    e.node(v, 0, Ctx::Root);
    if !e.out.ends_with('\n') {
        e.out.push('\n');
    }
    e.out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Root,
    /// The value of a mapping key (after `key:`).
    MapValue,
    /// An item of a sequence (after `- `).
    SeqItem,
}

#[derive(Default)]
struct Emitter {
    out: String,
    /// Characters written on the current line.
    column: usize,
}

impl Emitter {
    fn put(&mut self, s: &str) {
        self.out.push_str(s);
        match s.rfind('\n') {
            Some(i) => self.column = s[i + 1..].chars().count(),
            None => self.column += s.chars().count(),
        }
    }

    fn put_char(&mut self, c: char) {
        self.out.push(c);
        if c == '\n' {
            self.column = 0;
        } else {
            self.column += 1;
        }
    }

    fn newline_indent(&mut self, indent: usize) {
        self.put_char('\n');
        for _ in 0..indent {
            self.put_char(' ');
        }
    }

    /// Writes `v` whose first line continues the current line; `indent` is the indentation of
    /// the construct that holds it (the key's or the dash's column).
    fn node(&mut self, v: &Value, indent: usize, ctx: Ctx) {
        match v {
            Value::Object(m) if !m.is_empty() => self.mapping(m, indent, ctx),
            Value::Array(a) if !a.is_empty() => self.sequence(a, indent, ctx),
            Value::Object(_) => self.inline(ctx, "{}"),
            Value::Array(_) => self.inline(ctx, "[]"),
            Value::Null => self.inline(ctx, "null"),
            Value::Bool(b) => self.inline(ctx, if *b { "true" } else { "false" }),
            Value::Number(n) => {
                let text = if let Some(f) = n.as_f64().filter(|_| n.is_f64()) {
                    go_float_g(f)
                } else {
                    n.to_string()
                };
                self.inline(ctx, &text);
            }
            Value::String(s) => {
                if ctx == Ctx::MapValue {
                    self.put_char(' ');
                }
                // Continuation lines of a folded or block scalar sit one level deeper than
                // the key (or the dash).
                let inner = indent + 2;
                self.string(s, inner, false);
                if ctx != Ctx::Root || !self.out.ends_with('\n') {
                    self.put_char('\n');
                }
            }
        }
    }

    fn inline(&mut self, ctx: Ctx, text: &str) {
        if ctx == Ctx::MapValue {
            self.put_char(' ');
        }
        self.put(text);
        self.put_char('\n');
    }

    fn mapping(&mut self, m: &Map<String, Value>, indent: usize, ctx: Ctx) {
        // Under a key the mapping starts on the next line, two columns in; after a dash or
        // at the root it starts where we are.
        let indent = match ctx {
            Ctx::MapValue => {
                self.newline_indent(indent + 2);
                indent + 2
            }
            Ctx::SeqItem => indent + 2,
            Ctx::Root => 0,
        };
        let mut keys: Vec<&String> = m.keys().collect();
        keys.sort_by(|a, b| natural_cmp(a, b));
        for (i, k) in keys.into_iter().enumerate() {
            if i > 0 {
                for _ in 0..indent {
                    self.put_char(' ');
                }
            }
            self.string(k, indent, true);
            self.put_char(':');
            self.node(&m[k], indent, Ctx::MapValue);
        }
    }

    fn sequence(&mut self, a: &[Value], indent: usize, ctx: Ctx) {
        // go-yaml v2 does not indent a sequence that is a mapping's value.
        let indent = match ctx {
            Ctx::MapValue => {
                self.newline_indent(indent);
                indent
            }
            Ctx::SeqItem => indent + 2,
            Ctx::Root => 0,
        };
        for (i, item) in a.iter().enumerate() {
            if i > 0 {
                for _ in 0..indent {
                    self.put_char(' ');
                }
            }
            self.put("- ");
            self.node(item, indent, Ctx::SeqItem);
        }
    }

    /// Writes a string scalar in the style go-yaml v2 picks. `indent` is where folded lines
    /// continue; keys never fold.
    fn string(&mut self, s: &str, indent: usize, key: bool) {
        let a = analyze(s);
        let style = if s.contains('\n') && !key {
            if a.block_allowed {
                Style::Literal
            } else {
                Style::Double
            }
        } else if !resolves_to_string(s) {
            Style::Double
        } else if a.block_plain_allowed && !(s.is_empty() && key) {
            Style::Plain
        } else if a.single_quoted_allowed {
            Style::Single
        } else {
            Style::Double
        };
        let breaks = !key;
        match style {
            Style::Plain => self.plain(s, indent, breaks),
            Style::Single => self.single(s, indent, breaks),
            Style::Double => self.double(s, indent, breaks),
            Style::Literal => self.literal(s, indent),
        }
    }

    fn plain(&mut self, s: &str, indent: usize, breaks: bool) {
        // A fold happens only at a space past column 80: a string that ends before that
        // (most of them) is written as is.
        if !breaks || self.column + s.len() <= BEST_WIDTH + 1 {
            self.put(s);
            return;
        }
        let chars: Vec<char> = s.chars().collect();
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if breaks && !spaces && self.column > BEST_WIDTH && !next_space {
                    self.newline_indent(indent);
                } else {
                    self.put_char(c);
                }
                spaces = true;
            } else {
                self.put_char(c);
                spaces = false;
            }
        }
    }

    fn single(&mut self, s: &str, indent: usize, breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.put_char('\'');
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                let next_space = chars.get(i + 1) == Some(&' ');
                if breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < chars.len()
                    && !next_space
                {
                    self.newline_indent(indent);
                } else {
                    self.put_char(c);
                }
                spaces = true;
            } else {
                if c == '\'' {
                    self.put_char('\'');
                }
                self.put_char(c);
                spaces = false;
            }
        }
        self.put_char('\'');
    }

    fn double(&mut self, s: &str, indent: usize, breaks: bool) {
        let chars: Vec<char> = s.chars().collect();
        self.put_char('"');
        let mut spaces = false;
        for (i, &c) in chars.iter().enumerate() {
            if !is_printable(c) || c == '\u{feff}' || is_break(c) || c == '"' || c == '\\' {
                let esc = match c {
                    '\0' => "\\0".to_string(),
                    '\u{7}' => "\\a".to_string(),
                    '\u{8}' => "\\b".to_string(),
                    '\t' => "\\t".to_string(),
                    '\n' => "\\n".to_string(),
                    '\u{b}' => "\\v".to_string(),
                    '\u{c}' => "\\f".to_string(),
                    '\r' => "\\r".to_string(),
                    '\u{1b}' => "\\e".to_string(),
                    '"' => "\\\"".to_string(),
                    '\\' => "\\\\".to_string(),
                    '\u{85}' => "\\N".to_string(),
                    '\u{a0}' => "\\_".to_string(),
                    '\u{2028}' => "\\L".to_string(),
                    '\u{2029}' => "\\P".to_string(),
                    c if (c as u32) <= 0xff => format!("\\x{:02X}", c as u32),
                    c if (c as u32) <= 0xffff => format!("\\u{:04X}", c as u32),
                    c => format!("\\U{:08X}", c as u32),
                };
                self.put(&esc);
                spaces = false;
            } else if c == ' ' {
                if breaks && !spaces && self.column > BEST_WIDTH && i != 0 && i + 1 != chars.len() {
                    self.newline_indent(indent);
                    if chars.get(i + 1) == Some(&' ') {
                        self.put_char('\\');
                    }
                } else {
                    self.put_char(c);
                }
                spaces = true;
            } else {
                self.put_char(c);
                spaces = false;
            }
        }
        self.put_char('"');
    }

    fn literal(&mut self, s: &str, indent: usize) {
        self.put_char('|');
        let first = s.chars().next();
        if first.is_some_and(|c| c == ' ' || is_break(c)) {
            self.put_char('2');
        }
        let chars: Vec<char> = s.chars().collect();
        let n = chars.len();
        let chomp = if n == 0 || !is_break(chars[n - 1]) {
            Some('-')
        } else if n == 1 || is_break(chars[n - 2]) {
            Some('+')
        } else {
            None
        };
        if let Some(c) = chomp {
            self.put_char(c);
        }
        self.put_char('\n');
        let mut at_line_start = true;
        for &c in &chars {
            if is_break(c) {
                self.put_char('\n');
                at_line_start = true;
            } else {
                if at_line_start {
                    for _ in 0..indent {
                        self.put_char(' ');
                    }
                    at_line_start = false;
                }
                self.put_char(c);
            }
        }
        // The caller ends the line; a value ending in a break already did.
        if !at_line_start || n == 0 {
            return;
        }
        self.out.pop();
        self.column = 0;
    }
}

enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// go-yaml's `is_printable` (tab and CR are not; nor is anything beyond the BMP).
fn is_printable(c: char) -> bool {
    let u = c as u32;
    u == 0x0a
        || (0x20..=0x7e).contains(&u)
        || (0xa0..=0xd7ff).contains(&u)
        || ((0xe000..=0xfffd).contains(&u) && u != 0xfeff)
}

struct Analysis {
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

/// go-yaml v2 `yaml_emitter_analyze_scalar`, block context.
fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break, mut special, mut line_breaks) =
        (false, false, false, false);
    let (mut prev_space, mut prev_break) = (false, false);
    let mut preceded_by_ws = true;
    let mut it = s.chars().enumerate().peekable();
    while let Some((i, c)) = it.next() {
        let next = it.peek().map(|&(_, n)| n);
        let last = next.is_none();
        let followed_by_ws = matches!(next, None | Some(' ' | '\t'));
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_ws => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_ws => block_indicators = true,
                '#' if preceded_by_ws => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if is_break(c) {
            line_breaks = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= prev_break;
            prev_space = true;
            prev_break = false;
        } else if is_break(c) {
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= prev_space;
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_by_ws = matches!(c, ' ' | '\t') || is_break(c);
    }
    let mut a = Analysis {
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// Whether go-yaml v2 reads `s`, written plain, back as a string (not null, bool, number,
/// timestamp or a base-60 float): otherwise it is double-quoted.
fn resolves_to_string(s: &str) -> bool {
    const SPECIAL: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true",
        "True", "TRUE", "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE",
        ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf",
        "-.Inf", "-.INF", "<<",
    ];
    if SPECIAL.contains(&s) {
        return false;
    }
    let Some(first) = s.bytes().next() else {
        return false;
    };
    match first {
        b'0'..=b'9' | b'+' | b'-' => {
            if is_timestamp(s) {
                return false;
            }
            let plain = s.replace('_', "");
            if parse_go_int(&plain) || is_yaml_float(&plain) {
                return false;
            }
            for prefix in ["0b", "-0b"] {
                if let Some(rest) = plain.strip_prefix(prefix)
                    && !rest.is_empty()
                    && rest.bytes().all(|b| b == b'0' || b == b'1')
                {
                    return false;
                }
            }
            !is_base60_float(s)
        }
        b'.' => s.parse::<f64>().is_err() || s == "." || !is_go_float(s),
        _ => true,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)` / `ParseUint` accept it (sign, 0x/0o/0b/0 prefixes).
fn parse_go_int(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    if body.is_empty() {
        return false;
    }
    let (digits, radix) = if let Some(r) = body.strip_prefix("0x").or(body.strip_prefix("0X")) {
        (r, 16)
    } else if let Some(r) = body.strip_prefix("0o").or(body.strip_prefix("0O")) {
        (r, 8)
    } else if let Some(r) = body.strip_prefix("0b").or(body.strip_prefix("0B")) {
        (r, 2)
    } else if body.len() > 1 && body.starts_with('0') {
        (&body[1..], 8)
    } else {
        (body, 10)
    };
    !digits.is_empty() && u64::from_str_radix(digits, radix).is_ok()
}

/// go-yaml's float pattern `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `ParseFloat` on a value starting with `.` (go-yaml tries it unconditionally there).
fn is_go_float(s: &str) -> bool {
    s.len() > 1
        && s[1..]
            .bytes()
            .all(|b| b.is_ascii_digit() || b"eE+-".contains(&b))
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`
fn is_base60_float(s: &str) -> bool {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (main, frac) = match body.split_once('.') {
        Some((m, f)) => (m, Some(f)),
        None => (body, None),
    };
    if frac.is_some_and(|f| !f.bytes().all(|b| b.is_ascii_digit() || b == b'_')) {
        return false;
    }
    let mut parts = main.split(':');
    let head = parts.next().unwrap_or("");
    if !head.starts_with(|c: char| c.is_ascii_digit())
        || !head.bytes().all(|b| b.is_ascii_digit() || b == b'_')
    {
        return false;
    }
    let mut any = false;
    for p in parts {
        any = true;
        let ok = match p.as_bytes() {
            [d] => d.is_ascii_digit(),
            [a, d] => (b'0'..=b'5').contains(a) && d.is_ascii_digit(),
            _ => false,
        };
        if !ok {
            return false;
        }
    }
    any
}

/// go-yaml's timestamp forms: `2006-1-2T15:4:5.999999999Z07:00` (also `t`), `2006-1-2
/// 15:4:5.999999999` and `2006-1-2`, with Go's field ranges.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut i = 5;
    let num = |i: &mut usize, max_len: usize| -> Option<u32> {
        let start = *i;
        while *i < b.len() && *i - start < max_len && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == start {
            return None;
        }
        s[start..*i].parse().ok()
    };
    let year: u32 = s[..4].parse().unwrap_or(0);
    let Some(month) = num(&mut i, 2) else {
        return false;
    };
    if b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(day) = num(&mut i, 2) else {
        return false;
    };
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let zoned = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return false,
    };
    i += 1;
    let (Some(h), true) = (num(&mut i, 2), b.get(i) == Some(&b':')) else {
        return false;
    };
    i += 1;
    let (Some(m), true) = (num(&mut i, 2), b.get(i) == Some(&b':')) else {
        return false;
    };
    i += 1;
    let Some(sec) = num(&mut i, 2) else {
        return false;
    };
    if h > 23 || m > 59 || sec > 59 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    if !zoned {
        return i == b.len();
    }
    match &b[i..] {
        [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|d| d.is_ascii_digit()),
        _ => false,
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)` as go-yaml v2 writes floats.
pub fn go_float_g(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+.inf" } else { "-.inf" }.into();
    }
    if f == 0.0 {
        return format!("{f}");
    }
    // Shortest digits; `%g` switches to exponent form when the exponent is < -4 or >= 6.
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}

/// go-yaml v2's key order (`keyList.Less`): runs of digits compare as numbers, a letter sorts
/// after a non-letter, otherwise by code point.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let less = |x: &[char], y: &[char]| -> bool {
        let mut i = 0;
        while i < x.len() && i < y.len() {
            if x[i] == y[i] {
                i += 1;
                continue;
            }
            let al = x[i].is_alphabetic();
            let bl = y[i].is_alphabetic();
            if al && bl {
                return x[i] < y[i];
            }
            if al || bl {
                return bl;
            }
            let (mut an, mut bn): (i64, i64) = (0, 0);
            if x[i] == '0' || y[i] == '0' {
                let mut j = i;
                while j > 0 && x[j - 1].is_ascii_digit() {
                    j -= 1;
                    if x[j] != '0' {
                        an = 1;
                        bn = 1;
                        break;
                    }
                }
            }
            let mut ai = i;
            while ai < x.len() && x[ai].is_ascii_digit() {
                an = an
                    .wrapping_mul(10)
                    .wrapping_add(i64::from(x[ai] as u8 - b'0'));
                ai += 1;
            }
            let mut bi = i;
            while bi < y.len() && y[bi].is_ascii_digit() {
                bn = bn
                    .wrapping_mul(10)
                    .wrapping_add(i64::from(y[bi] as u8 - b'0'));
                bi += 1;
            }
            if an != bn {
                return an < bn;
            }
            if ai != bi {
                return ai < bi;
            }
            return x[i] < y[i];
        }
        x.len() < y.len()
    };
    if less(&ar, &br) {
        Ordering::Less
    } else if less(&br, &ar) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn layout_follows_go_yaml_v2() {
        let v = json!({
            "schema": "olm.channel",
            "entries": [{"name": "a.v1", "skips": ["x"]}, {"name": "b"}],
            "empty": {}, "none": [], "n": 3, "f": 100.0, "t": true,
            "version": "0.3.0", "quoted": "true", "num": "12", "date": "2021-05-03",
            "multi": "line1\nline2\n", "space_break": "a \n b",
        });
        assert_eq!(
            to_string(&v),
            "date: \"2021-05-03\"\nempty: {}\nentries:\n- name: a.v1\n  skips:\n  - x\n- name: b\n\
             f: 100\nmulti: |\n  line1\n  line2\n\"n\": 3\nnone: []\nnum: \"12\"\nquoted: \"true\"\n\
             schema: olm.channel\nspace_break: \"a \\n b\"\nt: true\nversion: 0.3.0\n"
        );
    }

    #[test]
    fn long_plain_strings_fold_after_column_80() {
        let s =
            "Suspend your pods when no-one's using them to save energy and restore when necessary";
        let v = json!({"spec": {"description": s}});
        assert_eq!(
            to_string(&v),
            "spec:\n  description: Suspend your pods when no-one's using them to save energy and restore\n    when necessary\n"
        );
    }

    #[test]
    fn keys_sort_naturally() {
        let mut keys = vec!["a10", "a2", "B", "_x", "a"];
        keys.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(keys, vec!["_x", "B", "a", "a2", "a10"]);
    }

    #[test]
    fn strings_that_read_back_as_other_types_are_quoted() {
        for other in [
            "",
            "~",
            "null",
            "yes",
            "n",
            "On",
            "true",
            "12",
            "+1",
            "0x1F",
            "08",
            "1_000",
            "1.",
            "1e3",
            ".5",
            "1:20",
            "2021-05-03",
            "2023-01-01T00:00:00Z",
            "2023-1-2t3:04:05.5+02:00",
            "2023-01-01 10:00:00",
        ] {
            assert!(
                !resolves_to_string(other),
                "{other:?} reads back as another type"
            );
        }
        for string in [
            "0.3.0",
            "v1",
            "1.2.3-alpha",
            "-",
            "...",
            "2019-01-24T15-33-43Z",
            "2023-02-30",
            "1:60",
            "abc",
            "0b12",
        ] {
            assert!(resolves_to_string(string), "{string:?} is a string");
        }
    }

    #[test]
    fn quoting_styles() {
        let v = json!({"a": "- x", "b": "key: value", "c": " lead", "d": "tab\there",
                       "e": "it's # not", "f": "x #y", "g": "emoji \u{1F600}"});
        assert_eq!(
            to_string(&v),
            "a: '- x'\nb: 'key: value'\nc: ' lead'\nd: \"tab\\there\"\ne: 'it''s # not'\nf: 'x #y'\n\
             g: \"emoji \\U0001F600\"\n"
        );
    }

    #[test]
    fn floats_are_go_g() {
        assert_eq!(go_float_g(100.0), "100");
        assert_eq!(go_float_g(0.5), "0.5");
        assert_eq!(go_float_g(1e21), "1e+21");
        assert_eq!(go_float_g(1e-5), "1e-05");
        assert_eq!(go_float_g(1e6), "1e+06");
        assert_eq!(go_float_g(123456.5), "123456.5");
    }
}
