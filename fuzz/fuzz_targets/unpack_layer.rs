//! The layer unpacker on arbitrary tar streams: whatever two layers hold, applying them must
//! never change anything outside the root, and every link left in the root must resolve
//! inside it when the host follows it (`bundler/tests/support/confinement.rs`, which the test
//! suite also runs on the seeds in `seeds/unpack_layer`: the hostile shapes of
//! `bundler/tests/hostile_images.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../../bundler/tests/support/confinement.rs"]
mod confinement;

fuzz_target!(|data: &[u8]| confinement::check_two_layers(data));
