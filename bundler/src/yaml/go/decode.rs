//! go-yaml v2's `decode.go` for a target of type `interface{}`: events to a node tree (with
//! anchors, unknown aliases failing at once), then the tree to Go values: YAML 1.1 typing,
//! `<<` merges (a merge overrides keys set before it; in `<<: [*a, *b]` the earlier map wins),
//! the last value of a repeated key, the guard against alias bombs, and the errors go-yaml
//! reports for each.

use std::collections::HashMap;

use super::parser::{EventType, Parser};
use super::resolve::{self, Resolved};
use super::scanner::{ErrorKind, Mark, Problem};
use super::value::{GoMap, GoValue, go_string};

/// Nesting deeper than this is refused. go-yaml allows 10000 flow levels and 10000
/// indentation levels; trees that deep exhaust the stack of the code that walks them, so
/// hostile input is stopped well before (real manifests nest a few dozen levels).
pub const MAX_DEPTH: usize = 512;

/// A go-yaml failure: its message (without the `yaml: ` prefix) and where, when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub message: String,
    /// Line and column (from 0) in the chunk.
    pub mark: Option<(usize, usize)>,
}

impl Failure {
    fn new(message: impl Into<String>, mark: Option<Mark>) -> Failure {
        Failure {
            message: message.into(),
            mark: mark.map(|m| (m.line, m.column)),
        }
    }

    /// go-yaml's `parser.fail()`: the line it names is the problem's (one more for the
    /// scanner, which has not counted it yet), else the context's; none for line 0.
    fn from_problem(p: &Problem, scanner_mark: Mark) -> Failure {
        let mut line = 0;
        if p.problem_mark.line != 0 {
            line = p.problem_mark.line;
            if p.kind == ErrorKind::Scanner {
                line += 1;
            }
        } else if p.context_mark.line != 0 {
            line = p.context_mark.line;
        }
        let place = if line != 0 {
            format!("line {line}: ")
        } else {
            String::new()
        };
        let msg = if p.problem.is_empty() {
            "unknown problem parsing YAML content"
        } else {
            &p.problem
        };
        // Where olm points: the construct go-yaml was reading when it has one (the key that
        // lacks its `:`, the `[` never closed), else the problem itself.
        let mark = match p.kind {
            ErrorKind::Reader => scanner_mark,
            _ if !p.context.is_empty() => p.context_mark,
            _ => p.problem_mark,
        };
        Failure::new(format!("{place}{msg}"), Some(mark))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Document,
    Mapping,
    Sequence,
    Scalar,
    Alias,
}

#[derive(Debug)]
struct Node {
    kind: Kind,
    line: usize,
    column: usize,
    tag: String,
    value: String,
    implicit: bool,
    children: Vec<usize>,
    /// For an alias: the node it names.
    alias: usize,
}

/// A key given twice in one mapping: its line (from 0 in the chunk) and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repeat {
    pub line: usize,
    pub key: String,
}

/// The first document of `chunk` decoded as go-yaml's `yaml.Unmarshal(chunk, &iface)` does,
/// with the repeated keys found on the way.
pub fn unmarshal(chunk: &[u8]) -> Result<(GoValue, Vec<Repeat>), Failure> {
    // go-yaml reads an empty input as a line feed.
    let chunk = if chunk.is_empty() { b"\n" } else { chunk };
    let mut c = Composer {
        parser: Parser::new(chunk),
        peeked: None,
        nodes: Vec::new(),
        anchors: HashMap::new(),
    };
    let Some(root) = c.document()? else {
        return Ok((GoValue::Nil, Vec::new()));
    };
    let mut d = Decoder {
        nodes: &c.nodes,
        active: vec![false; c.nodes.len()],
        decode_count: 0,
        alias_count: 0,
        alias_depth: 0,
        alias_bytes: 0,
        depth: 0,
        repeats: Vec::new(),
    };
    let v = d.unmarshal(root)?;
    Ok((v, d.repeats))
}

