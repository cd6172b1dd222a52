//! Name grammars shared by the generator and the validators: Kubernetes object names, label
//! values, qualified names, versions (OLM's tolerant semver and blang ranges), e-mail addresses,
//! URLs and image pull specs. Each check returns the list of problems in words a user can act
//! on; an empty list means valid.

/// RFC 1123 subdomain: what Kubernetes requires of most object names (253 chars max).
pub fn dns1123_subdomain(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let ok = !s.is_empty()
        && s.split('.').all(|part| {
            !part.is_empty()
                && part
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !part.starts_with('-')
                && !part.ends_with('-')
        });
    if !ok {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com')"
                .to_string(),
        );
    }
    errs
}

/// RFC 1123 label (63 chars, no dots): namespaces.
pub fn dns1123_label(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if s.is_empty()
        || !s
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        || s.starts_with('-')
        || s.ends_with('-')
    {
        errs.push(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \
             '-', and must start and end with an alphanumeric character"
                .to_string(),
        );
    }
    errs
}

/// RFC 1035 label (starts with a letter): CRD plural/singular/kind names.
pub fn dns1035_label(s: &str) -> Vec<String> {
    let mut errs = dns1123_label(s)
        .into_iter()
        .filter(|e| e.starts_with("must be"))
        .collect::<Vec<_>>();
    let ok = s.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.ends_with('-');
    if !ok {
        errs.push(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start \
             with an alphabetic character, and end with an alphanumeric character"
                .to_string(),
        );
    }
    errs
}

/// A label value: empty, or up to 63 chars of `[A-Za-z0-9._-]` starting and ending alphanumeric.
pub fn label_value(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 bytes".to_string());
    }
    if !s.is_empty() {
        let inner_ok = s
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        let ends_ok = s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
            && s.as_bytes().last().is_some_and(u8::is_ascii_alphanumeric);
        if !inner_ok || !ends_ok {
            errs.push(
                "a valid label must be an empty string or consist of alphanumeric characters, \
                 '-', '_' or '.', and must start and end with an alphanumeric character"
                    .to_string(),
            );
        }
    }
    errs
}

/// A qualified name (label and annotation keys): `[prefix/]name`, prefix a DNS subdomain,
/// name up to 63 chars of `[A-Za-z0-9._-]` starting and ending alphanumeric.
pub fn qualified_name(s: &str) -> Vec<String> {
    let (prefix, name) = match s.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    let mut errs = Vec::new();
    if let Some(p) = prefix {
        if p.is_empty() {
            errs.push("prefix part must be non-empty".to_string());
        } else {
            errs.extend(
                dns1123_subdomain(p)
                    .into_iter()
                    .map(|e| format!("prefix part {e}")),
            );
        }
    }
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else {
        if name.len() > 63 {
            errs.push("name part must be no more than 63 characters".to_string());
        }
        let ok = name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            && name
                .as_bytes()
                .first()
                .is_some_and(u8::is_ascii_alphanumeric)
            && name
                .as_bytes()
                .last()
                .is_some_and(u8::is_ascii_alphanumeric);
        if !ok {
            errs.push(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must \
                 start and end with an alphanumeric character"
                    .to_string(),
            );
        }
    }
    errs
}

/// OLM's tolerant version parse (blang `ParseTolerant`): trims spaces, drops a leading `v`,
/// pads `1.2` to `1.2.0` and strips leading zeros, then parses strictly.
pub fn parse_tolerant(s: &str) -> Result<semver::Version, String> {
    let s = s.trim();
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_string).collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain pre-release or build metadata".into());
        }
        while parts.len() < 3 {
            parts.push("0".into());
        }
    }
    for p in parts.iter_mut().take(2) {
        let trimmed = p.trim_start_matches('0');
        *p = if trimmed.is_empty() && !p.is_empty() {
            "0".into()
        } else {
            trimmed.to_string()
        };
    }
    // The third part may carry pre-release/build; strip leading zeros of its number only.
    if let Some(third) = parts.get_mut(2) {
        let end = third.find(['-', '+']).unwrap_or(third.len());
        let (num, rest) = third.split_at(end);
        let trimmed = num.trim_start_matches('0');
        let num = if trimmed.is_empty() && !num.is_empty() {
            "0"
        } else {
            trimmed
        };
        *third = format!("{num}{rest}");
    }
    semver::Version::parse(&parts.join(".")).map_err(|e| e.to_string())
}

