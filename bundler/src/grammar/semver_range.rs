//! Versions and version ranges the way OLM reads them: `github.com/blang/semver/v4`.
//!
//! OLM's `olm.skipRange` and `olm.package.required` ranges are blang ranges, not Cargo's
//! `VersionReq` nor npm's: a space means AND, `||` means OR, a bare version means `=`, `!`/`!=`
//! exclude, `1.x`/`1.2.x` wildcards expand, and prereleases get no special treatment (plain
//! precedence, so `1.1.0-rc.1` is inside `>=1.0.0 <1.2.0`). Build metadata never affects a
//! comparison. The parser below follows blang's steps (split, OR groups, wildcard expansion,
//! comparator parsing) so that the same strings are accepted, rejected and matched, and it
//! reports blang's error texts, which `opm validate` prints.
//!
//! The grammar is blang v4.0.0's (the release OLM, operator-registry and operator-framework/api
//! pin): there are no hyphen ranges (`1.0.0 - 2.0.0` is read as `1.0.0 2.0.0`, because
//! `splitAndTrim` drops one-byte parts), no `~` or `^` (not comparators), no `*` or `X`
//! wildcards and no short versions (`>=1` fails `Parse`); a part is expanded as a wildcard when
//! it contains an `x` anywhere (`strings.Contains(ap, "x")`), so `1.0.0-x` fails.

use std::cmp::Ordering;
use std::fmt;

use semver::Version;

/// A version or range that blang would reject, with blang's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SemverError(pub String);

fn err(msg: impl Into<String>) -> SemverError {
    SemverError(msg.into())
}

fn only_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn ident_chars(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Parses a version strictly (blang `Parse`): exactly `MAJOR.MINOR.PATCH[-pre][+build]`, no `v`
/// prefix, no leading zeros. Errors carry blang's texts (blang v4 `semver.go` `Parse`,
/// `NewPRVersion`).
pub fn parse_version(s: &str) -> Result<Version, SemverError> {
    if s.is_empty() {
        return Err(err("Version string empty"));
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    if parts.len() != 3 {
        return Err(err("No Major.Minor.Patch elements found"));
    }
    number("major", "Major", parts[0])?;
    number("minor", "Minor", parts[1])?;
    // blang cuts the build at the first `+`, then the prerelease at the first `-` before it.
    let mut patch = parts[2];
    let mut build = None;
    if let Some(i) = patch.find('+') {
        build = Some(&patch[i + 1..]);
        patch = &patch[..i];
    }
    let mut pre = None;
    if let Some(i) = patch.find('-') {
        pre = Some(&patch[i + 1..]);
        patch = &patch[..i];
    }
    number("patch", "Patch", patch)?;
    for p in pre.into_iter().flat_map(|p| p.split('.')) {
        if p.is_empty() {
            return Err(err("Prerelease is empty"));
        }
        if only_digits(p) {
            if p.len() > 1 && p.starts_with('0') {
                return Err(err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {p:?}"
                )));
            }
            go_parse_uint(p)?;
        } else if !ident_chars(p) {
            return Err(err(format!(
                "Invalid character(s) found in prerelease {p:?}"
            )));
        }
    }
    for b in build.into_iter().flat_map(|b| b.split('.')) {
        if b.is_empty() {
            return Err(err("Build meta data is empty"));
        }
        if !ident_chars(b) {
            return Err(err(format!(
                "Invalid character(s) found in build meta data {b:?}"
            )));
        }
    }
    Version::parse(s).map_err(|e| err(e.to_string()))
}

/// One of major, minor, patch: digits only (blang's `containsOnly` accepts an empty string, which
/// `strconv.ParseUint` then refuses), no leading zero, fits in 64 bits.
fn number(label: &str, cap: &str, p: &str) -> Result<u64, SemverError> {
    if !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(format!(
            "Invalid character(s) found in {label} number {p:?}"
        )));
    }
    if p.len() > 1 && p.starts_with('0') {
        return Err(err(format!(
            "{cap} number must not contain leading zeroes {p:?}"
        )));
    }
    go_parse_uint(p)
}

/// Go's `strconv.ParseUint(p, 10, 64)` on a string of ASCII digits, with its error texts.
fn go_parse_uint(p: &str) -> Result<u64, SemverError> {
    p.parse::<u64>().map_err(|_| {
        let why = if p.is_empty() {
            "invalid syntax"
        } else {
            "value out of range"
        };
        err(format!("strconv.ParseUint: parsing {p:?}: {why}"))
    })
}