/// Where the value at `path` (mapping keys and sequence indices from the top) is written in
/// `chunk`: the line and column (from 0) of its key, or of the item. For messages about a
/// decoded document; `None` when the path does not lead to a node.
pub fn line_of(chunk: &[u8], path: &[String]) -> Option<(usize, usize)> {
    let mut c = Composer {
        parser: Parser::new(if chunk.is_empty() { b"\n" } else { chunk }),
        peeked: None,
        nodes: Vec::new(),
        anchors: HashMap::new(),
    };
    let doc = c.document().ok()??;
    let mut n = *c.nodes[doc].children.first()?;
    let mut at = (c.nodes[n].line, c.nodes[n].column);
    for seg in path {
        while c.nodes[n].kind == Kind::Alias {
            n = c.nodes[n].alias;
        }
        let node = &c.nodes[n];
        let (key, value) = match node.kind {
            Kind::Sequence => {
                let i: usize = seg.parse().ok()?;
                let item = *node.children.get(i)?;
                (item, item)
            }
            Kind::Mapping => {
                // The last key that reads as `seg` (the last value wins).
                let pair = node.children.chunks(2).rev().find(|p| {
                    let k = &c.nodes[p[0]];
                    k.kind == Kind::Scalar && scalar_key(k).is_some_and(|(_, text)| &text == seg)
                })?;
                (pair[0], *pair.get(1)?)
            }
            _ => return None,
        };
        at = (c.nodes[key].line, c.nodes[key].column);
        n = value;
    }
    Some(at)
}

struct Composer {
    parser: Parser,
    peeked: Option<super::parser::Event>,
    nodes: Vec<Node>,
    anchors: HashMap<Vec<u8>, usize>,
}

/// An open collection while composing.
struct Open {
    node: usize,
    end: EventType,
}

impl Composer {
    fn fail(&self) -> Failure {
        Failure::from_problem(self.parser.problem(), self.parser.scanner.mark)
    }

    fn peek(&mut self) -> Result<EventType, Failure> {
        if self.peeked.is_none() {
            let e = self.parser.parse().map_err(|_| self.fail())?;
            self.peeked = Some(e);
        }
        Ok(self.peeked.as_ref().map_or(EventType::None, |e| e.typ))
    }

    fn take(&mut self) -> Result<super::parser::Event, Failure> {
        self.peek()?;
        Ok(self.peeked.take().expect("peeked"))
    }

    /// Consumes an event of type `want` (go-yaml's `expect`).
    fn expect(&mut self, want: EventType) -> Result<super::parser::Event, Failure> {
        let e = self.take()?;
        if e.typ == EventType::StreamEnd {
            return Err(Failure::new(
                "attempted to go past the end of stream; corrupted value?",
                None,
            ));
        }
        if e.typ != want {
            return Err(Failure::new(
                format!("expected {want:?} event but got {:?}", e.typ),
                Some(e.start),
            ));
        }
        Ok(e)
    }

    fn push(&mut self, kind: Kind, start: Mark) -> usize {
        self.nodes.push(Node {
            kind,
            line: start.line,
            column: start.column,
            tag: String::new(),
            value: String::new(),
            implicit: false,
            children: Vec::new(),
            alias: 0,
        });
        self.nodes.len() - 1
    }

    fn anchor(&mut self, node: usize, anchor: Vec<u8>) {
        if !anchor.is_empty() {
            self.anchors.insert(anchor, node);
        }
    }

    /// `p.parse()` at the top: the stream start, then the first document (or none).
    fn document(&mut self) -> Result<Option<usize>, Failure> {
        self.expect(EventType::StreamStart)?;
        match self.peek()? {
            EventType::StreamEnd => return Ok(None),
            EventType::DocumentStart => {}
            other => {
                return Err(Failure::new(
                    format!("attempted to parse unknown event: {other:?}"),
                    None,
                ));
            }
        }
        let start = self.take()?.start;
        let doc = self.push(Kind::Document, start);
        let root = self.node()?;
        self.nodes[doc].children.push(root);
        self.expect(EventType::DocumentEnd)?;
        Ok(Some(doc))
    }

