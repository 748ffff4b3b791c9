//! The worked day: from the employee's shift on a date, the calendar, their leave and their
//! first check-in and last check-out, the day's status and its minutes (late, early, worked,
//! break, overtime). Settle, re-settle, corrections and every report read it; nothing else
//! computes a day. Employment is the caller's filter: outside it there is no day to judge.
//!
//! The rules (docs/reports.md, "Hours and overtime"):
//! - Every span is the difference of two instants, so a night across a DST change counts the
//!   minutes that really passed (7 h or 9 h for a 22:00-06:00 night in Europe).
//! - The shift's unpaid break is a window of its length centred on the middle of the shift
//!   (instants, not wall-clock); only the part of the window the span covers comes off.
//! - Worked minutes are whole minutes, rounded down. A day without both punches has none.
//! - The scheduled working time is the shift's end minus its start minus the break (the half
//!   that is worked on a half day of leave, less the part of the break inside it).
//! - Overtime is the rulebook's (`domain::day::overtime`): by default every minute past the
//!   scheduled working time on a work day, every worked minute on a rest day or a holiday. A
//!   day alone knows its daily rule; the week and approvals are counted by the readers of a
//!   period ([`Tally`](super::overtime::Tally)).

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;

use crate::domain::day::overtime::{Hours, OvertimeRules, Split};
use crate::domain::day::policy::{DayOutcome, DayStatus, Policy};
use crate::domain::day::shift::Shift;
use crate::domain::day::shift_clock::DayClock;
use crate::domain::day::shifts::Shifts;

/// Half a day of leave: which half is off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Half {
    Morning,
    Afternoon,
}

impl Half {
    /// `true`: the morning off (as `leave_rows::half_leave` gives it).
    pub(crate) fn of_morning(morning_off: bool) -> Half {
        if morning_off {
            Half::Morning
        } else {
            Half::Afternoon
        }
    }

    /// From the leave table's `half` column.
    pub(crate) fn parse(s: &str) -> Option<Half> {
        match s {
            "morning" => Some(Half::Morning),
            "afternoon" => Some(Half::Afternoon),
            _ => None,
        }
    }
}

/// Leave on the day: none, the whole day, or half of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Leave {
    #[default]
    None,
    Whole,
    Half(Half),
}

/// What is known of one employee's day besides their shift.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Facts {
    /// A work day by the calendar, or without a calendar entry by the shift's week.
    pub workday: bool,
    pub leave: Leave,
    pub first_in: Option<DateTime<Utc>>,
    pub last_out: Option<DateTime<Utc>>,
}

/// What a day comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WorkedDay {
    pub status: DayStatus,
    pub late_minutes: u32,
    pub early_minutes: u32,
    pub worked_minutes: u32,
    /// The part of the unpaid break the day covered (taken off its span).
    pub break_minutes: u32,
    pub overtime_minutes: u32,
    /// The working time the day was due (0 on a rest day or a holiday; a whole day of leave
    /// keeps it, so that a day on leave worked anyway counts as a day worked).
    pub scheduled_minutes: u32,
}

impl WorkedDay {
    /// The status and lateness, as a settled row stores them.
    pub(crate) fn outcome(&self) -> DayOutcome {
        DayOutcome {
            status: self.status,
            late_minutes: self.late_minutes,
            early_minutes: self.early_minutes,
        }
    }
}

/// One shift on one date: its clock, its break window and whether it is part time, worked out
/// once (the time-zone arithmetic) and then asked for every employee who follows it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ShiftDay {
    pub(crate) clock: DayClock,
    break_from: DateTime<Utc>,
    break_to: DateTime<Utc>,
    part_time: bool,
    rule: OvertimeRules,
}

/// Whole minutes in a span, rounded down; nothing when it is not positive.
fn minutes(d: Duration) -> u32 {
    (d.num_seconds().max(0) / 60) as u32
}

