//! The browser's HTML: the grid of packages (`index.html`) and one page per package
//! (`packages/<file>.html`). Pages are complete documents: inline CSS, one inline script
//! allowed by its hash in the page's Content-Security-Policy, icons as `data:` URIs, so they
//! read the same from `olm catalog serve`, a static host or a file on disk, with no network.
//! Every text from the catalog is escaped; the description is sanitised Markdown.

use std::fmt::Write;

use base64::Engine;
use sha2::{Digest, Sha256};

use super::markdown;
use super::snippets::Snippets;
use super::view::PackageView;

/// HTML-escapes text for element content and quoted attribute values: the escape the
/// upgrade graph's SVG uses, valid in both.
pub use crate::catalog::graph::xml as esc;

/// The file name of a package's page (without `.html`): the name itself when it is made of
/// lowercase letters, digits, `-`, `_` and `.` (not leading), else the name with other
/// characters replaced and a hash of the name appended, so names never collide or escape.
pub fn page_file(name: &str) -> String {
    if crate::serve::runtime::ui::is_page_name(name) {
        return name.to_string();
    }
    let cleaned: String = name
        .chars()
        .take(64)
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '-' | '_' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '-',
        })
        .collect();
    let hash = hex::encode(&Sha256::digest(name.as_bytes())[..6]);
    format!("{}-{hash}", cleaned.trim_start_matches('-'))
}

