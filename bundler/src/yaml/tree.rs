//! YAML text straight from parser events to a JSON tree, for the plain YAML that catalogs and
//! manifests are made of.
//!
//! serde-saphyr's `Value` path costs about twice the bare parse (every node goes through
//! several serde layers). Catalog YAML, as opm and sigs.k8s.io/yaml write it, uses only block
//! and flow collections of untagged scalars, so those documents are built here directly from
//! granit-parser's events (the parser serde-saphyr itself runs on). Anything outside that
//! subset (anchors, aliases, tags, non-string keys, merge keys, duplicate keys, parse errors)
//! makes [`parse`] answer `None`, and the caller parses the document again with serde-saphyr,
//! which gives the same value or its own error. So the result never differs from serde-saphyr's:
//! plain scalars are resolved with its rules (YAML 1.1 booleans, `~`/`null` as null, numbers),
//! and any scalar that could be a number is handed to serde-saphyr itself.

use std::borrow::Cow;

use granit_parser::{Event, Parser, ScalarStyle};
use serde_json::{Map, Value};

/// Deeper than this, serde-saphyr's own depth budget decides.
const MAX_DEPTH: usize = 200;

enum Frame {
    Seq(Vec<Value>),
    /// A mapping and the key whose value is being read.
    Map(Map<String, Value>, Option<String>),
}

/// The document in `text` as a JSON tree, or `None` when the fast path does not apply (the
/// caller then uses serde-saphyr). An empty document is `Null`.
pub fn parse(text: &str) -> Option<Value> {
    let options = granit_parser::options! { emit_comments: false };
    let mut parser = Parser::new_from_str_with_options(text, options);
    let mut stack: Vec<Frame> = Vec::new();
    let mut root: Option<Value> = None;
    let mut documents = 0;
    while let Some(event) = parser.next_event() {
        let (event, _span) = event.ok()?;
        let value = match event {
            Event::StreamStart | Event::DocumentEnd => continue,
            Event::StreamEnd => break,
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    return None;
                }
                continue;
            }
            Event::Scalar(text, style, anchor, tag) => {
                if anchor != 0 || tag.is_some() {
                    return None;
                }
                // A key: only plain strings that serde-saphyr would read as the same text.
                if let Some(Frame::Map(_, key @ None)) = stack.last_mut() {
                    if style == ScalarStyle::Plain && !is_plain_string(&text) {
                        return None;
                    }
                    *key = Some(text.into_owned());
                    continue;
                }
                scalar(text, style)?
            }
            Event::SequenceStart(_, anchor, ref tag) | Event::MappingStart(_, anchor, ref tag) => {
                if anchor != 0 || tag.is_some() || stack.len() >= MAX_DEPTH {
                    return None;
                }
                if let Some(Frame::Map(_, None)) = stack.last() {
                    return None; // a collection as a key
                }
                let frame = if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq(Vec::new())
                } else {
                    Frame::Map(Map::new(), None)
                };
                stack.push(frame);
                continue;
            }
            Event::SequenceEnd => match stack.pop()? {
                Frame::Seq(items) => Value::Array(items),
                Frame::Map(..) => return None,
            },
            Event::MappingEnd => match stack.pop()? {
                Frame::Map(map, None) => Value::Object(map),
                _ => return None,
            },
            // Aliases, and anything else the parser may report.
            _ => return None,
        };
        match stack.last_mut() {
            None => {
                if root.is_some() {
                    return None;
                }
                root = Some(value);
            }
            Some(Frame::Seq(items)) => items.push(value),
            Some(Frame::Map(map, key)) => {
                let key = key.take()?;
                if map.contains_key(&key) {
                    return None; // the serde-saphyr path names the repeat, last value wins
                }
                map.insert(key, value);
            }
        }
    }
    if !stack.is_empty() {
        return None;
    }
    Some(root.unwrap_or(Value::Null))
}

