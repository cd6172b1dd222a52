//! The walls between the library's layers (docs/architecture.md), checked on the source: a
//! module may use the modules below it, never one beside or above it. Data flows one way:
//! grammar/yaml < image < bundle < catalog (and certify, beside it) < serve < deploy < hub < ops (release holds the release
//! config's data, beside catalog), and the CLI (in the binary) only calls ops and the domain.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module and the crate modules it may use.
const ALLOWED: &[(&str, &[&str])] = &[
    ("grammar", &[]),
    ("yaml", &[]),
    ("atomic_write", &["scratch"]),
    ("confined", &["scratch"]),
    ("parallel", &[]),
    ("scratch", &[]),
    ("reproducible", &["grammar"]),
    (
        "image",
        &[
            "grammar",
            "atomic_write",
            "confined",
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
            "confined",
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
            "confined",
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
            "confined",
            "parallel",
            "reproducible",
        ],
    ),
    (
        "certify",
        &[
            "bundle",
            "confined",
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
            "confined",
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
            "confined",
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
            "confined",
            "parallel",
            "reproducible",
            "scratch",
        ],
    ),
    (
        "ops",
        &[
            "certify",
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
            "confined",
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
/// library call and printing: at most 400 lines a file, under 3,700 in all (under 50 lines
/// for each of its 76 commands).
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
    assert!(total < 3700, "cli/ is {total} lines (under 3,700)");
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

/// The modules that read what an image or a mirror archive holds (or hand it on): every path
/// they name from outside data is a `confined::RelPath`, opened through a `confined::Tree`.
const READERS: &[&str] = &[
    "catalog/load.rs",
    "catalog/render.rs",
    "catalog/sqlite/mod.rs",
    "bundle/load.rs",
    "bundle/validate",
    "ops/catalog_source.rs",
    "ops/catalog_render.rs",
    "ops/bundle_source.rs",
    "ops/mirror/archive.rs",
    "ops/mirror/mod.rs",
    "deploy/bundle_catalog.rs",
    "image/transfer.rs",
];

/// Host file-system calls: in a reader, each is the caller's own path or a name of ours, and
/// says so with a `// host: <why>` comment on its line or the line above.
const HOST_CALLS: &[&str] = &[
    "File::open(",
    "File::create(",
    ".is_dir()",
    ".is_file()",
    ".exists()",
    ".is_symlink()",
    ".canonicalize()",
    "open_ambient_dir(",
    "tempdir_in(",
];

/// Whether the argument of a `.join(` is a name of ours: a string literal, or a constant
/// (`CATALOGS`, `archive::IMAGES`, `CACHE_DIR.trim_start_matches('/')`).
fn constant_argument(arg: &str) -> bool {
    let arg = arg.trim().trim_start_matches('&');
    if arg.starts_with('"') {
        return true;
    }
    let head: String = arg
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
        .collect();
    let last = head.rsplit("::").next().unwrap_or_default();
    let is_const = !last.is_empty()
        && last.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && last
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    let rest = &arg[head.len()..];
    is_const && (rest.is_empty() || rest.starts_with('.'))
}

/// The arguments of every `.join(` on `line`.
fn join_arguments(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find(".join(") {
        let args = &rest[i + ".join(".len()..];
        let mut depth = 0;
        let mut end = args.len();
        for (j, c) in args.char_indices() {
            match c {
                '(' => depth += 1,
                ')' if depth == 0 => {
                    end = j;
                    break;
                }
                ')' => depth -= 1,
                _ => {}
            }
        }
        out.push(&args[..end]);
        rest = args;
    }
    out
}

/// What the rule finds wrong on the code lines of one file (`reader`: one of [`READERS`]).
/// A line is excused by `// host: <why>` on it; a `// host: <why>` line above a statement
/// excuses the statement (up to a line ending in `;`, `{` or `}`).
fn host_path_findings(text: &str, reader: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut excusing = false;
    for (n, line) in text.lines().enumerate() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("// host:") {
            excusing = true;
            continue;
        }
        let excused = excusing || line.contains("// host:");
        if excusing && !code.starts_with("//") {
            excusing = !code.trim_end().ends_with([';', '{', '}']);
        }
        if code.starts_with("//") || excused {
            continue;
        }
        let code = code.split(" // ").next().unwrap_or(code);
        let mut why = Vec::new();
        // Anywhere: an image's files or labels never meet a host path.
        let builds = [".join(", "Path::new(", "PathBuf::from("];
        let image_data = [".rootfs", "rootfs.", "labels"];
        if image_data.iter().any(|d| code.contains(d)) && builds.iter().any(|b| code.contains(b)) {
            why.push("an image's rootfs or label made into a host path (use confined::Tree)");
        }
        if reader {
            if join_arguments(code).iter().any(|a| !constant_argument(a)) {
                why.push(
                    "`.join(` of a name that is not a constant of ours (use confined::RelPath)",
                );
            }
            // `std::fs::read(..)` and the like; the `std::fs::File` type alone is no call.
            let fs_call = code
                .match_indices("std::fs::")
                .any(|(i, m)| code[i + m.len()..].starts_with(|c: char| c.is_ascii_lowercase()));
            if fs_call || HOST_CALLS.iter().any(|c| code.contains(c)) {
                why.push("a host file-system call (read through confined::Tree)");
            }
        }
        for w in why {
            out.push(format!("{}: {w}: {}", n + 1, code.trim()));
        }
    }
    out
}

/// docs/architecture.md's rule: outside data never becomes a `PathBuf` joined onto a host
/// path. In the modules that read images and archives, a host path or a `.join(` of
/// anything but a constant of ours must say why it is the caller's own (`// host: ...`);
/// everywhere, an image's rootfs or labels never meet `.join(`, `Path::new` or
/// `PathBuf::from`. `confined/` (the one place that opens host paths for the rest) and the
/// unpacker (which resolves entry names through its own handles) are the exceptions.
#[test]
fn outside_data_never_joins_a_host_path() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut broken = Vec::new();
    let mut readers_seen = BTreeSet::new();
    for f in files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel.starts_with("confined/") || rel.starts_with("image/unpack/") {
            continue;
        }
        let reader = READERS.iter().find(|r| rel.starts_with(*r));
        if let Some(r) = reader {
            readers_seen.insert(*r);
        }
        let text = std::fs::read_to_string(&f).unwrap();
        for finding in host_path_findings(&text, reader.is_some()) {
            broken.push(format!("{rel}:{finding}"));
        }
    }
    let missing: Vec<_> = READERS
        .iter()
        .filter(|r| !readers_seen.contains(*r))
        .collect();
    assert!(missing.is_empty(), "READERS names no file: {missing:?}");
    assert!(
        broken.is_empty(),
        "outside data near a host path (docs/architecture.md, \"Outside data\"):\n{}",
        broken.join("\n")
    );
}

