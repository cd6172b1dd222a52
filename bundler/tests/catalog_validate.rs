//! Table-driven invalid catalogs: one small catalog per validation rule, each asserting the
//! verdict, the rule, opm's message text and that the culprit is named. Plus malformed input
//! (bad YAML, a 4 MB single-line JSON blob, non-UTF-8 bytes, missing fields, wrong types) and
//! the `olm catalog validate` command's output and exit codes.

use std::path::Path;
use std::process::Command;

use olm_bundler::catalog::diagnostic::Severity;
use olm_bundler::catalog::load::load_bytes;
use olm_bundler::catalog::validate::validate;

const PKG: &str = "---\nschema: olm.package\nname: foo\ndefaultChannel: stable\n";

fn bundle(name: &str, version: &str) -> String {
    format!(
        "---\nschema: olm.bundle\nname: {name}\npackage: foo\nimage: quay.io/x/foo-bundle:{version}\nproperties:\n- type: olm.package\n  value: {{packageName: foo, version: {version}}}\n"
    )
}

fn channel(name: &str, entries: &str) -> String {
    format!("---\nschema: olm.channel\npackage: foo\nname: {name}\nentries:\n{entries}")
}

fn good() -> String {
    format!(
        "{PKG}{}{}{}",
        channel(
            "stable",
            "- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n"
        ),
        bundle("foo.v0.1.0", "0.1.0"),
        bundle("foo.v0.2.0", "0.2.0")
    )
}

struct Case {
    name: &'static str,
    catalog: String,
    severity: Severity,
    rule: &'static str,
    /// Substring of the message (opm's text where opm has one).
    message: &'static str,
}

