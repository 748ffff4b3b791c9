//! Settle runs and their failures: what each run did, for `report runs` and for the operator.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;
use mysql::Value;
use serde::Serialize;

use super::placeholders;
use super::typed::Cols;
use crate::settle::rows::Failure;

/// Start a run. The caller holds the settle lock, so any run still 'running' was killed.
pub fn start(conn: &mut mysql::PooledConn, date: NaiveDate) -> Result<u64> {
    conn.query_drop("UPDATE settle_runs SET outcome = 'interrupted' WHERE outcome = 'running'")?;
    conn.exec_drop(
        "INSERT INTO settle_runs (work_date, started_at, outcome) VALUES (?, UTC_TIMESTAMP(3), 'running')",
        (date,),
    )?;
    Ok(conn.last_insert_id())
}

/// Record the rows a run could not write.
pub fn record_failures(conn: &mut impl Queryable, run: u64, date: NaiveDate, failures: &[Failure]) -> Result<()> {
    for chunk in failures.chunks(1_000) {
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|f| {
                [
                    Value::from(run),
                    Value::from(date),
                    Value::from(f.employee_id.chars().take(64).collect::<String>()),
                    Value::from(f.department_id.chars().take(64).collect::<String>()),
                    Value::from(f.reason.chars().take(1000).collect::<String>()),
                ]
            })
            .collect();
        conn.exec_drop(
            format!(
                "INSERT INTO settle_failures (run_id, work_date, employee_id, department_id, reason) VALUES {}",
                placeholders(chunk.len(), 5)
            ),
            params,
        )?;
    }
    Ok(())
}

/// What a finished run counts.
#[derive(Debug, Clone, Default)]
pub struct Finish {
    pub outcome: &'static str,
    pub employees: u64,
    pub rows_written: u64,
    pub failed: u64,
    pub boards_deleted: u64,
    pub counts: BTreeMap<String, u64>,
}

pub fn finish(conn: &mut impl Queryable, run: u64, f: &Finish) -> Result<()> {
    conn.exec_drop(
        "UPDATE settle_runs SET finished_at = UTC_TIMESTAMP(3), outcome = ?, employees = ?, \
         rows_written = ?, failed = ?, boards_deleted = ?, counts = ? WHERE id = ?",
        (
            f.outcome,
            f.employees,
            f.rows_written,
            f.failed,
            f.boards_deleted,
            serde_json::to_string(&f.counts)?,
            run,
        ),
    )?;
    Ok(())
}

/// One run as stored.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub id: u64,
    pub work_date: NaiveDate,
    /// UTC.
    pub started_at: NaiveDateTime,
    /// UTC.
    pub finished_at: Option<NaiveDateTime>,
    pub outcome: String,
    pub employees: u64,
    pub rows_written: u64,
    pub failed: u64,
    pub boards_deleted: u64,
    pub counts: BTreeMap<String, u64>,
}

/// The latest runs, newest first, optionally of one day.
pub fn list(conn: &mut impl Queryable, date: Option<NaiveDate>, limit: u32) -> Result<Vec<Run>> {
    let rows: Vec<mysql::Row> = conn.exec(
        "SELECT id, work_date, started_at, finished_at, CAST(outcome AS CHAR), employees, rows_written, \
         failed, boards_deleted, counts FROM settle_runs WHERE (? IS NULL OR work_date = ?) \
         ORDER BY id DESC LIMIT ?",
        (date, date, limit),
    )?;
    rows.into_iter()
        .map(|r| {
            let mut c = Cols::new(r, "settle_runs row");
            Ok(Run {
                id: c.get(0)?,
                work_date: c.get(1)?,
                started_at: c.get(2)?,
                finished_at: c.get(3)?,
                outcome: c.get(4)?,
                employees: c.get(5)?,
                rows_written: c.get(6)?,
                failed: c.get(7)?,
                boards_deleted: c.get(8)?,
                counts: c.parse(9, |s| serde_json::from_str(s).ok())?,
            })
        })
        .collect()
}

/// One recorded failure.
#[derive(Debug, Clone, Serialize)]
pub struct FailureRow {
    pub run_id: u64,
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub department_id: String,
    pub reason: String,
}

/// The failures of the listed runs, in run then employee order.
pub fn failures(conn: &mut impl Queryable, date: Option<NaiveDate>, limit: u32) -> Result<Vec<FailureRow>> {
    let rows: Vec<(u64, NaiveDate, String, String, String)> = conn.exec(
        "SELECT run_id, work_date, employee_id, department_id, reason FROM settle_failures \
         WHERE run_id IN (SELECT id FROM (SELECT id FROM settle_runs WHERE (? IS NULL OR work_date = ?) \
         ORDER BY id DESC LIMIT ?) latest) ORDER BY run_id DESC, employee_id",
        (date, date, limit),
    )?;
    Ok(rows
        .into_iter()
        .map(|(run_id, work_date, employee_id, department_id, reason)| FailureRow {
            run_id,
            work_date,
            employee_id,
            department_id,
            reason,
        })
        .collect())
}
