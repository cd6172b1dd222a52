//! k8s.io/apimachinery's `YAMLOrJSONDecoder` (pkg/util/yaml/decoder.go), which opm and the
//! operator-framework/api validators read every file through:
//!
//! - the first 4096 bytes decide: JSON when the first non-space character is `{`;
//! - JSON is a stream of values; when one fails after fewer than two were read, the decoder
//!   rewinds to the end of the last good one, skips spaces up to and including a line feed,
//!   and reads YAML from there for good, reporting the JSON error if that fails too;
//! - YAML is split into chunks at lines starting with `---` (anything but spaces or a comment
//!   after it is an error), lines are read as `bufio.ReadLine` reads them (CRLF becomes LF,
//!   each line ends with LF), and each chunk goes to sigs.k8s.io/yaml on its own.
//!
//! [`Stream`] yields JSON values and YAML chunks; the caller decodes each chunk (with the fast
//! reader when it applies, else [`super::unmarshal`]).

use std::borrow::Cow;

use serde_json::Value;

use super::json::{self, JsonError};

/// The sniffing window opm's catalog loader gives `NewYAMLOrJSONDecoder`.
pub const JSON_WINDOW: usize = 4096;

/// A stream that cannot go on: Go's message and the byte it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamError {
    pub message: String,
    pub offset: usize,
}

/// What the stream holds next.
#[derive(Debug)]
pub enum Piece<'a> {
    /// A JSON value and the offset it starts at.
    Json { value: Value, offset: usize },
    /// A YAML chunk: its bytes (each line ending in a line feed), its first line in the input
    /// (from 1) and its offset. When decoding it fails, `instead` is the error to report.
    Yaml {
        chunk: Cow<'a, [u8]>,
        line: usize,
        offset: usize,
        instead: Option<StreamError>,
    },
}

enum Mode<'a> {
    Json(json::Decoder<'a>),
    Yaml,
    Done,
}

pub struct Stream<'a> {
    data: &'a [u8],
    mode: Mode<'a>,
    /// Where the YAML splitter reads next.
    pos: usize,
    /// Lines before `pos`, and where that count was taken.
    line: usize,
    counted: usize,
    /// Values and chunks handed out.
    count: usize,
    /// The end of the last JSON value read.
    consumed: usize,
    /// Where the next `\r\n` is, from the last search (`None`: none after it).
    crlf: Option<Option<usize>>,
    /// Where the next line starting with `---` is, from the last search.
    separator: Option<Option<usize>>,
    /// The last [`Stream::line_of`] answer: (offset, line).
    line_cache: std::cell::Cell<(usize, usize)>,
}

impl<'a> Stream<'a> {
    /// A stream over `data`, sniffing JSON in the first `window` bytes.
    pub fn new(data: &'a [u8], window: usize) -> Stream<'a> {
        let head = &data[..data.len().min(window)];
        let mode = if first_non_space(head) == Some('{') {
            Mode::Json(json::Decoder::new(data, 0))
        } else {
            Mode::Yaml
        };
        Stream {
            data,
            mode,
            pos: 0,
            line: 1,
            counted: 0,
            count: 0,
            consumed: 0,
            crlf: None,
            separator: None,
            line_cache: std::cell::Cell::new((0, 1)),
        }
    }

    /// The line (from 1) of byte `offset`. Asked in order (each value of a JSON stream), it
    /// counts on from the last answer: the stream is counted once, not once per value.
    pub fn line_of(&self, offset: usize) -> usize {
        let offset = offset.min(self.data.len());
        let (from, line) = match self.line_cache.get() {
            (at, line) if at <= offset => (at, line),
            _ => (0, 1),
        };
        let line = line + memchr::memchr_iter(b'\n', &self.data[from..offset]).count();
        self.line_cache.set((offset, line));
        line
    }

    fn next_json(&mut self) -> Option<Result<Piece<'a>, StreamError>> {
        let Mode::Json(dec) = &mut self.mode else {
            return None;
        };
        let err = match dec.decode() {
            Ok(Some((value, offset))) => {
                self.consumed = dec.offset();
                self.count += 1;
                return Some(Ok(Piece::Json { value, offset }));
            }
            Ok(None) => {
                self.mode = Mode::Done;
                return None;
            }
            Err(e) => e,
        };
        let at = match &err {
            JsonError::Syntax { at, .. } | JsonError::Value { at, .. } => *at,
            JsonError::UnexpectedEof => self.data.len(),
        };
        if self.count > 1 {
            // Two values or more: a JSON stream for sure, no YAML.
            self.mode = Mode::Done;
            return Some(Err(StreamError {
                message: err.text(),
                offset: at,
            }));
        }
        let first = StreamError {
            message: match &err {
                JsonError::Syntax { msg, offset, .. } => format!("json: offset {offset}: {msg}"),
                other => other.text(),
            },
            offset: at,
        };
        match consume_whitespace(self.data, self.consumed) {
            Some(start) => {
                self.mode = Mode::Yaml;
                self.pos = start;
                match self.next_chunk() {
                    Some(Ok(Piece::Yaml {
                        chunk,
                        line,
                        offset,
                        ..
                    })) => Some(Ok(Piece::Yaml {
                        chunk,
                        line,
                        offset,
                        instead: Some(first),
                    })),
                    // A bad separator: the JSON error is what Go reports.
                    Some(_) => {
                        self.mode = Mode::Done;
                        Some(Err(first))
                    }
                    None => None,
                }
            }
            None => {
                self.mode = Mode::Done;
                Some(Err(first))
            }
        }
    }

