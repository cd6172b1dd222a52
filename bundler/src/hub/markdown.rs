//! A catalog's Markdown description as HTML that cannot run anything: raw HTML in the text is
//! shown as text, links keep only `http`, `https`, `mailto` and relative targets, and images
//! become links (a browsing cluster may be air-gapped, and nothing is fetched from elsewhere).

use pulldown_cmark::{CowStr, Event, Options, Parser, Tag, TagEnd};

/// The HTML of `markdown`, sanitised.
pub fn to_html(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        // The only ways raw HTML reaches the output: shown as text instead.
        Event::Html(raw) | Event::InlineHtml(raw) => Event::Text(raw),
        Event::Start(Tag::HtmlBlock) => Event::Start(Tag::Paragraph),
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::Paragraph),
        Event::Start(Tag::Link {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::Start(Tag::Image {
            link_type,
            dest_url,
            title,
            id,
        }) => Event::Start(Tag::Link {
            link_type,
            dest_url: safe_url(dest_url),
            title,
            id,
        }),
        Event::End(TagEnd::Image) => Event::End(TagEnd::Link),
        other => other,
    });
    let mut out = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut out, events);
    out
}

/// `url` when its scheme is one a description may link to (or it has none), else `#`.
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    // Browsers drop ASCII whitespace and control characters inside a scheme
    // (`java\tscript:`): judge the URL as they would read it.
    let seen: String = url
        .chars()
        .filter(|c| !c.is_ascii_whitespace() && !c.is_ascii_control())
        .collect::<String>()
        .to_ascii_lowercase();
    let scheme_end = seen.find(':');
    let path_start = seen.find(['/', '?', '#']);
    let has_scheme = match (scheme_end, path_start) {
        (Some(colon), Some(path)) => colon < path,
        (Some(_), None) => true,
        (None, _) => false,
    };
    let allowed = !has_scheme
        || ["http:", "https:", "mailto:"]
            .iter()
            .any(|s| seen.starts_with(s));
    match allowed {
        true => url,
        false => CowStr::Borrowed("#"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_text() {
        let html = to_html("Hi <script>alert(1)</script>\n\n<div onclick=x>block</div>\n");
        assert!(!html.contains("<script"), "{html}");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{html}"
        );
        assert!(!html.contains("<div"), "{html}");
        assert!(html.contains("&lt;div onclick=x&gt;"), "{html}");
    }

    #[test]
    fn only_safe_link_schemes_survive() {
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "java\tscript:alert(1)",
            " javascript:alert(1)",
            "data:text/html;base64,PHNjcmlwdD4=",
            "vbscript:x",
        ] {
            let html = to_html(&format!("[x](<{bad}>) ![img](<{bad}>)"));
            assert!(
                !html.to_ascii_lowercase().contains("script:"),
                "{bad}: {html}"
            );
            assert!(!html.contains("data:"), "{bad}: {html}");
            assert!(html.contains(r##"href="#""##), "{bad}: {html}");
        }
        let html = to_html("[a](https://example.com/x?y=1) [b](mailto:a@b.c) [c](docs/x.md)");
        assert!(
            html.contains(r#"href="https://example.com/x?y=1""#),
            "{html}"
        );
        assert!(html.contains(r#"href="mailto:a@b.c""#), "{html}");
        assert!(html.contains(r#"href="docs/x.md""#), "{html}");
    }

    #[test]
    fn images_become_links_and_markdown_renders() {
        let html = to_html(
            "# Title\n\n![logo](https://example.com/l.png)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        );
        assert!(html.contains("<h1>Title</h1>"), "{html}");
        assert!(!html.contains("<img"), "{html}");
        assert!(
            html.contains(r#"<a href="https://example.com/l.png">logo</a>"#),
            "{html}"
        );
        assert!(html.contains("<table>"), "{html}");
    }
}
