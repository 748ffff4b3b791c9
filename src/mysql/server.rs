//! What `doctor` asks MySQL: the server's version and clock, which migrations are applied,
//! the departments of the roster and which past days settle has written.

use std::collections::BTreeSet;

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};
use mysql::prelude::Queryable;

/// The server's version string (`10.11.6-MariaDB-...`).
pub(crate) fn version(conn: &mut impl Queryable) -> Result<String> {
    Ok(conn.query_first("SELECT VERSION()")?.unwrap_or_default())
}

/// The server's clock. `UNIX_TIMESTAMP(NOW(6))` is an instant whatever the session's zone.
pub(crate) fn now(conn: &mut impl Queryable) -> Result<DateTime<Utc>> {
    let micros: i64 = conn
        .query_first("SELECT CAST(UNIX_TIMESTAMP(NOW(6)) * 1000000 AS SIGNED)")?
        .unwrap_or_default();
    DateTime::from_timestamp_micros(micros).ok_or_else(|| anyhow::anyhow!("MySQL's NOW() is out of range"))
}

/// Migrations this binary carries and those of them the database has not applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Migrations {
    pub known: Vec<String>,
    pub applied: Vec<String>,
    pub pending: Vec<String>,
}

/// Compare the embedded migrations with refinery's history table (absent: nothing applied).
pub(crate) fn migrations(conn: &mut mysql::PooledConn) -> Result<Migrations> {
    let runner = super::migrations::runner();
    let known: Vec<String> = runner.get_migrations().iter().map(|m| m.to_string()).collect();
    let has_history: Option<String> = conn.query_first(
        "SELECT TABLE_NAME FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'refinery_schema_history'",
    )?;
    let applied: Vec<String> = match has_history {
        Some(_) => runner
            .get_applied_migrations(conn)?
            .iter()
            .map(|m| m.to_string())
            .collect(),
        None => Vec::new(),
    };
    let pending = known.iter().filter(|m| !applied.contains(m)).cloned().collect();
    Ok(Migrations {
        known,
        applied,
        pending,
    })
}

/// Every department of the roster, by id.
pub(crate) fn departments(conn: &mut impl Queryable) -> Result<Vec<String>> {
    Ok(conn.query("SELECT id FROM departments ORDER BY id")?)
}

/// Active employees per department (departments without any are absent).
pub(crate) fn headcounts(conn: &mut impl Queryable) -> Result<std::collections::HashMap<String, u64>> {
    let rows: Vec<(String, u64)> =
        conn.query("SELECT department_id, COUNT(*) FROM employees WHERE active GROUP BY department_id")?;
    Ok(rows.into_iter().collect())
}

/// The days between `from` and `to` (both included) that a settle run finished cleanly.
pub(crate) fn settled_days(conn: &mut impl Queryable, from: NaiveDate, to: NaiveDate) -> Result<BTreeSet<NaiveDate>> {
    let days: Vec<NaiveDate> = conn.exec(
        "SELECT DISTINCT work_date FROM settle_runs WHERE outcome = 'ok' AND work_date BETWEEN ? AND ?",
        (from, to),
    )?;
    Ok(days.into_iter().collect())
}
