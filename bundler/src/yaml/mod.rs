//! YAML in and out, shared by every area of the tool.
//!
//! Everything Kubernetes- or OLM-shaped is read into `serde_json::Value` first: that keeps unknown
//! fields verbatim (a bundle author's CSV may carry fields we do not model) and gives one error
//! type that names the file and the line. Writing goes through the same value so key order is the
//! order we build, and output is byte-identical run to run.
//!
//! Reading is Go's, exactly: opm and the operator-framework validators decide what a file
//! means, so every file is read as their decoder reads it ([`go`], a port of
//! k8s.io/apimachinery's stream decoder, sigs.k8s.io/yaml and go-yaml v2), with the block
//! reader ([`block`]) taking the plain YAML catalogs are written in, faster, where it gives
//! the same answer. Where `olm` says more than Go (a repeated key, the file and line of an
//! error), it is a warning or part of the message, never another value or verdict.
//! serde-saphyr writes YAML.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A YAML or JSON document that could not be read, with where it came from.
#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not valid UTF-8 text (byte {offset})")]
    NotUtf8 { path: PathBuf, offset: usize },
    #[error("{path}{}: {message}", fmt_line(*line, *column))]
    Syntax {
        path: PathBuf,
        line: Option<u64>,
        column: Option<u64>,
        message: String,
    },
    #[error("{path}: cannot write YAML: {message}")]
    Serialize { path: PathBuf, message: String },
}

fn fmt_line(line: Option<u64>, column: Option<u64>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl YamlError {
    /// The message of the Go decoder (or of the failure) without the file and line.
    pub fn go_message(&self) -> &str {
        match self {
            YamlError::Syntax { message, .. } | YamlError::Serialize { message, .. } => message,
            YamlError::Io { .. } => "cannot read",
            YamlError::NotUtf8 { .. } => "not valid UTF-8 text",
        }
    }

    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            YamlError::Io { path, .. }
            | YamlError::NotUtf8 { path, .. }
            | YamlError::Syntax { path, .. }
            | YamlError::Serialize { path, .. } => path,
        }
    }
}

/// Decodes bytes as UTF-8, naming the file and offset when they are not.
pub fn utf8<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, YamlError> {
    std::str::from_utf8(bytes).map_err(|e| YamlError::NotUtf8 {
        path: path.to_path_buf(),
        offset: e.valid_up_to(),
    })
}

/// Reads a whole file.
pub fn read_file(path: &Path) -> Result<Vec<u8>, YamlError> {
    std::fs::read(path).map_err(|source| YamlError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads a whole file into `buf` (cleared first), reusing its memory.
pub fn read_file_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), YamlError> {
    use std::io::Read;
    buf.clear();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(buf))
        .map(drop)
        .map_err(|source| YamlError::Io {
            path: path.to_path_buf(),
            source,
        })
}

mod block;
pub mod go;
#[cfg(test)]
mod go_compat;
mod scan;
mod typed;
mod written;

/// One document of a stream, not decoded yet: a JSON value already read, or a YAML chunk
/// (see [`documents`]). Decoding it takes the fast block reader where that applies.
pub struct Chunk<'a> {
    path: &'a Path,
    /// The line (from 1) where the document's content starts.
    line: u32,
    body: Body<'a>,
}

enum Body<'a> {
    Json(Value),
    Yaml {
        bytes: std::borrow::Cow<'a, [u8]>,
        /// The chunk's own first line (a `---` kept before the content counts).
        first_line: u32,
        /// The JSON error Go reports when this chunk, read after a JSON value failed, fails
        /// too.
        instead: Option<go::StreamError>,
        /// Where in the input `instead` points (line from 1).
        instead_line: u32,
    },
}