    /// One node and everything in it, without recursion (nesting may be deep).
    fn node(&mut self) -> Result<usize, Failure> {
        let mut stack: Vec<Open> = Vec::new();
        loop {
            let typ = self.peek()?;
            let done = match typ {
                EventType::Scalar => {
                    let e = self.take()?;
                    let n = self.push(Kind::Scalar, e.start);
                    let node = &mut self.nodes[n];
                    node.value = go_string(e.value);
                    node.tag = go_string(e.tag);
                    node.implicit = e.implicit;
                    self.anchor(n, e.anchor);
                    Some(n)
                }
                EventType::Alias => {
                    let e = self.take()?;
                    let name = go_string(e.anchor.clone());
                    let Some(&target) = self.anchors.get(&e.anchor) else {
                        return Err(Failure::new(
                            format!("unknown anchor '{name}' referenced"),
                            Some(e.start),
                        ));
                    };
                    let n = self.push(Kind::Alias, e.start);
                    self.nodes[n].value = name;
                    self.nodes[n].alias = target;
                    Some(n)
                }
                EventType::MappingStart | EventType::SequenceStart => {
                    let e = self.take()?;
                    let (kind, end) = if typ == EventType::MappingStart {
                        (Kind::Mapping, EventType::MappingEnd)
                    } else {
                        (Kind::Sequence, EventType::SequenceEnd)
                    };
                    let n = self.push(kind, e.start);
                    self.nodes[n].tag = go_string(e.tag);
                    self.anchor(n, e.anchor);
                    if stack.len() >= MAX_DEPTH {
                        return Err(self.drain(e.start));
                    }
                    stack.push(Open { node: n, end });
                    None
                }
                EventType::MappingEnd | EventType::SequenceEnd
                    if stack.last().is_some_and(|o| o.end == typ) =>
                {
                    self.take()?;
                    stack.pop().map(|o| o.node)
                }
                other => {
                    return Err(Failure::new(
                        format!("attempted to parse unknown event: {other:?}"),
                        None,
                    ));
                }
            };
            if let Some(n) = done {
                match stack.last() {
                    Some(open) => {
                        let parent = open.node;
                        self.nodes[parent].children.push(n);
                    }
                    None => return Ok(n),
                }
            }
        }
    }
}

impl Composer {
    /// Past [`MAX_DEPTH`]: reads on to the end of the document without building it, so that
    /// input go-yaml refuses anyway (too deep for its scanner too, or broken further on)
    /// gets go-yaml's error; only a document Go would read gets olm's limit.
    fn drain(&mut self, at: Mark) -> Failure {
        let mut open = 1usize;
        let mut anchors: std::collections::HashSet<Vec<u8>> = Default::default();
        while open > 0 {
            let e = match self.take() {
                Ok(e) => e,
                Err(f) => return f,
            };
            match e.typ {
                EventType::MappingStart | EventType::SequenceStart => open += 1,
                EventType::MappingEnd | EventType::SequenceEnd => open -= 1,
                EventType::Alias
                    if !self.anchors.contains_key(&e.anchor) && !anchors.contains(&e.anchor) =>
                {
                    let name = go_string(e.anchor);
                    return Failure::new(
                        format!("unknown anchor '{name}' referenced"),
                        Some(e.start),
                    );
                }
                EventType::StreamEnd | EventType::None => break,
                _ => {}
            }
            if !e.anchor.is_empty() && e.typ != EventType::Alias {
                anchors.insert(e.anchor);
            }
        }
        too_deep(at)
    }
}

fn too_deep(at: Mark) -> Failure {
    Failure::new(
        format!(
            "nesting deeper than {MAX_DEPTH} levels (olm's limit against exhausting the stack)"
        ),
        Some(at),
    )
}