/// Strict semver (blang `Parse`): what OLM uses for `minKubeVersion`.
pub fn parse_strict(s: &str) -> Result<semver::Version, String> {
    semver::Version::parse(s).map_err(|e| e.to_string())
}

/// Checks a blang/semver v4 range expression (`olm.skipRange`, `olm.package` dependency
/// versions): `||`-separated alternatives of space-separated `[op]version` terms, where op is
/// one of `> >= < <= = == !=` (optionally followed by spaces) and versions may use `x`
/// wildcards (`1.2.x`).
pub fn check_range(s: &str) -> Result<(), String> {
    if s.trim().is_empty() {
        return Err("empty range".into());
    }
    for alt in s.split("||") {
        let words: Vec<&str> = alt.split_whitespace().collect();
        if words.is_empty() {
            return Err(format!("empty alternative in range {s:?}"));
        }
        let mut i = 0;
        while i < words.len() {
            let mut term = words[i].to_string();
            // blang joins an operator written apart from its version ("> 1.0.0").
            if matches!(term.as_str(), ">" | ">=" | "<" | "<=" | "=" | "==" | "!=") {
                i += 1;
                let Some(next) = words.get(i) else {
                    return Err(format!(
                        "operator {term:?} without a version in range {s:?}"
                    ));
                };
                term.push_str(next);
            }
            let version = term.trim_start_matches(['>', '<', '=', '!']);
            let version = version
                .split('.')
                .map(|p| {
                    if p == "x" || p == "X" || p == "*" {
                        "0"
                    } else {
                        p
                    }
                })
                .collect::<Vec<_>>()
                .join(".");
            let padded = match version.split('.').count() {
                1 => format!("{version}.0.0"),
                2 => format!("{version}.0"),
                _ => version.clone(),
            };
            semver::Version::parse(&padded)
                .map_err(|e| format!("invalid version {version:?} in range {s:?}: {e}"))?;
            i += 1;
        }
    }
    Ok(())
}

/// An e-mail address as Go's `net/mail.ParseAddress` accepts it, in its common forms
/// `a@b.c` and `Name <a@b.c>`.
pub fn check_email(s: &str) -> Result<(), String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("no address".into());
    }
    let addr = match (s.rfind('<'), s.ends_with('>')) {
        (Some(i), true) => &s[i + 1..s.len() - 1],
        (None, false) => s,
        _ => return Err("unclosed angle-addr".into()),
    };
    let Some((local, domain)) = addr.rsplit_once('@') else {
        return Err("missing '@' or angle-addr".into());
    };
    if local.is_empty() || local.contains(char::is_whitespace) {
        return Err("invalid local part".into());
    }
    if domain.is_empty() || domain.contains(char::is_whitespace) || domain.contains('@') {
        return Err("invalid domain".into());
    }
    Ok(())
}

/// A URL as Go's `url.ParseRequestURI` accepts it: an absolute URI (`scheme:...`) or an
/// absolute path.
pub fn check_request_uri(s: &str) -> Result<(), String> {
    if s.starts_with('/') {
        return Ok(());
    }
    if s.contains(char::is_whitespace) {
        return Err("invalid character \" \" in URL".into());
    }
    match s.split_once(':') {
        Some((scheme, _))
            if scheme
                .as_bytes()
                .first()
                .is_some_and(u8::is_ascii_alphabetic)
                && scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) =>
        {
            Ok(())
        }
        Some(("", _)) => Err("missing protocol scheme".into()),
        _ => Err("invalid URI for request".into()),
    }
}