impl<'a> Chunk<'a> {
    /// The line (from 1) where the document starts in its file.
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The same YAML chunk, to read again another way (`None` for a JSON value).
    pub fn yaml_copy(&self) -> Option<Chunk<'a>> {
        match &self.body {
            Body::Json(_) => None,
            Body::Yaml {
                bytes,
                first_line,
                instead,
                instead_line,
            } => Some(Chunk {
                path: self.path,
                line: self.line,
                body: Body::Yaml {
                    bytes: bytes.clone(),
                    first_line: *first_line,
                    instead: instead.clone(),
                    instead_line: *instead_line,
                },
            }),
        }
    }

    /// The document as a JSON tree (`null` for an empty one).
    pub fn value(self) -> Result<Value, YamlError> {
        match self.body {
            Body::Json(v) => Ok(v),
            Body::Yaml {
                ref bytes,
                first_line,
                ..
            } => {
                let r = fast(bytes)
                    .map(Ok)
                    .unwrap_or_else(|| go_chunk(self.path, bytes, first_line));
                self.or_instead(r)
            }
        }
    }

    /// The document as a catalog blob whose property values the caller keeps as JSON text
    /// (see [`parse_blob_at`]).
    pub fn blob(self, lean: bool) -> Result<BlobRead, YamlError> {
        match self.body {
            Body::Json(v) => Ok(whole(v)),
            Body::Yaml {
                ref bytes,
                first_line,
                ..
            } => {
                let read = std::str::from_utf8(strip_separator(bytes))
                    .ok()
                    .and_then(|t| block::parse_raw(t, lean));
                let r = match read {
                    Some(read) => Ok(read),
                    None => go_chunk(self.path, bytes, first_line).map(whole),
                };
                self.or_instead(r)
            }
        }
    }

    fn or_instead<T>(&self, r: Result<T, YamlError>) -> Result<T, YamlError> {
        match (&self.body, r) {
            (
                Body::Yaml {
                    instead: Some(e),
                    instead_line,
                    ..
                },
                Err(_),
            ) => Err(YamlError::Syntax {
                path: self.path.to_path_buf(),
                line: Some(u64::from(*instead_line)),
                column: None,
                message: e.message.clone(),
            }),
            (_, r) => r,
        }
    }
}

fn whole(value: Value) -> BlobRead {
    BlobRead {
        value,
        skipped: false,
        values: Vec::new(),
    }
}

/// The documents of a file as opm and the operator-framework validators read it
/// (k8s.io/apimachinery's `NewYAMLOrJSONDecoder(r, 4096)`): a stream of JSON values when its
/// first non-space character is `{`, else YAML documents split at `---` lines. Each item is a
/// document to decode, or the error that ends the stream.
pub fn documents<'a>(
    path: &'a Path,
    bytes: &'a [u8],
) -> impl Iterator<Item = Result<Chunk<'a>, YamlError>> + 'a {
    let mut stream = go::Stream::new(bytes, go::JSON_WINDOW);
    std::iter::from_fn(move || {
        let piece = stream.next()?;
        Some(match piece {
            Ok(go::Piece::Json { value, offset }) => Ok(Chunk {
                path,
                line: stream.line_of(offset) as u32,
                body: Body::Json(value),
            }),
            Ok(go::Piece::Yaml {
                chunk,
                line,
                instead,
                ..
            }) => {
                let content = u32::from(chunk.len() != strip_separator(&chunk).len());
                let instead_line = instead
                    .as_ref()
                    .map_or(0, |e| stream.line_of(e.offset) as u32);
                Ok(Chunk {
                    path,
                    line: line as u32 + content,
                    body: Body::Yaml {
                        bytes: chunk,
                        first_line: line as u32,
                        instead,
                        instead_line,
                    },
                })
            }
            Err(e) => Err(YamlError::Syntax {
                path: path.to_path_buf(),
                line: Some(stream.line_of(e.offset) as u64),
                column: None,
                message: e.message,
            }),
        })
    })
}

/// Every document of a stream (empty ones as `null`, as Go's decoder gives them) and the
/// error that ended it, if any: what opm's loop of `Decode` calls gets.
pub fn read_stream(path: &Path, bytes: &[u8]) -> (Vec<Value>, Option<YamlError>) {
    let mut docs = Vec::new();
    for chunk in documents(path, bytes) {
        match chunk.and_then(Chunk::value) {
            Ok(v) => docs.push(v),
            Err(e) => return (docs, Some(e)),
        }
    }
    (docs, None)
}

/// Parses every document of a multi-document YAML (or JSON) text. Empty documents (a stray
/// `---`, a file of comments) are dropped, as kubectl and opm do.
/// A mapping key given twice is accepted as Go's loaders accept it (the last value wins) with
/// a warning naming the file, line and key.
pub fn parse_documents(path: &Path, text: impl AsRef<[u8]>) -> Result<Vec<Value>, YamlError> {
    match parse_documents_partial(path, text.as_ref()) {
        (docs, None) => Ok(docs),
        (_, Some(e)) => Err(e),
    }
}

