//! Hours worked and overtime of a settled day, from its first check-in and last check-out.
//!
//! The rule (docs/reports.md, "Hours and overtime"): the span is last out minus first in. The
//! break (`policy.break_minutes`) is a window of that length centred on the middle of the
//! shift (with 09:00-18:00 and 60 minutes: 13:00-14:00, local time); only the part of the
//! window that the span covers is taken off, so a morning that ends at 12:00 keeps its hours
//! whole and a day that leaves at 13:30 loses 30 minutes. Worked minutes are whole minutes,
//! rounded down. Overtime is what a work day's worked minutes exceed the shift's own
//! (`checkout_from - checkin_deadline - break`, 480 minutes by default); on a rest day or a
//! holiday every worked minute is overtime. A day without both punches (missing check-in or
//! check-out, absent, on leave) has no hours.

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;

use crate::domain::day::policy::{day_start, local_offset_secs, Policy};

/// A day's hours, in whole minutes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Hours {
    pub worked: u32,
    pub overtime: u32,
}

impl std::ops::AddAssign for Hours {
    fn add_assign(&mut self, o: Hours) {
        self.worked += o.worked;
        self.overtime += o.overtime;
    }
}

/// The hours rule on one date: the break window and the shift's length, as instants.
#[derive(Debug, Clone, Copy)]
pub(crate) struct HoursRule {
    break_from: DateTime<Utc>,
    break_to: DateTime<Utc>,
    /// Minutes of a full shift, the break taken off.
    standard: u32,
}

impl HoursRule {
    pub(crate) fn new(policy: &Policy, tz: Tz, date: NaiveDate) -> HoursRule {
        let (a, b) = (policy.checkin_deadline, policy.checkout_from);
        let shift = (b - a).num_minutes().max(0);
        // A break longer than the shift would make every day's hours nothing: keep it inside.
        let brk = i64::from(policy.break_minutes).min(shift);
        let from = a + (b - a) / 2 - Duration::minutes(brk) / 2;
        let start = day_start(tz, date);
        let break_from = start + Duration::seconds(local_offset_secs(tz, date, from));
        HoursRule {
            break_from,
            break_to: break_from + Duration::minutes(brk),
            standard: (shift - brk) as u32,
        }
    }

    /// The hours of a day whose first check-in and last check-out are `first_in` and
    /// `last_out` (UTC); `workday`: false on a rest day or holiday.
    pub(crate) fn day(&self, workday: bool, first_in: DateTime<Utc>, last_out: DateTime<Utc>) -> Hours {
        if last_out <= first_in {
            return Hours::default();
        }
        let overlap = (last_out.min(self.break_to) - first_in.max(self.break_from)).max(Duration::zero());
        let worked = ((last_out - first_in - overlap).num_seconds() / 60) as u32;
        Hours {
            worked,
            overtime: if workday {
                worked.saturating_sub(self.standard)
            } else {
                worked
            },
        }
    }
}

/// Hours of a stored row (UTC `DATETIME`s); none without both punches.
pub(crate) fn of_row(
    rule: &HoursRule,
    workday: bool,
    first_in: Option<NaiveDateTime>,
    last_out: Option<NaiveDateTime>,
) -> Hours {
    match (first_in, last_out) {
        (Some(i), Some(o)) => rule.day(workday, i.and_utc(), o.and_utc()),
        _ => Hours::default(),
    }
}

/// A count of minutes as people read it: `7 h 45 min`, `8 h`, `45 min`, `0 min`.
pub(crate) fn human(minutes: i64) -> String {
    let (sign, m) = if minutes < 0 { ("-", -minutes) } else { ("", minutes) };
    match (m / 60, m % 60) {
        (0, r) => format!("{sign}{r} min"),
        (h, 0) => format!("{sign}{h} h"),
        (h, r) => format!("{sign}{h} h {r} min"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(tz: Tz, s: &str) -> DateTime<Utc> {
        let t = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap();
        tz.from_local_datetime(&t).earliest().unwrap().with_timezone(&Utc)
    }

    #[test]
    fn the_break_comes_off_only_where_the_span_covers_it() {
        let tz = chrono_tz::Europe::Paris;
        let d = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let r = HoursRule::new(&Policy::default(), tz, d);
        let h = |a: &str, b: &str| {
            r.day(
                true,
                at(tz, &format!("2026-11-20 {a}")),
                at(tz, &format!("2026-11-20 {b}")),
            )
        };
        assert_eq!(
            h("09:00:00", "18:00:00"),
            Hours {
                worked: 480,
                overtime: 0
            }
        );
        assert_eq!(
            h("08:50:00", "18:05:00"),
            Hours {
                worked: 495,
                overtime: 15
            }
        );
        assert_eq!(
            h("08:00:00", "12:00:00"),
            Hours {
                worked: 240,
                overtime: 0
            },
            "a morning keeps its hours"
        );
        assert_eq!(
            h("09:00:00", "13:30:00"),
            Hours {
                worked: 240,
                overtime: 0
            },
            "half the break"
        );
        assert_eq!(h("13:15:00", "13:45:00"), Hours::default(), "all within the break");
        assert_eq!(
            h("09:00:00", "09:00:59"),
            Hours::default(),
            "rounded down to the minute"
        );
        assert_eq!(h("18:00:00", "09:00:00"), Hours::default(), "out before in");
        let rest = r.day(false, at(tz, "2026-11-20 10:00:00"), at(tz, "2026-11-20 12:00:00"));
        assert_eq!(
            rest,
            Hours {
                worked: 120,
                overtime: 120
            },
            "a rest day is all overtime"
        );
    }

    #[test]
    fn a_break_longer_than_the_shift_is_the_shift() {
        let p = Policy {
            checkin_deadline: chrono::NaiveTime::from_hms_opt(9, 0, 0).unwrap(),
            checkout_from: chrono::NaiveTime::from_hms_opt(10, 0, 0).unwrap(),
            break_minutes: 240,
            ..Policy::default()
        };
        let tz = chrono_tz::UTC;
        let r = HoursRule::new(&p, tz, NaiveDate::from_ymd_opt(2026, 11, 20).unwrap());
        let h = r.day(true, at(tz, "2026-11-20 08:00:00"), at(tz, "2026-11-20 11:00:00"));
        assert_eq!(
            h,
            Hours {
                worked: 120,
                overtime: 120
            }
        );
    }

    #[test]
    fn minutes_read_as_hours_and_minutes() {
        assert_eq!(human(465), "7 h 45 min");
        assert_eq!(human(480), "8 h");
        assert_eq!(human(45), "45 min");
        assert_eq!(human(0), "0 min");
    }
}
