//! The attendance rules as pure functions: which local day a punch belongs to, whether a
//! check-in is late or a check-out early, and what a whole day comes to for one employee.
//! No I/O here; unit and property tests pin the rules down.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, TimeZone, Utc, Weekday};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

/// The attendance rules of the company, in its own time zone: settings the configuration
/// fills in (`config/settable.rs`), defined here because every rule below reads them.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// A check-in after this local time (plus grace) is late.
    pub checkin_deadline: NaiveTime,
    /// A check-out before this local time (minus grace) is early.
    pub checkout_from: NaiveTime,
    /// Minutes of tolerance on both sides.
    pub grace_minutes: u32,
    /// Days of the week that are work days unless the calendar says otherwise.
    pub work_days: Vec<Weekday>,
    /// No longer used: an unlabelled punch's kind comes from its time alone
    /// ([`Policy::auto_kind_split`]). Still accepted, so that old config files keep working.
    pub repeat_window_minutes: u32,
    /// Without `--kind`, a punch before this local time is a check-in, at or after it a
    /// check-out. `None`: the midpoint of `checkin_deadline` and `checkout_from`.
    pub auto_kind_split: Option<NaiveTime>,
    /// How far in the future (clock skew between kiosk and server) a punch may be.
    pub max_future_skew_secs: u32,
    /// How far this host's clock may be from the Redis server's before its punches with an
    /// explicit time, and its settles, are refused (`domain::day::clock`).
    pub max_clock_skew_secs: u32,
    /// How many days before today a punch's work date may be: an older punch is refused, so a
    /// day stops changing a week after it (docs/durability.md).
    pub max_backdate_days: u32,
    /// How far before the server time at which it is recorded a punch may be and still apply
    /// at once: an older one needs a key that may replay offline punches, or it is held for
    /// review (`domain::day::review`).
    pub replay_window_minutes: u32,
    /// The unpaid break, in minutes, taken out of a day's hours where the day covers it
    /// (`domain::day::hours`).
    pub break_minutes: u32,
    /// Whether the running relay tells each department's supervisor who has not arrived
    /// (`domain::day::due`, docs/notifications.md#absence-alerts).
    pub absence_alerts: bool,
    /// Minutes after the check-in deadline at which the absence alert goes out; `None`: the
    /// grace (the moment a check-in becomes late).
    pub absence_alert_minutes: Option<u32>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            checkin_deadline: NaiveTime::from_hms_opt(9, 0, 0).expect("valid"),
            checkout_from: NaiveTime::from_hms_opt(18, 0, 0).expect("valid"),
            grace_minutes: 0,
            work_days: vec![Weekday::Mon, Weekday::Tue, Weekday::Wed, Weekday::Thu, Weekday::Fri],
            repeat_window_minutes: 30,
            auto_kind_split: None,
            max_future_skew_secs: 120,
            max_clock_skew_secs: 30,
            max_backdate_days: 7,
            replay_window_minutes: 15,
            break_minutes: 60,
            absence_alerts: true,
            absence_alert_minutes: None,
        }
    }
}

impl Policy {
    /// The local time that splits the day for a punch without a kind: before it a check-in,
    /// at or after it a check-out. Whatever order a day's punches arrive in, each gets the same
    /// kind (docs/commands.md, "How a punch without --kind is read").
    pub fn auto_kind_split(&self) -> NaiveTime {
        self.auto_kind_split.unwrap_or_else(|| {
            let (a, b) = (self.checkin_deadline, self.checkout_from);
            a + (b - a) / 2
        })
    }
}

/// The local midnight that starts `date` in `tz`, as an instant. On a DST change at midnight
/// (a day that starts at 01:00) the first instant of the day is taken.
pub fn day_start(tz: Tz, date: NaiveDate) -> DateTime<Utc> {
    let mut t = NaiveTime::MIN;
    loop {
        if let Some(dt) = tz.from_local_datetime(&date.and_time(t)).earliest() {
            return dt.with_timezone(&Utc);
        }
        // A local time that does not exist (skipped by DST): try a minute later.
        t += Duration::minutes(1);
    }
}

