//! Differential: the fast block reader must give the value of the port of Go's decoder, or
//! stand aside so the port's own answer (value or Go's error) is reported; and olm's stream
//! reader must give the port's documents and error. Never a different value, never a panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use olm_bundler::yaml;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("f.yaml");
    let fast = yaml::parse_value(path, data);
    let go = yaml::go::unmarshal(data);
    match (fast, go) {
        (Ok(a), Ok(b)) => assert!(a == b.value, "values differ for {data:?}: {a} vs {}", b.value),
        (Err(a), Err(b)) => assert_eq!(a.go_message(), b.message, "{data:?}"),
        (a, b) => panic!("verdicts differ for {data:?}: {a:?} vs {b:?}"),
    }
    let (docs, err) = yaml::read_stream(path, data);
    let (port, port_err) = yaml::go::decode_stream(data, yaml::go::JSON_WINDOW);
    let port: Vec<Value> = port.into_iter().map(|d| d.value).collect();
    assert!(docs == port, "documents differ for {data:?}");
    assert_eq!(
        err.map(|e| e.go_message().to_string()),
        port_err.map(|e| e.message),
        "{data:?}"
    );
});
