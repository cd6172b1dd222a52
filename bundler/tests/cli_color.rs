//! Colour on stderr, with the real binary: none into a pipe or a file (CI logs, `2> log`),
//! colour on a terminal unless `NO_COLOR` is set, and `--color always|never` deciding
//! outright, as cargo's flag does. The terminal cases run the binary under `script`, which
//! gives it a pseudo-terminal.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::Path;
use std::process::Command;

const ESC: u8 = 0x1b;

/// A catalog whose package blob repeats a key: reading it logs a warning.
fn catalog(dir: &Path) {
    std::fs::write(
        dir.join("catalog.yaml"),
        "schema: olm.package\nname: a\nname: a\ndefaultChannel: s\n",
    )
    .unwrap();
}

fn olm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_olm"));
    c.env_remove("NO_COLOR").env_remove("RUST_LOG");
    c
}

/// What the binary writes to stderr through a pipe.
fn piped(dir: &Path, extra: &[&str], env: &[(&str, &str)]) -> Vec<u8> {
    let mut c = olm();
    c.args(extra)
        .args(["catalog", "render", "-o", "json"])
        .arg(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap().stderr
}

#[test]
fn no_escape_codes_into_a_pipe_or_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    catalog(tmp.path());
    let err = piped(tmp.path(), &[], &[]);
    let text = String::from_utf8_lossy(&err);
    assert!(text.contains("WARN"), "{text}");
    assert!(text.contains("mapping key \"name\" is repeated"), "{text}");
    assert!(!err.contains(&ESC), "{text:?}");

    // `2> file`: the same bytes.
    let log = tmp.path().join("log.txt");
    let file = std::fs::File::create(&log).unwrap();
    let status = olm()
        .args(["catalog", "render", "-o", "json"])
        .arg(tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(file)
        .status()
        .unwrap();
    assert!(status.code().is_some());
    let written = std::fs::read(&log).unwrap();
    assert!(String::from_utf8_lossy(&written).contains("WARN"));
    assert!(
        !written.contains(&ESC),
        "{:?}",
        String::from_utf8_lossy(&written)
    );

    // `--color never` too; `--color always` colours even a pipe, NO_COLOR or not.
    assert!(!piped(tmp.path(), &["--color", "never"], &[]).contains(&ESC));
    assert!(piped(tmp.path(), &["--color", "always"], &[]).contains(&ESC));
    assert!(piped(tmp.path(), &["--color", "always"], &[("NO_COLOR", "1")]).contains(&ESC));
}

#[test]
fn a_bad_color_value_is_a_usage_error() {
    let out = olm()
        .args(["--color", "sometimes", "catalog", "validate", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("auto") && text.contains("never"), "{text}");
}

/// What the binary writes when its stderr is a terminal (`script` gives it one; the
/// terminal's output is the file `script` writes).
fn on_a_terminal(dir: &Path, flags: &str, env: &[(&str, &str)]) -> Option<Vec<u8>> {
    if Command::new("script").arg("--version").output().is_err() {
        prerequisite::missing("script (util-linux), for a pseudo-terminal");
        return None;
    }
    let typescript = dir.join("typescript");
    let cmd = format!(
        "{} {flags} catalog render -o json {} >/dev/null",
        env!("CARGO_BIN_EXE_olm"),
        dir.display()
    );
    let mut c = Command::new("script");
    c.args(["-q", "-e", "-c", &cmd])
        .arg(&typescript)
        .env_remove("NO_COLOR")
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.status().unwrap();
    let out = std::fs::read(&typescript).unwrap();
    // `script` adds its own header and footer lines; the warning is what matters.
    let text = String::from_utf8_lossy(&out).to_string();
    assert!(text.contains("WARN"), "{text:?}");
    let line = text
        .lines()
        .find(|l| l.contains("is repeated"))
        .unwrap_or_default()
        .to_string();
    Some(line.into_bytes())
}

#[test]
fn colour_on_a_terminal_unless_no_color_or_never() {
    let tmp = tempfile::tempdir().unwrap();
    catalog(tmp.path());
    let Some(auto) = on_a_terminal(tmp.path(), "", &[]) else {
        return;
    };
    assert!(auto.contains(&ESC), "{:?}", String::from_utf8_lossy(&auto));
    let Some(no_color) = on_a_terminal(tmp.path(), "", &[("NO_COLOR", "1")]) else {
        return;
    };
    assert!(
        !no_color.contains(&ESC),
        "{:?}",
        String::from_utf8_lossy(&no_color)
    );
    let Some(empty) = on_a_terminal(tmp.path(), "", &[("NO_COLOR", "")]) else {
        return;
    };
    assert!(empty.contains(&ESC), "an empty NO_COLOR counts as unset");
    let Some(never) = on_a_terminal(tmp.path(), "--color never", &[]) else {
        return;
    };
    assert!(
        !never.contains(&ESC),
        "{:?}",
        String::from_utf8_lossy(&never)
    );
}
