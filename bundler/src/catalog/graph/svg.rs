//! The upgrade graph as an SVG drawn here, designed for real packages (150 bundles, 14
//! channels): every bundle of the package is one row, sorted by version (newest on top), so
//! versions appear once; every channel is a lane with a dot on the rows it contains. `replace`
//! edges are short connectors inside a lane; `skips` and `skipRange` are brackets on shared
//! tracks beside the lanes, one per upgrading bundle, spanning the rows they cover, with the
//! range written next to the row. Long packages wrap into several column blocks so the picture
//! stays between 1:3 and 3:1. Heads, the default channel and deprecations are marked and
//! explained in a legend. Output is deterministic.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use semver::Version;

use super::model::{EdgeKind, PackageGraph};
use crate::grammar::semver_range;

/// Row height and the width of one lane and one bracket track.
const ROW: f64 = 16.0;
const LANE: f64 = 20.0;
const TRACK: f64 = 9.0;
/// Width of one character of the 11px monospace text (0.6 em).
const CHAR: f64 = 6.7;
const MARGIN: f64 = 20.0;
const TITLE_H: f64 = 44.0;
const BLOCK_GAP: f64 = 28.0;
const LEGEND_ROWS: usize = 5;
const LEGEND_ROW: f64 = 16.0;
const LEGEND_W: f64 = 560.0;
/// Annotations longer than this are cut (the full text is in the tooltip).
const NOTE_MAX: usize = 44;
/// The aspect ratio the wrapping aims at (width / height).
const TARGET_ASPECT: f64 = 1.4;

const REPLACE: &str = "#4a4a4a";
const RANGE: &str = "#2f6fb5";
const SKIP: &str = "#8e44ad";
const IGNORED: &str = "#e02020";
const DEPRECATED: &str = "#e8960f";
const HEAD: &str = "#2e8b57";
const DEFAULT_LANE: &str = "#fff1b8";
const DEPRECATED_LANE: &str = "#ebe4ff";
const DEPRECATED_TEXT: &str = "#7a5cc4";