/// Seconds from the start of `date` to the local wall-clock `time` on it.
pub fn local_offset_secs(tz: Tz, date: NaiveDate, time: NaiveTime) -> i64 {
    let start = day_start(tz, date);
    let mut t = time;
    loop {
        if let Some(dt) = tz.from_local_datetime(&date.and_time(t)).earliest() {
            return (dt.with_timezone(&Utc) - start).num_seconds();
        }
        t += Duration::minutes(1);
    }
}

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
        DayClock::for_shift(&crate::domain::day::shifts::Shift::from_policy(policy), tz, date)
    }

    /// The clock of `shift` started on `date`: its end on the next date when it crosses
    /// midnight, every wall-clock time read in `tz` on its own date (DST included).
    pub(crate) fn for_shift(shift: &crate::domain::day::shifts::Shift, tz: Tz, date: NaiveDate) -> DayClock {
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

/// The company-local date of an instant.
pub(crate) fn work_date(tz: Tz, at: DateTime<Utc>) -> NaiveDate {
    at.with_timezone(&tz).date_naive()
}

/// Classify a punch at `at` under the policy, in the company's zone.
pub(crate) fn classify(policy: &Policy, tz: Tz, at: DateTime<Utc>) -> PunchFacts {
    DayClock::new(policy, tz, work_date(tz, at)).facts(at)
}

/// Which punch instants are accepted, as seen at `now`: none further in the future than the
/// clock skew, none on a work date more than `max_backdate_days` before today's (a day must
/// stop changing: settle has written it and `recover` reads its journal from its start).
#[derive(Debug, Clone, Copy)]
pub struct PunchWindow {
    pub now: DateTime<Utc>,
    pub tz: Tz,
    pub max_future_skew_secs: u32,
    pub max_backdate_days: u32,
}

impl PunchWindow {
    pub fn new(policy: &Policy, tz: Tz, now: DateTime<Utc>) -> PunchWindow {
        PunchWindow {
            now,
            tz,
            max_future_skew_secs: policy.max_future_skew_secs,
            max_backdate_days: policy.max_backdate_days,
        }
    }

    /// `Err(why)` for a punch the rules refuse.
    pub fn check(&self, at: DateTime<Utc>) -> Result<(), String> {
        let skew = self.max_future_skew_secs;
        if (at - self.now).num_seconds() > i64::from(skew) {
            return Err(format!(
                "punch at {} is in the future (now {}; at most {skew}s of clock skew allowed)",
                at.to_rfc3339(),
                self.now.to_rfc3339()
            ));
        }
        let (date, today) = (work_date(self.tz, at), work_date(self.tz, self.now));
        let days = (today - date).num_days();
        if days > i64::from(self.max_backdate_days) {
            return Err(format!(
                "punch at {} is {days} days old (work date {date}; at most {} days back, policy.max_backdate_days)",
                at.to_rfc3339(),
                self.max_backdate_days
            ));
        }
        Ok(())
    }
}

/// The instant `secs` into `date`, in the company's zone (for display and for MySQL).
pub(crate) fn instant(tz: Tz, date: NaiveDate, secs: i64) -> DateTime<Tz> {
    (day_start(tz, date) + Duration::seconds(secs)).with_timezone(&tz)
}

/// Whether `date` is a work day by the week alone (the calendar may override it).
pub fn is_policy_workday(policy: &Policy, date: NaiveDate) -> bool {
    policy.work_days.contains(&date.weekday())
}

/// What one employee's day comes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum DayStatus {
    Present,
    Late,
    EarlyLeave,
    LateAndEarly,
    MissingCheckout,
    MissingCheckin,
    Absent,
    OnLeave,
    RestDay,
    /// On leave for half the day, and at work as expected for the other half.
    HalfDayLeave,
    /// A day worked on a part-time shift.
    PartTime,
}

impl DayStatus {
    pub const ALL: [DayStatus; 11] = [
        DayStatus::Present,
        DayStatus::Late,
        DayStatus::EarlyLeave,
        DayStatus::LateAndEarly,
        DayStatus::MissingCheckout,
        DayStatus::MissingCheckin,
        DayStatus::Absent,
        DayStatus::OnLeave,
        DayStatus::RestDay,
        DayStatus::HalfDayLeave,
        DayStatus::PartTime,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DayStatus::Present => "present",
            DayStatus::Late => "late",
            DayStatus::EarlyLeave => "early_leave",
            DayStatus::LateAndEarly => "late_and_early",
            DayStatus::MissingCheckout => "missing_checkout",
            DayStatus::MissingCheckin => "missing_checkin",
            DayStatus::Absent => "absent",
            DayStatus::OnLeave => "on_leave",
            DayStatus::RestDay => "rest_day",
            DayStatus::HalfDayLeave => "half_day_leave",
            DayStatus::PartTime => "part_time",
        }
    }

    pub fn parse(s: &str) -> Option<DayStatus> {
        DayStatus::ALL.into_iter().find(|d| d.as_str() == s)
    }
}

impl std::fmt::Display for DayStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One employee's settled day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayOutcome {
    pub status: DayStatus,
    pub late_minutes: u32,
    pub early_minutes: u32,
}

/// The status of a day from its first check-in and last check-out (seconds into the day).
/// Punches win over leave: someone on leave who came in anyway is counted as they came.
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
    /// [`day_outcome`] on this clock's date, without the time-zone arithmetic: settle asks it
    /// once per employee.
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

    #[test]
    fn a_punch_window_refuses_the_future_and_days_past_the_backdate_limit() {
        let tz = chrono_tz::Asia::Tokyo;
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let w = PunchWindow::new(&Policy::default(), tz, at("2026-11-30T09:00:00+09:00"));
        assert!(w.check(at("2026-11-30T09:01:59+09:00")).is_ok());
        assert!(w.check(at("2026-11-30T09:02:01+09:00")).unwrap_err().contains("future"));
        // Seven days back is the limit, counted in local dates, whatever the hour.
        assert!(w.check(at("2026-11-23T00:00:00+09:00")).is_ok());
        let e = w.check(at("2026-11-22T23:59:59+09:00")).unwrap_err();
        assert!(e.contains("8 days old") && e.contains("max_backdate_days"), "{e}");
        let today_only = PunchWindow {
            max_backdate_days: 0,
            ..w
        };
        assert!(today_only.check(at("2026-11-30T00:00:00+09:00")).is_ok());
        assert!(today_only.check(at("2026-11-29T23:59:59+09:00")).is_err());
    }
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