fn cases() -> Vec<Case> {
    use Severity::{Error as E, Warning as W};
    let two = |entries: &str| {
        format!(
            "{PKG}{}{}{}",
            channel("stable", entries),
            bundle("foo.v0.1.0", "0.1.0"),
            bundle("foo.v0.2.0", "0.2.0")
        )
    };
    vec![
        Case {
            name: "package without name",
            catalog: format!("{}---\nschema: olm.package\ndefaultChannel: x\n", good()),
            severity: E,
            rule: "package-name-empty",
            message: "config contains package with no name",
        },
        Case {
            name: "duplicate package",
            catalog: format!("{}{PKG}", good()),
            severity: E,
            rule: "package-duplicate",
            message: "duplicate package \"foo\"",
        },
        Case {
            name: "invalid package name",
            catalog: good().replace("foo", "foo.bar"),
            severity: E,
            rule: "package-name-invalid",
            message: "invalid package name \"foo.bar\": [must not contain dots]",
        },
        Case {
            name: "channel of unknown package",
            catalog: format!(
                "{}---\nschema: olm.channel\npackage: bar\nname: s\nentries: [{{name: bar.v1}}]\n",
                good()
            ),
            severity: E,
            rule: "channel-unknown-package",
            message: "unknown package \"bar\" for channel \"s\"",
        },
        Case {
            name: "channel without name",
            catalog: format!(
                "{}---\nschema: olm.channel\npackage: foo\nentries: [{{name: foo.v0.2.0}}]\n",
                good()
            ),
            severity: E,
            rule: "channel-name-empty",
            message: "package \"foo\" contains channel with no name",
        },
        Case {
            name: "duplicate channel",
            catalog: format!("{}{}", good(), channel("stable", "- name: foo.v0.2.0\n")),
            severity: E,
            rule: "channel-duplicate",
            message: "package \"foo\" has duplicate channel \"stable\"",
        },
        Case {
            name: "duplicate entry",
            catalog: two(
                "- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n- name: foo.v0.1.0\n",
            ),
            severity: E,
            rule: "channel-duplicate-entry",
            message: "invalid package \"foo\", channel \"stable\": duplicate entry \"foo.v0.1.0\"",
        },
        Case {
            name: "bundle without package",
            catalog: format!("{}---\nschema: olm.bundle\nname: x.v1\nimage: a/b\n", good()),
            severity: E,
            rule: "bundle-package-empty",
            message: "package name must be set for bundle \"x.v1\"",
        },
        Case {
            name: "bundle of unknown package",
            catalog: format!(
                "{}{}",
                good(),
                bundle("bar.v1", "1.0.0").replace("package: foo", "package: bar")
            ),
            severity: E,
            rule: "bundle-unknown-package",
            message: "unknown package \"bar\" for bundle \"bar.v1\"",
        },
        Case {
            name: "duplicate bundle",
            catalog: format!("{}{}", good(), bundle("foo.v0.2.0", "0.2.0")),
            severity: E,
            rule: "bundle-duplicate",
            message: "package \"foo\" has duplicate bundle \"foo.v0.2.0\"",
        },
        Case {
            name: "property value of the wrong type",
            catalog: good().replace(
                "value: {packageName: foo, version: 0.2.0}",
                "value: {packageName: foo, version: 0.2.0}\n- type: olm.gvk\n  value: [1, 2]",
            ),
            severity: E,
            rule: "bundle-property-invalid",
            message: "parse properties for bundle \"foo.v0.2.0\": parse property[1] of type \"olm.gvk\"",
        },
        Case {
            name: "no olm.package property",
            catalog: good().replace(
                "- type: olm.package\n  value: {packageName: foo, version: 0.2.0}",
                "- type: vendor.x\n  value: 1",
            ),
            severity: E,
            rule: "bundle-package-property-count",
            message: "package \"foo\" bundle \"foo.v0.2.0\" must have exactly 1 \"olm.package\" property, found 0",
        },
        Case {
            name: "olm.package property names another package",
            catalog: good().replace("{packageName: foo, version: 0.2.0}", "{packageName: bar, version: 0.2.0}"),
            severity: E,
            rule: "bundle-package-mismatch",
            message: "package \"foo\" does not match \"olm.package\" property \"bar\"",
        },
        Case {
            name: "invalid version",
            catalog: good().replace("version: 0.2.0}", "version: v0.2}"),
            severity: E,
            rule: "bundle-version-invalid",
            message: "error parsing bundle \"foo.v0.2.0\" version \"v0.2\"",
        },
        Case {
            name: "invalid image",
            catalog: good().replace("image: quay.io/x/foo-bundle:0.2.0", "image: Quay.io/X/Foo:bad tag"),
            severity: E,
            rule: "bundle-image-invalid",
            message: "invalid image pull spec \"Quay.io/X/Foo:bad tag\"",
        },
        Case {
            name: "invalid related image",
            catalog: good().replace(
                "image: quay.io/x/foo-bundle:0.2.0\n",
                "image: quay.io/x/foo-bundle:0.2.0\nrelatedImages:\n- {name: op, image: 'UPPER/case'}\n",
            ),
            severity: E,
            rule: "bundle-related-image-invalid",
            message: "relatedImages[0].image: invalid image pull spec \"UPPER/case\"",
        },
        Case {
            name: "bundle image missing and no objects",
            catalog: good().replace("image: quay.io/x/foo-bundle:0.2.0", "image: ''"),
            severity: E,
            rule: "bundle-image-empty",
            message: "bundle image must be set",
        },
        Case {
            name: "bundle in no channel",
            catalog: format!("{}{}", good(), bundle("foo.v0.3.0", "0.3.0")),
            severity: E,
            rule: "bundle-not-in-channel",
            message: "package \"foo\", bundle \"foo.v0.3.0\" not found in any channel entries",
        },
        Case {
            name: "entry without bundle",
            catalog: two(
                "- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n- name: foo.v0.3.0\n  replaces: foo.v0.2.0\n",
            ),
            severity: E,
            rule: "channel-entry-missing-bundle",
            message: "no olm.bundle blobs found in package \"foo\" for olm.channel entries [foo.v0.3.0]",
        },
        Case {
            name: "default channel unset",
            catalog: good().replace("defaultChannel: stable\n", ""),
            severity: E,
            rule: "package-default-channel-unset",
            message: "default channel must be set",
        },
        Case {
            name: "default channel missing",
            catalog: good().replace("defaultChannel: stable", "defaultChannel: fast"),
            severity: E,
            rule: "package-default-channel-missing",
            message: "default channel \"fast\" not found in channels list",
        },
        Case {
            name: "package without channels",
            catalog: format!("---\nschema: olm.package\nname: lonely\n{}", good()),
            severity: E,
            rule: "package-no-channels",
            message: "package must contain at least one channel",
        },
        Case {
            name: "empty channel",
            catalog: format!("{}---\nschema: olm.channel\npackage: foo\nname: fast\nentries: []\n", good()),
            severity: E,
            rule: "channel-empty",
            message: "channel must contain at least one bundle",
        },
        Case {
            name: "two heads",
            catalog: two("- name: foo.v0.1.0\n- name: foo.v0.2.0\n"),
            severity: E,
            rule: "channel-head",
            message: "multiple channel heads found in graph: foo.v0.1.0, foo.v0.2.0",
        },
        Case {
            name: "no head",
            catalog: two(
                "- name: foo.v0.1.0\n  replaces: foo.v0.2.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n",
            ),
            severity: E,
            rule: "channel-head",
            message: "no channel head found in graph",
        },
        Case {
            name: "replaces cycle below the head",
            catalog: format!(
                "{}{}",
                two(
                    "- name: foo.v0.1.0\n  replaces: foo.v0.2.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n- name: foo.v0.3.0\n  replaces: foo.v0.2.0\n",
                ),
                bundle("foo.v0.3.0", "0.3.0")
            ),
            severity: E,
            rule: "channel-cycle",
            message: "detected cycle in replaces chain of upgrade graph: foo.v0.2.0 -> foo.v0.1.0 -> foo.v0.2.0",
        },
        Case {
            name: "stranded bundle",
            catalog: format!(
                "{}{}",
                two(
                    "- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n- name: foo.v0.3.0\n  skips: [foo.v0.2.0]\n",
                ),
                bundle("foo.v0.3.0", "0.3.0")
            ),
            severity: E,
            rule: "channel-stranded",
            message: "channel contains one or more stranded bundles: foo.v0.1.0",
        },
        Case {
            name: "empty skip",
            catalog: two("- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n  skips: ['']\n"),
            severity: E,
            rule: "entry-skip-empty",
            message: "skip[0] is empty",
        },
        Case {
            name: "skipRange not in blang syntax",
            catalog: two("- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n  skipRange: '>v0.1.0'\n"),
            severity: E,
            rule: "entry-skip-range-invalid",
            message: "invalid skipRange \">v0.1.0\": Could not parse Range \">v0.1.0\": Could not parse comparator \">v\" in \">v0.1.0\"",
        },
        Case {
            name: "duplicate versions",
            catalog: good().replace("version: 0.2.0}", "version: 0.1.0}"),
            severity: E,
            rule: "package-duplicate-versions",
            message: "duplicate versions found in bundles: [{0.1.0: [foo.v0.1.0, foo.v0.2.0]}]",
        },
        Case {
            name: "deprecation without package",
            catalog: format!("{}---\nschema: olm.deprecations\nentries: []\n", good()),
            severity: E,
            rule: "deprecation-package-empty",
            message: "package name must be set for deprecation item 0",
        },
        Case {
            name: "deprecation of unknown package",
            catalog: format!("{}---\nschema: olm.deprecations\npackage: bar\nentries: []\n", good()),
            severity: E,
            rule: "deprecation-unknown-package",
            message: "cannot apply deprecations to an unknown package \"bar\"",
        },
        Case {
            name: "two deprecation blobs",
            catalog: format!(
                "{0}---\nschema: olm.deprecations\npackage: foo\nentries: []\n---\nschema: olm.deprecations\npackage: foo\nentries: []\n",
                good()
            ),
            severity: E,
            rule: "deprecation-duplicate",
            message: "expected a maximum of one deprecation per package: \"foo\"",
        },
        Case {
            name: "deprecation entry without schema",
            catalog: format!(
                "{}---\nschema: olm.deprecations\npackage: foo\nentries:\n- reference: {{name: x}}\n  message: m\n",
                good()
            ),
            severity: E,
            rule: "deprecation-schema-empty",
            message: "schema must be set for deprecation entry [0] for package \"foo\"",
        },
        Case {
            name: "duplicate deprecation entry",
            catalog: format!(
                "{}---\nschema: olm.deprecations\npackage: foo\nentries:\n- reference: {{schema: olm.bundle, name: foo.v0.1.0}}\n  message: m\n- reference: {{schema: olm.bundle, name: foo.v0.1.0}}\n  message: m\n",
                good()
            ),
            severity: E,
            rule: "deprecation-duplicate-entry",
            message: "duplicate deprecation entry",
        },
        Case {
            name: "deprecating an unknown bundle",
            catalog: format!(
                "{}---\nschema: olm.deprecations\npackage: foo\nentries:\n- reference: {{schema: olm.bundle, name: foo.v9}}\n  message: m\n",
                good()
            ),
            severity: E,
            rule: "deprecation-unknown-bundle",
            message: "cannot deprecate bundle \"foo.v9\" for package \"foo\": bundle not found",
        },
        Case {
            name: "deprecating an unknown channel",
            catalog: format!(
                "{}---\nschema: olm.deprecations\npackage: foo\nentries:\n- reference: {{schema: olm.channel, name: beta}}\n  message: m\n",
                good()
            ),
            severity: E,
            rule: "deprecation-unknown-channel",
            message: "cannot deprecate channel \"beta\" for package \"foo\": channel not found",
        },
        Case {
            name: "package deprecation with a name",
            catalog: format!(
                "{}---\nschema: olm.deprecations\npackage: foo\nentries:\n- reference: {{schema: olm.package, name: foo}}\n  message: m\n",
                good()
            ),
            severity: E,
            rule: "deprecation-package-name-set",
            message: "package name must be empty for deprecated package \"foo\" (specified \"foo\")",
        },
        Case {
            name: "deprecation of an unknown schema",
            catalog: format!(
                "{}---\nschema: olm.deprecations\npackage: foo\nentries:\n- reference: {{schema: olm.thing, name: x}}\n  message: m\n",
                good()
            ),
            severity: E,
            rule: "deprecation-schema-unknown",
            message: "object schema unknown",
        },
        Case {
            name: "deprecation without message",
            catalog: format!(
                "{}---\nschema: olm.deprecations\npackage: foo\nentries:\n- reference: {{schema: olm.package}}\n",
                good()
            ),
            severity: E,
            rule: "deprecation-message-empty",
            message: "invalid deprecation: message must be set",
        },
        Case {
            name: "unsatisfied gvk dependency (warning)",
            catalog: good().replace(
                "value: {packageName: foo, version: 0.2.0}",
                "value: {packageName: foo, version: 0.2.0}\n- type: olm.gvk.required\n  value: {group: db.io, kind: Db, version: v1}",
            ),
            severity: W,
            rule: "dependency-gvk-unsatisfied",
            message: "requires API db.io/v1/Db",
        },
        Case {
            name: "unsatisfied package dependency (warning)",
            catalog: good().replace(
                "value: {packageName: foo, version: 0.2.0}",
                "value: {packageName: foo, version: 0.2.0}\n- type: olm.package.required\n  value: {packageName: etcd, versionRange: '>=1.0.0'}",
            ),
            severity: W,
            rule: "dependency-package-unsatisfied",
            message: "requires package \"etcd\"",
        },
        Case {
            name: "skipRange covering nothing (warning)",
            catalog: two("- name: foo.v0.1.0\n- name: foo.v0.2.0\n  replaces: foo.v0.1.0\n  skipRange: '>=3.0.0 <4.0.0'\n"),
            severity: W,
            rule: "skip-range-covers-nothing",
            message: "skipRange \">=3.0.0 <4.0.0\" matches no other bundle version",
        },
        Case {
            name: "one image, two bundles (warning)",
            catalog: good().replace("foo-bundle:0.2.0", "foo-bundle:0.1.0"),
            severity: W,
            rule: "bundle-image-duplicate",
            message: "image \"quay.io/x/foo-bundle:0.1.0\" is used by several bundles: foo/foo.v0.1.0, foo/foo.v0.2.0",
        },
    ]
}

