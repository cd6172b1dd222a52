//! YAML and JSON read exactly as OLM's Go tools read them.
//!
//! opm and the operator-framework/api validators read every file through
//! k8s.io/apimachinery's `YAMLOrJSONDecoder`, which hands each YAML document to
//! sigs.k8s.io/yaml: go-yaml v2 into `interface{}`, `convertToJSONableObject`, then
//! `encoding/json`. go-yaml v2 is lenient where the YAML spec is strict (quoted scalars
//! continued at any indentation, text after the first document of a chunk ignored) and strict
//! where YAML 1.2 is lenient (`on` is `true`, `0644` is octal, `%YAML 1.2` is refused), so
//! reading "YAML" is not enough to agree with it: this module is a port of that chain, checked
//! against what Go itself returned for 1,992 inputs (`peer-fixtures/yaml`).
//!
//! - [`stream`]: the decoder's JSON sniffing, JSON-to-YAML fallback and document splitting;
//! - [`reader`], [`scanner`], [`parser`]: go-yaml's libyaml port, bytes to events;
//! - [`decode`], [`resolve`]: events to Go values (anchors, merges, YAML 1.1 types);
//! - [`value`]: Go values to JSON, with sigs.k8s.io/yaml's key rules;
//! - [`json`]: `encoding/json`'s stream decoder for JSON files.

pub mod decode;
mod gofmt;
pub mod json;
mod parser;
mod reader;
pub mod resolve;
mod scanner;
pub mod stream;
pub mod value;

use serde_json::Value;

pub use decode::Repeat;
pub use stream::{JSON_WINDOW, Piece, Stream, StreamError};

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)` (how sigs.k8s.io/yaml writes a float it puts
/// into a string).
pub fn gofmt_float32(f: f64) -> String {
    gofmt::float_g32(f)
}

/// A chunk Go could not decode: its error text exactly, and where (line and column from 0
/// within the chunk) when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoError {
    pub message: String,
    pub mark: Option<(usize, usize)>,
}

/// A decoded chunk: its JSON value and the keys it repeats.
#[derive(Debug)]
pub struct Decoded {
    pub value: Value,
    pub repeats: Vec<Repeat>,
}

/// sigs.k8s.io/yaml's `Unmarshal(chunk, &target)` for a target that takes any JSON: the first
/// YAML document in `chunk` (JSON text is YAML too) as JSON, or Go's error.
pub fn unmarshal(chunk: &[u8]) -> Result<Decoded, GoError> {
    let (go, repeats) = decode::unmarshal(chunk).map_err(|f| GoError {
        message: format!("error converting YAML to JSON: yaml: {}", f.message),
        mark: f.mark,
    })?;
    let value = value::to_json(go).map_err(|e| GoError {
        message: format!("error converting YAML to JSON: {}", e.message()),
        mark: None,
    })?;
    Ok(Decoded { value, repeats })
}

/// A document read from a stream: its value, its first line in the input (from 1) and the
/// keys it repeats (lines from 0 within the document).
#[derive(Debug)]
pub struct Doc {
    pub value: Value,
    pub line: usize,
    pub repeats: Vec<Repeat>,
}

/// Why a stream stopped: Go's message, and the line and column (from 1) in the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamFailure {
    pub message: String,
    pub line: usize,
    pub column: Option<usize>,
}

/// Every document of `data` as `NewYAMLOrJSONDecoder(r, window)` and `Decode` until the end
/// give them: the documents read, and the error that stopped the stream, if any.
pub fn decode_stream(data: &[u8], window: usize) -> (Vec<Doc>, Option<StreamFailure>) {
    let mut stream = Stream::new(data, window);
    let mut docs = Vec::new();
    while let Some(piece) = stream.next() {
        match piece {
            Ok(Piece::Json { value, offset }) => docs.push(Doc {
                value,
                line: stream.line_of(offset),
                repeats: Vec::new(),
            }),
            Ok(Piece::Yaml {
                chunk,
                line,
                offset,
                instead,
            }) => match unmarshal(&chunk) {
                Ok(d) => docs.push(Doc {
                    value: d.value,
                    line,
                    repeats: d.repeats,
                }),
                Err(e) => {
                    let failure = match instead {
                        Some(json) => StreamFailure {
                            message: json.message,
                            line: stream.line_of(json.offset),
                            column: None,
                        },
                        None => StreamFailure {
                            message: e.message,
                            line: line + e.mark.map_or(0, |m| m.0),
                            column: e.mark.map(|m| m.1 + 1),
                        },
                    };
                    let _ = offset;
                    return (docs, Some(failure));
                }
            },
            Err(e) => {
                let line = stream.line_of(e.offset);
                return (
                    docs,
                    Some(StreamFailure {
                        message: e.message,
                        line,
                        column: None,
                    }),
                );
            }
        }
    }
    (docs, None)
}
