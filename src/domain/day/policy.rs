//! The attendance rules as pure functions: which local day a punch belongs to, whether a
//! check-in is late or a check-out early, and what a whole day comes to for one employee.
//! No I/O here; unit and property tests pin the rules down.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveTime, TimeZone, Utc, Weekday};
use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use crate::domain::day::overtime::OvertimeRules;

/// The attendance rules of the company on one day, in its own time zone: the rulebook's
/// version in force that day (`domain::day::rulebook`, its values checked by the key table,
/// `config/settable.rs`), defined here because every rule below reads them.
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
    /// (`domain::day::worked`).
    pub break_minutes: u32,
    /// Whether the running relay tells each department's supervisor who has not arrived
    /// (`domain::day::due`, docs/notifications.md#absence-alerts).
    pub absence_alerts: bool,
    /// Minutes after the check-in deadline at which the absence alert goes out; `None`: the
    /// grace (the moment a check-in becomes late).
    pub absence_alert_minutes: Option<u32>,
    /// How a day's overtime is counted (`domain::day::overtime`, the `policy.overtime_*` keys).
    pub overtime: OvertimeRules,
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
            overtime: OvertimeRules::default(),
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

/// The company-local date of an instant.
pub(crate) fn work_date(tz: Tz, at: DateTime<Utc>) -> NaiveDate {
    at.with_timezone(&tz).date_naive()
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

/// Until when (unix seconds) settle keeps a settled day's punches so that one sent again is a
/// repeat: past the last day [`PunchWindow`] accepts a punch on `date` (its calendar date, or
/// the day before for a night shift's small hours), with a day to spare for any zone.
pub(crate) fn repeats_kept_until(max_backdate_days: u32, date: NaiveDate) -> i64 {
    let last = date + chrono::Days::new(u64::from(max_backdate_days) + 3);
    last.and_hms_opt(0, 0, 0)
        .expect("midnight exists")
        .and_utc()
        .timestamp()
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
}
