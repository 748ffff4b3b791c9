//! A shift's clock on one date: where the day starts and where the shift's deadlines fall,
//! worked out once (`DayClock`), what the rules say of a punch at an instant (late, early, its
//! split: `PunchFacts`, `classify`), and what a whole day comes to for one employee
//! (`day_outcome`). The settings it reads are `day::policy`; the shift, `day::shift`.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;

use crate::domain::day::policy::{day_start, local_offset_secs, work_date, DayOutcome, DayStatus, Policy};
use crate::domain::day::shift::Shift;

/// What the rules say of one punch at one instant, before the punch script settles its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PunchFacts {
    /// The company-local date the punch belongs to.
    pub work_date: NaiveDate,
    /// Seconds since the start of `work_date` (the board stores these).
    pub secs: i64,
    /// Minutes late if this punch is a check-in (0 = on time).
    pub late_minutes_if_in: u32,
    /// Minutes early if this punch is a check-out (0 = not early).
    pub early_minutes_if_out: u32,
    /// The split of its shift's day, secs into `work_date`: without a kind, a punch before it
    /// is a check-in, at or after it a check-out.
    pub split: i64,
}

/// Minutes, rounded up, in a positive number of seconds.
fn minutes_up(secs: i64) -> u32 {
    ((secs.max(0) + 59) / 60) as u32
}

/// Late minutes of a check-in `secs` into `date`: counted from the deadline, once past the grace.
#[cfg(test)]
pub(crate) fn late_minutes(policy: &Policy, tz: Tz, date: NaiveDate, secs: i64) -> u32 {
    DayClock::new(policy, tz, date).late_minutes(secs)
}

/// Early minutes of a check-out `secs` into `date`: counted to the end of day, once past the grace.
#[cfg(test)]
pub(crate) fn early_minutes(policy: &Policy, tz: Tz, date: NaiveDate, secs: i64) -> u32 {
    DayClock::new(policy, tz, date).early_minutes(secs)
}

/// One work day's clock: where the day starts and where its deadlines fall, worked out once so
/// that a bulk check-in does not redo the time-zone arithmetic for every punch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DayClock {
    pub date: NaiveDate,
    pub start: DateTime<Utc>,
    /// The shift's start and end, secs into `date` (a night shift's end is past 86,400).
    pub(crate) deadline: i64,
    pub(crate) end: i64,
    late_grace: i64,
    early_grace: i64,
    pub(crate) split: i64,
}

impl DayClock {
    /// The clock of the company policy (the shift `default`).
    pub(crate) fn new(policy: &Policy, tz: Tz, date: NaiveDate) -> DayClock {
        DayClock::for_shift(&Shift::from_policy(policy), tz, date)
    }

    /// The clock of `shift` started on `date`: its end on the next date when it crosses
    /// midnight, every wall-clock time read in `tz` on its own date (DST included).
    pub(crate) fn for_shift(shift: &Shift, tz: Tz, date: NaiveDate) -> DayClock {
        let start = day_start(tz, date);
        let deadline = local_offset_secs(tz, date, shift.start);
        let end = if shift.crosses_midnight() {
            let next = date.succ_opt().unwrap_or(date);
            (day_start(tz, next) - start).num_seconds() + local_offset_secs(tz, next, shift.end)
        } else {
            local_offset_secs(tz, date, shift.end)
        };
        let split = match shift.split {
            Some(t) if !shift.crosses_midnight() => local_offset_secs(tz, date, t),
            _ => deadline + (end - deadline) / 2,
        };
        DayClock {
            date,
            start,
            deadline,
            end,
            late_grace: i64::from(shift.late_grace_minutes) * 60,
            early_grace: i64::from(shift.early_grace_minutes) * 60,
            split,
        }
    }

    /// The clock of the half of the day that is worked when the other is on leave: morning
    /// off, due at the split (the middle of the shift); afternoon off, done at the split.
    pub(crate) fn other_half(&self, morning_off: bool) -> DayClock {
        let mut c = *self;
        if morning_off {
            c.deadline = self.split;
        } else {
            c.end = self.split;
        }
        c
    }

    /// The instant the shift ends.
    pub(crate) fn ends_at(&self) -> DateTime<Utc> {
        self.start + Duration::seconds(self.end)
    }

    /// The instant the shift starts.
    pub(crate) fn starts_at(&self) -> DateTime<Utc> {
        self.start + Duration::seconds(self.deadline)
    }

    /// The facts of a punch at `at`, which must fall on this clock's date.
    pub(crate) fn facts(&self, at: DateTime<Utc>) -> PunchFacts {
        let secs = (at - self.start).num_seconds();
        PunchFacts {
            work_date: self.date,
            secs,
            late_minutes_if_in: self.late_minutes(secs),
            early_minutes_if_out: self.early_minutes(secs),
            split: self.split,
        }
    }

