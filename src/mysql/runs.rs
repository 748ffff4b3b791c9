//! Settle runs and their failures (what each run did, for `report runs` and the operator), the
//! settle lock that keeps runs one at a time, and the days laid out in Redis.

use std::collections::BTreeMap;

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;
use mysql::Value;
use serde::Serialize;

use super::placeholders;
use super::typed::Cols;

/// A row that could not be computed or written, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Failure {
    pub employee_id: String,
    pub department_id: String,
    pub reason: String,
}

/// The settle lock of this database, held for a run: a MySQL named lock (GET_LOCK), tied to one
/// connection, so a killed settle loses it with its connection. Dropping the guard releases it
/// on every path, errors and panics included.
pub(crate) struct SettleLock {
    conn: mysql::PooledConn,
}

const LOCK_NAME: &str = "CONCAT('attendance-settle-', MD5(DATABASE()))";

impl SettleLock {
    /// Take the lock without waiting: `None` while another settle holds it.
    pub(crate) fn try_acquire(db: &super::Db) -> Result<Option<SettleLock>> {
        let mut conn = db.get_conn().map_err(|e| db.error(e))?;
        let got: Option<i64> = conn
            .query_first(format!("SELECT GET_LOCK({LOCK_NAME}, 0)"))
            .map_err(|e| db.error(e))?;
        Ok((got == Some(1)).then_some(SettleLock { conn }))
    }

    /// The connection that holds the lock (the run's bookkeeping goes through it).
    pub(crate) fn conn(&mut self) -> &mut super::Conn {
        &mut self.conn
    }
}

impl Drop for SettleLock {
    fn drop(&mut self) {
        // A failed release is harmless: the lock goes with the connection, which the pool
        // resets or closes.
        let _ = self.conn.query_drop(format!("SELECT RELEASE_LOCK({LOCK_NAME})"));
    }
}

/// MySQL's DATE holds the years 1000 to 9999 (the client panics outside them): a day outside
/// can never be settled, so it is refused before anything is written.
pub(crate) fn check_storable(date: NaiveDate) -> Result<(), crate::error::Error> {
    use chrono::Datelike;
    if (1000..=9999).contains(&date.year()) {
        Ok(())
    } else {
        Err(crate::error::Error::input(format!(
            "{date}: a day must be in the years 1000 to 9999 (what MySQL stores)"
        )))
    }
}

/// Record that a day's boards were laid out (init-day, or settle laying out the next work day).
/// `identity`: the Redis servers that hold them, when no punch of the day was recorded before
/// (`None` otherwise). A later layout on other servers, or without an identity, leaves none:
/// the servers that held the day from its start are then not known, and settle checks it.
pub(crate) fn record_layout(
    conn: &mut impl Queryable,
    date: NaiveDate,
    departments: usize,
    employees: usize,
    identity: Option<&str>,
) -> Result<()> {
    conn.exec_drop(
        "INSERT INTO day_layouts (work_date, departments, employees, laid_out_at, redis_identity) \
         VALUES (?, ?, ?, UTC_TIMESTAMP(3), ?) ON DUPLICATE KEY UPDATE departments = VALUES(departments), \
         employees = VALUES(employees), laid_out_at = VALUES(laid_out_at), \
         redis_identity = IF(redis_identity = VALUES(redis_identity), redis_identity, NULL)",
        (date, departments as u64, employees as u64, identity),
    )?;
    Ok(())
}

/// The Redis servers that held `date`'s boards from before its first punch, as its layout
/// recorded them: `None` when not known (no layout, or see [`record_layout`]).
pub(crate) fn layout_identity(conn: &mut impl Queryable, date: NaiveDate) -> Result<Option<String>> {
    let id: Option<Option<String>> =
        conn.exec_first("SELECT redis_identity FROM day_layouts WHERE work_date = ?", (date,))?;
    Ok(id.flatten())
}

/// Whether a day was laid out in Redis: then each of its departments had a board.
pub(crate) fn laid_out(conn: &mut impl Queryable, date: NaiveDate) -> Result<bool> {
    let n: Option<u64> = conn.exec_first("SELECT COUNT(*) FROM day_layouts WHERE work_date = ?", (date,))?;
    Ok(n.unwrap_or(0) > 0)
}

