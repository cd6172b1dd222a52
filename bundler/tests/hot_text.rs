//! The `olm` binary is linked with its everyday code grouped in `.text.hot`
//! (bundler/link/hot-text.ld, through build.rs) where that applies, and that list still names
//! the code: a list gone stale costs resident memory silently, so this is where it shows.
//! Where it does not apply (debug builds, other targets, `OLM_NO_HOT_TEXT`, a linker that
//! refuses the script), a build must still link: the decision and the linker probe build.rs
//! uses (bundler/link/hot_text.rs, included here as it is) are checked, and a small crate is
//! built with a linker that refuses the script.

#[path = "support/prerequisite.rs"]
mod prerequisite;

#[allow(dead_code)]
#[path = "../link/hot_text.rs"]
mod hot_text;

use std::path::{Path, PathBuf};
use std::process::Command;

use hot_text::Skip;

/// The output of a binutils tool, or `None` (after the prerequisite verdict) when it is missing.
fn tool(name: &str, args: &[&str]) -> Option<String> {
    match Command::new(name).args(args).output() {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => panic!(
            "{name} {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(_) => {
            prerequisite::missing(&format!("{name} (binutils)"));
            None
        }
    }
}

/// `*` matches any run of characters; everything else itself.
fn glob(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

#[test]
fn glob_matches_stars_only() {
    assert!(glob("_RNvCs*_3olm4main*", "_RNvCsabc_3olm4main"));
    assert!(glob("_RNvCs*_3olm4main*", "_RNvCsabc_3olm4main.llvm.12"));
    assert!(!glob("_RNvCs*_3olm4main*", "_RNvCsabc_3olm4mai"));
    assert!(!glob("_RNvCs*_3olm4main", "_RNvCsabc_3olm4main2"));
    assert!(glob("a*b*c", "a-b-b-c"));
    assert!(!glob("a*b*c", "a-c"));
}

#[test]
fn everyday_code_is_linked_together() {
    // What build.rs decided for this build of olm.
    let decision = env!("OLM_HOT_TEXT");
    if decision != "applied" {
        eprintln!(
            "SKIP: olm was linked without link/hot-text.ld ({decision}); `cargo test --release` checks it"
        );
        return;
    }
    let olm = env!("CARGO_BIN_EXE_olm");
    let Some(sections) = tool("readelf", &["-SW", olm]) else {
        return;
    };
    let Some(symbols) = tool("nm", &["--defined-only", olm]) else {
        return;
    };
    // `[Nr] Name Type Address Off Size ...`
    let hot = sections
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let at = f.iter().position(|w| *w == ".text.hot")?;
            let addr = u64::from_str_radix(f.get(at + 2)?, 16).ok()?;
            let size = u64::from_str_radix(f.get(at + 4)?, 16).ok()?;
            Some(addr..addr + size)
        })
        .expect("olm has no .text.hot section: build.rs did not pass link/hot-text.ld");
    if !sections.contains(".symtab") {
        eprintln!(
            "SKIP: olm is stripped, so only its .text.hot section is checked \
             (CARGO_PROFILE_RELEASE_STRIP=false keeps the symbols the rest reads)"
        );
        return;
    }
    let symbols: Vec<(u64, &str)> = symbols
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let addr = u64::from_str_radix(f.next()?, 16).ok()?;
            let kind = f.next()?;
            let name = f.next()?;
            matches!(kind, "t" | "T" | "W" | "w").then_some((addr, name))
        })
        .collect();

    // The block YAML reader and the per-bundle checks are where `catalog validate` spends
    // its time; they must sit in the hot section.
    for needle in ["11olm_bundler4yaml5block", "8validate12check_bundle"] {
        let found: Vec<_> = symbols.iter().filter(|(_, n)| n.contains(needle)).collect();
        assert!(!found.is_empty(), "no symbol contains {needle}");
        assert!(
            found.iter().any(|(a, _)| hot.contains(a)),
            "{needle}: none of {} functions is in .text.hot",
            found.len()
        );
    }

    // Most patterns still name a function of this binary. Not all: a debug build keeps
    // functions a release build inlines, and shares generic instances across crates, so
    // some names differ by profile.
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("link/hot-text.ld"))
            .unwrap();
    let patterns: Vec<&str> = script
        .lines()
        .filter_map(|l| l.trim().strip_prefix("*(.text."))
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert!(patterns.len() > 500, "{} patterns", patterns.len());
    let mut names: Vec<&str> = symbols.iter().map(|(_, n)| *n).collect();
    names.sort_unstable();
    let named = patterns
        .iter()
        .filter(|p| {
            // Only names that start as the pattern does can match it.
            let prefix = p.split('*').next().unwrap_or("");
            let from = names.partition_point(|n| *n < prefix);
            names[from..]
                .iter()
                .take_while(|n| n.starts_with(prefix))
                .any(|n| glob(p, n))
        })
        .count();
    assert!(
        named * 100 >= patterns.len() * 75,
        "only {named} of {} patterns in link/hot-text.ld name a function of olm: run \
         bundler/benches/hot_text.sh",
        patterns.len()
    );
}

