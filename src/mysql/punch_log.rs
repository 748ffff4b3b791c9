//! The punch log (`punch_log`): every punch of a settled day with where it came from (source,
//! key id), when it was recorded, its event id and how it came. Written by settle (insert-or-
//! ignore on the event id, so a rerun writes nothing twice) and by `correct`; read by
//! `report punches`.

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;
use mysql::Value;

use super::placeholders;
use super::typed::Cols;
use crate::domain::event::punch_log::Entry;

/// Rows per multi-row INSERT: 10 values each, well under 65,535 placeholders.
const CHUNK: usize = 1000;

const COLUMNS: &str =
    "event_id, work_date, employee_id, department_id, punched_at, kind, source, key_id, recorded_at, how";

/// Write a settled day's entries; one already there (same event id and day) is left as it was.
/// Returns how many were new. One `LOAD DATA LOCAL INFILE` (MySQL's fastest bulk path; LOCAL
/// skips a duplicate key and adjusts a bad value with a warning, as INSERT IGNORE does), or
/// [`insert`] when the server refuses LOCAL: a load cut half-way leaves rows that it skips.
///
/// On a connection of its own with settle's patience (`retry`): `conn` is taken
/// from `db`'s pool when `None` and kept after a success; a failed attempt abandons its
/// connection (its socket shut when the server stalled, so that nothing waits on it again) and
/// the next takes a fresh one. What still fails is a service error (exit 3) naming the attempt,
/// as a failed batch of rows is.
pub(crate) fn insert_day_patiently(
    db: &super::Db,
    conn: &mut Option<super::Conn>,
    entries: &[Entry],
    retry: super::Retry,
) -> Result<u64> {
    if entries.is_empty() {
        return Ok(0);
    }
    let attempts = retry.attempts.max(1);
    retry
        .run(
            |e: &mysql::Error| !super::failure::out_of_space(e),
            || {
                let mut c = match conn.take() {
                    Some(c) => c,
                    None => db.get_conn()?,
                };
                let socket = std::os::unix::io::AsRawFd::as_raw_fd(&*c);
                let done = match load(&mut c, entries) {
                    // The server refuses LOCAL (local_infile off): the INSERT path.
                    Err(mysql::Error::MySqlError(_)) => insert_rows(&mut c, entries),
                    r => r,
                };
                match done {
                    Ok(n) => {
                        *conn = Some(c);
                        Ok(n)
                    }
                    Err(e) => {
                        super::conn::abandon_if_stalled(socket, &e);
                        Err(e)
                    }
                }
            },
        )
        .map_err(|(e, attempt)| {
            crate::error::Error::service(
                crate::error::Service::Mysql,
                format!(
                    "writing the punch log: {} (attempt {attempt} of {attempts})",
                    super::failure::detail(&e)
                ),
            )
            .into()
        })
}

/// LOAD DATA LOCAL INFILE of the entries; the rows added.
fn load(conn: &mut super::Conn, entries: &[Entry]) -> mysql::Result<u64> {
    let data = std::sync::Arc::new(tsv(entries).into_bytes());
    conn.set_local_infile_handler(Some(mysql::LocalInfileHandler::new(move |_, w| {
        std::io::Write::write_all(w, &data)
    })));
    let loaded = conn.query_iter(format!(
        "LOAD DATA LOCAL INFILE 'punch_log.tsv' INTO TABLE punch_log CHARACTER SET utf8mb4 ({COLUMNS})"
    ));
    let added = loaded.map(|r| r.affected_rows());
    conn.set_local_infile_handler(None);
    added
}

/// The entries as LOAD DATA reads them: a line each, fields tab-separated, `\N` for NULL.
fn tsv(entries: &[Entry]) -> String {
    use super::attendance::{push_datetime, tsv_escape};
    use std::fmt::Write;
    let mut out = String::with_capacity(entries.len() * 160);
    for e in entries {
        tsv_escape(&mut out, &e.event_id);
        out.push('\t');
        let _ = write!(out, "{}\t", e.work_date.format("%Y-%m-%d"));
        tsv_escape(&mut out, &e.employee_id);
        out.push('\t');
        tsv_escape(&mut out, &e.department_id);
        out.push('\t');
        push_datetime(&mut out, e.at, ' ');
        out.push('\t');
        out.push_str(e.kind.as_str());
        out.push('\t');
        tsv_escape(&mut out, &e.source);
        out.push('\t');
        match &e.key_id {
            Some(k) => tsv_escape(&mut out, k),
            None => out.push_str("\\N"),
        }
        out.push('\t');
        push_datetime(&mut out, e.recorded_at, ' ');
        let _ = write!(out, ".{:03}\t", e.recorded_at.and_utc().timestamp_subsec_millis());
        out.push_str(e.how.as_str());
        out.push('\n');
    }
    out
}

