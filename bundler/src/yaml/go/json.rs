//! Go's `encoding/json` `Decoder` over a stream of values, as apimachinery's
//! `YAMLOrJSONDecoder` drives it for a file whose first non-space byte is `{`: the scanner's
//! states and its error texts (`invalid character 'x' looking for beginning of value`), its
//! byte count (the `offset` of a syntax error counts every byte the scanner stepped over, a
//! byte that ended a number twice), `unexpected EOF` for a value cut short, and the values as
//! Go reads them into `interface{}` (invalid UTF-8 and lone surrogates become U+FFFD, the last
//! of repeated keys wins, numbers beyond float64 are an error).

use serde_json::{Map, Number, Value};

use super::gofmt;

/// Go's `maxNestingDepth`.
const MAX_NESTING: usize = 10000;

/// A failed `Decode`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JsonError {
    /// A `*json.SyntaxError`: its text and `Offset`, and the byte it stopped at.
    Syntax { msg: String, offset: u64, at: usize },
    /// `io.ErrUnexpectedEOF`.
    UnexpectedEof,
    /// The value did not fit its target (`json: cannot unmarshal ...`), at `at`.
    Value { msg: String, at: usize },
}

impl JsonError {
    /// The text Go's error prints.
    pub fn text(&self) -> String {
        match self {
            JsonError::Syntax { msg, .. } => msg.clone(),
            JsonError::UnexpectedEof => "unexpected EOF".into(),
            JsonError::Value { msg, .. } => msg.clone(),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Step {
    BeginValueOrEmpty,
    BeginValue,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    One,
    Zero,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    Lit(&'static [u8], u8, &'static str),
    Error,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Continue,
    SkipSpace,
    EndObject,
    EndArray,
    End,
    Error,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// Go's `quoteChar`.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        _ => {
            let q = gofmt::quote(&char::from(c).to_string());
            format!("'{}'", &q[1..q.len() - 1])
        }
    }
}

/// Go's JSON scanner (`scanner.go`), one byte at a time.
struct Scanner {
    step: Step,
    parse: Vec<Parse>,
    /// Bytes stepped over since the decoder started (`scanner.bytes`, never reset).
    bytes: u64,
    err: Option<String>,
}

impl Scanner {
    fn reset(&mut self) {
        self.step = Step::BeginValue;
        self.parse.clear();
        self.err = None;
    }

    fn error(&mut self, c: u8, context: &str) -> Op {
        self.step = Step::Error;
        self.err = Some(format!("invalid character {} {context}", quote_char(c)));
        Op::Error
    }

    fn push(&mut self, c: u8, p: Parse) -> Op {
        self.parse.push(p);
        if self.parse.len() <= MAX_NESTING {
            Op::Continue
        } else {
            self.error(c, "exceeded max depth")
        }
    }

    fn pop(&mut self) {
        self.parse.pop();
        self.step = if self.parse.is_empty() {
            Step::EndTop
        } else {
            Step::EndValue
        };
    }

    fn step(&mut self, c: u8) -> Op {
        match self.step {
            Step::BeginValueOrEmpty => {
                if is_space(c) {
                    return Op::SkipSpace;
                }
                if c == b']' {
                    return self.end_value(c);
                }
                self.begin_value(c)
            }
            Step::BeginValue => self.begin_value(c),
            Step::BeginStringOrEmpty => {
                if is_space(c) {
                    return Op::SkipSpace;
                }
                if c == b'}' {
                    if let Some(last) = self.parse.last_mut() {
                        *last = Parse::ObjectValue;
                    }
                    return self.end_value(c);
                }
                self.begin_string(c)
            }
            Step::BeginString => self.begin_string(c),
            Step::EndValue => self.end_value(c),
            Step::EndTop => {
                if !is_space(c) {
                    self.error(c, "after top-level value");
                }
                Op::End
            }
            Step::InString => {
                if c == b'"' {
                    self.step = Step::EndValue;
                } else if c == b'\\' {
                    self.step = Step::InStringEsc;
                } else if c < 0x20 {
                    return self.error(c, "in string literal");
                }
                Op::Continue
            }
            Step::InStringEsc => match c {
                b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {
                    self.step = Step::InString;
                    Op::Continue
                }
                b'u' => {
                    self.step = Step::InStringEscU(0);
                    Op::Continue
                }
                _ => self.error(c, "in string escape code"),
            },
            Step::InStringEscU(n) => {
                if !c.is_ascii_hexdigit() {
                    return self.error(c, "in \\u hexadecimal character escape");
                }
                self.step = if n == 3 {
                    Step::InString
                } else {
                    Step::InStringEscU(n + 1)
                };
                Op::Continue
            }
            Step::Neg => match c {
                b'0' => {
                    self.step = Step::Zero;
                    Op::Continue
                }
                b'1'..=b'9' => {
                    self.step = Step::One;
                    Op::Continue
                }
                _ => self.error(c, "in numeric literal"),
            },
            Step::One => {
                if c.is_ascii_digit() {
                    return Op::Continue;
                }
                self.zero(c)
            }
            Step::Zero => self.zero(c),
            Step::Dot => {
                if c.is_ascii_digit() {
                    self.step = Step::Dot0;
                    return Op::Continue;
                }
                self.error(c, "after decimal point in numeric literal")
            }
            Step::Dot0 => {
                if c.is_ascii_digit() {
                    return Op::Continue;
                }
                if c == b'e' || c == b'E' {
                    self.step = Step::E;
                    return Op::Continue;
                }
                self.end_value(c)
            }
            Step::E => {
                if c == b'+' || c == b'-' {
                    self.step = Step::ESign;
                    return Op::Continue;
                }
                self.e_sign(c)
            }
            Step::ESign => self.e_sign(c),
            Step::E0 => {
                if c.is_ascii_digit() {
                    return Op::Continue;
                }
                self.end_value(c)
            }
            Step::Lit(rest, i, what) => {
                let want = rest[usize::from(i)];
                if c != want {
                    let context = format!("in literal {what} (expecting {})", quote_char(want));
                    return self.error(c, &context);
                }
                self.step = if usize::from(i) + 1 == rest.len() {
                    Step::EndValue
                } else {
                    Step::Lit(rest, i + 1, what)
                };
                Op::Continue
            }
            Step::Error => Op::Error,
        }
    }

