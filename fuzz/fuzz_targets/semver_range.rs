//! The blang range and version parsers on arbitrary text: never panic, and a range that
//! parses can be evaluated against any version that parses.
#![no_main]

use libfuzzer_sys::fuzz_target;
use olm_bundler::grammar::semver_range::{Range, parse_version, parse_version_tolerant};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = std::str::from_utf8(data) else { return };
    let (range, version) = s.split_once('\n').unwrap_or((s, "1.2.3"));
    let v = parse_version(version).ok();
    let _ = parse_version_tolerant(version);
    if let Ok(r) = Range::parse(range) {
        let _ = r.normalized();
        if let Some(v) = v {
            let _ = r.contains(&v);
        }
    }
});