    /// The next YAML chunk (apimachinery's `YAMLReader.Read`).
    fn next_chunk(&mut self) -> Option<Result<Piece<'a>, StreamError>> {
        let data = self.data;
        let mut start: Option<usize> = None;
        let mut owned: Option<Vec<u8>> = None;
        loop {
            if start.is_some() && owned.is_none() {
                self.skip_plain_lines();
            }
            if self.pos >= data.len() {
                let begin = start?;
                self.mode = Mode::Done;
                return Some(Ok(self.chunk(begin, data.len(), owned)));
            }
            let line_start = self.pos;
            let nl = memchr::memchr(b'\n', &data[line_start..]).map(|i| line_start + i);
            let next = nl.map_or(data.len(), |i| i + 1);
            // `bufio.ReadLine` drops `\n` or `\r\n`; LineReader adds `\n`.
            let content_end = match nl {
                Some(i) if i > line_start && data[i - 1] == b'\r' => i - 1,
                Some(i) => i,
                None => data.len(),
            };
            let content = &data[line_start..content_end];
            if content.starts_with(b"---") {
                let rest = go_trim_space(&content[3..]);
                if !rest.is_empty() && rest[0] != b'#' {
                    self.mode = Mode::Done;
                    return Some(Err(StreamError {
                        message: format!(
                            "invalid Yaml document separator: {}",
                            String::from_utf8_lossy(rest)
                        ),
                        offset: line_start,
                    }));
                }
                if let Some(begin) = start {
                    self.pos = next;
                    return Some(Ok(self.chunk(begin, line_start, owned)));
                }
            }
            if start.is_none() {
                start = Some(line_start);
            }
            // A line that does not read back as itself: the chunk is built line by line.
            let verbatim = nl.is_some() && content_end == nl.unwrap_or(0);
            if owned.is_none() && !verbatim {
                owned = Some(data[start.unwrap_or(line_start)..line_start].to_vec());
            }
            if let Some(buf) = owned.as_mut() {
                buf.extend_from_slice(content);
                buf.push(b'\n');
            }
            self.pos = next;
        }
    }

    /// Moves over the lines that read back as themselves and are not separators (most of a
    /// file), to the next line that needs a look: one starting with `---`, one ending in
    /// `\r\n`, or the last line when it has no line feed. The searches are kept, so a file
    /// is searched once whatever its number of documents.
    fn skip_plain_lines(&mut self) {
        let data = self.data;
        let pos = self.pos;
        if data[pos.min(data.len())..].starts_with(b"---") {
            return;
        }
        let next = |cached: &mut Option<Option<usize>>, find: &dyn Fn(usize) -> Option<usize>| {
            match *cached {
                Some(Some(at)) if at >= pos => Some(at),
                Some(None) => None,
                _ => {
                    let found = find(pos);
                    *cached = Some(found);
                    found
                }
            }
        };
        // The start of the next line starting with `---`.
        let sep = next(&mut self.separator, &|from| {
            memchr::memmem::find(&data[from..], b"\n---").map(|i| from + i + 1)
        });
        let crlf = next(&mut self.crlf, &|from| {
            // A carriage return is rare: one memchr pass finds there is none.
            memchr::memchr_iter(b'\r', &data[from..])
                .map(|i| from + i)
                .find(|&i| data.get(i + 1) == Some(&b'\n'))
        });
        let mut limit = data.len();
        if let Some(s) = sep {
            limit = limit.min(s);
        }
        if let Some(c) = crlf {
            // The start of the line holding it.
            let line = memchr::memrchr(b'\n', &data[..c]).map_or(0, |i| i + 1);
            limit = limit.min(line.max(pos));
        }
        if data.last() != Some(&b'\n') {
            let last = memchr::memrchr(b'\n', data).map_or(0, |i| i + 1);
            limit = limit.min(last.max(pos));
        }
        self.pos = limit.max(pos);
    }

    fn chunk(&mut self, begin: usize, end: usize, owned: Option<Vec<u8>>) -> Piece<'a> {
        self.line += memchr::memchr_iter(b'\n', &self.data[self.counted..begin]).count();
        self.counted = begin;
        self.count += 1;
        Piece::Yaml {
            chunk: match owned {
                Some(buf) => Cow::Owned(buf),
                None => Cow::Borrowed(&self.data[begin..end]),
            },
            line: self.line,
            offset: begin,
            instead: None,
        }
    }
}