    /// Late minutes of a check-in `secs` into this clock's date: from the deadline, past the grace.
    pub(crate) fn late_minutes(&self, secs: i64) -> u32 {
        if secs > self.deadline + self.late_grace {
            minutes_up(secs - self.deadline)
        } else {
            0
        }
    }

    /// Early minutes of a check-out `secs` into this clock's date: to the end, past the grace.
    pub(crate) fn early_minutes(&self, secs: i64) -> u32 {
        if secs < self.end - self.early_grace {
            minutes_up(self.end - secs)
        } else {
            0
        }
    }
}

/// Classify a punch at `at` under the policy, in the company's zone.
pub(crate) fn classify(policy: &Policy, tz: Tz, at: DateTime<Utc>) -> PunchFacts {
    DayClock::new(policy, tz, work_date(tz, at)).facts(at)
}

/// The status of a day from its first check-in and last check-out (seconds into the day).
/// Punches win over leave: someone on leave who came in anyway is counted as they came.
#[cfg(test)]
pub(crate) fn day_outcome(
    policy: &Policy,
    tz: Tz,
    date: NaiveDate,
    workday: bool,
    on_leave: bool,
    first_in: Option<i64>,
    last_out: Option<i64>,
) -> DayOutcome {
    DayClock::new(policy, tz, date).outcome(workday, on_leave, first_in, last_out)
}

