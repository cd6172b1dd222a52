//! Differential: `olm` against what opm 1.73.0 and operator-framework/api's validators did on
//! their own test fixtures, every case of ../shared/data/peer-fixtures/expected/cases.jsonl
//! (its README describes the cases and the reference tools' quirks).
//!
//! Each case runs the `olm` counterpart of the reference command, from the fixtures' root with
//! the same relative input, several at a time:
//!
//! | kind | reference | olm |
//! |---|---|---|
//! | `render`, `render-yaml` | `opm render IN -o json\|yaml` | `olm catalog render IN -o json\|yaml` |
//! | `template` | `opm alpha render-template IN -o json` | `olm catalog template IN -o json` |
//! | `validate-fbc` | `opm validate IN` | `olm catalog validate IN` |
//! | `bundle-validate` | `bundle-validate IN` | `olm bundle validate IN` |
//! | `bundle-validate-optional-all` | `bundle-validate -optional all IN` | `olm bundle validate -s all IN` |
//!
//! Every case must give the same verdict (success or failure). Where the reference succeeded
//! with output (renders, templates), the output must be byte-identical; where its output
//! order varies from run to run (`unstable`), the blobs are compared as a multiset, each blob
//! byte for byte. A failing render names its input and writes nothing. For the validators,
//! every problem opm's bundle format check reported (`Bundle validation errors: a,b`) must be
//! among `olm`'s errors.
//!
//! A case decided differently on purpose is in [`ALLOWED`] with its reason; docs/catalog.md
//! says what differs. An allowed case that agrees fails the test too, so the list only holds
//! what still differs. No case is skipped.

#[path = "support/prerequisite.rs"]
mod prerequisite;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// Cases `olm` decides differently on purpose, with the reason.
const ALLOWED: &[(&str, &str)] = &[];

fn peer_fixtures() -> Option<PathBuf> {
    prerequisite::shared_data("peer-fixtures", "expected/cases.jsonl")
}

fn gunzip(path: &Path) -> Vec<u8> {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(f)
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    out
}

struct Case {
    id: String,
    kind: String,
    variant: String,
    input: String,
    ok: bool,
    stdout_file: Option<String>,
    messages_file: Option<String>,
    unstable: bool,
}

fn cases(root: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(root.join("expected/cases.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
            Case {
                id: s("id").unwrap(),
                kind: s("kind").unwrap(),
                variant: s("variant").unwrap(),
                input: s("input").unwrap(),
                ok: v["exit"].as_i64() == Some(0),
                stdout_file: s("stdout_file"),
                messages_file: s("messages_file"),
                unstable: v["unstable"].as_bool().unwrap_or(false),
            }
        })
        .collect()
}

/// The `olm` command for a case.
fn olm_args(kind: &str, input: &str) -> Vec<String> {
    let args: &[&str] = match kind {
        "render" => &["catalog", "render", input, "-o", "json"],
        "render-yaml" => &["catalog", "render", input, "-o", "yaml"],
        "template" => &["catalog", "template", input, "-o", "json"],
        "validate-fbc" => &["catalog", "validate", input],
        "bundle-validate" => &["bundle", "validate", "-o", "json", input],
        "bundle-validate-optional-all" => &["bundle", "validate", "-o", "json", "-s", "all", input],
        other => panic!("unknown case kind {other:?}: extend this test"),
    };
    args.iter().map(|s| s.to_string()).collect()
}

/// The blobs of an `opm render` output, each as its text: JSON blobs end at a `}` line,
/// YAML documents start at `---`.
fn blobs(out: &[u8], yaml: bool) -> Vec<String> {
    let text = String::from_utf8_lossy(out);
    let mut blobs = Vec::new();
    let mut cur = String::new();
    for line in text.split_inclusive('\n') {
        if yaml && line == "---\n" && !cur.is_empty() {
            blobs.push(std::mem::take(&mut cur));
        }
        cur.push_str(line);
        if !yaml && line == "}\n" {
            blobs.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        blobs.push(cur);
    }
    blobs.sort();
    blobs
}

/// The first line where two outputs differ.
fn first_difference(ours: &[u8], theirs: &[u8]) -> String {
    let (a, b) = (
        String::from_utf8_lossy(ours),
        String::from_utf8_lossy(theirs),
    );
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            let cut = |s: &str| s.chars().take(160).collect::<String>();
            return format!("line {}: olm {:?}, reference {:?}", i + 1, cut(x), cut(y));
        }
    }
    format!(
        "olm wrote {} bytes, the reference {}",
        ours.len(),
        theirs.len()
    )
}

/// The problems opm's bundle format check reported (`... Bundle validation errors: a,b`).
fn format_check_items(messages: &str) -> Vec<String> {
    messages
        .lines()
        .filter_map(|l| l.split_once("Bundle validation errors: "))
        .flat_map(|(_, items)| items.split(',').map(str::to_string))
        .collect()
}