/// Above 400000 decoded nodes the share that may come from aliases shrinks from 99% to 10%
/// (at 4000000), bounding what a small document can expand to (`allowedAliasRatio`).
fn allowed_alias_ratio(decode_count: usize) -> f64 {
    const LOW: usize = 400_000;
    const HIGH: usize = 4_000_000;
    if decode_count <= LOW {
        0.99
    } else if decode_count >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((decode_count - LOW) as f64 / (HIGH - LOW) as f64)
    }
}

struct Decoder<'n> {
    nodes: &'n [Node],
    /// Alias nodes being expanded (an alias met again inside itself is a cycle).
    active: Vec<bool>,
    decode_count: usize,
    alias_count: usize,
    alias_depth: usize,
    /// Scalar text copied by expanding aliases: go-yaml's ratio counts nodes, so one large
    /// string aliased a million times would pass it and copy gigabytes.
    alias_bytes: usize,
    depth: usize,
    repeats: Vec<Repeat>,
}

/// The most scalar text alias expansion may copy in one document.
const MAX_ALIAS_BYTES: usize = 64 << 20;

impl Decoder<'_> {
    fn fail(&self, message: String, node: Option<usize>) -> Failure {
        let mark = node.map(|n| Mark {
            index: 0,
            line: self.nodes[n].line,
            column: self.nodes[n].column,
        });
        Failure::new(message, mark)
    }

    /// go-yaml's `d.unmarshal(n, out)` with `out` an `interface{}`.
    fn unmarshal(&mut self, n: usize) -> Result<GoValue, Failure> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        if self.alias_count > 100
            && self.decode_count > 1000
            && self.alias_count as f64 / self.decode_count as f64
                > allowed_alias_ratio(self.decode_count)
        {
            return Err(self.fail("document contains excessive aliasing".into(), None));
        }
        let node = &self.nodes[n];
        match node.kind {
            Kind::Document => match node.children.as_slice() {
                [child] => self.unmarshal(*child),
                _ => Ok(GoValue::Nil),
            },
            Kind::Alias => self.alias(n),
            Kind::Scalar => self.scalar(n),
            Kind::Sequence => {
                self.enter(n)?;
                let mut items = Vec::with_capacity(node.children.len());
                for &c in &node.children {
                    items.push(self.unmarshal(c)?);
                }
                self.depth -= 1;
                Ok(GoValue::Seq(items))
            }
            Kind::Mapping => {
                self.enter(n)?;
                let mut map = GoMap::default();
                self.mapping_into(n, &mut map, true)?;
                self.depth -= 1;
                Ok(GoValue::Map(map))
            }
        }
    }

    fn enter(&mut self, n: usize) -> Result<(), Failure> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let node = &self.nodes[n];
            return Err(too_deep(Mark {
                index: 0,
                line: node.line,
                column: node.column,
            }));
        }
        Ok(())
    }

    fn alias(&mut self, n: usize) -> Result<GoValue, Failure> {
        if self.active[n] {
            return Err(self.fail(
                format!("anchor '{}' value contains itself", self.nodes[n].value),
                Some(n),
            ));
        }
        self.active[n] = true;
        self.alias_depth += 1;
        let v = self.unmarshal(self.nodes[n].alias);
        self.alias_depth -= 1;
        self.active[n] = false;
        v
    }

    fn scalar(&mut self, n: usize) -> Result<GoValue, Failure> {
        let node = &self.nodes[n];
        if self.alias_depth > 0 {
            self.alias_bytes += node.value.len();
            if self.alias_bytes > MAX_ALIAS_BYTES {
                return Err(self.fail(
                    format!(
                        "document contains excessive aliasing (aliases expand to more than {} MiB of text)",
                        MAX_ALIAS_BYTES >> 20
                    ),
                    Some(n),
                ));
            }
        }
        if node.tag.is_empty() && !node.implicit {
            // Quoted and block scalars without a tag are strings.
            return Ok(GoValue::Str(node.value.clone()));
        }
        let (tag, resolved) = if node.tag.is_empty() {
            (resolve::STR, resolve::plain(&node.value))
        } else {
            resolve::resolve(&node.tag, &node.value).map_err(|m| self.fail(m, Some(n)))?
        };
        if node.tag.is_empty() && matches!(resolved, Resolved::Str) {
            return Ok(GoValue::Str(node.value.clone()));
        }
        if tag == resolve::BINARY {
            let Some(data) = go_base64(&node.value) else {
                return Err(self.fail(
                    "!!binary value contains invalid base64 data".into(),
                    Some(n),
                ));
            };
            return Ok(GoValue::Str(go_string(data)));
        }
        Ok(match resolved {
            Resolved::Null => GoValue::Nil,
            Resolved::Bool(b) => GoValue::Bool(b),
            Resolved::Int(i) => GoValue::Int(i),
            Resolved::Uint(u) => GoValue::Uint(u),
            Resolved::Float(f) => GoValue::Float(f),
            // Timestamps into `interface{}` keep their text.
            Resolved::Str | Resolved::Timestamp => GoValue::Str(node.value.clone()),
        })
    }

    /// The entries of mapping `n` set into `map` (a new map, or one being merged into).
    /// `own` says `map` is this mapping's own: a key given twice in it is reported.
    fn mapping_into(&mut self, n: usize, map: &mut GoMap, own: bool) -> Result<(), Failure> {
        let children = &self.nodes[n].children;
        let mut explicit: Vec<usize> = Vec::new();
        for pair in children.chunks(2) {
            let (k, v) = (pair[0], pair.get(1).copied().unwrap_or(pair[0]));
            if self.is_merge(k) {
                self.merge(v, map)?;
                continue;
            }
            let key = self.unmarshal(k)?;
            if matches!(key, GoValue::Map(_) | GoValue::Seq(_)) {
                return Err(self.fail(
                    format!("invalid map key: {}", super::gofmt::sharp_v(&key, false)),
                    Some(k),
                ));
            }
            let value = self.unmarshal(v)?;
            let shown = key.clone();
            if map.set(key, value) && own && explicit.iter().any(|&e| self.same_key(e, k)) {
                self.repeats.push(Repeat {
                    line: self.nodes[k].line,
                    key: match shown {
                        GoValue::Str(s) => s,
                        other => super::gofmt::sharp_v(&other, true),
                    },
                });
            }
            if own {
                explicit.push(k);
            }
        }
        Ok(())
    }

    /// Whether two key nodes of one mapping decode to the same Go key (for warnings only).
    fn same_key(&mut self, a: usize, b: usize) -> bool {
        let (na, nb) = (&self.nodes[a], &self.nodes[b]);
        if na.kind != Kind::Scalar || nb.kind != Kind::Scalar {
            return false;
        }
        let ka = scalar_key(na);
        ka.is_some() && ka == scalar_key(nb)
    }

    fn is_merge(&self, n: usize) -> bool {
        let node = &self.nodes[n];
        node.kind == Kind::Scalar
            && node.value == "<<"
            && (node.implicit || node.tag == resolve::MERGE)
    }

    /// `<<: value`: a mapping, an alias of one, or a sequence of those (go-yaml's `merge`).
    fn merge(&mut self, n: usize, map: &mut GoMap) -> Result<(), Failure> {
        let want_map = |d: &Self| {
            d.fail(
                "map merge requires map or sequence of maps as the value".into(),
                Some(n),
            )
        };
        let node = &self.nodes[n];
        match node.kind {
            Kind::Mapping => self.merge_one(n, map),
            Kind::Alias => {
                if self.nodes[node.alias].kind != Kind::Mapping {
                    return Err(want_map(self));
                }
                self.merge_one(n, map)
            }
            Kind::Sequence => {
                // Earlier maps take precedence: merge them last.
                for &c in node.children.iter().rev() {
                    let child = &self.nodes[c];
                    let ok = match child.kind {
                        Kind::Alias => self.nodes[child.alias].kind == Kind::Mapping,
                        Kind::Mapping => true,
                        _ => false,
                    };
                    if !ok {
                        return Err(want_map(self));
                    }
                    self.merge_one(c, map)?;
                }
                Ok(())
            }
            _ => Err(want_map(self)),
        }
    }

    /// `d.unmarshal(n, out)` with `out` the map being merged into: the node is counted as
    /// decoded, an alias expanded, then its entries set.
    fn merge_one(&mut self, n: usize, map: &mut GoMap) -> Result<(), Failure> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        if self.alias_count > 100
            && self.decode_count > 1000
            && self.alias_count as f64 / self.decode_count as f64
                > allowed_alias_ratio(self.decode_count)
        {
            return Err(self.fail("document contains excessive aliasing".into(), None));
        }
        if self.nodes[n].kind == Kind::Alias {
            if self.active[n] {
                return Err(self.fail(
                    format!("anchor '{}' value contains itself", self.nodes[n].value),
                    Some(n),
                ));
            }
            self.active[n] = true;
            self.alias_depth += 1;
            let r = self.merge_one(self.nodes[n].alias, map);
            self.alias_depth -= 1;
            self.active[n] = false;
            return r;
        }
        self.enter(n)?;
        let r = self.mapping_into(n, map, false);
        self.depth -= 1;
        r
    }
}