/// The rule bites on the shapes it exists for (the configs label joined onto the rootfs, an
/// archive's catalogDir joined onto the archive) and lets constants and excused lines pass.
#[test]
fn the_host_path_rule_catches_the_old_joins() {
    let bad = [
        "        let configs = self.pulled.rootfs.join(label.trim_start_matches('/'));",
        "    let root = pulled.rootfs.join(configs.trim_start_matches('/'));",
        "    let catalog_dir = dir.join(&entry.catalog_dir);",
        "        let p = Path::new(&labels[KEY]);",
        "    let text = std::fs::read_to_string(path)?;",
        "    let f = std::fs::File::open(root.join(name))?;",
        "    if dir.join(\"manifests\").is_dir() {",
        "    // host: one statement\n    let a = x.exists();\n    let b = y.exists();",
    ];
    for line in bad {
        assert!(
            !host_path_findings(line, true).is_empty(),
            "not caught: {line}"
        );
    }
    assert!(!host_path_findings(bad[0], false).is_empty());
    let good = [
        "    let layout = Layout::new(dir.join(archive::IMAGES));",
        "    let c = CACHE_DIR.trim_start_matches('/'); let x = a.join(\", \");",
        "    let m = dir.join(MANIFEST); // host: the archive the user named",
        "    // host: the user's own directory\n    if path.is_dir() {",
        "    // host: the user's own argument\n    a.b()\n        || x.exists()\n}",
        "    let cfg = load::load_tree(&tree)?;",
        "    let ca = PathBuf::from(rootfs::HOST_CA_BUNDLE); fn f(x: &std::fs::File) {}",
        "#[cfg(test)]\n    let t = std::fs::read(p);",
    ];
    for text in good {
        assert_eq!(
            host_path_findings(text, true),
            Vec::<String>::new(),
            "{text}"
        );
    }
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
