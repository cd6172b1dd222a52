//! The check the `signed_json` fuzz target runs on every input, shared with the seed replay in
//! `hostile_documents.rs`: the readers of signed documents (simple-signing payloads, in-toto
//! statements, DSSE envelopes) never panic, and the Go-exact reader agrees with an independent
//! JSON parser (serde_json) wherever that one is defined the same way: every document it
//! accepts is accepted with the same content (duplicate keys last-wins in both), and every
//! document the Go-exact reader finds malformed it refuses too. A payload that is read
//! round-trips through the bytes `olm` writes.
#![allow(dead_code)]

use olm_bundler::grammar::go_json_read::{self as go, GoJsonError};
use olm_bundler::image::sign::payload::{Envelope, SimpleSigning, parse_statement};
use serde_json::Value;

/// Whether two floats are at most `n` representable values apart.
fn ulps_apart(x: f64, y: f64, n: u64) -> bool {
    x == y || (x.signum() == y.signum() && x.to_bits().abs_diff(y.to_bits()) <= n)
}

/// Whether two JSON values are equal, numbers compared as the `float64` Go makes of them.
/// serde_json (without its `float_roundtrip` feature) does not round every long literal
/// correctly (the fuzzer found `66666666666666666666666666666666666`, read one unit in the
/// last place off); Go's `strconv.ParseFloat`, and the Go reader here, do. So numbers may
/// differ by a unit or two in the last place, no more.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => ulps_apart(x, y, 2),
            (x, y) => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        (x, y) => x == y,
    }
}

pub fn check(data: &[u8]) {
    let ours = go::parse(data);
    match serde_json::from_slice::<Value>(data) {
        Ok(theirs) => {
            let ours = ours.as_ref().unwrap_or_else(|e| {
                panic!(
                    "serde_json reads {:?}, the Go reader refuses: {e}",
                    String::from_utf8_lossy(data)
                )
            });
            match go::any(ours, "") {
                Ok(v) => assert!(
                    same(&v, &theirs),
                    "{:?}: read as {v}, serde_json reads {theirs}",
                    String::from_utf8_lossy(data)
                ),
                // Out of float64's range: serde_json keeps big integers as u64 or i64 where
                // Go fails; anything else is a disagreement.
                Err(GoJsonError::Range { .. }) => {}
                Err(e) => panic!("{e}"),
            }
        }
        Err(_) => {
            // serde_json refuses what Go accepts in strings (lone surrogates, invalid UTF-8)
            // and past 128 levels; a syntax error of ours must be one of its errors too.
        }
    }
    if let Err(GoJsonError::Syntax { .. }) = &ours {
        assert!(
            serde_json::from_slice::<Value>(data).is_err(),
            "the Go reader refuses what serde_json reads"
        );
    }
    if let Ok(p) = SimpleSigning::parse(data) {
        let again = SimpleSigning::parse(&p.to_bytes()).expect("a payload olm writes reads back");
        assert_eq!(again, p);
    }
    let _ = parse_statement(data);
    let _ = Envelope::parse(data);
}
