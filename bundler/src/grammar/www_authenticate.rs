//! `WWW-Authenticate` challenges as distribution's registry client reads them
//! (`registry/client/auth/challenge`, what docker and containers-image use): a scheme token,
//! lower-cased, then `key=value` parameters separated by commas, keys lower-cased, values a
//! token or a quoted string with `\` escapes. One challenge per header value; parsing stops at
//! the first thing that does not fit and keeps the parameters read so far.

use std::collections::BTreeMap;

/// One challenge: `Bearer realm="https://auth.example/token",service="registry.example"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// Lower-cased: `basic`, `bearer`.
    pub scheme: String,
    /// Lower-cased keys: `realm`, `service`, `scope`.
    pub params: BTreeMap<String, String>,
}

impl Challenge {
    pub fn param(&self, key: &str) -> Option<&str> {
        self.params.get(key).map(String::as_str)
    }
}

/// RFC 2616 separators: not part of a token.
const SEPARATORS: &[u8] = b" \t\"(),/:;<=>?@[]\\{}";

fn is_token(b: u8) -> bool {
    b.is_ascii() && !b.is_ascii_control() && !SEPARATORS.contains(&b)
}

fn skip_space(s: &str) -> &str {
    s.trim_start_matches([' ', '\t', '\r', '\n'])
}

fn token(s: &str) -> (&str, &str) {
    let end = s.bytes().position(|b| !is_token(b)).unwrap_or(s.len());
    s.split_at(end)
}

/// A token, or a quoted string with its escapes undone; `None` for an empty one or an
/// unterminated quote.
fn token_or_quoted(s: &str) -> Option<(String, &str)> {
    let Some(body) = s.strip_prefix('"') else {
        let (t, rest) = token(s);
        return (!t.is_empty()).then(|| (t.to_string(), rest));
    };
    let mut out = Vec::new();
    let mut escape = false;
    for (i, b) in body.bytes().enumerate() {
        match b {
            _ if escape => {
                escape = false;
                out.push(b);
            }
            b'\\' => escape = true,
            b'"' => {
                let value = String::from_utf8_lossy(&out).into_owned();
                return (!value.is_empty()).then(|| (value, &body[i + 1..]));
            }
            _ => out.push(b),
        }
    }
    None
}

/// Parses one header value; `None` when it does not start with a scheme.
pub fn parse(header: &str) -> Option<Challenge> {
    let (scheme, mut rest) = token(header);
    if scheme.is_empty() {
        return None;
    }
    let mut params = BTreeMap::new();
    rest = skip_space(rest);
    let mut first = true;
    loop {
        let item = if first {
            rest
        } else {
            match rest.strip_prefix(',') {
                Some(r) => r,
                None => break,
            }
        };
        first = false;
        let (key, after) = token(skip_space(item));
        let Some(after) = after.strip_prefix('=').filter(|_| !key.is_empty()) else {
            break;
        };
        let Some((value, after)) = token_or_quoted(after) else {
            break;
        };
        params.insert(key.to_ascii_lowercase(), value);
        rest = skip_space(after);
    }
    Some(Challenge {
        scheme: scheme.to_ascii_lowercase(),
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scheme and its parameters, as the test table writes them.
    type Parsed = Option<(&'static str, &'static [(&'static str, &'static str)])>;

    /// Verdicts of distribution's `parseValueAndParams` (its own test case first).
    #[test]
    fn challenges_as_distribution_reads_them() {
        let cases: &[(&str, Parsed)] = &[
            (
                r#"Bearer realm="https://auth.example.com/token",service="registry.example.com",other=fun,slashed="he\"\l\lo""#,
                Some((
                    "bearer",
                    &[
                        ("other", "fun"),
                        ("realm", "https://auth.example.com/token"),
                        ("service", "registry.example.com"),
                        ("slashed", "he\"llo"),
                    ],
                )),
            ),
            (
                r#"Basic realm="olm-test""#,
                Some(("basic", &[("realm", "olm-test")])),
            ),
            (
                r#"BEARER Realm="r" , Scope="repository:a/b:pull,push""#,
                Some((
                    "bearer",
                    &[("realm", "r"), ("scope", "repository:a/b:pull,push")],
                )),
            ),
            // Stops at what does not fit, keeping what came before.
            (
                r#"Bearer realm="r",service"#,
                Some(("bearer", &[("realm", "r")])),
            ),
            (
                r#"Bearer realm="r" service="s""#,
                Some(("bearer", &[("realm", "r")])),
            ),
            (r#"Bearer ,realm="r""#, Some(("bearer", &[]))),
            (r#"Bearer realm="unterminated"#, Some(("bearer", &[]))),
            (r#"Bearer realm="""#, Some(("bearer", &[]))),
            ("", None),
            (r#""quoted" realm=x"#, None),
        ];
        for (header, want) in cases {
            let got = parse(header).map(|c| {
                let params: Vec<(String, String)> = c.params.into_iter().collect();
                (c.scheme, params)
            });
            let want = want.map(|(s, ps)| {
                let params: Vec<(String, String)> = ps
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                (s.to_string(), params)
            });
            assert_eq!(got, want, "{header}");
        }
    }
}
