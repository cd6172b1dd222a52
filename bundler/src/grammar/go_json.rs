//! Go's `encoding/json` string escaping: `<`, `>`, `&`, U+2028 and U+2029 become `\u003c`,
//! `\u003e`, `\u0026`, `\u2028`, `\u2029` (HTML-safe output, its default). Those characters
//! occur in JSON text only inside strings, so escaping the text escapes the strings.

/// `json` (serde_json's output) as Go would have escaped it.
pub fn escape_html(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_what_go_escapes() {
        assert_eq!(
            super::escape_html("{\"a\":\"<b> & \u{2028}\"}"),
            "{\"a\":\"\\u003cb\\u003e \\u0026 \\u2028\"}"
        );
    }
}
