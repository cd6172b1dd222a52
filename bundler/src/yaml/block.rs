//! A line reader for the block YAML that opm, `olm` and sigs.k8s.io/yaml write.
//!
//! Catalog files are block mappings and sequences of one-line scalars and `|`/`>` block
//! scalars, indented with spaces. That subset is read here line by line, without a token
//! queue, several times faster than through the port of go-yaml ([`super::go`]). The reader
//! is deliberately narrow: at the first thing outside the subset (tabs, comments after
//! content, anchors, tags, flow collections other than `{}`/`[]`, continuation lines not
//! indented deeper than their parent, explicit keys, unusual escapes or block scalar headers,
//! document markers, duplicate keys) it answers `None`, and the caller reads the document with
//! the port, which gives Go's value or error. Plain scalars are typed by go-yaml's own rules
//! ([`super::go::resolve`]), so a value read here is always the value Go reads; the tests
//! check it against the port, and every recorded Go answer goes through both.

use std::borrow::Cow;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::go::resolve;
use super::scan;

/// Deeper than this, the general path decides (and serde-saphyr's depth budget).
const MAX_DEPTH: usize = 200;
/// YAML limits implicit keys to 1024 characters.
const MAX_KEY: usize = 1024;

/// "Not in the subset": the caller uses the general parser.
struct Bail;

type R<T> = Result<T, Bail>;

/// The document in `text`, or `None` when it is not plain block YAML.
pub fn parse(text: &str) -> Option<Value> {
    parse_with(text, false, false).map(|r| r.value)
}

/// The type of the property values [`parse_lean`] leaves out.
const CSV_METADATA: &str = "olm.csv.metadata";
/// The type of the property values a lean [`parse_raw`] builds as trees.
const BUNDLE_OBJECT: &str = "olm.bundle.object";

/// [`parse`] for a catalog blob whose `olm.csv.metadata` contents nobody will read (catalog
/// validation checks only that such a value is an object). In the top-level `properties`
/// list, the `value` of an item whose `type` (written before it) is `olm.csv.metadata` is
/// read without being built when it is a block mapping: every line goes through the same
/// code as in [`parse`], with the same subset, the same bail-outs (duplicate keys included)
/// and the same depth limit, so the answer is `None` exactly when [`parse`]'s is; the value
/// comes back as `{}`. The flag tells whether a value was left out this way.
pub fn parse_lean(text: &str) -> Option<(Value, bool)> {
    parse_with(text, true, false).map(|r| (r.value, r.skipped))
}

/// A catalog blob read by [`parse_raw`].
#[derive(Debug)]
pub struct RawRead {
    /// The document; in the items of its top-level `properties` list, a `value` given in
    /// `values` is `null` here.
    pub value: Value,
    /// Whether an `olm.csv.metadata` value was left out (lean reads only).
    pub skipped: bool,
    /// One entry per item of the top-level `properties` list: its `value` as compact JSON,
    /// keys in the order written, exactly the text serialising its tree would give; `None`
    /// where the value is in the tree (no `value` key, or an `olm.bundle.object` of a lean
    /// read, whose data the loader checks in the tree).
    pub values: Vec<Option<PropertyRead>>,
}

/// How an item of a blob's top-level `properties` list was read by [`parse_raw`].
#[derive(Debug)]
pub enum PropertyRead {
    /// The item is in the tree, its `value` `null` there: this is the value.
    Value(Box<RawValue>),
    /// The item is `null` in the tree: it is a mapping of a string `type` and, unless
    /// `value` is `None`, a `value`, and nothing else (`type_first`: written in that order).
    Item {
        ty: String,
        value: Option<Box<RawValue>>,
        type_first: bool,
    },
}

/// [`parse`] (or with `lean`, [`parse_lean`]) for a catalog blob whose property values end up
/// as JSON text: those are written as JSON while they are read, never built as trees (most
/// of a catalog's nodes are property values). Reads, bail-outs and scalar resolution are the
/// ones of [`parse`]: the answer is `None` exactly when [`parse`]'s is.
pub fn parse_raw(text: &str, lean: bool) -> Option<RawRead> {
    parse_with(text, lean, true)
}

fn parse_with(text: &str, lean: bool, raw: bool) -> Option<RawRead> {
    if !plain_text(text) {
        return None;
    }
    let mut r = Reader::new(text, lean, raw);
    let first = r.peek().ok()??;
    if first.indent != 0 {
        return None;
    }
    let value = if is_item(first.content) {
        r.seq(0, 0, false)
    } else {
        r.map(first, 0, false)
    }
    .ok()?;
    match r.peek() {
        Ok(None) => Some(RawRead {
            value,
            skipped: r.skipped,
            values: r.values,
        }),
        _ => None,
    }
}

/// Only line feeds and printable characters that every YAML reader treats alike: no tabs, no
/// carriage returns, no C0/C1 controls, no Unicode line separators or byte order marks.
fn plain_text(text: &str) -> bool {
    let bytes = text.as_bytes();
    // Bytes in blocks, with arithmetic the compiler turns into vector instructions (a check
    // with early exits costs over ten instructions a byte); blocks long enough that gathering
    // a block's verdict from the vector costs little beside reading it.
    let mut blocks = bytes.chunks_exact(256);
    let mut high = 0u8;
    for block in &mut blocks {
        let mut bad = 0u8;
        for &b in block {
            bad |= (u8::from(b < 0x20) & u8::from(b != b'\n')) | u8::from(b == 0x7f);
            high |= b;
        }
        if bad != 0 {
            return false;
        }
    }
    let rest = blocks.remainder();
    if !rest.iter().all(|&b| b == b'\n' || (b >= 0x20 && b != 0x7f)) {
        return false;
    }
    high |= rest.iter().fold(0, |h, &b| h | b);
    high < 0x80 || !has_unusual_character(bytes)
}

/// Whether valid UTF-8 holds U+0080..U+009F, U+2028, U+2029, U+FEFF, U+FFFE or U+FFFF: their
/// encodings are the only ones starting with 0xC2 then 0x80..=0x9F, 0xE2 0x80 0xA8/0xA9,
/// and 0xEF 0xBB 0xBF / 0xEF 0xBF 0xBE/0xBF (in valid UTF-8 these bytes start a character).
fn has_unusual_character(bytes: &[u8]) -> bool {
    memchr::memchr3_iter(0xc2, 0xe2, 0xef, bytes).any(|i| {
        let next = |k: usize| bytes.get(i + k).copied().unwrap_or(0);
        match bytes[i] {
            0xc2 => (0x80..=0x9f).contains(&next(1)),
            0xe2 => next(1) == 0x80 && matches!(next(2), 0xa8 | 0xa9),
            _ => matches!(
                (next(1), next(2)),
                (0xbb, 0xbf) | (0xbf, 0xbe) | (0xbf, 0xbf)
            ),
        }
    })
}

