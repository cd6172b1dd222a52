//! What `operator-sdk scorecard -o text|json|xunit` prints for a [`TestList`]:
//! - text: each test's `MarshalText` followed by a newline (`0 tests selected` when none),
//!   colors only on a terminal, labels in sorted order;
//! - json: Go's `json.MarshalIndent(list, "", "  ")` (HTML-escaped strings) and a newline;
//! - xunit: Go's `xml.MarshalIndent` of operator-sdk's `testsuites` document and a newline.

use std::fmt::Write as _;

use super::{State, TestList};
use crate::grammar::go_json;

/// The text report. `color` adds operator-sdk's ANSI colors (it does so on a terminal).
pub fn text(list: &TestList, color: bool) -> String {
    if list.tests().is_empty() {
        return "0 tests selected\n".to_string();
    }
    let paint = |code: &str, s: &str| match color {
        true => format!("\x1b[1;{code}m{s}\x1b[0m"),
        false => format!("{s}\n"),
    };
    let mut sb = String::new();
    for t in list.tests() {
        let _ = writeln!(sb, "{}", "-".repeat(80));
        let _ = writeln!(sb, "Image:      {}", t.spec.image);
        if !t.spec.entrypoint.is_empty() {
            let _ = writeln!(sb, "Entrypoint: [{}]", t.spec.entrypoint.join(" "));
        }
        if !t.spec.labels.is_empty() {
            sb.push_str("Labels:\n");
            for (k, v) in &t.spec.labels {
                let _ = writeln!(sb, "\t{}:{}", go_quote(k), go_quote(v));
            }
        }
        if !t.status.results.is_empty() {
            sb.push_str("Results:\n");
            for r in &t.status.results {
                if !r.name.is_empty() {
                    let _ = writeln!(sb, "\tName: {}", r.name);
                }
                sb.push_str("\tState: ");
                sb.push_str(&match r.state {
                    State::Pass => paint("32", "pass"),
                    State::Fail => paint("31", "fail"),
                    State::Error => paint("31", "error"),
                });
                sb.push('\n');
                if !r.suggestions.is_empty() {
                    sb.push_str(&paint("33", "\tSuggestions:\n"));
                    for s in &r.suggestions {
                        let _ = writeln!(sb, "\t\t{s}");
                    }
                }
                if !r.errors.is_empty() {
                    sb.push_str(&paint("31", "\tErrors:\n"));
                    for e in &r.errors {
                        let _ = writeln!(sb, "\t\t{e}");
                    }
                }
                if !r.log.is_empty() {
                    sb.push_str("\tLog:\n");
                    for line in r.log.lines() {
                        let _ = writeln!(sb, "\t\t{line}");
                    }
                }
                sb.push('\n');
            }
        }
        sb.push('\n');
    }
    sb
}

/// Go's `%q` of a string: double-quoted, with Go's escapes for quotes, backslashes and
/// control characters.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\x7f' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The JSON report.
pub fn json(list: &TestList) -> String {
    let text = serde_json::to_string_pretty(list).expect("a TestList serializes");
    let mut out = go_json::escape_html(&text);
    out.push('\n');
    out
}

