//! Differential: `olm`'s YAML reader against what Go's decoder returned, every case of
//! ../shared/data/peer-fixtures/yaml/expected.jsonl (1,992 inputs: the YAML test suite and
//! variants aimed at real Kubernetes and OLM YAML; its README describes the call chain and
//! the record format).
//!
//! Each input is read as bytes, as opm reads a catalog file (`NewYAMLOrJSONDecoder(r, 4096)`
//! and `Decode` until the end), by the Go port alone and by `olm`'s own entry point (which
//! takes the fast block reader where it applies). Both must give Go's answer: the same
//! documents (numbers compared as Go prints a float64, or exactly against `raw_docs`), and a
//! failure after the same documents where Go failed, with Go's exact error text. A case Go
//! decided differently from run to run (`nondeterministic`) may give any of its answers.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::{Path, PathBuf};

use olm_bundler::grammar::go_json::go_float;
use olm_bundler::yaml;
use serde_json::Value;

fn fixtures() -> Option<PathBuf> {
    prerequisite::shared_data("peer-fixtures/yaml", "expected.jsonl")
}

/// Equal as JSON values, numbers as Go prints them: exactly (`exact`) or as float64 text.
fn same(ours: &Value, go: &Value, exact: bool) -> bool {
    match (ours, go) {
        (Value::Number(a), Value::Number(b)) => {
            let float_text = |n: &serde_json::Number| n.as_f64().map(go_float);
            match (a.as_i128(), b.as_i128()) {
                (Some(x), Some(y)) if exact => x == y,
                _ => float_text(a) == float_text(b),
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y, exact))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, v)| b.get(k).is_some_and(|w| same(v, w, exact)))
        }
        _ => ours == go,
    }
}

/// One recorded answer: the documents (exact ones if recorded) and the error.
struct Answer {
    docs: Vec<Value>,
    raw: Option<Vec<Value>>,
    error: Option<String>,
}

impl Answer {
    fn from(result: &Value) -> Answer {
        let list = |k: &str| result.get(k).and_then(Value::as_array).cloned();
        Answer {
            docs: list("docs").unwrap_or_default(),
            raw: list("raw_docs"),
            error: result
                .get("error")
                .and_then(Value::as_str)
                .map(String::from),
        }
    }

    /// How `ours` (documents, error) compares: `None` when it agrees, else what differs.
    fn differs(&self, docs: &[Value], error: Option<&str>) -> Option<String> {
        if docs.len() != self.docs.len() {
            return Some(format!(
                "{} documents, Go {}; error {:?}, Go {:?}",
                docs.len(),
                self.docs.len(),
                error,
                self.error
            ));
        }
        let (want, exact) = match &self.raw {
            Some(raw) => (raw, true),
            None => (&self.docs, false),
        };
        for (i, (a, b)) in docs.iter().zip(want).enumerate() {
            if !same(a, b, exact) {
                return Some(format!("document {i}: {a} where Go has {b}"));
            }
        }
        match (error, &self.error) {
            (None, None) => None,
            (Some(a), Some(b)) if a == b => None,
            (a, b) => Some(format!("error {a:?} where Go has {b:?}")),
        }
    }
}

/// The recorded answers a case accepts.
fn answers(result: &Value) -> Vec<Answer> {
    let mut out = vec![Answer::from(result)];
    if let Some(alts) = result.get("alternatives").and_then(Value::as_array) {
        out.extend(alts.iter().map(Answer::from));
    }
    out
}

#[test]
fn every_recorded_go_answer_is_ours() {
    let Some(dir) = fixtures() else { return };
    let text = std::fs::read_to_string(dir.join("expected.jsonl")).unwrap();
    let mut wrong = Vec::new();
    let (mut cases, mut decoded, mut failed) = (0, 0, 0);
    for line in text.lines() {
        // serde_json stops at 128 levels; the records nest deeper.
        let (record, _) = yaml::go::json::Decoder::new(line.as_bytes(), 0)
            .decode()
            .unwrap()
            .unwrap();
        let case = record["case"].as_str().unwrap();
        let input = std::fs::read(dir.join(record["input"].as_str().unwrap())).unwrap();
        let accepted = answers(&record["result"]);
        cases += 1;
        if accepted[0].error.is_some() {
            failed += 1;
        } else {
            decoded += 1;
        }

        // The port alone.
        let (docs, error) = yaml::go::decode_stream(&input, yaml::go::JSON_WINDOW);
        let docs: Vec<Value> = docs.into_iter().map(|d| d.value).collect();
        let error = error.map(|e| e.message);
        if let Some(why) = accepted
            .iter()
            .map(|a| a.differs(&docs, error.as_deref()))
            .reduce(|a, b| a.and(b))
            .flatten()
        {
            wrong.push(format!("{case} (port): {why}"));
        }

        // olm's entry point, with its fast reader.
        let path = Path::new(case);
        let (docs, error) = yaml::read_stream(path, &input);
        let error = error.map(|e| e.go_message().to_string());
        if let Some(why) = accepted
            .iter()
            .map(|a| a.differs(&docs, error.as_deref()))
            .reduce(|a, b| a.and(b))
            .flatten()
        {
            wrong.push(format!("{case} (olm): {why}"));
        }
    }
    println!(
        "peer-fixtures/yaml: {} of {cases} cases agree with Go ({decoded} decode, {failed} fail)",
        cases
            - wrong
                .iter()
                .map(|w| w.split(' ').next())
                .collect::<std::collections::BTreeSet<_>>()
                .len()
    );
    assert!(
        wrong.is_empty(),
        "{} disagreements:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
