//! A line reader for the block YAML that opm, `olm` and sigs.k8s.io/yaml write.
//!
//! Catalog files are block mappings and sequences of one-line scalars and `|`/`>` block
//! scalars, indented with spaces. That subset is read here line by line, without a token
//! queue, about three times faster than through the general parser ([`super::tree`]). The
//! reader is deliberately narrow: at the first thing outside the subset (tabs, comments after
//! content, anchors, tags, flow collections other than `{}`/`[]`, multi-line plain or quoted
//! scalars, explicit keys, unusual escapes or block scalar headers, document markers, duplicate
//! keys) it answers `None`, and the caller falls back to the general path, which gives
//! serde-saphyr's value or error. Scalars are resolved by the same rules as there
//! ([`super::tree::scalar`]), so a value read here is always the value serde-saphyr reads.

use std::borrow::Cow;

use granit_parser::ScalarStyle;
use serde_json::{Map, Value};

use super::tree;

/// Deeper than this, the general path decides (and serde-saphyr's depth budget).
const MAX_DEPTH: usize = 200;
/// YAML limits implicit keys to 1024 characters.
const MAX_KEY: usize = 1024;

/// "Not in the subset": the caller uses the general parser.
struct Bail;

type R<T> = Result<T, Bail>;

/// The document in `text`, or `None` when it is not plain block YAML.
pub fn parse(text: &str) -> Option<Value> {
    if !plain_text(text) {
        return None;
    }
    let mut r = Reader {
        text,
        pos: 0,
        peeked: None,
    };
    let first = r.peek().ok()??;
    if first.indent != 0 {
        return None;
    }
    let value = if is_item(first.content) {
        r.seq(0, 0)
    } else {
        r.map(first, 0)
    }
    .ok()?;
    match r.peek() {
        Ok(None) => Some(value),
        _ => None,
    }
}

/// Only line feeds and printable characters that every YAML reader treats alike: no tabs, no
/// carriage returns, no C0/C1 controls, no Unicode line separators or byte order marks.
fn plain_text(text: &str) -> bool {
    let ascii_ok = text.bytes().all(|b| b == b'\n' || (b >= 0x20 && b != 0x7f));
    ascii_ok
        && (text.is_ascii()
            || !text.chars().any(|c| {
                matches!(
                    c,
                    '\u{80}'
                        ..='\u{9f}'
                            | '\u{2028}'
                            | '\u{2029}'
                            | '\u{feff}'
                            | '\u{fffe}'
                            | '\u{ffff}'
                )
            }))
}

/// One line: its indentation and the text after it (without the line feed).
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    indent: usize,
    content: &'a str,
    /// Where the next line starts.
    next: usize,
    /// Whether the line ends in a line feed (not the end of the text).
    newline: bool,
}

/// A block sequence entry: `-` alone or followed by a space.
fn is_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

struct Reader<'a> {
    text: &'a str,
    /// The start of the first line not yet read.
    pos: usize,
    /// The last line `peek` found and where it starts (each line is peeked several times).
    peeked: Option<(usize, Line<'a>)>,
}