/// [`parse_documents`], also giving the documents read before an error.
pub fn parse_documents_partial(path: &Path, bytes: &[u8]) -> (Vec<Value>, Option<YamlError>) {
    let (mut docs, err) = read_stream(path, bytes);
    docs.retain(|d| !d.is_null());
    (docs, err)
}

pub use go::Repeat as Duplicate;

/// Parses a YAML (or JSON) text into `T` as sigs.k8s.io/yaml's `Unmarshal` does: the first
/// document only, numbers and booleans read as text where `T` wants text. A repeated key
/// keeps its last value, with a warning (see [`parse_documents`]).
pub fn parse_one<T: DeserializeOwned>(path: &Path, text: impl AsRef<[u8]>) -> Result<T, YamlError> {
    let value = go_chunk(path, text.as_ref(), 1)?;
    typed::from_value(value).map_err(|(e, field)| {
        // The line and column of the field, from the document's nodes.
        let at = go::decode::line_of(text.as_ref(), &field);
        let message = match field.is_empty() {
            true => e.to_string(),
            false => format!("{}: {e}", field.join(".")),
        };
        YamlError::Syntax {
            path: path.to_path_buf(),
            line: at.map(|(l, _)| l as u64 + 1),
            column: at.map(|(_, c)| c as u64 + 1),
            message,
        }
    })
}

/// One warning per repeated key, naming the file and the line (`first_line` is the line of
/// the chunk's start in the file). The key is printed with Rust's escaping so a control
/// character cannot forge a log line.
fn warn_duplicates(path: &Path, first_line: u32, found: &[Duplicate]) {
    for d in found {
        tracing::warn!(
            "{}:{}: mapping key {:?} is repeated; the last value is used, as OLM's Go loaders do",
            path.display(),
            d.line as u64 + u64::from(first_line),
            d.key
        );
    }
}

/// A chunk decoded by the port of Go's decoder, its repeated keys warned about, its error
/// placed in the file.
fn go_chunk(path: &Path, chunk: &[u8], first_line: u32) -> Result<Value, YamlError> {
    match go::unmarshal(chunk) {
        Ok(d) => {
            warn_duplicates(path, first_line, &d.repeats);
            Ok(d.value)
        }
        Err(e) => Err(YamlError::Syntax {
            path: path.to_path_buf(),
            line: Some(u64::from(first_line) + e.mark.map_or(0, |m| m.0 as u64)),
            column: e.mark.map(|m| m.1 as u64 + 1),
            message: e.message,
        }),
    }
}

/// A chunk without a leading `---` line (the splitter keeps one that starts a chunk; for a
/// document that is all it changes).
fn strip_separator(chunk: &[u8]) -> &[u8] {
    if !chunk.starts_with(b"---") {
        return chunk;
    }
    let end = memchr::memchr(b'\n', chunk).map_or(chunk.len(), |i| i + 1);
    let rest = chunk[3..end].trim_ascii();
    if rest.is_empty() || rest.starts_with(b"#") {
        &chunk[end..]
    } else {
        chunk
    }
}

/// The block reader's value for a chunk, when it takes it.
fn fast(chunk: &[u8]) -> Option<Value> {
    std::str::from_utf8(strip_separator(chunk))
        .ok()
        .and_then(block::parse)
}

/// Parses a single-document YAML text (a chunk the splitter gave) into a JSON tree: Go's
/// value or error, fast for the plain block YAML catalogs are written in. The block reader
/// tries first and stands aside for what it does not cover; the port of Go's decoder reads
/// the rest (and names every error).
pub fn parse_value(path: &Path, text: impl AsRef<[u8]>) -> Result<Value, YamlError> {
    parse_value_at(path, text, 1)
}

/// [`parse_value`] for a document that starts at line `line` of `path` (warnings about
/// repeated keys and errors name the line in the file).
pub fn parse_value_at(path: &Path, text: impl AsRef<[u8]>, line: u32) -> Result<Value, YamlError> {
    let chunk = text.as_ref();
    match fast(chunk) {
        Some(v) => Ok(v),
        None => go_chunk(path, chunk, line),
    }
}

