//! Kubernetes label selectors as apimachinery's `labels.Parse` reads them: comma-separated
//! requirements `key`, `!key`, `key=value`, `key==value`, `key!=value`, `key in (a,b)`,
//! `key notin (a,b)`, `key>1`, `key<1`, with keys checked as qualified names and values as
//! label values. The empty selector selects everything.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::k8s_names;

/// How one requirement compares a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Exists,
    DoesNotExist,
    Equals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
}

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    pub op: Op,
    pub values: BTreeSet<String>,
}

/// A parsed selector: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selector {
    pub requirements: Vec<Requirement>,
}

/// Why a selector does not parse, with the offending token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unable to parse requirement: {0}")]
pub struct SelectorError(pub String);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Comma,
    Not,
    Eq,
    DoubleEq,
    NotEq,
    Gt,
    Lt,
    Open,
    Close,
    In,
    NotIn,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tok::Ident(s) => s,
            Tok::Comma => ",",
            Tok::Not => "!",
            Tok::Eq => "=",
            Tok::DoubleEq => "==",
            Tok::NotEq => "!=",
            Tok::Gt => ">",
            Tok::Lt => "<",
            Tok::Open => "(",
            Tok::Close => ")",
            Tok::In => "in",
            Tok::NotIn => "notin",
        })
    }
}

fn special(c: char) -> bool {
    matches!(c, '!' | ',' | '=' | '>' | '<' | '(' | ')')
}

fn lex(s: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        if special(c) {
            chars.next();
            let next = chars.peek().copied();
            out.push(match (c, next) {
                ('!', Some('=')) => {
                    chars.next();
                    Tok::NotEq
                }
                ('=', Some('=')) => {
                    chars.next();
                    Tok::DoubleEq
                }
                ('!', _) => Tok::Not,
                (',', _) => Tok::Comma,
                ('=', _) => Tok::Eq,
                ('>', _) => Tok::Gt,
                ('<', _) => Tok::Lt,
                ('(', _) => Tok::Open,
                _ => Tok::Close,
            });
            continue;
        }
        let mut word = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_whitespace() || special(c) {
                break;
            }
            word.push(c);
            chars.next();
        }
        out.push(match word.as_str() {
            "in" => Tok::In,
            "notin" => Tok::NotIn,
            _ => Tok::Ident(word),
        });
    }
    out
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn found(t: Option<&Tok>) -> String {
        t.map(|t| format!("'{t}'"))
            .unwrap_or_else(|| "end of string".into())
    }

    fn requirement(&mut self) -> Result<Requirement, SelectorError> {
        let negated = self.peek() == Some(&Tok::Not);
        if negated {
            self.pos += 1;
        }
        let key = match self.next() {
            Some(Tok::Ident(k)) => k,
            t => {
                return Err(SelectorError(format!(
                    "found {}, expected: identifier",
                    Self::found(t.as_ref())
                )));
            }
        };
        check_key(&key)?;
        if negated {
            return Ok(Requirement {
                key,
                op: Op::DoesNotExist,
                values: BTreeSet::new(),
            });
        }
        let op = match self.peek() {
            None | Some(Tok::Comma) => {
                return Ok(Requirement {
                    key,
                    op: Op::Exists,
                    values: BTreeSet::new(),
                });
            }
            Some(Tok::Eq | Tok::DoubleEq) => Op::Equals,
            Some(Tok::NotEq) => Op::NotEquals,
            Some(Tok::In) => Op::In,
            Some(Tok::NotIn) => Op::NotIn,
            Some(Tok::Gt) => Op::GreaterThan,
            Some(Tok::Lt) => Op::LessThan,
            t => {
                return Err(SelectorError(format!(
                    "found {}, expected: in, notin, =, ==, !=, gt, lt",
                    Self::found(t)
                )));
            }
        };
        self.pos += 1;
        let values = match op {
            Op::In | Op::NotIn => self.set()?,
            _ => {
                let v = match self.peek() {
                    Some(Tok::Ident(v)) => {
                        let v = v.clone();
                        self.pos += 1;
                        v
                    }
                    None | Some(Tok::Comma) => String::new(),
                    t => {
                        return Err(SelectorError(format!(
                            "found {}, expected: identifier",
                            Self::found(t)
                        )));
                    }
                };
                BTreeSet::from([v])
            }
        };
        let req = Requirement { key, op, values };
        check_values(&req)?;
        Ok(req)
    }

    fn set(&mut self) -> Result<BTreeSet<String>, SelectorError> {
        match self.next() {
            Some(Tok::Open) => {}
            t => {
                return Err(SelectorError(format!(
                    "found {}, expected: '('",
                    Self::found(t.as_ref())
                )));
            }
        }
        let mut values = BTreeSet::new();
        loop {
            match self.next() {
                Some(Tok::Ident(v)) => {
                    values.insert(v);
                    match self.next() {
                        Some(Tok::Comma) => continue,
                        Some(Tok::Close) => break,
                        t => {
                            return Err(SelectorError(format!(
                                "found {}, expected: ',' or ')'",
                                Self::found(t.as_ref())
                            )));
                        }
                    }
                }
                Some(Tok::Close) => break,
                // `(a,,b)` and `(,a)` hold an empty value, as apimachinery reads them.
                Some(Tok::Comma) => {
                    values.insert(String::new());
                }
                t => {
                    return Err(SelectorError(format!(
                        "found {}, expected: ',', ')' or identifier",
                        Self::found(t.as_ref())
                    )));
                }
            }
        }
        Ok(values)
    }
}