/// Go's `encoding/xml` escaping of attribute values and character data.
fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("&#34;"),
            '\'' => out.push_str("&#39;"),
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\t' => out.push_str("&#x9;"),
            '\n' => out.push_str("&#xA;"),
            '\r' => out.push_str("&#xD;"),
            c if (c as u32) < 0x20 => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The xunit report: one `testsuite` per test (named by its `test` label, else
/// `testsuite-NNN`), its image, entrypoint and labels as properties, one `testcase` per
/// result. Failure and error messages are written raw, as Go's `innerxml` writes them.
pub fn xunit(list: &TestList) -> String {
    let mut x = String::from("<testsuites name=\"scorecard\">");
    for (i, t) in list.tests().iter().enumerate() {
        let name = t
            .spec
            .labels
            .get("test")
            .cloned()
            .unwrap_or_else(|| format!("testsuite-{:03}", i + 1));
        let (mut failures, mut errors) = (0, 0);
        for r in &t.status.results {
            match r.state {
                State::Fail => failures += 1,
                State::Error => errors += 1,
                State::Pass => {}
            }
        }
        let _ = write!(
            x,
            "\n  <testsuite name=\"{}\" tests=\"{}\" skipped=\"0\" failures=\"{failures}\" errors=\"{errors}\">",
            xml_escape(&name),
            t.status.results.len()
        );
        x.push_str("\n    <properties>");
        let mut props = vec![
            ("spec.image", t.spec.image.clone()),
            ("spec.entrypoint", t.spec.entrypoint.join(" ")),
            ("labels.test", name.clone()),
        ];
        if let Some(phase) = t.spec.labels.get("cluster-phase") {
            props.push(("labels.cluster-phase", phase.clone()));
        }
        for (k, v) in props {
            let _ = write!(
                x,
                "\n      <property name=\"{k}\" value=\"{}\"></property>",
                xml_escape(&v)
            );
        }
        x.push_str("\n    </properties>");
        for r in &t.status.results {
            let time = r
                .creation_timestamp
                .as_deref()
                .unwrap_or("0001-01-01T00:00:00Z");
            let _ = write!(
                x,
                "\n    <testcase name=\"{}\" time=\"{}\">",
                xml_escape(&r.name),
                xml_escape(time)
            );
            let _ = write!(x, "\n      <system-out>{}</system-out>", xml_escape(&r.log));
            let kind = match r.state {
                State::Fail => Some("failure"),
                State::Error => Some("error"),
                State::Pass => None,
            };
            if let Some(kind) = kind {
                let _ = write!(
                    x,
                    "\n      <{kind} type=\"{kind}\">{}</{kind}>",
                    r.errors.join("\n")
                );
            }
            x.push_str("\n    </testcase>");
        }
        x.push_str("\n  </testsuite>");
    }
    x.push_str("\n</testsuites>\n");
    x
}

#[cfg(test)]
mod tests {
    use super::super::{Test, TestConfiguration, TestResult, TestStatus};
    use super::*;

    fn list() -> TestList {
        let mut l = TestList::default();
        let spec = TestConfiguration {
            image: "quay.io/operator-framework/scorecard-test:v1.3.0".into(),
            entrypoint: vec!["scorecard-test".into(), "basic-check-spec".into()],
            labels: [("suite", "basic"), ("test", "basic-check-spec-test")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        };
        l.push(Test::new(
            spec,
            TestStatus::one(TestResult::pass("basic-check-spec")),
        ));
        l
    }

    /// The text operator-sdk printed for a passing basic-check-spec (operator-sdk PR 5048).
    #[test]
    fn text_is_operator_sdks_without_a_terminal() {
        let want = "--------------------------------------------------------------------------------\nImage:      quay.io/operator-framework/scorecard-test:v1.3.0\nEntrypoint: [scorecard-test basic-check-spec]\nLabels:\n\t\"suite\":\"basic\"\n\t\"test\":\"basic-check-spec-test\"\nResults:\n\tName: basic-check-spec\n\tState: pass\n\n\n\n";
        assert_eq!(text(&list(), false), want);
        assert_eq!(text(&TestList::default(), false), "0 tests selected\n");
    }

    #[test]
    fn json_is_go_marshal_indent_of_the_v1alpha3_types() {
        let want = r#"{
  "kind": "TestList",
  "apiVersion": "scorecard.operatorframework.io/v1alpha3",
  "items": [
    {
      "kind": "Test",
      "apiVersion": "scorecard.operatorframework.io/v1alpha3",
      "spec": {
        "image": "quay.io/operator-framework/scorecard-test:v1.3.0",
        "entrypoint": [
          "scorecard-test",
          "basic-check-spec"
        ],
        "labels": {
          "suite": "basic",
          "test": "basic-check-spec-test"
        },
        "storage": {
          "spec": {
            "mountPath": {}
          }
        }
      },
      "status": {
        "results": [
          {
            "name": "basic-check-spec",
            "state": "pass",
            "creationTimestamp": null
          }
        ]
      }
    }
  ]
}
"#;
        assert_eq!(json(&list()), want);
        assert!(json(&TestList::default()).contains("\"items\": null"));
    }

    #[test]
    fn xunit_is_operator_sdks_document() {
        let mut l = list();
        let mut r = TestResult::pass("olm-x");
        r.state = State::Fail;
        r.errors = vec!["a <b>".into(), "c".into()];
        r.log = "one\ntwo \"q\"\n".into();
        l.push(Test::new(TestConfiguration::default(), TestStatus::one(r)));
        let x = xunit(&l);
        assert!(x.starts_with("<testsuites name=\"scorecard\">\n  <testsuite name=\"basic-check-spec-test\" tests=\"1\" skipped=\"0\" failures=\"0\" errors=\"0\">\n    <properties>\n      <property name=\"spec.image\" value=\"quay.io/operator-framework/scorecard-test:v1.3.0\"></property>"), "{x}");
        assert!(x.contains("<testsuite name=\"testsuite-002\" tests=\"1\" skipped=\"0\" failures=\"1\" errors=\"0\">"));
        assert!(x.contains("<system-out>one&#xA;two &#34;q&#34;&#xA;</system-out>\n      <failure type=\"failure\">a <b>\nc</failure>"));
        assert!(x.ends_with("</testsuite>\n</testsuites>\n"));
    }
}