/// [`parse_value_at`] for a catalog blob whose `olm.csv.metadata` property values nobody will
/// read (catalog validation): when the block reader takes the document, each such value that
/// is a block mapping is checked as it would be read but not built, and comes back as `{}`;
/// the flag says whether that happened. The verdict (value, error, warnings) is the one
/// [`parse_value_at`] gives, apart from those values: a document the block reader leaves
/// to the general path is read whole.
pub fn parse_value_lean(
    path: &Path,
    text: impl AsRef<[u8]>,
    line: u32,
) -> Result<(Value, bool), YamlError> {
    let chunk = text.as_ref();
    let read = std::str::from_utf8(strip_separator(chunk))
        .ok()
        .and_then(block::parse_lean);
    match read {
        Some(read) => Ok(read),
        None => go_chunk(path, chunk, line).map(|v| (v, false)),
    }
}

/// A catalog blob read by [`parse_blob_at`]: the document, whether `olm.csv.metadata`
/// values were left out, and property values already written as JSON.
pub type BlobRead = block::RawRead;
pub use block::PropertyRead;

/// [`parse_value_at`] (or with `lean`, [`parse_value_lean`]) for a catalog blob whose
/// property values the caller keeps as JSON text: when the block reader takes the document,
/// they come as text in [`BlobRead::values`] (see [`block::parse_raw`]); a document it leaves
/// to the general reader comes whole, with no values apart.
pub fn parse_blob_at(
    path: &Path,
    text: impl AsRef<[u8]>,
    line: u32,
    lean: bool,
) -> Result<BlobRead, YamlError> {
    let chunk = text.as_ref();
    let read = std::str::from_utf8(strip_separator(chunk))
        .ok()
        .and_then(|t| block::parse_raw(t, lean));
    match read {
        Some(read) => Ok(read),
        None => go_chunk(path, chunk, line).map(whole),
    }
}

/// Test helper for the fast reader: `reader` and Go (the port) agree on `text`, or the reader
/// stands aside (`None`). Returns whether the reader answered.
#[cfg(test)]
fn agrees(reader: fn(&str) -> Option<Value>, text: &str) -> bool {
    let go = go::unmarshal(text.as_bytes()).map(|d| d.value);
    match (reader(text), go) {
        (Some(fast), Ok(go)) => {
            assert_eq!(fast, go, "{text:?}");
            true
        }
        (Some(fast), Err(e)) => panic!("read {fast} where Go fails: {}: {text:?}", e.message),
        (None, _) => false,
    }
}

/// Reads and parses all documents of a file.
pub fn load_documents(path: &Path) -> Result<Vec<Value>, YamlError> {
    let bytes = read_file(path)?;
    parse_documents(path, &bytes)
}

/// Reads and parses one document of a file into `T`.
pub fn load_one<T: DeserializeOwned>(path: &Path) -> Result<T, YamlError> {
    let bytes = read_file(path)?;
    parse_one(path, &bytes)
}

