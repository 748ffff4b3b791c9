//! Work patterns: import shifts, assign them, list them, and say which applies to an employee
//! on a date and why. MySQL holds the table; every change rewrites its Redis copy, which the
//! punch path reads (`redis/copies/shift_copy.rs`). A change that reaches settled days re-settles them
//! in its own transaction (`ops::people::shift_changes`), under settle's lock.

use anyhow::Result;
use chrono::NaiveDate;
use serde::Serialize;

use super::Difference;
use crate::config::Config;
use crate::domain::day::shift::Shift;
use crate::domain::day::shift_changes::{assignments_of, differences};
use crate::domain::day::shifts::{Assignment, Scope, Shifts, Source};
use crate::domain::text::plural;
use crate::error::Error;
use crate::mysql::people::shift_rows;
use crate::mysql::Db;
use crate::ops::people::shift_changes::{self, Span};
use crate::ops::settle::resettle::{self, Resettled};
use crate::redis::board::Board;

/// What an import or an assignment did (or with `--dry-run` would do) to one row.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Change<T: Serialize> {
    pub change: Difference,
    #[serde(flatten)]
    pub row: T,
}

/// An import's or an assignment's report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Report<T: Serialize> {
    pub dry_run: bool,
    pub new: usize,
    pub changed: usize,
    pub unchanged: usize,
    pub rows: Vec<Change<T>>,
    /// The settled rows the change re-settled (with `--dry-run`: would re-settle).
    pub resettled: Resettled,
}

fn report<T: Serialize>(dry_run: bool, rows: Vec<Change<T>>, resettled: Resettled) -> Report<T> {
    let count = |c: Difference| rows.iter().filter(|r| r.change == c).count();
    Report {
        dry_run,
        new: count(Difference::New),
        changed: count(Difference::Changed),
        unchanged: count(Difference::Unchanged),
        rows,
        resettled,
    }
}

/// The reason a whole command gives: its one change's, or how many there were.
fn overall(reasons: &[String], what: &str) -> String {
    match reasons {
        [one] => one.clone(),
        _ => plural(reasons.len(), what),
    }
}

/// A shift as `shifts list` and `shifts import` show it: wall-clock times (settings, like
/// `config show`'s), the week as `mon,tue,...`.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ShiftRow {
    pub name: String,
    pub start: String,
    pub end: String,
    pub crosses_midnight: bool,
    pub late_grace_minutes: u32,
    pub early_grace_minutes: u32,
    pub work_days: String,
    pub break_minutes: u32,
    pub part_time: bool,
}

impl ShiftRow {
    pub(crate) fn of(s: &Shift) -> ShiftRow {
        ShiftRow {
            name: s.name.clone(),
            start: s.start.format("%H:%M").to_string(),
            end: s.end.format("%H:%M").to_string(),
            crosses_midnight: s.crosses_midnight(),
            late_grace_minutes: s.late_grace_minutes,
            early_grace_minutes: s.early_grace_minutes,
            work_days: s.days_text(),
            break_minutes: s.break_minutes,
            part_time: s.part_time,
        }
    }
}

