//! Calendar queries: the overrides of the policy's week.

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;
use mysql::{TxOpts, Value};

use crate::domain::day::workdays::{DayKind, Entry, Overrides};
use crate::error::Error;
use crate::mysql::placeholders;
use crate::mysql::Db;

/// Set the entries, all in one transaction: a file lands whole or not at all.
pub(crate) fn upsert(pool: &Db, entries: &[Entry]) -> Result<()> {
    let mut conn = pool.get_conn()?;
    let mut tx = conn.start_transaction(TxOpts::default())?;
    for chunk in entries.chunks(1_000) {
        let sql = format!(
            "INSERT INTO calendar_days (day, kind, note) VALUES {} \
             ON DUPLICATE KEY UPDATE kind = VALUES(kind), note = VALUES(note)",
            placeholders(chunk.len(), 3)
        );
        let params: Vec<Value> = chunk
            .iter()
            .flat_map(|e| [Value::from(e.date), Value::from(e.kind.as_str()), Value::from(&e.note)])
            .collect();
        tx.exec_drop(sql, params)?;
    }
    tx.commit()?;
    Ok(())
}

/// Remove a day's entry, in one transaction: the kind it had, `None` if it had none.
pub(crate) fn remove(pool: &Db, date: NaiveDate) -> Result<Option<DayKind>> {
    let mut conn = pool.get_conn()?;
    let mut tx = conn.start_transaction(TxOpts::default())?;
    let kind = overrides(&mut tx, date, date)?.remove(&date).map(|e| e.kind);
    if kind.is_some() {
        tx.exec_drop("DELETE FROM calendar_days WHERE day = ?", (date,))?;
    }
    tx.commit()?;
    Ok(kind)
}

/// The entries between two dates, both included.
pub(crate) fn overrides(conn: &mut impl Queryable, from: NaiveDate, to: NaiveDate) -> Result<Overrides> {
    let rows: Vec<(NaiveDate, String, String)> = conn.exec(
        "SELECT day, kind, note FROM calendar_days WHERE day BETWEEN ? AND ? ORDER BY day",
        (from, to),
    )?;
    rows.into_iter()
        .map(|(date, kind, note)| {
            // The column is an ENUM: another value means the table was changed by hand.
            let kind =
                DayKind::parse(&kind).map_err(|why| Error::internal(format!("calendar_days row {date}: {why}")))?;
            Ok((date, Entry { date, kind, note }))
        })
        .collect()
}

/// The calendar entry of `date` as the shifts read it (`domain::day::workdays::entry`).
pub(crate) fn entry(conn: &mut impl Queryable, date: NaiveDate) -> Result<Option<bool>> {
    Ok(crate::domain::day::workdays::entry(&overrides(conn, date, date)?, date))
}