/// Start a run. The caller holds the settle lock, so any run still 'running' was killed.
pub(crate) fn start(conn: &mut mysql::PooledConn, date: NaiveDate) -> Result<u64> {
    conn.query_drop("UPDATE settle_runs SET outcome = 'interrupted' WHERE outcome = 'running'")?;
    conn.exec_drop(
        "INSERT INTO settle_runs (work_date, started_at, outcome) VALUES (?, UTC_TIMESTAMP(3), 'running')",
        (date,),
    )?;
    Ok(conn.last_insert_id())
}

/// Record the rows a run could not write.
pub(crate) fn record_failures(
    conn: &mut impl Queryable,
    run: u64,
    date: NaiveDate,
    failures: &[Failure],
) -> Result<()> {
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

/// What a finished run counts. `outcome`: `ok`, `partial` (rows refused), `failed` (stopped
/// before every row was committed) or `failed_after_commit` (every row committed, then a later
/// step failed); `problem`: the error's one line when it failed, empty otherwise.
#[derive(Debug, Clone, Default)]
pub(crate) struct Finish {
    pub outcome: &'static str,
    pub problem: String,
    pub employees: u64,
    pub rows_written: u64,
    pub failed: u64,
    pub boards_deleted: u64,
    pub counts: BTreeMap<String, u64>,
    /// Punches refused: board tokens and punch log entries no good signed record backs.
    pub refused_punches: u64,
}

pub(crate) fn finish(conn: &mut impl Queryable, run: u64, f: &Finish) -> Result<()> {
    conn.exec_drop(
        "UPDATE settle_runs SET finished_at = UTC_TIMESTAMP(3), outcome = ?, problem = ?, employees = ?, \
         rows_written = ?, failed = ?, boards_deleted = ?, counts = ?, refused_punches = ? WHERE id = ?",
        (
            f.outcome,
            // The column holds 300 characters, what an error line has at most.
            f.problem.chars().take(300).collect::<String>(),
            f.employees,
            f.rows_written,
            f.failed,
            f.boards_deleted,
            serde_json::to_string(&f.counts)?,
            f.refused_punches,
            run,
        ),
    )?;
    Ok(())
}

/// One run as stored.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Run {
    #[serde(rename = "run_id")]
    pub id: u64,
    pub work_date: NaiveDate,
    /// UTC.
    #[serde(serialize_with = "crate::domain::instant::utc")]
    pub started_at: NaiveDateTime,
    /// UTC.
    #[serde(serialize_with = "crate::domain::instant::utc_opt")]
    pub finished_at: Option<NaiveDateTime>,
    pub outcome: String,
    /// What failed, for a run that failed (`failed`, `failed_after_commit`); empty otherwise.
    pub problem: String,
    pub employees: u64,
    pub rows_written: u64,
    pub failed: u64,
    pub boards_deleted: u64,
    pub counts: BTreeMap<String, u64>,
    /// Punches the run refused: no good signed record backed them.
    pub refused_punches: u64,
}

/// The latest runs, newest first, optionally of one day.
pub(crate) fn list(conn: &mut impl Queryable, date: Option<NaiveDate>, limit: u32) -> Result<Vec<Run>> {
    let rows: Vec<mysql::Row> = conn.exec(
        "SELECT id, work_date, started_at, finished_at, CAST(outcome AS CHAR), employees, rows_written, \
         failed, boards_deleted, counts, problem, refused_punches FROM settle_runs WHERE (? IS NULL OR work_date = ?) \
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
                problem: c.get(10)?,
                employees: c.get(5)?,
                rows_written: c.get(6)?,
                failed: c.get(7)?,
                boards_deleted: c.get(8)?,
                counts: c.parse(9, |s| serde_json::from_str(s).ok())?,
                refused_punches: c.get(11)?,
            })
        })
        .collect()
}

/// One recorded failure.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FailureRow {
    pub run_id: u64,
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub department_id: String,
    pub reason: String,
}

/// The failures of the listed runs, in run then employee order.
pub(crate) fn failures(conn: &mut impl Queryable, date: Option<NaiveDate>, limit: u32) -> Result<Vec<FailureRow>> {
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
