//! Real binaries of other architectures for multi-platform image tests: Debian's static
//! busybox for arm64 and s390x, which `scripts/test.sh` fetches with
//! `dpkg --add-architecture <arch> && apt-get update && apt-get download busybox-static:<arch>`
//! and unpacks under `target/foreign-elf/<arch>/` (or the directory `OLM_FOREIGN_ELF_DIR`
//! names). A test crate that uses it also declares `mod registry` (support/registry.rs),
//! whose prerequisite rules it follows.

#![allow(dead_code)]

use std::path::PathBuf;

use crate::registry::prerequisite;

fn root() -> PathBuf {
    match std::env::var_os("OLM_FOREIGN_ELF_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/foreign-elf"),
    }
}

/// The static busybox of Debian architecture `arch`, or `None` after
/// [`prerequisite::missing`] (a failure under CI).
pub fn busybox(arch: &str) -> Option<PathBuf> {
    let path = root().join(arch).join("bin/busybox");
    if path.is_file() {
        Some(path)
    } else {
        prerequisite::missing(&format!(
            "{}: no {arch} busybox (scripts/test.sh fetches it: apt-get download busybox-static:{arch})",
            path.display()
        ));
        None
    }
}
