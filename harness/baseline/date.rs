//! `today`, `now_rfc3339`: the date a baseline records, `YYYY-MM-DD` (UTC), and the time a run
//! started, RFC 3339 to the second (UTC), through chrono.

use chrono::{DateTime, SecondsFormat, Utc};

/// Today's date (UTC) as `YYYY-MM-DD`.
pub fn today() -> String {
    Utc::now().format("%Y-%m-%d").to_string()
}

/// Now (UTC) in RFC 3339 to the second: `2026-11-22T14:03:07Z`.
pub fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A time (seconds since 1970-01-01 UTC) in RFC 3339 to the second, UTC: `2026-11-22T14:03:07Z`.
pub fn rfc3339(secs: u64) -> String {
    DateTime::from_timestamp(i64::try_from(secs).unwrap_or(i64::MAX), 0)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A time in RFC 3339 to the second (`2026-11-22T14:03:07Z`, or with an offset such as
/// `+02:00`; fractions of a second allowed) as seconds since 1970-01-01 UTC; `None` for anything
/// else, an impossible date (February 30) or time (24:00, a leap second) included.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    // RFC 3339 proper: `T` between date and time (chrono also takes a space), no second 60.
    let t = matches!(text.as_bytes().get(10), Some(b'T' | b't'));
    let leap = text.get(17..19) == Some("60");
    let at = DateTime::parse_from_rfc3339(text)
        .ok()
        .filter(|_| t && !leap)?;
    u64::try_from(at.timestamp()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(20_413 * 86_400 + 3_600 * 14 + 187),
            "2025-11-21T14:03:07Z"
        );
    }

    #[test]
    fn start_times_are_parsed_or_refused() {
        let t = 20_413 * 86_400 + 3_600 * 14 + 187;
        assert_eq!(parse_rfc3339("2025-11-21T14:03:07Z"), Some(t));
        assert_eq!(parse_rfc3339("2025-11-21T16:03:07.25+02:00"), Some(t));
        assert_eq!(parse_rfc3339("2025-11-21T13:33:07-00:30"), Some(t));
        assert_eq!(
            parse_rfc3339("2000-02-29T00:00:00Z")
                .map(rfc3339)
                .as_deref(),
            Some("2000-02-29T00:00:00Z")
        );
        for bad in [
            "yesterday afternoon",
            "2026-02-30T10:00:00Z",
            "2025-02-29T10:00:00Z",
            "2026-11-21T24:00:00Z",
            "2026-11-21T10:60:00Z",
            "2026-13-01T10:00:00Z",
            "2026-11-21",
            "2026-11-21T10:00:00",
            "2026-11-21T10:00:00+2",
            "2026-11-21 10:00:00Z",
            "",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
