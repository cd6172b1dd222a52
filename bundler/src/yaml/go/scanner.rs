//! go-yaml v2's scanner (`scannerc.go`, itself a port of libyaml): text to tokens.
//!
//! Ported function for function so that every leniency and every refusal is go-yaml's own:
//! quoted scalars whose continuation lines sit at any indentation, simple keys limited to 1024
//! characters on one line, tabs allowed after indentation but not in it, and each error message
//! with the mark go-yaml reports. Names follow the Go functions (`fetch_*`, `scan_*`) so the
//! two can be read side by side; the buffer is the whole decoded chunk ([`Input`]), and
//! [`Scanner::cache`] replays go-yaml's refills so input errors surface where go-yaml's do.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

use super::reader::{Input, ReaderError, width};

/// A position: characters read, line and column (all from 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Mark {
    pub index: usize,
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenType {
    None,
    StreamStart,
    StreamEnd,
    VersionDirective,
    TagDirective,
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowSequenceEnd,
    FlowMappingStart,
    FlowMappingEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias,
    Anchor,
    Tag,
    Scalar,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScalarStyle {
    #[default]
    Any,
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

#[derive(Debug, Clone)]
pub struct Token {
    pub typ: TokenType,
    pub start: Mark,
    pub end: Mark,
    /// Scalar text, anchor or alias name, tag handle, or tag directive handle.
    pub value: Vec<u8>,
    /// Tag suffix.
    pub suffix: Vec<u8>,
    /// Tag directive prefix.
    pub prefix: Vec<u8>,
    pub style: ScalarStyle,
    pub major: i8,
    pub minor: i8,
}

impl Token {
    fn new(typ: TokenType, start: Mark, end: Mark) -> Token {
        Token {
            typ,
            start,
            end,
            value: Vec::new(),
            suffix: Vec::new(),
            prefix: Vec::new(),
            style: ScalarStyle::Any,
            major: 0,
            minor: 0,
        }
    }
}

/// Which stage failed, as go-yaml's `parser.error` records it (its messages differ by stage).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorKind {
    #[default]
    None,
    Reader,
    Scanner,
    Parser,
}

/// go-yaml's error fields on its parser.
#[derive(Debug, Clone, Default)]
pub struct Problem {
    pub kind: ErrorKind,
    pub problem: String,
    pub problem_mark: Mark,
    /// go-yaml's context text (`while scanning a simple key`), which its messages leave out.
    pub context: &'static str,
    pub context_mark: Mark,
    /// For reader errors: the raw offset.
    #[allow(dead_code)]
    pub offset: usize,
}

/// Returned by every step once an error is recorded in [`Scanner::problem`].
#[derive(Debug)]
pub struct Stop;

pub type R<T> = Result<T, Stop>;

#[derive(Debug, Clone, Copy, Default)]
struct SimpleKey {
    possible: bool,
    required: bool,
    token_number: usize,
    mark: Mark,
}

/// Token numbers as their own hashes.
#[derive(Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = n as u64;
    }
}

/// go-yaml's limit on flow nesting and on block indentation levels.
const MAX_FLOW_LEVEL: usize = 10000;
const MAX_INDENTS: usize = 10000;

pub struct Scanner {
    input: Input,
    pos: usize,
    pub mark: Mark,
    pub problem: Problem,

    stream_start_produced: bool,
    pub stream_end_produced: bool,
    flow_level: usize,
    tokens: VecDeque<Token>,
    tokens_parsed: usize,
    token_available: bool,
    indent: isize,
    indents: Vec<isize>,
    simple_key_allowed: bool,
    simple_keys: Vec<SimpleKey>,
    simple_keys_by_tok: HashMap<usize, usize, BuildHasherDefault<IdHasher>>,
}

#[inline]
fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

#[inline]
fn as_hex(b: u8) -> u32 {
    match b {
        b'A'..=b'F' => u32::from(b - b'A' + 10),
        b'a'..=b'f' => u32::from(b - b'a' + 10),
        _ => u32::from(b.wrapping_sub(b'0')),
    }
}

impl Scanner {
    pub fn new(raw: &[u8]) -> Scanner {
        Scanner {
            input: Input::new(raw),
            pos: 0,
            mark: Mark::default(),
            problem: Problem::default(),
            stream_start_produced: false,
            stream_end_produced: false,
            flow_level: 0,
            tokens: VecDeque::new(),
            tokens_parsed: 0,
            token_available: false,
            indent: 0,
            indents: Vec::new(),
            simple_key_allowed: false,
            simple_keys: Vec::new(),
            simple_keys_by_tok: HashMap::default(),
        }
    }

    // ---- The buffer (yamlprivateh.go) ----

    #[inline]
    fn at(&self, k: usize) -> u8 {
        self.input.buf.get(self.pos + k).copied().unwrap_or(0)
    }
    #[inline]
    fn is_z(&self, k: usize) -> bool {
        self.at(k) == 0
    }
    #[inline]
    fn is_blank(&self, k: usize) -> bool {
        matches!(self.at(k), b' ' | b'\t')
    }
    #[inline]
    fn is_space(&self, k: usize) -> bool {
        self.at(k) == b' '
    }
    #[inline]
    fn is_tab(&self, k: usize) -> bool {
        self.at(k) == b'\t'
    }
    #[inline]
    fn is_break(&self, k: usize) -> bool {
        match self.at(k) {
            b'\r' | b'\n' => true,
            0xc2 => self.at(k + 1) == 0x85,
            0xe2 => self.at(k + 1) == 0x80 && matches!(self.at(k + 2), 0xa8 | 0xa9),
            _ => false,
        }
    }
    #[inline]
    fn is_crlf(&self, k: usize) -> bool {
        self.at(k) == b'\r' && self.at(k + 1) == b'\n'
    }
    #[inline]
    fn is_breakz(&self, k: usize) -> bool {
        self.is_z(k) || self.is_break(k)
    }
    #[inline]
    fn is_blankz(&self, k: usize) -> bool {
        self.is_blank(k) || self.is_breakz(k)
    }
    #[inline]
    fn is_digit(&self, k: usize) -> bool {
        self.at(k).is_ascii_digit()
    }
    #[inline]
    fn is_hex(&self, k: usize) -> bool {
        self.at(k).is_ascii_hexdigit()
    }

