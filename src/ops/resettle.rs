//! Re-settling after the fact: a leave added or cancelled, or a calendar day set or unset, for
//! days already settled. The rows of the scope are computed again from their stored punch
//! history by settle's own rule (`settle::rows::row`); the rows that change are updated (never
//! a corrected one) and each is audited in `corrections` (marked `resettled`) in the same
//! transaction. A corrected row keeps its correction: a correction wins, as it does at settle.
//! A day not settled yet is left alone: its settle reads the leave and the calendar then.

use std::collections::{BTreeMap, HashSet};

use anyhow::{Context, Result};
use chrono::NaiveDate;
use serde::Serialize;

use crate::config::Config;
use crate::domain::{policy, workdays};
use crate::error::Error;
use crate::mysql::attendance::{parse_log, DayRow, Stored};
use crate::mysql::resettle_rows::{self, Audit};
use crate::mysql::runs::SettleLock;
use crate::mysql::{calendar_rows, leave_rows, server, Db};
use crate::ops::settle::rows::{self, Day};

/// Which rows a change touches: the days from `from` to `to`, of one employee (leave) or of
/// everyone (a calendar day).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub employee: Option<&'a str>,
}

/// One re-settled row.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Change {
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub before: &'static str,
    pub after: &'static str,
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
    /// Every changed row, when the scope is one employee (a calendar day lists none).
    pub rows: Vec<Change>,
    /// Days of the scope, up to today, that no settle has finished yet: the change counts
    /// when they are settled (today's board, a day still in Redis).
    pub counts_at_settle: Vec<NaiveDate>,
}

impl Resettled {
    /// Add another change's re-settle to this one (a calendar file: one per day).
    pub(crate) fn add(&mut self, other: Resettled) {
        self.settled_days.extend(other.settled_days);
        self.settled_rows += other.settled_rows;
        self.changed += other.changed;
        for (k, n) in other.changes {
            *self.changes.entry(k).or_default() += n;
        }
        self.kept_corrected += other.kept_corrected;
        self.unreadable += other.unreadable;
        self.rows.extend(other.rows);
        self.counts_at_settle.extend(other.counts_at_settle);
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

/// Re-settle the rows of `scope` after a change, under `_lock` (see [`lock`]). An error comes
/// with the words to retry: the change itself is already committed.
pub(crate) fn resettle(cfg: &Config, db: &Db, _lock: &SettleLock, scope: Scope, reason: &str) -> Result<Resettled> {
    run(cfg, db, scope, reason).with_context(|| {
        format!("the change is recorded, but re-settling its settled days failed ({reason}): make the same change again to re-settle them")
    })
}

fn run(cfg: &Config, db: &Db, scope: Scope, reason: &str) -> Result<Resettled> {
    let mut conn = db.conn()?;
    let os_user = crate::ops::correct::os_user();
    let by = crate::mysql::roster_rows::actor_of_login(&mut conn, &os_user)?.map(|a| a.employee_id);
    let today = policy::work_date(cfg.timezone, server::now(&mut conn)?);
    let mut out = Resettled {
        reason: reason.to_string(),
        counts_at_settle: unsettled(&mut conn, scope, today)?,
        ..Resettled::default()
    };
    let mut tx = crate::mysql::begin(&mut conn)?;
    let stored = resettle_rows::lock_rows(&mut tx, scope.from, scope.to, scope.employee)?;
    let overrides = calendar_rows::overrides(&mut tx, scope.from, scope.to)?;
    let shifts = crate::mysql::shift_rows::table(&mut tx)?;
    let mut changes = Vec::new();
    // The rows come by day: one run of them per settled day.
    for of_day in stored.chunk_by(|a, b| a.work_date == b.work_date) {
        let date = of_day[0].work_date;
        let workday = workdays::is_workday(&cfg.policy, &overrides, date);
        // As settle computes it: each employee's shift, whole and half days of leave.
        let calendar = overrides.get(&date).map(|e| e.kind == workdays::DayKind::Workday);
        let day = Day::new(date, cfg.timezone, &cfg.policy, workday)
            .with_shifts(
                cfg.timezone,
                crate::domain::shifts::Shifts::new(shifts.clone(), &cfg.policy),
                calendar,
            )
            .with_half_leave(leave_rows::half_leave(&mut tx, date)?);
        let on_leave = leave_rows::on_leave(&mut tx, date)?;
        let mut write = Vec::new();
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
            if scope.employee.is_some() {
                out.rows.push(Change {
                    work_date: date,
                    employee_id: before.employee_id.clone(),
                    before: before.status.as_str(),
                    after: after.status.as_str(),
                });
            }
            write.push(row);
            changes.push((before.clone(), after));
        }
        resettle_rows::write(&mut tx, date, &write)?;
        out.settled_days.push(date);
    }
    out.changed = changes.len() as u64;
    let audit = Audit {
        by: by.as_deref(),
        os_user: &os_user,
        reason,
    };
    resettle_rows::record(&mut tx, &audit, &changes)?;
    tx.commit()?;
    Ok(out)
}

/// The row settle computes now from the stored punch history (`None`: unreadable).
fn again(day: &Day, before: &Stored, on_leave: &HashSet<String>) -> Option<DayRow> {
    let punches = parse_log(&before.punches)?;
    let member = crate::mysql::roster_rows::Member {
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
fn unsettled(conn: &mut crate::mysql::Conn, scope: Scope, today: NaiveDate) -> Result<Vec<NaiveDate>> {
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