impl ShiftDay {
    pub(crate) fn new(shift: &Shift, tz: Tz, date: NaiveDate, rule: OvertimeRules) -> ShiftDay {
        let clock = DayClock::for_shift(shift, tz, date);
        let (a, b) = (clock.starts_at(), clock.ends_at());
        let length = (b - a).max(Duration::zero());
        // A break longer than the shift would make every day's hours nothing: keep it inside.
        let brk = Duration::minutes(i64::from(shift.break_minutes)).min(length);
        let break_from = a + length / 2 - brk / 2;
        ShiftDay {
            clock,
            break_from,
            break_to: break_from + brk,
            part_time: shift.part_time,
            rule,
        }
    }

    /// The part of the break window that `[from, to)` covers.
    fn break_within(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Duration {
        (to.min(self.break_to) - from.max(self.break_from)).max(Duration::zero())
    }

    /// The clock the day is judged by: the half that is worked on a half day of leave.
    fn clock_for(&self, leave: Leave) -> DayClock {
        match leave {
            Leave::Half(h) => self.clock.other_half(h == Half::Morning),
            _ => self.clock,
        }
    }

    /// The working time due on a day with `leave`: the clock's span less the break in it.
    fn scheduled(&self, workday: bool, leave: Leave) -> u32 {
        if !workday {
            return 0;
        }
        let c = self.clock_for(leave);
        let (a, b) = (c.starts_at(), c.ends_at());
        minutes(b - a - self.break_within(a, b))
    }

    /// The overtime rules of the day (the rulebook's in force on it).
    pub(crate) fn rules(&self) -> &OvertimeRules {
        &self.rule
    }

    /// The minutes of a day: (worked, break, scheduled) and the rules' split of them.
    fn minutes(
        &self,
        workday: bool,
        leave: Leave,
        first_in: Option<DateTime<Utc>>,
        last_out: Option<DateTime<Utc>>,
    ) -> (u32, u32, u32, Split) {
        let scheduled = self.scheduled(workday, leave);
        let (worked, brk) = match (first_in, last_out) {
            (Some(i), Some(o)) if o > i => {
                let brk = self.break_within(i, o);
                (minutes(o - i - brk), minutes(brk))
            }
            _ => (0, 0),
        };
        (worked, brk, scheduled, self.rule.split(worked, scheduled, workday))
    }

    /// The whole day: status, lateness and minutes. Punches win over leave: someone on leave
    /// who came in anyway is counted as they came; a half day of leave is judged on the other
    /// half; a part-time work day worked is a status of its own (its minutes still say how it
    /// went).
    pub(crate) fn judge(&self, f: &Facts) -> WorkedDay {
        let clock = self.clock_for(f.leave);
        let secs = |t: DateTime<Utc>| (t - clock.start).num_seconds();
        let mut o = clock.outcome(
            f.workday,
            f.leave == Leave::Whole,
            f.first_in.map(secs),
            f.last_out.map(secs),
        );
        if matches!(f.leave, Leave::Half(_)) && f.workday && o.status == DayStatus::Present {
            o.status = DayStatus::HalfDayLeave;
        }
        // A rest day or holiday worked stays one (its minutes are all extra), part time or not.
        if self.part_time && f.workday && f.first_in.is_some() && f.last_out.is_some() {
            o.status = DayStatus::PartTime;
        }
        let (worked, brk, scheduled, split) = self.minutes(f.workday, f.leave, f.first_in, f.last_out);
        // The day alone: its daily rule, rounded (the week and approval are a period's).
        let overtime = self.rule.rounded(split.daily);
        WorkedDay {
            status: o.status,
            late_minutes: o.late_minutes,
            early_minutes: o.early_minutes,
            worked_minutes: worked,
            break_minutes: brk,
            overtime_minutes: overtime,
            scheduled_minutes: scheduled,
        }
    }

    /// The minutes of a settled row as the rules split them, whose status (perhaps set by
    /// hand) is kept: a rest day's or holiday's row is not a work day.
    pub(crate) fn stored_split(
        &self,
        status: DayStatus,
        leave: Leave,
        fi: Option<NaiveDateTime>,
        lo: Option<NaiveDateTime>,
    ) -> Split {
        let workday = status != DayStatus::RestDay;
        self.minutes(workday, leave, fi.map(|t| t.and_utc()), lo.map(|t| t.and_utc()))
            .3
    }

    /// The hours of a settled row as the day alone counts them (its daily rule; no week, no
    /// approval): what a row of `report employee` shows.
    pub(crate) fn stored_hours(
        &self,
        status: DayStatus,
        leave: Leave,
        fi: Option<NaiveDateTime>,
        lo: Option<NaiveDateTime>,
    ) -> Hours {
        self.stored_day(status, leave, fi, lo).0
    }

    /// [`ShiftDay::stored_hours`], and the minutes of unpaid break the day's span covered.
    pub(crate) fn stored_day(
        &self,
        status: DayStatus,
        leave: Leave,
        fi: Option<NaiveDateTime>,
        lo: Option<NaiveDateTime>,
    ) -> (Hours, u32) {
        let workday = status != DayStatus::RestDay;
        let (_, brk, _, s) = self.minutes(workday, leave, fi.map(|t| t.and_utc()), lo.map(|t| t.and_utc()));
        let hours = Hours {
            worked: s.worked,
            overtime: self.rule.rounded(s.daily),
            rest_day: s.rest_day,
            pending: 0,
        };
        (hours, brk)
    }
}

/// Every shift's day, worked out once per shift and date and shared by the employees who
/// follow it: what a month of rows asks for millions of times. Each date is judged by the
/// policy in force on it (the rulebook's version): its overtime rule, and the default shift
/// of whoever has none assigned.
pub(crate) struct Days<'a> {
    shifts: &'a Shifts,
    tz: Tz,
    policy: &'a dyn Fn(NaiveDate) -> Policy,
    cache: HashMap<(&'a str, NaiveDate), ShiftDay>,
}

impl<'a> Days<'a> {
    pub(crate) fn new(shifts: &'a Shifts, tz: Tz, policy: &'a dyn Fn(NaiveDate) -> Policy) -> Days<'a> {
        Days {
            shifts,
            tz,
            policy,
            cache: HashMap::new(),
        }
    }

