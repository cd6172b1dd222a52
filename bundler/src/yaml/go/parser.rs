//! go-yaml v2's parser (`parserc.go`): tokens to events, a state machine over the grammar
//! below. Each function is the Go one of the same name, so errors carry go-yaml's problem and
//! context marks.
//!
//! ```text
//! stream               ::= STREAM-START implicit_document? explicit_document* STREAM-END
//! implicit_document    ::= block_node DOCUMENT-END*
//! explicit_document    ::= DIRECTIVE* DOCUMENT-START block_node? DOCUMENT-END*
//! block_node           ::= ALIAS | properties block_content? | block_content
//! flow_node            ::= ALIAS | properties flow_content? | flow_content
//! properties           ::= TAG ANCHOR? | ANCHOR TAG?
//! block_sequence       ::= BLOCK-SEQUENCE-START (BLOCK-ENTRY block_node?)* BLOCK-END
//! indentless_sequence  ::= (BLOCK-ENTRY block_node?)+
//! block_mapping        ::= BLOCK-MAPPING_START ((KEY block_node_or_indentless_sequence?)?
//!                          (VALUE block_node_or_indentless_sequence?)?)* BLOCK-END
//! flow_sequence        ::= FLOW-SEQUENCE-START (flow_sequence_entry FLOW-ENTRY)*
//!                          flow_sequence_entry? FLOW-SEQUENCE-END
//! flow_mapping         ::= FLOW-MAPPING-START (flow_mapping_entry FLOW-ENTRY)*
//!                          flow_mapping_entry? FLOW-MAPPING-END
//! ```

use super::scanner::{ErrorKind, Mark, Problem, R, ScalarStyle, Scanner, Stop, TokenType};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    None,
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias,
    Scalar,
    SequenceStart,
    SequenceEnd,
    MappingStart,
    MappingEnd,
}

#[derive(Debug, Clone)]
pub struct Event {
    pub typ: EventType,
    pub start: Mark,
    #[allow(dead_code)] // go-yaml records it; nothing downstream reads it
    pub end: Mark,
    pub anchor: Vec<u8>,
    pub tag: Vec<u8>,
    pub value: Vec<u8>,
    /// For scalars: plain without a tag, or tagged `!` (go-yaml's `implicit`).
    pub implicit: bool,
    pub style: ScalarStyle,
}