/// Resolves an untagged scalar the way serde-saphyr does for an untyped value.
pub(super) fn scalar(text: Cow<'_, str>, style: ScalarStyle) -> Option<Value> {
    if style != ScalarStyle::Plain {
        return Some(Value::String(text.into_owned()));
    }
    match &*text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        _ => {}
    }
    if let Some(b) = yaml11_bool(&text) {
        return Some(Value::Bool(b));
    }
    if !may_be_number(&text) {
        return Some(Value::String(text.into_owned()));
    }
    // Plain decimal integers are by far the most common numbers.
    let bytes = text.as_bytes();
    if bytes.len() < 20
        && bytes.iter().all(u8::is_ascii_digit)
        && (bytes[0] != b'0' || bytes.len() == 1)
    {
        return text.parse::<u64>().ok().map(Value::from);
    }
    // Versions (`1.2.3`) and addresses are strings in every YAML schema.
    if bytes[0].is_ascii_digit()
        && bytes.iter().all(|b| b.is_ascii_digit() || *b == b'.')
        && bytes.iter().filter(|b| **b == b'.').count() >= 2
    {
        return Some(Value::String(text.into_owned()));
    }
    // Everything else that might be numeric (signs, floats, radix prefixes, underscores,
    // leading zeros, `.inf`) is resolved by serde-saphyr itself. The text is limited to
    // characters that read the same alone as inside a document.
    if text.ends_with(':') {
        return None; // alone, `1:` would be a mapping
    }
    super::parse_scalar_alone(&text)
}

/// serde-saphyr's YAML 1.1 boolean spellings (case-insensitive).
fn yaml11_bool(s: &str) -> Option<bool> {
    const TRUE: [&str; 4] = ["true", "yes", "y", "on"];
    const FALSE: [&str; 4] = ["false", "no", "n", "off"];
    if s.len() > 5 {
        return None;
    }
    if TRUE.iter().any(|t| s.eq_ignore_ascii_case(t)) {
        Some(true)
    } else if FALSE.iter().any(|f| s.eq_ignore_ascii_case(f)) {
        Some(false)
    } else {
        None
    }
}

/// Whether a plain scalar could resolve to a number: it starts like one (a digit, a sign
/// before a digit or dot, or a dot as in `.inf`) and uses only characters numbers use.
pub(super) fn may_be_number(s: &str) -> bool {
    let b = s.as_bytes();
    let starts = match b {
        [c, ..] if c.is_ascii_digit() => true,
        [b'+' | b'-', c, ..] => c.is_ascii_digit() || *c == b'.',
        [b'.', c, ..] => *c != b'.',
        _ => false,
    };
    starts
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'+' | b'-' | b'_' | b':'))
}

/// Whether a plain scalar reads as a string equal to its text (what [`scalar`] gives for
/// everything that is not a null, a boolean or possibly a number).
pub(super) fn is_text(s: &str) -> bool {
    plain_word(s)
        || (!matches!(s, "" | "~" | "null" | "Null" | "NULL")
            && yaml11_bool(s).is_none()
            && !may_be_number(s))
}

/// A plain mapping key that serde-saphyr reads as exactly its text.
pub(super) fn is_plain_string(s: &str) -> bool {
    plain_word(s)
        || (!s.is_empty()
            && !matches!(s, "~" | "null" | "Null" | "NULL" | "<<")
            && yaml11_bool(s).is_none()
            && !may_be_number(s)
            && !s.starts_with(['+', '-', '.']))
}