/// Serialises one value as a YAML document (no leading `---`), ending in a newline.
pub fn to_yaml<T: Serialize>(value: &T) -> Result<String, serde_saphyr::SerializeError> {
    let mut out = serde_saphyr::to_string(value)?;
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// Serialises several values as a multi-document YAML stream separated by `---`.
pub fn to_yaml_documents<T: Serialize>(
    values: &[T],
) -> Result<String, serde_saphyr::SerializeError> {
    let mut out = String::new();
    for v in values {
        out.push_str("---\n");
        out.push_str(&to_yaml(v)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_document_drops_empty_documents() {
        let docs = parse_documents(
            Path::new("x.yaml"),
            "---\n# only a comment\n---\na: 1\n---\nb: [x, z]\n",
        )
        .unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1]["b"][1], "z");
    }

    #[test]
    fn syntax_error_names_file_and_line() {
        let err = parse_documents(Path::new("dir/bad.yaml"), "a: 1\nb: [1, 2\nc: 3\n").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("dir/bad.yaml:"), "{msg}");
        assert!(
            matches!(err, YamlError::Syntax { line: Some(_), .. }),
            "{err:?}"
        );
    }

    #[test]
    fn non_utf8_is_reported_with_offset() {
        let err = utf8(Path::new("f.yaml"), b"ab\xffcd").unwrap_err();
        assert_eq!(err.to_string(), "f.yaml: not valid UTF-8 text (byte 2)");
    }

    #[test]
    fn many_documents_fit_the_budget() {
        let text: String = (0..5000)
            .map(|i| format!("---\nschema: olm.bundle\nname: b{i}\n"))
            .collect();
        assert_eq!(
            parse_documents(Path::new("big.yaml"), &text).unwrap().len(),
            5000
        );
    }

    /// Strings that YAML 1.1 (go-yaml v2, which opm and kubectl use) would read as something
    /// else must come back as the same strings.
    #[test]
    fn ambiguous_strings_are_quoted_on_write() {
        let tricky = [
            "y", "n", "yes", "on", "off", "true", "null", "~", "1.0", "0755", "1e3", "", " x",
            "a: b", "- z", "#c",
        ];
        let v: Value = tricky
            .iter()
            .map(|s| Value::String(s.to_string()))
            .collect();
        let text = to_yaml(&v).unwrap();
        let back: Value = parse_one(Path::new("t"), &text).unwrap();
        assert_eq!(back, v, "{text}");
    }

    #[test]
    fn round_trip_keeps_key_order() {
        let v: Value = serde_json::json!({"z": 1, "a": {"y": "two", "b": [1, 2]}});
        let text = to_yaml(&v).unwrap();
        let back: Value = parse_one(Path::new("t"), &text).unwrap();
        assert_eq!(back, v);
        assert!(text.find("z:").unwrap() < text.find("a:").unwrap());
    }

    /// Captures what the code under test logs.
    fn logged(f: impl FnOnce()) -> String {
        use std::sync::{Arc, Mutex};
        #[derive(Clone, Default)]
        struct Buf(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buf {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(b);
                Ok(b.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buf = Buf::default();
        let out = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || out.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let bytes = buf.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    /// A CRD schema that repeats `type` (as a real community bundle does) is read as Go reads
    /// it, with one warning per repeat naming the file, the line and the key.
    #[test]
    fn repeated_keys_keep_the_last_value_with_a_warning() {
        let crd = "kind: CustomResourceDefinition\nspec:\n  schema:\n    properties:\n      size:\n        type: string\n        description: d\n        type: integer\n";
        let text = format!("---\nkind: A\n---\n{crd}");
        let mut docs = Vec::new();
        let log = logged(|| docs = parse_documents(Path::new("m/crd.yaml"), &text).unwrap());
        assert_eq!(
            docs[1]["spec"]["schema"]["properties"]["size"],
            serde_json::json!({"type": "integer", "description": "d"})
        );
        assert_eq!(log.matches("WARN").count(), 1, "{log}");
        assert!(
            log.contains("m/crd.yaml:11: mapping key \"type\" is repeated"),
            "{log}"
        );

        // A catalog document names the line in the file, whichever reader takes it.
        let mut v = Value::Null;
        let log =
            logged(|| v = parse_value_at(Path::new("c.yaml"), "a: 1\nb: 2\na: 3\n", 10).unwrap());
        assert_eq!(v, serde_json::json!({"a": 3, "b": 2}));
        assert_eq!(log.matches("WARN").count(), 1, "{log}");
        assert!(
            log.contains("c.yaml:12: mapping key \"a\" is repeated"),
            "{log}"
        );

        // Typed configs too (release.yaml, bundle configs).
        #[derive(serde::Deserialize)]
        struct Cfg {
            name: String,
        }
        let mut cfg = None;
        let log = logged(|| {
            cfg = Some(parse_one::<Cfg>(Path::new("r.yaml"), "name: a\nname: b\n").unwrap())
        });
        assert_eq!(cfg.unwrap().name, "b");
        assert!(
            log.contains("r.yaml:2: mapping key \"name\" is repeated"),
            "{log}"
        );
    }

    #[test]
    fn documents_without_repeats_log_nothing() {
        let log = logged(|| {
            parse_documents(Path::new("x.yaml"), "a: {b: 1}\nc: {b: 2}\n---\na: 3\n").unwrap();
        });
        assert!(log.is_empty(), "{log}");
    }

    /// Bad input still stops with the file and line.
    #[test]
    fn broken_yaml_with_a_repeat_still_fails_with_its_line() {
        let err = parse_documents(Path::new("bad.yaml"), "a: 1\na: 2\nb: [1\n").unwrap_err();
        assert!(err.to_string().starts_with("bad.yaml:"), "{err}");
        assert!(
            matches!(err, YamlError::Syntax { line: Some(_), .. }),
            "{err:?}"
        );
    }
}