/// One line: its indentation and the text after it (without the line feed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Line<'a> {
    indent: usize,
    content: &'a str,
    /// Where the next line starts.
    next: usize,
    /// Whether the line ends in a line feed (not the end of the text).
    newline: bool,
    /// Where `content` splits as `key: value` or `key:`: its first `:` followed by a space or
    /// the line's end. Found while looking for the line's end, so no later pass looks again.
    key_len: Option<usize>,
    /// Whether `content` has such a `:` after that first one, or a `#` after a space: a plain
    /// scalar written there would end at it (a comment, or a nested key).
    marks: bool,
}

impl<'a> Line<'a> {
    /// The line from `content`'s byte `from` on, at column `indent` (the mapping in a
    /// `- key: value` entry).
    fn rest(self, from: usize, indent: usize) -> Line<'a> {
        Line {
            indent,
            content: &self.content[from..],
            key_len: self.key_len.map(|k| k - from),
            ..self
        }
    }

    /// A line [`Reader::peek`] passes over.
    fn blank_or_comment(&self) -> bool {
        self.content.is_empty() || self.content.starts_with('#')
    }

    /// A document marker or directive: they belong to the stream, not to this reader.
    fn stream_marker(&self) -> bool {
        let c = self.content;
        self.indent == 0 && (c.starts_with("---") || c.starts_with("...") || c.starts_with('%'))
    }
}

/// A block sequence entry: `-` alone or followed by a space.
fn is_item(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

/// A value written after its key or entry indicator: built, or a plain scalar that reads as
/// its own text (most scalars), which a JSON writer copies without building a string.
enum Scalar<'a> {
    Built(Value),
    Text(Cow<'a, str>),
}

/// What a collection read by [`Reader::nested`] is, for [`parse_lean`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Plain,
    /// The value of the top-level `properties` key: its items are properties.
    Properties,
    /// One item of the top-level `properties` list.
    Property,
}

