//! The dates and instants a user may type: `YYYY-MM-DD` days and RFC 3339 instants, in the
//! years 1000 to 9999 only. Earlier years print with fewer than four digits, so their board
//! keys and MySQL dates do not read back as they were written (`status --date 0999-01-01`
//! panicked); no attendance record lies outside that range anyway.

use chrono::{DateTime, Datelike, NaiveDate, Utc};

/// The years a date may have.
pub(crate) const YEARS: std::ops::RangeInclusive<i32> = 1000..=9999;

fn in_range(year: i32) -> Result<(), String> {
    if YEARS.contains(&year) {
        Ok(())
    } else {
        Err("out of range: years 1000 to 9999 only".into())
    }
}

/// A day, `YYYY-MM-DD`. The error says what was expected, not the value: clap puts it after
/// `invalid value '...' for '--date'`, a CSV reader after the line and field.
pub(crate) fn parse_day(s: &str) -> Result<NaiveDate, String> {
    let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").map_err(|_| "expected YYYY-MM-DD".to_string())?;
    in_range(d.year())?;
    Ok(d)
}

/// A month, `YYYY-MM`, as its first day.
pub(crate) fn parse_month(s: &str) -> Result<NaiveDate, String> {
    parse_day(&format!("{s}-01")).map_err(|e| e.replace("YYYY-MM-DD", "YYYY-MM"))
}

/// An instant, RFC 3339 with an offset, such as `2026-11-30T08:55:00+01:00`.
pub(crate) fn parse_instant(s: &str) -> Result<DateTime<Utc>, String> {
    let t = DateTime::parse_from_rfc3339(s)
        .map_err(|_| "expected RFC 3339, such as 2026-11-30T08:55:00+01:00".to_string())?;
    // The day a punch is filed under is in the company's zone, up to a day either side of
    // the instant's own date: both must be in range.
    let t = t.with_timezone(&Utc);
    let day = chrono::Duration::days(1);
    for edge in [t.checked_sub_signed(day), t.checked_add_signed(day)] {
        in_range(edge.map_or(0, |e| e.year()))?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn years_outside_1000_to_9999_are_refused() {
        assert!(parse_day("2026-11-30").is_ok());
        assert!(parse_day("1000-01-01").is_ok());
        assert!(parse_day("9999-12-31").is_ok());
        for bad in [
            "0999-12-31",
            "0000-01-01",
            "+10000-01-01",
            "2026-13-01",
            "30/11/2026",
            "",
        ] {
            assert!(parse_day(bad).is_err(), "{bad}");
        }
        assert!(parse_instant("2026-11-30T08:55:00+01:00").is_ok());
        let e = parse_instant("0000-01-01T00:00:00Z").unwrap_err();
        assert!(e.contains("1000 to 9999"), "{e}");
        assert!(parse_instant("2026-11-30 08:55").is_err());
        assert!(
            parse_instant("1000-01-01T06:00:00Z").is_err(),
            "filed under 0999-12-31 west of UTC"
        );
    }
}