/// A scalar key's identity for the repeat warning: its tag and resolved text.
fn scalar_key(n: &Node) -> Option<(String, String)> {
    if n.tag.is_empty() && !n.implicit {
        return Some((resolve::STR.into(), n.value.clone()));
    }
    let tag = if n.tag.is_empty() { "" } else { n.tag.as_str() };
    let (rtag, r) = resolve::resolve(tag, &n.value).ok()?;
    let text = match r {
        Resolved::Str | Resolved::Timestamp => n.value.clone(),
        Resolved::Null => String::new(),
        Resolved::Bool(b) => b.to_string(),
        Resolved::Int(i) => i.to_string(),
        Resolved::Uint(u) => u.to_string(),
        Resolved::Float(f) if f.is_nan() => return None,
        Resolved::Float(f) => f.to_string(),
    };
    let rtag = if matches!(r, Resolved::Timestamp) {
        resolve::STR
    } else {
        rtag
    };
    Some((rtag.to_string(), text))
}

/// Go's `base64.StdEncoding.DecodeString`: padded, line breaks ignored.
fn go_base64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const STD: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
    );
    let cleaned: String = s.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    STD.decode(cleaned).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_scalar_aliased_many_times_is_refused_not_copied() {
        // 1 MiB aliased 100 times: few nodes (the ratio allows it), 100 MiB of copies.
        let big = "x".repeat(1 << 20);
        let doc = format!("a: &a \"{big}\"\nb: [{}]\n", vec!["*a"; 100].join(", "));
        let e = unmarshal(doc.as_bytes()).unwrap_err();
        assert!(e.message.contains("excessive aliasing"), "{e:?}");
        // A few copies, as real documents make, still read.
        let doc = format!("a: &a \"{big}\"\nb: [*a, *a]\n");
        assert!(unmarshal(doc.as_bytes()).is_ok());
    }

    #[test]
    fn documents_nested_to_the_limit_fit_a_worker_threads_stack() {
        // Mappings inside sequences through aliases and merges, at the depth limit, decoded
        // on a thread with the 2 MiB stack the parallel readers get.
        // Each `[{` is two levels; the top mapping one more.
        let nested = |pairs: usize| {
            format!(
                "base: &b {{k: v}}\nroot: {}1{}\n",
                "[{<<: *b, x: ".repeat(pairs),
                "}]".repeat(pairs)
            )
        };
        let doc = nested((MAX_DEPTH - 2) / 2);
        let deeper = nested(MAX_DEPTH);
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                assert!(unmarshal(doc.as_bytes()).is_ok());
                let e = unmarshal(deeper.as_bytes()).unwrap_err();
                assert!(e.message.contains("nesting deeper than"), "{e:?}");
            })
            .unwrap()
            .join()
            .unwrap();
    }
}
