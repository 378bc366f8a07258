//! `today`, `now_rfc3339`: the date a baseline records, `YYYY-MM-DD` (UTC), and the time a run
//! started, RFC 3339 to the second (UTC), without a date crate.

/// Seconds since 1970-01-01 UTC, now.
fn now_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    civil_date((now_seconds() / 86_400) as i64)
}

/// Now (UTC) in RFC 3339 to the second: `2026-11-22T14:03:07Z`.
pub fn now_rfc3339() -> String {
    rfc3339(now_seconds())
}

/// A time (seconds since 1970-01-01 UTC) in RFC 3339 to the second, UTC: `2026-11-22T14:03:07Z`.
pub fn rfc3339(secs: u64) -> String {
    let s = secs % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        civil_date((secs / 86_400) as i64),
        s / 3600,
        s % 3600 / 60,
        s % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(20_413), "2025-11-21");
        assert_eq!(civil_date(11_016), "2000-02-29");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(20_413 * 86_400 + 3_600 * 14 + 187),
            "2025-11-21T14:03:07Z"
        );
    }
}