/// Runs one case; `Err` says how `olm` differs from the reference.
fn compare(root: &Path, c: &Case) -> Result<(), String> {
    // opm migrates a database in place: work on a copy.
    let scratch = tempfile::tempdir().unwrap();
    let input = if c.variant == "sqlite" {
        let copy = scratch
            .path()
            .join(Path::new(&c.input).file_name().unwrap());
        std::fs::copy(root.join(&c.input), &copy).unwrap();
        copy.to_string_lossy().into_owned()
    } else {
        c.input.clone()
    };
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(olm_args(&c.kind, &input))
        .current_dir(root)
        .env("HOME", scratch.path())
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .output()
        .expect("run olm");
    let ok = out.status.success();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if ok != c.ok {
        let said = stderr.lines().next().unwrap_or("");
        return Err(match c.ok {
            true => format!("the reference succeeded, olm failed: {said}"),
            false => "the reference failed, olm succeeded".to_string(),
        });
    }
    match c.kind.as_str() {
        "render" | "render-yaml" | "template" => {
            if !ok {
                if !out.stdout.is_empty() {
                    return Err("olm failed but wrote output".into());
                }
                if c.kind != "template" && !stderr.contains(&c.input) && c.variant != "sqlite" {
                    return Err(format!("the error does not name the input: {stderr}"));
                }
                return Ok(());
            }
            let file = c
                .stdout_file
                .as_ref()
                .expect("a successful render saves its output");
            let want = gunzip(&root.join(file));
            if out.stdout == want {
                return Ok(());
            }
            let yaml = c.kind == "render-yaml";
            if c.unstable && blobs(&out.stdout, yaml) == blobs(&want, yaml) {
                return Ok(());
            }
            Err(first_difference(&out.stdout, &want))
        }
        "validate-fbc" => Ok(()),
        _ => {
            let Some(file) = &c.messages_file else {
                return Ok(());
            };
            let report: Value = serde_json::from_slice(&out.stdout)
                .map_err(|e| format!("olm's JSON report does not parse ({e}): {stderr}"))?;
            let ours: Vec<&str> = report["outputs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|o| o["type"] == "error")
                .filter_map(|o| o["message"].as_str())
                .collect();
            let theirs = String::from_utf8(gunzip(&root.join(file))).unwrap();
            let missing: Vec<String> = format_check_items(&theirs)
                .into_iter()
                .filter(|item| !ours.iter().any(|m| m.contains(item.as_str())))
                .collect();
            match missing.is_empty() {
                true => Ok(()),
                false => Err(format!("olm does not report: {}", missing.join(" | "))),
            }
        }
    }
}

#[test]
fn olm_agrees_with_opm_and_the_api_validators_on_their_fixtures() {
    let Some(root) = peer_fixtures() else { return };
    let started = std::time::Instant::now();
    let cases = cases(&root);
    assert!(cases.len() >= 700, "only {} cases", cases.len());
    let allowed: BTreeMap<&str, &str> = ALLOWED.iter().copied().collect();
    for id in allowed.keys() {
        assert!(
            cases.iter().any(|c| c.id == *id),
            "ALLOWED names {id}, which is no case"
        );
    }

    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Result<(), String>)>> = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(c) = cases.get(i) else { break };
                    let r = compare(&root, c);
                    results.lock().unwrap().push((i, r));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    assert_eq!(results.len(), cases.len(), "every case ran");

    let mut per_kind: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut allowed_differ = 0;
    for (i, r) in &results {
        let c = &cases[*i];
        let tally = per_kind.entry(c.kind.as_str()).or_default();
        match (r, allowed.get(c.id.as_str())) {
            (Ok(()), None) => tally.0 += 1,
            (Ok(()), Some(why)) => failures.push(format!(
                "{}: agrees now, drop it from ALLOWED ({why})",
                c.id
            )),
            (Err(_), Some(_)) => {
                tally.1 += 1;
                allowed_differ += 1;
            }
            (Err(e), None) => {
                tally.1 += 1;
                failures.push(format!("{}: {e}", c.id));
            }
        }
    }
    println!(
        "peer fixtures: {} cases, {} agree, {} differ ({} allowed), in {:.1}s",
        cases.len(),
        cases.len() - per_kind.values().map(|t| t.1).sum::<usize>(),
        per_kind.values().map(|t| t.1).sum::<usize>(),
        allowed_differ,
        started.elapsed().as_secs_f64()
    );
    for (kind, (agree, differ)) in &per_kind {
        println!("  {kind}: {agree} agree, {differ} differ");
    }
    assert!(
        failures.is_empty(),
        "{} case(s) differ from the reference tools:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn blobs_split_json_and_yaml_renders() {
    let json = b"{\n    \"a\": {\n        \"b\": 1\n    }\n}\n{\n    \"c\": 2\n}\n";
    assert_eq!(
        blobs(json, false),
        [
            "{\n    \"a\": {\n        \"b\": 1\n    }\n}\n",
            "{\n    \"c\": 2\n}\n"
        ]
    );
    let yaml = b"---\nb: 1\n---\na:\n  x: 2\n";
    assert_eq!(blobs(yaml, true), ["---\na:\n  x: 2\n", "---\nb: 1\n"]);
    assert_eq!(
        format_check_items(
            "ERRO error validating format in x: Bundle validation errors: a \"b\",c\nWARN w"
        ),
        ["a \"b\"", "c"]
    );
}

/// Copies the bundle `input` of the fixtures under `root` to the same relative path in a
/// scratch root (whose `expected/` is the fixtures'), renaming its manifests with `rename`
/// and adding `extra` files, so a case's recorded output applies to the copy.
fn copied_bundle(
    root: &Path,
    input: &str,
    rename: &[(&str, &str)],
    extra: &[(&str, &[u8])],
) -> tempfile::TempDir {
    let scratch = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root.join("expected"), scratch.path().join("expected")).unwrap();
    let (from, to) = (root.join(input), scratch.path().join(input));
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(to.join(sub)).unwrap();
        for e in std::fs::read_dir(from.join(sub)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let new = rename
                .iter()
                .find(|(old, _)| *old == format!("{sub}/{name}"))
                .map_or(format!("{sub}/{name}"), |(_, new)| new.to_string());
            std::fs::copy(from.join(sub).join(&name), to.join(new)).unwrap();
        }
    }
    for (file, bytes) in extra {
        std::fs::write(to.join(file), bytes).unwrap();
    }
    scratch
}

