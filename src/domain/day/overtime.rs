//! Overtime by the company's rules (the rulebook's `policy.overtime_*` keys, docs/policy.md):
//! which of a day's worked minutes are overtime, how they are rounded, which week they add up
//! in, whether a rest day's or holiday's minutes are a bucket of their own, and whether any of
//! it counts before the supervisor or HR approves it. Pure: the day model (`worked`) measures
//! the minutes, the readers of a period (month sheet, payroll) feed their rows here.
//!
//! The order, for one day: the daily threshold splits a work day's minutes into regular and
//! overtime; the week adds the regular minutes past its threshold; the day's overtime is
//! rounded down to the step, then one under the minimum counts 0; with approval on, the day's
//! overtime (and its rest-day minutes) counts only once approved, and is pending until then.
//! The defaults keep a company that sets nothing where it was: every minute past the shift's
//! scheduled time, every minute of a rest day or holiday, no week, no rounding, no approval.

use std::collections::HashMap;

use chrono::{Datelike, Days, NaiveDate};

/// Where a work day's overtime starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DailyAfter {
    /// After the shift's scheduled working time and this many minutes more (`shift`, `shift+30`).
    Shift(u32),
    /// After this many worked minutes, whatever the shift (`600`).
    Minutes(u32),
    /// No daily overtime (a company that counts by the week only): `none`.
    Never,
}

/// The longest threshold of a day, and of a week, in minutes.
const DAY_MINUTES: u32 = 24 * 60;
const WEEK_MINUTES: u32 = 7 * DAY_MINUTES;

impl DailyAfter {
    /// `shift`, `shift+N`, `N` (minutes, up to a day) or `none`.
    pub fn parse(s: &str) -> Result<DailyAfter, String> {
        let expected = || "shift, shift+MINUTES, MINUTES (up to 1440) or none".to_string();
        let minutes = |n: &str| {
            n.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n <= DAY_MINUTES)
                .ok_or_else(expected)
        };
        match s.trim() {
            "none" => Ok(DailyAfter::Never),
            "shift" => Ok(DailyAfter::Shift(0)),
            s => match s.strip_prefix("shift+") {
                Some(n) => minutes(n).map(DailyAfter::Shift),
                None => minutes(s).map(DailyAfter::Minutes),
            },
        }
    }

    /// As [`DailyAfter::parse`] reads it.
    pub fn text(self) -> String {
        match self {
            DailyAfter::Shift(0) => "shift".into(),
            DailyAfter::Shift(n) => format!("shift+{n}"),
            DailyAfter::Minutes(n) => n.to_string(),
            DailyAfter::Never => "none".into(),
        }
    }
}

/// `none` or a number of minutes in a week (1 to 10080), for `policy.overtime_weekly_after`.
pub(crate) fn parse_weekly(s: &str) -> Result<Option<u32>, String> {
    match s.trim() {
        "none" => Ok(None),
        n => n
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=WEEK_MINUTES).contains(n))
            .map(Some)
            .ok_or_else(|| format!("none or minutes from 1 to {WEEK_MINUTES}")),
    }
}

/// The overtime rules of one day (part of its [`Policy`](super::policy::Policy)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OvertimeRules {
    pub daily_after: DailyAfter,
    /// Minutes of regular work in a Monday-Sunday week past which further minutes are overtime.
    pub weekly_after: Option<u32>,
    /// A day's overtime is rounded down to a multiple of this (1: not rounded).
    pub round_minutes: u32,
    /// A day's overtime (once rounded) under this counts 0.
    pub minimum_minutes: u32,
    /// A rest day's or holiday's worked minutes go to a bucket of their own instead of overtime.
    pub rest_days_apart: bool,
    /// Overtime counts only once approved (`attendance overtime approve`).
    pub needs_approval: bool,
}

impl Default for OvertimeRules {
    fn default() -> Self {
        OvertimeRules {
            daily_after: DailyAfter::Shift(0),
            weekly_after: None,
            round_minutes: 1,
            minimum_minutes: 0,
            rest_days_apart: false,
            needs_approval: false,
        }
    }
}

/// A day's minutes as the rules split them, before its week is known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Split {
    pub worked: u32,
    /// Past the daily threshold (on a rest day or holiday not counted apart: every minute),
    /// not yet rounded.
    pub daily: u32,
    /// A work day's minutes up to the daily threshold: what the week adds up.
    pub regular: u32,
    /// A rest day's or holiday's minutes, when counted apart.
    pub rest_day: u32,
}

