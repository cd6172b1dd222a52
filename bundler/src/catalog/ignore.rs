//! `.indexignore`: gitignore-style patterns that hide files from the catalog loader.
//!
//! Each `.indexignore` applies to the directory it sits in and everything below. Supported
//! syntax (what catalog repositories use): `#` comments, blank lines, `!` negation, a leading
//! `/` or an inner `/` anchoring the pattern to that directory, a trailing `/` matching
//! directories only, and `*`, `?`, `**` globs. A later pattern overrides an earlier one.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone)]
struct Pattern {
    negated: bool,
    dir_only: bool,
    anchored: bool,
    glob: Vec<String>,
}

#[derive(Debug, Clone)]
struct Rules {
    base: PathBuf,
    patterns: Vec<Pattern>,
}

/// The stack of `.indexignore` files in effect while walking.
#[derive(Debug, Default, Clone)]
pub struct IgnoreSet {
    stack: Vec<Rules>,
}

fn parse(text: &str) -> Vec<Pattern> {
    let mut out = Vec::new();
    for raw in text.lines() {
        let line = raw.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (negated, line) = match line.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, line.strip_prefix('\\').unwrap_or(line)),
        };
        let (dir_only, line) = match line.strip_suffix('/') {
            Some(rest) => (true, rest),
            None => (false, line),
        };
        let anchored = line.starts_with('/') || line.trim_start_matches('/').contains('/');
        let line = line.trim_start_matches('/');
        if line.is_empty() {
            continue;
        }
        out.push(Pattern {
            negated,
            dir_only,
            anchored,
            glob: line.split('/').map(str::to_string).collect(),
        });
    }
    out
}

/// Matches one path segment against a glob segment (`*`, `?`).
fn seg_match(glob: &[u8], name: &[u8]) -> bool {
    match (glob.first(), name.first()) {
        (None, None) => true,
        (Some(b'*'), _) => {
            seg_match(&glob[1..], name) || (!name.is_empty() && seg_match(glob, &name[1..]))
        }
        (Some(b'?'), Some(_)) => seg_match(&glob[1..], &name[1..]),
        (Some(g), Some(n)) if g == n => seg_match(&glob[1..], &name[1..]),
        _ => false,
    }
}

fn segs_match(glob: &[String], path: &[&str]) -> bool {
    match glob.first() {
        None => path.is_empty(),
        Some(g) if g == "**" => (0..=path.len()).any(|skip| segs_match(&glob[1..], &path[skip..])),
        Some(g) => {
            !path.is_empty()
                && seg_match(g.as_bytes(), path[0].as_bytes())
                && segs_match(&glob[1..], &path[1..])
        }
    }
}

impl Pattern {
    fn matches(&self, rel: &[&str], is_dir: bool) -> bool {
        if self.dir_only && !is_dir {
            return false;
        }
        if self.anchored {
            segs_match(&self.glob, rel)
        } else {
            // Unanchored: matches the last segment(s) at any depth.
            (0..rel.len()).any(|start| segs_match(&self.glob, &rel[start..]))
        }
    }
}

impl IgnoreSet {
    /// Adds the rules of `.indexignore` found in `base` (relative to the walk root).
    pub fn push(&mut self, base: PathBuf, text: &str) {
        self.stack.push(Rules {
            base,
            patterns: parse(text),
        });
    }

    pub fn pop(&mut self) {
        self.stack.pop();
    }

    /// Whether `rel` (relative to the walk root) is ignored. Directories that are ignored are
    /// not descended into, so their files are ignored too.
    pub fn is_ignored(&self, rel: &Path, is_dir: bool) -> bool {
        let mut ignored = false;
        for rules in &self.stack {
            let Ok(inner) = rel.strip_prefix(&rules.base) else {
                continue;
            };
            let segs: Vec<String> = inner
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
            for p in &rules.patterns {
                if p.matches(&segs, is_dir) {
                    ignored = !p.negated;
                }
            }
        }
        ignored
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(text: &str) -> IgnoreSet {
        let mut s = IgnoreSet::default();
        s.push(PathBuf::new(), text);
        s
    }

    #[test]
    fn globs_anchors_and_negation() {
        let s = set("# c\n*.md\n/top.yaml\nsub/*.json\n!keep.md\nbuild/\n");
        assert!(s.is_ignored(Path::new("README.md"), false));
        assert!(s.is_ignored(Path::new("a/b/x.md"), false));
        assert!(!s.is_ignored(Path::new("a/keep.md"), false));
        assert!(s.is_ignored(Path::new("top.yaml"), false));
        assert!(!s.is_ignored(Path::new("a/top.yaml"), false));
        assert!(s.is_ignored(Path::new("sub/x.json"), false));
        assert!(!s.is_ignored(Path::new("other/sub/x.json"), false));
        assert!(s.is_ignored(Path::new("a/build"), true));
        assert!(!s.is_ignored(Path::new("a/build"), false));
    }

    #[test]
    fn double_star_and_nested_bases() {
        let mut s = set("**/tmp/**\n");
        s.push(PathBuf::from("pkg"), "*.bak\n");
        assert!(s.is_ignored(Path::new("x/tmp/y/z"), false));
        assert!(s.is_ignored(Path::new("pkg/a.bak"), false));
        assert!(!s.is_ignored(Path::new("other/a.bak"), false));
    }
}
