//! Runs the `olm` binary the way the end-to-end tests do: its output is echoed to the test's
//! log with the command line, so a failing step shows what the user would have seen.

use std::process::{Command, Output};

pub fn olm(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .output()
        .expect("run olm");
    eprintln!(
        "$ olm {}\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
