//! The parser of paths named by outside data (`confined::RelPath`) on arbitrary bytes: what it
//! accepts is plain names only, reads back as itself, and opened through a confined tree never
//! reaches a canary outside its root (`bundler/tests/support/rel_path_check.rs`, which the test
//! suite also runs on the seeds in `seeds/rel_path`: labels and archive paths that climb out).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../bundler/tests/support/rel_path_check.rs"]
mod rel_path_check;

fuzz_target!(|data: &[u8]| rel_path_check::check(data));