    fn zero(&mut self, c: u8) -> Op {
        if c == b'.' {
            self.step = Step::Dot;
            return Op::Continue;
        }
        if c == b'e' || c == b'E' {
            self.step = Step::E;
            return Op::Continue;
        }
        self.end_value(c)
    }

    fn e_sign(&mut self, c: u8) -> Op {
        if c.is_ascii_digit() {
            self.step = Step::E0;
            return Op::Continue;
        }
        self.error(c, "in exponent of numeric literal")
    }

    fn begin_value(&mut self, c: u8) -> Op {
        if is_space(c) {
            return Op::SkipSpace;
        }
        match c {
            b'{' => {
                self.step = Step::BeginStringOrEmpty;
                self.push(c, Parse::ObjectKey)
            }
            b'[' => {
                self.step = Step::BeginValueOrEmpty;
                self.push(c, Parse::ArrayValue)
            }
            b'"' => {
                self.step = Step::InString;
                Op::Continue
            }
            b'-' => {
                self.step = Step::Neg;
                Op::Continue
            }
            b'0' => {
                self.step = Step::Zero;
                Op::Continue
            }
            b't' => {
                self.step = Step::Lit(b"rue", 0, "true");
                Op::Continue
            }
            b'f' => {
                self.step = Step::Lit(b"alse", 0, "false");
                Op::Continue
            }
            b'n' => {
                self.step = Step::Lit(b"ull", 0, "null");
                Op::Continue
            }
            b'1'..=b'9' => {
                self.step = Step::One;
                Op::Continue
            }
            _ => self.error(c, "looking for beginning of value"),
        }
    }

    fn begin_string(&mut self, c: u8) -> Op {
        if is_space(c) {
            return Op::SkipSpace;
        }
        if c == b'"' {
            self.step = Step::InString;
            return Op::Continue;
        }
        self.error(c, "looking for beginning of object key string")
    }

    fn end_value(&mut self, c: u8) -> Op {
        let Some(&ps) = self.parse.last() else {
            self.step = Step::EndTop;
            if !is_space(c) {
                self.error(c, "after top-level value");
            }
            return Op::End;
        };
        if is_space(c) {
            self.step = Step::EndValue;
            return Op::SkipSpace;
        }
        match ps {
            Parse::ObjectKey => {
                if c == b':' {
                    if let Some(last) = self.parse.last_mut() {
                        *last = Parse::ObjectValue;
                    }
                    self.step = Step::BeginValue;
                    return Op::Continue;
                }
                self.error(c, "after object key")
            }
            Parse::ObjectValue => {
                if c == b',' {
                    if let Some(last) = self.parse.last_mut() {
                        *last = Parse::ObjectKey;
                    }
                    self.step = Step::BeginString;
                    return Op::Continue;
                }
                if c == b'}' {
                    self.pop();
                    return Op::EndObject;
                }
                self.error(c, "after object key:value pair")
            }
            Parse::ArrayValue => {
                if c == b',' {
                    self.step = Step::BeginValue;
                    return Op::Continue;
                }
                if c == b']' {
                    self.pop();
                    return Op::EndArray;
                }
                self.error(c, "after array element")
            }
        }
    }
}

/// A `json.Decoder` over all of `data` from offset `start`.
pub struct Decoder<'a> {
    data: &'a [u8],
    /// Where the next value's bytes start (`scanned + scanp`).
    scanp: usize,
    scan: Scanner,
}