    /// The day of the shift `employee` of `department` follows on `date`, and that shift.
    pub(crate) fn of(&mut self, employee: &str, department: &str, date: NaiveDate) -> (&'a Shift, ShiftDay) {
        let shifts = self.shifts;
        let shift: &'a Shift = shifts.on(employee, department, date).0;
        let (tz, policy) = (self.tz, self.policy);
        let day = *self.cache.entry((shift.name.as_str(), date)).or_insert_with(|| {
            let p = policy(date);
            let rule = p.overtime;
            if std::ptr::eq(shift, &shifts.default) {
                ShiftDay::new(&Shift::from_policy(&p), tz, date, rule)
            } else {
                ShiftDay::new(shift, tz, date, rule)
            }
        });
        (shift, day)
    }
}

/// A count of minutes as people read it: `7 h 45 min`, `8 h`, `45 min`, `0 min`.
pub(crate) fn human(minutes: i64) -> String {
    let sign = if minutes < 0 { "-" } else { "" };
    let m = u32::try_from(minutes.unsigned_abs()).unwrap_or(u32::MAX);
    format!("{sign}{}", crate::domain::dates::minutes_text(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::day::shift::parse_days;
    use chrono::{NaiveTime, TimeZone};

    fn at(tz: Tz, s: &str) -> DateTime<Utc> {
        let t = NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M").unwrap();
        tz.from_local_datetime(&t).earliest().unwrap().with_timezone(&Utc)
    }

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn shift(start: &str, end: &str, brk: u32, part_time: bool) -> Shift {
        let t = |s: &str| NaiveTime::parse_from_str(s, "%H:%M").unwrap();
        Shift {
            name: format!("{start}-{end}"),
            start: t(start),
            end: t(end),
            late_grace_minutes: 0,
            early_grace_minutes: 0,
            work_days: parse_days("mon-sun").unwrap(),
            break_minutes: brk,
            part_time,
            split: None,
        }
    }

    /// The day of `s` on `date` in `tz`, punched at local `from` on `date` and `to` on `to_date`.
    fn day(s: &Shift, tz: Tz, date: &str, from: &str, to: (&str, &str), workday: bool, leave: Leave) -> WorkedDay {
        ShiftDay::new(s, tz, d(date), OvertimeRules::default()).judge(&Facts {
            workday,
            leave,
            first_in: Some(at(tz, &format!("{date} {from}"))),
            last_out: Some(at(tz, &format!("{} {}", to.0, to.1))),
        })
    }

    fn mins(w: &WorkedDay) -> (u32, u32, u32, u32) {
        (
            w.worked_minutes,
            w.break_minutes,
            w.overtime_minutes,
            w.scheduled_minutes,
        )
    }

    #[test]
    fn the_policys_day_takes_off_the_part_of_the_break_it_covers() {
        let tz = chrono_tz::Europe::Paris;
        let s = Shift::from_policy(&Policy::default());
        let h = |a: &str, b: &str| mins(&day(&s, tz, "2026-11-20", a, ("2026-11-20", b), true, Leave::None));
        assert_eq!(h("09:00", "18:00"), (480, 60, 0, 480));
        assert_eq!(h("08:50", "18:05"), (495, 60, 15, 480));
        assert_eq!(h("08:00", "12:00"), (240, 0, 0, 480), "a morning keeps its hours");
        assert_eq!(h("09:00", "13:30"), (240, 30, 0, 480), "half the break");
        assert_eq!(h("13:15", "13:45").0, 0, "all within the break");
        assert_eq!(h("18:00", "09:00").0, 0, "out before in");
        let rest = day(
            &s,
            tz,
            "2026-11-21",
            "10:00",
            ("2026-11-21", "12:00"),
            false,
            Leave::None,
        );
        assert_eq!(
            (rest.status, mins(&rest)),
            (DayStatus::RestDay, (120, 0, 120, 0)),
            "a rest day is all overtime"
        );
    }

    #[test]
    fn a_night_across_the_clock_change_counts_the_minutes_that_passed() {
        let tz = chrono_tz::Europe::Berlin;
        let night = shift("22:00", "06:00", 30, false);
        // 2025-10-25 22:00 CEST to 10-26 06:00 CET: nine hours, less the break.
        let w = day(
            &night,
            tz,
            "2025-10-25",
            "22:00",
            ("2025-10-26", "06:00"),
            true,
            Leave::None,
        );
        assert_eq!((w.status, mins(&w)), (DayStatus::Present, (510, 30, 0, 510)));
        // 2025-03-29 22:00 CET to 03-30 06:00 CEST: seven hours.
        let w = day(
            &night,
            tz,
            "2025-03-29",
            "22:00",
            ("2025-03-30", "06:15"),
            true,
            Leave::None,
        );
        assert_eq!((w.status, mins(&w)), (DayStatus::Present, (405, 30, 15, 390)));
        // An ordinary night on a holiday: its break still comes off, the rest is overtime.
        let w = day(
            &night,
            tz,
            "2025-11-01",
            "22:00",
            ("2025-11-02", "06:00"),
            false,
            Leave::None,
        );
        assert_eq!((w.status, mins(&w)), (DayStatus::RestDay, (450, 30, 450, 0)));
    }

    #[test]
    fn a_part_timers_hour_past_the_shift_is_overtime() {
        let tz = chrono_tz::Europe::Berlin;
        let part = shift("09:00", "13:00", 0, true);
        let w = day(
            &part,
            tz,
            "2025-10-20",
            "09:00",
            ("2025-10-20", "14:00"),
            true,
            Leave::None,
        );
        assert_eq!((w.status, mins(&w)), (DayStatus::PartTime, (300, 0, 60, 240)));
        // A part-timer's Saturday worked is a rest day's: all extra, not a part-time work day
        // (whose minutes would count toward the week as regular ones).
        let w = day(
            &part,
            tz,
            "2025-10-25",
            "10:00",
            ("2025-10-25", "12:00"),
            false,
            Leave::None,
        );
        assert_eq!((w.status, mins(&w)), (DayStatus::RestDay, (120, 0, 120, 0)));
    }

    #[test]
    fn a_half_day_of_leave_is_due_and_judged_on_the_other_half() {
        let tz = chrono_tz::Europe::Berlin;
        let s = Shift::from_policy(&Policy::default());
        let off = Leave::Half(Half::Morning);
        // Due 13:30-18:00 less the half of the break in it: 240.
        let w = day(&s, tz, "2025-10-20", "13:30", ("2025-10-20", "18:00"), true, off);
        assert_eq!((w.status, mins(&w)), (DayStatus::HalfDayLeave, (240, 30, 0, 240)));
        let w = day(&s, tz, "2025-10-20", "13:40", ("2025-10-20", "18:30"), true, off);
        assert_eq!(
            (w.status, w.late_minutes, mins(&w)),
            (DayStatus::Late, 10, (270, 20, 30, 240))
        );
        let w = day(
            &s,
            tz,
            "2025-10-20",
            "09:00",
            ("2025-10-20", "13:30"),
            true,
            Leave::Half(Half::Afternoon),
        );
        assert_eq!((w.status, mins(&w)), (DayStatus::HalfDayLeave, (240, 30, 0, 240)));
    }

    #[test]
    fn leave_absence_and_missing_punches_have_no_hours() {
        let tz = chrono_tz::UTC;
        let s = ShiftDay::new(
            &Shift::from_policy(&Policy::default()),
            tz,
            d("2026-11-20"),
            OvertimeRules::default(),
        );
        let f = |leave, first_in| Facts {
            workday: true,
            leave,
            first_in,
            last_out: None,
        };
        let w = s.judge(&f(Leave::Whole, None));
        assert_eq!((w.status, mins(&w)), (DayStatus::OnLeave, (0, 0, 0, 480)));
        let w = s.judge(&f(Leave::None, None));
        assert_eq!((w.status, mins(&w)), (DayStatus::Absent, (0, 0, 0, 480)));
        let w = s.judge(&f(Leave::None, Some(at(tz, "2026-11-20 09:00"))));
        assert_eq!((w.status, mins(&w)), (DayStatus::MissingCheckout, (0, 0, 0, 480)));
    }

    #[test]
    fn a_break_longer_than_the_shift_is_the_shift() {
        let tz = chrono_tz::UTC;
        let s = shift("09:00", "10:00", 240, false);
        let w = day(
            &s,
            tz,
            "2026-11-20",
            "08:00",
            ("2026-11-20", "11:00"),
            true,
            Leave::None,
        );
        assert_eq!(mins(&w), (120, 60, 120, 0));
    }

    #[test]
    fn the_default_shift_judges_as_the_policys_clock() {
        let tz = chrono_tz::Europe::Paris;
        let p = Policy {
            grace_minutes: 5,
            ..Policy::default()
        };
        let date = d("2026-11-20");
        let s = ShiftDay::new(&Shift::from_policy(&p), tz, date, p.overtime);
        let clock = DayClock::new(&p, tz, date);
        for (i, o) in [
            (8 * 3600, 18 * 3600),
            (9 * 3600 + 400, 17 * 3600),
            (10 * 3600, 11 * 3600),
        ] {
            let w = s.judge(&Facts {
                workday: true,
                leave: Leave::None,
                first_in: Some(clock.start + Duration::seconds(i)),
                last_out: Some(clock.start + Duration::seconds(o)),
            });
            assert_eq!(w.outcome(), clock.outcome(true, false, Some(i), Some(o)));
        }
    }

    #[test]
    fn minutes_read_as_hours_and_minutes_with_a_sign() {
        assert_eq!(human(465), "7 h 45 min");
        assert_eq!(human(-45), "-45 min");
    }
}