/// Write these entries with multi-row INSERT IGNOREs; one already there (same event id and day)
/// is left as it was. Returns how many were new.
pub(crate) fn insert(conn: &mut impl Queryable, entries: &[Entry]) -> Result<u64> {
    Ok(insert_rows(conn, entries)?)
}

fn insert_rows(conn: &mut impl Queryable, entries: &[Entry]) -> mysql::Result<u64> {
    let mut added = 0;
    for chunk in entries.chunks(CHUNK) {
        let sql = format!(
            "INSERT IGNORE INTO punch_log ({COLUMNS}) VALUES {}",
            placeholders(chunk.len(), 10)
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|e| {
                [
                    Value::from(&e.event_id),
                    Value::from(e.work_date),
                    Value::from(&e.employee_id),
                    Value::from(&e.department_id),
                    Value::from(e.at),
                    Value::from(e.kind.as_str()),
                    Value::from(&e.source),
                    Value::from(e.key_id.as_deref()),
                    Value::from(e.recorded_at),
                    Value::from(e.how.as_str()),
                ]
            })
            .collect();
        added += conn.exec_iter(sql, params)?.affected_rows();
    }
    Ok(added)
}

/// One row of the punch log as a report shows it.
pub(crate) struct Logged {
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub department_id: String,
    pub at: NaiveDateTime,
    pub kind: String,
    pub source: String,
    pub key_id: Option<String>,
    pub recorded_at: NaiveDateTime,
    pub event_id: String,
    pub how: String,
}

/// The punches of days in a range, of one employee and/or one department, in time order.
pub(crate) fn list(
    conn: &mut impl Queryable,
    from: NaiveDate,
    to: NaiveDate,
    employee: Option<&str>,
    dept: Option<&str>,
) -> Result<Vec<Logged>> {
    let rows: Vec<mysql::Row> = conn.exec(
        "SELECT work_date, employee_id, department_id, punched_at, kind, source, key_id, recorded_at, \
         event_id, how FROM punch_log WHERE work_date BETWEEN ? AND ? \
         AND (? IS NULL OR employee_id = ?) AND (? IS NULL OR department_id = ?) \
         ORDER BY punched_at, employee_id, recorded_at, event_id",
        (from, to, employee, employee, dept, dept),
    )?;
    rows.into_iter()
        .map(|r| {
            let mut c = Cols::new(r, "punch log row");
            Ok(Logged {
                work_date: c.get(0)?,
                employee_id: c.get(1)?,
                department_id: c.get(2)?,
                at: c.get(3)?,
                kind: c.get(4)?,
                source: c.get(5)?,
                key_id: c.get(6)?,
                recorded_at: c.get(7)?,
                event_id: c.get(8)?,
                how: c.get(9)?,
            })
        })
        .collect()
}

/// Which of `ids` MySQL's punch log holds for `date` (a day settled before): settle's
/// reconciliation with the journal restores none of those.
pub(crate) fn logged_ids(
    conn: &mut impl Queryable,
    date: NaiveDate,
    ids: &[&str],
) -> Result<std::collections::HashSet<String>> {
    let mut found = std::collections::HashSet::new();
    for chunk in ids.chunks(1_000) {
        let sql = format!(
            "SELECT event_id FROM punch_log WHERE work_date = ? AND event_id IN ({})",
            vec!["?"; chunk.len()].join(",")
        );
        let params: Vec<Value> = std::iter::once(Value::from(date))
            .chain(chunk.iter().map(|id| Value::from(*id)))
            .collect();
        found.extend(conn.exec::<String, _, _>(sql, params)?);
    }
    Ok(found)
}
