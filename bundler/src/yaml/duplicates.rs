//! Finds mapping keys given twice in one mapping, with their lines.
//!
//! YAML forbids repeated keys, but Go's loaders accept them: go-yaml v2 decodes a mapping into
//! a Go map (`decoder.mapping` in decode.go sets each key in turn, so the last value wins) and
//! sigs.k8s.io/yaml converts that map to JSON. OLM installs real bundles that rely on it (a CRD
//! schema with `type` twice). serde-saphyr can keep the last value too, but does not say where a
//! key repeats, so this pass names each repeat for the warning. It runs only after serde-saphyr
//! has reported a duplicate, so documents without one never pay for it.

use std::borrow::Cow;
use std::collections::HashSet;

use granit_parser::{Event, Parser, ScalarStyle};
use serde_json::Value;

/// A key seen again in the same mapping; `line` counts from 1 within the text scanned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Duplicate {
    pub line: u64,
    pub key: String,
}

enum Frame {
    Seq,
    /// A mapping, the keys read so far, and whether the next node is a key.
    Map(HashSet<String>, bool),
}

/// Every repeated key in `text` (all its documents), in document order. Keys that are not
/// scalars, merge keys (`<<`) and keys brought in by aliases are not compared. A parse error
/// ends the scan: serde-saphyr reports it.
pub fn find(text: &str) -> Vec<Duplicate> {
    let options = granit_parser::options! { emit_comments: false };
    let mut parser = Parser::new_from_str_with_options(text, options);
    let mut stack: Vec<Frame> = Vec::new();
    let mut found = Vec::new();
    while let Some(Ok((event, span))) = parser.next_event() {
        match event {
            Event::Scalar(text, style, ..) => {
                if let Some(Frame::Map(seen, true)) = stack.last_mut() {
                    let key = identity(text, style);
                    if key != "<<" && !seen.insert(key.clone()) {
                        found.push(Duplicate {
                            line: span.start.line() as u64,
                            key,
                        });
                    }
                }
                node_done(&mut stack);
            }
            Event::Alias(_) => node_done(&mut stack),
            Event::SequenceStart(..) => stack.push(Frame::Seq),
            Event::MappingStart(..) => stack.push(Frame::Map(HashSet::new(), true)),
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                node_done(&mut stack);
            }
            Event::DocumentStart(..) => stack.clear(),
            _ => {}
        }
    }
    found
}

/// A node ended: in a mapping, a key is followed by a value and a value by a key.
fn node_done(stack: &mut [Frame]) {
    if let Some(Frame::Map(_, key_next)) = stack.last_mut() {
        *key_next = !*key_next;
    }
}

/// What a key becomes as a JSON object key: quoted keys are their text, plain ones are
/// resolved first (`1` and `0x1` are the same key, as are `true` and `yes`), as
/// sigs.k8s.io/yaml's `convertToJSONableObject` turns go-yaml's resolved keys into strings.
fn identity(text: Cow<'_, str>, style: ScalarStyle) -> String {
    if style != ScalarStyle::Plain {
        return text.into_owned();
    }
    match super::tree::scalar(Cow::Borrowed(&text), style) {
        Some(Value::String(s)) => s,
        Some(Value::Null) => String::new(),
        Some(v) => v.to_string(),
        None => text.into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Vec<(u64, String)> {
        find(text).into_iter().map(|d| (d.line, d.key)).collect()
    }

    #[test]
    fn names_each_repeat_once_with_its_line() {
        let text = "a:\n  type: x\n  b: 1\n  type: y\n  type: z\nc: [{k: 1, k: 2}]\n";
        assert_eq!(
            keys(text),
            [(4, "type".into()), (5, "type".into()), (6, "k".into())]
        );
    }

    #[test]
    fn same_key_in_other_mappings_or_documents_is_no_repeat() {
        assert!(keys("a: {x: 1}\nb: {x: 2}\n").is_empty());
        assert!(keys("x: 1\n---\nx: 2\n").is_empty());
        assert!(keys("? [a]\n: 1\n? [a]\n: 2\nb: 3\n").is_empty());
        assert!(keys("<<: {a: 1}\n<<: {b: 2}\n").is_empty());
    }

    #[test]
    fn keys_compare_as_json_keys() {
        assert_eq!(keys("1: a\n'1': b\n"), [(2, "1".into())]);
        assert_eq!(keys("true: a\nyes: b\n"), [(2, "true".into())]);
    }
}
