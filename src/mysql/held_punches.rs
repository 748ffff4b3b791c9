//! Punches held for review (`held_punches`, V10): written by a check-in whose punch is
//! back-dated past `policy.replay_window_minutes` without replay authority, listed, locked and
//! decided by `review`, counted by settle and `doctor`. The decision's audit is on the row.

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;
use mysql::Value;
use serde::Serialize;

use super::placeholders;
use super::typed::Cols;
use crate::domain::day::review::Status;
use crate::domain::punch::Kind;

/// Rows per multi-row INSERT: 10 values each.
const CHUNK: usize = 500;

/// A punch to hold, as the check-in made it. Instants are UTC.
#[derive(Debug, Clone)]
pub(crate) struct NewHeld {
    pub event_id: String,
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub department_id: String,
    pub at: NaiveDateTime,
    pub kind: Kind,
    pub source: String,
    pub key_id: Option<String>,
    pub recorded_at: NaiveDateTime,
    /// The event's outbox record up to its last field (see `Punch::record`).
    pub record: String,
}

/// Hold these punches; one already held (same employee, instant and kind: a retry) stays as it
/// was. Returns each punch's review id, in input order.
pub(crate) fn hold(conn: &mut impl Queryable, punches: &[NewHeld]) -> Result<Vec<u64>> {
    let mut ids = Vec::with_capacity(punches.len());
    for chunk in punches.chunks(CHUNK) {
        let sql = format!(
            "INSERT IGNORE INTO held_punches (event_id, work_date, employee_id, department_id, punched_at, \
             kind, source, key_id, recorded_at, record) VALUES {}",
            placeholders(chunk.len(), 10)
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|h| {
                [
                    Value::from(&h.event_id),
                    Value::from(h.work_date),
                    Value::from(&h.employee_id),
                    Value::from(&h.department_id),
                    Value::from(h.at),
                    Value::from(h.kind.as_str()),
                    Value::from(&h.source),
                    Value::from(h.key_id.as_deref()),
                    Value::from(h.recorded_at),
                    Value::from(&h.record),
                ]
            })
            .collect();
        conn.exec_drop(sql, params)?;
        let sql = format!(
            "SELECT id, employee_id, punched_at, kind FROM held_punches WHERE (employee_id, punched_at, kind) IN ({})",
            vec!["(?,?,?)"; chunk.len()].join(",")
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|h| {
                [
                    Value::from(&h.employee_id),
                    Value::from(h.at),
                    Value::from(h.kind.as_str()),
                ]
            })
            .collect();
        let found: Vec<(u64, String, NaiveDateTime, String)> = conn.exec(sql, params)?;
        for h in chunk {
            let id = found
                .iter()
                .find(|(_, e, at, k)| *e == h.employee_id && *at == h.at && k == h.kind.as_str())
                .map(|f| f.0)
                .ok_or_else(|| {
                    anyhow::anyhow!("a held punch of {} was not found after it was written", h.employee_id)
                })?;
            ids.push(id);
        }
    }
    Ok(ids)
}

/// A held punch as stored, with its decision if any. Instants are UTC.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Held {
    #[serde(rename = "review_id")]
    pub id: u64,
    pub event_id: String,
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub department_id: String,
    #[serde(serialize_with = "crate::domain::instant::utc")]
    pub at: NaiveDateTime,
    pub kind: Kind,
    pub source: String,
    pub key_id: Option<String>,
    #[serde(serialize_with = "crate::domain::instant::utc")]
    pub recorded_at: NaiveDateTime,
    pub status: Status,
    pub decided_by: Option<String>,
    pub os_user: Option<String>,
    pub db_user: Option<String>,
    #[serde(serialize_with = "crate::domain::instant::utc_opt")]
    pub decided_at: Option<NaiveDateTime>,
    pub reason: Option<String>,
    #[serde(skip)]
    pub record: String,
}

const SELECT: &str = "SELECT id, event_id, work_date, employee_id, department_id, punched_at, kind, source, \
     key_id, recorded_at, status, decided_by, os_user, db_user, decided_at, reason, record FROM held_punches";

fn held_of(row: mysql::Row) -> Result<Held> {
    let mut c = Cols::new(row, "held punch");
    Ok(Held {
        id: c.get(0)?,
        event_id: c.get(1)?,
        work_date: c.get(2)?,
        employee_id: c.get(3)?,
        department_id: c.get(4)?,
        at: c.get(5)?,
        kind: c.parse(6, |s| s.parse().ok())?,
        source: c.get(7)?,
        key_id: c.get(8)?,
        recorded_at: c.get(9)?,
        status: c.parse(10, Status::parse)?,
        decided_by: c.get(11)?,
        os_user: c.get(12)?,
        db_user: c.get(13)?,
        decided_at: c.get(14)?,
        reason: c.get(15)?,
        record: c.get(16)?,
    })
}