/// Checks an image pull spec as the container tooling's reference grammar does
/// (`[registry[:port]/]path[:tag][@algo:hex]`, lowercase repository).
pub fn check_image_reference(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("repository name must have at least one component".into());
    }
    let (name_tag, digest) = match s.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (s, None),
    };
    if let Some(d) = digest {
        let Some((algo, hex)) = d.split_once(':') else {
            return Err("invalid digest format".into());
        };
        let algo_ok = !algo.is_empty()
            && algo.as_bytes()[0].is_ascii_alphabetic()
            && algo
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'_' | b'-'));
        if !algo_ok || hex.len() < 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("invalid digest format".into());
        }
    }
    let last_slash = name_tag.rfind('/').map(|i| i + 1).unwrap_or(0);
    let (name, tag) = match name_tag[last_slash..].rfind(':') {
        Some(i) => (
            &name_tag[..last_slash + i],
            Some(&name_tag[last_slash + i + 1..]),
        ),
        None => (name_tag, None),
    };
    if let Some(t) = tag {
        let ok = !t.is_empty()
            && t.len() <= 128
            && (t.as_bytes()[0].is_ascii_alphanumeric() || t.as_bytes()[0] == b'_')
            && t.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        if !ok {
            return Err(format!("invalid tag {t:?}"));
        }
    }
    if name.len() > 255 {
        return Err("repository name must not be more than 255 characters".into());
    }
    let mut components: Vec<&str> = name.split('/').collect();
    if components.len() > 1 {
        let first = components[0];
        if first.contains(['.', ':'])
            || first == "localhost"
            || first.chars().any(|c| c.is_ascii_uppercase())
        {
            check_domain(first)?;
            components.remove(0);
        }
    }
    if name.chars().any(|c| c.is_ascii_uppercase())
        && !components
            .iter()
            .all(|c| !c.chars().any(|c| c.is_ascii_uppercase()))
    {
        return Err("repository name must be lowercase".into());
    }
    for c in components {
        if !path_component_ok(c) {
            return Err("invalid reference format".into());
        }
    }
    Ok(())
}

fn check_domain(d: &str) -> Result<(), String> {
    let (host, port) = match d.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || d.starts_with('[') => (h, Some(p)),
        _ => (d, None),
    };
    if let Some(p) = port
        && (p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return Err("invalid reference format".into());
    }
    if host.starts_with('[') && host.ends_with(']') {
        return Ok(());
    }
    let ok = !host.is_empty()
        && host.split('.').all(|c| {
            !c.is_empty()
                && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !c.starts_with('-')
                && !c.ends_with('-')
        });
    if ok {
        Ok(())
    } else {
        Err("invalid reference format".into())
    }
}

/// `[a-z0-9]+` joined by `.`, `_`, `__` or runs of `-`.
fn path_component_ok(c: &str) -> bool {
    let b = c.as_bytes();
    if b.is_empty() || !is_lower_alnum(b[0]) || !is_lower_alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if is_lower_alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !is_lower_alnum(b[i]) {
            i += 1;
        }
        let sep = &c[start..i];
        if !(sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|x| x == b'-')) {
            return false;
        }
    }
    true
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subdomains() {
        assert!(dns1123_subdomain("etcdoperator.v0.9.4").is_empty());
        assert!(!dns1123_subdomain("Etcd").is_empty());
        assert!(!dns1123_subdomain("a..b").is_empty());
        assert!(!dns1123_subdomain("").is_empty());
    }

    #[test]
    fn label_values() {
        assert!(label_value("").is_empty());
        assert!(label_value("a.b_c-d").is_empty());
        assert_eq!(label_value(&"a".repeat(64)).len(), 1);
        assert!(!label_value("-a").is_empty());
    }

    #[test]
    fn tolerant_versions() {
        assert_eq!(parse_tolerant("v1.2").unwrap().to_string(), "1.2.0");
        assert_eq!(parse_tolerant("01.02.03").unwrap().to_string(), "1.2.3");
        assert_eq!(
            parse_tolerant("0.1.0-alpha.1").unwrap().to_string(),
            "0.1.0-alpha.1"
        );
        assert!(parse_tolerant("1.2-beta").is_err());
        assert!(parse_strict("1.21").is_err());
    }

    #[test]
    fn ranges() {
        assert!(check_range(">=1.0.0 <1.2.0").is_ok());
        assert!(check_range(">= 1.0.0 < 1.2.0 || 2.x").is_ok());
        assert!(check_range(">=4.1.0 <4.1.5-0").is_ok());
        assert!(check_range("banana").is_err());
        assert!(check_range("").is_err());
    }

    #[test]
    fn images() {
        for ok in [
            "quay.io/org/op:v1.0.0",
            "busybox",
            "localhost:5000/a/b@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "registry.redhat.io/ubi9/ubi-minimal:9.4-1194",
            "[::1]:5000/x:y",
        ] {
            assert!(check_image_reference(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "quay.io/Org/op",
            "a/b:",
            "a//b",
            "x@sha256:zz",
            "quay.io/a/b:t@",
        ] {
            assert!(check_image_reference(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn emails_and_urls() {
        assert!(check_email("a@b.io").is_ok());
        assert!(check_email("Jane <a@b.io>").is_ok());
        assert!(check_email("nobody").is_err());
        assert!(check_request_uri("https://x.io/a").is_ok());
        assert!(check_request_uri("x.io/a").is_err());
    }
}
