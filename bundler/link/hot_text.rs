//! Whether `olm` is linked with `link/hot-text.ld` (its everyday code grouped at the start of
//! the text), decided by build.rs and included as it is by `tests/hot_text.rs`.
//!
//! The grouping is a memory optimisation for the binaries people run, so it applies to the
//! release and bench profiles on Linux only, never when `OLM_NO_HOT_TEXT` is set (to anything
//! but `0` or nothing), and only when the linker of the build takes the script: GNU ld and lld
//! take its `INSERT BEFORE .text`, gold and mold refuse it. The linker is asked, not guessed:
//! an empty program is linked with the script through the same `rustc`, target, flags and
//! linker as the build. A build whose linker refuses it links without it, with a warning.

use std::path::Path;
use std::process::Command;

/// Why the script is left out of a build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skip {
    NotLinux,
    /// A profile that inherits from `dev` (cargo's `PROFILE` is then `debug`).
    Profile(String),
    OptedOut,
    /// The linker refused the script: its first error line.
    Linker(String),
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::NotLinux => f.write_str("not a Linux target"),
            Skip::Profile(p) => write!(f, "the {p} profile (only release and bench use it)"),
            Skip::OptedOut => f.write_str("OLM_NO_HOT_TEXT is set"),
            Skip::Linker(e) => write!(f, "the linker refused it: {e}"),
        }
    }
}

/// The checks that need no linker: the target OS, cargo's `PROFILE` (`release` for the
/// release and bench profiles) and the opt-out variable.
pub fn wanted(target_os: &str, profile: &str, opt_out: Option<&str>) -> Result<(), Skip> {
    if target_os != "linux" {
        return Err(Skip::NotLinux);
    }
    if profile != "release" {
        return Err(Skip::Profile(profile.to_string()));
    }
    if opt_out.is_some_and(|v| !v.is_empty() && v != "0") {
        return Err(Skip::OptedOut);
    }
    Ok(())
}

/// Links an empty program with `script` in `scratch`, through `rustc` for `target` (the host
/// when `None`) with the build's `rustflags` and `linker`: `Ok` when the linker takes the
/// script.
pub fn linker_takes(
    rustc: &Path,
    target: Option<&str>,
    rustflags: &[String],
    linker: Option<&str>,
    script: &Path,
    scratch: &Path,
) -> Result<(), Skip> {
    let failed = |e: String| Skip::Linker(e);
    std::fs::create_dir_all(scratch).map_err(|e| failed(e.to_string()))?;
    let main = scratch.join("probe.rs");
    std::fs::write(&main, "fn main() {}\n").map_err(|e| failed(e.to_string()))?;
    let mut cmd = Command::new(rustc);
    cmd.args(["--crate-type", "bin", "--edition", "2021"])
        .args(target.map(|t| ["--target", t]).into_iter().flatten())
        .args(rustflags)
        .arg(format!("-Clink-arg=-Wl,-T,{}", script.display()))
        .arg("-o")
        .arg(scratch.join("probe"))
        .arg(&main);
    if let Some(linker) = linker {
        cmd.arg(format!("-Clinker={linker}"));
    }
    let out = cmd
        .output()
        .map_err(|e| failed(format!("cannot run rustc: {e}")))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The linker's own words, rather than rustc's "linking with `cc` failed".
    let line = stderr
        .lines()
        .map(|l| l.trim().trim_start_matches("= note:").trim())
        .find(|l| {
            l.contains("error")
                && !l.starts_with("error: linking")
                && !l.starts_with("error: aborting")
        })
        .unwrap_or("linking failed");
    Err(failed(line.chars().take(200).collect()))
}

/// What build.rs does for the binary `bin`: decides from cargo's environment, passes the
/// script to the linker when it applies, and records the decision as `OLM_HOT_TEXT`
/// (`applied`, or why not) for the package's code and tests to read.
pub fn configure(script: &Path, bin: &str) {
    println!("cargo:rerun-if-changed={}", script.display());
    println!("cargo:rerun-if-env-changed=OLM_NO_HOT_TEXT");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let decision = wanted(
        &var("CARGO_CFG_TARGET_OS"),
        &var("PROFILE"),
        std::env::var("OLM_NO_HOT_TEXT").ok().as_deref(),
    )
    .and_then(|()| {
        let rustflags: Vec<String> = var("CARGO_ENCODED_RUSTFLAGS")
            .split('\x1f')
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        let linker = std::env::var("RUSTC_LINKER").ok();
        let scratch = Path::new(&var("OUT_DIR")).join("hot-text-probe");
        let rustc = var("RUSTC");
        linker_takes(
            Path::new(&rustc),
            Some(&var("TARGET")),
            &rustflags,
            linker.as_deref(),
            script,
            &scratch,
        )
    });
    match decision {
        Ok(()) => {
            println!("cargo:rustc-link-arg-bin={bin}=-Wl,-T,{}", script.display());
            println!("cargo:rustc-env=OLM_HOT_TEXT=applied");
        }
        Err(skip) => {
            if let Skip::Linker(_) = skip {
                println!(
                    "cargo:warning={bin} is linked without {} ({skip}); it works the same, its \
                     code is only not grouped. OLM_NO_HOT_TEXT=1 skips this check.",
                    script.display()
                );
            }
            let reason = skip.to_string().replace(['\n', '\r'], " ");
            println!("cargo:rustc-env=OLM_HOT_TEXT=not applied: {reason}");
        }
    }
}
