//! One self-contained HTML page for a catalog: every package's SVG inlined, a package and a
//! channel picker (a few lines of inline script), no external resources.

use std::fmt::Write as _;

use super::model::PackageGraph;
use super::svg::{svg, xml};

const STYLE: &str = "body{font-family:Helvetica,Arial,sans-serif;margin:0;color:#222}\
header{position:sticky;top:0;background:#f7f7f7;border-bottom:1px solid #ddd;padding:10px 16px;display:flex;gap:18px;align-items:center;flex-wrap:wrap}\
h1{font-size:18px;margin:0}label{font-size:14px}select{font-size:14px;margin-left:6px}\
section{padding:12px 16px}section svg{max-width:100%;height:auto}\
.summary{font-size:13px;color:#555;margin:0 0 8px}";

const SCRIPT: &str = r#"(function () {
  var pkg = document.getElementById('package');
  var chan = document.getElementById('channel');
  function current() {
    return document.querySelector('section[data-package="' + CSS.escape(pkg.value) + '"]');
  }
  function showChannel() {
    var sec = current();
    if (!sec) return;
    sec.querySelectorAll('[data-channel]').forEach(function (e) {
      e.style.opacity = !chan.value || e.dataset.channel === chan.value ? '1' : '0.12';
    });
    sec.querySelectorAll('[data-channels]').forEach(function (e) {
      var on = !chan.value || e.dataset.channels.split(' ').indexOf(chan.value) >= 0;
      e.style.opacity = on ? '1' : '0.12';
    });
  }
  function showPackage() {
    document.querySelectorAll('section[data-package]').forEach(function (s) {
      s.hidden = s.dataset.package !== pkg.value;
    });
    var sec = current();
    while (chan.options.length > 1) chan.remove(1);
    if (sec) {
      var seen = {};
      sec.querySelectorAll('.lane[data-channel]').forEach(function (e) {
        var c = e.dataset.channel;
        if (!seen[c]) { seen[c] = true; chan.add(new Option(c, c)); }
      });
    }
    chan.value = '';
    showChannel();
  }
  pkg.addEventListener('change', showPackage);
  chan.addEventListener('change', showChannel);
  var wanted = decodeURIComponent(location.hash.slice(1));
  if (wanted && Array.prototype.some.call(pkg.options, function (o) { return o.value === wanted; })) {
    pkg.value = wanted;
  }
  showPackage();
})();"#;

/// The page: `title` names the catalog.
pub fn html(graphs: &[PackageGraph], title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Upgrade graphs: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>",
        xml(title)
    );
    let _ = writeln!(
        s,
        "<header><h1>Upgrade graphs: {}</h1>\n<label>Package<select id=\"package\">",
        xml(title)
    );
    for p in graphs {
        let _ = writeln!(
            s,
            "<option value=\"{}\">{}</option>",
            xml(&p.name),
            xml(&p.name)
        );
    }
    s.push_str("</select></label>\n<label>Channel<select id=\"channel\"><option value=\"\">all channels</option></select></label></header>\n");
    if graphs.is_empty() {
        s.push_str("<p>No packages in this catalog.</p>\n");
    }
    for (i, p) in graphs.iter().enumerate() {
        let _ = writeln!(
            s,
            "<section data-package=\"{}\"{}>",
            xml(&p.name),
            if i == 0 { "" } else { " hidden" }
        );
        s.push_str("<ul class=\"summary\">\n");
        for c in super::summarize(std::slice::from_ref(p)) {
            let _ = writeln!(s, "<li>{}</li>", xml(&c.to_string()));
        }
        s.push_str("</ul>\n");
        s.push_str(&svg(std::slice::from_ref(p)));
        s.push_str("</section>\n");
    }
    let _ = writeln!(s, "<script>\n{SCRIPT}\n</script>\n</body>\n</html>");
    s
}