fn check_key(key: &str) -> Result<(), SelectorError> {
    match k8s_names::qualified_name(key).as_slice() {
        [] => Ok(()),
        problems => Err(SelectorError(format!(
            "invalid label key {key:?}: {}",
            problems.join("; ")
        ))),
    }
}

fn check_values(req: &Requirement) -> Result<(), SelectorError> {
    match req.op {
        Op::In | Op::NotIn if req.values.is_empty() => {
            return Err(SelectorError(
                "for 'in', 'notin' operators, values set can't be empty".into(),
            ));
        }
        Op::GreaterThan | Op::LessThan => {
            for v in &req.values {
                if v.parse::<i64>().is_err() {
                    return Err(SelectorError(format!(
                        "for 'Gt', 'Lt' operators, the value must be an integer, not {v:?}"
                    )));
                }
            }
        }
        _ => {}
    }
    for v in &req.values {
        let problems = k8s_names::label_value(v);
        if !problems.is_empty() {
            return Err(SelectorError(format!(
                "invalid label value {v:?}: {}",
                problems.join("; ")
            )));
        }
    }
    Ok(())
}

/// Parses `text` as `labels.Parse` does.
pub fn parse(text: &str) -> Result<Selector, SelectorError> {
    let mut p = Parser {
        toks: lex(text),
        pos: 0,
    };
    let mut requirements = Vec::new();
    while p.peek().is_some() {
        requirements.push(p.requirement()?);
        match p.next() {
            None => break,
            Some(Tok::Comma) if p.peek().is_some() => {}
            t => {
                return Err(SelectorError(format!(
                    "found {}, expected: ','",
                    Parser::found(t.as_ref())
                )));
            }
        }
    }
    Ok(Selector { requirements })
}

impl Selector {
    /// Whether the labels satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| {
            let got = labels.get(&r.key);
            match r.op {
                Op::Exists => got.is_some(),
                Op::DoesNotExist => got.is_none(),
                Op::Equals | Op::In => got.is_some_and(|v| r.values.contains(v)),
                Op::NotEquals | Op::NotIn => got.is_none_or(|v| !r.values.contains(v)),
                Op::GreaterThan | Op::LessThan => {
                    let (Some(v), Some(bound)) = (
                        got.and_then(|v| v.parse::<i64>().ok()),
                        r.values.iter().next().and_then(|b| b.parse::<i64>().ok()),
                    ) else {
                        return false;
                    };
                    if r.op == Op::GreaterThan {
                        v > bound
                    } else {
                        v < bound
                    }
                }
            }
        })
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn selectors_match_as_apimachinery_matches() {
        let olm = labels(&[("suite", "olm"), ("test", "olm-crds-have-validation-test")]);
        let basic = labels(&[("suite", "basic"), ("test", "basic-check-spec-test")]);
        let cases: &[(&str, bool, bool)] = &[
            ("", true, true),
            ("suite=olm", true, false),
            ("suite==olm", true, false),
            ("suite!=olm", false, true),
            ("suite in (olm)", true, false),
            ("suite in (olm, basic)", true, true),
            ("suite notin (olm)", false, true),
            ("test=basic-check-spec-test", false, true),
            ("suite", true, true),
            ("!suite", false, false),
            ("!x", true, true),
            ("x!=y", true, true),
            ("suite=olm,test=olm-crds-have-validation-test", true, false),
            (" suite = basic ", false, true),
        ];
        for (sel, want_olm, want_basic) in cases {
            let s = parse(sel).unwrap_or_else(|e| panic!("{sel}: {e}"));
            assert_eq!(s.matches(&olm), *want_olm, "{sel} on olm");
            assert_eq!(s.matches(&basic), *want_basic, "{sel} on basic");
        }
    }

    #[test]
    fn numeric_comparisons_need_integers() {
        let s = parse("n>2").unwrap();
        assert!(s.matches(&labels(&[("n", "3")])));
        assert!(!s.matches(&labels(&[("n", "2")])));
        assert!(!s.matches(&labels(&[("n", "x")])));
        assert!(parse("n<z").is_err());
    }

    #[test]
    fn malformed_selectors_are_refused_with_the_token() {
        for bad in [
            "suite in olm",
            "suite in ()",
            "suite=olm,",
            "=olm",
            "suite=olm test=x",
            "suite=(",
            "bad key=x",
            "k=-bad-",
        ] {
            let e = parse(bad).expect_err(bad);
            assert!(
                e.to_string().starts_with("unable to parse requirement"),
                "{e}"
            );
        }
        assert!(
            parse("suite in olm")
                .unwrap_err()
                .to_string()
                .contains("'olm'")
        );
    }
}
