//! ScorecardBasicSpecCheck and ScorecardOlmSuiteCheck judge a scorecard run with a label
//! selector, as preflight's `scorecardCheck.validate` does: any result whose state contains
//! "fail" makes the check an error (not a failure: preflight returns `false` with an error,
//! and its engine files that under errors) whose message is the last failing result's log.

use super::{SCORECARD_BASIC, SCORECARD_OLM};
use crate::certify::{Check, CheckResult};

/// The selector each check runs scorecard with.
pub const BASIC_SELECTOR: &str = "test=basic-check-spec-test";
pub const OLM_SELECTOR: &str = "suite=olm";

/// The artifact each check's scorecard output is written to.
pub const BASIC_ARTIFACT: &str = "operator_bundle_scorecard_BasicSpecCheck.json";
pub const OLM_ARTIFACT: &str = "operator_bundle_scorecard_OlmSuiteCheck.json";

/// The two checks with their selectors and artifact names.
pub const CHECKS: [(&Check, &str, &str); 2] = [
    (&SCORECARD_BASIC, BASIC_SELECTOR, BASIC_ARTIFACT),
    (&SCORECARD_OLM, OLM_SELECTOR, OLM_ARTIFACT),
];

/// One result of a scorecard test (v1alpha3 `TestResult`), what the verdict reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestOutcome {
    /// The test's name (`olm-crds-have-validation`).
    pub name: String,
    /// `pass`, `fail` or `error`.
    pub state: String,
    pub log: String,
    pub errors: Vec<String>,
    pub suggestions: Vec<String>,
}

/// The check's verdict on the results of its selector's tests.
pub fn judge(check: &'static Check, results: &[TestOutcome]) -> CheckResult {
    let failing: Vec<&TestOutcome> = results
        .iter()
        .filter(|r| r.state.contains("fail"))
        .collect();
    let Some(last) = failing.last() else {
        let mut r = CheckResult::passed(check);
        if results.is_empty() {
            r.notes.push(
                "warning: did not receive any test result information from scorecard output".into(),
            );
        }
        return r;
    };
    let mut r = CheckResult::error(check, format!("result log: {}", last.log));
    for t in failing {
        for e in &t.errors {
            r.fixes.push(format!("{}: {e}", t.name));
        }
        for s in &t.suggestions {
            r.fixes.push(format!("{}: {s}", t.name));
        }
        if t.errors.is_empty() && t.suggestions.is_empty() {
            r.fixes.push(format!("{}: failed (see its log)", t.name));
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certify::Verdict;

    fn outcome(state: &str) -> TestOutcome {
        TestOutcome {
            name: "olm-bundle-validation".into(),
            state: state.into(),
            log: "log".into(),
            ..Default::default()
        }
    }

    /// preflight's scorecard tests: a pass passes; a fail is an error with the result's log.
    #[test]
    fn verdicts_follow_preflights_scorecard_rule() {
        assert_eq!(
            judge(&SCORECARD_BASIC, &[outcome("pass")]).verdict,
            Verdict::Passed
        );
        let r = judge(&SCORECARD_BASIC, &[outcome("pass"), outcome("fail")]);
        assert_eq!(r.verdict, Verdict::Error("result log: log".into()));
        assert_eq!(r.fixes, ["olm-bundle-validation: failed (see its log)"]);
        // Only "fail" counts: an `error` state passes, as in preflight.
        assert_eq!(
            judge(&SCORECARD_OLM, &[outcome("error")]).verdict,
            Verdict::Passed
        );
        assert_eq!(judge(&SCORECARD_OLM, &[]).verdict, Verdict::Passed);
    }
}
