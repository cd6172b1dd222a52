//! What scorecard reads from a bundle or the command line, on arbitrary bytes: the label
//! selector, the scorecard configuration and a CSV's `alm-examples`. Each must return a value
//! or an error, never panic. The first byte picks the input.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use olm_bundler::bundle::scorecard::{builtin, config};
use olm_bundler::grammar::label_selector;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    match pick % 3 {
        0 => {
            if let Ok(sel) = label_selector::parse(text) {
                let labels = [("suite".to_string(), "olm".to_string())].into_iter().collect();
                let _ = sel.matches(&labels);
            }
        }
        1 => {
            let _ = config::parse(Path::new("config.yaml"), text);
        }
        _ => {
            let csv = serde_json::json!({"metadata": {"annotations": {"alm-examples": text}}});
            let _ = builtin::crs(&csv);
        }
    }
});