/// Add or change shifts (already parsed and checked); `dry_run`: only say what would change.
/// A changed shift that governs settled days is refused (exit 1, nothing written) unless
/// `resettle`: then those days are re-judged by its new values and re-settled, audited; but
/// not when one of them is in a closed pay period (refused, exit 1, nothing written).
pub(crate) fn import(cfg: &Config, shifts: &[Shift], dry_run: bool, resettle: bool) -> Result<Report<ShiftRow>> {
    let db = Db::open(cfg)?;
    let _lock = (!dry_run).then(|| resettle::lock(&db)).transpose()?;
    let current = shift_rows::read(&db)?;
    let rows = shifts
        .iter()
        .map(|s| Change {
            change: match current.shifts.get(&s.name) {
                None => Difference::New,
                Some(old) if old == s => Difference::Unchanged,
                Some(_) => Difference::Changed,
            },
            row: ShiftRow::of(s),
        })
        .collect();
    // Each changed shift with the reason its re-settled rows give.
    let changed: Vec<(&str, String)> = shifts
        .iter()
        .filter_map(|s| {
            let what = differences(current.shifts.get(&s.name)?, s);
            (!what.is_empty()).then(|| {
                (
                    s.name.as_str(),
                    format!("shift {} changed: {}", s.name, what.join(", ")),
                )
            })
        })
        .collect();
    let dry_table = dry_run.then(|| {
        let mut t = current.clone();
        t.shifts.extend(shifts.iter().map(|s| (s.name.clone(), s.clone())));
        t
    });
    let reasons: Vec<String> = changed.iter().map(|(_, r)| r.clone()).collect();
    let resettled = shift_changes::apply(
        cfg,
        &db,
        dry_table,
        overall(&reasons, "changed shift"),
        |tx| shift_rows::upsert_shifts(tx, shifts),
        |tx, table, today| {
            let mut spans = Vec::new();
            for (name, reason) in &changed {
                for a in assignments_of(table, name) {
                    let Some(span) = Span::of(table, &a, today, reason.clone()) else {
                        continue;
                    };
                    if resettle {
                        // Re-judging a closed month's days is a change to it, as any other.
                        crate::mysql::people::periods::refuse_closed(tx, span.from, span.to, "shift change")?;
                    } else {
                        shift_changes::refuse_if_settled(tx, name, &span)?;
                    }
                    spans.push(span);
                }
            }
            Ok(spans)
        },
    )?;
    if !dry_run {
        crate::ops::lookup::refresh_copy(&db, &mut Board::open(cfg)?)?;
    }
    Ok(report(dry_run, rows, resettled))
}

/// Add or change assignments (parsed, their shifts known); every target must be on the roster
/// (refused, exit 1, nothing written, otherwise). A new or changed assignment from a settled
/// day re-settles its target's rows up to the day before the target's next assignment.
pub(crate) fn assign(cfg: &Config, assignments: &[Assignment], dry_run: bool) -> Result<Report<Assignment>> {
    let db = Db::open(cfg)?;
    for scope in [Scope::Department, Scope::Employee] {
        let ids: Vec<&str> = assignments
            .iter()
            .filter(|a| a.scope == scope)
            .map(|a| a.target.as_str())
            .collect();
        let known = shift_rows::known_targets(&db, scope, &ids)?;
        if let Some(unknown) = ids.iter().find(|id| !known.contains(**id)) {
            return Err(Error::refused(format!(
                "assignments: unknown {} '{unknown}': nothing assigned",
                scope.as_str()
            ))
            .into());
        }
    }
    let _lock = (!dry_run).then(|| resettle::lock(&db)).transpose()?;
    if let Some(from) = assignments.iter().map(|a| a.from).min() {
        let end = NaiveDate::from_ymd_opt(9999, 12, 31).unwrap_or(from);
        crate::mysql::people::periods::refuse_closed(&mut db.conn()?, from, end, "shift assignment")?;
    }
    let current = shift_rows::read(&db)?;
    let rows: Vec<Change<Assignment>> = assignments
        .iter()
        .map(|a| {
            let map = match a.scope {
                Scope::Department => &current.departments,
                Scope::Employee => &current.employees,
            };
            let was = map
                .get(&a.target)
                .and_then(|l| l.iter().find(|(from, _)| *from == a.from));
            Change {
                change: match was {
                    None => Difference::New,
                    Some((_, s)) if *s == a.shift => Difference::Unchanged,
                    Some(_) => Difference::Changed,
                },
                row: a.clone(),
            }
        })
        .collect();
    // An unchanged assignment changes no row: its days were settled (or re-settled) with it.
    let touched: Vec<(&Assignment, String)> = rows
        .iter()
        .filter(|c| c.change != Difference::Unchanged)
        .map(|c| {
            let a = &c.row;
            let reason = format!(
                "shift assignment {} {} from {}: {}",
                a.scope.as_str(),
                a.target,
                a.from,
                a.shift
            );
            (a, reason)
        })
        .collect();
    let dry_table = dry_run.then(|| {
        let mut t = current.clone();
        for a in assignments {
            t.assign(a.clone());
        }
        t
    });
    let reasons: Vec<String> = touched.iter().map(|(_, r)| r.clone()).collect();
    let resettled = shift_changes::apply(
        cfg,
        &db,
        dry_table,
        overall(&reasons, "new or changed shift assignment"),
        |tx| shift_rows::upsert_assignments(tx, assignments),
        |_, table, today| {
            Ok(touched
                .iter()
                .filter_map(|(a, reason)| Span::of(table, a, today, reason.clone()))
                .collect())
        },
    )?;
    if !dry_run {
        crate::ops::lookup::refresh_copy(&db, &mut Board::open(cfg)?)?;
    }
    Ok(report(dry_run, rows, resettled))
}