impl DayClock {
    /// The status and lateness of a day on this clock's date, without the time-zone
    /// arithmetic: the worked day (`day::worked`) asks it once per employee.
    pub(crate) fn outcome(
        &self,
        workday: bool,
        on_leave: bool,
        first_in: Option<i64>,
        last_out: Option<i64>,
    ) -> DayOutcome {
        let plain = |status| DayOutcome {
            status,
            late_minutes: 0,
            early_minutes: 0,
        };
        if !workday {
            return plain(DayStatus::RestDay);
        }
        let late = first_in.map_or(0, |s| self.late_minutes(s));
        let early = last_out.map_or(0, |s| self.early_minutes(s));
        let status = match (first_in, last_out) {
            (None, None) if on_leave => DayStatus::OnLeave,
            (None, None) => DayStatus::Absent,
            (Some(_), None) => DayStatus::MissingCheckout,
            (None, Some(_)) => DayStatus::MissingCheckin,
            (Some(_), Some(_)) => match (late > 0, early > 0) {
                (false, false) => DayStatus::Present,
                (true, false) => DayStatus::Late,
                (false, true) => DayStatus::EarlyLeave,
                (true, true) => DayStatus::LateAndEarly,
            },
        };
        DayOutcome {
            status,
            late_minutes: late,
            early_minutes: early,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::day::policy::instant;
    use chrono::NaiveTime;
    use proptest::prelude::*;

    fn p(grace: u32) -> Policy {
        Policy {
            grace_minutes: grace,
            ..Policy::default()
        }
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    #[test]
    fn late_after_deadline_plus_grace_counted_from_deadline() {
        let tz = chrono_tz::Europe::Paris;
        let f = classify(&p(5), tz, at("2026-11-30T09:04:00+01:00"));
        assert_eq!(f.late_minutes_if_in, 0);
        let f = classify(&p(5), tz, at("2026-11-30T09:06:00+01:00"));
        assert_eq!(f.late_minutes_if_in, 6);
        let f = classify(&p(0), tz, at("2026-11-30T09:00:00+01:00"));
        assert_eq!(f.late_minutes_if_in, 0, "09:00 sharp is on time");
        let f = classify(&p(0), tz, at("2026-11-30T09:00:01+01:00"));
        assert_eq!(f.late_minutes_if_in, 1);
    }

    #[test]
    fn early_before_end_minus_grace() {
        let tz = chrono_tz::Europe::Paris;
        assert_eq!(
            classify(&p(0), tz, at("2026-11-30T18:00:00+01:00")).early_minutes_if_out,
            0
        );
        assert_eq!(
            classify(&p(0), tz, at("2026-11-30T17:30:00+01:00")).early_minutes_if_out,
            30
        );
        assert_eq!(
            classify(&p(10), tz, at("2026-11-30T17:55:00+01:00")).early_minutes_if_out,
            0
        );
    }

    #[test]
    fn work_date_is_the_local_date_not_utc() {
        // 23:30 UTC on the 29th is 08:30 on the 30th in Tokyo.
        let tz = chrono_tz::Asia::Tokyo;
        let f = classify(&p(0), tz, at("2026-11-29T23:30:00Z"));
        assert_eq!(f.work_date, NaiveDate::from_ymd_opt(2026, 11, 30).unwrap());
        assert_eq!(f.secs, 8 * 3600 + 30 * 60);
        assert_eq!(f.late_minutes_if_in, 0);
    }

    #[test]
    fn dst_day_uses_wall_clock_deadline() {
        // 2026-03-29: Paris skips 02:00-03:00, so 09:00 is 8 h after midnight.
        let tz = chrono_tz::Europe::Paris;
        let d = NaiveDate::from_ymd_opt(2026, 3, 29).unwrap();
        assert_eq!(
            local_offset_secs(tz, d, NaiveTime::from_hms_opt(9, 0, 0).unwrap()),
            8 * 3600
        );
        let f = classify(&p(0), tz, at("2026-03-29T08:59:00+02:00"));
        assert_eq!(f.late_minutes_if_in, 0);
    }

    #[test]
    fn day_outcomes() {
        let tz = chrono_tz::UTC;
        let d = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap();
        let h = |x: i64| Some(x * 3600);
        let o = |w, l, i, out| day_outcome(&p(0), tz, d, w, l, i, out).status;
        assert_eq!(o(true, false, h(8), h(18)), DayStatus::Present);
        assert_eq!(o(true, false, h(10), h(18)), DayStatus::Late);
        assert_eq!(o(true, false, h(8), h(17)), DayStatus::EarlyLeave);
        assert_eq!(o(true, false, h(10), h(17)), DayStatus::LateAndEarly);
        assert_eq!(o(true, false, h(8), None), DayStatus::MissingCheckout);
        assert_eq!(o(true, false, None, h(18)), DayStatus::MissingCheckin);
        assert_eq!(o(true, false, None, None), DayStatus::Absent);
        assert_eq!(o(true, true, None, None), DayStatus::OnLeave);
        assert_eq!(o(false, false, None, None), DayStatus::RestDay);
        assert_eq!(o(false, false, h(8), h(18)), DayStatus::RestDay);
    }

    proptest! {
        #[test]
        fn a_punch_always_falls_on_its_local_date(secs in 1_600_000_000i64..1_900_000_000, tzi in 0usize..4) {
            let tz = [chrono_tz::UTC, chrono_tz::Asia::Tokyo, chrono_tz::America::Los_Angeles, chrono_tz::Pacific::Kiritimati][tzi];
            let t = DateTime::from_timestamp(secs, 0).unwrap();
            let f = classify(&Policy::default(), tz, t);
            prop_assert_eq!(f.work_date, t.with_timezone(&tz).date_naive());
            prop_assert!(f.secs >= 0 && f.secs < 25 * 3600);
            prop_assert_eq!(instant(tz, f.work_date, f.secs).with_timezone(&Utc), t);
        }

        #[test]
        fn late_grows_with_time_and_never_with_grace(a in 0i64..86_400, b in 0i64..86_400, g1 in 0u32..60, g2 in 0u32..60) {
            let tz = chrono_tz::Europe::Berlin;
            let d = NaiveDate::from_ymd_opt(2026, 6, 1).unwrap();
            let (lo, hi) = (a.min(b), a.max(b));
            prop_assert!(late_minutes(&p(g1), tz, d, lo) <= late_minutes(&p(g1), tz, d, hi));
            prop_assert!(early_minutes(&p(g1), tz, d, lo) >= early_minutes(&p(g1), tz, d, hi));
            let (gl, gh) = (g1.min(g2), g1.max(g2));
            prop_assert!(late_minutes(&p(gh), tz, d, a) <= late_minutes(&p(gl), tz, d, a));
            // A late check-in is never late by less than its grace.
            let l = late_minutes(&p(g1), tz, d, a);
            prop_assert!(l == 0 || l > g1);
        }

        #[test]
        fn the_day_clock_agrees_with_the_plain_rules(secs in 0i64..86_400, g in 0u32..30, tzi in 0usize..3) {
            let tz = [chrono_tz::Europe::Paris, chrono_tz::Asia::Tokyo, chrono_tz::America::New_York][tzi];
            let d = NaiveDate::from_ymd_opt(2026, 3, 29).unwrap();
            let f = DayClock::new(&p(g), tz, d).facts(day_start(tz, d) + Duration::seconds(secs));
            prop_assert_eq!(f.late_minutes_if_in, late_minutes(&p(g), tz, d, secs));
            prop_assert_eq!(f.early_minutes_if_out, early_minutes(&p(g), tz, d, secs));
        }

        #[test]
        fn a_day_with_both_punches_is_one_of_four(i in 0i64..86_400, o in 0i64..86_400) {
            let tz = chrono_tz::UTC;
            let d = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap();
            let out = day_outcome(&Policy::default(), tz, d, true, true, Some(i), Some(o));
            prop_assert!(matches!(out.status, DayStatus::Present | DayStatus::Late | DayStatus::EarlyLeave | DayStatus::LateAndEarly));
            prop_assert_eq!(out.late_minutes > 0, matches!(out.status, DayStatus::Late | DayStatus::LateAndEarly));
            prop_assert_eq!(out.early_minutes > 0, matches!(out.status, DayStatus::EarlyLeave | DayStatus::LateAndEarly));
        }
    }
}
