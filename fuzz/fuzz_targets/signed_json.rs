//! The readers of signed documents (simple-signing payloads, in-toto statements, DSSE
//! envelopes) on arbitrary bytes: never a panic, and the Go-exact JSON reader agrees with
//! serde_json wherever both are defined (`bundler/tests/support/signed_json.rs`, which the test
//! suite also runs on the seeds in `seeds/signed_json`: the documents of
//! `bundler/tests/hostile_documents.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../bundler/tests/support/signed_json.rs"]
mod signed_json;

fuzz_target!(|data: &[u8]| signed_json::check(data));