/// Every shift (the default first, as the policy makes it) and every assignment.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Listing {
    pub shifts: Vec<ShiftRow>,
    pub assignments: Vec<Assignment>,
}

pub(crate) fn list(cfg: &Config) -> Result<Listing> {
    let db = Db::open(cfg)?;
    let table = shift_rows::read(&db)?;
    // The shift `default` as today's version of the rulebook makes it.
    let today = crate::ops::lookup::server_today(&mut db.conn()?, cfg.timezone)?;
    let policy = crate::ops::lookup::rules_from(cfg, &db)?.on(today)?;
    let shifts = std::iter::once(Shift::from_policy(&policy))
        .chain(table.shifts.values().cloned())
        .map(|s| ShiftRow::of(&s))
        .collect();
    Ok(Listing {
        shifts,
        assignments: table.assignments(),
    })
}

/// Which shift an employee follows on a date, why, and when it starts and ends.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Which {
    pub employee_id: String,
    pub department_id: String,
    pub work_date: NaiveDate,
    pub shift: String,
    pub source: Source,
    /// Whether the date is a work day of the shift (its week, then the calendar).
    pub work_day: bool,
    pub starts_at: String,
    pub ends_at: String,
    pub crosses_midnight: bool,
    pub part_time: bool,
}

pub(crate) fn which(cfg: &Config, employee_id: &str, date: NaiveDate) -> Result<Which> {
    crate::domain::people::roster::check_id("employee id", employee_id)?;
    let db = Db::open(cfg)?;
    let member = crate::mysql::people::roster_rows::active_by_ids(&db, &[employee_id])?
        .into_iter()
        .next()
        .ok_or_else(|| Error::refused(format!("unknown employee '{employee_id}'")))?;
    let policy = crate::ops::lookup::rules_from(cfg, &db)?.on(date)?;
    let shifts = Shifts::new(shift_rows::read(&db)?, &policy);
    let (shift, source) = shifts.on(employee_id, &member.department_id, date);
    let overrides = crate::mysql::people::calendar_rows::overrides(&mut db.conn()?, date, date)?;
    let work_day = match overrides.get(&date) {
        Some(e) => e.kind == crate::domain::day::workdays::DayKind::Workday,
        None => shift.works_on(date),
    };
    let tz = cfg.timezone;
    let clock = crate::domain::day::shift_clock::DayClock::for_shift(shift, tz, date);
    let text = |t: chrono::DateTime<chrono::Utc>| crate::domain::instant::text(&t.with_timezone(&tz));
    Ok(Which {
        employee_id: employee_id.to_string(),
        department_id: member.department_id,
        work_date: date,
        shift: shift.name.clone(),
        source,
        work_day,
        starts_at: text(clock.starts_at()),
        ends_at: text(clock.ends_at()),
        crosses_midnight: shift.crosses_midnight(),
        part_time: shift.part_time,
    })
}
