//! YAML in and out, shared by every area of the tool.
//!
//! Everything Kubernetes- or OLM-shaped is read into `serde_json::Value` first: that keeps unknown
//! fields verbatim (a bundle author's CSV may carry fields we do not model) and gives one error
//! type that names the file and the line. Writing goes through the same value so key order is the
//! order we build, and output is byte-identical run to run.

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

/// Parser limits sized for real catalogs and bundles (a 57 MB catalog file holds tens of
/// thousands of documents and millions of nodes; serde-saphyr's defaults are for config files),
/// while still bounding alias expansion and nesting so hostile input cannot exhaust memory.
///
/// Scalars resolve as go-yaml v2 resolves them where it matters for manifests: `0644` is the
/// octal 420 (`resolve` in go-yaml v2's resolve.go parses integers with Go's
/// `strconv.ParseInt(s, 0, 64)`, which reads a leading `0` as octal; a Deployment's
/// `defaultMode: 0644` depends on it).
fn options() -> serde_saphyr::Options {
    options_with(serde_saphyr::DuplicateKeyPolicy::Error)
}

fn options_with(duplicate_keys: serde_saphyr::DuplicateKeyPolicy) -> serde_saphyr::Options {
    serde_saphyr::options! {
        duplicate_keys: duplicate_keys,
        legacy_octal_numbers: true,
        budget: serde_saphyr::budget! {
            max_reader_input_bytes: Some(2 * 1024 * 1024 * 1024),
            max_events: usize::MAX / 2,
            max_documents: usize::MAX / 2,
            max_nodes: usize::MAX / 2,
            max_total_scalar_bytes: 4 * 1024 * 1024 * 1024,
            max_depth: 256,
        },
    }
}