/// A quick yes for [`is_text`] and [`is_plain_string`], which most keys and values get: text
/// starting with a letter (numbers, `<<` and the indicators start otherwise), longer than
/// every null and boolean spelling or starting with a letter none of them starts with. The
/// full rules decide the rest.
fn plain_word(s: &str) -> bool {
    s.as_bytes().first().is_some_and(|&b| {
        b.is_ascii_alphabetic()
            && (s.len() > 5 || !matches!(b | 0x20, b'n' | b'y' | b'o' | b't' | b'f'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader and serde-saphyr agree, or the reader stands aside.
    fn same(text: &str) -> bool {
        super::super::agrees(parse, text)
    }

    #[test]
    fn agrees_with_serde_saphyr_on_scalars() {
        let mut fast = 0;
        for s in [
            "",
            "~",
            "null",
            "Null",
            "NULL",
            "nULL",
            "y",
            "Y",
            "yes",
            "No",
            "ON",
            "off",
            "true",
            "False",
            "TRUE",
            "n",
            "0",
            "7",
            "123",
            "0123",
            "0755",
            "-1",
            "+1",
            "1.5",
            "-1.5",
            "1e3",
            "1E-3",
            ".5",
            ".inf",
            "-.inf",
            ".nan",
            ".NaN",
            "inf",
            "nan",
            "Infinity",
            "0x1F",
            "0o17",
            "0b101",
            "1_000",
            "1:20",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999",
            "1.2.3",
            "10.0.0.1",
            "0.1.0",
            "1.0",
            "v1.2.3",
            "-",
            "-a",
            "--x",
            "...x",
            ".a",
            "a b",
            "a: b",
            "'q'",
            "\"d\\u0041\"",
            "x # c",
            "1 # c",
            "|\n  lit\n  two\n",
            ">\n  fold\n  ed\n",
            "a\n  b\n",
            "@x",
            "`x`",
        ] {
            fast += usize::from(same(&format!("k: {s}\n")));
            fast += usize::from(same(&format!("- {s}\n")));
        }
        assert!(fast > 100, "fast path taken only {fast} times");
    }

    #[test]
    fn agrees_with_serde_saphyr_on_structures() {
        for doc in [
            "",
            "# only a comment\n",
            "a: 1\nb:\n  - x\n  - {c: d, e: [1, 2]}\n",
            "a:\n- 1\n- - 2\n  - 3\n",
            "a: []\nb: {}\nc:\n",
            "a: &x 1\nb: *x\n",
            "!!str 1\n",
            "a: !!int '1'\n",
            "a: 1\na: 2\n",
            "? [a]\n: b\n",
            "<<: {a: 1}\nb: 2\n",
            "1: a\n",
            "yes: a\n",
            "'yes': a\n",
            "--- a\n",
            "a: [1, 2\n",
            "a: 1\n---\nb: 2\n",
        ] {
            let _ = same(doc);
        }
    }

    /// The quick yes of `plain_word` is one the full rules give too.
    #[test]
    fn plain_words_are_text_by_the_full_rules() {
        let mut words = 0;
        for first in 0u8..=0x7f {
            for rest in [
                "", "a", "ull", "ULL", "es", "rue", "alse", "ff", "n", "1", ".5", "e3", "ullx",
                "alsex", "ull5.0",
            ] {
                let s = format!("{}{rest}", char::from(first));
                if !plain_word(&s) {
                    continue;
                }
                words += 1;
                let full = !matches!(&*s, "" | "~" | "null" | "Null" | "NULL")
                    && yaml11_bool(&s).is_none()
                    && !may_be_number(&s);
                assert!(full, "{s:?}");
                assert!(!s.starts_with(['+', '-', '.', '<']), "{s:?}");
            }
        }
        // Every letter before the two endings that make words longer than 5; 42 (52 less n,
        // y, o, t, f in both cases) before the others.
        assert_eq!(words, 52 * 2 + 42 * 13);
    }

    #[test]
    fn the_subset_is_taken_fast() {
        let v = parse("schema: olm.bundle\nname: a.v1\nproperties:\n- type: olm.package\n  value:\n    packageName: a\n    version: 1.0.0\n").unwrap();
        assert_eq!(v["properties"][0]["value"]["version"], "1.0.0");
        assert!(parse("a: &x 1\n").is_none());
        assert!(parse("a: 1\na: 2\n").is_none());
    }
}