impl Event {
    fn new(typ: EventType, start: Mark, end: Mark) -> Event {
        Event {
            typ,
            start,
            end,
            anchor: Vec::new(),
            tag: Vec::new(),
            value: Vec::new(),
            implicit: false,
            style: ScalarStyle::Any,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    StreamStart,
    ImplicitDocumentStart,
    DocumentStart,
    DocumentContent,
    DocumentEnd,
    BlockNode,
    BlockSequenceFirstEntry,
    BlockSequenceEntry,
    IndentlessSequenceEntry,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingValue,
    FlowSequenceFirstEntry,
    FlowSequenceEntry,
    FlowSequenceEntryMappingKey,
    FlowSequenceEntryMappingValue,
    FlowSequenceEntryMappingEnd,
    FlowMappingFirstKey,
    FlowMappingKey,
    FlowMappingValue,
    FlowMappingEmptyValue,
    End,
}

struct TagDirective {
    handle: Vec<u8>,
    prefix: Vec<u8>,
}

pub struct Parser {
    pub scanner: Scanner,
    state: State,
    states: Vec<State>,
    marks: Vec<Mark>,
    tag_directives: Vec<TagDirective>,
}

impl Parser {
    pub fn new(raw: &[u8]) -> Parser {
        Parser {
            scanner: Scanner::new(raw),
            state: State::StreamStart,
            states: Vec::new(),
            marks: Vec::new(),
            tag_directives: Vec::new(),
        }
    }

    /// The error recorded when a step returned [`Stop`].
    pub fn problem(&self) -> &Problem {
        &self.scanner.problem
    }

    /// The next event (`yaml_parser_parse`); after the end, an event of type `None`.
    pub fn parse(&mut self) -> R<Event> {
        if self.scanner.stream_end_produced || self.state == State::End {
            let m = self.scanner.mark;
            return Ok(Event::new(EventType::None, m, m));
        }
        self.state_machine()
    }

    fn set_parser_error(&mut self, problem: &str, problem_mark: Mark) -> Stop {
        self.scanner.problem = Problem {
            kind: ErrorKind::Parser,
            problem: problem.to_string(),
            problem_mark,
            ..Problem::default()
        };
        Stop
    }

    fn set_parser_error_context(
        &mut self,
        context: &'static str,
        context_mark: Mark,
        problem: &str,
        problem_mark: Mark,
    ) -> Stop {
        self.scanner.problem = Problem {
            kind: ErrorKind::Parser,
            problem: problem.to_string(),
            problem_mark,
            context,
            context_mark,
            offset: 0,
        };
        Stop
    }

    fn pop_state(&mut self) {
        self.state = self.states.pop().unwrap_or(State::End);
    }

    fn state_machine(&mut self) -> R<Event> {
        match self.state {
            State::StreamStart => self.parse_stream_start(),
            State::ImplicitDocumentStart => self.parse_document_start(true),
            State::DocumentStart => self.parse_document_start(false),
            State::DocumentContent => self.parse_document_content(),
            State::DocumentEnd => self.parse_document_end(),
            State::BlockNode => self.parse_node(true, false),
            State::BlockSequenceFirstEntry => self.parse_block_sequence_entry(true),
            State::BlockSequenceEntry => self.parse_block_sequence_entry(false),
            State::IndentlessSequenceEntry => self.parse_indentless_sequence_entry(),
            State::BlockMappingFirstKey => self.parse_block_mapping_key(true),
            State::BlockMappingKey => self.parse_block_mapping_key(false),
            State::BlockMappingValue => self.parse_block_mapping_value(),
            State::FlowSequenceFirstEntry => self.parse_flow_sequence_entry(true),
            State::FlowSequenceEntry => self.parse_flow_sequence_entry(false),
            State::FlowSequenceEntryMappingKey => self.parse_flow_sequence_entry_mapping_key(),
            State::FlowSequenceEntryMappingValue => self.parse_flow_sequence_entry_mapping_value(),
            State::FlowSequenceEntryMappingEnd => self.parse_flow_sequence_entry_mapping_end(),
            State::FlowMappingFirstKey => self.parse_flow_mapping_key(true),
            State::FlowMappingKey => self.parse_flow_mapping_key(false),
            State::FlowMappingValue => self.parse_flow_mapping_value(false),
            State::FlowMappingEmptyValue => self.parse_flow_mapping_value(true),
            State::End => {
                let m = self.scanner.mark;
                Ok(Event::new(EventType::None, m, m))
            }
        }
    }

    /// The type and marks of the next token.
    fn peek(&mut self) -> R<(TokenType, Mark, Mark)> {
        let t = self.scanner.peek_token()?;
        Ok((t.typ, t.start, t.end))
    }

    fn parse_stream_start(&mut self) -> R<Event> {
        let (typ, start, end) = self.peek()?;
        if typ != TokenType::StreamStart {
            return Err(self.set_parser_error("did not find expected <stream-start>", start));
        }
        self.state = State::ImplicitDocumentStart;
        self.scanner.skip_token();
        Ok(Event::new(EventType::StreamStart, start, end))
    }

    fn parse_document_start(&mut self, implicit: bool) -> R<Event> {
        let (mut typ, mut start, mut end) = self.peek()?;
        if !implicit {
            while typ == TokenType::DocumentEnd {
                self.scanner.skip_token();
                (typ, start, end) = self.peek()?;
            }
        }
        if implicit
            && !matches!(
                typ,
                TokenType::VersionDirective
                    | TokenType::TagDirective
                    | TokenType::DocumentStart
                    | TokenType::StreamEnd
            )
        {
            self.process_directives()?;
            self.states.push(State::DocumentEnd);
            self.state = State::BlockNode;
            return Ok(Event::new(EventType::DocumentStart, start, end));
        }
        if typ != TokenType::StreamEnd {
            let doc_start = start;
            self.process_directives()?;
            let (typ, start, end) = self.peek()?;
            if typ != TokenType::DocumentStart {
                return Err(self.set_parser_error("did not find expected <document start>", start));
            }
            self.states.push(State::DocumentEnd);
            self.state = State::DocumentContent;
            self.scanner.skip_token();
            return Ok(Event::new(EventType::DocumentStart, doc_start, end));
        }
        self.state = State::End;
        self.scanner.skip_token();
        Ok(Event::new(EventType::StreamEnd, start, end))
    }

    fn parse_document_content(&mut self) -> R<Event> {
        let (typ, start, _) = self.peek()?;
        if matches!(
            typ,
            TokenType::VersionDirective
                | TokenType::TagDirective
                | TokenType::DocumentStart
                | TokenType::DocumentEnd
                | TokenType::StreamEnd
        ) {
            self.pop_state();
            return Ok(empty_scalar(start));
        }
        self.parse_node(true, false)
    }

    fn parse_document_end(&mut self) -> R<Event> {
        let (typ, start, end) = self.peek()?;
        let mut end_mark = start;
        if typ == TokenType::DocumentEnd {
            end_mark = end;
            self.scanner.skip_token();
        }
        self.tag_directives.clear();
        self.state = State::DocumentStart;
        Ok(Event::new(EventType::DocumentEnd, start, end_mark))
    }

    fn parse_node(&mut self, block: bool, indentless_sequence: bool) -> R<Event> {
        let (typ, tok_start, tok_end) = self.peek()?;
        if typ == TokenType::Alias {
            self.pop_state();
            let t = self.scanner.take_token();
            let mut e = Event::new(EventType::Alias, t.start, t.end);
            e.anchor = t.value;
            return Ok(e);
        }
        let mut start = tok_start;
        let mut end = tok_start;
        let mut tag_token = false;
        let (mut tag_handle, mut tag_suffix, mut anchor) = (Vec::new(), Vec::new(), Vec::new());
        let mut tag_mark = Mark::default();
        let mut typ = typ;
        let _ = tok_end;
        if typ == TokenType::Anchor {
            let t = self.scanner.take_token();
            anchor = t.value;
            start = t.start;
            end = t.end;
            typ = self.peek()?.0;
            if typ == TokenType::Tag {
                let t = self.scanner.take_token();
                tag_token = true;
                tag_handle = t.value;
                tag_suffix = t.suffix;
                tag_mark = t.start;
                end = t.end;
                typ = self.peek()?.0;
            }
        } else if typ == TokenType::Tag {
            let t = self.scanner.take_token();
            tag_token = true;
            tag_handle = t.value;
            tag_suffix = t.suffix;
            start = t.start;
            tag_mark = t.start;
            end = t.end;
            typ = self.peek()?.0;
            if typ == TokenType::Anchor {
                let t = self.scanner.take_token();
                anchor = t.value;
                end = t.end;
                typ = self.peek()?.0;
            }
        }

        let mut tag = Vec::new();
        if tag_token {
            if tag_handle.is_empty() {
                tag = tag_suffix;
            } else {
                if let Some(d) = self.tag_directives.iter().find(|d| d.handle == tag_handle) {
                    tag.extend_from_slice(&d.prefix);
                    tag.extend_from_slice(&tag_suffix);
                }
                if tag.is_empty() {
                    return Err(self.set_parser_error_context(
                        "while parsing a node",
                        start,
                        "found undefined tag handle",
                        tag_mark,
                    ));
                }
            }
        }

        let (_, tok_start, tok_end) = self.peek()?;
        let implicit = tag.is_empty();
        if indentless_sequence && typ == TokenType::BlockEntry {
            end = tok_end;
            self.state = State::IndentlessSequenceEntry;
            return Ok(collection(
                EventType::SequenceStart,
                start,
                end,
                anchor,
                tag,
                implicit,
            ));
        }
        if typ == TokenType::Scalar {
            let t = self.scanner.take_token();
            let plain_implicit =
                (tag.is_empty() && t.style == ScalarStyle::Plain) || tag.as_slice() == b"!";
            self.pop_state();
            let mut e = Event::new(EventType::Scalar, start, t.end);
            e.anchor = anchor;
            e.tag = tag;
            e.value = t.value;
            e.implicit = plain_implicit;
            e.style = t.style;
            return Ok(e);
        }
        if typ == TokenType::FlowSequenceStart {
            self.state = State::FlowSequenceFirstEntry;
            return Ok(collection(
                EventType::SequenceStart,
                start,
                tok_end,
                anchor,
                tag,
                implicit,
            ));
        }
        if typ == TokenType::FlowMappingStart {
            self.state = State::FlowMappingFirstKey;
            return Ok(collection(
                EventType::MappingStart,
                start,
                tok_end,
                anchor,
                tag,
                implicit,
            ));
        }
        if block && typ == TokenType::BlockSequenceStart {
            self.state = State::BlockSequenceFirstEntry;
            return Ok(collection(
                EventType::SequenceStart,
                start,
                tok_end,
                anchor,
                tag,
                implicit,
            ));
        }
        if block && typ == TokenType::BlockMappingStart {
            self.state = State::BlockMappingFirstKey;
            return Ok(collection(
                EventType::MappingStart,
                start,
                tok_end,
                anchor,
                tag,
                implicit,
            ));
        }
        if !anchor.is_empty() || !tag.is_empty() {
            // Properties without content: an empty plain scalar.
            self.pop_state();
            let mut e = Event::new(EventType::Scalar, start, end);
            e.anchor = anchor;
            e.tag = tag;
            e.implicit = implicit;
            e.style = ScalarStyle::Plain;
            return Ok(e);
        }
        let context = if block {
            "while parsing a block node"
        } else {
            "while parsing a flow node"
        };
        Err(self.set_parser_error_context(
            context,
            start,
            "did not find expected node content",
            tok_start,
        ))
    }

    fn parse_block_sequence_entry(&mut self, first: bool) -> R<Event> {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.scanner.skip_token();
        }
        let (typ, start, end) = self.peek()?;
        if typ == TokenType::BlockEntry {
            let mark = end;
            self.scanner.skip_token();
            let (typ, _, _) = self.peek()?;
            if typ != TokenType::BlockEntry && typ != TokenType::BlockEnd {
                self.states.push(State::BlockSequenceEntry);
                return self.parse_node(true, false);
            }
            self.state = State::BlockSequenceEntry;
            return Ok(empty_scalar(mark));
        }
        if typ == TokenType::BlockEnd {
            self.pop_state();
            self.marks.pop();
            self.scanner.skip_token();
            return Ok(Event::new(EventType::SequenceEnd, start, end));
        }
        let context_mark = self.marks.pop().unwrap_or_default();
        Err(self.set_parser_error_context(
            "while parsing a block collection",
            context_mark,
            "did not find expected '-' indicator",
            start,
        ))
    }

    fn parse_indentless_sequence_entry(&mut self) -> R<Event> {
        let (typ, start, end) = self.peek()?;
        if typ == TokenType::BlockEntry {
            let mark = end;
            self.scanner.skip_token();
            let (typ, _, _) = self.peek()?;
            if !matches!(
                typ,
                TokenType::BlockEntry | TokenType::Key | TokenType::Value | TokenType::BlockEnd
            ) {
                self.states.push(State::IndentlessSequenceEntry);
                return self.parse_node(true, false);
            }
            self.state = State::IndentlessSequenceEntry;
            return Ok(empty_scalar(mark));
        }
        self.pop_state();
        Ok(Event::new(EventType::SequenceEnd, start, start))
    }

    fn parse_block_mapping_key(&mut self, first: bool) -> R<Event> {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.scanner.skip_token();
        }
        let (typ, start, end) = self.peek()?;
        if typ == TokenType::Key {
            let mark = end;
            self.scanner.skip_token();
            let (typ, _, _) = self.peek()?;
            if !matches!(typ, TokenType::Key | TokenType::Value | TokenType::BlockEnd) {
                self.states.push(State::BlockMappingValue);
                return self.parse_node(true, true);
            }
            self.state = State::BlockMappingValue;
            return Ok(empty_scalar(mark));
        }
        if typ == TokenType::BlockEnd {
            self.pop_state();
            self.marks.pop();
            self.scanner.skip_token();
            return Ok(Event::new(EventType::MappingEnd, start, end));
        }
        let context_mark = self.marks.pop().unwrap_or_default();
        Err(self.set_parser_error_context(
            "while parsing a block mapping",
            context_mark,
            "did not find expected key",
            start,
        ))
    }

