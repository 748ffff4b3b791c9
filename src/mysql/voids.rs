//! Punches voided before settle: the audit row (`punch_voids`) and the punch log's row with
//! how = voided, written in the caller's transaction.

use std::collections::HashSet;

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;

use crate::domain::punch::Kind;

/// One voided punch to record. Times are UTC.
pub(crate) struct Void<'a> {
    pub work_date: NaiveDate,
    pub employee_id: &'a str,
    pub department_id: &'a str,
    pub punched_at: NaiveDateTime,
    pub kind: Kind,
    pub by: &'a str,
    pub os_user: &'a str,
    pub reason: &'a str,
}

/// Record the audit row (the MySQL account is the server's `CURRENT_USER()`); returns its id
/// and that account.
pub(crate) fn record(tx: &mut mysql::Transaction, v: &Void) -> Result<(u64, String)> {
    super::audit::insert(
        tx,
        "punch_voids",
        "INSERT INTO punch_voids (work_date, employee_id, department_id, punched_at, kind, voided_by, \
         os_user, db_user, voided_at, reason) VALUES (?, ?, ?, ?, ?, ?, ?, CURRENT_USER(), UTC_TIMESTAMP(), ?)",
        (
            v.work_date,
            v.employee_id,
            v.department_id,
            v.punched_at,
            v.kind.as_str(),
            v.by,
            v.os_user,
            v.reason,
        ),
    )
}

/// The punches of `date` voided before settle: (employee, instant in unix seconds, kind), what
/// a replay of the journal must not put back.
pub(crate) fn voided_on(db: &crate::mysql::Db, date: NaiveDate) -> Result<HashSet<(String, i64, Kind)>> {
    let mut conn = db.conn()?;
    let rows: Vec<(String, NaiveDateTime, String)> = conn.exec(
        "SELECT employee_id, punched_at, kind FROM punch_voids WHERE work_date = ?",
        (date,),
    )?;
    Ok(rows
        .into_iter()
        .filter_map(|(emp, at, kind)| Some((emp, at.and_utc().timestamp(), kind.parse().ok()?)))
        .collect())
}
