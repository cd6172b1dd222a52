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
