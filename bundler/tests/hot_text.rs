//! The `olm` binary is linked with its everyday code grouped in `.text.hot`
//! (bundler/link/hot-text.ld, through build.rs), and that list still names the code: a list
//! gone stale costs resident memory silently, so this is where it shows.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::path::Path;
use std::process::Command;

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
    if !cfg!(target_os = "linux") {
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
