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

/// A time as people type it (`checkin --at`, `correct --in`, `punch void --at`): `HH:MM[:SS]`
/// on a day the command knows (today, or `--date`), `YYYY-MM-DDTHH:MM[:SS]` without an offset,
/// both in the company's zone, or RFC 3339 with its offset. Parsed first, placed later
/// ([`TypedTime::instant`]): "today" is the Redis server's, read with the command's first call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypedTime {
    /// RFC 3339: an instant already.
    Instant(DateTime<Utc>),
    /// A date and a wall-clock time in the company's zone.
    Local(NaiveDateTime),
    /// A wall-clock time on the day the command says.
    Clock(chrono::NaiveTime),
}

/// The forms [`parse_typed_time`] takes, for its error and the help texts.
pub(crate) const TYPED_TIME_FORMS: &str =
    "HH:MM, YYYY-MM-DDTHH:MM[:SS] (both in the company's zone) or RFC 3339 with an offset";

/// A [`TypedTime`] (a clap value parser: the error says what was expected).
pub(crate) fn parse_typed_time(s: &str) -> Result<TypedTime, String> {
    let expected = || format!("expected {TYPED_TIME_FORMS}");
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit() || b == b':');
    if s.len() <= 8 && digits(s) {
        // `%H:%M` or `%H:%M:%S`, exactly two digits each (chrono alone takes `8:5`).
        let exact = (s.len() == 5 || s.len() == 8) && s.bytes().enumerate().all(|(i, b)| (i % 3 == 2) == (b == b':'));
        let fmt = if s.len() == 5 { "%H:%M" } else { "%H:%M:%S" };
        return match exact.then(|| chrono::NaiveTime::parse_from_str(s, fmt).ok()).flatten() {
            Some(t) => Ok(TypedTime::Clock(t)),
            None => Err(expected()),
        };
    }
    if let Some((day, time)) = s.split_once('T') {
        let offset = time.ends_with(['Z', 'z']) || time.contains(['+', '-']);
        if !offset {
            let day = parse_day(day).map_err(|_| expected())?;
            let TypedTime::Clock(t) = parse_typed_time(time)? else {
                return Err(expected());
            };
            // The work day may fall a day either side in UTC: keep both inside the years too.
            let inside = |d: Option<NaiveDate>| d.is_some_and(|d| YEARS.contains(&d.year()));
            if !inside(day.pred_opt()) || !inside(day.succ_opt()) {
                return Err("out of range: a day at least a day inside the years 1000 to 9999".into());
            }
            return Ok(TypedTime::Local(day.and_time(t)));
        }
    }
    parse_instant(s)
        .map(TypedTime::Instant)
        .map_err(|e| if e.starts_with("expected") { expected() } else { e })
}

impl TypedTime {
    /// The instant, for a time that names its own day; `None` for `HH:MM`, which waits for the
    /// day the command takes (so that a bad local time is refused before any store is read).
    pub(crate) fn dated(self, tz: Tz) -> Option<Result<DateTime<Utc>, String>> {
        match self {
            TypedTime::Clock(_) => None,
            t => Some(t.instant(tz, NaiveDate::MIN)),
        }
    }

    /// The instant this names in `tz`, a wall-clock time taken on `day`; a local time the clocks
    /// skip or pass twice names none ([`local_instant`]).
    pub(crate) fn instant(self, tz: Tz, day: NaiveDate) -> Result<DateTime<Utc>, String> {
        match self {
            TypedTime::Instant(t) => Ok(t),
            TypedTime::Local(l) => local_instant(tz, l),
            TypedTime::Clock(t) => local_instant(tz, day.and_time(t)),
        }
    }
}

/// A number of minutes as people read it: `5 min`, `2 h`, `13 h 42 min`.
pub(crate) fn minutes_text(minutes: u32) -> String {
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m} min"),
        (h, 0) => format!("{h} h"),
        (h, m) => format!("{h} h {m} min"),
    }
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

    #[test]
    fn times_are_typed_as_clock_local_or_rfc3339() {
        let tz: Tz = "Europe/Paris".parse().unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 12, 1).unwrap();
        let at = |s: &str| parse_typed_time(s).unwrap().instant(tz, day).unwrap().to_rfc3339();
        assert_eq!(at("08:30"), "2026-12-01T07:30:00+00:00");
        assert_eq!(at("08:30:15"), "2026-12-01T07:30:15+00:00");
        assert_eq!(at("2026-11-30T08:30"), "2026-11-30T07:30:00+00:00");
        assert_eq!(at("2026-11-30T08:30:00"), "2026-11-30T07:30:00+00:00");
        assert_eq!(at("2026-11-30T08:30:00+01:00"), "2026-11-30T07:30:00+00:00");
        assert_eq!(at("2026-11-30T07:30:00Z"), "2026-11-30T07:30:00+00:00");
        for bad in [
            "8:30",
            "24:00",
            "08:61",
            "0830",
            "6pm",
            "2026-11-30 08:30",
            "2026-11-30T8:30",
            "2026-13-01T08:30",
            "",
        ] {
            let e = parse_typed_time(bad).unwrap_err();
            assert!(e.contains("HH:MM"), "{bad}: {e}");
        }
        let e = parse_typed_time("2027-03-28T02:30")
            .unwrap()
            .instant(tz, day)
            .unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
        let e = parse_typed_time("2026-10-25T02:30")
            .unwrap()
            .instant(tz, day)
            .unwrap_err();
        assert!(e.contains("happens twice"), "{e}");
    }

    #[test]
    fn minutes_read_as_hours_and_minutes() {
        assert_eq!(minutes_text(0), "0 min");
        assert_eq!(minutes_text(5), "5 min");
        assert_eq!(minutes_text(60), "1 h");
        assert_eq!(minutes_text(135), "2 h 15 min");
        assert_eq!(minutes_text(822), "13 h 42 min");
    }
}
