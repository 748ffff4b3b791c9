//! Attendance rows: settle's batched upserts, the stored punch histories a rerun starts from,
//! and one row for status and corrections.

use std::collections::{BTreeMap, HashMap, HashSet};

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;
use mysql::Value;
use serde::Serialize;

use super::placeholders;
use super::typed::Cols;
use crate::error::Error;
use crate::policy::DayStatus;
use crate::settle::rows::{encode_log, DayRow};

/// Columns of one upserted row.
pub const COLS: usize = 9;

/// The most rows one statement may carry: MySQL takes at most 65,535 placeholders.
pub const MAX_ROWS_PER_STATEMENT: usize = 65_535 / COLS;

/// A corrected row keeps its corrected times, status and minutes; the punch history and
/// the department always follow the latest settle.
const UPSERT_TAIL: &str = " ON DUPLICATE KEY UPDATE \
    department_id = VALUES(department_id), punches = VALUES(punches), \
    status = IF(corrected, status, VALUES(status)), \
    first_in = IF(corrected, first_in, VALUES(first_in)), \
    last_out = IF(corrected, last_out, VALUES(last_out)), \
    late_minutes = IF(corrected, late_minutes, VALUES(late_minutes)), \
    early_minutes = IF(corrected, early_minutes, VALUES(early_minutes))";

fn upsert_sql(rows: usize) -> String {
    format!(
        "INSERT INTO attendance (work_date, employee_id, department_id, status, first_in, last_out, \
         late_minutes, early_minutes, punches) VALUES {}{UPSERT_TAIL}",
        placeholders(rows, COLS)
    )
}

fn push_params(params: &mut Vec<Value>, date: NaiveDate, r: &DayRow) {
    params.extend([
        Value::from(date),
        Value::from(&r.employee_id),
        Value::from(&r.department_id),
        Value::from(r.outcome.status.as_str()),
        Value::from(r.first_in),
        Value::from(r.last_out),
        Value::from(r.outcome.late_minutes),
        Value::from(r.outcome.early_minutes),
        Value::from(encode_log(&r.punches)),
    ]);
}

/// Upsert rows in one multi-row statement (at most [`MAX_ROWS_PER_STATEMENT`]).
pub fn upsert(conn: &mut impl Queryable, date: NaiveDate, rows: &[DayRow]) -> mysql::Result<()> {
    let mut params = Vec::with_capacity(rows.len() * COLS);
    for r in rows {
        push_params(&mut params, date, r);
    }
    conn.exec_drop(upsert_sql(rows.len()), params)
}

/// The ids among `ids` that are not in `employees`. The ids found are locked in share mode
/// until the transaction ends, so that none is deleted before the rows that name it commit:
/// what the foreign key `attendance_employee_fk` did until V5 dropped it for partitioning.
pub fn unknown_employees<'a>(
    conn: &mut impl Queryable,
    ids: impl IntoIterator<Item = &'a str>,
) -> mysql::Result<HashSet<String>> {
    let mut unknown: HashSet<String> = ids.into_iter().map(str::to_string).collect();
    if unknown.is_empty() {
        return Ok(unknown);
    }
    let list: Vec<Value> = unknown.iter().map(Value::from).collect();
    let sql = format!(
        "SELECT id FROM employees WHERE id IN ({}) LOCK IN SHARE MODE",
        vec!["?"; list.len()].join(",")
    );
    for id in conn.exec::<String, _, _>(sql, list)? {
        unknown.remove(&id);
    }
    Ok(unknown)
}

/// The punch histories already stored for a day: employee id -> history.
pub fn stored_punches(conn: &mut impl Queryable, date: NaiveDate) -> Result<HashMap<String, String>> {
    Ok(conn
        .exec(
            "SELECT employee_id, punches FROM attendance WHERE work_date = ?",
            (date,),
        )?
        .into_iter()
        .collect())
}

/// Rows by status for a day, as they stand in MySQL (corrections included).
pub fn counts(conn: &mut impl Queryable, date: NaiveDate) -> Result<BTreeMap<String, u64>> {
    Ok(conn
        .exec(
            "SELECT CAST(status AS CHAR), COUNT(*) FROM attendance WHERE work_date = ? GROUP BY status",
            (date,),
        )?
        .into_iter()
        .collect())
}

/// One stored row.
#[derive(Debug, Clone, Serialize)]
pub struct Stored {
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub department_id: String,
    pub status: DayStatus,
    /// UTC.
    pub first_in: Option<NaiveDateTime>,
    /// UTC.
    pub last_out: Option<NaiveDateTime>,
    pub late_minutes: u32,
    pub early_minutes: u32,
    pub punches: String,
    pub corrected: bool,
}

pub const SELECT_STORED: &str = "SELECT work_date, employee_id, department_id, CAST(status AS CHAR), \
    first_in, last_out, late_minutes, early_minutes, punches, corrected FROM attendance";

/// Map a row of [`SELECT_STORED`]; a value that does not fit is an error, not a default.
pub fn stored_from_row(r: mysql::Row) -> Result<Stored, Error> {
    let mut c = Cols::new(r, "attendance row");
    Ok(Stored {
        work_date: c.get(0)?,
        employee_id: c.get(1)?,
        department_id: c.get(2)?,
        status: c.parse(3, DayStatus::parse)?,
        first_in: c.get(4)?,
        last_out: c.get(5)?,
        late_minutes: c.get(6)?,
        early_minutes: c.get(7)?,
        punches: c.get(8)?,
        corrected: c.get(9)?,
    })
}

/// One employee's row for a day, if settled.
pub fn row(conn: &mut impl Queryable, date: NaiveDate, employee: &str) -> Result<Option<Stored>> {
    let r: Option<mysql::Row> = conn.exec_first(
        format!("{SELECT_STORED} WHERE work_date = ? AND employee_id = ?"),
        (date, employee),
    )?;
    Ok(r.map(stored_from_row).transpose()?)
}