impl<'a> Reader<'a> {
    fn line_at(&self, pos: usize) -> Option<Line<'a>> {
        if pos >= self.text.len() {
            return None;
        }
        let rest = &self.text[pos..];
        let (raw, next, newline) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], pos + i + 1, true),
            None => (rest, self.text.len(), false),
        };
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        Some(Line {
            indent,
            content: &raw[indent..],
            next,
            newline,
        })
    }

    /// The next line with content (skipping blank and comment lines), not consumed.
    fn peek(&mut self) -> R<Option<Line<'a>>> {
        if let Some((at, line)) = self.peeked
            && at == self.pos
        {
            return Ok(Some(line));
        }
        while let Some(line) = self.line_at(self.pos) {
            let c = line.content;
            if c.is_empty() || c.starts_with('#') {
                self.pos = line.next;
                continue;
            }
            // Document markers and directives belong to the stream, not to this reader.
            if line.indent == 0
                && (c.starts_with("---") || c.starts_with("...") || c.starts_with('%'))
            {
                return Err(Bail);
            }
            self.peeked = Some((self.pos, line));
            return Ok(Some(line));
        }
        Ok(None)
    }

    /// A block mapping whose keys sit at column `indent`; `first` is its first line (possibly
    /// the rest of a sequence entry line, `- key: value`).
    fn map(&mut self, first: Line<'a>, depth: usize) -> R<Value> {
        if depth >= MAX_DEPTH {
            return Err(Bail);
        }
        let indent = first.indent;
        let mut map = Map::new();
        let mut line = first;
        loop {
            if is_item(line.content) {
                return Err(Bail);
            }
            let (key, rest) = split_key(line.content).ok_or(Bail)?;
            check_key(key)?;
            self.pos = line.next;
            let value = match rest.trim_start_matches(' ') {
                "" => self.nested(indent, true, depth)?,
                v => self.inline(v, indent)?,
            };
            if map.contains_key(key) {
                return Err(Bail); // the serde-saphyr path names the repeat, last value wins
            }
            map.insert(key.to_string(), value);
            match self.peek()? {
                Some(l) if l.indent == indent => line = l,
                Some(l) if l.indent > indent => return Err(Bail),
                _ => break,
            }
        }
        Ok(Value::Object(map))
    }

    /// A block sequence whose `-` indicators sit at column `indent`.
    fn seq(&mut self, indent: usize, depth: usize) -> R<Value> {
        if depth >= MAX_DEPTH {
            return Err(Bail);
        }
        let mut items = Vec::new();
        while let Some(line) = self.peek()? {
            if line.indent != indent || !is_item(line.content) {
                if line.indent > indent {
                    return Err(Bail);
                }
                break;
            }
            self.pos = line.next;
            let rest = &line.content[1..];
            let v = rest.trim_start_matches(' ');
            let item = if v.is_empty() {
                self.nested(indent, false, depth)?
            } else if is_item(v) || v.starts_with('#') {
                return Err(Bail); // `- - x`, or a comment
            } else if split_key(v).is_some() {
                // `- key: value`: a mapping whose keys line up with this one's.
                let column = indent + 1 + (rest.len() - v.len());
                let first = Line {
                    indent: column,
                    content: v,
                    ..line
                };
                self.map(first, depth + 1)?
            } else {
                self.inline(v, indent)?
            };
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    /// The value of a key or entry with nothing after its indicator: a collection on the
    /// following lines, or null. A mapping value may be a sequence at the key's own column.
    fn nested(&mut self, parent: usize, same_column_seq: bool, depth: usize) -> R<Value> {
        match self.peek()? {
            Some(l) if l.indent > parent => {
                if is_item(l.content) {
                    self.seq(l.indent, depth + 1)
                } else {
                    self.map(l, depth + 1)
                }
            }
            Some(l) if l.indent == parent && same_column_seq && is_item(l.content) => {
                self.seq(parent, depth + 1)
            }
            _ => Ok(Value::Null),
        }
    }

    /// A value written after its key or entry indicator (`v` is not empty, starts with no
    /// space); `parent` is the column of the collection holding it.
    fn inline(&mut self, v: &'a str, parent: usize) -> R<Value> {
        let bytes = v.as_bytes();
        match bytes[0] {
            b'"' => double_quoted(&self.quoted_lines(v, parent, b'"')?).map(Value::String),
            b'\'' => single_quoted(&self.quoted_lines(v, parent, b'\'')?).map(Value::String),
            b'|' | b'>' => self.block_scalar(v, parent).map(Value::String),
            b'{' | b'[' => match v.trim_end_matches(' ') {
                "{}" => Ok(Value::Object(Map::new())),
                "[]" => Ok(Value::Array(Vec::new())),
                _ => Err(Bail),
            },
            b'-' if bytes.get(1).is_some_and(|b| *b != b' ' && *b != b'-') => {
                self.plain_lines(v, parent)
            }
            b'-' | b'?' | b':' | b',' | b']' | b'}' | b'#' | b'&' | b'*' | b'!' | b'%' | b'@'
            | b'`' => Err(Bail),
            _ => self.plain_lines(v, parent),
        }
    }

    /// A plain scalar starting with `v`, continued on the following lines that are indented
    /// deeper than `parent`: go-yaml wraps long strings this way (at about 80 columns), so
    /// most `olm.csv.metadata` descriptions span lines. Lines fold as YAML folds them: one
    /// line break becomes a space, n empty lines become n line feeds.
    fn plain_lines(&mut self, v: &'a str, parent: usize) -> R<Value> {
        let first = plain_first(v)?;
        let mut folded: Option<String> = None;
        let mut empties = 0;
        let mut pos = self.pos;
        while let Some(l) = self.line_at(pos) {
            let c = l.content.trim_end_matches(' ');
            if c.is_empty() {
                empties += 1;
                pos = l.next;
                continue;
            }
            if l.indent <= parent {
                break;
            }
            if !plain_continuation(c) {
                return Err(Bail);
            }
            let s = folded.get_or_insert_with(|| first.to_string());
            fold(s, empties);
            s.push_str(c);
            empties = 0;
            pos = l.next;
            self.pos = pos;
        }
        match folded {
            None => tree::scalar(Cow::Borrowed(first), ScalarStyle::Plain),
            Some(s) => tree::scalar(Cow::Owned(s), ScalarStyle::Plain),
        }
        .ok_or(Bail)
    }

    /// A quoted scalar (`quote` is `"` or `'`) starting with `v`: `v` itself when it closes on
    /// its line, else the scalar rewritten on one line, its line breaks folded (for `"`, a
    /// break escaped by `\` joins the lines). Continuation lines must be indented deeper than
    /// `parent`; anything unusual is left to the general path.
    fn quoted_lines(&mut self, v: &'a str, parent: usize, quote: u8) -> R<Cow<'a, str>> {
        let double = quote == b'"';
        if closing_quote(&v[1..], double).is_some() {
            return Ok(Cow::Borrowed(v));
        }
        let mut body = String::with_capacity(2 * v.len());
        body.push(char::from(quote));
        let mut escaped_break = push_segment(&mut body, &v[1..], double)?;
        let mut empties = 0;
        let mut pos = self.pos;
        loop {
            let l = self.line_at(pos).ok_or(Bail)?;
            pos = l.next;
            if l.content.trim_end_matches(' ').is_empty() {
                if escaped_break {
                    return Err(Bail);
                }
                empties += 1;
                continue;
            }
            if l.indent <= parent {
                return Err(Bail);
            }
            if !escaped_break {
                fold(&mut body, empties);
            }
            empties = 0;
            if closing_quote(l.content, double).is_some() {
                // The closing quote and what follows it (only spaces, checked by the caller).
                body.push_str(l.content);
                self.pos = pos;
                return Ok(Cow::Owned(body));
            }
            escaped_break = push_segment(&mut body, l.content, double)?;
        }
    }

    /// A `|`, `|-`, `>` or `>-` block scalar; its lines follow the current position.
    fn block_scalar(&mut self, header: &str, parent: usize) -> R<String> {
        let (literal, strip) = match header.trim_end_matches(' ') {
            "|" => (true, false),
            "|-" => (true, true),
            ">" => (false, false),
            ">-" => (false, true),
            _ => return Err(Bail), // keep chomping, indentation indicators, comments
        };
        let mut lines: Vec<&str> = Vec::new();
        let mut content_indent = None;
        let mut pos = self.pos;
        let mut last_newline = true;
        while let Some(l) = self.line_at(pos) {
            if l.content.is_empty() {
                // An empty line: leading ones, or ones with spaces beyond the content's
                // indentation, follow rules this reader leaves to the general path.
                match content_indent {
                    Some(ci) if l.indent <= ci => lines.push(""),
                    _ => return Err(Bail),
                }
                pos = l.next;
                continue;
            }
            let ci = match content_indent {
                Some(ci) if l.indent < ci => break,
                Some(ci) => ci,
                None if l.indent <= parent => break,
                None => *content_indent.insert(l.indent),
            };
            // The line without its first `ci` spaces (extra indentation is content).
            let end = l.next - usize::from(l.newline);
            let text = &self.text[end - l.content.len() - (l.indent - ci)..end];
            if !literal && (l.indent > ci || text.ends_with(' ')) {
                return Err(Bail); // folding of more-indented lines and trailing spaces
            }
            lines.push(text);
            last_newline = l.newline;
            pos = l.next;
        }
        while lines.last() == Some(&"") {
            lines.pop();
        }
        if lines.is_empty() || (!strip && !last_newline) {
            return Err(Bail); // empty scalars and a final line without its line feed
        }
        self.pos = pos;
        let mut out = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        if literal {
            for (i, l) in lines.iter().enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                out.push_str(l);
            }
        } else {
            // Folding: a single line break between two lines becomes a space; a break
            // followed by n empty lines becomes n line feeds.
            let mut empties = 0;
            for (i, l) in lines.iter().enumerate() {
                if l.is_empty() {
                    empties += 1;
                    continue;
                }
                if i > 0 {
                    if empties == 0 {
                        out.push(' ');
                    } else {
                        out.extend(std::iter::repeat_n('\n', empties));
                    }
                }
                empties = 0;
                out.push_str(l);
            }
        }
        if !strip {
            out.push('\n');
        }
        Ok(out)
    }
}

/// Splits `key: value` / `key:` at the first `:` followed by a space or the line's end.
fn split_key(content: &str) -> Option<(&str, &str)> {
    let bytes = content.as_bytes();
    let mut from = 0;
    loop {
        let i = from + memchr::memchr(b':', &bytes[from..])?;
        match bytes.get(i + 1) {
            None | Some(b' ') => return Some((&content[..i], &content[i + 1..])),
            _ => from = i + 1,
        }
    }
}

/// A plain key serde-saphyr reads as exactly its text, without characters that would need
/// the general parser's rules (comments, flow indicators, quotes, leading indicators).
fn check_key(key: &str) -> R<()> {
    let bytes = key.as_bytes();
    let leading_ok = !matches!(
        bytes.first(),
        None | Some(
            b'-' | b'?'
                | b':'
                | b','
                | b'['
                | b']'
                | b'{'
                | b'}'
                | b'#'
                | b'&'
                | b'*'
                | b'!'
                | b'|'
                | b'>'
                | b'\''
                | b'"'
                | b'%'
                | b'@'
                | b'`'
        )
    );
    let ok = leading_ok
        && key.len() <= MAX_KEY
        && !key.ends_with(' ')
        && !bytes
            .iter()
            .any(|b| matches!(b, b'#' | b',' | b'[' | b']' | b'{' | b'}'))
        && tree::is_plain_string(key);
    if ok { Ok(()) } else { Err(Bail) }
}

/// The first line of a plain scalar, without trailing spaces.
fn plain_first(v: &str) -> R<&str> {
    let t = v.trim_end_matches(' ');
    if t.contains(" #")
        || t.contains(": ")
        || t.ends_with(':')
        || t.starts_with("---")
        || t.starts_with("...")
    {
        return Err(Bail);
    }
    Ok(t)
}

/// A continuation line of a plain scalar (trimmed) that every reader folds alike: no
/// indicator first, no comment, nothing that reads as a key.
fn plain_continuation(c: &str) -> bool {
    let leading_ok = !matches!(
        c.as_bytes()[0],
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    );
    leading_ok && !c.contains(" #") && !c.contains(": ") && !c.ends_with(':')
}

/// Folds a line break followed by `empties` empty lines: a space, or that many line feeds.
fn fold(s: &mut String, empties: usize) {
    if empties == 0 {
        s.push(' ');
    } else {
        s.extend(std::iter::repeat_n('\n', empties));
    }
}

/// Where the closing quote of a quoted scalar is in `rest` (the text after the opening quote,
/// or a continuation line): the first `"` not escaped by `\`, or the first `'` not doubled.
fn closing_quote(rest: &str, double: bool) -> Option<usize> {
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], double) {
            (b'\\', true) => i += 2,
            (b'"', true) => return Some(i),
            (b'\'', false) if bytes.get(i + 1) == Some(&b'\'') => i += 2,
            (b'\'', false) => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// Appends one line of a multi-line quoted scalar without its trailing spaces; returns
/// whether it ends in an escaped line break (an odd run of `\` in a `"` scalar), whose `\`
/// is dropped so the next line joins without a space.
fn push_segment(body: &mut String, line: &str, double: bool) -> R<bool> {
    let t = line.trim_end_matches(' ');
    let backslashes = t.len() - t.trim_end_matches('\\').len();
    if double && backslashes % 2 == 1 {
        if t.len() != line.len() {
            return Err(Bail); // `\ ` is an escaped space, not a break
        }
        body.push_str(&t[..t.len() - 1]);
        return Ok(true);
    }
    body.push_str(t);
    Ok(false)
}

/// A `"…"` scalar that ends on its line (only spaces may follow), with JSON's escapes.
fn double_quoted(v: &str) -> R<String> {
    let bytes = v.as_bytes();
    let mut out: Option<String> = None;
    let mut start = 1;
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                if !v[i + 1..].bytes().all(|b| b == b' ') {
                    return Err(Bail);
                }
                return Ok(match out {
                    None => v[1..i].to_string(),
                    Some(mut s) => {
                        s.push_str(&v[start..i]);
                        s
                    }
                });
            }
            b'\\' => {
                let s = out.get_or_insert_with(String::new);
                s.push_str(&v[start..i]);
                let (c, len) = match bytes.get(i + 1).ok_or(Bail)? {
                    b'"' => ('"', 2),
                    b'\\' => ('\\', 2),
                    b'/' => ('/', 2),
                    b'n' => ('\n', 2),
                    b't' => ('\t', 2),
                    b'r' => ('\r', 2),
                    b'b' => ('\u{8}', 2),
                    b'f' => ('\u{c}', 2),
                    b'u' => {
                        let hex = v.get(i + 2..i + 6).ok_or(Bail)?;
                        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                            return Err(Bail);
                        }
                        let code = u32::from_str_radix(hex, 16).map_err(|_| Bail)?;
                        (char::from_u32(code).ok_or(Bail)?, 6)
                    }
                    _ => return Err(Bail),
                };
                s.push(c);
                i += len;
                start = i;
            }
            _ => i += 1,
        }
    }
    Err(Bail) // continues on the next line
}