/// Parses a version tolerantly (blang `ParseTolerant`): trims spaces, accepts a `v` prefix,
/// leading zeros and `1`/`1.2` short forms. OLM reads CSV `spec.version` and catalog entry
/// versions this way.
pub fn parse_version_tolerant(s: &str) -> Result<Version, SemverError> {
    let s = s.trim();
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_string).collect();
    for p in parts.iter_mut() {
        if p.len() > 1 {
            let mut t = p.trim_start_matches('0').to_string();
            if t.is_empty() || !t.as_bytes()[0].is_ascii_digit() {
                t.insert(0, '0');
            }
            *p = t;
        }
    }
    if parts.len() < 3 {
        if parts.last().is_some_and(|l| l.contains(['+', '-'])) {
            return Err(err(
                "Short version cannot contain PreRelease/Build meta data",
            ));
        }
        while parts.len() < 3 {
            parts.push("0".into());
        }
    }
    parse_version(&parts.join("."))
}

/// Compares like blang `Version.Compare`: precedence only, build metadata ignored.
pub fn compare(a: &Version, b: &Version) -> Ordering {
    a.cmp_precedence(b)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "" | "=" | "==" => Op::Eq,
            "!" | "!=" => Op::Ne,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "<" => Op::Lt,
            "<=" => Op::Le,
            _ => return None,
        })
    }

    fn symbol(self) -> &'static str {
        match self {
            Op::Eq => "=",
            Op::Ne => "!=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Lt => "<",
            Op::Le => "<=",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Comparator {
    op: Op,
    version: Version,
}

impl Comparator {
    fn matches(&self, v: &Version) -> bool {
        let c = compare(v, &self.version);
        match self.op {
            Op::Eq => c == Ordering::Equal,
            Op::Ne => c != Ordering::Equal,
            Op::Gt => c == Ordering::Greater,
            Op::Ge => c != Ordering::Less,
            Op::Lt => c == Ordering::Less,
            Op::Le => c != Ordering::Greater,
        }
    }
}

/// A parsed blang range: OR of AND-groups of comparators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    source: String,
    any_of: Vec<Vec<Comparator>>,
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Range {
    /// Parses a range with blang's grammar and error texts.
    pub fn parse(s: &str) -> Result<Range, SemverError> {
        let parts = split_and_trim(s);
        let or_parts = split_or_parts(&parts)?;
        let expanded = expand_wildcards(or_parts)?;
        let mut any_of = Vec::with_capacity(expanded.len());
        for group in expanded {
            let mut all = Vec::with_capacity(group.len());
            for ap in group {
                let (op_str, v_str) = split_comparator_version(&ap)?;
                let joined = format!("{op_str}{v_str}");
                let Some(op) = Op::parse(op_str) else {
                    return Err(err(format!(
                        "Could not parse Range {ap:?}: Could not parse comparator {op_str:?} in {joined:?}"
                    )));
                };
                let version = parse_version(v_str).map_err(|e| {
                    err(format!(
                        "Could not parse Range {ap:?}: Could not parse version {v_str:?} in {joined:?}: {e}"
                    ))
                })?;
                all.push(Comparator { op, version });
            }
            any_of.push(all);
        }
        Ok(Range {
            source: s.to_string(),
            any_of,
        })
    }

    /// Whether `v` is inside the range.
    pub fn contains(&self, v: &Version) -> bool {
        self.any_of
            .iter()
            .any(|all| all.iter().all(|c| c.matches(v)))
    }

    /// The range as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The normalised form after wildcard expansion, e.g. `>=1.0.0 <2.0.0` for `1.x`.
    pub fn normalized(&self) -> String {
        self.any_of
            .iter()
            .map(|all| {
                all.iter()
                    .map(|c| format!("{}{}", c.op.symbol(), c.version))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join(" || ")
    }
}

/// blang `splitAndTrim`: split on spaces, except a space right after `<`, `>` or `=` (so
/// `>= 1.0.0` is one part), dropping parts shorter than two bytes as blang does.
fn split_and_trim(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut last = 0usize;
    let mut last_char = 0u8;
    for i in 0..b.len() {
        if b[i] == b' ' && !matches!(last_char, b'>' | b'<' | b'=') {
            if last + 1 < i {
                out.push(s[last..i].to_string());
            }
            last = i + 1;
        } else if b[i] != b' ' {
            last_char = b[i];
        }
    }
    if last + 1 < b.len() {
        out.push(s[last..].to_string());
    }
    out.into_iter().map(|p| p.replace(' ', "")).collect()
}

fn split_or_parts(parts: &[String]) -> Result<Vec<Vec<String>>, SemverError> {
    let mut out = Vec::new();
    let mut last = 0usize;
    for (i, p) in parts.iter().enumerate() {
        if p == "||" {
            if i == 0 {
                return Err(err("First element in range is '||'"));
            }
            out.push(parts[last..i].to_vec());
            last = i + 1;
        }
    }
    if last == parts.len() {
        return Err(err("Last element in range is '||'"));
    }
    out.push(parts[last..].to_vec());
    Ok(out)
}

fn split_comparator_version(s: &str) -> Result<(&str, &str), SemverError> {
    match s.find(|c: char| c.is_ascii_digit()) {
        Some(i) => Ok((s[..i].trim(), &s[i..])),
        None => Err(err(format!("Could not get version from string: {s:?}"))),
    }
}

#[derive(PartialEq)]
enum Wildcard {
    None,
    Minor,
    Patch,
}

fn wildcard_type(v: &str) -> Wildcard {
    let parts: Vec<&str> = v.split('.').collect();
    if parts.last() != Some(&"x") {
        return Wildcard::None;
    }
    match parts.len() {
        2 => Wildcard::Minor,
        3 => Wildcard::Patch,
        _ => Wildcard::None,
    }
}

fn flatten_wildcard(v: &str) -> String {
    let v2 = v.replacen(".x.x", ".x", 1).replacen(".x", ".0", 1);
    if v2.split('.').count() == 2 {
        format!("{v2}.0")
    } else {
        v2
    }
}

fn increment(v: &str, idx: usize) -> String {
    let mut parts: Vec<String> = v.split('.').map(str::to_string).collect();
    match parts.get(idx).and_then(|p| p.parse::<i64>().ok()) {
        Some(n) => {
            parts[idx] = (n + 1).to_string();
            parts.join(".")
        }
        None => String::new(),
    }
}

fn expand_wildcards(groups: Vec<Vec<String>>) -> Result<Vec<Vec<String>>, SemverError> {
    let mut out = Vec::with_capacity(groups.len());
    for group in groups {
        let mut parts = Vec::with_capacity(group.len());
        for ap in group {
            if !ap.contains('x') {
                parts.push(ap);
                continue;
            }
            let (op, v) = split_comparator_version(&ap)?;
            let kind = wildcard_type(v);
            let flat = flatten_wildcard(v);
            let (result_op, bump) = match op {
                ">" => (">=", true),
                ">=" => (">=", false),
                "<" => ("<", false),
                "<=" => ("<", true),
                "" | "=" | "==" => {
                    parts.push(format!(">={flat}"));
                    ("<", true)
                }
                "!=" | "!" => {
                    parts.push(format!("<{flat}"));
                    (">=", true)
                }
                // blang leaves the operator empty for anything else, which then fails to parse.
                _ => ("", false),
            };
            let version = if bump {
                match kind {
                    Wildcard::Patch => increment(&flat, 1),
                    Wildcard::Minor => increment(&flat, 0),
                    Wildcard::None => String::new(),
                }
            } else {
                flat
            };
            parts.push(format!("{result_op}{version}"));
        }
        out.push(parts);
    }
    Ok(out)
}

#[cfg(test)]
mod blang_table {
    //! Verdicts read off blang/semver v4.0.0 `v4/range.go` (`ParseRange`, `splitAndTrim`,
    //! `splitORParts`, `expandWildcardVersion`, `splitComparatorVersion`, `parseComparator`,
    //! `buildVersionRange`) and `v4/semver.go` (`Parse`, `NewPRVersion`, `Compare`).
    use super::*;

    /// `Ok(normalised form)` or `Err(blang's error text)`.
    const TABLE: &[(&str, Result<&str, &str>)] = &[
        // Comparators: "", "=", "==", "!", "!=", ">", ">=", "<", "<=" (parseComparator).
        ("1.0.0", Ok("=1.0.0")),
        ("=1.0.0", Ok("=1.0.0")),
        ("==1.0.0", Ok("=1.0.0")),
        ("!1.0.0", Ok("!=1.0.0")),
        ("!=1.0.0", Ok("!=1.0.0")),
        (">1.0.0", Ok(">1.0.0")),
        (">=1.0.0 <2.0.0", Ok(">=1.0.0 <2.0.0")),
        ("<=1.0.0", Ok("<=1.0.0")),
        // splitAndTrim keeps a space after `>`, `<` or `=` inside the part, then deletes it.
        ("> 1.0.0", Ok(">1.0.0")),
        (">= 1.0.0 < 2.0.0", Ok(">=1.0.0 <2.0.0")),
        (">=1.0.0  <2.0.0", Ok(">=1.0.0 <2.0.0")),
        // AND binds tighter than OR; `||` must stand alone between spaces.
        ("<2.0.0 || >=3.0.0", Ok("<2.0.0 || >=3.0.0")),
        (
            ">1.0.0 <2.0.0 || >3.0.0 !4.2.1",
            Ok(">1.0.0 <2.0.0 || >3.0.0 !=4.2.1"),
        ),
        ("1.0.0 || 2.0.0", Ok("=1.0.0 || =2.0.0")),
        ("|| 1.0.0", Err("First element in range is '||'")),
        ("1.0.0 ||", Err("Last element in range is '||'")),
        ("", Err("Last element in range is '||'")),
        (
            "<2.0.0||>=3.0.0",
            Err(
                "Could not parse Range \"<2.0.0||>=3.0.0\": Could not parse version \"2.0.0||>=3.0.0\" in \"<2.0.0||>=3.0.0\": Invalid character(s) found in patch number \"0||>=3.0.0\"",
            ),
        ),
        // Wildcards: only a lowercase `x`, expanded by expandWildcardVersion.
        ("1.x", Ok(">=1.0.0 <2.0.0")),
        ("1.2.x", Ok(">=1.2.0 <1.3.0")),
        (">=1.2.x", Ok(">=1.2.0")),
        ("<=1.2.x", Ok("<1.3.0")),
        (">1.2.x", Ok(">=1.3.0")),
        ("<1.2.x", Ok("<1.2.0")),
        ("!=1.x", Ok("<1.0.0 >=2.0.0")),
        // `1.x.x` is flattened to 1.0.0 but typed a patch wildcard (three parts): < 1.1.0.
        ("1.x.x", Ok(">=1.0.0 <1.1.0")),
        // Any `x` marks a wildcard part: a prerelease `x` is flattened to 0 ...
        (">=1.0.0-beta.x", Ok(">=1.0.0-beta.0")),
        // ... and where an increment is needed there is no wildcard type, so no version.
        (
            ">1.0.0-beta.x",
            Err("Could not get version from string: \">=\""),
        ),
        ("1.0.0-x", Err("Could not get version from string: \"<\"")),
        (
            "1.X",
            Err(
                "Could not parse Range \"1.X\": Could not parse version \"1.X\" in \"1.X\": No Major.Minor.Patch elements found",
            ),
        ),
        (
            "1.2.*",
            Err(
                "Could not parse Range \"1.2.*\": Could not parse version \"1.2.*\" in \"1.2.*\": Invalid character(s) found in patch number \"*\"",
            ),
        ),
        // One-byte parts are dropped by splitAndTrim (`last < i-1`, `last < len(s)-1`).
        ("*", Err("Last element in range is '||'")),
        ("x", Err("Last element in range is '||'")),
        ("1", Err("Last element in range is '||'")),
        ("1.0.0 x", Ok("=1.0.0")),
        // No hyphen ranges: the lone `-` is dropped, leaving `=1.0.0 =2.0.0` (matches nothing).
        ("1.0.0 - 2.0.0", Ok("=1.0.0 =2.0.0")),
        ("xx", Err("Could not get version from string: \"xx\"")),
        // No `~`, `^`, `=>`, `v` prefixes: parseComparator returns nil.
        (
            "~1.2.3",
            Err("Could not parse Range \"~1.2.3\": Could not parse comparator \"~\" in \"~1.2.3\""),
        ),
        (
            "^1.2.3",
            Err("Could not parse Range \"^1.2.3\": Could not parse comparator \"^\" in \"^1.2.3\""),
        ),
        (
            "=>1.0",
            Err("Could not parse Range \"=>1.0\": Could not parse comparator \"=>\" in \"=>1.0\""),
        ),
        (
            ">v0.1.0",
            Err(
                "Could not parse Range \">v0.1.0\": Could not parse comparator \">v\" in \">v0.1.0\"",
            ),
        ),
        (
            "v1.0.0",
            Err("Could not parse Range \"v1.0.0\": Could not parse comparator \"v\" in \"v1.0.0\""),
        ),
        // Versions are strict (Parse, not ParseTolerant).
        (
            ">1.0.0 <2",
            Err(
                "Could not parse Range \"<2\": Could not parse version \"2\" in \"<2\": No Major.Minor.Patch elements found",
            ),
        ),
        (
            ">=1",
            Err(
                "Could not parse Range \">=1\": Could not parse version \"1\" in \">=1\": No Major.Minor.Patch elements found",
            ),
        ),
        (
            "1.2",
            Err(
                "Could not parse Range \"1.2\": Could not parse version \"1.2\" in \"1.2\": No Major.Minor.Patch elements found",
            ),
        ),
        (
            "1.2.3.4",
            Err(
                "Could not parse Range \"1.2.3.4\": Could not parse version \"1.2.3.4\" in \"1.2.3.4\": Invalid character(s) found in patch number \"3.4\"",
            ),
        ),
        (
            ">=01.0.0",
            Err(
                "Could not parse Range \">=01.0.0\": Could not parse version \"01.0.0\" in \">=01.0.0\": Major number must not contain leading zeroes \"01\"",
            ),
        ),
        (
            ">=1.0.0-01",
            Err(
                "Could not parse Range \">=1.0.0-01\": Could not parse version \"1.0.0-01\" in \">=1.0.0-01\": Numeric PreRelease version must not contain leading zeroes \"01\"",
            ),
        ),
        (
            ">=1..0",
            Err(
                "Could not parse Range \">=1..0\": Could not parse version \"1..0\" in \">=1..0\": strconv.ParseUint: parsing \"\": invalid syntax",
            ),
        ),
        (
            ">=1.0.0,<2.0.0",
            Err(
                "Could not parse Range \">=1.0.0,<2.0.0\": Could not parse version \"1.0.0,<2.0.0\" in \">=1.0.0,<2.0.0\": Invalid character(s) found in patch number \"0,<2.0.0\"",
            ),
        ),
        (
            ">=1.0.0-rc.1 <1.0.0+build.5",
            Ok(">=1.0.0-rc.1 <1.0.0+build.5"),
        ),
        (">=4.1.0 <4.1.5-0", Ok(">=4.1.0 <4.1.5-0")),
        (
            "latest",
            Err("Could not get version from string: \"latest\""),
        ),
        (
            ">=1.0.0 <=",
            Err("Could not get version from string: \"<=\""),
        ),
    ];

    #[test]
    fn parse_verdicts_match_blang() {
        assert!(TABLE.len() >= 40);
        for (input, want) in TABLE {
            let got = Range::parse(input)
                .map(|r| r.normalized())
                .map_err(|e| e.to_string());
            let want = want.map(str::to_string).map_err(str::to_string);
            assert_eq!(got, want, "range {input:?}");
        }
    }

    /// `(range, version, inside?)` from blang's `Compare`: prereleases compare by plain
    /// precedence (npm would exclude `1.5.0-rc.1` from `>=1.0.0 <2.0.0`; blang does not), build
    /// metadata is ignored.
    const MATCHES: &[(&str, &str, bool)] = &[
        (">=1.0.0 <2.0.0", "1.5.0-rc.1", true),
        (">=1.0.0 <2.0.0", "2.0.0-rc.1", true),
        (">=1.0.0 <2.0.0", "1.0.0-rc.1", false),
        ("<1.0.0", "1.0.0-rc", true),
        ("1.2.x", "1.3.0-alpha", true),
        ("1.2.x", "1.3.0", false),
        ("1.x.x", "1.0.9", true),
        ("1.x.x", "1.1.0", false),
        ("=1.0.0+b1", "1.0.0+b2", true),
        ("1.0.0 - 2.0.0", "1.5.0", false),
        // `!=1.x` expands to `<1.0.0` AND `>=2.0.0` in the same AND group: nothing matches.
        ("!=1.x", "1.5.0", false),
        ("!=1.x", "2.0.0", false),
        ("!=1.x", "0.9.0", false),
        (">1.0.0 <2.0.0 || >3.0.0 !4.2.1", "4.2.1", false),
        (">1.0.0 <2.0.0 || >3.0.0 !4.2.1", "3.1.1", true),
        (">=1.0.0-alpha.1", "1.0.0-alpha.beta", true),
        (">=1.0.0-alpha.beta", "1.0.0-alpha.1", false),
    ];

    #[test]
    fn matches_like_blang() {
        for (range, version, inside) in MATCHES {
            let r = Range::parse(range).unwrap();
            let v = parse_version(version).unwrap();
            assert_eq!(r.contains(&v), *inside, "{version} in {range}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        parse_version(s).unwrap()
    }

    fn r(s: &str) -> Range {
        Range::parse(s).unwrap()
    }

    #[test]
    fn space_is_and_pipes_are_or() {
        let range = r(">=1.0.0 <1.2.0 || >=2.0.0");
        assert!(range.contains(&v("1.1.5")));
        assert!(!range.contains(&v("1.2.0")));
        assert!(range.contains(&v("2.3.0")));
        assert!(!range.contains(&v("0.9.9")));
    }

    #[test]
    fn bare_version_is_exact_and_not_excludes() {
        assert!(r("1.0.0").contains(&v("1.0.0")));
        assert!(!r("1.0.0").contains(&v("1.5.0")));
        let range = r(">1.0.0 !1.0.3");
        assert!(range.contains(&v("1.0.2")));
        assert!(!range.contains(&v("1.0.3")));
    }

    #[test]
    fn prereleases_are_not_gated_and_build_is_ignored() {
        assert!(r(">=1.0.0 <1.2.0").contains(&v("1.1.0-rc.1")));
        assert!(r("<1.0.0").contains(&v("1.0.0-rc")));
        assert!(r("=1.0.0+b1").contains(&v("1.0.0+b2")));
    }

    #[test]
    fn operator_followed_by_space_is_tolerated() {
        let range = r(">= 1.0.0 < 2.0.0");
        assert!(range.contains(&v("1.5.0")));
        assert!(!range.contains(&v("2.0.0")));
    }

    #[test]
    fn wildcards_expand_like_blang() {
        assert_eq!(r("1.x").normalized(), ">=1.0.0 <2.0.0");
        assert_eq!(r("<=1.2.x").normalized(), "<1.3.0");
        assert_eq!(r(">1.2.x").normalized(), ">=1.3.0");
        assert_eq!(r("!=1.x").normalized(), "<1.0.0 >=2.0.0");
        assert_eq!(r(">=1.2.x").normalized(), ">=1.2.0");
        assert!(r("1.2.x").contains(&v("1.2.9")));
        assert!(!r("1.2.x").contains(&v("1.3.0")));
    }

    #[test]
    fn errors_use_blang_texts() {
        assert_eq!(
            Range::parse(">v0.1.0").unwrap_err().to_string(),
            "Could not parse Range \">v0.1.0\": Could not parse comparator \">v\" in \">v0.1.0\""
        );
        assert_eq!(
            Range::parse("|| 1.0.0").unwrap_err().to_string(),
            "First element in range is '||'"
        );
        assert_eq!(
            Range::parse("1.0.0 ||").unwrap_err().to_string(),
            "Last element in range is '||'"
        );
        assert_eq!(
            Range::parse("").unwrap_err().to_string(),
            "Last element in range is '||'"
        );
        assert_eq!(
            Range::parse(">=abc").unwrap_err().to_string(),
            "Could not get version from string: \">=abc\""
        );
        assert!(Range::parse(">=1.0").is_err());
        assert!(Range::parse(">=1.0.0, <2.0.0").is_err());
        assert!(Range::parse(">=01.0.0").is_err());
    }

    #[test]
    fn strict_version_messages() {
        assert_eq!(
            parse_version("").unwrap_err().to_string(),
            "Version string empty"
        );
        assert_eq!(
            parse_version("0.1").unwrap_err().to_string(),
            "No Major.Minor.Patch elements found"
        );
        assert_eq!(
            parse_version("1.0.0.1").unwrap_err().to_string(),
            "Invalid character(s) found in patch number \"0.1\""
        );
        assert!(parse_version("v1.0.0").is_err());
        assert!(parse_version("1.0.0-01").is_err());
        assert!(parse_version("1.0.0-rc.1+build.5").is_ok());
    }

    #[test]
    fn tolerant_versions() {
        assert_eq!(parse_version_tolerant("v1.2").unwrap(), v("1.2.0"));
        assert_eq!(parse_version_tolerant(" 01.02.03 ").unwrap(), v("1.2.3"));
        assert!(parse_version_tolerant("1.2-rc").is_err());
    }
}