impl<'a> Decoder<'a> {
    pub fn new(data: &'a [u8], start: usize) -> Decoder<'a> {
        Decoder {
            data,
            scanp: start,
            scan: Scanner {
                step: Step::BeginValue,
                parse: Vec::new(),
                bytes: 0,
                err: None,
            },
        }
    }

    /// `InputOffset()`: the end of the last value read.
    pub fn offset(&self) -> usize {
        self.scanp
    }

    /// The next value's bytes (`readValue`), `None` at the end of the stream.
    fn read_value(&mut self) -> Result<Option<(usize, usize)>, JsonError> {
        self.scan.reset();
        let mut p = self.scanp;
        while p < self.data.len() {
            let c = self.data[p];
            self.scan.bytes += 1;
            match self.scan.step(c) {
                Op::End => return Ok(Some((self.scanp, p))),
                Op::EndObject | Op::EndArray => {
                    if self.scan.end_value(b' ') == Op::End {
                        return Ok(Some((self.scanp, p + 1)));
                    }
                }
                Op::Error => {
                    return Err(JsonError::Syntax {
                        msg: self.scan.err.clone().unwrap_or_default(),
                        offset: self.scan.bytes,
                        at: p,
                    });
                }
                Op::Continue | Op::SkipSpace => {}
            }
            p += 1;
        }
        // The end of the stream: a number or literal may end here.
        if self.scan.step(b' ') == Op::End {
            return Ok(Some((self.scanp, p)));
        }
        if self.data[self.scanp..].iter().any(|&c| !is_space(c)) {
            return Err(JsonError::UnexpectedEof);
        }
        Ok(None)
    }

    /// `Decode` into a target that takes any JSON value as Go's `interface{}` reads it:
    /// the value and where it starts, or `None` at the end of the stream.
    pub fn decode(&mut self) -> Result<Option<(Value, usize)>, JsonError> {
        let Some((start, end)) = self.read_value()? else {
            return Ok(None);
        };
        self.scanp = end;
        // The value starts after the spaces the scanner skipped.
        let begin = start
            + self.data[start..end]
                .iter()
                .take_while(|&&c| is_space(c))
                .count();
        let mut p = ValueReader {
            data: &self.data[..end],
            pos: begin,
            depth: 0,
        };
        let v = p.value()?;
        Ok(Some((v, begin)))
    }
}

/// Builds the value of JSON text the scanner accepted.
struct ValueReader<'a> {
    data: &'a [u8],
    pos: usize,
    depth: usize,
}

