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

/// A time in RFC 3339 to the second (`2026-11-22T14:03:07Z`, or with an offset such as
/// `+02:00`; fractions of a second allowed) as seconds since 1970-01-01 UTC; `None` for anything
/// else, an impossible date (February 30) or time (24:00) included.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = text.get(from..from + len)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    let sep = |i: usize, c: u8| b.get(i) == Some(&c);
    if !(sep(4, b'-')
        && sep(7, b'-')
        && (sep(10, b'T') || sep(10, b't'))
        && sep(13, b':')
        && sep(16, b':'))
    {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days_in = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    let valid = (1..=12).contains(&month)
        && (1..=days_in[(month - 1).clamp(0, 11) as usize]).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60;
    if !valid {
        return None;
    }
    let mut rest = &text[19..];
    if let Some(f) = rest.strip_prefix('.') {
        let digits = f.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = &f[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first() {
                Some(b'+') => 1,
                Some(b'-') => -1,
                _ => return None,
            };
            let (h, m) = (rest.get(1..3)?, rest.get(4..6)?);
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
            if h > 23 || m > 59 {
                return None;
            }
            sign * (h * 3600 + m * 60)
        }
    };
    // Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    u64::try_from(secs).ok()
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