fn syntax(path: &Path, err: &serde_saphyr::Error) -> YamlError {
    let loc = err.location();
    // The rendered message carries a snippet of the input; keep only the first line so a secret
    // that happened to sit in a malformed file is not echoed back.
    let message = err.without_snippet().to_string();
    let message = message.lines().next().unwrap_or("invalid YAML").to_string();
    YamlError::Syntax {
        path: path.to_path_buf(),
        line: loc.map(|l| l.line()),
        column: loc.map(|l| l.column()),
        message,
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

/// Parses every document of a multi-document YAML (or JSON) text. Empty documents (a stray
/// `---`, a file of comments) are dropped, as kubectl and opm do.
/// A mapping key given twice is accepted as Go's loaders accept it (the last value wins) with
/// a warning naming the file, line and key.
pub fn parse_documents(path: &Path, text: &str) -> Result<Vec<Value>, YamlError> {
    let docs: Vec<Value> = last_value_wins(path, text, 0, |opts| {
        serde_saphyr::from_multiple_with_options(text, opts)
    })?;
    Ok(docs.into_iter().filter(|d| !d.is_null()).collect())
}

mod block;
mod duplicates;
#[cfg(test)]
mod go_compat;
mod scan;
mod tree;
mod written;

pub use duplicates::Duplicate;

/// Parses a single-document YAML (or JSON) text into `T`; a repeated key keeps its last value,
/// with a warning (see [`parse_documents`]).
pub fn parse_one<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, YamlError> {
    parse_one_saphyr(path, text, 0)
}

fn parse_one_saphyr<T: DeserializeOwned>(
    path: &Path,
    text: &str,
    first_line: u32,
) -> Result<T, YamlError> {
    last_value_wins(path, text, first_line, |opts| {
        serde_saphyr::from_str_with_options(text, opts)
    })
}

/// Runs `parse` with serde-saphyr's strict policy first (no cost for the documents that have
/// no repeated key, which is nearly all), and when it reports a repeated key, names every
/// repeat and parses again keeping the last value, as go-yaml v2 does.
fn last_value_wins<T>(
    path: &Path,
    text: &str,
    first_line: u32,
    parse: impl Fn(serde_saphyr::Options) -> Result<T, serde_saphyr::Error>,
) -> Result<T, YamlError> {
    use serde_saphyr::DuplicateKeyPolicy;
    match parse(options()) {
        Ok(v) => Ok(v),
        Err(e) if is_duplicate(&e) => {
            warn_duplicates(path, first_line, &duplicates::find(text));
            parse(options_with(DuplicateKeyPolicy::LastWins)).map_err(|e| syntax(path, &e))
        }
        Err(e) => Err(syntax(path, &e)),
    }
}

fn is_duplicate(err: &serde_saphyr::Error) -> bool {
    matches!(
        err.without_snippet(),
        serde_saphyr::Error::DuplicateMappingKey { .. }
    )
}

/// One warning per repeated key, naming the file and the line (`first_line` is the line of
/// the text's start in the file, minus one). The key is printed with Rust's escaping so a
/// control character cannot forge a log line.
fn warn_duplicates(path: &Path, first_line: u32, found: &[Duplicate]) {
    for d in found {
        tracing::warn!(
            "{}:{}: mapping key {:?} is repeated; the last value is used, as OLM's Go loaders do",
            path.display(),
            d.line + u64::from(first_line),
            d.key
        );
    }
    if found.is_empty() {
        // Repeats brought in through aliases or merges have no line of their own.
        tracing::warn!(
            "{}: a mapping repeats a key; the last value is used, as OLM's Go loaders do",
            path.display()
        );
    }
}

/// Parses a single-document YAML text into a JSON tree: the same value (or error) as
/// [`parse_one`], several times faster for the plain block YAML catalogs are written in.
/// Three readers are tried in turn, each standing aside for what it does not cover: the
/// line reader for block YAML (`block`), the event-driven one for the rest of the common
/// subset (`tree`), and serde-saphyr for everything (and for every error).
pub fn parse_value(path: &Path, text: &str) -> Result<Value, YamlError> {
    parse_value_at(path, text, 1)
}

/// [`parse_value`] for a document that starts at line `line` of `path` (warnings about
/// repeated keys name the line in the file).
pub fn parse_value_at(path: &Path, text: &str, line: u32) -> Result<Value, YamlError> {
    let first_line = line.saturating_sub(1);
    if many_comments(text) {
        return parse_one_saphyr(path, text, first_line);
    }
    if let Some(v) = block::parse(text) {
        return Ok(v);
    }
    match tree::parse(text) {
        Some(v) => Ok(v),
        None => parse_one_saphyr(path, text, first_line),
    }
}

/// [`parse_value_at`] for a catalog blob whose `olm.csv.metadata` property values nobody will
/// read (catalog validation): when the block reader takes the document, each such value that
/// is a block mapping is checked as it would be read but not built, and comes back as `{}`;
/// the flag says whether that happened. The verdict (value, error, warnings) is the one
/// [`parse_value_at`] gives, apart from those values: a document the block reader leaves
/// to the general path is read whole.
pub fn parse_value_lean(path: &Path, text: &str, line: u32) -> Result<(Value, bool), YamlError> {
    let first_line = line.saturating_sub(1);
    if many_comments(text) {
        return parse_one_saphyr(path, text, first_line).map(|v| (v, false));
    }
    if let Some(read) = block::parse_lean(text) {
        return Ok(read);
    }
    // `parse` would stand aside too: straight to the general readers.
    match tree::parse(text) {
        Some(v) => Ok((v, false)),
        None => parse_one_saphyr(path, text, first_line).map(|v| (v, false)),
    }
}

/// A catalog blob read by [`parse_blob_at`]: the document, whether `olm.csv.metadata`
/// values were left out, and property values already written as JSON.
pub type BlobRead = block::RawRead;
pub use block::PropertyRead;

/// [`parse_value_at`] (or with `lean`, [`parse_value_lean`]) for a catalog blob whose
/// property values the caller keeps as JSON text: when the block reader takes the document,
/// they come as text in [`BlobRead::values`] (see [`block::parse_raw`]); a document it leaves
/// to the general readers comes whole, with no values apart.
pub fn parse_blob_at(
    path: &Path,
    text: &str,
    line: u32,
    lean: bool,
) -> Result<BlobRead, YamlError> {
    let whole = |value| BlobRead {
        value,
        skipped: false,
        values: Vec::new(),
    };
    let first_line = line.saturating_sub(1);
    if many_comments(text) {
        return parse_one_saphyr(path, text, first_line).map(whole);
    }
    if let Some(read) = block::parse_raw(text, lean) {
        return Ok(read);
    }
    match tree::parse(text) {
        Some(v) => Ok(whole(v)),
        None => parse_one_saphyr(path, text, first_line).map(whole),
    }
}

/// serde-saphyr refuses a document whose parser has to buffer too many comments while
/// looking ahead (96 in a row, e.g. between a key and its value); the fast readers have no
/// such limit. A document with more than a few comments goes straight to serde-saphyr, so the
/// verdict stays its own. Catalogs written by tools carry none.
fn many_comments(text: &str) -> bool {
    const FEW: usize = 16;
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'#', bytes)
        .filter(|&i| i == 0 || matches!(bytes[i - 1], b' ' | b'\n' | b'\t' | b'\r'))
        .nth(FEW)
        .is_some()
}

/// Test helper for the fast readers: `reader` and serde-saphyr agree on `text`, or the reader
/// stands aside (`None`). Returns whether the reader answered.
#[cfg(test)]
fn agrees(reader: fn(&str) -> Option<Value>, text: &str) -> bool {
    let slow: Result<Value, _> = parse_one_saphyr(Path::new("t"), text, 0);
    match (reader(text), slow) {
        (Some(fast), Ok(slow)) => {
            assert_eq!(fast, slow, "{text:?}");
            true
        }
        (Some(fast), Err(e)) => panic!("read {fast} where serde-saphyr fails: {e}: {text:?}"),
        (None, _) => false,
    }
}

/// One scalar's text read alone as a document (`None` when serde-saphyr rejects it).
fn parse_scalar_alone(text: &str) -> Option<Value> {
    serde_saphyr::from_str_with_options(text, options()).ok()
}

/// Reads and parses all documents of a file.
pub fn load_documents(path: &Path) -> Result<Vec<Value>, YamlError> {
    let bytes = read_file(path)?;
    parse_documents(path, utf8(path, &bytes)?)
}

/// Reads and parses one document of a file into `T`.
pub fn load_one<T: DeserializeOwned>(path: &Path) -> Result<T, YamlError> {
    let bytes = read_file(path)?;
    parse_one(path, utf8(path, &bytes)?)
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
