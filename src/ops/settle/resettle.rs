//! Re-settling after the fact: a leave added or cancelled, a calendar day set or unset, or a
//! shift or an assignment changed, for days already settled. The rows of the scope are computed
//! again from their stored punch history by settle's own rule (`settle::rows::row`); the rows
//! that change are updated (never a corrected one) and each is audited in `corrections` (marked
//! `resettled`) in the same transaction. A corrected row keeps its correction: a correction
//! wins, as it does at settle. A day not settled yet is left alone: its settle reads the leave,
//! the calendar and the shifts then.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use anyhow::{Context, Result};
use chrono::NaiveDate;
use serde::Serialize;

use crate::config::Config;
use crate::domain::day::policy::{DayStatus, Policy};
use crate::domain::day::shifts::{ShiftTable, Shifts};
use crate::domain::{day::policy, day::workdays};
use crate::error::Error;
use crate::mysql::attendance::{parse_log, DayRow, Stored};
use crate::mysql::people::{calendar_rows, leave_rows};
pub(crate) use crate::mysql::resettle_rows::Whose;
use crate::mysql::resettle_rows::{self, Audit};
use crate::mysql::runs::SettleLock;
use crate::mysql::{server, Db, Tx};
use crate::ops::lookup::Rules;
use crate::ops::settle::rows::{self, Day};

/// Which rows a change touches: the days from `from` to `to`, of one employee (a leave, their
/// own shift assignment), of a department (its shift assignment) or of everyone (a calendar day).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub whose: Whose<'a>,
}

/// One re-settled row.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Change {
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub before: DayStatus,
    pub after: DayStatus,
}

/// What a re-settle did.
#[derive(Debug, Clone, Default, Serialize)]
pub(crate) struct Resettled {
    /// The reason written in each audit row.
    pub reason: String,
    /// The settled days of the scope (days with a row in it).
    pub settled_days: Vec<NaiveDate>,
    /// Rows of the scope read again.
    pub settled_rows: u64,
    /// Rows whose status or minutes changed, written and audited.
    pub changed: u64,
    /// Changed rows by `before -> after` status.
    pub changes: BTreeMap<String, u64>,
    /// Corrected rows that the rule would have changed, kept as corrected.
    pub kept_corrected: u64,
    /// Rows whose stored punch history could not be read: left as they are.
    pub unreadable: u64,
    /// Every changed row, when the scope is one employee (a calendar day or a department lists
    /// none).
    pub rows: Vec<Change>,
    /// Days of the scope, up to today, that no settle has finished yet: the change counts
    /// when they are settled (today's board, a day still in Redis).
    pub counts_at_settle: Vec<NaiveDate>,
}

impl Resettled {
    /// Add another change's re-settle to this one (a calendar file: one per day).
    /// A day re-read by two changes of one command counts once.
    pub(crate) fn add(&mut self, other: Resettled) {
        self.settled_days.extend(other.settled_days);
        self.settled_days.sort();
        self.settled_days.dedup();
        self.settled_rows += other.settled_rows;
        self.changed += other.changed;
        for (k, n) in other.changes {
            *self.changes.entry(k).or_default() += n;
        }
        self.kept_corrected += other.kept_corrected;
        self.unreadable += other.unreadable;
        self.rows.extend(other.rows);
        self.counts_at_settle.extend(other.counts_at_settle);
        self.counts_at_settle.sort();
        self.counts_at_settle.dedup();
    }