impl<'a> Iterator for Stream<'a> {
    type Item = Result<Piece<'a>, StreamError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.mode {
            Mode::Json(_) => self.next_json(),
            Mode::Yaml => self.next_chunk(),
            Mode::Done => None,
        }
    }
}

/// The first character after Go's `unicode.IsSpace` characters (`None` when there is none,
/// or when a byte is not UTF-8: Go reads it as U+FFFD).
fn first_non_space(bytes: &[u8]) -> Option<char> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    };
    text.chars().find(|c| !c.is_whitespace())
}

/// Go's `bytes.TrimSpace`.
fn go_trim_space(bytes: &[u8]) -> &[u8] {
    let valid = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    };
    let lead = valid.len() - valid.trim_start().len();
    let rest = &bytes[lead..];
    match std::str::from_utf8(rest) {
        Ok(t) => &rest[..t.trim_end().len()],
        // Trailing bytes that are not UTF-8 are not space.
        Err(_) => rest,
    }
}

/// apimachinery's `consumeWhitespace` from `pos`: where YAML starts after a failed JSON
/// value (after the first line feed, or at the first other character), or `None` when fewer
/// than four bytes are left to look at or a byte is not UTF-8.
fn consume_whitespace(data: &[u8], mut pos: usize) -> Option<usize> {
    loop {
        if data.len() < pos + 4 {
            return None;
        }
        let head = &data[pos..pos + 4];
        let (c, size) = decode_rune(head)?;
        if !c.is_whitespace() {
            return Some(pos);
        }
        pos += size;
        if c == '\n' {
            return Some(pos);
        }
    }
}

/// Go's `utf8.DecodeRune`, `None` for its `RuneError`.
fn decode_rune(b: &[u8]) -> Option<(char, usize)> {
    for n in 1..=b.len().min(4) {
        if let Ok(s) = std::str::from_utf8(&b[..n])
            && let Some(c) = s.chars().next()
        {
            return (c != '\u{fffd}').then_some((c, n));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<String> {
        Stream::new(text.as_bytes(), JSON_WINDOW)
            .map(|p| match p {
                Ok(Piece::Json { value, .. }) => format!("json {value}"),
                Ok(Piece::Yaml { chunk, line, .. }) => {
                    format!("yaml@{line} {:?}", String::from_utf8_lossy(&chunk))
                }
                Err(e) => format!("error {}", e.message),
            })
            .collect()
    }

    #[test]
    fn lines_are_counted_on_in_order_and_anew_backwards() {
        let s = Stream::new(b"a\nb\nc\nd\n", JSON_WINDOW);
        assert_eq!(s.line_of(0), 1);
        assert_eq!(s.line_of(2), 2);
        assert_eq!(s.line_of(6), 4);
        assert_eq!(s.line_of(4), 3);
        assert_eq!(s.line_of(99), 5);
        assert_eq!(s.line_of(2), 2);
    }

    #[test]
    fn yaml_splits_at_separator_lines() {
        assert_eq!(
            pieces("a: 1\n---\nb: 2\n--- # c\nc: 3"),
            [
                "yaml@1 \"a: 1\\n\"",
                "yaml@3 \"b: 2\\n\"",
                "yaml@5 \"c: 3\\n\""
            ]
        );
        // A separator met with nothing read stays in the next chunk.
        assert_eq!(pieces("---\n---\n"), ["yaml@1 \"---\\n\""]);
        assert_eq!(
            pieces("a: 1\r\n---\r\nb: 2\r\n"),
            ["yaml@1 \"a: 1\\n\"", "yaml@3 \"b: 2\\n\""]
        );
        // A bad separator ends the stream; the document before it is dropped with it.
        assert_eq!(
            pieces("a: 1\n--- |\nx\n"),
            ["error invalid Yaml document separator: |"]
        );
    }

    #[test]
    fn json_falls_back_to_yaml() {
        assert_eq!(
            pieces("{\"a\": 1}\nb: 2\n"),
            ["json {\"a\":1}", "yaml@2 \"b: 2\\n\""]
        );
        assert_eq!(
            pieces("{\"a\": 1}\n{\"b\": 2}\nc: 3\n"),
            [
                "json {\"a\":1}",
                "json {\"b\":2}",
                "error invalid character 'c' looking for beginning of value"
            ]
        );
        assert_eq!(
            pieces("{\"a\": 1}\n}\n"),
            [
                "json {\"a\":1}",
                "error json: offset 10: invalid character '}' looking for beginning of value"
            ]
        );
    }
}
