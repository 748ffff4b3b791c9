//! Re-settling settled rows after a leave, calendar or shift change: the rows of a scope, locked;
//! the new values written; one audit row per changed row.

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;
use mysql::Value;

use super::attendance::{self, DayRow, Stored};

/// Whose rows a re-settle reads: everyone's (a calendar day), one employee's (a leave, their
/// own shift assignment), or a department's (its shift assignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Whose<'a> {
    Everyone,
    Employee(&'a str),
    Department(&'a str),
}

/// Days per department query: each day is its own equality range on `attendance_day_dept`
/// (`work_date, department_id`), so that only the department's rows are read (and locked), not
/// every row of the range: there is no index that leads with the department.
const DAYS: usize = 366;

/// The days from `from` to `to` in chunks of [`DAYS`], each as `IN (...)` and its values.
fn day_lists(from: NaiveDate, to: NaiveDate) -> Vec<(String, Vec<Value>)> {
    let days: Vec<NaiveDate> = from.iter_days().take_while(|x| *x <= to).collect();
    days.chunks(DAYS)
        .map(|chunk| {
            let list = format!("IN ({})", vec!["?"; chunk.len()].join(","));
            (list, chunk.iter().map(|x| Value::from(*x)).collect())
        })
        .collect()
}

/// The settled rows from `from` to `to` of `whose`, by day then employee, locked until the
/// transaction ends so that a correction waits for the re-settle.
pub(crate) fn lock_rows(tx: &mut impl Queryable, from: NaiveDate, to: NaiveDate, whose: Whose) -> Result<Vec<Stored>> {
    let order = "ORDER BY work_date, employee_id FOR UPDATE";
    let rows: Vec<mysql::Row> = match whose {
        Whose::Everyone => tx.exec(
            format!("{} WHERE work_date BETWEEN ? AND ? {order}", attendance::SELECT_STORED),
            (from, to),
        )?,
        Whose::Employee(e) => tx.exec(
            format!(
                "{} WHERE employee_id = ? AND work_date BETWEEN ? AND ? {order}",
                attendance::SELECT_STORED
            ),
            (e, from, to),
        )?,
        Whose::Department(d) => {
            let mut rows = Vec::new();
            for (list, mut params) in day_lists(from, to) {
                let sql = format!(
                    "{} WHERE work_date {list} AND department_id = ? {order}",
                    attendance::SELECT_STORED
                );
                params.push(Value::from(d));
                rows.extend(tx.exec::<mysql::Row, _, _>(sql, params)?);
            }
            rows
        }
    };
    Ok(rows
        .into_iter()
        .map(attendance::stored_from_row)
        .collect::<Result<_, _>>()?)
}

/// The first settled day from `from` to `to` with a row of `whose` (is a changed shift judging
/// settled days?). In day order with a limit: it stops at the first row it finds.
pub(crate) fn first_day(
    tx: &mut impl Queryable,
    from: NaiveDate,
    to: NaiveDate,
    whose: Whose,
) -> Result<Option<NaiveDate>> {
    let first = |tx: &mut _, filter: String, params: Vec<Value>| -> Result<Option<NaiveDate>> {
        let sql = format!("SELECT work_date FROM attendance WHERE {filter} ORDER BY work_date LIMIT 1");
        Ok(Queryable::exec_first(tx, sql, params)?)
    };
    let range = vec![Value::from(from), Value::from(to)];
    match whose {
        Whose::Everyone => first(tx, "work_date BETWEEN ? AND ?".into(), range),
        Whose::Employee(e) => {
            let params = [vec![Value::from(e)], range].concat();
            first(tx, "employee_id = ? AND work_date BETWEEN ? AND ?".into(), params)
        }
        Whose::Department(d) => {
            for (list, mut params) in day_lists(from, to) {
                params.push(Value::from(d));
                if let Some(day) = first(tx, format!("work_date {list} AND department_id = ?"), params)? {
                    return Ok(Some(day));
                }
            }
            Ok(None)
        }
    }
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
