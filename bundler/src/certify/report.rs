//! A run's results in preflight's formats: `results.json` (its `formatters.UserResponse`,
//! written with `json.MarshalIndent(..., "", "    ")`), `results-junit.xml` (its
//! `junitXMLFormatter`, `xml.MarshalIndent(..., "", "\t")`), and our text summary, which says
//! for every failure what to change.

use std::fmt::Write as _;

use serde::Serialize;

use super::{Bucket, CheckResult, Verdict};
use crate::grammar::{go_duration, go_json, go_xml};

/// The results of one policy run on one bundle or image.
#[derive(Debug, Clone)]
pub struct Report {
    /// What was checked, as the user named it (preflight's `image`).
    pub image: String,
    /// In preflight's check order.
    pub results: Vec<CheckResult>,
    /// The md5 of the bundle's `hashes.txt` (operator runs only).
    pub certification_hash: Option<String>,
}

/// preflight's `version.VersionContext`, naming this tool.
#[derive(Debug, Clone, Serialize)]
pub struct TestLibrary {
    pub name: String,
    pub version: String,
    pub commit: String,
}

impl Default for TestLibrary {
    fn default() -> Self {
        TestLibrary {
            name: "olm".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            commit: option_env!("OLM_GIT_COMMIT").unwrap_or("unknown").into(),
        }
    }
}

#[derive(Serialize)]
struct UserResponse<'a> {
    image: &'a str,
    passed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    certification_hash: Option<&'a str>,
    test_library: TestLibrary,
    results: ResultsText,
}

#[derive(Serialize)]
struct ResultsText {
    passed: Vec<Info>,
    failed: Vec<Info>,
    errors: Vec<Info>,
}

/// preflight's `checkExecutionInfo`: empty strings are left out (`omitempty`).
#[derive(Serialize)]
struct Info {
    #[serde(skip_serializing_if = "str::is_empty")]
    name: &'static str,
    elapsed_time: u64,
    #[serde(skip_serializing_if = "str::is_empty")]
    description: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    help: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    suggestion: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    knowledgebase_url: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    check_url: &'static str,
}

impl Report {
    fn in_bucket(&self, b: Bucket) -> impl Iterator<Item = &CheckResult> {
        self.results.iter().filter(move |r| r.bucket() == b)
    }

    /// preflight's `PassedOverall`: nothing failed and nothing errored (a check that did not
    /// run is among the errors: a partial run is not a pass).
    pub fn passed(&self) -> bool {
        self.in_bucket(Bucket::Failed).next().is_none()
            && self.in_bucket(Bucket::Errors).next().is_none()
    }

    /// Whether every check that ran passed: what a run that left out the cluster checks on
    /// purpose (`--offline`) is judged by.
    pub fn passed_what_ran(&self) -> bool {
        self.results.iter().all(|r| {
            matches!(r.verdict, Verdict::NotRun(_))
                || !matches!(r.bucket(), Bucket::Failed | Bucket::Errors)
        })
    }