/// A decision on a day's overtime (`overtime_decisions`, the latest of a day stands).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Approved,
    Rejected,
}

impl Decision {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Decision::Approved => "approved",
            Decision::Rejected => "rejected",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Decision> {
        [Decision::Approved, Decision::Rejected]
            .into_iter()
            .find(|d| d.as_str() == s)
    }
}

/// What a day counts, in whole minutes: worked, overtime, rest-day minutes apart, and overtime
/// (with rest-day minutes) waiting for approval, which counts 0 until approved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Hours {
    pub worked: u32,
    pub overtime: u32,
    pub rest_day: u32,
    pub pending: u32,
}

impl std::ops::AddAssign for Hours {
    fn add_assign(&mut self, o: Hours) {
        self.worked += o.worked;
        self.overtime += o.overtime;
        self.rest_day += o.rest_day;
        self.pending += o.pending;
    }
}

impl OvertimeRules {
    /// Split `worked` minutes of a day due `scheduled` minutes; `workday`: false on a rest day
    /// or a holiday, whose minutes are all extra.
    pub(crate) fn split(&self, worked: u32, scheduled: u32, workday: bool) -> Split {
        if !workday {
            let (daily, rest_day) = if self.rest_days_apart { (0, worked) } else { (worked, 0) };
            return Split {
                worked,
                daily,
                regular: 0,
                rest_day,
            };
        }
        let threshold = match self.daily_after {
            DailyAfter::Shift(n) => scheduled.saturating_add(n),
            DailyAfter::Minutes(n) => n,
            DailyAfter::Never => u32::MAX,
        };
        let daily = worked.saturating_sub(threshold);
        Split {
            worked,
            daily,
            regular: worked - daily,
            rest_day: 0,
        }
    }

    /// `raw` minutes of overtime as they count: rounded down to the step, then 0 under the minimum.
    pub(crate) fn rounded(&self, raw: u32) -> u32 {
        let r = raw - raw % self.round_minutes.max(1);
        if r < self.minimum_minutes {
            0
        } else {
            r
        }
    }

    /// What a day counts: its split, the minutes its week added past the weekly threshold
    /// (`weekly`), and the decision on it, if any.
    pub(crate) fn count(&self, s: Split, weekly: u32, decision: Option<Decision>) -> Hours {
        let counted = Hours {
            worked: s.worked,
            overtime: self.rounded(s.daily + weekly),
            rest_day: s.rest_day,
            pending: 0,
        };
        if !self.needs_approval {
            return counted;
        }
        match decision {
            Some(Decision::Approved) => counted,
            Some(Decision::Rejected) => Hours {
                worked: s.worked,
                ..Hours::default()
            },
            None => Hours {
                worked: s.worked,
                pending: counted.overtime + counted.rest_day,
                ..Hours::default()
            },
        }
    }
}

/// The Monday of `date`'s week.
pub(crate) fn monday_of(date: NaiveDate) -> NaiveDate {
    date - Days::new(u64::from(date.weekday().num_days_from_monday()))
}

/// Each employee's regular minutes so far in the week, for the weekly threshold. A period's
/// rows are fed in date order from the Monday of its first week (the days before the period
/// add up, and count nowhere else); the minutes past the threshold are the overtime of the
/// day that crossed it and of every later day of the week.
#[derive(Debug, Default)]
pub(crate) struct Weeks {
    open: HashMap<String, (NaiveDate, u32)>,
}

impl Weeks {
    /// The minutes of `regular` on `employee`'s `date` past `after` in its week (0 without a
    /// weekly threshold), added to the week.
    pub(crate) fn past(&mut self, employee: &str, date: NaiveDate, regular: u32, after: Option<u32>) -> u32 {
        let monday = monday_of(date);
        let slot = match self.open.get_mut(employee) {
            Some(slot) => slot,
            None => self.open.entry(employee.to_string()).or_insert((monday, 0)),
        };
        if slot.0 != monday {
            *slot = (monday, 0);
        }
        let before = slot.1;
        slot.1 += regular;
        after.map_or(0, |a| slot.1.saturating_sub(a.max(before)))
    }
}

/// A period's days as they count: the week and the decisions, fed row by row (in date order).
pub(crate) struct Tally {
    weeks: Weeks,
    decisions: HashMap<(String, NaiveDate), Decision>,
}

