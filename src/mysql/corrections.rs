//! Corrections of settled rows: the row itself, its audit trail, and the list for reports.

use std::collections::HashMap;

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;
use serde::Serialize;

use super::attendance::{self, Stored};
use super::typed::Cols;
use crate::domain::people::employment::Employment;

/// The supervisor of an employee's department (`None` when the department has none) and the
/// employee's employment dates, if the employee exists.
pub(crate) fn supervisor_of(conn: &mut impl Queryable, employee: &str) -> Result<Option<(Option<String>, Employment)>> {
    Ok(supervisors_of(conn, &[employee])?.remove(employee))
}

/// [`supervisor_of`] for several employees, a thousand to a query: the ones that exist.
pub(crate) fn supervisors_of(
    conn: &mut impl Queryable,
    employees: &[&str],
) -> Result<HashMap<String, (Option<String>, Employment)>> {
    type Row = (String, Option<String>, Option<NaiveDate>, Option<NaiveDate>);
    let mut found = HashMap::with_capacity(employees.len());
    for chunk in employees.chunks(1_000) {
        let rows: Vec<Row> = conn.exec(
            format!(
                "SELECT e.id, s.employee_id, e.start_date, e.end_date FROM employees e \
                 LEFT JOIN supervisors s ON s.department_id = e.department_id WHERE e.id IN ({})",
                vec!["?"; chunk.len()].join(",")
            ),
            chunk.to_vec(),
        )?;
        for (id, s, start, end) in rows {
            found.entry(id).or_insert((s, Employment::new(start, end)));
        }
    }
    Ok(found)
}

/// The settled row, locked until the transaction ends (`None`: not settled).
pub(crate) fn lock_row(tx: &mut impl Queryable, date: NaiveDate, employee: &str) -> Result<Option<Stored>> {
    Ok(tx
        .exec_first(
            format!(
                "{} WHERE work_date = ? AND employee_id = ? FOR UPDATE",
                attendance::SELECT_STORED
            ),
            (date, employee),
        )?
        .map(attendance::stored_from_row)
        .transpose()?)
}

/// Write the corrected values, marked corrected so that a later settle keeps them.
pub(crate) fn update_row(tx: &mut impl Queryable, after: &Stored) -> Result<()> {
    tx.exec_drop(
        "UPDATE attendance SET status = ?, first_in = ?, last_out = ?, late_minutes = ?, \
         early_minutes = ?, corrected = TRUE WHERE work_date = ? AND employee_id = ?",
        (
            after.status.as_str(),
            after.first_in,
            after.last_out,
            after.late_minutes,
            after.early_minutes,
            after.work_date,
            &after.employee_id,
        ),
    )?;
    Ok(())
}

/// One audit row to write.
pub(crate) struct Audit<'a> {
    pub by: &'a str,
    pub os_user: &'a str,
    pub reason: &'a str,
    pub before: &'a Stored,
    pub after: &'a Stored,
}

/// Record the audit row (the MySQL account is the server's own `CURRENT_USER()`); returns its
/// id and that account.
pub(crate) fn record(tx: &mut mysql::Transaction, a: &Audit) -> Result<(u64, String)> {
    super::audit::insert(
        tx,
        "corrections",
        "INSERT INTO corrections (work_date, employee_id, corrected_by, os_user, db_user, corrected_at, \
         reason, old_status, new_status, old_first_in, new_first_in, old_last_out, new_last_out) \
         VALUES (?, ?, ?, ?, CURRENT_USER(), UTC_TIMESTAMP(), ?, ?, ?, ?, ?, ?, ?)",
        (
            a.after.work_date,
            &a.after.employee_id,
            a.by,
            a.os_user,
            a.reason,
            a.before.status.as_str(),
            a.after.status.as_str(),
            a.before.first_in,
            a.after.first_in,
            a.before.last_out,
            a.after.last_out,
        ),
    )
}

/// One correction as stored. Times are UTC.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Correction {
    #[serde(rename = "correction_id")]
    pub id: u64,
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub corrected_by: String,
    pub os_user: String,
    pub db_user: String,
    #[serde(serialize_with = "crate::domain::instant::utc")]
    pub corrected_at: NaiveDateTime,
    pub reason: String,
    pub old_status: String,
    pub new_status: String,
    #[serde(serialize_with = "crate::domain::instant::utc_opt")]
    pub old_first_in: Option<NaiveDateTime>,
    #[serde(serialize_with = "crate::domain::instant::utc_opt")]
    pub new_first_in: Option<NaiveDateTime>,
    #[serde(serialize_with = "crate::domain::instant::utc_opt")]
    pub old_last_out: Option<NaiveDateTime>,
    #[serde(serialize_with = "crate::domain::instant::utc_opt")]
    pub new_last_out: Option<NaiveDateTime>,
}

/// The corrections of days in `from..=to`, optionally of one employee, oldest first.
pub(crate) fn list(
    conn: &mut impl Queryable,
    from: NaiveDate,
    to: NaiveDate,
    employee: Option<&str>,
) -> Result<Vec<Correction>> {
    let rows: Vec<mysql::Row> = conn.exec(
        "SELECT id, work_date, employee_id, IFNULL(corrected_by, ''), os_user, db_user, corrected_at, reason, \
         old_status, new_status, old_first_in, new_first_in, old_last_out, new_last_out FROM corrections \
         WHERE work_date BETWEEN ? AND ? AND (? IS NULL OR employee_id = ?) ORDER BY id",
        (from, to, employee, employee),
    )?;
    rows.into_iter()
        .map(|r| {
            let mut c = Cols::new(r, "correction");
            Ok(Correction {
                id: c.get(0)?,
                work_date: c.get(1)?,
                employee_id: c.get(2)?,
                corrected_by: c.get(3)?,
                os_user: c.get(4)?,
                db_user: c.get(5)?,
                corrected_at: c.get(6)?,
                reason: c.get(7)?,
                old_status: c.get(8)?,
                new_status: c.get(9)?,
                old_first_in: c.get(10)?,
                new_first_in: c.get(11)?,
                old_last_out: c.get(12)?,
                new_last_out: c.get(13)?,
            })
        })
        .collect()
}