    /// The checks that did not run, by name.
    pub fn not_run(&self) -> Vec<&'static str> {
        self.results
            .iter()
            .filter(|r| matches!(r.verdict, Verdict::NotRun(_)) && r.bucket() == Bucket::Errors)
            .map(|r| r.check.name)
            .collect()
    }

    /// `results.json` as preflight writes it (with its trailing newline: `fmt.Fprintln`).
    pub fn to_json(&self) -> String {
        let ms = |r: &CheckResult| r.elapsed.as_millis() as u64;
        let base = |r: &CheckResult| Info {
            name: r.check.name,
            elapsed_time: ms(r),
            description: r.check.description,
            help: "",
            suggestion: "",
            knowledgebase_url: "",
            check_url: "",
        };
        let response = UserResponse {
            image: &self.image,
            passed: self.passed(),
            certification_hash: self.certification_hash.as_deref(),
            test_library: TestLibrary::default(),
            results: ResultsText {
                passed: self.in_bucket(Bucket::Passed).map(base).collect(),
                failed: self
                    .in_bucket(Bucket::Failed)
                    .map(|r| Info {
                        help: r.check.help,
                        suggestion: r.check.suggestion,
                        knowledgebase_url: r.check.knowledge_base_url,
                        check_url: r.check.check_url,
                        ..base(r)
                    })
                    .collect(),
                errors: self
                    .in_bucket(Bucket::Errors)
                    .map(|r| Info {
                        help: r.check.help,
                        ..base(r)
                    })
                    .collect(),
            },
        };
        let mut buf = Vec::new();
        let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
        response
            .serialize(&mut ser)
            .expect("results serialize to JSON");
        let text = String::from_utf8(buf).expect("serde_json writes UTF-8");
        format!("{}\n", go_json::escape_html(&text))
    }

    /// `results-junit.xml` as preflight's `junitXMLFormatter` writes it: passed checks first
    /// (time in seconds, `%f`), then errors and failures (time as Go's `Duration.String()`),
    /// then warnings; no trailing newline.
    pub fn to_junit(&self) -> String {
        let passed: Vec<&CheckResult> = self.in_bucket(Bucket::Passed).collect();
        let failing: Vec<&CheckResult> = self
            .in_bucket(Bucket::Errors)
            .chain(self.in_bucket(Bucket::Failed))
            .collect();
        let warned: Vec<&CheckResult> = self.in_bucket(Bucket::Warned).collect();
        let total: f64 = passed
            .iter()
            .chain(&failing)
            .chain(&warned)
            .map(|r| r.elapsed.as_secs_f64())
            .sum();
        let e = go_xml::escape;
        let class = e(&self.image);
        let mut s = String::from("<testsuites>\n");
        let _ = writeln!(
            s,
            "\t<testsuite tests=\"{}\" failures=\"{}\" warnings=\"{}\" time=\"{total:.6}\" name=\"Red Hat Certification\">",
            passed.len() + failing.len() + warned.len(),
            failing.len(),
            warned.len()
        );
        for r in &passed {
            let _ = writeln!(
                s,
                "\t\t<testcase classname=\"{class}\" name=\"{}\" time=\"{:.6}\">{}</testcase>",
                e(r.check.name),
                r.elapsed.as_secs_f64(),
                e(r.check.description)
            );
        }
        for (list, element, message) in [
            (&failing, "failure", "Failed"),
            (&warned, "warning", "Warn"),
        ] {
            for r in list.iter() {
                let _ = writeln!(
                    s,
                    "\t\t<testcase classname=\"{class}\" name=\"{}\" time=\"{}\">",
                    e(r.check.name),
                    e(&go_duration::format(r.elapsed))
                );
                let _ = writeln!(
                    s,
                    "\t\t\t<{element} message=\"{message}\" type=\"\">{}</{element}>",
                    e(&format!(
                        "{}: Suggested Fix: {}",
                        r.check.help, r.check.suggestion
                    ))
                );
                s.push_str("\t\t</testcase>\n");
            }
        }
        s.push_str("\t</testsuite>\n</testsuites>");
        s
    }

    /// The summary a person reads: one line per check, and under each failure the changes
    /// that would make it pass; then the verdict.
    pub fn to_text(&self, title: &str) -> String {
        let mut s = format!("{title}\n");
        for r in &self.results {
            let informational = r.bucket() == Bucket::Informational;
            let (tag, why) = match (&r.verdict, informational) {
                (Verdict::Passed, false) => ("PASS", None),
                (Verdict::Passed, true) => ("INFO", Some("passed (not enforced)".to_string())),
                (Verdict::Failed, true) => ("INFO", Some("failed (not enforced)".to_string())),
                (Verdict::Failed, false) if r.bucket() == Bucket::Warned => (
                    "WARN",
                    Some("failed (a warning: not enforced yet)".to_string()),
                ),
                (Verdict::Failed, false) => ("FAIL", None),
                (Verdict::Error(why), _) => ("ERROR", Some(why.clone())),
                (Verdict::NotRun(why), _) => ("NOT RUN", Some(why.clone())),
            };
            let _ = write!(s, "  {tag:<8}{}", r.check.name);
            if let Some(why) = why {
                let _ = write!(s, ": {}", why.trim_end().replace('\n', "\n          "));
            }
            let _ = writeln!(s, " ({})", go_duration::format(round_ms(r.elapsed)));
            for fix in &r.fixes {
                let _ = writeln!(
                    s,
                    "          fix: {}",
                    fix.replace('\n', "\n               ")
                );
            }
            for note in &r.notes {
                let _ = writeln!(
                    s,
                    "          note: {}",
                    note.replace('\n', "\n                ")
                );
            }
        }
        let count = |b| self.in_bucket(b).count();
        let not_run = self.not_run().len();
        let verdict = if self.passed() {
            "PASSED"
        } else if self.passed_what_ran() {
            "INCOMPLETE"
        } else {
            "FAILED"
        };
        let _ = write!(
            s,
            "Result: {verdict} ({} passed, {} failed, {} errors",
            count(Bucket::Passed),
            count(Bucket::Failed),
            count(Bucket::Errors) - not_run
        );
        if not_run > 0 {
            let _ = write!(s, ", {not_run} not run");
        }
        let _ = writeln!(s, ", {} warnings)", count(Bucket::Warned));
        s
    }
}

