//! Re-settling settled rows after a leave or calendar change: the rows of a scope, locked;
//! the new values written; one audit row per changed row.

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;
use mysql::Value;

use super::attendance::{self, DayRow, Stored};

/// The settled rows from `from` to `to` (of one employee, when given), by day then employee,
/// locked until the transaction ends so that a correction waits for the re-settle.
pub(crate) fn lock_rows(
    tx: &mut impl Queryable,
    from: NaiveDate,
    to: NaiveDate,
    employee: Option<&str>,
) -> Result<Vec<Stored>> {
    let rows: Vec<mysql::Row> = tx.exec(
        format!(
            "{} WHERE work_date BETWEEN ? AND ? AND (? IS NULL OR employee_id = ?) \
             ORDER BY work_date, employee_id FOR UPDATE",
            attendance::SELECT_STORED
        ),
        (from, to, employee, employee),
    )?;
    Ok(rows
        .into_iter()
        .map(attendance::stored_from_row)
        .collect::<Result<_, _>>()?)
}

/// Rows per statement (well under MySQL's placeholder limit for both tables).
const CHUNK: usize = 2_000;

/// Write the re-settled rows of one day: an UPDATE of each (they exist and are locked; MariaDB
/// runs the batch in bulk), never of a corrected row. An UPDATE, not settle's upsert, so that
/// HR's account needs no INSERT on `attendance` (docs/security.md): it cannot add a day.
pub(crate) fn write(tx: &mut impl Queryable, date: NaiveDate, rows: &[DayRow]) -> Result<()> {
    tx.exec_batch(
        "UPDATE attendance SET status = ?, first_in = ?, last_out = ?, late_minutes = ?, early_minutes = ? \
         WHERE work_date = ? AND employee_id = ? AND NOT corrected",
        rows.iter().map(|r| {
            (
                r.outcome.status.as_str(),
                r.first_in,
                r.last_out,
                r.outcome.late_minutes,
                r.outcome.early_minutes,
                date,
                &r.employee_id,
            )
        }),
    )?;
    Ok(())
}

/// Who re-settled and why, the same for every row of one change.
pub(crate) struct Audit<'a> {
    /// The employee the roster maps to `os_user` (`None`: the account is nobody's login).
    pub by: Option<&'a str>,
    pub os_user: &'a str,
    pub reason: &'a str,
}

/// One audit row per (before, after), marked `resettled`; the MySQL account is the server's
/// `CURRENT_USER()`, the time its clock.
pub(crate) fn record(tx: &mut impl Queryable, a: &Audit, changes: &[(Stored, Stored)]) -> Result<()> {
    const COLS: usize = 11;
    for chunk in changes.chunks(CHUNK) {
        let one = "(?, ?, ?, ?, CURRENT_USER(), UTC_TIMESTAMP(), ?, TRUE, ?, ?, ?, ?, ?, ?)";
        let sql = format!(
            "INSERT INTO corrections (work_date, employee_id, corrected_by, os_user, db_user, corrected_at, \
             reason, resettled, old_status, new_status, old_first_in, new_first_in, old_last_out, new_last_out) \
             VALUES {}",
            vec![one; chunk.len()].join(",")
        );
        let mut params: Vec<Value> = Vec::with_capacity(chunk.len() * COLS);
        for (before, after) in chunk {
            params.extend([
                Value::from(after.work_date),
                Value::from(&after.employee_id),
                Value::from(a.by),
                Value::from(a.os_user),
                Value::from(a.reason),
                Value::from(before.status.as_str()),
                Value::from(after.status.as_str()),
                Value::from(before.first_in),
                Value::from(after.first_in),
                Value::from(before.last_out),
                Value::from(after.last_out),
            ]);
        }
        tx.exec_drop(sql, params)?;
    }
    Ok(())
}
