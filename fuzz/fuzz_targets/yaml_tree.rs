//! Differential: the direct YAML-to-tree path must give serde-saphyr's value, or stand aside
//! so serde-saphyr's own error is reported. Never a different value, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use olm_bundler::yaml;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("f.yaml");
    let fast = yaml::parse_value(path, text);
    let slow: Result<Value, _> = yaml::parse_one(path, text);
    match (fast, slow) {
        (Ok(a), Ok(b)) => assert!(a == b, "values differ for {text:?}: {a} vs {b}"),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("verdicts differ for {text:?}: {a:?} vs {b:?}"),
    }
});