/// A `'…'` scalar that ends on its line (only spaces may follow); `''` is a quote.
fn single_quoted(v: &str) -> R<String> {
    let mut out = String::new();
    let mut rest = &v[1..];
    loop {
        let i = rest.find('\'').ok_or(Bail)?;
        out.push_str(&rest[..i]);
        if rest[i + 1..].starts_with('\'') {
            out.push('\'');
            rest = &rest[i + 2..];
        } else {
            if !rest[i + 1..].bytes().all(|b| b == b' ') {
                return Err(Bail);
            }
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader and serde-saphyr agree, or the reader stands aside.
    fn same(text: &str) -> bool {
        super::super::agrees(parse, text)
    }

    #[test]
    fn agrees_on_scalars() {
        let mut fast = 0;
        for s in [
            "",
            "~",
            "null",
            "Null",
            "y",
            "yes",
            "No",
            "off",
            "true",
            "False",
            "0",
            "7",
            "0123",
            "-1",
            "+1",
            "1.5",
            "1e3",
            ".5",
            ".inf",
            "-.inf",
            "0x1F",
            "1_000",
            "1:20",
            "1.2.3",
            "v1.2.3",
            "-",
            "-a",
            "--x",
            "...x",
            ".a",
            "a b",
            "a: b",
            "a:b",
            "a:",
            "'q'",
            "'it''s'",
            "'a' b",
            "\"d\\u0041\"",
            "\"\\ud800\"",
            "\"a\\\"b\\\\c\\/d\\n\\t\"",
            "\"\\x41\"",
            "\"a\" b",
            "\"open",
            "'open",
            "x # c",
            "x#c",
            "1 # c",
            "@x",
            "`x`",
            "[]",
            "{}",
            "[a]",
            "{a: 1}",
            "&a x",
            "*a",
            "!x y",
            "%x",
            "?x",
            "? x",
            ":x",
            ",x",
            "]x",
            "}x",
            "|x",
            "quay.io/a/b@sha256:0123",
            "http://example.com/a?b=c#frag",
            "a  ",
            "  a",
            "é ü 日本",
            "\"é\"",
            "---x",
            "a\u{85}b",
            "a\u{2028}b",
        ] {
            fast += usize::from(same(&format!("k: {s}\n")));
            fast += usize::from(same(&format!("- {s}\n")));
            fast += usize::from(same(&format!("a:\n  k: {s}\nb: 1\n")));
        }
        assert!(fast > 80, "block reader answered only {fast} times");
    }

    #[test]
    fn agrees_on_block_scalars() {
        let mut fast = 0;
        for header in ["|", "|-", ">", ">-", "|+", ">+", "|2", "|-2", "| # c"] {
            for body in [
                "  one\n  two\n",
                "  one\n\n  two\n",
                "  one\n\n\n  two\n\n",
                "  one\n    more\n  two\n",
                "  one  \n  two\n",
                "\n  after blank\n",
                "  a\n   \n  b\n",
                "  a\n  # not a comment\n",
                "  a\n# a comment\n",
                "  a\n  b",
                "",
            ] {
                for tail in ["", "next: 1\n", "  # c\nnext: 1\n"] {
                    fast += usize::from(same(&format!("k: {header}\n{body}{tail}")));
                    fast += usize::from(same(&format!("- {header}\n{body}{tail}")));
                    fast += usize::from(same(&format!("top:\n  k: {header}\n  {body}")));
                }
            }
        }
        assert!(fast > 100, "block reader answered only {fast} times");
    }

    #[test]
    fn agrees_on_structures() {
        let mut fast = 0;
        for doc in [
            "a: 1\nb:\n  - x\n  - y\n",
            "a:\n- 1\n- 2\nb: 3\n",
            "a:\n- - 2\n  - 3\n",
            "- a: 1\n  b: 2\n- c: 3\n",
            "-   a: 1\n    b: 2\n",
            "- a: 1\n b: 2\n",
            "- a:\n  - x\n  b: 2\n",
            "- \n  a: 1\n",
            "-\n  - x\n",
            "-\n- x\n",
            "a:\nb:\n",
            "a: []\nb: {}\nc:\n",
            "a: 1\n  b: 2\n",
            "a: x\n  y\n",
            "a:\n  x y\n",
            "a: 1\na: 2\n",
            "<<: {a: 1}\nb: 2\n",
            "1: a\n",
            "yes: a\n",
            "'yes': a\n",
            "a b: c\n",
            "a:b: c\n",
            "a : b\n",
            "a: 1 # c\n",
            "# head\na: 1\n\n# mid\nb: 2\n",
            "  a: 1\n",
            "a: 1\n---\nb: 2\n",
            "--- a\n",
            "...\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: 1\n- b\n",
            "- a\nb: 1\n",
            "a:\n  b:\n    c:\n      - d: [ ]\n",
            "a: 1",
            "a:\n\tb: 1\n",
            "a: 1\r\nb: 2\r\n",
            "\u{feff}a: 1\n",
            "a: \"x\ny\"\n",
            "a: 'x\n  y'\n",
        ] {
            fast += usize::from(same(doc));
        }
        assert!(fast > 12, "block reader answered only {fast} times");
    }

    #[test]
    fn multi_line_scalars_fold_as_serde_saphyr_folds_them() {
        // What go-yaml writes for long strings, read here (not left to the general path).
        for doc in [
            "a: one two\n  three four\nb: 1\n",
            "a: one\n  two\n\n  three\n\n\n  four\nb: 1\n",
            "- one\n  two\n- three\n",
            "- k: one\n    two\n  j: x\n",
            "a:\n  b: long text\n    continued here\n  c: 2\n",
            "a: '[\"x\",\n  \"y\"]'\nb: 1\n",
            "a: 'it''s\n  wrapped'\n",
            "a: 'x\n\n  y'\n",
            "a: \"one\n  two\"\nb: 1\n",
            "a: \"one\\\n  two\"\n",
            "a: \"q\\\"\n  x\"\n",
            "a: \"\n  x\"\n",
            "a: \"x\n  \"\n",
            "a: 1\n  2\n",
            "a: true\n  false\n",
        ] {
            assert!(
                same(doc),
                "{doc:?}: the block reader should answer, and agree"
            );
        }
        // Left to the general path (or agreeing): continuation lines that are not plain text.
        for doc in [
            "a: x\n  - y\n",
            "a: x\n  # c\n",
            "a: x\n  y # c\n",
            "a: x\n  y: z\n",
            "a: \"x\n\"\n",
            "a: 'x\ny'\n",
            "a: \"x\\ \n  y\"\n",
            "a: \"x\n  y\" z\n",
            "a: \"unterminated\n  still\n",
            "a: \"one \\\n  \\ two\"\n",
        ] {
            super::super::agrees(parse, doc);
        }
    }

    #[test]
    fn catalog_documents_are_read_here() {
        let doc = "entries:\n- name: a.v1.1.0\n  replaces: a.v1.0.0\n  skipRange: \">=1.0.0 <1.1.0\"\n  skips:\n  - a.v0.9.0\nname: stable\npackage: a\nschema: olm.channel\n";
        assert!(same(doc));
        let bundle = "image: >-\n  quay.io/a/b@sha256:00\nname: a.v1\nproperties:\n- type: olm.csv.metadata\n  value:\n    annotations:\n      alm-examples: \"[{\\\"kind\\\":\\\"A\\\"}]\"\n    description: |-\n      line one\n\n      line two\n    keywords:\n    - x\nschema: olm.bundle\n";
        assert!(same(bundle));
        let v = parse(bundle).unwrap();
        assert_eq!(
            v["properties"][0]["value"]["description"],
            "line one\n\nline two"
        );
        assert_eq!(v["image"], "quay.io/a/b@sha256:00");
    }
}
