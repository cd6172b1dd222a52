//! Kubernetes name grammars, with the messages of k8s.io/apimachinery
//! `pkg/util/validation/validation.go` (`IsDNS1123Subdomain`, `IsDNS1123Label`,
//! `IsDNS1035Label`, `IsValidLabelValue`, `IsQualifiedName`, `MaxLenError`, `RegexError`,
//! `EmptyError`). Each check returns the list of problems; empty means valid.

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// `MaxLenError`, as current apimachinery words it (operator-framework/api's `badName.csv.yaml`
/// test expects `must be no more than 63 bytes`; older releases said "characters").
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

/// `RegexError`: the message, its examples and the regex (Go's odd `', or '` spacing kept).
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = msg.to_string();
    if examples.is_empty() {
        return format!("{out} (regex used for validation is '{fmt}')");
    }
    out.push_str(" (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

fn lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`
fn is_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && lower_alnum(b[0])
        && lower_alnum(b[b.len() - 1])
        && b.iter().all(|&c| lower_alnum(c) || c == b'-')
}

fn is_subdomain(s: &str) -> bool {
    s.split('.').all(is_label)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsDNS1123Subdomain`: what Kubernetes requires of most object names (253 characters).
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !is_subdomain(s) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1123Label`: namespaces, package names (63 characters, no dots).
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !is_label(s) {
        if is_subdomain(s) {
            // A valid subdomain but not a label: the length was checked, so it is the dots.
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `IsDNS1035Label` (starts with a letter): CRD plural, singular and kind names.
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !(is_label(s) && s.as_bytes()[0].is_ascii_lowercase()) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsValidLabelValue`: empty, or up to 63 characters of `[A-Za-z0-9._-]` starting and ending
/// alphanumeric.
pub fn label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !s.is_empty() && !is_qualified_name_part(s) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `IsQualifiedName` (label and annotation keys): `[prefix/]name`, the prefix a DNS subdomain,
/// the name up to 63 characters of `[A-Za-z0-9._-]` starting and ending alphanumeric.
pub fn qualified_name(s: &str) -> Vec<String> {
    let parts: Vec<&str> = s.split('/').collect();
    let mut errs = Vec::new();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    //! Verdicts from the regexes in apimachinery `validation.go` (anchored `^...$`).
    use super::*;

    #[test]
    fn subdomains_labels_and_1035_labels() {
        // (input, IsDNS1123Subdomain ok, IsDNS1123Label ok, IsDNS1035Label ok)
        let long_label = "a".repeat(64);
        let table: &[(&str, bool, bool, bool)] = &[
            ("etcdoperator.v0.9.4", true, false, false),
            ("my-name", true, true, true),
            ("123-abc", true, true, false),
            ("a", true, true, true),
            ("0", true, true, false),
            ("", false, false, false),
            ("Etcd", false, false, false),
            ("UPPER", false, false, false),
            ("a..b", false, false, false),
            ("-a", false, false, false),
            ("a-", false, false, false),
            ("a_b", false, false, false),
            (".a", false, false, false),
            ("a.b-c.d", true, false, false),
            (&long_label, true, false, false),
        ];
        for (s, sub, label, l1035) in table {
            assert_eq!(dns1123_subdomain(s).is_empty(), *sub, "subdomain {s:?}");
            assert_eq!(dns1123_label(s).is_empty(), *label, "label {s:?}");
            assert_eq!(dns1035_label(s).is_empty(), *l1035, "1035 {s:?}");
        }
        assert!(!dns1123_subdomain(&format!("{}.b", "a".repeat(253))).is_empty());
    }

    #[test]
    fn messages_are_apimachinery_texts() {
        assert_eq!(dns1123_label("a.b"), ["must not contain dots"]);
        assert_eq!(
            dns1123_label("A"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(
            dns1123_label(&"a".repeat(64)),
            ["must be no more than 63 bytes"]
        );
        assert_eq!(
            dns1123_subdomain("A"),
            [
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
    }

    #[test]
    fn label_values_and_qualified_names() {
        for (s, ok) in [
            ("", true),
            ("a.b_c-d", true),
            ("MyValue", true),
            ("-a", false),
            ("a ", false),
        ] {
            assert_eq!(label_value(s).is_empty(), ok, "{s:?}");
        }
        assert_eq!(label_value(&"a".repeat(64)).len(), 1);
        for (s, ok) in [
            ("app", true),
            ("example.com/MyName", true),
            ("app.kubernetes.io/name", true),
            ("/name", false),
            ("Example.com/name", false),
            ("a/b/c", false),
            ("a/", false),
            ("_a", false),
        ] {
            assert_eq!(qualified_name(s).is_empty(), ok, "{s:?}");
        }
        assert_eq!(
            qualified_name("a/"),
            [
                "name part must be non-empty",
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            ]
        );
    }
}
