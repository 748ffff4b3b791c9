//! The MySQL side of `archive`: the tables of the days before a date, streamed row by row in
//! one transaction (locked when they are to be deleted), and their deletion in that same
//! transaction, so that a row never outlives its corrections nor a correction its row (nor
//! the punch log its day's rows, nor a held punch and its review its day).

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;
use mysql::{Transaction, TxOpts, Value};

/// What one archive holds, in the order it is read and written. Each entry: the file stem
/// and the query of the days before the date (`{before}` is replaced by the quoted date).
pub(crate) const TABLES: [(&str, &str); 6] = [
    (
        "attendance",
        "SELECT * FROM attendance WHERE work_date < {before} ORDER BY work_date, employee_id",
    ),
    (
        "corrections",
        "SELECT * FROM corrections WHERE work_date < {before} ORDER BY id",
    ),
    (
        "punch_log",
        "SELECT * FROM punch_log WHERE work_date < {before} ORDER BY work_date, punched_at, event_id",
    ),
    (
        "held_punches",
        "SELECT * FROM held_punches WHERE work_date < {before} ORDER BY id",
    ),
    (
        "settle_runs",
        "SELECT * FROM settle_runs WHERE work_date < {before} ORDER BY id",
    ),
    (
        "settle_failures",
        "SELECT * FROM settle_failures WHERE run_id IN (SELECT id FROM settle_runs WHERE work_date < {before}) \
         ORDER BY id",
    ),
];

/// Deletes in an order no remaining foreign key objects to: failures before their runs.
const DELETES: [(&str, &str); 6] = [
    ("corrections", "DELETE FROM corrections WHERE work_date < {before}"),
    ("punch_log", "DELETE FROM punch_log WHERE work_date < {before}"),
    ("held_punches", "DELETE FROM held_punches WHERE work_date < {before}"),
    ("attendance", "DELETE FROM attendance WHERE work_date < {before}"),
    (
        "settle_failures",
        "DELETE FROM settle_failures WHERE run_id IN (SELECT id FROM settle_runs WHERE work_date < {before})",
    ),
    ("settle_runs", "DELETE FROM settle_runs WHERE work_date < {before}"),
];

fn with_date(sql: &str, before: NaiveDate) -> String {
    // A NaiveDate prints only digits and dashes: safe to inline. The text protocol is what
    // makes MariaDB format every value (dates, enums, decimals) the way it reads them back.
    sql.replace("{before}", &format!("'{before}'"))
}

/// The transaction an archive reads in. To delete, every row read is locked (FOR UPDATE),
/// so that what is deleted is exactly what was written to the files, and a correction or a
/// settle of those days waits for the commit. To only read, a consistent snapshot.
pub(crate) fn begin(conn: &mut mysql::PooledConn, for_delete: bool) -> Result<Transaction<'_>> {
    let opts = if for_delete {
        TxOpts::default()
    } else {
        TxOpts::default()
            .set_with_consistent_snapshot(true)
            .set_access_mode(Some(mysql::AccessMode::ReadOnly))
    };
    Ok(conn.start_transaction(opts)?)
}

/// A value as MariaDB's text protocol sent it; NULL as `\N`, which LOAD DATA reads back as NULL.
fn text(v: &Value) -> String {
    match v {
        Value::NULL => "\\N".into(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => other.as_sql(true).trim_matches('\'').to_string(),
    }
}

/// Stream the rows of one of [`TABLES`] to `row` (first the column names); returns the rows.
pub(crate) fn export(
    tx: &mut Transaction<'_>,
    query: &str,
    before: NaiveDate,
    for_delete: bool,
    mut row: impl FnMut(&[String]) -> Result<()>,
) -> Result<u64> {
    let mut sql = with_date(query, before);
    if for_delete {
        sql.push_str(" FOR UPDATE");
    }
    let mut result = tx.query_iter(sql)?;
    let header: Vec<String> = result
        .columns()
        .as_ref()
        .iter()
        .map(|c| c.name_str().into_owned())
        .collect();
    row(&header)?;
    let mut n = 0u64;
    if let Some(set) = result.iter() {
        for r in set {
            let values: Vec<String> = r?.unwrap().iter().map(text).collect();
            row(&values)?;
            n += 1;
        }
    }
    Ok(n)
}

/// The rows one of [`TABLES`]' queries would export (`archive --dry-run`), read without a lock.
pub(crate) fn count(tx: &mut Transaction<'_>, query: &str, before: NaiveDate) -> Result<u64> {
    let n: Option<u64> = tx.query_first(format!(
        "SELECT COUNT(*) FROM ({}) AS rows_before",
        with_date(query, before)
    ))?;
    Ok(n.unwrap_or(0))
}

/// Delete the archived days; returns the rows deleted per table, in [`TABLES`]' names.
pub(crate) fn delete(tx: &mut Transaction<'_>, before: NaiveDate) -> Result<Vec<(&'static str, u64)>> {
    let mut deleted = Vec::new();
    for (table, sql) in DELETES {
        tx.query_drop(with_date(sql, before))?;
        deleted.push((table, tx.affected_rows()));
    }
    Ok(deleted)
}