impl Tally {
    pub(crate) fn new(decisions: HashMap<(String, NaiveDate), Decision>) -> Tally {
        Tally {
            weeks: Weeks::default(),
            decisions,
        }
    }

    /// What `employee`'s `date`, split as `s` by `rules` (those in force on it), counts.
    pub(crate) fn day(&mut self, rules: &OvertimeRules, employee: &str, date: NaiveDate, s: Split) -> Hours {
        let weekly = self.weeks.past(employee, date, s.regular, rules.weekly_after);
        let decision = if rules.needs_approval {
            self.decisions.get(&(employee.to_string(), date)).copied()
        } else {
            None
        };
        rules.count(s, weekly, decision)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn thresholds_read_and_print_as_the_rulebook_stores_them() {
        for s in ["shift", "shift+30", "600", "none"] {
            assert_eq!(DailyAfter::parse(s).unwrap().text(), s);
        }
        assert!(DailyAfter::parse("shift+").is_err());
        assert!(DailyAfter::parse("1441").is_err());
        assert_eq!(parse_weekly("2400"), Ok(Some(2400)));
        assert_eq!(parse_weekly("none"), Ok(None));
        assert!(parse_weekly("0").is_err() && parse_weekly("10081").is_err());
    }

    #[test]
    fn the_defaults_count_every_minute_past_the_shift_and_every_rest_day_minute() {
        let r = OvertimeRules::default();
        let h = |w, s, wd| r.count(r.split(w, s, wd), 0, None);
        assert_eq!(h(515, 480, true).overtime, 35);
        assert_eq!(h(470, 480, true).overtime, 0);
        assert_eq!(h(180, 0, false).overtime, 180);
    }

    #[test]
    fn a_daily_threshold_rounding_and_a_minimum_shape_a_days_overtime() {
        let r = OvertimeRules {
            daily_after: DailyAfter::Shift(10),
            round_minutes: 15,
            minimum_minutes: 30,
            ..OvertimeRules::default()
        };
        let ot = |w| r.count(r.split(w, 480, true), 0, None).overtime;
        // 35 past the shift, 25 past the threshold: rounded 15, under the minimum.
        assert_eq!(ot(515), 0);
        assert_eq!(ot(534), 30, "44 rounds down to 30");
        assert_eq!(ot(550), 60);
        let fixed = OvertimeRules {
            daily_after: DailyAfter::Minutes(300),
            ..OvertimeRules::default()
        };
        assert_eq!(fixed.split(360, 240, true).daily, 60);
        assert_eq!(
            fixed.split(280, 240, true).daily,
            0,
            "a part-timer's fifth hour is under 300"
        );
    }

    #[test]
    fn the_week_adds_regular_minutes_and_the_crossing_day_takes_the_excess() {
        let r = OvertimeRules {
            daily_after: DailyAfter::Never,
            weekly_after: Some(1000),
            ..OvertimeRules::default()
        };
        let mut t = Tally::new(HashMap::new());
        let mut day = |date: &str, w| t.day(&r, "E", d(date), r.split(w, 480, true)).overtime;
        // Monday 2026-11-16 and the next days: 480, 480, then 100 past 1000.
        assert_eq!(day("2026-11-16", 480), 0);
        assert_eq!(day("2026-11-17", 480), 0);
        assert_eq!(day("2026-11-18", 140), 100);
        assert_eq!(day("2026-11-19", 60), 60);
        // A new week starts from nothing.
        assert_eq!(day("2026-11-23", 480), 0);
    }

    #[test]
    fn with_approval_overtime_is_pending_until_approved_and_nothing_once_rejected() {
        let r = OvertimeRules {
            needs_approval: true,
            rest_days_apart: true,
            ..OvertimeRules::default()
        };
        let s = r.split(540, 480, true);
        assert_eq!(
            r.count(s, 0, None),
            Hours {
                worked: 540,
                overtime: 0,
                rest_day: 0,
                pending: 60
            }
        );
        assert_eq!(r.count(s, 0, Some(Decision::Approved)).overtime, 60);
        assert_eq!(
            r.count(s, 0, Some(Decision::Rejected)),
            Hours {
                worked: 540,
                ..Hours::default()
            }
        );
        let rest = r.split(200, 0, false);
        assert_eq!((rest.daily, rest.rest_day), (0, 200));
        assert_eq!(r.count(rest, 0, None).pending, 200);
        assert_eq!(r.count(rest, 0, Some(Decision::Approved)).rest_day, 200);
    }
}
