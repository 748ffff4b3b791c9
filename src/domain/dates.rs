//! The dates and instants a user may type: `YYYY-MM-DD` days and RFC 3339 instants, in the
//! years 1000 to 9999 only. Earlier years print with fewer than four digits, so their board
//! keys and MySQL dates do not read back as they were written (`status --date 0999-01-01`
//! panicked); no attendance record lies outside that range anyway.

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Offset, TimeZone, Timelike, Utc};
use chrono_tz::Tz;

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
    // chrono alone takes `2026-1-1` and ` 2026-12-01`: the form is checked first, exactly.
    let exact = s.len() == 10
        && s.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if !exact {
        return Err("expected YYYY-MM-DD".to_string());
    }
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
    // A leap second (23:59:60) would read 23:59:60 in one place and 00:00:00 in another:
    // refused, with the second to use instead.
    if t.nanosecond() >= 1_000_000_000 {
        return Err("a leap second (:60) is not accepted: give :59".into());
    }
    let t = t.with_timezone(&Utc);
    let day = chrono::Duration::days(1);
    for edge in [t.checked_sub_signed(day), t.checked_add_signed(day)] {
        if !YEARS.contains(&edge.map_or(0, |e| e.year())) {
            return Err(
                "out of range: an instant must be at least a day inside the years 1000 to 9999 (its work day depends on the zone)"
                    .into(),
            );
        }
    }
    Ok(t)
}

/// A wall-clock time as text (`fmt` such as `%H:%M`), with its UTC offset appended where the
/// wall clock alone is ambiguous: on the night the clocks go back, 02:30 happens twice, and
/// "in 02:30, out 02:30" would hide an hour. Then it reads `02:30+02:00` and `02:30+01:00`.
pub(crate) fn wall_clock(t: DateTime<Tz>, fmt: &str) -> String {
    let text = t.format(fmt).to_string();
    if is_ambiguous(t) {
        format!("{text}{}", t.offset().fix())
    } else {
        text
    }
}

/// Whether `t`'s wall-clock time happens twice on its day (the hour the clocks go back).
pub(crate) fn is_ambiguous(t: DateTime<Tz>) -> bool {
    matches!(
        t.timezone().from_local_datetime(&t.naive_local()),
        chrono::LocalResult::Ambiguous(..)
    )
}

/// [`wall_clock`] of a UTC instant (as MySQL stores them) in the company's zone.
pub(crate) fn wall_clock_utc(tz: Tz, t: NaiveDateTime, fmt: &str) -> String {
    wall_clock(t.and_utc().with_timezone(&tz), fmt)
}

/// The one instant a local wall-clock time names on its day, or why it names none: a time the
/// clocks skip (spring forward) does not exist, and one they pass twice (fall back) must be
/// given with its offset. Never moved to a neighbouring minute in silence.
pub(crate) fn local_instant(tz: Tz, local: NaiveDateTime) -> Result<DateTime<Utc>, String> {
    match tz.from_local_datetime(&local) {
        chrono::LocalResult::Single(t) => Ok(t.with_timezone(&Utc)),
        chrono::LocalResult::None => Err(format!(
            "{} does not exist in {tz} on {} (the clocks skip it); give a time that exists, or RFC 3339 with an offset",
            local.format("%H:%M"),
            local.date()
        )),
        chrono::LocalResult::Ambiguous(a, b) => Err(format!(
            "{} happens twice in {tz} on {} (at {} and at {}); give it as RFC 3339 with the offset meant",
            local.format("%H:%M"),
            local.date(),
            a.offset().fix(),
            b.offset().fix()
        )),
    }
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

    #[test]
    fn a_wall_clock_time_shows_its_offset_only_where_the_day_has_it_twice() {
        let tz: Tz = "Europe/Paris".parse().unwrap();
        let at = |s: &str| parse_instant(s).unwrap().with_timezone(&tz);
        // 2026-10-25: 03:00 CEST becomes 02:00 CET, so 02:30 happens at 00:30Z and at 01:30Z.
        assert_eq!(wall_clock(at("2026-10-25T00:30:00Z"), "%H:%M"), "02:30+02:00");
        assert_eq!(wall_clock(at("2026-10-25T01:30:00Z"), "%H:%M"), "02:30+01:00");
        assert_eq!(wall_clock(at("2026-10-25T07:30:00Z"), "%H:%M"), "08:30");
        assert_eq!(wall_clock(at("2026-11-30T07:55:00Z"), "%H:%M:%S"), "08:55:00");
    }

    #[test]
    fn a_local_time_the_clocks_skip_or_repeat_names_no_single_instant() {
        let tz: Tz = "Europe/Paris".parse().unwrap();
        let local = |s: &str| NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap();
        // 2027-03-28: 02:00 CET becomes 03:00 CEST.
        let e = local_instant(tz, local("2027-03-28 02:30")).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        let e = local_instant(tz, local("2026-10-25 02:30")).unwrap_err();
        assert!(e.contains("+02:00") && e.contains("+01:00"), "{e}");
        assert_eq!(
            local_instant(tz, local("2027-03-28 03:30")).unwrap(),
            parse_instant("2027-03-28T01:30:00Z").unwrap()
        );
    }
}
