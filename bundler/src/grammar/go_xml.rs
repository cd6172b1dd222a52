//! Text and attribute values as Go's `encoding/xml` writes them (`escapeText` with newlines
//! escaped, what `xml.Marshal` uses for both): `"` `'` `&` `<` `>` as entities, tab, newline
//! and carriage return as character references, characters XML cannot hold as U+FFFD.

/// `s` escaped as Go's `xml.EscapeText` escapes it.
pub fn escape(s: &str) -> String {
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
            c if in_character_range(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// XML 1.0's `Char` production (`isInCharacterRange`).
fn in_character_range(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_go_encoding_xml() {
        assert_eq!(
            escape("a \"b\" & 'c' <d>\te\nf\r"),
            "a &#34;b&#34; &amp; &#39;c&#39; &lt;d&gt;&#x9;e&#xA;f&#xD;"
        );
        assert_eq!(escape("µs \u{1}"), "µs \u{FFFD}");
    }
}
