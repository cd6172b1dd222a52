//! The FBC loader and validator on arbitrary bytes: must return an error or a report, never
//! panic. The first byte picks the file name's extension (irrelevant to opm, which sniffs
//! JSON by its first non-space byte, but kept to exercise both paths equally).
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use olm_bundler::catalog::{load, validate};

fuzz_target!(|data: &[u8]| {
    let name = if data.first().is_some_and(|b| b % 2 == 0) {
        "catalog.json"
    } else {
        "catalog.yaml"
    };
    if let Ok(cfg) = load::load_bytes(Path::new(name), data) {
        let report = validate::validate(&cfg);
        let _ = report.to_text();
        let _ = cfg.to_json();
        if !report.has_errors() {
            let _ = olm_bundler::catalog::model::Model::from_declcfg(&cfg);
        }
    }
});