#[test]
fn the_script_applies_to_release_and_bench_builds_on_linux_unless_opted_out() {
    assert_eq!(hot_text::wanted("linux", "release", None), Ok(()));
    assert_eq!(hot_text::wanted("linux", "release", Some("")), Ok(()));
    assert_eq!(hot_text::wanted("linux", "release", Some("0")), Ok(()));
    assert_eq!(
        hot_text::wanted("linux", "release", Some("1")),
        Err(Skip::OptedOut)
    );
    assert_eq!(
        hot_text::wanted("linux", "debug", None),
        Err(Skip::Profile("debug".into()))
    );
    assert_eq!(
        hot_text::wanted("macos", "release", None),
        Err(Skip::NotLinux)
    );
}

/// The rustc beside the cargo that builds these tests.
fn rustc() -> PathBuf {
    let beside = Path::new(env!("CARGO")).with_file_name("rustc");
    if beside.is_file() {
        beside
    } else {
        PathBuf::from("rustc")
    }
}

/// The rustc flag that links with a linker refusing the script's `INSERT BEFORE`: mold or
/// gold, whichever is installed (`None`, after the prerequisite verdict, when neither is).
fn refusing_linker() -> Option<String> {
    for (tool, name) in [("mold", "mold"), ("ld.gold", "gold")] {
        let found = Command::new(tool).arg("--version").output();
        if found.is_ok_and(|o| o.status.success()) {
            return Some(format!("-Clink-arg=-fuse-ld={name}"));
        }
    }
    prerequisite::missing("mold or ld.gold (a linker without INSERT BEFORE)");
    None
}

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("link/hot-text.ld")
}

#[test]
fn the_probe_accepts_this_linker_and_refuses_one_without_insert() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let probe = |flags: &[String], dir: &str| {
        hot_text::linker_takes(
            &rustc(),
            None,
            flags,
            None,
            &script(),
            &scratch.path().join(dir),
        )
    };
    assert_eq!(
        probe(&[], "default"),
        Ok(()),
        "rustc's default linker takes the script"
    );
    let Some(flag) = refusing_linker() else {
        return;
    };
    match probe(std::slice::from_ref(&flag), "refusing") {
        Err(Skip::Linker(why)) => assert!(!why.is_empty()),
        other => panic!("{flag}: {other:?}"),
    }
}

/// Builds a crate whose build script makes build.rs's decision (the same file) for a binary
/// that prints it, with `rustflags` and `envs`: cargo's stderr and what the binary printed.
fn build_small_crate(dir: &Path, rustflags: &str, envs: &[(&str, &str)]) -> (String, String) {
    let link = Path::new(env!("CARGO_MANIFEST_DIR")).join("link");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"small\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("build.rs"),
        format!(
            "#[path = {:?}]\nmod hot_text;\nfn main() {{ hot_text::configure(std::path::Path::new({:?}), \"small\"); }}\n",
            link.join("hot_text.rs"),
            script()
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() { println!(\"{}\", env!(\"OLM_HOT_TEXT\")); }\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO"))
        .current_dir(dir)
        .args(["build", "--release", "--offline"])
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("RUSTFLAGS", rustflags)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("OLM_NO_HOT_TEXT")
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "the build failed:\n{stderr}");
    let ran = Command::new(dir.join("target/release/small"))
        .output()
        .unwrap();
    assert!(ran.status.success());
    (
        stderr,
        String::from_utf8_lossy(&ran.stdout).trim().to_string(),
    )
}

#[test]
fn a_release_build_links_with_a_linker_that_refuses_the_script_or_with_it_disabled() {
    if !cfg!(target_os = "linux") {
        return;
    }
    let Some(flag) = refusing_linker() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();

    // The linker refuses the script: the build links without it and says so.
    let (stderr, printed) = build_small_crate(&scratch.path().join("probed"), &flag, &[]);
    assert!(
        printed.starts_with("not applied: the linker refused it"),
        "{printed}"
    );
    assert!(stderr.contains("small is linked without"), "{stderr}");

    // Disabled: no probe, no warning, it links.
    let envs = [("OLM_NO_HOT_TEXT", "1")];
    let (stderr, printed) = build_small_crate(&scratch.path().join("disabled"), &flag, &envs);
    assert_eq!(printed, "not applied: OLM_NO_HOT_TEXT is set");
    assert!(!stderr.contains("linked without"), "{stderr}");
}