const STYLE: &str = r#"
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f8fa}
a{color:#0a58ca}header.top{background:#1f2d3d;color:#fff;padding:12px 24px;display:flex;gap:16px;align-items:center}
header.top a{color:#fff;text-decoration:none;font-weight:600}header.top .sub{opacity:.75;font-size:13px}
main{max-width:1200px;margin:0 auto;padding:20px 24px}
.filters{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:16px}
.filters input,.filters select{font:inherit;padding:8px 10px;border:1px solid #c9d1d9;border-radius:6px;background:#fff}
.filters input{flex:1;min-width:240px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:16px}
.card{display:flex;flex-direction:column;gap:6px;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px;text-decoration:none;color:inherit;min-height:190px}
.card[hidden]{display:none}.card:hover{border-color:#0a58ca;box-shadow:0 1px 6px rgba(0,0,0,.08)}
.card .head{display:flex;gap:12px;align-items:center}.card h2{font-size:16px;margin:0}
.icon{width:48px;height:48px;object-fit:contain;flex:none}.icon.big{width:80px;height:80px}
.noicon{width:48px;height:48px;border-radius:8px;background:#dde3ea;display:flex;align-items:center;justify-content:center;font-weight:700;color:#57606a;flex:none}
.provider{color:#57606a;font-size:13px}.desc{font-size:14px;color:#333;overflow:hidden}
.tags{display:flex;flex-wrap:wrap;gap:4px;margin-top:auto}
.tag{font-size:12px;background:#eef1f4;border-radius:10px;padding:1px 8px;color:#444}.tag.cap{background:#e6f0ff;color:#0a3d91}
.tag.dep{background:#fff1d6;color:#7a4b00}
.count{color:#57606a;font-size:13px;margin:0 0 8px}
.pkg{display:grid;grid-template-columns:minmax(0,1fr) 300px;gap:24px}
.pkg aside{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px;font-size:14px;align-self:start}
.pkg aside dt{font-weight:600;margin-top:8px}.pkg aside dd{margin:0;word-break:break-all}
section.box{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:16px 20px;margin-bottom:20px}
section.box>h2{margin-top:0;font-size:18px}
.title{display:flex;gap:16px;align-items:center;margin-bottom:16px}.title h1{margin:0;font-size:26px}
table{border-collapse:collapse;width:100%;font-size:14px}th,td{border-bottom:1px solid #e5e9ee;text-align:left;padding:6px 8px;vertical-align:top}
pre{background:#0d1117;color:#e6edf3;padding:12px;border-radius:6px;overflow:auto;font-size:13px;line-height:1.4;position:relative}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.snippet{position:relative}.copy{position:absolute;top:8px;right:8px;font:12px system-ui;padding:3px 8px;border-radius:4px;border:1px solid #57606a;background:#21262d;color:#e6edf3;cursor:pointer}
.graph{overflow:auto;border:1px solid #e5e9ee;border-radius:6px;background:#fff}
.graph svg{display:block}
.markdown img{max-width:100%}.markdown pre{white-space:pre-wrap}
details{margin:6px 0}summary{cursor:pointer;font-weight:600}
.note{color:#7a4b00;font-size:13px}
@media (max-width:800px){.pkg{grid-template-columns:1fr}}
"#;

/// Search and category filters on the grid, `?q=` and `?category=` applied on load (so a
/// search is a shareable URL), and copy buttons on the package pages.
const SCRIPT: &str = r#"
(function(){
var q=document.getElementById('q'),cat=document.getElementById('category'),cards=[].slice.call(document.querySelectorAll('.card')),count=document.getElementById('count');
function apply(push){
 var words=(q&&q.value||'').toLowerCase().split(/\s+/).filter(Boolean),c=cat&&cat.value||'',shown=0;
 cards.forEach(function(el){
  var text=el.getAttribute('data-search'),cats=(el.getAttribute('data-categories')||'').split('|');
  var ok=words.every(function(w){return text.indexOf(w)>=0;})&&(!c||cats.indexOf(c)>=0);
  el.hidden=!ok;if(ok)shown++;
 });
 if(count)count.textContent=shown+' of '+cards.length+' packages';
 if(push&&window.history&&history.replaceState){
  var p=new URLSearchParams();if(q&&q.value)p.set('q',q.value);if(c)p.set('category',c);
  var s=p.toString();try{history.replaceState(null,'',s?'?'+s:location.pathname);}catch(e){}
 }
}
if(q||cat){
 var params=new URLSearchParams(location.search);
 if(q&&params.get('q'))q.value=params.get('q');
 if(cat&&params.get('category'))cat.value=params.get('category');
 if(q)q.addEventListener('input',function(){apply(true);});
 if(cat)cat.addEventListener('change',function(){apply(true);});
 apply(false);
}
[].forEach.call(document.querySelectorAll('pre[data-copy]'),function(pre){
 var b=document.createElement('button');b.className='copy';b.type='button';b.textContent='Copy';
 b.addEventListener('click',function(){
  var t=pre.querySelector('code').textContent;
  var done=function(){b.textContent='Copied';setTimeout(function(){b.textContent='Copy';},1500);};
  if(navigator.clipboard&&navigator.clipboard.writeText){navigator.clipboard.writeText(t).then(done,function(){});}
  else{var r=document.createRange();r.selectNodeContents(pre);var s=getSelection();s.removeAllRanges();s.addRange(r);document.execCommand('copy');done();}
 });
 pre.appendChild(b);
});
})();
"#;

/// The Content-Security-Policy of every page: nothing from elsewhere, images only as data:
/// URIs, only our own script (by hash). `olm catalog serve` sends it as a header, from the
/// binary (never from `site.json`, which records it only so pages made under another policy
/// are made again).
pub fn content_security_policy() -> String {
    let hash = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(SCRIPT.as_bytes()));
    format!(
        "default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; base-uri 'none'; form-action 'none'"
    )
}

fn document(title: &str, catalog: &str, home: &str, body: &str) -> String {
    format!(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{title}</title><style>{STYLE}</style></head>
<body><header class="top"><a href="{home}">{catalog}</a><span class="sub">operator catalog</span></header>
<main>
{body}</main>
<script>{SCRIPT}</script>
</body></html>
"#,
        csp = esc(&content_security_policy()),
        title = esc(title),
        catalog = esc(catalog),
    )
}

fn icon_html(view: &PackageView, class: &str) -> String {
    match &view.icon {
        Some(icon) => format!(
            r#"<img class="{class}" alt="" src="{}">"#,
            esc(&icon.data_uri())
        ),
        None => {
            let initial: String = view
                .display_name
                .chars()
                .next()
                .map(|c| c.to_uppercase().collect())
                .unwrap_or_default();
            format!(r#"<span class="noicon">{}</span>"#, esc(&initial))
        }
    }
}

fn tags(view: &PackageView) -> String {
    let mut s = String::new();
    if view.deprecation.is_some() {
        s.push_str(r#"<span class="tag dep">deprecated</span>"#);
    }
    if !view.capability.is_empty() {
        let _ = write!(
            s,
            r#"<span class="tag cap">{}</span>"#,
            esc(&view.capability)
        );
    }
    for c in &view.categories {
        let _ = write!(s, r#"<span class="tag">{}</span>"#, esc(c));
    }
    s
}

/// The grid page of all packages (sorted by name), with the category filter's choices.
pub fn grid(catalog: &str, views: &[PackageView]) -> String {
    let mut categories: Vec<&str> = views
        .iter()
        .flat_map(|v| v.categories.iter().map(String::as_str))
        .collect();
    categories.sort_unstable();
    categories.dedup();
    let mut body = String::new();
    body.push_str(r#"<div class="filters"><input id="q" type="search" placeholder="Search by name, provider, keyword…" aria-label="Search" autofocus>"#);
    body.push_str(
        r#"<select id="category" aria-label="Category"><option value="">All categories</option>"#,
    );
    for c in &categories {
        let _ = write!(body, r#"<option value="{0}">{0}</option>"#, esc(c));
    }
    body.push_str("</select></div>\n");
    let _ = writeln!(
        body,
        r#"<p class="count" id="count">{} packages</p><div class="grid">"#,
        views.len()
    );
    for v in views {
        let search = [
            v.name.as_str(),
            &v.display_name,
            &v.provider,
            &v.short_description,
            &v.categories.join(" "),
            &v.keywords.join(" "),
            &v.capability,
        ]
        .join(" ")
        .to_lowercase();
        let _ = writeln!(
            body,
            r#"<a class="card" id="pkg-{id}" href="packages/{file}.html" data-search="{search}" data-categories="{cats}"><div class="head">{icon}<div><h2>{display}</h2><div class="provider">{provider}</div></div></div><div class="desc">{desc}</div><div class="tags">{tags}</div></a>"#,
            id = esc(&page_file(&v.name)),
            file = esc(&page_file(&v.name)),
            search = esc(&search),
            cats = esc(&v.categories.join("|")),
            icon = icon_html(v, "icon"),
            display = esc(&v.display_name),
            provider = esc(&v.provider),
            desc = esc(&v.short_description),
            tags = tags(v),
        );
    }
    body.push_str("</div>\n");
    document(catalog, catalog, "index.html", &body)
}

fn snippet(id: &str, text: &str) -> String {
    format!(
        r#"<div class="snippet"><pre data-copy id="{}"><code>{}</code></pre></div>"#,
        esc(id),
        esc(text)
    )
}

/// One package's page; `graph_svg` is the upgrade graph drawn by `catalog::graph` (our own
/// markup, its labels escaped there).
pub fn package(catalog: &str, v: &PackageView, graph_svg: &str, s: &Snippets) -> String {
    let mut b = String::new();
    let _ = write!(
        b,
        r#"<p><a href="../index.html">&larr; All packages</a></p><div class="title">{}<div><h1>{}</h1><div class="provider">{}</div><div class="tags">{}</div></div></div>"#,
        icon_html(v, "icon big"),
        esc(&v.display_name),
        esc(&match v.provider.is_empty() {
            true => v.name.clone(),
            false => format!("{} · by {}", v.name, v.provider),
        }),
        tags(v)
    );
    b.push_str(r#"<div class="pkg"><div>"#);
    if let Some(d) = &v.deprecation {
        let _ = write!(b, r#"<p class="note">Deprecated: {}</p>"#, esc(d));
    }
    let _ = write!(
        b,
        r#"<section class="box" id="description"><h2>Description</h2><div class="markdown">{}</div></section>"#,
        markdown::to_html(&v.description)
    );
    // Channels and versions.
    b.push_str(r#"<section class="box" id="channels"><h2>Channels</h2><table><tr><th>Channel</th><th>Head</th><th>Version</th><th>Entries</th></tr>"#);
    for c in &v.channels {
        let _ = write!(
            b,
            "<tr><td>{}{}{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&c.name),
            if c.is_default {
                r#" <span class="tag cap">default</span>"#
            } else {
                ""
            },
            match &c.deprecation {
                Some(d) => format!(
                    r#" <span class="tag dep" title="{}">deprecated</span>"#,
                    esc(d)
                ),
                None => String::new(),
            },
            esc(&c.head),
            esc(&c.head_version),
            c.entries
        );
    }
    b.push_str("</table></section>");
    let _ = write!(
        b,
        r#"<section class="box" id="graph"><h2>Upgrade graph</h2><div class="graph">{graph_svg}</div></section>"#
    );
    // Install.
    b.push_str(r#"<section class="box" id="install"><h2>Install</h2><h3>With olm</h3>"#);
    let _ = write!(b, "{}", snippet("cli", &s.cli.join("\n")));
    b.push_str("<h3>OLM v0: OperatorGroup and Subscription</h3>");
    for (i, (channel, yaml)) in s.v0.iter().enumerate() {
        let _ = write!(
            b,
            r#"<details{}><summary>channel {}{}</summary>{}</details>"#,
            if i == 0 { " open" } else { "" },
            esc(channel),
            if *channel == v.default_channel {
                " (default)"
            } else {
                ""
            },
            snippet(&format!("v0-{i}"), yaml)
        );
    }
    b.push_str("<h3>OLM v1: ClusterExtension and installer RBAC</h3>");
    for n in &s.v1_notes {
        let _ = write!(b, r#"<p class="note">{}</p>"#, esc(n));
    }
    let _ = write!(b, "{}</section>", snippet("v1", &s.v1));
    b.push_str(r#"<section class="box" id="versions"><h2>Versions</h2><table><tr><th>Version</th><th>Bundle</th><th>Released</th><th>Channels</th></tr>"#);
    for ver in &v.versions {
        let _ = write!(
            b,
            r#"<tr><td>{}{}</td><td><code>{}</code><br><code class="provider">{}</code></td><td>{}</td><td>{}</td></tr>"#,
            esc(&ver.version),
            match &ver.deprecation {
                Some(d) => format!(
                    r#" <span class="tag dep" title="{}">deprecated</span>"#,
                    esc(d)
                ),
                None => String::new(),
            },
            esc(&ver.name),
            esc(&ver.image),
            esc(ver.created_at.as_deref().unwrap_or("")),
            esc(&ver.channels.join(", "))
        );
    }
    b.push_str("</table></section>");
    // CRDs.
    b.push_str(r#"<section class="box" id="crds"><h2>Custom resources</h2>"#);
    if v.crds.is_empty() {
        b.push_str("<p>The head bundle owns no CustomResourceDefinition.</p>");
    }
    for (i, c) in v.crds.iter().enumerate() {
        let _ = write!(
            b,
            "<h3>{} <code>{}</code> <span class=\"provider\">{}/{}</span></h3><p>{}</p>",
            esc(if c.display_name.is_empty() {
                &c.kind
            } else {
                &c.display_name
            }),
            esc(&c.kind),
            esc(&c.name),
            esc(&c.version),
            esc(&c.description)
        );
        if let Some(example) = &c.example {
            let _ = write!(b, "{}", snippet(&format!("crd-{i}"), example));
        }
    }
    b.push_str("</section></div>");
    // Side panel.
    let _ = write!(
        b,
        "<aside><dl><dt>Package</dt><dd><code>{}</code></dd><dt>Latest version</dt><dd>{}</dd><dt>Default channel</dt><dd>{}</dd><dt>Head bundle</dt><dd>{}</dd>",
        esc(&v.name),
        esc(&v.head_version),
        esc(&v.default_channel),
        esc(&v.head_bundle)
    );
    if !v.capability.is_empty() {
        let _ = write!(
            b,
            "<dt>Capability level</dt><dd>{}</dd>",
            esc(&v.capability)
        );
    }
    if !v.provider.is_empty() {
        let _ = write!(b, "<dt>Provider</dt><dd>{}</dd>", esc(&v.provider));
    }
    if !v.repository.is_empty() {
        let _ = write!(b, "<dt>Repository</dt><dd>{}</dd>", esc(&v.repository));
    }
    if !v.install_modes.is_empty() {
        let _ = write!(
            b,
            "<dt>Install modes</dt><dd>{}</dd>",
            esc(&v.install_modes.join(", "))
        );
    }
    if !v.related_images.is_empty() {
        b.push_str("<dt>Related images</dt>");
        for (name, image) in &v.related_images {
            let _ = write!(
                b,
                r#"<dd><code>{}</code>{}</dd>"#,
                esc(image),
                if name.is_empty() {
                    String::new()
                } else {
                    format!(r#" <span class="provider">({})</span>"#, esc(name))
                }
            );
        }
    }
    b.push_str("</dl></aside></div>\n");
    let title = format!("{} - {catalog}", v.display_name);
    document(&title, catalog, "../index.html", &b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_files_are_safe_and_distinct() {
        assert_eq!(page_file("etcd"), "etcd");
        assert_eq!(page_file("a.b-c_d"), "a.b-c_d");
        for bad in ["../x", "A", "a/b", ".hidden", "", "x y", "a%2f"] {
            let f = page_file(bad);
            assert!(
                !f.contains(['/', '%', ' ']) && !f.starts_with('.'),
                "{bad}: {f}"
            );
            assert_ne!(f, bad);
        }
        assert_ne!(page_file("A"), page_file("a-"));
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc(r#"<a href="x">'&"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;"
        );
    }
}