/// Whole milliseconds (or microseconds below one), so the summary's times stay short.
fn round_ms(d: std::time::Duration) -> std::time::Duration {
    if d.as_millis() > 0 {
        std::time::Duration::from_millis(d.as_millis() as u64)
    } else {
        std::time::Duration::from_micros(d.as_micros() as u64)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::certify::{Check, Level};

    static BEST: Check = Check {
        name: "HasLicense",
        description: "Checking \"licenses\" & more",
        level: Level::Best,
        knowledge_base_url: "https://kb",
        check_url: "https://check",
        help: "Check HasLicense encountered an error.",
        suggestion: "Create a directory named /licenses",
    };
    static WARN: Check = Check {
        name: "RequiredAnnotations",
        level: Level::Warn,
        ..BEST
    };

    fn report() -> Report {
        let mut ok = CheckResult::passed(&BEST);
        ok.elapsed = Duration::from_micros(1500);
        let mut bad = CheckResult::failed(&BEST, vec!["add /licenses/LICENSE".into()]);
        bad.elapsed = Duration::from_millis(1404);
        Report {
            image: "quay.io/o/i:v1".into(),
            results: vec![
                ok,
                bad,
                CheckResult::failed(&WARN, vec![]),
                CheckResult::not_run(&BEST, "no kubeconfig"),
            ],
            certification_hash: None,
        }
    }

    #[test]
    fn results_json_has_preflights_shape() {
        let json = report().to_json();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["passed"], false);
        assert_eq!(v["test_library"]["name"], "olm");
        assert_eq!(v["results"]["passed"][0]["elapsed_time"], 1);
        assert!(v["results"]["passed"][0].get("help").is_none());
        assert_eq!(v["results"]["failed"][0]["elapsed_time"], 1404);
        assert_eq!(v["results"]["failed"][0]["check_url"], "https://check");
        assert!(v["results"]["errors"][0].get("suggestion").is_none());
        assert_eq!(v["results"]["errors"][0]["help"], BEST.help);
        // Keys in preflight's order, four-space indent, Go's HTML escaping.
        assert!(json.starts_with("{\n    \"image\": \"quay.io/o/i:v1\",\n    \"passed\": false,\n    \"test_library\": {\n        \"name\""));
        assert!(json.contains("\\u0026 more"));
        assert!(json.ends_with("}\n"));
    }

    #[test]
    fn junit_is_preflights_layout() {
        let x = report().to_junit();
        let expected = "<testsuites>\n\t<testsuite tests=\"4\" failures=\"2\" warnings=\"1\" time=\"1.405500\" name=\"Red Hat Certification\">\n\t\t<testcase classname=\"quay.io/o/i:v1\" name=\"HasLicense\" time=\"0.001500\">Checking &#34;licenses&#34; &amp; more</testcase>\n\t\t<testcase classname=\"quay.io/o/i:v1\" name=\"HasLicense\" time=\"0s\">\n\t\t\t<failure message=\"Failed\" type=\"\">Check HasLicense encountered an error.: Suggested Fix: Create a directory named /licenses</failure>\n\t\t</testcase>\n\t\t<testcase classname=\"quay.io/o/i:v1\" name=\"HasLicense\" time=\"1.404s\">\n\t\t\t<failure message=\"Failed\" type=\"\">Check HasLicense encountered an error.: Suggested Fix: Create a directory named /licenses</failure>\n\t\t</testcase>\n\t\t<testcase classname=\"quay.io/o/i:v1\" name=\"RequiredAnnotations\" time=\"0s\">\n\t\t\t<warning message=\"Warn\" type=\"\">Check HasLicense encountered an error.: Suggested Fix: Create a directory named /licenses</warning>\n\t\t</testcase>\n\t</testsuite>\n</testsuites>";
        assert_eq!(x, expected);
    }

    #[test]
    fn text_names_every_fix_and_the_checks_that_did_not_run() {
        let r = report();
        let t = r.to_text("olm check container quay.io/o/i:v1");
        assert!(t.contains("FAIL    HasLicense (1.404s)\n          fix: add /licenses/LICENSE"));
        assert!(t.contains("NOT RUN HasLicense: no kubeconfig"));
        assert!(t.contains("WARN    RequiredAnnotations"));
        assert!(
            t.ends_with("Result: FAILED (1 passed, 1 failed, 0 errors, 1 not run, 1 warnings)\n")
        );
        assert!(!r.passed() && !r.passed_what_ran());
    }
}