    /// `2 absent -> on_leave, 1 present -> rest_day`.
    pub(crate) fn changes_line(&self) -> String {
        self.changes
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Hold settle's lock while a change and its re-settle are made, so that no settle reads the
/// leave or the calendar in between. Refused (exit 1, nothing written) while a settle runs.
pub(crate) fn lock(db: &Db) -> Result<SettleLock> {
    SettleLock::try_acquire(db)?.ok_or_else(|| {
        Error::refused("a settle is running on this database: make the change again once it has finished").into()
    })
}

/// Who re-settles, the day it is, and the shifts every row is judged by: read once per command.
pub(crate) struct Ground {
    /// The employee the roster maps to `os_user` (`None`: the account is nobody's login).
    by: Option<String>,
    os_user: String,
    /// Today's work date by the server's clock: no day after it is settled.
    pub today: NaiveDate,
    /// Shared by every day re-settled (a department's year is one table, not 365 copies).
    shifts: Arc<Shifts>,
    /// The rulebook as the change leaves it: each day is judged by the policy in force on it.
    rules: Rules,
}

impl Ground {
    /// Read who runs the command and the server's day; `shifts` is the table as the change
    /// leaves it (read in the change's own transaction, or computed for a dry run).
    pub(crate) fn read(cfg: &Config, conn: &mut Tx, shifts: ShiftTable) -> Result<Ground> {
        let os_user = crate::ops::lookup::os_user();
        let by = crate::mysql::people::roster_rows::actor_of_login(conn, &os_user)?.map(|a| a.employee_id);
        let today = policy::work_date(cfg.timezone, server::now(conn)?);
        let rules = Rules::new(cfg, crate::mysql::people::policy_rows::rulebook(conn)?);
        Ok(Ground {
            by,
            os_user,
            today,
            shifts: Arc::new(Shifts::new(shifts, &rules.on(today)?)),
            rules,
        })
    }

    /// The policy `date` is judged by, and the shifts with that day's default shift (shared
    /// by every day whose policy is the same).
    fn of_day(&self, date: NaiveDate, seen: &mut Vec<(Policy, Arc<Shifts>)>) -> Result<(Policy, Arc<Shifts>)> {
        let policy = self.rules.on(date)?;
        if let Some((_, shifts)) = seen.iter().find(|(p, _)| *p == policy) {
            return Ok((policy, Arc::clone(shifts)));
        }
        let shifts = Arc::new(Shifts::new(self.shifts.table.clone(), &policy));
        seen.push((policy.clone(), Arc::clone(&shifts)));
        Ok((policy, shifts))
    }

    /// The shift table the rows are judged by.
    pub(crate) fn shifts(&self) -> &ShiftTable {
        &self.shifts.table
    }
}

/// Re-settle the rows of `scope` after a change that is already committed, under `_lock` (see
/// [`lock`]): a leave or a calendar day. An error comes with the words to retry.
pub(crate) fn resettle(cfg: &Config, db: &Db, _lock: &SettleLock, scope: Scope, reason: &str) -> Result<Resettled> {
    let run = || -> Result<Resettled> {
        let mut conn = db.conn()?;
        let mut tx = crate::mysql::begin(&mut conn)?;
        let shifts = crate::mysql::people::shift_rows::table(&mut tx)?;
        let ground = Ground::read(cfg, &mut tx, shifts)?;
        let out = within(cfg, &mut tx, &ground, scope, reason, true)?;
        tx.commit()?;
        Ok(out)
    };
    run().with_context(|| {
        format!("the change is recorded, but re-settling its settled days failed ({reason}): make the same change again to re-settle them")
    })
}

/// Re-settle the rows of `scope` inside `tx`, the transaction of the change itself or one of
/// its own; `write: false` computes what would change and writes nothing (a dry run, whose
/// transaction is rolled back).
pub(crate) fn within(
    cfg: &Config,
    tx: &mut Tx,
    ground: &Ground,
    scope: Scope,
    reason: &str,
    write: bool,
) -> Result<Resettled> {
    let mut out = Resettled {
        reason: reason.to_string(),
        counts_at_settle: unsettled(tx, scope, ground.today)?,
        ..Resettled::default()
    };
    if scope.to < scope.from {
        return Ok(out);
    }
    let stored = resettle_rows::lock_rows(tx, scope.from, scope.to, scope.whose)?;
    let overrides = calendar_rows::overrides(tx, scope.from, scope.to)?;
    let mut changes = Vec::new();
    let mut policies = Vec::new();
    // The rows come by day: one run of them per settled day.
    for of_day in stored.chunk_by(|a, b| a.work_date == b.work_date) {
        let date = of_day[0].work_date;
        // The rules in force on that day, whenever it is re-settled.
        let (policy, shifts) = ground.of_day(date, &mut policies)?;
        let workday = workdays::is_workday(&policy, &overrides, date);
        // As settle computes it: each employee's shift, whole and half days of leave.
        let calendar = overrides.get(&date).map(|e| e.kind == workdays::DayKind::Workday);
        let day = Day::new(date, cfg.timezone, &policy, workday)
            .with_shifts(cfg.timezone, &policy, shifts, calendar)
            .with_half_leave(leave_rows::half_leave(tx, date)?);
        let on_leave = leave_rows::on_leave(tx, date)?;
        let mut rewrite = Vec::new();
        for before in of_day {
            out.settled_rows += 1;
            let Some(row) = again(&day, before, &on_leave) else {
                out.unreadable += 1;
                continue;
            };
            if same(before, &row) {
                continue;
            }
            if before.corrected {
                out.kept_corrected += 1;
                continue;
            }
            let after = Stored {
                status: row.outcome.status,
                first_in: row.first_in,
                last_out: row.last_out,
                late_minutes: row.outcome.late_minutes,
                early_minutes: row.outcome.early_minutes,
                ..before.clone()
            };
            *out.changes
                .entry(format!("{} -> {}", before.status, after.status))
                .or_default() += 1;
            if let Whose::Employee(_) = scope.whose {
                out.rows.push(Change {
                    work_date: date,
                    employee_id: before.employee_id.clone(),
                    before: before.status,
                    after: after.status,
                });
            }
            rewrite.push(row);
            changes.push((before.clone(), after));
        }
        if write {
            resettle_rows::write(tx, date, &rewrite)?;
        }
        out.settled_days.push(date);
    }
    out.changed = changes.len() as u64;
    if write {
        let audit = Audit {
            by: ground.by.as_deref(),
            os_user: &ground.os_user,
            reason,
        };
        resettle_rows::record(tx, &audit, &changes)?;
    }
    Ok(out)
}

/// The row settle computes now from the stored punch history (`None`: unreadable).
fn again(day: &Day, before: &Stored, on_leave: &HashSet<String>) -> Option<DayRow> {
    let punches = parse_log(&before.punches)?;
    let member = crate::mysql::people::roster_rows::Member {
        employee_id: before.employee_id.clone(),
        department_id: before.department_id.clone(),
        name: String::new(),
        employment: Default::default(),
    };
    Some(rows::row(day, &member, punches, on_leave.contains(&before.employee_id)))
}

/// Whether the stored row already says what settle computes now.
fn same(before: &Stored, row: &DayRow) -> bool {
    (
        before.status,
        before.first_in,
        before.last_out,
        before.late_minutes,
        before.early_minutes,
    ) == (
        row.outcome.status,
        row.first_in,
        row.last_out,
        row.outcome.late_minutes,
        row.outcome.early_minutes,
    )
}

/// The days of the scope up to `today` that no settle run has finished cleanly.
fn unsettled(conn: &mut Tx, scope: Scope, today: NaiveDate) -> Result<Vec<NaiveDate>> {
    let to = scope.to.min(today);
    if to < scope.from {
        return Ok(Vec::new());
    }
    let settled = server::settled_days(conn, scope.from, to)?;
    // A leave of years back lists at most a month of them.
    let from = scope.from.max(to - chrono::Duration::days(31));
    Ok(from
        .iter_days()
        .take_while(|d| *d <= to)
        .filter(|d| !settled.contains(d))
        .collect())
}