struct Reader<'a> {
    text: &'a str,
    /// The start of the first line not yet read.
    pos: usize,
    /// The last line `peek` found and where it starts (each line is peeked several times).
    peeked: Option<(usize, Line<'a>)>,
    /// [`parse_lean`]: leave `olm.csv.metadata` values out.
    lean: bool,
    /// Reading without building: every value is `Null`, keys are checked for repeats in
    /// `keys` instead of a map.
    skip: bool,
    /// Whether a value was left out.
    skipped: bool,
    /// The keys of the mappings being skipped or written, innermost last.
    keys: Vec<&'a str>,
    /// [`parse_raw`]: property values are written as JSON, not built.
    raw: bool,
    /// While a property value is written: its JSON so far. Every value read meanwhile (when
    /// not skipping) writes itself here and comes back as `Null`.
    json: Option<Vec<u8>>,
    /// Where property values are written, kept between them.
    scratch: Vec<u8>,
    /// [`RawRead::values`].
    values: Vec<Option<PropertyRead>>,
    /// The value of the property item being read, for `values`.
    pending: Option<Box<RawValue>>,
    /// The property item just read, when it was read without a tree.
    item: Option<PropertyRead>,
    /// Reading a property item again, as a tree.
    whole_item: bool,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `text` (which passed [`plain_text`]).
    fn new(text: &'a str, lean: bool, raw: bool) -> Self {
        Reader {
            text,
            pos: 0,
            peeked: None,
            lean,
            skip: false,
            skipped: false,
            keys: Vec::new(),
            raw,
            json: None,
            scratch: Vec::new(),
            values: Vec::new(),
            pending: None,
            item: None,
            whole_item: false,
        }
    }

    /// The JSON being written, when values write themselves instead of being built.
    fn out(&mut self) -> Option<&mut Vec<u8>> {
        match self.skip {
            true => None,
            false => self.json.as_mut(),
        }
    }

    /// A value that was read whole: written out when values are being written, else given
    /// back.
    fn give(&mut self, v: Value) -> Value {
        match self.out() {
            Some(out) => {
                match &v {
                    Value::String(s) => write_str(out, s),
                    // Writing a value to memory cannot fail.
                    _ => drop(serde_json::to_writer(out, &v)),
                }
                Value::Null
            }
            None => v,
        }
    }

    /// The line starting at `pos`, its key separator and marks found in the same pass that
    /// finds its end.
    fn line_at(&self, pos: usize) -> Option<Line<'a>> {
        self.scan_line::<true>(pos)
    }

    /// The line starting at `pos` inside a quoted or block scalar, where only its end and
    /// indentation matter: its `key_len` and `marks` are not looked for (`None`, `false`).
    fn text_line_at(&self, pos: usize) -> Option<Line<'a>> {
        self.scan_line::<false>(pos)
    }

    /// Finds the end of the line starting at `pos` sixteen bytes at a time, looking closer
    /// only at line feeds and (with `MARKS`) `:` and `#`; past [`SHORT_LINE`] bytes, with
    /// memchr.
    fn scan_line<const MARKS: bool>(&self, pos: usize) -> Option<Line<'a>> {
        let bytes = self.text.as_bytes();
        if pos >= bytes.len() {
            return None;
        }
        let indent = leading_spaces(&bytes[pos..]);
        let start = pos + indent;
        let mut marks = Marks::default();
        let mut at = start;
        let end = loop {
            if at - start >= SHORT_LINE {
                let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
                if MARKS {
                    for i in memchr::memchr2_iter(b':', b'#', &bytes[at..end]) {
                        marks.add(bytes, start, at + i);
                    }
                }
                break end;
            }
            let (newlines, specials) = scan::line_marks(&scan::chunk_at(bytes, at));
            if MARKS {
                // The `:` and `#` before the line's end (all of them when it is not here).
                let before = (newlines & newlines.wrapping_neg()).wrapping_sub(1);
                let mut hits = specials & before;
                while hits != 0 {
                    marks.add(bytes, start, at + hits.trailing_zeros() as usize);
                    hits &= hits - 1;
                }
            }
            if newlines != 0 {
                break at + newlines.trailing_zeros() as usize;
            }
            at += 16;
            if at >= bytes.len() {
                break bytes.len();
            }
        };
        Some(self.line_from(pos, indent, end, marks.key_len, marks.marks))
    }

    /// The line from `pos` to `end` (a line feed, or the end of the text).
    fn line_from(
        &self,
        pos: usize,
        indent: usize,
        end: usize,
        key_len: Option<usize>,
        marks: bool,
    ) -> Line<'a> {
        Line {
            indent,
            content: &self.text[pos + indent..end],
            next: (end + 1).min(self.text.len()),
            newline: end < self.text.len(),
            key_len,
            marks,
        }
    }

    /// Keeps `line`, which starts at `at`, for the next [`peek`](Self::peek) when reading
    /// resumes there and `peek` would give it (readers of multi-line scalars look at the line
    /// after the scalar to find its end; without this, `peek` would read it again).
    fn remember(&mut self, at: usize, line: Line<'a>) {
        if !line.blank_or_comment() && !line.stream_marker() && at == self.pos {
            self.peeked = Some((at, line));
        }
    }

    /// The next line with content (skipping blank and comment lines), not consumed.
    fn peek(&mut self) -> R<Option<Line<'a>>> {
        if let Some((at, line)) = self.peeked
            && at == self.pos
        {
            return Ok(Some(line));
        }
        while let Some(line) = self.line_at(self.pos) {
            if line.blank_or_comment() {
                self.pos = line.next;
                continue;
            }
            if line.stream_marker() {
                return Err(Bail);
            }
            self.peeked = Some((self.pos, line));
            return Ok(Some(line));
        }
        Ok(None)
    }

    /// A block mapping whose keys sit at column `indent`; `first` is its first line (possibly
    /// the rest of a sequence entry line, `- key: value`). `property` says it is an item of
    /// the top-level `properties` list.
    fn map(&mut self, first: Line<'a>, depth: usize, property: bool) -> R<Value> {
        if depth >= MAX_DEPTH {
            return Err(Bail);
        }
        let indent = first.indent;
        let skip = self.skip;
        let emit = self.out().is_some();
        // A property item of a raw read: `type` and `value` go to `values`, nothing is built;
        // an item of any other shape is read again, built.
        let item = property && self.raw && !self.whole_item;
        let resume = (self.pos, self.peeked);
        // Keys are tracked in `keys` when the map itself is not built.
        let listed = skip || emit || item;
        let keys_from = self.keys.len();
        let mut map = Map::new();
        let mut csv_metadata = false;
        let mut bundle_object = false;
        let mut ty: Option<(String, bool)> = None;
        let mut has_value = false;
        let mut line = first;
        loop {
            if is_item(line.content) {
                return Err(Bail);
            }
            let k = line.key_len.ok_or(Bail)?;
            let (key, rest) = (&line.content[..k], &line.content[k + 1..]);
            let escaped = check_key(key)?;
            self.pos = line.next;
            if listed {
                if repeats(&self.keys[keys_from..], key) {
                    return Err(Bail); // a repeat: the general path decides, as in `parse`
                }
                self.keys.push(key);
            }
            let first_key = self.keys.len() == keys_from + 1;
            if let Some(out) = self.out() {
                out.push(if first_key { b'{' } else { b',' });
                match escaped {
                    true => write_str(out, key),
                    false => write_unescaped(out, key),
                }
                out.push(b':');
            }
            // A property's value is written as JSON (a lean read's bundle object excepted:
            // the loader checks its data in the tree).
            let raw_value = property && self.raw && key == "value" && !(self.lean && bundle_object);
            if item && !raw_value && key != "type" {
                // Another key, or a value kept as a tree: read the item whole, before this
                // value is read twice.
                return self.whole_property_item(first, depth, resume, keys_from);
            }
            if raw_value {
                let mut out = std::mem::take(&mut self.scratch);
                out.clear();
                self.json = Some(out);
            }
            let value = match rest.trim_start_matches(' ') {
                "" if property && self.lean && csv_metadata && key == "value" => {
                    self.left_out(indent, depth)?
                }
                "" => {
                    let role = match depth == 0 && (self.lean || self.raw) && key == "properties" {
                        true => Role::Properties,
                        false => Role::Plain,
                    };
                    self.nested(indent, true, depth, role)?
                }
                v => self.inline(v, indent, line.marks)?,
            };
            if let Some(json) = self.json.take_if(|_| raw_value) {
                // serde_json writes UTF-8.
                self.pending = std::str::from_utf8(&json)
                    .ok()
                    .map(super::written::raw_value);
                self.scratch = json;
            }
            if property && key == "type" {
                csv_metadata = value.as_str() == Some(CSV_METADATA);
                bundle_object = value.as_str() == Some(BUNDLE_OBJECT);
            }
            if item {
                match (key, value) {
                    ("type", Value::String(s)) => ty = Some((s, !has_value)),
                    ("value", _) if raw_value => has_value = true,
                    // Another key, a type that is not a string, a value kept as a tree.
                    _ => return self.whole_property_item(first, depth, resume, keys_from),
                }
            } else if !listed {
                // One hash per key (a lookup then an insert took two).
                match map.entry(key) {
                    serde_json::map::Entry::Vacant(e) => {
                        e.insert(value);
                    }
                    // The serde-saphyr path names the repeat, last value wins.
                    serde_json::map::Entry::Occupied(_) => return Err(Bail),
                }
            }
            match self.peek()? {
                Some(l) if l.indent == indent => line = l,
                Some(l) if l.indent > indent => return Err(Bail),
                _ => break,
            }
        }
        self.keys.truncate(keys_from);
        if emit {
            if let Some(out) = self.out() {
                out.push(b'}');
            }
            return Ok(Value::Null);
        }
        if item {
            let Some((ty, type_first)) = ty else {
                return self.whole_property_item(first, depth, resume, keys_from);
            };
            self.item = Some(PropertyRead::Item {
                ty,
                value: self.pending.take(),
                type_first,
            });
            return Ok(Value::Null);
        }
        Ok(Value::Object(map))
    }

    /// Reads the property item that starts with `first` again, built as a tree (its `value`
    /// still written as JSON): [`map`](Self::map) found it is not a plain `{type, value}`.
    fn whole_property_item(
        &mut self,
        first: Line<'a>,
        depth: usize,
        (pos, peeked): (usize, Option<(usize, Line<'a>)>),
        keys_from: usize,
    ) -> R<Value> {
        self.pos = pos;
        self.peeked = peeked;
        self.keys.truncate(keys_from);
        self.pending = None;
        self.whole_item = true;
        let read = self.map(first, depth, true);
        self.whole_item = false;
        read
    }

    /// A block sequence whose `-` indicators sit at column `indent`; `properties` says its
    /// items are properties.
    fn seq(&mut self, indent: usize, depth: usize, properties: bool) -> R<Value> {
        if depth >= MAX_DEPTH {
            return Err(Bail);
        }
        let mut items = Vec::new();
        let emit = self.out().is_some();
        let mut count = 0usize;
        while let Some(line) = self.peek()? {
            if line.indent != indent || !is_item(line.content) {
                if line.indent > indent {
                    return Err(Bail);
                }
                break;
            }
            self.pos = line.next;
            if let Some(out) = self.out() {
                out.push(if count == 0 { b'[' } else { b',' });
            }
            count += 1;
            let rest = &line.content[1..];
            let v = rest.trim_start_matches(' ');
            let item = if v.is_empty() {
                let role = match properties {
                    true => Role::Property,
                    false => Role::Plain,
                };
                self.nested(indent, false, depth, role)?
            } else if is_item(v) || v.starts_with('#') {
                return Err(Bail); // `- - x`, or a comment
            } else if line.key_len.is_some() {
                // `- key: value`: a mapping whose keys line up with this one's.
                let from = line.content.len() - v.len();
                self.map(line.rest(from, indent + from), depth + 1, properties)?
            } else {
                self.inline(v, indent, line.marks)?
            };
            if properties && self.raw {
                let read = match self.item.take() {
                    Some(item) => Some(item),
                    None => self.pending.take().map(PropertyRead::Value),
                };
                self.values.push(read);
            }
            if !self.skip && !emit {
                items.push(item);
            }
        }
        if emit {
            if let Some(out) = self.out() {
                out.push(b']');
            }
            return Ok(Value::Null);
        }
        Ok(Value::Array(items))
    }

    /// The value of a key or entry with nothing after its indicator: a collection on the
    /// following lines, or null. A mapping value may be a sequence at the key's own column.
    fn nested(
        &mut self,
        parent: usize,
        same_column_seq: bool,
        depth: usize,
        role: Role,
    ) -> R<Value> {
        match self.peek()? {
            Some(l) if l.indent > parent => {
                if is_item(l.content) {
                    self.seq(l.indent, depth + 1, role == Role::Properties)
                } else {
                    self.map(l, depth + 1, role == Role::Property)
                }
            }
            Some(l) if l.indent == parent && same_column_seq && is_item(l.content) => {
                self.seq(parent, depth + 1, role == Role::Properties)
            }
            _ => Ok(self.give(Value::Null)),
        }
    }

    /// For [`parse_lean`], the `value` of an `olm.csv.metadata` property (its key at column
    /// `parent`): a block mapping is read without being built and given as `{}`; anything
    /// else is read as [`nested`](Self::nested) reads it.
    fn left_out(&mut self, parent: usize, depth: usize) -> R<Value> {
        match self.peek()? {
            Some(l) if l.indent > parent && !is_item(l.content) => {
                self.skip = true;
                let read = self.map(l, depth + 1, false);
                self.skip = false;
                read?;
                self.skipped = true;
                Ok(self.give(Value::Object(Map::new())))
            }
            _ => self.nested(parent, true, depth, Role::Plain),
        }
    }

    /// A value written after its key or entry indicator (`v` is not empty, starts with no
    /// space); `parent` is the column of the collection holding it, `marks` the
    /// [`Line::marks`] of its line.
    fn inline(&mut self, v: &'a str, parent: usize, marks: bool) -> R<Value> {
        Ok(match self.inline_value(v, parent, marks)? {
            Scalar::Built(value) => self.give(value),
            Scalar::Text(text) => match self.out() {
                Some(out) => {
                    write_str(out, &text);
                    Value::Null
                }
                None => Value::String(text.into_owned()),
            },
        })
    }

    fn inline_value(&mut self, v: &'a str, parent: usize, marks: bool) -> R<Scalar<'a>> {
        let bytes = v.as_bytes();
        let build = !self.skip;
        let string = |s: String| match build {
            true => Scalar::Built(Value::String(s)),
            false => Scalar::Built(Value::Null),
        };
        match bytes[0] {
            b'"' => double_quoted(&self.quoted_lines(v, parent, b'"')?, build).map(string),
            b'\'' => single_quoted(&self.quoted_lines(v, parent, b'\'')?, build).map(string),
            b'|' | b'>' => self.block_scalar(v, parent).map(string),
            b'{' | b'[' => match v.trim_end_matches(' ') {
                "{}" => Ok(Scalar::Built(Value::Object(Map::new()))),
                "[]" => Ok(Scalar::Built(Value::Array(Vec::new()))),
                _ => Err(Bail),
            },
            b'-' if bytes.get(1).is_some_and(|b| *b != b' ' && *b != b'-') => {
                self.plain_lines(v, parent, marks)
            }
            b'-' | b'?' | b':' | b',' | b']' | b'}' | b'#' | b'&' | b'*' | b'!' | b'%' | b'@'
            | b'`' => Err(Bail),
            _ => self.plain_lines(v, parent, marks),
        }
    }

    /// A plain scalar starting with `v`, continued on the following lines that are indented
    /// deeper than `parent`: go-yaml wraps long strings this way (at about 80 columns), so
    /// most `olm.csv.metadata` descriptions span lines. Lines fold as YAML folds them: one
    /// line break becomes a space, n empty lines become n line feeds. With `marks` (a comment
    /// or another key after `v` on its line), the general path reads it.
    fn plain_lines(&mut self, v: &'a str, parent: usize, marks: bool) -> R<Scalar<'a>> {
        if marks {
            return Err(Bail);
        }
        let first = plain_first(v)?;
        let build = !self.skip;
        let mut folded: Option<String> = None;
        let mut continued = false;
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
                self.remember(pos, l);
                break;
            }
            if !plain_continuation(&l, c) {
                return Err(Bail);
            }
            continued = true;
            if build {
                let s = folded.get_or_insert_with(|| first.to_string());
                fold(s, empties);
                s.push_str(c);
            }
            empties = 0;
            pos = l.next;
            self.pos = pos;
        }
        if !build {
            // Only a one-line scalar can look like a number, the one case where resolving
            // it may stand aside.
            if !continued {
                resolve::plain_value(first).ok_or(Bail)?;
            }
            return Ok(Scalar::Built(Value::Null));
        }
        let text = match folded {
            None => Cow::Borrowed(first),
            Some(s) => Cow::Owned(s),
        };
        if resolve::plain_is_text(&text) {
            return Ok(Scalar::Text(text));
        }
        resolve::plain_value(&text).map(Scalar::Built).ok_or(Bail)
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
            let l = self.text_line_at(pos).ok_or(Bail)?;
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

    /// A `|`, `|-`, `>` or `>-` block scalar; its lines follow the current position. When
    /// skipping, the lines are checked but the text is not built (an empty string).
    fn block_scalar(&mut self, header: &str, parent: usize) -> R<String> {
        let (literal, strip) = match header.trim_end_matches(' ') {
            "|" => (true, false),
            "|-" => (true, true),
            ">" => (false, false),
            ">-" => (false, true),
            _ => return Err(Bail), // keep chomping, indentation indicators, comments
        };
        let build = !self.skip;
        let mut lines: Vec<&str> = Vec::new();
        let mut content_lines = 0usize;
        let mut content_indent = None;
        let mut pos = self.pos;
        let mut last_newline = true;
        while let Some(l) = self.text_line_at(pos) {
            if l.content.is_empty() {
                // An empty line: leading ones, or ones with spaces beyond the content's
                // indentation, follow rules this reader leaves to the general path.
                match content_indent {
                    Some(ci) if l.indent <= ci => {
                        if build {
                            lines.push("");
                        }
                    }
                    _ => return Err(Bail),
                }
                pos = l.next;
                continue;
            }
            // The line after the scalar is left for `peek`, which looks for its key.
            let ci = match content_indent {
                Some(ci) if l.indent < ci => break,
                Some(ci) => ci,
                None if l.indent <= parent => break,
                None => *content_indent.insert(l.indent),
            };
            if !literal && (l.indent > ci || l.content.ends_with(' ')) {
                return Err(Bail); // folding of more-indented lines and trailing spaces
            }
            if build {
                // The line without its first `ci` spaces (extra indentation is content).
                let end = l.next - usize::from(l.newline);
                lines.push(&self.text[end - l.content.len() - (l.indent - ci)..end]);
            }
            content_lines += 1;
            last_newline = l.newline;
            pos = l.next;
        }
        while lines.last() == Some(&"") {
            lines.pop();
        }
        if content_lines == 0 || (!strip && !last_newline) {
            return Err(Bail); // empty scalars and a final line without its line feed
        }
        self.pos = pos;
        if !build {
            return Ok(String::new());
        }
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

/// How much of a line [`Reader::scan_line`] reads sixteen bytes at a time before handing the rest
/// to memchr, whose calls cost more than short lines do but which reads long ones (icons,
/// bundle objects) many times faster.
const SHORT_LINE: usize = 128;

/// What [`Reader::line_at`] finds at the `:` and `#` bytes of a line.
#[derive(Default)]
struct Marks {
    /// [`Line::key_len`].
    key_len: Option<usize>,
    /// [`Line::marks`].
    marks: bool,
}

impl Marks {
    /// Takes in the `:` or `#` at `i` of the line whose content starts at `start`.
    fn add(&mut self, bytes: &[u8], start: usize, i: usize) {
        if bytes[i] == b':' {
            if matches!(bytes.get(i + 1), None | Some(b' ' | b'\n')) {
                self.marks |= self.key_len.is_some();
                self.key_len = self.key_len.or(Some(i - start));
            }
        } else {
            self.marks |= i > start && bytes[i - 1] == b' ';
        }
    }
}

/// How many spaces `line` starts with (eight at a time: catalog lines are deeply indented).
fn leading_spaces(line: &[u8]) -> usize {
    const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
    let mut n = 0;
    while let Some(chunk) = line.get(n..n + 8) {
        let word = u64::from_ne_bytes(chunk.try_into().unwrap_or_default());
        if word != SPACES {
            break;
        }
        n += 8;
    }
    n + line[n..].iter().take_while(|&&b| b == b' ').count()
}

/// Splits `key: value` / `key:` at the first `:` followed by a space or the line's end (what
/// [`Reader::line_at`] finds as it reads the line).
#[cfg(test)]
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

/// Whether `key` (not empty) is one of `keys`: lengths and first bytes tell most keys apart
/// without a call to compare the rest.
fn repeats(keys: &[&str], key: &str) -> bool {
    let first = key.as_bytes()[0];
    keys.iter()
        .any(|k| k.len() == key.len() && k.as_bytes()[0] == first && *k == key)
}

/// In [`KEY_BYTES`], a byte that needs the general parser's rules in a key.
const KEY_BAIL: u8 = 1;
/// In [`KEY_BYTES`], a byte JSON writes escaped.
const KEY_ESCAPED: u8 = 2;

/// What each byte of a key needs: one table look-up a byte, instead of comparing each byte
/// with every character in turn.
const KEY_BYTES: [u8; 256] = {
    let mut table = [0; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = KEY_ESCAPED;
        b += 1;
    }
    table[b'"' as usize] = KEY_ESCAPED;
    table[b'\\' as usize] = KEY_ESCAPED;
    let bail = *b"#,[]{}";
    let mut i = 0;
    while i < bail.len() {
        table[bail[i] as usize] = KEY_BAIL;
        i += 1;
    }
    table
};

/// A plain key serde-saphyr reads as exactly its text, without characters that would need
/// the general parser's rules (comments, flow indicators, quotes, leading indicators).
/// Returns whether JSON writes it with escapes.
fn check_key(key: &str) -> R<bool> {
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
    let found = bytes
        .iter()
        .fold(0, |found, &b| found | KEY_BYTES[usize::from(b)]);
    let ok = leading_ok
        && key.len() <= MAX_KEY
        && !key.ends_with(' ')
        && found & KEY_BAIL == 0
        && resolve::is_plain_key(key);
    if ok {
        Ok(found & KEY_ESCAPED != 0)
    } else {
        Err(Bail)
    }
}

/// Writes `s` as serde_json writes a string, the text between escapes copied whole (serde_json
/// looks up each byte in turn): most strings have nothing to escape.
fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        let mut escapes = scan::escapes(&scan::chunk_at(bytes, at));
        while escapes != 0 {
            let i = at + escapes.trailing_zeros() as usize;
            escapes &= escapes - 1;
            if i >= bytes.len() {
                break; // the zeros past the end
            }
            out.extend_from_slice(&bytes[copied..i]);
            write_escape(out, bytes[i]);
            copied = i + 1;
        }
        at += 16;
    }
    out.extend_from_slice(&bytes[copied..]);
    out.push(b'"');
}

/// The escape serde_json writes for `b` (a `"`, `\` or control character).
fn write_escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        b'\t' => b't',
        b'\n' => b'n',
        0x0c => b'f',
        b'\r' => b'r',
        _ => {
            let hex = [HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]];
            out.extend_from_slice(b"\\u00");
            out.extend_from_slice(&hex);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

/// Writes `s`, which has nothing JSON escapes, as a JSON string.
fn write_unescaped(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
}

/// The first line of a plain scalar, without trailing spaces (its line has no
/// [`Line::marks`]).
fn plain_first(v: &str) -> R<&str> {
    let t = v.trim_end_matches(' ');
    if t.starts_with("---") || t.starts_with("...") {
        return Err(Bail);
    }
    Ok(t)
}

/// Whether text (without trailing spaces) has a comment (` #`) or reads as a key (`: `, or a
/// `:` at its end): what [`Line::key_len`] and [`Line::marks`] tell of a line.
#[cfg(test)]
fn comment_or_key(t: &str) -> bool {
    let bytes = t.as_bytes();
    memchr::memchr2_iter(b'#', b':', bytes).any(|i| match bytes[i] {
        b'#' => i > 0 && bytes[i - 1] == b' ',
        _ => matches!(bytes.get(i + 1), None | Some(b' ')),
    })
}

/// A continuation line `l` of a plain scalar (`c`: its content trimmed) that every reader
/// folds alike: no indicator first, no comment, nothing that reads as a key.
fn plain_continuation(l: &Line, c: &str) -> bool {
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
    leading_ok && l.key_len.is_none() && !l.marks
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

/// A `"…"` scalar that ends on its line (only spaces may follow), with JSON's escapes and
/// the single-character ones of YAML. Without `build`, the text is checked and not built (an
/// empty string).
fn double_quoted(v: &str, build: bool) -> R<String> {
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
                    _ if !build => String::new(),
                    None => v[1..i].to_string(),
                    Some(mut s) => {
                        s.push_str(&v[start..i]);
                        s
                    }
                });
            }
            b'\\' => {
                let (c, len) = match bytes.get(i + 1).ok_or(Bail)? {
                    b'"' => ('"', 2),
                    b'\\' => ('\\', 2),
                    b'n' => ('\n', 2),
                    b't' => ('\t', 2),
                    b'r' => ('\r', 2),
                    b'b' => ('\u{8}', 2),
                    b'f' => ('\u{c}', 2),
                    // go-yaml writes `\ ` for a space that must not fold away (at the start
                    // of a continuation line).
                    b' ' => (' ', 2),
                    b'0' => ('\0', 2),
                    b'a' => ('\u{7}', 2),
                    b'v' => ('\u{b}', 2),
                    b'e' => ('\u{1b}', 2),
                    b'N' => ('\u{85}', 2),
                    b'_' => ('\u{a0}', 2),
                    b'L' => ('\u{2028}', 2),
                    b'P' => ('\u{2029}', 2),
                    b'x' => (hex_char(v, i + 2, 2)?, 4),
                    b'u' => (hex_char(v, i + 2, 4)?, 6),
                    b'U' => (hex_char(v, i + 2, 8)?, 10),
                    _ => return Err(Bail),
                };
                if build {
                    let s = out.get_or_insert_with(String::new);
                    s.push_str(&v[start..i]);
                    s.push(c);
                }
                i += len;
                start = i;
            }
            _ => i += 1,
        }
    }
    Err(Bail) // continues on the next line
}

