//! The walls between the library's layers (docs/architecture.md), checked on the source: a
//! module may use the modules below it, never one beside or above it. Data flows one way:
//! grammar/yaml < image < bundle < catalog < serve < deploy < hub < ops (release holds the release
//! config's data, beside catalog), and the CLI (in the binary) only calls ops and the domain.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module and the crate modules it may use.
const ALLOWED: &[(&str, &[&str])] = &[
    ("grammar", &[]),
    ("yaml", &[]),
    ("atomic_write", &["scratch"]),
    ("parallel", &[]),
    ("scratch", &[]),
    ("reproducible", &["grammar"]),
    (
        "image",
        &[
            "grammar",
            "atomic_write",
            "parallel",
            "reproducible",
            "scratch",
        ],
    ),
    (
        "bundle",
        &[
            "image",
            "grammar",
            "yaml",
            "atomic_write",
            "parallel",
            "reproducible",
            "scratch",
        ],
    ),
    (
        "catalog",
        &[
            "bundle",
            "image",
            "grammar",
            "yaml",
            "atomic_write",
            "parallel",
            "reproducible",
            "scratch",
        ],
    ),
    (
        "release",
        &[
            "bundle",
            "image",
            "grammar",
            "yaml",
            "atomic_write",
            "parallel",
            "reproducible",
            "scratch",
        ],
    ),
    (
        "serve",
        &[
            "catalog",
            "bundle",
            "image",
            "grammar",
            "yaml",
            "atomic_write",
            "parallel",
            "reproducible",
            "scratch",
        ],
    ),
    (
        "deploy",
        &[
            "serve",
            "catalog",
            "bundle",
            "image",
            "grammar",
            "yaml",
            "atomic_write",
            "parallel",
            "reproducible",
            "scratch",
        ],
    ),
    (
        "hub",
        &[
            "deploy",
            "serve",
            "catalog",
            "bundle",
            "image",
            "grammar",
            "yaml",
            "atomic_write",
            "parallel",
            "reproducible",
            "scratch",
        ],
    ),
    (
        "ops",
        &[
            "hub",
            "deploy",
            "serve",
            "catalog",
            "release",
            "bundle",
            "image",
            "grammar",
            "yaml",
            "atomic_write",
            "parallel",
            "reproducible",
            "scratch",
        ],
    ),
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            rust_files(&entry.unwrap().path(), out);
        }
    } else if path.is_file() && path.extension().is_some_and(|e| e == "rs") {
        out.push(path.to_path_buf());
    }
}

/// The top-level crate modules a file names: `crate::x::...` and `use crate::{x, y::z}`.
fn crate_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            // Top-level names of the group: the first identifier of each comma-separated item
            // at nesting depth 0.
            let mut depth = 0;
            let mut item_start = true;
            for (j, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && (c.is_ascii_alphanumeric() || c == '_') => {
                        out.insert(ident(&group[j..]));
                        item_start = false;
                    }
                    _ => {}
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn every_layer_uses_only_the_layers_below_it() {
    let root = src();
    let mut broken = Vec::new();
    for (module, allowed) in ALLOWED {
        let mut files = Vec::new();
        rust_files(&root.join(module), &mut files);
        rust_files(&root.join(format!("{module}.rs")), &mut files);
        assert!(!files.is_empty(), "no source for module {module}");
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            for used in crate_modules(&text) {
                let known = ALLOWED.iter().any(|(m, _)| *m == used);
                if known && used != *module && !allowed.contains(&used.as_str()) {
                    broken.push(format!(
                        "{}: uses crate::{used}, above or beside {module}",
                        f.strip_prefix(&root).unwrap().display()
                    ));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "layer walls broken:\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_library_module_has_a_place_in_the_layers() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(name) = line.strip_prefix("pub mod ") {
            let name = name.trim_end_matches(';');
            assert!(
                ALLOWED.iter().any(|(m, _)| *m == name),
                "lib.rs declares {name}, which this test does not place in a layer"
            );
        }
    }
}

#[test]
fn the_scanner_sees_grouped_and_nested_paths() {
    let found = crate_modules(
        "use crate::{bundle::load, catalog::{model, declcfg}};\nlet x = crate::serve::store::X;",
    );
    let found: Vec<&str> = found.iter().map(String::as_str).collect();
    assert_eq!(found, ["bundle", "catalog", "serve"]);
}

/// The CLI's files (`src/cli/`): `mod.rs` holds the command tree and names every command
/// file; a command file uses only the shared `args` (flag groups) and `output` (printing,
/// exit codes), never another command's file, and holds no more than clap structs, one
/// library call and printing: at most 400 lines a file, under 3,500 in all.
#[test]
fn cli_files_import_no_other_command_file_and_stay_thin() {
    const SHARED: &[&str] = &["args", "catalog_args", "output"];
    let dir = src().join("cli");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    let mut broken = Vec::new();
    let mut total = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let lines = text.lines().count();
        total += lines;
        if lines > 400 {
            broken.push(format!("cli/{name}: {lines} lines (at most 400)"));
        }
        if name == "mod.rs" {
            continue;
        }
        let mut rest = text.as_str();
        while let Some(i) = rest.find("super::") {
            rest = &rest[i + "super::".len()..];
            let used: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !SHARED.contains(&used.as_str()) {
                broken.push(format!("cli/{name}: uses super::{used}"));
            }
        }
    }
    assert!(total < 3500, "cli/ is {total} lines (under 3,500)");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// The catalog server's runtime (`serve/runtime/`) reads only the index, the payload file and
/// the protocol types: no YAML, no catalog loader or model, nothing of the index build. Its
/// one use of the catalog layer is the JSON shape of an `olm.csv.metadata` value
/// (`catalog::property::CsvMetadata`), which stub CSVs are made of per request.
#[test]
fn the_serve_runtime_reads_no_catalog_after_start_up() {
    let root = src().join("serve/runtime");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(!files.is_empty());
    let allowed = [
        "crate::serve::proto",
        "crate::serve::runtime",
        "crate::grammar",
    ];
    let mut broken = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        // Code only: doc comments may point at the index build.
        let text: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let text = text.replace("crate::catalog::property::CsvMetadata", "");
        let mut rest = text.as_str();
        while let Some(i) = rest.find("crate::") {
            let path: String = rest[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            if !allowed.iter().any(|a| path.starts_with(a)) {
                broken.push(format!("{}: {path}", f.display()));
            }
            rest = &rest[i + "crate::".len()..];
        }
        if text.contains("serde_saphyr") || text.contains("super::super::index") {
            broken.push(format!("{}: reads YAML or the index build", f.display()));
        }
    }
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

/// Temporary space is made in one place (`scratch`): private, random-named, removed on an
/// interrupt. Library code outside it (tests apart) makes no temporary directory of its own
/// and builds no name from a fixed word in `$TMPDIR` or from the process id.
#[test]
fn temporary_space_comes_only_from_scratch() {
    const FORBIDDEN: &[&str] = &[
        "tempfile::tempdir()",
        "TempDir::new",
        "NamedTempFile::new()",
        "process::id()",
        "temp_dir().join(",
        "mkdtemp",
    ];
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        if rel == "scratch.rs" || rel.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        // Unit tests sit at the end of a file, after `#[cfg(test)]`.
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        for word in FORBIDDEN {
            if code.contains(word) {
                found.push(format!("{rel}: {word} (use crate::scratch)"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "temporary space made outside scratch:\n{}",
        found.join("\n")
    );
}