const DROP_IN: &str = "operator-registry/pkg/lib/bundle/testdata/validate/valid_bundle";

/// The manifests in name order: the renames below keep it, so opm's recorded render (objects
/// in file-name order) is what opm renders of the renamed copy.
fn manifest_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir.join("manifests"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A CRD kept as `<name>.crd`, a `.yml` manifest and an editor's `annotations.yaml.bak`:
/// operator-registry reads every file of manifests/ whatever its name, so opm renders the
/// bundle exactly as it rendered the original and the api validators pass it as they passed
/// it; `olm` matches every recorded case of the original.
#[test]
fn manifests_with_any_file_name_render_and_validate_as_recorded() {
    let Some(root) = peer_fixtures() else { return };
    let annotations = std::fs::read(root.join(DROP_IN).join("metadata/annotations.yaml")).unwrap();
    let copy = copied_bundle(
        &root,
        DROP_IN,
        &[
            (
                "manifests/etcdclusters.etcd.database.coreos.com.crd.yaml",
                "manifests/etcdclusters.etcd.database.coreos.com.crd",
            ),
            (
                "manifests/etcdconfigmap.yaml",
                "manifests/etcdconfigmap.yml",
            ),
        ],
        &[("metadata/annotations.yaml.bak", &annotations)],
    );
    let original = manifest_names(&root.join(DROP_IN));
    let renamed = manifest_names(&copy.path().join(DROP_IN));
    let stem = |n: &String| {
        n.split(".y")
            .next()
            .unwrap()
            .trim_end_matches(".crd")
            .to_string()
    };
    assert_eq!(
        original.iter().map(stem).collect::<Vec<_>>(),
        renamed.iter().map(stem).collect::<Vec<_>>(),
        "the renames keep the file order"
    );
    assert!(renamed.contains(&"etcdclusters.etcd.database.coreos.com.crd".to_string()));
    let cases: Vec<Case> = cases(&root)
        .into_iter()
        .filter(|c| c.input == DROP_IN)
        .collect();
    assert!(
        cases.iter().any(|c| c.kind == "render" && c.ok)
            && cases.iter().any(|c| c.kind == "bundle-validate" && c.ok),
        "the recorded render and validation of {DROP_IN}"
    );
    for c in &cases {
        compare(copy.path(), c).unwrap_or_else(|e| panic!("{}: {e}", c.id));
    }
}

/// Files of manifests/ that hold no object: opm's loader skips each (the recorded render of
/// the bundle without them stays exact), operator-framework/api's fails on each.
#[test]
fn manifests_that_hold_no_object_are_skipped_by_render_and_refused_by_validate() {
    let Some(root) = peer_fixtures() else { return };
    let annotations = std::fs::read(root.join(DROP_IN).join("metadata/annotations.yaml")).unwrap();
    let copy = copied_bundle(
        &root,
        DROP_IN,
        &[],
        &[
            ("manifests/annotations.yaml.bak", &annotations),
            ("manifests/empty.yaml", b""),
            (
                "manifests/icon.png",
                &[0x89, b'P', b'N', b'G', 0xff, 0xfe, 0],
            ),
            ("manifests/notes.txt", b"key: [unclosed\n"),
        ],
    );
    for c in cases(&root)
        .into_iter()
        .filter(|c| c.input == DROP_IN && c.kind.starts_with("render"))
    {
        compare(copy.path(), &c).unwrap_or_else(|e| panic!("{}: {e}", c.id));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(["bundle", "validate", "-o", "json", DROP_IN])
        .current_dir(copy.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors: Vec<String> = report["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["type"] == "error")
        .map(|o| o["message"].as_str().unwrap_or("").to_string())
        .collect();
    let decode = errors
        .iter()
        .filter(|m| m.starts_with("unable to decode object: "))
        .count();
    assert_eq!(decode, 3, "{errors:#?}");
    assert!(
        errors.iter().any(|m| m.contains("'kind' is missing")),
        "{errors:#?}"
    );
}