    fn parse_block_mapping_value(&mut self) -> R<Event> {
        let (typ, start, end) = self.peek()?;
        if typ == TokenType::Value {
            let mark = end;
            self.scanner.skip_token();
            let (typ, _, _) = self.peek()?;
            if !matches!(typ, TokenType::Key | TokenType::Value | TokenType::BlockEnd) {
                self.states.push(State::BlockMappingKey);
                return self.parse_node(true, true);
            }
            self.state = State::BlockMappingKey;
            return Ok(empty_scalar(mark));
        }
        self.state = State::BlockMappingKey;
        Ok(empty_scalar(start))
    }

    fn parse_flow_sequence_entry(&mut self, first: bool) -> R<Event> {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.scanner.skip_token();
        }
        let (mut typ, mut start, mut end) = self.peek()?;
        if typ != TokenType::FlowSequenceEnd {
            if !first {
                if typ == TokenType::FlowEntry {
                    self.scanner.skip_token();
                    (typ, start, end) = self.peek()?;
                } else {
                    let context_mark = self.marks.pop().unwrap_or_default();
                    return Err(self.set_parser_error_context(
                        "while parsing a flow sequence",
                        context_mark,
                        "did not find expected ',' or ']'",
                        start,
                    ));
                }
            }
            if typ == TokenType::Key {
                self.state = State::FlowSequenceEntryMappingKey;
                let mut e = Event::new(EventType::MappingStart, start, end);
                e.implicit = true;
                self.scanner.skip_token();
                return Ok(e);
            } else if typ != TokenType::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntry);
                return self.parse_node(false, false);
            }
        }
        self.pop_state();
        self.marks.pop();
        self.scanner.skip_token();
        Ok(Event::new(EventType::SequenceEnd, start, end))
    }

    fn parse_flow_sequence_entry_mapping_key(&mut self) -> R<Event> {
        let (typ, _, end) = self.peek()?;
        if !matches!(
            typ,
            TokenType::Value | TokenType::FlowEntry | TokenType::FlowSequenceEnd
        ) {
            self.states.push(State::FlowSequenceEntryMappingValue);
            return self.parse_node(false, false);
        }
        let mark = end;
        self.scanner.skip_token();
        self.state = State::FlowSequenceEntryMappingValue;
        Ok(empty_scalar(mark))
    }

    fn parse_flow_sequence_entry_mapping_value(&mut self) -> R<Event> {
        let (typ, start, _) = self.peek()?;
        if typ == TokenType::Value {
            self.scanner.skip_token();
            let (typ, _, _) = self.peek()?;
            if typ != TokenType::FlowEntry && typ != TokenType::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntryMappingEnd);
                return self.parse_node(false, false);
            }
        }
        self.state = State::FlowSequenceEntryMappingEnd;
        Ok(empty_scalar(start))
    }

    fn parse_flow_sequence_entry_mapping_end(&mut self) -> R<Event> {
        let (_, start, _) = self.peek()?;
        self.state = State::FlowSequenceEntry;
        Ok(Event::new(EventType::MappingEnd, start, start))
    }

    fn parse_flow_mapping_key(&mut self, first: bool) -> R<Event> {
        if first {
            let (_, start, _) = self.peek()?;
            self.marks.push(start);
            self.scanner.skip_token();
        }
        let (mut typ, mut start, mut end) = self.peek()?;
        if typ != TokenType::FlowMappingEnd {
            if !first {
                if typ == TokenType::FlowEntry {
                    self.scanner.skip_token();
                    (typ, start, end) = self.peek()?;
                } else {
                    let context_mark = self.marks.pop().unwrap_or_default();
                    return Err(self.set_parser_error_context(
                        "while parsing a flow mapping",
                        context_mark,
                        "did not find expected ',' or '}'",
                        start,
                    ));
                }
            }
            if typ == TokenType::Key {
                self.scanner.skip_token();
                let (typ, start, _) = self.peek()?;
                if !matches!(
                    typ,
                    TokenType::Value | TokenType::FlowEntry | TokenType::FlowMappingEnd
                ) {
                    self.states.push(State::FlowMappingValue);
                    return self.parse_node(false, false);
                }
                self.state = State::FlowMappingValue;
                return Ok(empty_scalar(start));
            } else if typ != TokenType::FlowMappingEnd {
                self.states.push(State::FlowMappingEmptyValue);
                return self.parse_node(false, false);
            }
        }
        self.pop_state();
        self.marks.pop();
        self.scanner.skip_token();
        Ok(Event::new(EventType::MappingEnd, start, end))
    }

    fn parse_flow_mapping_value(&mut self, empty: bool) -> R<Event> {
        let (typ, start, _) = self.peek()?;
        if empty {
            self.state = State::FlowMappingKey;
            return Ok(empty_scalar(start));
        }
        if typ == TokenType::Value {
            self.scanner.skip_token();
            let (typ, start, _) = self.peek()?;
            if typ != TokenType::FlowEntry && typ != TokenType::FlowMappingEnd {
                self.states.push(State::FlowMappingKey);
                return self.parse_node(false, false);
            }
            self.state = State::FlowMappingKey;
            return Ok(empty_scalar(start));
        }
        self.state = State::FlowMappingKey;
        Ok(empty_scalar(start))
    }

    /// `%YAML` and `%TAG` directives before a document; only version 1.1 is accepted.
    fn process_directives(&mut self) -> R<()> {
        let mut version_seen = false;
        let mut tag_directives = Vec::new();
        loop {
            let (typ, start, _) = self.peek()?;
            match typ {
                TokenType::VersionDirective => {
                    if version_seen {
                        return Err(self.set_parser_error("found duplicate %YAML directive", start));
                    }
                    let t = self.scanner.peek_token()?;
                    if t.major != 1 || t.minor != 1 {
                        return Err(
                            self.set_parser_error("found incompatible YAML document", start)
                        );
                    }
                    version_seen = true;
                }
                TokenType::TagDirective => {
                    let t = self.scanner.peek_token()?;
                    let value = TagDirective {
                        handle: t.value.clone(),
                        prefix: t.prefix.clone(),
                    };
                    if self.tag_directives.iter().any(|d| d.handle == value.handle) {
                        return Err(self.set_parser_error("found duplicate %TAG directive", start));
                    }
                    tag_directives.push(TagDirective {
                        handle: value.handle.clone(),
                        prefix: value.prefix.clone(),
                    });
                    self.tag_directives.push(value);
                }
                _ => break,
            }
            self.scanner.skip_token();
        }
        let _ = tag_directives;
        for (handle, prefix) in [(&b"!"[..], &b"!"[..]), (b"!!", b"tag:yaml.org,2002:")] {
            if !self.tag_directives.iter().any(|d| d.handle == handle) {
                self.tag_directives.push(TagDirective {
                    handle: handle.to_vec(),
                    prefix: prefix.to_vec(),
                });
            }
        }
        Ok(())
    }
}

fn empty_scalar(mark: Mark) -> Event {
    let mut e = Event::new(EventType::Scalar, mark, mark);
    e.implicit = true;
    e.style = ScalarStyle::Plain;
    e
}

fn collection(
    typ: EventType,
    start: Mark,
    end: Mark,
    anchor: Vec<u8>,
    tag: Vec<u8>,
    implicit: bool,
) -> Event {
    let mut e = Event::new(typ, start, end);
    e.anchor = anchor;
    e.tag = tag;
    e.implicit = implicit;
    e
}