    /// go-yaml's `cache`: `n` characters are available, or the reader's error is recorded.
    #[inline]
    fn cache(&mut self, n: usize) -> R<()> {
        match self.input.cache(self.pos, n) {
            Ok(()) => Ok(()),
            Err(e) => Err(self.reader_error(e)),
        }
    }

    #[cold]
    fn reader_error(&mut self, e: ReaderError) -> Stop {
        self.problem = Problem {
            kind: ErrorKind::Reader,
            problem: e.problem.to_string(),
            offset: e.offset,
            ..Problem::default()
        };
        Stop
    }

    #[inline]
    fn skip(&mut self) {
        self.mark.index += 1;
        self.mark.column += 1;
        self.pos += width(self.at(0)).max(1);
    }

    fn skip_line(&mut self) {
        if self.is_crlf(0) {
            self.mark.index += 2;
            self.mark.column = 0;
            self.mark.line += 1;
            self.pos += 2;
        } else if self.is_break(0) {
            self.mark.index += 1;
            self.mark.column = 0;
            self.mark.line += 1;
            self.pos += width(self.at(0)).max(1);
        }
    }

    /// Copies one character to `s`.
    #[inline]
    fn read(&mut self, s: &mut Vec<u8>) {
        let w = width(self.at(0)).max(1);
        let end = (self.pos + w).min(self.input.buf.len());
        s.extend_from_slice(&self.input.buf[self.pos..end]);
        self.pos += w;
        self.mark.index += 1;
        self.mark.column += 1;
    }

    /// Copies a line break to `s` as go-yaml does (CR, LF, CRLF and NEL become LF).
    fn read_line(&mut self, s: &mut Vec<u8>) {
        let (a, b, c) = (self.at(0), self.at(1), self.at(2));
        if a == b'\r' && b == b'\n' {
            s.push(b'\n');
            self.pos += 2;
            self.mark.index += 1;
        } else if a == b'\r' || a == b'\n' {
            s.push(b'\n');
            self.pos += 1;
        } else if a == 0xc2 && b == 0x85 {
            s.push(b'\n');
            self.pos += 2;
        } else if a == 0xe2 && b == 0x80 && (c == 0xa8 || c == 0xa9) {
            s.extend_from_slice(&[a, b, c]);
            self.pos += 3;
        } else {
            return;
        }
        self.mark.index += 1;
        self.mark.column = 0;
        self.mark.line += 1;
    }

    // ---- The token queue (apic.go, parserc.go) ----

    fn insert_token(&mut self, pos: Option<usize>, token: Token) {
        match pos {
            None => self.tokens.push_back(token),
            Some(p) => self.tokens.insert(p.min(self.tokens.len()), token),
        }
    }

    /// The next token, fetching more when needed (`peek_token`).
    pub fn peek_token(&mut self) -> R<&Token> {
        if !self.token_available {
            self.fetch_more_tokens()?;
        }
        self.tokens.front().ok_or(Stop)
    }

    /// Drops the token [`peek_token`](Self::peek_token) gave (`skip_token`).
    pub fn skip_token(&mut self) {
        self.token_available = false;
        self.tokens_parsed += 1;
        if let Some(t) = self.tokens.pop_front() {
            self.stream_end_produced = t.typ == TokenType::StreamEnd;
        }
    }

    /// Takes the token [`peek_token`](Self::peek_token) gave.
    pub fn take_token(&mut self) -> Token {
        self.token_available = false;
        self.tokens_parsed += 1;
        let t = self
            .tokens
            .pop_front()
            .unwrap_or_else(|| Token::new(TokenType::None, self.mark, self.mark));
        self.stream_end_produced = t.typ == TokenType::StreamEnd;
        t
    }

    fn set_scanner_error(
        &mut self,
        context: &'static str,
        context_mark: Mark,
        problem: &str,
    ) -> Stop {
        self.problem = Problem {
            kind: ErrorKind::Scanner,
            context,
            context_mark,
            problem: problem.to_string(),
            problem_mark: self.mark,
            offset: 0,
        };
        Stop
    }

    fn set_scanner_tag_error(
        &mut self,
        directive: bool,
        context_mark: Mark,
        problem: &str,
    ) -> Stop {
        let context = if directive {
            "while parsing a %TAG directive"
        } else {
            "while parsing a tag"
        };
        self.set_scanner_error(context, context_mark, problem)
    }

    fn fetch_more_tokens(&mut self) -> R<()> {
        loop {
            if !self.tokens.is_empty() {
                // A simple key that may still start at the head keeps the queue open.
                let Some(&idx) = self.simple_keys_by_tok.get(&self.tokens_parsed) else {
                    break;
                };
                if !self.simple_key_is_valid(idx)? {
                    break;
                }
            }
            self.fetch_next_token()?;
        }
        self.token_available = true;
        Ok(())
    }

