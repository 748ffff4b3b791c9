//! One named shift: its hours, grace, work days, break and split, the company policy's own
//! (`default`), and the week days as a shift file spells them. Who follows which shift from
//! when is `day::shifts`; a shift's clock on a date is `day::shift_clock`.

use chrono::{Datelike, NaiveDate, NaiveTime, Weekday};
use serde::{Deserialize, Serialize};

use crate::domain::day::policy::Policy;

/// The shift everyone follows when nothing else is assigned: the company policy of today.
pub(crate) const DEFAULT_SHIFT: &str = "default";

/// One named shift.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Shift {
    pub(crate) name: String,
    pub(crate) start: NaiveTime,
    pub(crate) end: NaiveTime,
    pub(crate) late_grace_minutes: u32,
    pub(crate) early_grace_minutes: u32,
    pub(crate) work_days: Vec<Weekday>,
    pub(crate) break_minutes: u32,
    pub(crate) part_time: bool,
    /// The split for a punch without a kind; `None`: the middle of the shift. Only the
    /// default shift sets it (`policy.auto_kind_split`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) split: Option<NaiveTime>,
}

impl Shift {
    /// The shift `default`: the company policy.
    pub(crate) fn from_policy(policy: &Policy) -> Shift {
        Shift {
            name: DEFAULT_SHIFT.to_string(),
            start: policy.checkin_deadline,
            end: policy.checkout_from,
            late_grace_minutes: policy.grace_minutes,
            early_grace_minutes: policy.grace_minutes,
            work_days: policy.work_days.clone(),
            break_minutes: policy.break_minutes,
            part_time: false,
            split: Some(policy.auto_kind_split()),
        }
    }

    /// A shift whose end is not after its start ends on the next date.
    pub(crate) fn crosses_midnight(&self) -> bool {
        self.end <= self.start
    }

    /// Whether `date` is a work day of this shift by the week alone (the calendar may override).
    pub(crate) fn works_on(&self, date: NaiveDate) -> bool {
        self.work_days.contains(&date.weekday())
    }

    /// `mon,tue,...` as stored and as in the CSV.
    pub(crate) fn days_text(&self) -> String {
        days_text(&self.work_days)
    }
}

#[cfg(test)]
impl Shift {
    /// A shift for the tests: `HH:MM` times, work days as in the CSV, no grace, no break.
    pub(crate) fn sample(name: &str, start: &str, end: &str, days: &str) -> Shift {
        let t = |s: &str| NaiveTime::parse_from_str(s, "%H:%M").unwrap();
        Shift {
            name: name.into(),
            start: t(start),
            end: t(end),
            late_grace_minutes: 0,
            early_grace_minutes: 0,
            work_days: parse_days(days).unwrap(),
            break_minutes: 0,
            part_time: false,
            split: None,
        }
    }
}

/// Week days as `mon,tue,...`.
pub(crate) fn days_text(days: &[Weekday]) -> String {
    days.iter()
        .map(|d| d.to_string().to_lowercase())
        .collect::<Vec<_>>()
        .join(",")
}

/// `mon,tue` or `mon-fri` (or both: `mon-wed,sat`), each day at most once.
pub(crate) fn parse_days(s: &str) -> Result<Vec<Weekday>, String> {
    let mut days: Vec<Weekday> = Vec::new();
    let day = |d: &str| -> Result<Weekday, String> {
        d.trim()
            .parse()
            .map_err(|_| format!("'{d}' is not a day of the week (mon..sun)"))
    };
    for part in s.split([',', ' ', ';']).filter(|p| !p.trim().is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (mut d, b) = (day(a)?, day(b)?);
                loop {
                    if !days.contains(&d) {
                        days.push(d);
                    }
                    if d == b {
                        break;
                    }
                    d = d.succ();
                }
            }
            None => {
                let d = day(part)?;
                if !days.contains(&d) {
                    days.push(d);
                }
            }
        }
    }
    if days.is_empty() {
        return Err("no work day".into());
    }
    days.sort_by_key(|d| d.num_days_from_monday());
    Ok(days)
}
