//! The work calendar: set or unset days, import a file of them, and list a range as it counts.
//! A day set or unset that is already settled is re-settled (`ops::settle::resettle`): everyone's row
//! of it, computed again by settle's rule.

use anyhow::Result;
use chrono::NaiveDate;
use serde::Serialize;

use super::Difference;
use crate::config::Config;
use crate::domain::day::workdays::{self, DayKind, Entry};
use crate::error::Error;
use crate::ops::settle::resettle::{self, Resettled, Scope, Whose};

/// Set days, all in one transaction, then re-settle those already settled. The entries are
/// already valid (parsed and checked).
pub(crate) fn set(cfg: &Config, entries: &[Entry]) -> Result<Resettled> {
    for e in entries {
        workdays::check_note(&e.note).map_err(Error::input)?;
    }
    let db = crate::mysql::Db::open(cfg)?;
    let lock = resettle::lock(&db)?;
    if let (Some(from), Some(to)) = (
        entries.iter().map(|e| e.date).min(),
        entries.iter().map(|e| e.date).max(),
    ) {
        crate::mysql::people::periods::refuse_closed(&mut db.conn()?, from, to, "calendar change")?;
    }
    crate::mysql::people::calendar_rows::upsert(&db, entries)?;
    let mut total = Resettled {
        reason: format!("calendar: {} set", entries.len()),
        ..Resettled::default()
    };
    for e in entries {
        let reason = format!("calendar {} set to {}", e.date, e.kind.as_str());
        total.add(resettle::resettle(cfg, &db, &lock, day(e.date), &reason)?);
    }
    Ok(total)
}

/// Remove a day's entry (it counts by the policy's week again), then re-settle it if it is
/// settled. `None`: the day had no entry (nothing written).
pub(crate) fn unset(cfg: &Config, date: NaiveDate) -> Result<Option<(DayKind, Resettled)>> {
    let db = crate::mysql::Db::open(cfg)?;
    let lock = resettle::lock(&db)?;
    crate::mysql::people::periods::refuse_closed(&mut db.conn()?, date, date, "calendar change")?;
    let Some(was) = crate::mysql::people::calendar_rows::remove(&db, date)? else {
        return Ok(None);
    };
    let reason = format!("calendar {date} unset (was {})", was.as_str());
    Ok(Some((was, resettle::resettle(cfg, &db, &lock, day(date), &reason)?)))
}

/// Everyone's rows of one day.
fn day(date: NaiveDate) -> Scope<'static> {
    Scope {
        from: date,
        to: date,
        whose: Whose::Everyone,
    }
}

/// What importing one entry would do to the calendar.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Planned {
    pub date: NaiveDate,
    pub kind: DayKind,
    pub note: String,
    /// New (no entry for that day yet), changed (its kind or note differs) or unchanged.
    pub change: Difference,
    /// The entry's kind now, if it has one.
    pub was: Option<DayKind>,
}

/// What [`set`] would do with these entries, read in one query; nothing is written.
pub(crate) fn plan(cfg: &Config, entries: &[Entry]) -> Result<Vec<Planned>> {
    for e in entries {
        workdays::check_note(&e.note).map_err(Error::input)?;
    }
    let (Some(from), Some(to)) = (
        entries.iter().map(|e| e.date).min(),
        entries.iter().map(|e| e.date).max(),
    ) else {
        return Ok(Vec::new());
    };
    let db = crate::mysql::Db::open(cfg)?;
    let now = crate::mysql::people::calendar_rows::overrides(&mut db.conn()?, from, to)?;
    Ok(entries
        .iter()
        .map(|e| {
            let old = now.get(&e.date);
            Planned {
                date: e.date,
                kind: e.kind,
                note: e.note.clone(),
                change: match old {
                    None => Difference::New,
                    Some(o) if o.kind == e.kind && o.note == e.note => Difference::Unchanged,
                    Some(_) => Difference::Changed,
                },
                was: old.map(|o| o.kind),
            }
        })
        .collect())
}

/// How a day of the calendar counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Counts {
    /// A work day.
    Workday,
    /// Off by a calendar entry.
    Holiday,
    /// Off in the policy's week: the word settle writes for such a day.
    RestDay,
}

impl Counts {
    /// The word `--json` and the text lines use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Counts::Workday => "workday",
            Counts::Holiday => "holiday",
            Counts::RestDay => "rest_day",
        }
    }
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What decides how a day counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum CountedBy {
    /// An entry of the calendar.
    Calendar,
    /// The policy's week.
    Policy,
}

impl CountedBy {
    /// The word `--json` and the text lines use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CountedBy::Calendar => "calendar",
            CountedBy::Policy => "policy",
        }
    }
}

impl std::fmt::Display for CountedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One day of a range, as it counts.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Day {
    pub date: NaiveDate,
    /// `Mon` to `Sun`.
    pub weekday: String,
    pub kind: Counts,
    pub source: CountedBy,
    pub note: String,
}

/// Every day from `from` to `to` (at most ten years), each with its kind and where it comes from.
pub(crate) fn list(cfg: &Config, from: NaiveDate, to: NaiveDate) -> Result<Vec<Day>> {
    if to < from || (to - from).num_days() > 3_660 {
        return Err(Error::input("--to must be on or after --from, at most ten years later").into());
    }
    let db = crate::mysql::Db::open(cfg)?;
    let overrides = crate::mysql::people::calendar_rows::overrides(&mut db.conn()?, from, to)?;
    // Each day's work days are the rulebook's version in force on it.
    let rules = crate::ops::lookup::rules_from(cfg, &db)?;
    let policies = from
        .iter_days()
        .take_while(|d| *d <= to)
        .map(|d| rules.on(d))
        .collect::<Result<Vec<_>>>()?;
    Ok(from
        .iter_days()
        .take_while(|d| *d <= to)
        .zip(policies)
        .map(|(d, policy)| {
            let entry = overrides.get(&d);
            Day {
                date: d,
                weekday: d.format("%a").to_string(),
                kind: match (workdays::is_workday(&policy, &overrides, d), entry) {
                    (true, _) => Counts::Workday,
                    (false, Some(_)) => Counts::Holiday,
                    (false, None) => Counts::RestDay,
                },
                source: if entry.is_some() {
                    CountedBy::Calendar
                } else {
                    CountedBy::Policy
                },
                note: entry.map_or_else(String::new, |e| e.note.clone()),
            }
        })
        .collect())
}