    fn fetch_next_token(&mut self) -> R<()> {
        self.cache(1)?;
        if !self.stream_start_produced {
            self.fetch_stream_start();
            return Ok(());
        }
        self.scan_to_next_token()?;
        self.unroll_indent(self.mark.column as isize);
        self.cache(4)?;

        if self.is_z(0) {
            return self.fetch_stream_end();
        }
        let c = self.at(0);
        if self.mark.column == 0 && c == b'%' {
            return self.fetch_directive();
        }
        if self.mark.column == 0
            && c == b'-'
            && self.at(1) == b'-'
            && self.at(2) == b'-'
            && self.is_blankz(3)
        {
            return self.fetch_document_indicator(TokenType::DocumentStart);
        }
        if self.mark.column == 0
            && c == b'.'
            && self.at(1) == b'.'
            && self.at(2) == b'.'
            && self.is_blankz(3)
        {
            return self.fetch_document_indicator(TokenType::DocumentEnd);
        }
        match c {
            b'[' => return self.fetch_flow_collection_start(TokenType::FlowSequenceStart),
            b'{' => return self.fetch_flow_collection_start(TokenType::FlowMappingStart),
            b']' => return self.fetch_flow_collection_end(TokenType::FlowSequenceEnd),
            b'}' => return self.fetch_flow_collection_end(TokenType::FlowMappingEnd),
            b',' => return self.fetch_flow_entry(),
            _ => {}
        }
        if c == b'-' && self.is_blankz(1) {
            return self.fetch_block_entry();
        }
        if c == b'?' && (self.flow_level > 0 || self.is_blankz(1)) {
            return self.fetch_key();
        }
        if c == b':' && (self.flow_level > 0 || self.is_blankz(1)) {
            return self.fetch_value();
        }
        match c {
            b'*' => return self.fetch_anchor(TokenType::Alias),
            b'&' => return self.fetch_anchor(TokenType::Anchor),
            b'!' => return self.fetch_tag(),
            b'|' if self.flow_level == 0 => return self.fetch_block_scalar(true),
            b'>' if self.flow_level == 0 => return self.fetch_block_scalar(false),
            b'\'' => return self.fetch_flow_scalar(true),
            b'"' => return self.fetch_flow_scalar(false),
            _ => {}
        }
        // A plain scalar may start with any non-blank character but the indicators; `-`, `?`
        // and `:` may start one when a non-blank follows (`?` and `:` in the block context
        // only).
        let indicator = matches!(
            c,
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
        if !(self.is_blankz(0) || indicator)
            || (c == b'-' && !self.is_blank(1))
            || (self.flow_level == 0 && (c == b'?' || c == b':') && !self.is_blankz(1))
        {
            return self.fetch_plain_scalar();
        }
        Err(self.set_scanner_error(
            "while scanning for the next token",
            self.mark,
            "found character that cannot start any token",
        ))
    }

    /// Whether the simple key at `idx` can still be one (`yaml_simple_key_is_valid`): a key
    /// must end on its line within 1024 characters; a required one that cannot is an error.
    fn simple_key_is_valid(&mut self, idx: usize) -> R<bool> {
        let mark = self.mark;
        let Some(key) = self.simple_keys.get_mut(idx) else {
            return Ok(false);
        };
        if !key.possible {
            return Ok(false);
        }
        if key.mark.line < mark.line || key.mark.index + 1024 < mark.index {
            if key.required {
                let key_mark = key.mark;
                return Err(self.set_scanner_error(
                    "while scanning a simple key",
                    key_mark,
                    "could not find expected ':'",
                ));
            }
            key.possible = false;
            return Ok(false);
        }
        Ok(true)
    }

    fn save_simple_key(&mut self) -> R<()> {
        let required = self.flow_level == 0 && self.indent == self.mark.column as isize;
        if self.simple_key_allowed {
            let key = SimpleKey {
                possible: true,
                required,
                token_number: self.tokens_parsed + self.tokens.len(),
                mark: self.mark,
            };
            self.remove_simple_key()?;
            let last = self.simple_keys.len() - 1;
            self.simple_keys[last] = key;
            self.simple_keys_by_tok.insert(key.token_number, last);
        }
        Ok(())
    }

    fn remove_simple_key(&mut self) -> R<()> {
        let i = self.simple_keys.len() - 1;
        let key = self.simple_keys[i];
        if key.possible {
            if key.required {
                return Err(self.set_scanner_error(
                    "while scanning a simple key",
                    key.mark,
                    "could not find expected ':'",
                ));
            }
            self.simple_keys[i].possible = false;
            self.simple_keys_by_tok.remove(&key.token_number);
        }
        Ok(())
    }

    fn increase_flow_level(&mut self) -> R<()> {
        self.simple_keys.push(SimpleKey {
            possible: false,
            required: false,
            token_number: self.tokens_parsed + self.tokens.len(),
            mark: self.mark,
        });
        self.flow_level += 1;
        if self.flow_level > MAX_FLOW_LEVEL {
            let mark = self.simple_keys[self.simple_keys.len() - 1].mark;
            return Err(self.set_scanner_error(
                "while increasing flow level",
                mark,
                &format!("exceeded max depth of {MAX_FLOW_LEVEL}"),
            ));
        }
        Ok(())
    }

    fn decrease_flow_level(&mut self) {
        if self.flow_level > 0 {
            self.flow_level -= 1;
            if let Some(last) = self.simple_keys.pop() {
                self.simple_keys_by_tok.remove(&last.token_number);
            }
        }
    }

    /// Pushes an indentation level and queues `typ` at token `number` (absolute; `None`: at
    /// the end) when `column` is deeper than the current level (`yaml_parser_roll_indent`).
    fn roll_indent(
        &mut self,
        column: usize,
        number: Option<usize>,
        typ: TokenType,
        mark: Mark,
    ) -> R<()> {
        if self.flow_level > 0 {
            return Ok(());
        }
        if self.indent < column as isize {
            self.indents.push(self.indent);
            self.indent = column as isize;
            if self.indents.len() > MAX_INDENTS {
                let mark = self.simple_keys[self.simple_keys.len() - 1].mark;
                return Err(self.set_scanner_error(
                    "while increasing indent level",
                    mark,
                    &format!("exceeded max depth of {MAX_INDENTS}"),
                ));
            }
            let token = Token::new(typ, mark, mark);
            let at = number.map(|n| n.saturating_sub(self.tokens_parsed));
            self.insert_token(at, token);
        }
        Ok(())
    }

    /// Pops indentation levels deeper than `column`, queueing a BLOCK-END for each.
    fn unroll_indent(&mut self, column: isize) {
        if self.flow_level > 0 {
            return;
        }
        while self.indent > column {
            self.insert_token(None, Token::new(TokenType::BlockEnd, self.mark, self.mark));
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn fetch_stream_start(&mut self) {
        self.indent = -1;
        self.simple_keys.push(SimpleKey::default());
        self.simple_key_allowed = true;
        self.stream_start_produced = true;
        self.insert_token(
            None,
            Token::new(TokenType::StreamStart, self.mark, self.mark),
        );
    }

    fn fetch_stream_end(&mut self) -> R<()> {
        if self.mark.column != 0 {
            self.mark.column = 0;
            self.mark.line += 1;
        }
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        self.insert_token(None, Token::new(TokenType::StreamEnd, self.mark, self.mark));
        Ok(())
    }

    fn fetch_directive(&mut self) -> R<()> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_directive()?;
        self.insert_token(None, token);
        Ok(())
    }

    fn fetch_document_indicator(&mut self, typ: TokenType) -> R<()> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        self.skip();
        self.skip();
        self.insert_token(None, Token::new(typ, start, self.mark));
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self, typ: TokenType) -> R<()> {
        self.save_simple_key()?;
        self.increase_flow_level()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        self.insert_token(None, Token::new(typ, start, self.mark));
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self, typ: TokenType) -> R<()> {
        self.remove_simple_key()?;
        self.decrease_flow_level();
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        self.insert_token(None, Token::new(typ, start, self.mark));
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> R<()> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        self.insert_token(None, Token::new(TokenType::FlowEntry, start, self.mark));
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> R<()> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err(self.set_scanner_error(
                    "",
                    self.mark,
                    "block sequence entries are not allowed in this context",
                ));
            }
            self.roll_indent(
                self.mark.column,
                None,
                TokenType::BlockSequenceStart,
                self.mark,
            )?;
        }
        // In the flow context the parser reports a `-`, where it can name the context.
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        self.insert_token(None, Token::new(TokenType::BlockEntry, start, self.mark));
        Ok(())
    }

    fn fetch_key(&mut self) -> R<()> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                return Err(self.set_scanner_error(
                    "",
                    self.mark,
                    "mapping keys are not allowed in this context",
                ));
            }
            self.roll_indent(
                self.mark.column,
                None,
                TokenType::BlockMappingStart,
                self.mark,
            )?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = self.flow_level == 0;
        let start = self.mark;
        self.skip();
        self.insert_token(None, Token::new(TokenType::Key, start, self.mark));
        Ok(())
    }

    fn fetch_value(&mut self) -> R<()> {
        let idx = self.simple_keys.len() - 1;
        if self.simple_key_is_valid(idx)? {
            let key = self.simple_keys[idx];
            // The KEY token goes where the simple key started.
            let token = Token::new(TokenType::Key, key.mark, key.mark);
            self.insert_token(
                Some(key.token_number.saturating_sub(self.tokens_parsed)),
                token,
            );
            self.roll_indent(
                key.mark.column,
                Some(key.token_number),
                TokenType::BlockMappingStart,
                key.mark,
            )?;
            self.simple_keys[idx].possible = false;
            self.simple_keys_by_tok.remove(&key.token_number);
            self.simple_key_allowed = false;
        } else {
            // The ':' follows a complex key.
            if self.flow_level == 0 {
                if !self.simple_key_allowed {
                    return Err(self.set_scanner_error(
                        "",
                        self.mark,
                        "mapping values are not allowed in this context",
                    ));
                }
                self.roll_indent(
                    self.mark.column,
                    None,
                    TokenType::BlockMappingStart,
                    self.mark,
                )?;
            }
            self.simple_key_allowed = self.flow_level == 0;
        }
        let start = self.mark;
        self.skip();
        self.insert_token(None, Token::new(TokenType::Value, start, self.mark));
        Ok(())
    }

    fn fetch_anchor(&mut self, typ: TokenType) -> R<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_anchor(typ)?;
        self.insert_token(None, token);
        Ok(())
    }

    fn fetch_tag(&mut self) -> R<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_tag()?;
        self.insert_token(None, token);
        Ok(())
    }

    fn fetch_block_scalar(&mut self, literal: bool) -> R<()> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let token = self.scan_block_scalar(literal)?;
        self.insert_token(None, token);
        Ok(())
    }

    fn fetch_flow_scalar(&mut self, single: bool) -> R<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_flow_scalar(single)?;
        self.insert_token(None, token);
        Ok(())
    }

    fn fetch_plain_scalar(&mut self) -> R<()> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let token = self.scan_plain_scalar()?;
        self.insert_token(None, token);
        Ok(())
    }

    /// Skips spaces, comments and line breaks up to the next token. Tabs count as space only
    /// in the flow context or where no simple key may start.
    fn scan_to_next_token(&mut self) -> R<()> {
        loop {
            self.cache(1)?;
            if self.mark.column == 0 && self.input.bom_at_buffer_start() {
                self.skip();
            }
            self.cache(1)?;
            while self.at(0) == b' '
                || ((self.flow_level > 0 || !self.simple_key_allowed) && self.at(0) == b'\t')
            {
                self.skip();
                self.cache(1)?;
            }
            if self.at(0) == b'#' {
                while !self.is_breakz(0) {
                    self.skip();
                    self.cache(1)?;
                }
            }
            if self.is_break(0) {
                self.cache(2)?;
                self.skip_line();
                if self.flow_level == 0 {
                    self.simple_key_allowed = true;
                }
            } else {
                return Ok(());
            }
        }
    }

    fn scan_directive(&mut self) -> R<Token> {
        let start = self.mark;
        self.skip();
        let name = self.scan_directive_name(start)?;
        let token = if name == b"YAML" {
            let (major, minor) = self.scan_version_directive_value(start)?;
            let mut t = Token::new(TokenType::VersionDirective, start, self.mark);
            t.major = major;
            t.minor = minor;
            t
        } else if name == b"TAG" {
            let (handle, prefix) = self.scan_tag_directive_value(start)?;
            let mut t = Token::new(TokenType::TagDirective, start, self.mark);
            t.value = handle;
            t.prefix = prefix;
            t
        } else {
            return Err(self.set_scanner_error(
                "while scanning a directive",
                start,
                "found unknown directive name",
            ));
        };
        self.cache(1)?;
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        if self.at(0) == b'#' {
            while !self.is_breakz(0) {
                self.skip();
                self.cache(1)?;
            }
        }
        if !self.is_breakz(0) {
            return Err(self.set_scanner_error(
                "while scanning a directive",
                start,
                "did not find expected comment or line break",
            ));
        }
        if self.is_break(0) {
            self.cache(2)?;
            self.skip_line();
        }
        Ok(token)
    }

    fn scan_directive_name(&mut self, start: Mark) -> R<Vec<u8>> {
        self.cache(1)?;
        let mut s = Vec::new();
        while is_alpha(self.at(0)) {
            self.read(&mut s);
            self.cache(1)?;
        }
        if s.is_empty() {
            return Err(self.set_scanner_error(
                "while scanning a directive",
                start,
                "could not find expected directive name",
            ));
        }
        if !self.is_blankz(0) {
            return Err(self.set_scanner_error(
                "while scanning a directive",
                start,
                "found unexpected non-alphabetical character",
            ));
        }
        Ok(s)
    }

    fn scan_version_directive_value(&mut self, start: Mark) -> R<(i8, i8)> {
        self.cache(1)?;
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        let major = self.scan_version_directive_number(start)?;
        if self.at(0) != b'.' {
            return Err(self.set_scanner_error(
                "while scanning a %YAML directive",
                start,
                "did not find expected digit or '.' character",
            ));
        }
        self.skip();
        let minor = self.scan_version_directive_number(start)?;
        Ok((major, minor))
    }

    fn scan_version_directive_number(&mut self, start: Mark) -> R<i8> {
        self.cache(1)?;
        let (mut value, mut length) = (0i8, 0);
        while self.is_digit(0) {
            length += 1;
            if length > 2 {
                return Err(self.set_scanner_error(
                    "while scanning a %YAML directive",
                    start,
                    "found extremely long version number",
                ));
            }
            value = value
                .wrapping_mul(10)
                .wrapping_add((self.at(0) - b'0') as i8);
            self.skip();
            self.cache(1)?;
        }
        if length == 0 {
            return Err(self.set_scanner_error(
                "while scanning a %YAML directive",
                start,
                "did not find expected version number",
            ));
        }
        Ok(value)
    }

    fn scan_tag_directive_value(&mut self, start: Mark) -> R<(Vec<u8>, Vec<u8>)> {
        self.cache(1)?;
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        let handle = self.scan_tag_handle(true, start)?;
        self.cache(1)?;
        if !self.is_blank(0) {
            return Err(self.set_scanner_error(
                "while scanning a %TAG directive",
                start,
                "did not find expected whitespace",
            ));
        }
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        let prefix = self.scan_tag_uri(true, &[], start)?;
        self.cache(1)?;
        if !self.is_blankz(0) {
            return Err(self.set_scanner_error(
                "while scanning a %TAG directive",
                start,
                "did not find expected whitespace or line break",
            ));
        }
        Ok((handle, prefix))
    }

    fn scan_anchor(&mut self, typ: TokenType) -> R<Token> {
        let mut s = Vec::new();
        let start = self.mark;
        self.skip();
        self.cache(1)?;
        while is_alpha(self.at(0)) {
            self.read(&mut s);
            self.cache(1)?;
        }
        let end = self.mark;
        let c = self.at(0);
        if s.is_empty()
            || !(self.is_blankz(0)
                || matches!(c, b'?' | b':' | b',' | b']' | b'}' | b'%' | b'@' | b'`'))
        {
            let context = if typ == TokenType::Anchor {
                "while scanning an anchor"
            } else {
                "while scanning an alias"
            };
            return Err(self.set_scanner_error(
                context,
                start,
                "did not find expected alphabetic or numeric character",
            ));
        }
        let mut t = Token::new(typ, start, end);
        t.value = s;
        Ok(t)
    }

    fn scan_tag(&mut self) -> R<Token> {
        let start = self.mark;
        self.cache(2)?;
        let (handle, suffix);
        if self.at(1) == b'<' {
            self.skip();
            self.skip();
            suffix = self.scan_tag_uri(false, &[], start)?;
            if self.at(0) != b'>' {
                return Err(self.set_scanner_error(
                    "while scanning a tag",
                    start,
                    "did not find the expected '>'",
                ));
            }
            self.skip();
            handle = Vec::new();
        } else {
            let h = self.scan_tag_handle(false, start)?;
            if h.len() > 1 && h[0] == b'!' && h[h.len() - 1] == b'!' {
                suffix = self.scan_tag_uri(false, &[], start)?;
                handle = h;
            } else {
                // Not a handle after all: it is the start of the suffix.
                let s = self.scan_tag_uri(false, &h, start)?;
                if s.is_empty() {
                    // The `!` tag alone.
                    handle = Vec::new();
                    suffix = vec![b'!'];
                } else {
                    handle = vec![b'!'];
                    suffix = s;
                }
            }
        }
        self.cache(1)?;
        if !self.is_blankz(0) {
            return Err(self.set_scanner_error(
                "while scanning a tag",
                start,
                "did not find expected whitespace or line break",
            ));
        }
        let mut t = Token::new(TokenType::Tag, start, self.mark);
        t.value = handle;
        t.suffix = suffix;
        Ok(t)
    }

    fn scan_tag_handle(&mut self, directive: bool, start: Mark) -> R<Vec<u8>> {
        self.cache(1)?;
        if self.at(0) != b'!' {
            return Err(self.set_scanner_tag_error(directive, start, "did not find expected '!'"));
        }
        let mut s = Vec::new();
        self.read(&mut s);
        self.cache(1)?;
        while is_alpha(self.at(0)) {
            self.read(&mut s);
            self.cache(1)?;
        }
        if self.at(0) == b'!' {
            self.read(&mut s);
        } else if directive && s != b"!" {
            return Err(self.set_scanner_tag_error(directive, start, "did not find expected '!'"));
        }
        Ok(s)
    }

    fn scan_tag_uri(&mut self, directive: bool, head: &[u8], start: Mark) -> R<Vec<u8>> {
        let mut s = Vec::new();
        let mut has_tag = !head.is_empty();
        if head.len() > 1 {
            s.extend_from_slice(&head[1..]);
        }
        self.cache(1)?;
        loop {
            let c = self.at(0);
            let uri = is_alpha(c)
                || matches!(
                    c,
                    b';' | b'/'
                        | b'?'
                        | b':'
                        | b'@'
                        | b'&'
                        | b'='
                        | b'+'
                        | b'$'
                        | b','
                        | b'.'
                        | b'!'
                        | b'~'
                        | b'*'
                        | b'\''
                        | b'('
                        | b')'
                        | b'['
                        | b']'
                        | b'%'
                );
            if !uri {
                break;
            }
            if c == b'%' {
                self.scan_uri_escapes(directive, start, &mut s)?;
            } else {
                self.read(&mut s);
            }
            self.cache(1)?;
            has_tag = true;
        }
        if !has_tag {
            return Err(self.set_scanner_tag_error(
                directive,
                start,
                "did not find expected tag URI",
            ));
        }
        Ok(s)
    }

    fn scan_uri_escapes(&mut self, directive: bool, start: Mark, s: &mut Vec<u8>) -> R<()> {
        let mut w = 1024usize;
        while w > 0 {
            self.cache(3)?;
            if !(self.at(0) == b'%' && self.is_hex(1) && self.is_hex(2)) {
                return Err(self.set_scanner_tag_error(
                    directive,
                    start,
                    "did not find URI escaped octet",
                ));
            }
            let octet = ((as_hex(self.at(1)) << 4) + as_hex(self.at(2))) as u8;
            if w == 1024 {
                w = width(octet);
                if w == 0 {
                    return Err(self.set_scanner_tag_error(
                        directive,
                        start,
                        "found an incorrect leading UTF-8 octet",
                    ));
                }
            } else if octet & 0xc0 != 0x80 {
                return Err(self.set_scanner_tag_error(
                    directive,
                    start,
                    "found an incorrect trailing UTF-8 octet",
                ));
            }
            s.push(octet);
            self.skip();
            self.skip();
            self.skip();
            w -= 1;
        }
        Ok(())
    }

    fn scan_block_scalar(&mut self, literal: bool) -> R<Token> {
        let start = self.mark;
        self.skip();
        self.cache(1)?;
        let (mut chomping, mut increment) = (0i32, 0usize);
        if matches!(self.at(0), b'+' | b'-') {
            chomping = if self.at(0) == b'+' { 1 } else { -1 };
            self.skip();
            self.cache(1)?;
            if self.is_digit(0) {
                if self.at(0) == b'0' {
                    return Err(self.set_scanner_error(
                        "while scanning a block scalar",
                        start,
                        "found an indentation indicator equal to 0",
                    ));
                }
                increment = usize::from(self.at(0) - b'0');
                self.skip();
            }
        } else if self.is_digit(0) {
            if self.at(0) == b'0' {
                return Err(self.set_scanner_error(
                    "while scanning a block scalar",
                    start,
                    "found an indentation indicator equal to 0",
                ));
            }
            increment = usize::from(self.at(0) - b'0');
            self.skip();
            self.cache(1)?;
            if matches!(self.at(0), b'+' | b'-') {
                chomping = if self.at(0) == b'+' { 1 } else { -1 };
                self.skip();
            }
        }
        self.cache(1)?;
        while self.is_blank(0) {
            self.skip();
            self.cache(1)?;
        }
        if self.at(0) == b'#' {
            while !self.is_breakz(0) {
                self.skip();
                self.cache(1)?;
            }
        }
        if !self.is_breakz(0) {
            return Err(self.set_scanner_error(
                "while scanning a block scalar",
                start,
                "did not find expected comment or line break",
            ));
        }
        if self.is_break(0) {
            self.cache(2)?;
            self.skip_line();
        }
        let mut end = self.mark;
        let mut indent = 0usize;
        if increment > 0 {
            indent = if self.indent >= 0 {
                self.indent as usize + increment
            } else {
                increment
            };
        }
        let mut s = Vec::new();
        let mut leading_break = Vec::new();
        let mut trailing_breaks = Vec::new();
        self.scan_block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        self.cache(1)?;
        let (mut leading_blank, mut trailing_blank);
        leading_blank = false;
        while self.mark.column == indent && !self.is_z(0) {
            // At the start of a line with content.
            trailing_blank = self.is_blank(0);
            if !literal
                && !leading_blank
                && !trailing_blank
                && leading_break.first() == Some(&b'\n')
            {
                // Fold the line break, unless empty lines follow it.
                if trailing_breaks.is_empty() {
                    s.push(b' ');
                }
            } else {
                s.extend_from_slice(&leading_break);
            }
            leading_break.clear();
            s.extend_from_slice(&trailing_breaks);
            trailing_breaks.clear();
            leading_blank = self.is_blank(0);
            while !self.is_breakz(0) {
                self.read(&mut s);
                self.cache(1)?;
            }
            self.cache(2)?;
            self.read_line(&mut leading_break);
            self.scan_block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        }
        if chomping != -1 {
            s.extend_from_slice(&leading_break);
        }
        if chomping == 1 {
            s.extend_from_slice(&trailing_breaks);
        }
        let mut t = Token::new(TokenType::Scalar, start, end);
        t.value = s;
        t.style = if literal {
            ScalarStyle::Literal
        } else {
            ScalarStyle::Folded
        };
        Ok(t)
    }

    /// Indentation spaces and empty lines of a block scalar; sets its indentation when not
    /// given (the deepest of the leading empty lines, at least one deeper than the parent).
    fn scan_block_scalar_breaks(
        &mut self,
        indent: &mut usize,
        breaks: &mut Vec<u8>,
        start: Mark,
        end: &mut Mark,
    ) -> R<()> {
        *end = self.mark;
        let mut max_indent = 0usize;
        loop {
            self.cache(1)?;
            while (*indent == 0 || self.mark.column < *indent) && self.is_space(0) {
                self.skip();
                self.cache(1)?;
            }
            max_indent = max_indent.max(self.mark.column);
            if (*indent == 0 || self.mark.column < *indent) && self.is_tab(0) {
                return Err(self.set_scanner_error(
                    "while scanning a block scalar",
                    start,
                    "found a tab character where an indentation space is expected",
                ));
            }
            if !self.is_break(0) {
                break;
            }
            self.cache(2)?;
            self.read_line(breaks);
            *end = self.mark;
        }
        if *indent == 0 {
            *indent = max_indent;
            let min = (self.indent + 1).max(1) as usize;
            if *indent < min {
                *indent = min;
            }
        }
        Ok(())
    }

    fn scan_flow_scalar(&mut self, single: bool) -> R<Token> {
        let start = self.mark;
        self.skip();
        let mut s = Vec::new();
        let mut leading_break = Vec::new();
        let mut trailing_breaks = Vec::new();
        let mut whitespaces = Vec::new();
        loop {
            self.cache(4)?;
            if self.mark.column == 0
                && ((self.at(0) == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                    || (self.at(0) == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
                && self.is_blankz(3)
            {
                return Err(self.set_scanner_error(
                    "while scanning a quoted scalar",
                    start,
                    "found unexpected document indicator",
                ));
            }
            if self.is_z(0) {
                return Err(self.set_scanner_error(
                    "while scanning a quoted scalar",
                    start,
                    "found unexpected end of stream",
                ));
            }
            let mut leading_blanks = false;
            while !self.is_blankz(0) {
                let c = self.at(0);
                if single && c == b'\'' && self.at(1) == b'\'' {
                    s.push(b'\'');
                    self.skip();
                    self.skip();
                } else if (single && c == b'\'') || (!single && c == b'"') {
                    // The closing quote.
                    break;
                } else if !single && c == b'\\' && self.is_break(1) {
                    // An escaped line break.
                    self.cache(3)?;
                    self.skip();
                    self.skip_line();
                    leading_blanks = true;
                    break;
                } else if !single && c == b'\\' {
                    let mut code_length = 0usize;
                    let e = self.at(1);
                    match e {
                        b'0' => s.push(0),
                        b'a' => s.push(0x07),
                        b'b' => s.push(0x08),
                        b't' | b'\t' => s.push(0x09),
                        b'n' => s.push(0x0a),
                        b'v' => s.push(0x0b),
                        b'f' => s.push(0x0c),
                        b'r' => s.push(0x0d),
                        b'e' => s.push(0x1b),
                        b' ' => s.push(0x20),
                        b'"' => s.push(b'"'),
                        b'\'' => s.push(b'\''),
                        b'\\' => s.push(b'\\'),
                        b'N' => s.extend_from_slice(&[0xc2, 0x85]),
                        b'_' => s.extend_from_slice(&[0xc2, 0xa0]),
                        b'L' => s.extend_from_slice(&[0xe2, 0x80, 0xa8]),
                        b'P' => s.extend_from_slice(&[0xe2, 0x80, 0xa9]),
                        b'x' => code_length = 2,
                        b'u' => code_length = 4,
                        b'U' => code_length = 8,
                        _ => {
                            return Err(self.set_scanner_error(
                                "while parsing a quoted scalar",
                                start,
                                "found unknown escape character",
                            ));
                        }
                    }
                    self.skip();
                    self.skip();
                    if code_length > 0 {
                        self.cache(code_length)?;
                        let mut value = 0u32;
                        for k in 0..code_length {
                            if !self.is_hex(k) {
                                return Err(self.set_scanner_error(
                                    "while parsing a quoted scalar",
                                    start,
                                    "did not find expected hexdecimal number",
                                ));
                            }
                            value = (value << 4).wrapping_add(as_hex(self.at(k)));
                        }
                        match char::from_u32(value) {
                            Some(ch) => {
                                let mut tmp = [0u8; 4];
                                s.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
                            }
                            None => {
                                return Err(self.set_scanner_error(
                                    "while parsing a quoted scalar",
                                    start,
                                    "found invalid Unicode character escape code",
                                ));
                            }
                        }
                        for _ in 0..code_length {
                            self.skip();
                        }
                    }
                } else {
                    self.read(&mut s);
                }
                self.cache(2)?;
            }
            self.cache(1)?;
            let c = self.at(0);
            if (single && c == b'\'') || (!single && c == b'"') {
                break;
            }
            // Blanks and line breaks inside the scalar.
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if !leading_blanks {
                        self.read(&mut whitespaces);
                    } else {
                        self.skip();
                    }
                } else {
                    self.cache(2)?;
                    if !leading_blanks {
                        whitespaces.clear();
                        self.read_line(&mut leading_break);
                        leading_blanks = true;
                    } else {
                        self.read_line(&mut trailing_breaks);
                    }
                }
                self.cache(1)?;
            }
            if leading_blanks {
                if leading_break.first() == Some(&b'\n') {
                    if trailing_breaks.is_empty() {
                        s.push(b' ');
                    } else {
                        s.extend_from_slice(&trailing_breaks);
                    }
                } else {
                    s.extend_from_slice(&leading_break);
                    s.extend_from_slice(&trailing_breaks);
                }
                trailing_breaks.clear();
                leading_break.clear();
            } else {
                s.extend_from_slice(&whitespaces);
                whitespaces.clear();
            }
        }
        self.skip();
        let mut t = Token::new(TokenType::Scalar, start, self.mark);
        t.value = s;
        t.style = if single {
            ScalarStyle::SingleQuoted
        } else {
            ScalarStyle::DoubleQuoted
        };
        Ok(t)
    }

    fn scan_plain_scalar(&mut self) -> R<Token> {
        let mut s = Vec::new();
        let mut leading_break = Vec::new();
        let mut trailing_breaks = Vec::new();
        let mut whitespaces = Vec::new();
        let mut leading_blanks = false;
        let indent = self.indent + 1;
        let start = self.mark;
        let mut end = self.mark;
        loop {
            self.cache(4)?;
            if self.mark.column == 0
                && ((self.at(0) == b'-' && self.at(1) == b'-' && self.at(2) == b'-')
                    || (self.at(0) == b'.' && self.at(1) == b'.' && self.at(2) == b'.'))
                && self.is_blankz(3)
            {
                break;
            }
            if self.at(0) == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                if (c == b':' && self.is_blankz(1))
                    || (self.flow_level > 0 && matches!(c, b',' | b'?' | b'[' | b']' | b'{' | b'}'))
                {
                    break;
                }
                if leading_blanks || !whitespaces.is_empty() {
                    if leading_blanks {
                        if leading_break.first() == Some(&b'\n') {
                            if trailing_breaks.is_empty() {
                                s.push(b' ');
                            } else {
                                s.extend_from_slice(&trailing_breaks);
                            }
                        } else {
                            s.extend_from_slice(&leading_break);
                            s.extend_from_slice(&trailing_breaks);
                        }
                        trailing_breaks.clear();
                        leading_break.clear();
                        leading_blanks = false;
                    } else {
                        s.extend_from_slice(&whitespaces);
                        whitespaces.clear();
                    }
                }
                self.read(&mut s);
                end = self.mark;
                self.cache(2)?;
            }
            if !(self.is_blank(0) || self.is_break(0)) {
                break;
            }
            self.cache(1)?;
            while self.is_blank(0) || self.is_break(0) {
                if self.is_blank(0) {
                    if leading_blanks && (self.mark.column as isize) < indent && self.is_tab(0) {
                        return Err(self.set_scanner_error(
                            "while scanning a plain scalar",
                            start,
                            "found a tab character that violates indentation",
                        ));
                    }
                    if !leading_blanks {
                        self.read(&mut whitespaces);
                    } else {
                        self.skip();
                    }
                } else {
                    self.cache(2)?;
                    if !leading_blanks {
                        whitespaces.clear();
                        self.read_line(&mut leading_break);
                        leading_blanks = true;
                    } else {
                        self.read_line(&mut trailing_breaks);
                    }
                }
                self.cache(1)?;
            }
            if self.flow_level == 0 && (self.mark.column as isize) < indent {
                break;
            }
        }
        let mut t = Token::new(TokenType::Scalar, start, end);
        t.value = s;
        t.style = ScalarStyle::Plain;
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        Ok(t)
    }
}