/// The character of the `digits` hexadecimal digits at `at` in `v` (an escape's code point).
fn hex_char(v: &str, at: usize, digits: usize) -> R<char> {
    let hex = v.get(at..at + digits).ok_or(Bail)?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Bail);
    }
    let code = u32::from_str_radix(hex, 16).map_err(|_| Bail)?;
    char::from_u32(code).ok_or(Bail)
}

/// A `'…'` scalar that ends on its line (only spaces may follow); `''` is a quote. Without
/// `build`, the text is checked and not built (an empty string).
fn single_quoted(v: &str, build: bool) -> R<String> {
    let mut out = String::new();
    let mut rest = &v[1..];
    loop {
        let i = memchr::memchr(b'\'', rest.as_bytes()).ok_or(Bail)?;
        if build {
            out.push_str(&rest[..i]);
        }
        if rest[i + 1..].starts_with('\'') {
            if build {
                out.push('\'');
            }
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
            "\"\\x4\"",
            "\"a\\ b\"",
            "\"\\0\\a\\v\\e\\N\\_\\L\\P\"",
            "\"\\U0001F600\\U0000004\"",
            "\"\\U0001F600\"",
            "\"\\UFFFFFFFF\"",
            "\"\\q\"",
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
        // go-yaml's escaped space at the start of a continuation line (leading spaces kept).
        for doc in [
            "a: \"components\\n\n  \\            KubeRay.\\n* Kserve\"\nb: 1\n",
            "a: \"x\\n\n  \\   },\\n\"\n",
        ] {
            assert!(
                same(doc),
                "{doc:?}: the block reader should answer, and agree"
            );
        }
    }

    /// Whether `lean` is `full` with some `olm.csv.metadata` values of its top-level
    /// `properties` items (mappings in `full`) given as `{}`; how many.
    fn left_out_of(full: &Value, lean: &Value) -> Option<usize> {
        let (Some(Value::Array(f)), Some(Value::Array(l))) =
            (full.get("properties"), lean.get("properties"))
        else {
            return (full == lean).then_some(0);
        };
        let mut n = 0;
        for (fi, li) in f.iter().zip(l) {
            if fi == li {
                continue;
            }
            let csv = fi.get("type").and_then(Value::as_str) == Some(CSV_METADATA);
            let mut emptied = fi.clone();
            emptied["value"] = Value::Object(Map::new());
            if !(csv && fi["value"].is_object() && &emptied == li) {
                return None;
            }
            n += 1;
        }
        let rest = |v: &Value| {
            let mut v = v.clone();
            v["properties"] = Value::Null;
            v
        };
        (f.len() == l.len() && rest(full) == rest(lean)).then_some(n)
    }

    /// `parse_lean` answers exactly when `parse` does, with `parse`'s value apart from the
    /// values it leaves out. Returns whether it left one out.
    fn lean_same(text: &str) -> bool {
        match (parse(text), parse_lean(text)) {
            (None, None) => false,
            (Some(full), Some((lean, skipped))) => {
                let n = left_out_of(&full, &lean);
                assert!(n.is_some(), "{text:?}: {full:?} vs {lean:?}");
                assert_eq!(skipped, n > Some(0), "{text:?}");
                skipped
            }
            (full, lean) => panic!("{text:?}: parse {full:?}, parse_lean {lean:?}"),
        }
    }

    fn bundle_with_csv(body: &str) -> String {
        format!(
            "image: i\nname: a.v1\nproperties:\n- type: olm.package\n  value:\n    packageName: a\n    version: 1.0.0\n- type: olm.csv.metadata\n  value:\n{body}- type: olm.gvk\n  value:\n    group: g\nschema: olm.bundle\n"
        )
    }

    fn indent(text: &str, by: usize) -> String {
        text.lines()
            .map(|l| match l.is_empty() {
                true => "\n".to_string(),
                false => format!("{}{l}\n", " ".repeat(by)),
            })
            .collect()
    }

    #[test]
    fn lean_reads_leave_out_csv_metadata_only() {
        let doc = bundle_with_csv(
            "    annotations:\n      alm-examples: |-\n        [{\"kind\": \"A\"}]\n      capabilities: Basic Install\n    description: \"one\\n\\n  two\"\n    keywords:\n    - x\n    provider:\n      name: P\n",
        );
        assert!(lean_same(&doc));
        let (v, _) = parse_lean(&doc).unwrap();
        assert_eq!(v["properties"][1]["value"], serde_json::json!({}));
        assert_eq!(v["properties"][0]["value"]["version"], "1.0.0");
        assert_eq!(v["properties"][2]["value"]["group"], "g");
        // Not left out: `type` after `value`, nested deeper than the top-level list, other
        // types, values that are not block mappings, and documents read whole anyway.
        for doc in [
            "properties:\n- value:\n    a: 1\n  type: olm.csv.metadata\n",
            "x:\n  properties:\n  - type: olm.csv.metadata\n    value:\n      a: 1\n",
            "properties:\n- type: olm.gvk\n  value:\n    a: 1\n",
            "properties:\n- type: olm.csv.metadata\n  value: {}\n",
            "properties:\n- type: olm.csv.metadata\n  value:\n  - a\n",
            "properties:\n- type: olm.csv.metadata\n  value:\n",
            "properties:\n  a:\n  - type: olm.csv.metadata\n    value:\n      a: 1\n",
            "- properties:\n  - type: olm.csv.metadata\n    value:\n      a: 1\n",
        ] {
            assert!(!lean_same(doc), "{doc:?}");
        }
        // Left out in each layout of the list.
        for doc in [
            "properties:\n- type: olm.csv.metadata\n  value:\n    a: 1\n",
            "properties:\n  - type: olm.csv.metadata\n    value:\n      a: 1\n",
            "properties:\n-\n  type: olm.csv.metadata\n  value:\n    a: 1\n",
            "properties:\n- type: 'olm.csv.metadata'\n  value:\n    a:\n      b: []\n",
        ] {
            assert!(lean_same(doc), "{doc:?}");
        }
    }

    /// Whatever the left-out value holds, the lean read stands aside exactly when the whole
    /// read does (so an error, a warning about a repeated key, or a value the general path
    /// reads differently is never hidden).
    #[test]
    fn lean_reads_stand_aside_exactly_when_whole_reads_do() {
        let mut left_out = 0;
        let mut total = 0;
        let scalars = [
            "",
            "~",
            "yes",
            "0",
            "0123",
            "-1",
            "1.5",
            "1e3",
            ".inf",
            "0x1F",
            "1:20",
            "1.2.3",
            "-",
            "-a",
            "--x",
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
            "\"\\x41\"",
            "\"a\\ b\"",
            "\"\\q\"",
            "\"a\" b",
            "\"open",
            "'open",
            "x # c",
            "x#c",
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
            "|x",
            "a  ",
            "é ü",
            "---x",
            "a\u{85}b",
            "x\ty",
        ];
        for s in scalars {
            for body in [
                format!("    k: {s}\n    j: 1\n"),
                format!("    k:\n    - {s}\n    - z\n"),
                format!("    k:\n      m: {s}\n"),
                format!("    k: {s}\n      continued\n    j: 1\n"),
            ] {
                total += 1;
                left_out += usize::from(lean_same(&bundle_with_csv(&body)));
            }
        }
        for header in ["|", "|-", ">", ">-", "|+", "|2", "| # c"] {
            for body in [
                "  one\n  two\n",
                "  one\n\n  two\n",
                "  one\n    more\n  two\n",
                "  one  \n  two\n",
                "\n  after blank\n",
                "  a\n   \n  b\n",
                "  a\n  # not a comment\n",
                "",
            ] {
                let inner = format!("k: {header}\n{body}j: 1\n");
                total += 1;
                left_out += usize::from(lean_same(&bundle_with_csv(&indent(&inner, 4))));
            }
        }
        for structure in [
            "a: 1\na: 2\n",
            "a:\n  b: 1\n  b: 2\n",
            "a:\n- b: 1\n  b: 2\n",
            "a:\n  b: 1\nb:\n  a: 1\n",
            "a: 1\n  b: 2\n",
            "a:\n- - 2\n",
            "a:\n-   b: 1\n    c: 2\n",
            "a: 1 # c\n",
            "# c\na: 1\n",
            "a: \"x\n  y\"\n",
            "a: \"x\\\n  \\ y\"\n",
            "a: 'x\n\n  y'\n",
            "a: \"unterminated\n  still\n",
            "<<: {a: 1}\n",
            "yes: a\n",
            "a b: c\n",
            "a\tb: c\n",
        ] {
            total += 1;
            left_out += usize::from(lean_same(&bundle_with_csv(&indent(structure, 4))));
        }
        // Depth: the limit applies inside the left-out value as it does in a whole read.
        for levels in [150, 196, 197, 198, 199, 200, 260] {
            let mut inner = String::new();
            for l in 0..levels {
                inner.push_str(&" ".repeat(2 * l));
                inner.push_str("k:\n");
            }
            inner.push_str(&" ".repeat(2 * levels));
            inner.push_str("z: 1\n");
            total += 1;
            left_out += usize::from(lean_same(&bundle_with_csv(&indent(&inner, 4))));
        }
        assert!(left_out > total / 3, "left out {left_out} of {total}");
        assert!(left_out < total, "left out {left_out} of {total}");
    }

    /// `line_at` against the rules it stands for, written plainly: the line's end and
    /// indentation, `split_key`, and `comment_or_key` where the reader used to call it.
    fn check_lines(text: &str) {
        let r = Reader::new(text, false, false);
        let mut pos = 0;
        while pos < text.len() {
            let line = r.line_at(pos).unwrap();
            let raw = text[pos..].split('\n').next().unwrap();
            let indent = raw.len() - raw.trim_start_matches(' ').len();
            let content = &raw[indent..];
            let newline = pos + raw.len() < text.len();
            let expected = Line {
                indent,
                content,
                next: pos + raw.len() + usize::from(newline),
                newline,
                key_len: split_key(content).map(|(k, _)| k.len()),
                marks: line.marks,
            };
            assert_eq!(line, expected, "{text:?} at {pos}");
            assert_eq!(
                r.text_line_at(pos).unwrap(),
                Line {
                    key_len: None,
                    marks: false,
                    ..line
                },
                "{text:?} at {pos}"
            );
            // A plain value after the key: `marks` where `comment_or_key` said so (keys with
            // `#` and values starting with it are refused before either is asked).
            if let Some((key, rest)) = split_key(content) {
                let v = rest.trim_start_matches(' ');
                if !key.contains('#') && !v.starts_with('#') {
                    let old = comment_or_key(v.trim_end_matches(' '));
                    assert_eq!(line.marks, old, "{text:?} at {pos}: value {v:?}");
                }
            }
            // A sequence entry with no key, and a continuation line (not starting with `#`).
            if let Some(v) = content
                .strip_prefix("- ")
                .map(|v| v.trim_start_matches(' '))
                && line.key_len.is_none()
                && !v.starts_with('#')
            {
                let old = comment_or_key(v.trim_end_matches(' '));
                assert_eq!(line.marks, old, "{text:?} at {pos}: entry {v:?}");
            }
            let c = content.trim_end_matches(' ');
            if !c.is_empty() && !c.starts_with('#') {
                let now = line.key_len.is_some() || line.marks;
                assert_eq!(now, comment_or_key(c), "{text:?} at {pos}: continuation");
            }
            pos = line.next;
        }
        assert!(r.line_at(text.len()).is_none());
    }

    #[test]
    fn lines_are_split_and_marked_as_the_plain_rules_say() {
        let pieces = [
            "a", "k", ":", ": ", "#", " #", "- ", "'", "\"", "é", "日", "x:y", "  ", "\n",
        ];
        let mut texts = 0;
        for a in pieces {
            for b in pieces {
                for c in pieces {
                    for pad in [0, 1, 7, 8, 9, 17, 60, 130] {
                        for indent in [0, 3, 8] {
                            let text = format!(
                                "{}{}{a}{b}{}{c}",
                                " ".repeat(indent),
                                "w".repeat(pad),
                                "z".repeat(pad / 3),
                            );
                            check_lines(&text);
                            check_lines(&format!("{text}\n"));
                            check_lines(&format!("{text}\nq: r #s\n"));
                            texts += 3;
                        }
                    }
                }
            }
        }
        assert!(texts > 50_000);
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut strings: Vec<String> = (0u32..0x300)
            .chain([0x2028, 0xfeff, 0x1f600])
            .filter_map(char::from_u32)
            .map(String::from)
            .collect();
        let all = "\"\t\\\r\u{8}\u{c}\u{1}";
        for special in ["\"", "\\", "\n", "\u{1f}", "\u{7f}", "é", "x", all] {
            for at in 0..40 {
                strings.push(format!(
                    "{}{special}{}",
                    "a".repeat(at),
                    "b".repeat(40 - at)
                ));
                strings.push(special.repeat(at % 7));
            }
        }
        for s in &strings {
            let mut out = Vec::new();
            write_str(&mut out, s);
            assert_eq!(out, serde_json::to_vec(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn keys_with_escapes_are_written_escaped() {
        for key in ["a\"b", "a\\b", "ab"] {
            assert_eq!(check_key(key).ok(), Some(key != "ab"), "{key:?}");
            let doc = format!("properties:\n- type: x\n  value:\n    {key}: 1\n");
            let read = parse_raw(&doc, false).unwrap();
            let Some(Some(PropertyRead::Item { value: Some(v), .. })) = read.values.first() else {
                panic!("{:?}", read.values);
            };
            let expected = serde_json::json!({ key: 1 });
            assert_eq!(v.get(), serde_json::to_string(&expected).unwrap());
        }
    }

    #[test]
    fn leading_spaces_counts_every_length() {
        for n in 0..40 {
            let line = format!("{}x ", " ".repeat(n));
            assert_eq!(super::leading_spaces(line.as_bytes()), n);
            assert_eq!(super::leading_spaces(" ".repeat(n).as_bytes()), n);
        }
    }

    #[test]
    fn plain_text_is_the_character_rule() {
        let by_char = |t: &str| {
            t.bytes().all(|b| b == b'\n' || (b >= 0x20 && b != 0x7f))
                && !t.chars().any(|c| {
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
                })
        };
        let pieces = [
            "a",
            "\n",
            " ",
            "\t",
            "\r",
            "\u{7f}",
            "\u{1f}",
            "é",
            "\u{80}",
            "\u{9f}",
            "\u{a0}",
            "\u{2027}",
            "\u{2028}",
            "\u{2029}",
            "\u{202a}",
            "\u{feff}",
            "\u{fefe}",
            "\u{fffd}",
            "\u{fffe}",
            "\u{ffff}",
            "\u{10000}",
            "日",
            "’",
        ];
        for a in pieces {
            for b in pieces {
                for pad in [0, 5, 30, 31, 32, 33, 64, 255, 256, 257, 511] {
                    let t = format!("{}{a}{}{b}", "x".repeat(pad), "y".repeat(pad / 2));
                    assert_eq!(plain_text(&t), by_char(&t), "{t:?}");
                }
            }
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
