//! E-mail addresses as Go's `net/mail.ParseAddress` accepts them (operator-sdk's OperatorHub
//! validator checks `spec.maintainers[].email` with it).

/// An e-mail address as Go's `net/mail.ParseAddress` accepts it, in its common forms
/// `a@b.c` and `Name <a@b.c>`.
pub fn check(s: &str) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn common_forms() {
        for (s, ok) in [
            ("a@b.io", true),
            ("Jane <a@b.io>", true),
            ("  a@b.io ", true),
            ("nobody", false),
            ("", false),
            ("Jane <a@b.io", false),
            ("a b@c.io", false),
            ("a@", false),
            ("@b.io", false),
        ] {
            assert_eq!(check(s).is_ok(), ok, "{s:?}");
        }
    }
}
