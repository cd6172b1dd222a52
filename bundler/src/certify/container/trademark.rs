//! preflight's `violatesRedHatTrademark`: a value starting with "Red Hat" (any spacing or
//! punctuation between and before the words, any case) violates it; so does naming
//! "Red Hat" anywhere else, except once as "for Red Hat".

use std::sync::LazyLock;

use regex::Regex;

static STARTS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^[^a-z0-9]*red[^a-z0-9]*hat").expect("regex"));
static CONTAINS: LazyLock<Regex> = LazyLock::new(|| Regex::new("red[^a-z0-9]*hat").expect("regex"));
static FOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("for[^a-z0-9]*red[^a-z0-9]*hat").expect("regex"));

/// Whether `s` violates the Red Hat trademark rule.
pub fn violates(s: &str) -> bool {
    let lower = s.to_lowercase();
    let starting = STARTS.is_match(&lower);
    let mut count = CONTAINS.find_iter(&lower).count() as i64;
    if starting {
        count -= 1;
    }
    if FOR.is_match(&lower) {
        count -= 1;
    }
    starting || count > 0
}

#[cfg(test)]
mod tests {
    use super::violates;

    /// preflight's `trademark_validator_test.go` table, and two clean names.
    #[test]
    fn verdicts_match_preflights_table() {
        for (s, want) in [
            ("Red Hat", true),
            ("Something for Red Hat OpenShift", false),
            ("Red-Hat", true),
            ("Red_Hat", true),
            ("For-Red-Hat", false),
            ("For_Red_Hat", false),
            ("RED\t\tHAT\t\t\t", true),
            ("redhat", true),
            ("something by red hat for red hat", true),
            ("red hat product for red hat", true),
            ("Acme Operator", false),
            ("", false),
        ] {
            assert_eq!(violates(s), want, "{s:?}");
        }
    }
}
