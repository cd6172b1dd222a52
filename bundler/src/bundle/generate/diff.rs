//! A small unified line diff for `olm bundle generate --check`, so CI shows what is stale
//! instead of only that something is.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Ins,
}

/// Above this many cells the middle of the diff is shown as one replacement instead of an
/// LCS (quadratic memory would not pay off for a stale generated file).
const MAX_CELLS: usize = 4_000_000;
const CONTEXT: usize = 3;

fn ops<'a>(old: &[&'a str], new: &[&'a str]) -> Vec<(Op, &'a str)> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (a, b) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    let mut out: Vec<(Op, &str)> = old[..prefix].iter().map(|l| (Op::Same, *l)).collect();
    if a.len().saturating_mul(b.len()) > MAX_CELLS {
        out.extend(a.iter().map(|l| (Op::Del, *l)));
        out.extend(b.iter().map(|l| (Op::Ins, *l)));
    } else {
        // lcs[i][j] = LCS length of a[i..] and b[j..]
        let w = b.len() + 1;
        let mut lcs = vec![0u32; (a.len() + 1) * w];
        for i in (0..a.len()).rev() {
            for j in (0..b.len()).rev() {
                lcs[i * w + j] = if a[i] == b[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            if i < a.len() && j < b.len() && a[i] == b[j] {
                out.push((Op::Same, a[i]));
                i += 1;
                j += 1;
            } else if i < a.len() && (j == b.len() || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
                out.push((Op::Del, a[i]));
                i += 1;
            } else {
                out.push((Op::Ins, b[j]));
                j += 1;
            }
        }
    }
    out.extend(old[old.len() - suffix..].iter().map(|l| (Op::Same, *l)));
    out
}

/// `--- a/<path>` / `+++ b/<path>` unified diff of two texts; empty when equal.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let old_lines: Vec<&str> = old.lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let ops = ops(&old_lines, &new_lines);
    let mut out = format!("--- a/{path}\n+++ b/{path}\n");
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, (o, _))| *o != Op::Same)
        .map(|(i, _)| i)
        .collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CONTEXT {
            end = changed[k];
            k += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        // Line numbers at the hunk start.
        let old_start = ops[..start].iter().filter(|(o, _)| *o != Op::Ins).count() + 1;
        let new_start = ops[..start].iter().filter(|(o, _)| *o != Op::Del).count() + 1;
        let old_len = ops[start..end]
            .iter()
            .filter(|(o, _)| *o != Op::Ins)
            .count();
        let new_len = ops[start..end]
            .iter()
            .filter(|(o, _)| *o != Op::Del)
            .count();
        out.push_str(&format!(
            "@@ -{old_start},{old_len} +{new_start},{new_len} @@\n"
        ));
        for (o, l) in &ops[start..end] {
            let c = match o {
                Op::Same => ' ',
                Op::Del => '-',
                Op::Ins => '+',
            };
            out.push(c);
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shows_changed_line_with_context() {
        let d = unified("f.yaml", "a\nb\nc\nd\n", "a\nb\nX\nd\n");
        assert_eq!(
            d,
            "--- a/f.yaml\n+++ b/f.yaml\n@@ -1,4 +1,4 @@\n a\n b\n-c\n+X\n d\n"
        );
        assert!(unified("f", "same\n", "same\n").is_empty());
    }

    #[test]
    fn new_file_is_all_insertions() {
        let d = unified("n", "", "x\ny\n");
        assert!(d.contains("+x\n+y\n"), "{d}");
    }
}
