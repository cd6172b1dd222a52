//! URLs as Go's `url.ParseRequestURI` accepts them (operator-sdk's validators check
//! `spec.links[].url` and the `api-approved.kubernetes.io` annotation with it).

/// A URL as Go's `url.ParseRequestURI` accepts it: an absolute URI (`scheme:...`) or an
/// absolute path.
pub fn check(s: &str) -> Result<(), String> {
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

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn absolute_uris_and_paths() {
        for (s, ok) in [
            ("https://x.io/a", true),
            ("mailto:a@b.io", true),
            ("/just/a/path", true),
            ("x.io/a", false),
            ("://x.io", false),
            ("https://x.io/a b", false),
            ("1http://x.io", false),
        ] {
            assert_eq!(check(s).is_ok(), ok, "{s:?}");
        }
    }
}