#[test]
fn the_base_catalog_is_valid() {
    let cfg = load_bytes(Path::new("catalog.yaml"), good().as_bytes()).unwrap();
    let r = validate(&cfg);
    assert!(r.diagnostics.is_empty(), "{}", r.to_text());
}

#[test]
fn every_rule_reports_its_culprit() {
    let mut failures = Vec::new();
    for c in cases() {
        let cfg = match load_bytes(Path::new("catalog.yaml"), c.catalog.as_bytes()) {
            Ok(cfg) => cfg,
            Err(e) => {
                failures.push(format!("{}: does not load: {e}", c.name));
                continue;
            }
        };
        let r = validate(&cfg);
        let found = r
            .diagnostics
            .iter()
            .find(|d| d.rule == c.rule && d.severity == c.severity);
        match found {
            None => failures.push(format!(
                "{}: expected {:?} {}, got:\n{}",
                c.name,
                c.severity,
                c.rule,
                r.to_text()
            )),
            Some(d) => {
                if !d.message.contains(c.message) {
                    failures.push(format!(
                        "{}: message {:?} lacks {:?}",
                        c.name, d.message, c.message
                    ));
                }
                if !d.location.starts_with("catalog.yaml:") {
                    failures.push(format!("{}: no file:line in {:?}", c.name, d.location));
                }
                if d.fix.is_empty() {
                    failures.push(format!("{}: no fix hint", c.name));
                }
                let named = !d.package.is_empty() || !d.channel.is_empty() || !d.bundle.is_empty();
                let anonymous = [
                    "package-name-empty",
                    "bundle-package-empty",
                    "deprecation-package-empty",
                ];
                if !named && !anonymous.contains(&c.rule) {
                    failures.push(format!("{}: no blob named", c.name));
                }
                if !named && c.rule == "bundle-package-empty" && d.bundle.is_empty() {
                    failures.push(format!("{}: bundle not named", c.name));
                }
            }
        }
        let verdict_fails = r.has_errors();
        if verdict_fails != (c.severity == Severity::Error) {
            failures.push(format!(
                "{}: verdict {verdict_fails}, expected {}",
                c.name,
                c.severity == Severity::Error
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn olm(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_olm"))
        .args(args)
        .output()
        .expect("run olm");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn validate_command_exit_codes_and_formats() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok");
    std::fs::create_dir_all(ok.join("foo")).unwrap();
    std::fs::write(ok.join("foo/catalog.yaml"), good()).unwrap();
    let (code, out, _) = olm(&["catalog", "validate", ok.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("catalog is valid"));

    let bad = dir.path().join("bad");
    std::fs::create_dir_all(bad.join("foo")).unwrap();
    std::fs::write(
        bad.join("foo/catalog.yaml"),
        good().replace("  replaces: foo.v0.1.0\n", ""),
    )
    .unwrap();
    let (code, _, err) = olm(&["catalog", "validate", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("foo/catalog.yaml:"), "{err}");
    assert!(err.contains("channel \"stable\""), "{err}");
    assert!(
        err.contains("multiple channel heads found in graph"),
        "{err}"
    );
    assert!(err.contains("fix:"), "{err}");

    let (code, out, _) = olm(&["catalog", "validate", "-o", "json", bad.to_str().unwrap()]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["passed"], false);
    assert_eq!(v["diagnostics"][0]["rule"], "channel-head");

    let (code, _, _) = olm(&["catalog", "validate", "/nonexistent/catalog"]);
    assert_eq!(code, 2);
    let (code, _, _) = olm(&["catalog", "validate", "--bogus-flag", "x"]);
    assert_eq!(code, 2);

    // --strict turns warnings into failures.
    let warn = dir.path().join("warn");
    std::fs::create_dir_all(&warn).unwrap();
    std::fs::write(
        warn.join("c.yaml"),
        good().replace("foo-bundle:0.2.0", "foo-bundle:0.1.0"),
    )
    .unwrap();
    assert_eq!(olm(&["catalog", "validate", warn.to_str().unwrap()]).0, 0);
    assert_eq!(
        olm(&["catalog", "validate", "--strict", warn.to_str().unwrap()]).0,
        1
    );
}

/// Malformed input: a clear error naming the file (and line where there is one), never a panic.
#[test]
fn malformed_input_gives_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "bad.yaml",
            b"schema: olm.package\nname: [unclosed\n".to_vec(),
            "bad.yaml:",
        ),
        (
            "big.json",
            {
                // A 4 MB single-line JSON blob, truncated: a syntax error at its end.
                let mut s = String::from(
                    "{\"schema\":\"olm.bundle\",\"name\":\"x\",\"package\":\"p\",\"image\":\"",
                );
                s.push_str(&"a".repeat(4 * 1024 * 1024));
                s.push_str("\",\"properties\":[");
                s.into_bytes()
            },
            "big.json:1:",
        ),
        (
            "latin1.yaml",
            b"schema: olm.package\nname: caf\xe9\n".to_vec(),
            // Go's reader: `incomplete UTF-8 octet sequence`.
            "UTF-8",
        ),
        (
            "noschema.yaml",
            b"name: foo\n".to_vec(),
            "missing root schema field",
        ),
        (
            "wrongtype.yaml",
            b"schema: olm.channel\nname: s\npackage: p\nentries: {a: 1}\n".to_vec(),
            "parse channel:",
        ),
        (
            "wrongtype2.json",
            br#"{"schema":"olm.bundle","name":"b","package":"p","properties":"nope"}"#.to_vec(),
            "parse bundle:",
        ),
        (
            "scalar.yaml",
            b"just a string\n".to_vec(),
            "expected an object",
        ),
        (
            "namenum.yaml",
            b"schema: olm.package\nname: 5\n".to_vec(),
            "to be a string",
        ),
    ];
    for (name, bytes, expect) in cases {
        let sub = dir.path().join(name.replace('.', "_"));
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join(name), &bytes).unwrap();
        let (code, _, err) = olm(&["catalog", "validate", sub.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(
            err.contains(name),
            "{name}: error does not name the file: {err}"
        );
        assert!(err.contains(expect), "{name}: {err}");
        assert!(!err.contains("panicked"), "{name}: {err}");
        assert!(
            err.len() < 4096,
            "{name}: error echoes the input ({} bytes)",
            err.len()
        );
    }
    // A valid 4 MB single-line blob loads.
    let mut s = String::from("{\"schema\":\"vendor.big\",\"data\":\"");
    s.push_str(&"b".repeat(4 * 1024 * 1024));
    s.push_str("\"}");
    let cfg = load_bytes(Path::new("ok.json"), s.as_bytes()).unwrap();
    assert_eq!(cfg.others.len(), 1);
}
