//! What a test does when a prerequisite is missing (a tool, a variable, a data folder): under
//! CI (`CI=true`) it fails, because a test that skips in CI is a test that cannot fail;
//! elsewhere it prints a visible `SKIP:` line (straight to stderr, past the test harness's
//! capture) and the caller returns early or takes its fallback.
//!
//! Cluster tests are the exception: those gated on `E2E_KUBECONFIG` (and the other `E2E_*`
//! variables) are opt-in and skip under CI too, since CI has no cluster: use [`skip_opt_in`].

#![allow(dead_code)]

use std::io::Write;

/// True under CI: `CI` is `true` (any case) or `1`, as CI services set it.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

fn say_skip(what: &str) {
    let _ = writeln!(std::io::stderr(), "SKIP: {what}");
}

/// A required prerequisite is missing: panics under CI, else prints `SKIP: <what>`.
#[track_caller]
pub fn missing(what: &str) {
    if in_ci() {
        panic!("test prerequisite missing under CI=true: {what} (outside CI this test skips)");
    }
    say_skip(what);
}

/// An opt-in prerequisite (a cluster through `E2E_*` variables) is not set: prints
/// `SKIP: <what>`, under CI too.
pub fn skip_opt_in(what: &str) {
    say_skip(what);
}

/// `../shared/data/<sub>` (or `$OLM_SHARED_DATA/<sub>`) when it holds `marker`; otherwise
/// the prerequisite is [`missing`] and `None`.
#[track_caller]
pub fn shared_data(sub: &str, marker: &str) -> Option<std::path::PathBuf> {
    use std::path::{Path, PathBuf};
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let found = [
        std::env::var_os("OLM_SHARED_DATA").map(PathBuf::from),
        Some(manifest.join("../../shared/data")),
        Some(manifest.join("../../../shared/data")),
    ]
    .into_iter()
    .flatten()
    .map(|p| p.join(sub))
    .find(|p| p.join(marker).is_file());
    if found.is_none() {
        missing(&format!(
            "../shared/data/{sub} (beside {})",
            manifest.display()
        ));
    }
    found
}