/// Which held punches: of one work date, one department, one recording key (each if given).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Filter<'a> {
    pub date: Option<NaiveDate>,
    pub dept: Option<&'a str>,
    pub key: Option<&'a str>,
}

/// Held punches matching `filter`, oldest first: pending only unless `all`.
pub(crate) fn list(conn: &mut impl Queryable, filter: Filter, all: bool) -> Result<Vec<Held>> {
    let Filter { date, dept, key } = filter;
    let rows: Vec<mysql::Row> = conn.exec(
        format!(
            "{SELECT} WHERE (? IS NULL OR work_date = ?) AND (? IS NULL OR department_id = ?) \
             AND (? IS NULL OR key_id = ?) AND (? OR status = 'pending') ORDER BY id"
        ),
        (date, date, dept, dept, key, key, all),
    )?;
    rows.into_iter().map(held_of).collect()
}

/// One held punch (`None`: no such id).
pub(crate) fn get(conn: &mut impl Queryable, id: u64) -> Result<Option<Held>> {
    let row: Option<mysql::Row> = conn.exec_first(format!("{SELECT} WHERE id = ?"), (id,))?;
    row.map(held_of).transpose()
}

/// One held punch, locked until the transaction ends (`None`: no such id).
pub(crate) fn lock(tx: &mut impl Queryable, id: u64) -> Result<Option<Held>> {
    let row: Option<mysql::Row> = tx.exec_first(format!("{SELECT} WHERE id = ? FOR UPDATE"), (id,))?;
    row.map(held_of).transpose()
}

/// The decision on a pending held punch, audited on its row (the MySQL account is the server's
/// own `CURRENT_USER()`); returns that account.
pub(crate) fn decide(
    tx: &mut impl Queryable,
    id: u64,
    status: Status,
    by: &str,
    os_user: &str,
    reason: Option<&str>,
) -> Result<String> {
    tx.exec_drop(
        "UPDATE held_punches SET status = ?, decided_by = ?, os_user = ?, db_user = CURRENT_USER(), \
         decided_at = UTC_TIMESTAMP(3), reason = ? WHERE id = ? AND status = 'pending'",
        (status.as_str(), by, os_user, reason, id),
    )?;
    super::audit::db_user(tx, "held_punches", id)
}

/// These held punches, locked until the transaction ends, whatever their status (one
/// statement: a bulk review locks a chunk at a time).
pub(crate) fn lock_many(tx: &mut impl Queryable, ids: &[u64]) -> Result<Vec<Held>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "{SELECT} WHERE id IN ({}) ORDER BY id FOR UPDATE",
        vec!["?"; ids.len()].join(",")
    );
    let rows: Vec<mysql::Row> = tx.exec(sql, ids.to_vec())?;
    rows.into_iter().map(held_of).collect()
}

/// [`decide`] for several pending held punches at once, each row audited alike; returns the
/// MySQL account the server wrote (empty when `ids` is).
pub(crate) fn decide_many(
    tx: &mut impl Queryable,
    ids: &[u64],
    status: Status,
    by: &str,
    os_user: &str,
    reason: Option<&str>,
) -> Result<String> {
    let Some(&first) = ids.first() else {
        return Ok(String::new());
    };
    let sql = format!(
        "UPDATE held_punches SET status = ?, decided_by = ?, os_user = ?, db_user = CURRENT_USER(), \
         decided_at = UTC_TIMESTAMP(3), reason = ? WHERE status = 'pending' AND id IN ({})",
        vec!["?"; ids.len()].join(",")
    );
    let mut params = vec![
        Value::from(status.as_str()),
        Value::from(by),
        Value::from(os_user),
        Value::from(reason),
    ];
    params.extend(ids.iter().map(|&id| Value::from(id)));
    tx.exec_drop(sql, params)?;
    super::audit::db_user(tx, "held_punches", first)
}

/// Pending held punches: of one work date, or of every date.
pub(crate) fn pending(conn: &mut impl Queryable, date: Option<NaiveDate>) -> Result<u64> {
    let n: Option<u64> = conn.exec_first(
        "SELECT COUNT(*) FROM held_punches WHERE status = 'pending' AND (? IS NULL OR work_date = ?)",
        (date, date),
    )?;
    Ok(n.unwrap_or(0))
}