/// Escapes text and attribute values for XML and HTML alike (the catalog browser's pages
/// use it too); characters XML 1.0 forbids become U+FFFD.
pub fn xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(ch),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A coordinate with one decimal, without a trailing `.0`.
fn n(v: f64) -> String {
    let s = format!("{v:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

fn text_w(s: &str) -> f64 {
    s.chars().count() as f64 * CHAR
}

fn cut(s: &str) -> String {
    if s.chars().count() <= NOTE_MAX {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(NOTE_MAX - 1).collect();
        t.push('…');
        t
    }
}

/// A `skips` or `skipRange` of one bundle, merged over the channels that carry it.
struct Jump {
    target: usize,
    covered: Vec<usize>,
    /// None for `skips`, the range for `skipRange`.
    range: Option<String>,
    ignored: bool,
    channels: Vec<String>,
    track: usize,
}

impl Jump {
    fn span(&self) -> (usize, usize) {
        let lo = self.covered.iter().copied().chain([self.target]).min();
        let hi = self.covered.iter().copied().chain([self.target]).max();
        (lo.unwrap_or(self.target), hi.unwrap_or(self.target))
    }
}

/// Where everything of one package goes.
struct Layout<'a> {
    p: &'a PackageGraph,
    rows: Vec<(&'a str, &'a Version)>,
    row_of: BTreeMap<&'a str, usize>,
    jumps: Vec<Jump>,
    tracks: usize,
    notes: Vec<String>,
    label_w: f64,
    header_h: f64,
    note_w: f64,
    blocks: usize,
    per_block: usize,
    width: f64,
    height: f64,
}

impl<'a> Layout<'a> {
    fn new(p: &'a PackageGraph) -> Layout<'a> {
        let mut rows: Vec<(&str, &Version)> = Vec::new();
        for c in &p.channels {
            for (name, v) in &c.nodes {
                if !rows.iter().any(|(r, _)| *r == name) {
                    rows.push((name, v));
                }
            }
        }
        rows.sort_by(|a, b| semver_range::compare(b.1, a.1).then_with(|| a.0.cmp(b.0)));
        let row_of: BTreeMap<&str, usize> =
            rows.iter().enumerate().map(|(i, (r, _))| (*r, i)).collect();

        // One bracket per (bundle, skips|range), covering the union over channels.
        let mut merged: BTreeMap<(usize, Option<String>), Jump> = BTreeMap::new();
        for c in &p.channels {
            for e in &c.edges {
                let range = match &e.kind {
                    EdgeKind::Replace => continue,
                    EdgeKind::Skip => None,
                    EdgeKind::SkipRange(r) => Some(r.clone()),
                };
                let (Some(&from), Some(&to)) =
                    (row_of.get(e.from.as_str()), row_of.get(e.to.as_str()))
                else {
                    continue;
                };
                let j = merged.entry((to, range.clone())).or_insert_with(|| Jump {
                    target: to,
                    covered: Vec::new(),
                    range,
                    ignored: false,
                    channels: Vec::new(),
                    track: 0,
                });
                if !j.covered.contains(&from) {
                    j.covered.push(from);
                }
                j.ignored |= e.ignored;
                if !j.channels.contains(&c.name) {
                    j.channels.push(c.name.clone());
                }
            }
        }
        let mut jumps: Vec<Jump> = merged.into_values().collect();
        for j in &mut jumps {
            j.covered.sort_unstable();
        }
        // Interval packing: brackets that do not overlap share a track.
        jumps.sort_by_key(|j| (j.span(), j.target, j.range.clone()));
        let mut track_end: Vec<usize> = Vec::new();
        for j in &mut jumps {
            let (lo, hi) = j.span();
            match track_end.iter().position(|&end| end < lo) {
                Some(t) => {
                    track_end[t] = hi;
                    j.track = t;
                }
                None => {
                    j.track = track_end.len();
                    track_end.push(hi);
                }
            }
        }
        let tracks = track_end.len();

        let mut notes = vec![String::new(); rows.len()];
        for j in &jumps {
            let note = &mut notes[j.target];
            if !note.is_empty() {
                note.push_str("; ");
            }
            match &j.range {
                Some(r) => note.push_str(r),
                None => {
                    let _ = write!(note, "skips {}", j.covered.len());
                }
            }
        }
        let notes: Vec<String> = notes.iter().map(|s| cut(s)).collect();

        let label_w = rows
            .iter()
            .map(|(_, v)| text_w(&v.to_string()))
            .fold(text_w("version"), f64::max)
            + 16.0;
        let header_h = p
            .channels
            .iter()
            .map(|c| text_w(&c.name) + 16.0)
            .fold(60.0, f64::max);
        let note_w = notes.iter().map(|s| text_w(s)).fold(0.0, f64::max);

        let mut l = Layout {
            p,
            rows,
            row_of,
            jumps,
            tracks,
            notes,
            label_w,
            header_h,
            note_w,
            blocks: 1,
            per_block: 0,
            width: 0.0,
            height: 0.0,
        };
        l.wrap();
        l
    }

    fn lanes_x(&self) -> f64 {
        self.label_w
    }

    fn lane_x(&self, i: usize) -> f64 {
        self.lanes_x() + i as f64 * LANE + LANE / 2.0
    }

    fn tracks_x(&self) -> f64 {
        self.lanes_x() + self.p.channels.len().max(1) as f64 * LANE + 10.0
    }

    fn track_x(&self, t: usize) -> f64 {
        self.tracks_x() + t as f64 * TRACK + TRACK / 2.0
    }

    fn note_x(&self) -> f64 {
        self.tracks_x() + self.tracks as f64 * TRACK + 8.0
    }

    fn block_w(&self) -> f64 {
        self.note_x() + self.note_w + 8.0
    }

    fn body_top(&self) -> f64 {
        TITLE_H + self.header_h
    }

    fn legend_h(&self) -> f64 {
        LEGEND_ROWS as f64 * LEGEND_ROW + 24.0
    }

    fn size(&self, blocks: usize) -> (f64, f64, usize) {
        let per = self.rows.len().div_ceil(blocks).max(1);
        let w = MARGIN * 2.0 + blocks as f64 * self.block_w() + (blocks - 1) as f64 * BLOCK_GAP;
        let w = w.max(LEGEND_W + MARGIN * 2.0);
        let h = self.body_top() + per as f64 * ROW + 12.0 + self.legend_h();
        (w, h, per)
    }

    /// Picks the number of column blocks closest to the target aspect, then pads the shorter
    /// side so no picture is flatter or taller than 3:1.
    fn wrap(&mut self) {
        let target = TARGET_ASPECT.ln();
        let mut best = (f64::INFINITY, 1usize);
        for k in 1..=self.rows.len().max(1) {
            let (w, h, per) = self.size(k);
            if k > 1 && per == self.size(k - 1).2 {
                continue;
            }
            let score = ((w / h).ln() - target).abs();
            if score < best.0 {
                best = (score, k);
            }
        }
        let (w, h, per) = self.size(best.1);
        self.blocks = self.rows.len().div_ceil(per);
        self.per_block = per;
        self.width = w.max(h / 3.0).ceil();
        self.height = h.max(w / 3.0).ceil();
    }

    /// Block of a row, and the row's centre relative to the package's top.
    fn block_of(&self, row: usize) -> usize {
        row / self.per_block
    }

    fn block_left(&self, block: usize) -> f64 {
        MARGIN + block as f64 * (self.block_w() + BLOCK_GAP)
    }

    fn row_y(&self, row: usize) -> f64 {
        self.body_top() + (row % self.per_block) as f64 * ROW + ROW / 2.0
    }

    fn block_rows(&self, block: usize) -> (usize, usize) {
        let first = block * self.per_block;
        let last = ((block + 1) * self.per_block).min(self.rows.len()) - 1;
        (first, last)
    }

    /// A vertical run from row `a` to row `b` (`a <= b`) at block-relative `x`, cut where it
    /// leaves a block (it goes on at the top of the next one).
    fn vertical(&self, s: &mut String, x: f64, a: usize, b: usize, style: &str) {
        for block in self.block_of(a)..=self.block_of(b) {
            let (first, last) = self.block_rows(block);
            let left = self.block_left(block);
            let y0 = if a >= first {
                self.row_y(a)
            } else {
                self.body_top()
            };
            let y1 = if b <= last {
                self.row_y(b)
            } else {
                self.row_y(last) + ROW / 2.0
            };
            let _ = writeln!(
                s,
                r#"<path d="M {} {} V {}" {style}/>"#,
                n(left + x),
                n(y0),
                n(y1)
            );
        }
    }

    fn render(&self, s: &mut String, top: f64) {
        let p = self.p;
        let _ = writeln!(
            s,
            r#"<g class="package" data-package="{}" transform="translate(0 {})">"#,
            xml(&p.name),
            n(top)
        );
        self.title(s);
        for block in 0..self.blocks {
            self.block_frame(s, block);
        }
        for (i, c) in p.channels.iter().enumerate() {
            self.lane(s, i, c);
        }
        self.brackets(s);
        self.legend(s);
        s.push_str("</g>\n");
    }

    fn title(&self, s: &mut String) {
        let p = self.p;
        let edges: usize = p.channels.iter().map(|c| c.edges.len()).sum();
        let mut sub = format!(
            "{} bundles · {} channels · {} edges",
            self.rows.len(),
            p.channels.len(),
            edges
        );
        if let Some(d) = &p.default_channel {
            let _ = write!(sub, " · default channel {d}");
        }
        let _ = writeln!(
            s,
            r#"<text x="{MARGIN}" y="24" font-family="Helvetica, Arial, sans-serif" font-size="18" font-weight="bold" fill="{}">{}{}</text>"#,
            if p.deprecated { DEPRECATED } else { "#111" },
            xml(&p.name),
            if p.deprecated {
                " (deprecated package)"
            } else {
                ""
            }
        );
        let _ = writeln!(
            s,
            r##"<text x="{MARGIN}" y="39" font-family="Helvetica, Arial, sans-serif" font-size="12" fill="#555">{}</text>"##,
            xml(&sub)
        );
    }

    /// Row bands, version labels and per-row notes of one block, and the column titles.
    fn block_frame(&self, s: &mut String, block: usize) {
        let left = self.block_left(block);
        let (first, last) = self.block_rows(block);
        let band_w = self.block_w();
        let _ = writeln!(
            s,
            r##"<text x="{}" y="{}" text-anchor="end" fill="#555">version</text>"##,
            n(left + self.label_w - 8.0),
            n(self.body_top() - 6.0)
        );
        if self.tracks > 0 || self.note_w > 0.0 {
            let _ = writeln!(
                s,
                r##"<text x="{}" y="{}" fill="#555">skips / skipRange</text>"##,
                n(left + self.tracks_x()),
                n(self.body_top() - 6.0)
            );
        }
        for row in first..=last {
            let y = self.row_y(row);
            if row % 2 == 0 {
                let _ = writeln!(
                    s,
                    r##"<rect x="{}" y="{}" width="{}" height="{ROW}" fill="#f3f5f7"/>"##,
                    n(left),
                    n(y - ROW / 2.0),
                    n(band_w)
                );
            }
        }
        for row in first..=last {
            let (name, v) = self.rows[row];
            let y = self.row_y(row) + 4.0;
            let dep = self.p.deprecated_bundles.contains(name);
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" text-anchor="end"{}><title>{}{}</title>{}</text>"#,
                n(left + self.label_w - 8.0),
                n(y),
                if dep {
                    format!(r#" fill="{DEPRECATED}" font-weight="bold""#)
                } else {
                    String::new()
                },
                xml(name),
                if dep { " (deprecated)" } else { "" },
                xml(&v.to_string())
            );
            let note = &self.notes[row];
            if !note.is_empty() {
                let _ = writeln!(
                    s,
                    r##"<text x="{}" y="{}" fill="#333">{}</text>"##,
                    n(left + self.note_x()),
                    n(y),
                    xml(note)
                );
            }
        }
    }

    fn lane(&self, s: &mut String, i: usize, c: &super::model::ChannelGraph) {
        let p = self.p;
        let default = p.default_channel.as_deref() == Some(c.name.as_str());
        let _ = writeln!(
            s,
            r#"<g class="lane" data-channel="{}"><title>channel {}{}{}{}</title>"#,
            xml(&c.name),
            xml(&c.name),
            if default { " (default)" } else { "" },
            if c.deprecated { " (deprecated)" } else { "" },
            c.head
                .as_deref()
                .map(|h| format!(", head {}", xml(h)))
                .unwrap_or_default()
        );
        let x = self.lane_x(i);
        for block in 0..self.blocks {
            let left = self.block_left(block);
            let (first, last) = self.block_rows(block);
            let fill = if c.deprecated {
                Some(DEPRECATED_LANE)
            } else if default {
                Some(DEFAULT_LANE)
            } else {
                None
            };
            if let Some(fill) = fill {
                let _ = writeln!(
                    s,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{fill}" fill-opacity="0.85"/>"#,
                    n(left + x - LANE / 2.0 + 1.0),
                    n(self.body_top()),
                    n(LANE - 2.0),
                    n((last - first + 1) as f64 * ROW)
                );
            }
            let (weight, color) = match (default, c.deprecated) {
                (_, true) => ("normal", DEPRECATED_TEXT),
                (true, false) => ("bold", "#111"),
                _ => ("normal", "#333"),
            };
            let hx = left + x + 4.0;
            let hy = self.body_top() - 8.0;
            let _ = writeln!(
                s,
                r#"<text x="{}" y="{}" transform="rotate(-90 {} {})" font-weight="{weight}" fill="{color}"{}>{}{}</text>"#,
                n(hx),
                n(hy),
                n(hx),
                n(hy),
                if c.deprecated {
                    r#" font-style="italic""#
                } else {
                    ""
                },
                if default { "★ " } else { "" },
                xml(&c.name)
            );
        }
        // replace connectors: straight between neighbouring entries of the lane, bowed
        // when they pass entries of the lane in between.
        let in_lane: Vec<usize> = c
            .nodes
            .iter()
            .filter_map(|(name, _)| self.row_of.get(name.as_str()).copied())
            .collect();
        for e in &c.edges {
            if e.kind != EdgeKind::Replace {
                continue;
            }
            let (Some(&from), Some(&to)) = (
                self.row_of.get(e.from.as_str()),
                self.row_of.get(e.to.as_str()),
            ) else {
                continue;
            };
            let (a, b) = (from.min(to), from.max(to));
            let color = if e.ignored { IGNORED } else { REPLACE };
            let passes = in_lane.iter().any(|&r| r > a && r < b);
            if passes && self.block_of(a) == self.block_of(b) {
                let left = self.block_left(self.block_of(a));
                let (ya, yb) = (self.row_y(a), self.row_y(b));
                let bow = LANE / 2.0 - 1.0;
                let _ = writeln!(
                    s,
                    r#"<path d="M {} {} C {} {} {} {} {} {}" fill="none" stroke="{color}" stroke-width="1.4"/>"#,
                    n(left + x),
                    n(ya),
                    n(left + x + bow),
                    n(ya + ROW / 2.0),
                    n(left + x + bow),
                    n(yb - ROW / 2.0),
                    n(left + x),
                    n(yb)
                );
            } else {
                self.vertical(
                    s,
                    x,
                    a,
                    b,
                    &format!(r#"fill="none" stroke="{color}" stroke-width="1.4""#),
                );
            }
        }
        for (name, _) in &c.nodes {
            let Some(&row) = self.row_of.get(name.as_str()) else {
                continue;
            };
            let left = self.block_left(self.block_of(row));
            let head = c.head.as_deref() == Some(name.as_str());
            let fill = if p.deprecated_bundles.contains(name) {
                DEPRECATED
            } else if head {
                HEAD
            } else {
                "#333"
            };
            let (r, stroke, sw) = match (head, c.skipped.contains(name)) {
                (_, true) => (4.5, IGNORED, 2.0),
                (true, false) => (6.0, "#ffffff", 2.0),
                _ => (3.5, fill, 1.0),
            };
            let _ = writeln!(
                s,
                r#"<circle cx="{}" cy="{}" r="{r}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"><title>{} in {}{}</title></circle>"#,
                n(left + x),
                n(self.row_y(row)),
                xml(name),
                xml(&c.name),
                if head { " (channel head)" } else { "" }
            );
            if head {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{}" cy="{}" r="7.5" fill="none" stroke="{HEAD}" stroke-width="1.5"/>"#,
                    n(left + x),
                    n(self.row_y(row))
                );
            }
        }
        s.push_str("</g>\n");
    }

    fn brackets(&self, s: &mut String) {
        for j in &self.jumps {
            let (lo, hi) = j.span();
            let x = self.track_x(j.track);
            let color = match (j.ignored, &j.range) {
                (true, _) => IGNORED,
                (false, Some(_)) => RANGE,
                (false, None) => SKIP,
            };
            let dash = if j.range.is_none() {
                r#" stroke-dasharray="3 2""#
            } else {
                ""
            };
            let (target, _) = self.rows[j.target];
            let what = match &j.range {
                Some(r) => format!("skipRange {r}"),
                None => format!(
                    "skips {}",
                    j.covered
                        .iter()
                        .map(|&r| self.rows[r].0)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            let _ = writeln!(
                s,
                r#"<g class="jump" data-channels="{}"><title>{} {} (channels {})</title>"#,
                xml(&j.channels.join(" ")),
                xml(target),
                xml(&what),
                xml(&j.channels.join(", "))
            );
            self.vertical(
                s,
                x,
                lo,
                hi,
                &format!(r#"fill="none" stroke="{color}" stroke-width="1.6"{dash}"#),
            );
            for &row in &j.covered {
                let left = self.block_left(self.block_of(row));
                let y = self.row_y(row);
                let _ = writeln!(
                    s,
                    r#"<path d="M {} {} H {}" stroke="{color}" stroke-width="1.6"/>"#,
                    n(left + x - 4.0),
                    n(y),
                    n(left + x)
                );
            }
            // The upgrading bundle: an arrowhead pointing back at its row.
            let left = self.block_left(self.block_of(j.target));
            let y = self.row_y(j.target);
            let _ = writeln!(
                s,
                r#"<path d="M {} {} L {} {} L {} {} z" fill="{color}"/>"#,
                n(left + x - 5.0),
                n(y),
                n(left + x + 1.0),
                n(y - 4.0),
                n(left + x + 1.0),
                n(y + 4.0)
            );
            s.push_str("</g>\n");
        }
    }

    fn legend(&self, s: &mut String) {
        let top = self.height - self.legend_h() + 14.0;
        let col = LEGEND_W / 2.0;
        let items: [(&str, &str); 10] = [
            (
                r##"<circle cx="6" cy="-4" r="3.5" fill="#333"/>"##,
                "bundle in the channel (lane)",
            ),
            (
                r##"<circle cx="6" cy="-4" r="6" fill="#2e8b57" stroke="#fff" stroke-width="2"/><circle cx="6" cy="-4" r="7.5" fill="none" stroke="#2e8b57" stroke-width="1.5"/>"##,
                "channel head",
            ),
            (
                r##"<path d="M 6 -12 V 4" stroke="#4a4a4a" stroke-width="1.4"/>"##,
                "replaces (older below → newer above)",
            ),
            (
                r##"<path d="M 8 -12 V 4 M 4 -12 H 8 M 4 4 H 8" stroke="#2f6fb5" stroke-width="1.6" fill="none"/><path d="M 3 -4 L 9 -8 L 9 0 z" fill="#2f6fb5"/>"##,
                "skipRange: ◀ bundle, ticks = versions covered",
            ),
            (
                r##"<path d="M 8 -12 V 4" stroke="#8e44ad" stroke-width="1.6" stroke-dasharray="3 2"/><path d="M 3 -4 L 9 -8 L 9 0 z" fill="#8e44ad"/>"##,
                "skips (same, dashed)",
            ),
            (
                r##"<rect x="0" y="-12" width="12" height="16" fill="#fff1b8"/><text x="0.5" y="0" font-size="11" font-weight="bold">★</text>"##,
                "default channel (★ before its name)",
            ),
            (
                r##"<rect x="0" y="-12" width="12" height="16" fill="#ebe4ff"/>"##,
                "deprecated channel (italic title)",
            ),
            (
                r##"<circle cx="6" cy="-4" r="3.5" fill="#e8960f"/>"##,
                "deprecated bundle (orange version)",
            ),
            (
                r##"<circle cx="6" cy="-4" r="4.5" fill="#333" stroke="#e02020" stroke-width="2"/>"##,
                "ignored by OLM v0 (--draw-v0-semantics)",
            ),
            (
                r##"<rect x="0" y="-12" width="12" height="16" fill="#f3f5f7"/>"##,
                "newest version on top; hover for names",
            ),
        ];
        let _ = writeln!(
            s,
            r##"<g class="legend" font-family="Helvetica, Arial, sans-serif" fill="#333">"##
        );
        for (i, (glyph, label)) in items.iter().enumerate() {
            let x = MARGIN + (i / LEGEND_ROWS) as f64 * col;
            let y = top + (i % LEGEND_ROWS) as f64 * LEGEND_ROW;
            let _ = writeln!(
                s,
                r#"<g transform="translate({} {})">{glyph}<text x="20" y="0">{}</text></g>"#,
                n(x),
                n(y),
                xml(label)
            );
        }
        s.push_str("</g>\n");
    }
}

/// The SVG of the packages, stacked top to bottom (one package: the picture of that package).
pub fn svg(graphs: &[PackageGraph]) -> String {
    let layouts: Vec<Layout> = graphs.iter().map(Layout::new).collect();
    let width = layouts
        .iter()
        .map(|l| l.width)
        .fold(LEGEND_W + 2.0 * MARGIN, f64::max);
    let height: f64 = layouts.iter().map(|l| l.height).sum::<f64>().max(60.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="11">"#,
        n(width),
        n(height),
        n(width),
        n(height)
    );
    let _ = writeln!(
        s,
        r##"<rect width="{}" height="{}" fill="#ffffff"/>"##,
        n(width),
        n(height)
    );
    if layouts.is_empty() {
        s.push_str(r#"<text x="20" y="34">no packages</text>"#);
        s.push('\n');
    }
    let mut top = 0.0;
    for l in &layouts {
        l.render(&mut s, top);
        top += l.height;
    }
    s.push_str("</svg>\n");
    s
}

/// Width and height of the SVG [`svg`] draws for one package.
pub fn size(graph: &PackageGraph) -> (f64, f64) {
    let l = Layout::new(graph);
    (l.width, l.height)
}