impl ValueReader<'_> {
    fn skip_space(&mut self) {
        while self.pos < self.data.len() && is_space(self.data[self.pos]) {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Result<Value, JsonError> {
        self.skip_space();
        let c = self.data.get(self.pos).copied().unwrap_or(b'n');
        Ok(match c {
            b'{' => {
                self.depth += 1;
                if self.depth > super::decode::MAX_DEPTH {
                    return Err(JsonError::Value {
                        msg: format!(
                            "nesting deeper than {} levels (olm's limit against exhausting the stack)",
                            super::decode::MAX_DEPTH
                        ),
                        at: self.pos,
                    });
                }
                self.pos += 1;
                let mut map = Map::new();
                loop {
                    self.skip_space();
                    if self.data.get(self.pos) == Some(&b'}') {
                        self.pos += 1;
                        break;
                    }
                    if self.data.get(self.pos) == Some(&b',') {
                        self.pos += 1;
                        self.skip_space();
                    }
                    let key = self.string();
                    self.skip_space();
                    self.pos += 1; // ':'
                    let v = self.value()?;
                    map.insert(key, v);
                }
                self.depth -= 1;
                Value::Object(map)
            }
            b'[' => {
                self.depth += 1;
                if self.depth > super::decode::MAX_DEPTH {
                    return Err(JsonError::Value {
                        msg: format!(
                            "nesting deeper than {} levels (olm's limit against exhausting the stack)",
                            super::decode::MAX_DEPTH
                        ),
                        at: self.pos,
                    });
                }
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_space();
                    match self.data.get(self.pos) {
                        Some(b']') | None => {
                            self.pos += 1;
                            break;
                        }
                        Some(b',') => self.pos += 1,
                        _ => items.push(self.value()?),
                    }
                }
                self.depth -= 1;
                Value::Array(items)
            }
            b'"' => Value::String(self.string()),
            b't' => {
                self.pos += 4;
                Value::Bool(true)
            }
            b'f' => {
                self.pos += 5;
                Value::Bool(false)
            }
            b'n' => {
                self.pos += 4;
                Value::Null
            }
            _ => self.number()?,
        })
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.pos;
        while self.pos < self.data.len()
            && matches!(
                self.data[self.pos],
                b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
            )
        {
            self.pos += 1;
        }
        let text = std::str::from_utf8(&self.data[start..self.pos]).unwrap_or("0");
        // Go reads every number as a float64; integers that fit are kept exact here (JSON
        // writers print them the same), and `-0` stays the float it is.
        let integer = !text.contains(['.', 'e', 'E']) && !text.starts_with("-0");
        if integer {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Number(Number::from(i)));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Ok(Value::Number(Number::from(u)));
            }
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Number(
                Number::from_f64(f).unwrap_or_else(|| Number::from(0)),
            )),
            _ => Err(JsonError::Value {
                msg: format!("json: cannot unmarshal number {text} into Go value of type float64"),
                at: start,
            }),
        }
    }

    /// A string as Go unquotes it.
    fn string(&mut self) -> String {
        self.pos += 1; // '"'
        let mut out: Vec<u8> = Vec::new();
        while let Some(&c) = self.data.get(self.pos) {
            match c {
                b'"' => {
                    self.pos += 1;
                    break;
                }
                b'\\' => {
                    let e = self.data.get(self.pos + 1).copied().unwrap_or(b'"');
                    self.pos += 2;
                    let simple = match e {
                        b'b' => Some(0x08),
                        b'f' => Some(0x0c),
                        b'n' => Some(b'\n'),
                        b'r' => Some(b'\r'),
                        b't' => Some(b'\t'),
                        b'u' => None,
                        other => Some(other),
                    };
                    if let Some(b) = simple {
                        out.push(b);
                        continue;
                    }
                    let mut r = self.hex4(self.pos);
                    self.pos += 4;
                    if (0xd800..0xe000).contains(&r) {
                        let pair = (self.data.get(self.pos..self.pos + 2) == Some(b"\\u"))
                            .then(|| self.hex4(self.pos + 2))
                            .filter(|lo| (0xdc00..0xe000).contains(lo) && r < 0xdc00);
                        match pair {
                            Some(lo) => {
                                r = 0x10000 + ((r - 0xd800) << 10) + (lo - 0xdc00);
                                self.pos += 6;
                            }
                            None => r = 0xfffd,
                        }
                    }
                    let ch = char::from_u32(r).unwrap_or('\u{fffd}');
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                }
                _ => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        super::value::go_string(out)
    }

    fn hex4(&self, at: usize) -> u32 {
        self.data
            .get(at..at + 4)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .unwrap_or(0xfffd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Result<Vec<Value>, JsonError> {
        let mut d = Decoder::new(text.as_bytes(), 0);
        let mut out = Vec::new();
        while let Some((v, _)) = d.decode()? {
            out.push(v);
        }
        Ok(out)
    }

    #[test]
    fn streams_of_values() {
        assert_eq!(
            all("{\"a\": 1}\n{\"b\": [true, null]} 5 \"x\"")
                .unwrap()
                .len(),
            4
        );
        assert_eq!(all("  \n").unwrap().len(), 0);
    }

    #[test]
    fn errors_as_go_reports_them() {
        let err = all("{\"a\": 1}\n}\n").unwrap_err();
        assert_eq!(
            err,
            JsonError::Syntax {
                msg: "invalid character '}' looking for beginning of value".into(),
                offset: 10,
                at: 9
            }
        );
        assert_eq!(all("{\"a\": 1\n").unwrap_err(), JsonError::UnexpectedEof);
        let JsonError::Syntax { msg, .. } = all("{foo: 1}").unwrap_err() else {
            panic!()
        };
        assert_eq!(
            msg,
            "invalid character 'f' looking for beginning of object key string"
        );
        let JsonError::Syntax { msg, .. } = all("{\"a\": tru}").unwrap_err() else {
            panic!()
        };
        assert_eq!(msg, "invalid character '}' in literal true (expecting 'e')");
    }

    #[test]
    fn values_as_go_reads_them() {
        let v = all(r#"{"a": "\ud800x\ud83d\ude00", "a": 2, "n": 12345678901234567890}"#).unwrap();
        assert_eq!(v[0]["a"], 2);
        assert_eq!(v[0]["n"].as_u64(), Some(12345678901234567890));
        let v = all(r#"{"s": "\ud800x\ud83d\ude00"}"#).unwrap();
        assert_eq!(v[0]["s"], "\u{fffd}x\u{1f600}");
        let err = all(r#"{"b": 1e400}"#).unwrap_err();
        assert!(matches!(err, JsonError::Value { .. }), "{err:?}");
    }
}
