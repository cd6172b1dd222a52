//! The few pieces of Go's `strconv` and `fmt` that go-yaml and sigs.k8s.io/yaml put into
//! keys and messages: `FormatFloat(f, 'g', -1, 32|64)`, `strconv.Quote` and `%#v`.

use super::value::GoValue;

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`.
pub fn float_g64(f: f64) -> String {
    if !f.is_finite() {
        return non_finite(f).to_string();
    }
    g_format(f.is_sign_negative(), &format!("{:e}", f.abs()))
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`: the value rounded to 32 bits first.
pub fn float_g32(f: f64) -> String {
    let x = f as f32;
    if !x.is_finite() {
        return non_finite(f64::from(x)).to_string();
    }
    g_format(x.is_sign_negative(), &format!("{:e}", x.abs()))
}

fn non_finite(f: f64) -> &'static str {
    if f.is_nan() {
        "NaN"
    } else if f > 0.0 {
        "+Inf"
    } else {
        "-Inf"
    }
}

/// `%g` with the shortest digits, from Rust's shortest scientific text (`1.2345e8`): plain
/// decimal when the exponent is in -4..6, else `d.ddde±XX`.
fn g_format(neg: bool, sci: &str) -> String {
    let (mant, exp) = sci.split_once('e').unwrap_or((sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if digits.bytes().all(|d| d == b'0') {
        out.push('0');
        return out;
    }
    let nd = digits.len() as i32;
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if nd > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let e = exp.unsigned_abs();
        if e < 10 {
            out.push('0');
        }
        out.push_str(&e.to_string());
        return out;
    }
    let dp = exp + 1;
    if dp <= 0 {
        out.push_str("0.");
        for _ in 0..-dp {
            out.push('0');
        }
        out.push_str(&digits);
    } else if dp >= nd {
        out.push_str(&digits);
        for _ in 0..dp - nd {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
    out
}

/// Go's `strconv.Quote`.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if printable(c) => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `strconv.IsPrint`: no controls, no spaces but ' ', no format
/// characters.
fn printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32, 0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e | 0x200b..=0x200f
        | 0x202a..=0x202e | 0x2060..=0x2064 | 0x2066..=0x206f | 0xfeff | 0xfff9..=0xfffb
        | 0xd800..=0xdfff | 0xe000..=0xf8ff | 0xfffe | 0xffff)
}

/// Go's `%#v` of a value decoded into `interface{}`; `top` says it is not inside a
/// collection (a nil there prints as `<nil>`, inside as `interface {}(nil)`).
pub fn sharp_v(v: &GoValue, top: bool) -> String {
    match v {
        GoValue::Nil if top => "<nil>".into(),
        GoValue::Nil => "interface {}(nil)".into(),
        GoValue::Bool(b) => b.to_string(),
        GoValue::Int(i) => i.to_string(),
        GoValue::Uint(u) => format!("0x{u:x}"),
        GoValue::Float(f) => float_g64(*f),
        GoValue::Str(s) => quote(s),
        GoValue::Seq(items) => {
            let inner: Vec<String> = items.iter().map(|i| sharp_v(i, false)).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        GoValue::Map(m) => {
            let mut entries: Vec<(&GoValue, &GoValue)> = m.iter().collect();
            entries.sort_by(|a, b| key_order(a.0, b.0));
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}:{}", sharp_v(k, false), sharp_v(v, false)))
                .collect();
            format!("map[interface {{}}]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

/// The order `fmt` prints map keys in: by type, then by value.
fn key_order(a: &GoValue, b: &GoValue) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let rank = |v: &GoValue| match v {
        GoValue::Nil => 0,
        GoValue::Bool(_) => 1,
        GoValue::Int(_) => 2,
        GoValue::Uint(_) => 3,
        GoValue::Float(_) => 4,
        GoValue::Str(_) => 5,
        GoValue::Seq(_) => 6,
        GoValue::Map(_) => 7,
    };
    match (a, b) {
        (GoValue::Bool(x), GoValue::Bool(y)) => x.cmp(y),
        (GoValue::Int(x), GoValue::Int(y)) => x.cmp(y),
        (GoValue::Uint(x), GoValue::Uint(y)) => x.cmp(y),
        (GoValue::Float(x), GoValue::Float(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (GoValue::Str(x), GoValue::Str(y)) => x.cmp(y),
        _ => rank(a).cmp(&rank(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_as_go_formats_them() {
        assert_eq!(float_g32(123_456_789.123_456_79), "1.2345679e+08");
        assert_eq!(float_g32(5e-324), "0");
        assert_eq!(float_g32(1.5), "1.5");
        assert_eq!(float_g32(0.0001), "0.0001");
        assert_eq!(float_g32(0.00001), "1e-05");
        assert_eq!(float_g32(100000.0), "100000");
        assert_eq!(float_g32(1000000.0), "1e+06");
        assert_eq!(float_g32(-0.0), "-0");
        assert_eq!(float_g64(f64::INFINITY), "+Inf");
        assert_eq!(float_g64(1e21), "1e+21");
        assert_eq!(float_g64(0.1), "0.1");
    }

    #[test]
    fn quotes_as_go_does() {
        assert_eq!(
            quote("a\"b\\\n\u{1}é\u{feff}"),
            "\"a\\\"b\\\\\\n\\x01é\\ufeff\""
        );
    }
}
