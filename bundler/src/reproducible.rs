//! Reproducible builds: the build time every artifact records comes from `SOURCE_DATE_EPOCH`
//! (reproducible-builds.org) and is written as RFC 3339 UTC, so the same inputs give the same
//! bytes on any machine. Used by the images and the generated bundle alike.

/// The build time of images: `SOURCE_DATE_EPOCH` when set (reproducible-builds.org), else 0,
/// so the same inputs give the same digest on every machine and run.
pub fn source_date_epoch() -> Result<u64, EpochError> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Err(_) => Ok(0),
        Ok(v) if v.trim().is_empty() => Ok(0),
        Ok(v) => v.trim().parse::<u64>().map_err(|_| EpochError(v)),
    }
}

/// `SOURCE_DATE_EPOCH` that is not a number of seconds.
#[derive(Debug, thiserror::Error)]
#[error("SOURCE_DATE_EPOCH={0:?}: expected a whole number of seconds since 1970-01-01")]
pub struct EpochError(String);

/// RFC 3339 UTC text for a Unix time, as image configs carry it (`1970-01-01T00:00:00Z`).
pub fn rfc3339(epoch: u64) -> String {
    let (y, m, d) = crate::grammar::calendar::civil_from_days((epoch / 86_400) as i64);
    let secs = epoch % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_matches_known_instants() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }
}
