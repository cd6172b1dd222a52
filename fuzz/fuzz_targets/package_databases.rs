//! The package databases and layer scans `olm check container` reads from an image: rpm
//! header blobs, a Berkeley DB `Packages` file, dpkg status text, and a layer tar. None may
//! panic or run unbounded on any input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use olm_bundler::certify::container::{dpkg, layers, rpm};

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = rpm::Header::parse(data) {
        let _ = h.package();
    }
    let _ = rpm::read_bdb(data);
    let _ = dpkg::parse_status(&String::from_utf8_lossy(data));
    let _ = layers::scan(data);
});
