//! Finding the line of a field in a YAML file, so findings read `manifests/x.yaml:42`.
//!
//! The YAML reader keeps no positions, so this walks the text: each path segment is looked up
//! by indentation (keys of a map are indented deeper than their parent; list items are `- `
//! lines at one column). It understands the block style every Kubernetes tool writes; for
//! flow style or JSON it returns the deepest line it could find, or nothing.

/// One step of a field path: `spec`, `[3]`, or a bracketed key `[olm.skipRange]`.
#[derive(Debug, PartialEq, Eq)]
enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

fn segments(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    let bytes = path.as_bytes();
    let mut i = 0;
    let mut start = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'.' => {
                if i > start {
                    out.push(Seg::Key(&path[start..i]));
                }
                start = i + 1;
            }
            b'[' => {
                if i > start {
                    out.push(Seg::Key(&path[start..i]));
                }
                let Some(close) = path[i..].find(']').map(|c| i + c) else {
                    break;
                };
                let inner = &path[i + 1..close];
                out.push(match inner.parse::<usize>() {
                    Ok(n) => Seg::Index(n),
                    Err(_) => Seg::Key(inner),
                });
                i = close;
                start = close + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < path.len() {
        out.push(Seg::Key(&path[start..]));
    }
    out
}

struct Line<'a> {
    indent: usize,
    /// Column where a key would start (after any `- ` markers), and the text from there.
    key_col: usize,
    key_text: &'a str,
    is_item: bool,
    blank: bool,
}

fn analyse(line: &str) -> Line<'_> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let mut rest = &line[indent..];
    let mut key_col = indent;
    let mut is_item = false;
    while let Some(r) = rest
        .strip_prefix("- ")
        .or_else(|| (rest == "-").then_some(""))
    {
        is_item = true;
        let spaces = r.len() - r.trim_start_matches(' ').len();
        key_col += rest.len() - r.len() + spaces;
        rest = &r[spaces..];
    }
    let blank = rest.is_empty() && !is_item || rest.starts_with('#') || line.trim() == "---";
    Line {
        indent,
        key_col,
        key_text: rest,
        is_item,
        blank,
    }
}

fn key_matches(text: &str, key: &str) -> bool {
    for quoted in [key.to_string(), format!("\"{key}\""), format!("'{key}'")] {
        if let Some(after) = text.strip_prefix(quoted.as_str()) {
            let after = after.trim_start_matches(' ');
            if after.starts_with(':') {
                return true;
            }
        }
    }
    false
}

/// The 1-based line of `field` in `text`, or of its deepest ancestor found.
pub fn line_of(text: &str, field: &str) -> Option<usize> {
    let lines: Vec<Line<'_>> = text.lines().map(analyse).collect();
    let mut found = None;
    let mut pos = 0usize; // first line to search
    let mut parent: Option<usize> = None; // column of the parent key or item dash
    let mut exempt = usize::MAX; // an item line whose own key may sit at the parent column
    for seg in segments(field) {
        let mut hit = None;
        match seg {
            Seg::Key(k) => {
                for (i, l) in lines.iter().enumerate().skip(pos) {
                    if l.blank {
                        continue;
                    }
                    // Left the parent's block (the exempt line is the list item we are in).
                    if i != exempt && parent.is_some_and(|p| l.indent <= p) {
                        break;
                    }
                    let deep_enough = match parent {
                        Some(p) => l.key_col > p,
                        None => l.key_col == 0,
                    };
                    if deep_enough && key_matches(l.key_text, k) {
                        hit = Some((i, l.key_col));
                        break;
                    }
                }
                let Some((i, col)) = hit else { return found };
                found = Some(i + 1);
                pos = i + 1;
                parent = Some(col);
                exempt = usize::MAX;
            }
            Seg::Index(n) => {
                let mut dash_col = None;
                let mut count = 0;
                for (i, l) in lines.iter().enumerate().skip(pos) {
                    if l.blank {
                        continue;
                    }
                    match dash_col {
                        None if l.is_item && parent.is_none_or(|p| l.indent >= p) => {
                            dash_col = Some(l.indent)
                        }
                        None => return found,
                        Some(_) => {}
                    }
                    let Some(c) = dash_col else { continue };
                    if l.indent < c || (l.indent == c && !l.is_item) {
                        break;
                    }
                    if l.indent == c && l.is_item {
                        if count == n {
                            hit = Some((i, c));
                            break;
                        }
                        count += 1;
                    }
                }
                let Some((i, c)) = hit else { return found };
                found = Some(i + 1);
                pos = i;
                parent = Some(c);
                exempt = i;
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "apiVersion: v1\nmetadata:\n  name: x\n  annotations:\n    olm.skipRange: '>=1.0.0'\nspec:\n  description: |\n    name: not a key\n  installModes:\n  - supported: true\n    type: OwnNamespace\n  - supported: false\n    type: AllNamespaces\n  install:\n    spec:\n      deployments:\n        - name: op\n          spec:\n            replicas: 1\n";

    #[test]
    fn finds_keys_items_and_bracketed_keys() {
        assert_eq!(line_of(DOC, "metadata.name"), Some(3));
        assert_eq!(line_of(DOC, "metadata.annotations[olm.skipRange]"), Some(5));
        assert_eq!(line_of(DOC, "spec.installModes[1].type"), Some(13));
        assert_eq!(line_of(DOC, "spec.installModes[0]"), Some(10));
        assert_eq!(line_of(DOC, "spec.installModes[0].supported"), Some(10));
        assert_eq!(
            line_of(DOC, "spec.install.spec.deployments[0].spec.replicas"),
            Some(19)
        );
    }

    #[test]
    fn missing_fields_point_at_the_deepest_ancestor() {
        assert_eq!(line_of(DOC, "spec.displayName"), Some(6));
        assert_eq!(line_of(DOC, "spec.installModes[5]"), Some(9));
        assert_eq!(line_of(DOC, "nothing"), None);
    }
}
