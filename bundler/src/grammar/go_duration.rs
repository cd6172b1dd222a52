//! Go's `time.ParseDuration` (`src/time/format.go`): an optional sign, then one or more decimal
//! numbers each followed by a unit (`ns`, `us`, `µs`, `μs`, `ms`, `s`, `m`, `h`); `0` alone needs
//! no unit. The value is an int64 of nanoseconds, so anything past about 292 years overflows.

use std::time::Duration;

/// A string `time.ParseDuration` rejects, with Go's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DurationError(String);

/// A parsed duration: Go allows a sign, so this keeps it apart from the magnitude.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GoDuration {
    pub negative: bool,
    pub magnitude: Duration,
}

const UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("μs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Parses like `time.ParseDuration`, sign included.
pub fn parse(orig: &str) -> Result<GoDuration, DurationError> {
    let invalid = || DurationError(format!("time: invalid duration {orig:?}"));
    let mut s = orig;
    let mut negative = false;
    if let Some(c) = s.chars().next()
        && (c == '-' || c == '+')
    {
        negative = c == '-';
        s = &s[1..];
    }
    if s == "0" {
        return Ok(GoDuration {
            negative,
            magnitude: Duration::ZERO,
        });
    }
    if s.is_empty() {
        return Err(invalid());
    }
    const LIMIT: u64 = 1 << 63;
    let mut d: u64 = 0;
    while !s.is_empty() {
        let first = s.as_bytes()[0];
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        // leadingInt: the integer part; overflow past 1<<63 is an error.
        let int_len = s.bytes().take_while(u8::is_ascii_digit).count();
        let mut v: u64 = 0;
        for b in s[..int_len].bytes() {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(b - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
        }
        let pre = int_len > 0;
        s = &s[int_len..];
        // leadingFraction: digits after the dot; once they overflow the rest is ignored.
        let mut f: u64 = 0;
        let mut scale = 1f64;
        let mut post = false;
        if let Some(rest) = s.strip_prefix('.') {
            let frac_len = rest.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            for b in rest[..frac_len].bytes() {
                if overflow {
                    continue;
                }
                if f > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(b - b'0');
                if y > LIMIT {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
            post = frac_len > 0;
            s = &rest[frac_len..];
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(DurationError(format!(
                "time: missing unit in duration {orig:?}"
            )));
        }
        let u = &s[..unit_len];
        s = &s[unit_len..];
        let Some(&(_, unit)) = UNITS.iter().find(|(name, _)| *name == u) else {
            return Err(DurationError(format!(
                "time: unknown unit {u:?} in duration {orig:?}"
            )));
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        d += v;
        if d > LIMIT {
            return Err(invalid());
        }
    }
    if !negative && d > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(GoDuration {
        negative,
        magnitude: Duration::from_nanos(d),
    })
}

/// Parses a duration that must not be negative (timeouts, poll intervals); `-0` is zero.
pub fn parse_non_negative(s: &str) -> Result<Duration, DurationError> {
    let d = parse(s)?;
    if d.negative && !d.magnitude.is_zero() {
        return Err(DurationError(format!("negative duration {s:?}")));
    }
    Ok(d.magnitude)
}

/// Go's `time.Duration.String()`: `0s`, `1.5µs`, `12.3ms`, `4.2s`, `1m30s`, `2h0m0s` (units
/// below a second for short durations, trailing zeros of the fraction dropped).
pub fn format(d: Duration) -> String {
    let u = d.as_nanos().min(u128::from(u64::MAX)) as u64;
    if u == 0 {
        return "0s".into();
    }
    if u < 1_000_000_000 {
        let (prec, unit) = match u {
            0..1_000 => (0, "ns"),
            1_000..1_000_000 => (3, "µs"),
            _ => (6, "ms"),
        };
        let (frac, int) = fraction(u, prec);
        return format!("{int}{frac}{unit}");
    }
    let (frac, secs) = fraction(u, 9);
    let (mins, s) = (secs / 60, secs % 60);
    match (mins / 60, mins % 60) {
        (0, 0) => format!("{s}{frac}s"),
        (0, m) => format!("{m}m{s}{frac}s"),
        (h, m) => format!("{h}h{m}m{s}{frac}s"),
    }
}

/// `fmtFrac`: the fraction of `v / 10^prec` as `.digits` without trailing zeros (nothing when
/// it is zero), and the integer part.
fn fraction(v: u64, prec: u32) -> (String, u64) {
    let scale = 10u64.pow(prec);
    let digits = format!("{:0width$}", v % scale, width = prec as usize);
    let digits = digits.trim_end_matches('0');
    let frac = if digits.is_empty() {
        String::new()
    } else {
        format!(".{digits}")
    };
    (frac, v / scale)
}

#[cfg(test)]
mod tests {
    //! Verdicts from Go `time.ParseDuration` (`src/time/format.go`) and its test table
    //! `parseDurationTests` in `time_test.go`.
    use super::*;

    const MS: u64 = 1_000_000;
    const S: u64 = 1_000_000_000;

    #[test]
    fn go_table() {
        let ok: &[(&str, bool, u64)] = &[
            ("0", false, 0),
            ("5s", false, 5 * S),
            ("30s", false, 30 * S),
            ("1478s", false, 1478 * S),
            ("-5s", true, 5 * S),
            ("+5s", false, 5 * S),
            ("-0", true, 0),
            ("+0", false, 0),
            ("5.0s", false, 5 * S),
            ("5.6s", false, 5 * S + 600 * MS),
            ("5.s", false, 5 * S),
            (".5s", false, 500 * MS),
            ("1.0s", false, S),
            ("1.00s", false, S),
            ("1.004s", false, S + 4 * MS),
            ("100.00100s", false, 100 * S + MS),
            ("10ns", false, 10),
            ("11us", false, 11_000),
            ("12µs", false, 12_000),
            ("12μs", false, 12_000),
            ("13ms", false, 13 * MS),
            ("14s", false, 14 * S),
            ("15m", false, 15 * 60 * S),
            ("16h", false, 16 * 3600 * S),
            ("3h30m", false, (3 * 3600 + 30 * 60) * S),
            ("10.5s4m", false, 4 * 60 * S + 10 * S + 500 * MS),
            ("1h2m3s4ms5us6ns", false, 3723 * S + 4 * MS + 5_000 + 6),
            ("39h9m14.425s", false, 140_954 * S + 425 * MS),
            ("52763797000ns", false, 52_763_797_000),
            ("0.3333333333333333333h", false, 20 * 60 * S),
            ("9007199254740993ns", false, 9_007_199_254_740_993),
            ("9223372036854775807ns", false, 9_223_372_036_854_775_807),
            ("0.100000000000000000000h", false, 6 * 60 * S),
        ];
        for (input, negative, nanos) in ok {
            let d = parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(
                (d.negative, d.magnitude),
                (*negative, Duration::from_nanos(*nanos)),
                "{input}"
            );
        }
        let bad: &[(&str, &str)] = &[
            ("", "time: invalid duration \"\""),
            ("3", "time: missing unit in duration \"3\""),
            ("-", "time: invalid duration \"-\""),
            ("s", "time: invalid duration \"s\""),
            (".", "time: invalid duration \".\""),
            ("-.", "time: invalid duration \"-.\""),
            (".s", "time: invalid duration \".s\""),
            ("+.s", "time: invalid duration \"+.s\""),
            ("1d", "time: unknown unit \"d\" in duration \"1d\""),
            ("1S", "time: unknown unit \"S\" in duration \"1S\""),
            ("1.5H", "time: unknown unit \"H\" in duration \"1.5H\""),
            (" 1s", "time: invalid duration \" 1s\""),
            ("1s ", "time: unknown unit \"s \" in duration \"1s \""),
            (
                "9223372036854775808ns",
                "time: invalid duration \"9223372036854775808ns\"",
            ),
            (
                "9223372036854775.808us",
                "time: invalid duration \"9223372036854775.808us\"",
            ),
        ];
        for (input, msg) in bad {
            assert_eq!(
                parse(input).map_err(|e| e.to_string()),
                Err(msg.to_string()),
                "{input}"
            );
        }
        assert_eq!(
            parse("-9223372036854775808ns").unwrap().magnitude,
            Duration::from_nanos(1 << 63)
        );
    }

    #[test]
    fn non_negative() {
        assert_eq!(
            parse_non_negative("1m30s").unwrap(),
            Duration::from_secs(90)
        );
        assert_eq!(parse_non_negative("-0").unwrap(), Duration::ZERO);
        assert!(parse_non_negative("-1s").is_err());
    }

    #[test]
    fn formats_as_go_duration_string() {
        for (nanos, go) in [
            (0u64, "0s"),
            (1, "1ns"),
            (1_500, "1.5µs"),
            (12_345_678, "12.345678ms"),
            (1_000_000, "1ms"),
            (1_000_000_000, "1s"),
            (4_200_000_000, "4.2s"),
            (90_000_000_000, "1m30s"),
            (7_200_000_000_000, "2h0m0s"),
            (3_723_500_000_000, "1h2m3.5s"),
        ] {
            assert_eq!(format(Duration::from_nanos(nanos)), go, "{nanos}ns");
        }
    }
}
