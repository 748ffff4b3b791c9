//! The rulebook's rows (`migrations/V17`): read whole (a few rows a year), and one added by
//! `policy set` with who set it, why and what it replaced.

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;
use serde::Serialize;

use crate::domain::day::rulebook::{Rulebook, Version};
use crate::mysql::{Db, Tx};

/// One row as `policy history` shows it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    #[serde(rename = "version_id")]
    pub id: u64,
    pub key: String,
    pub value: String,
    pub from: NaiveDate,
    pub reason: String,
    pub os_user: String,
    pub employee_id: Option<String>,
    pub db_user: String,
    /// UTC, shown in the company's zone.
    #[serde(serialize_with = "instant")]
    pub set_at: NaiveDateTime,
    pub before: Option<String>,
}

fn instant<S: serde::Serializer>(t: &NaiveDateTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::domain::instant::utc_text(*t))
}

/// A row to add (the server fills in its id, `db_user` and `set_at`).
pub(crate) struct NewRow<'a> {
    pub key: &'a str,
    pub value: &'a str,
    pub from: NaiveDate,
    pub reason: &'a str,
    pub os_user: &'a str,
    pub employee_id: Option<&'a str>,
    pub before: Option<&'a str>,
}

/// Every row, in the order they were set.
pub(crate) fn history(conn: &mut impl Queryable) -> Result<Vec<Row>> {
    type Raw = (
        u64,
        String,
        String,
        NaiveDate,
        String,
        String,
        Option<String>,
        String,
        NaiveDateTime,
        Option<String>,
    );
    let rows: Vec<Raw> = conn.query(
        "SELECT id, policy_key, value, from_date, reason, os_user, employee_id, db_user, set_at, before_value \
         FROM policy_versions ORDER BY id",
    )?;
    Ok(rows
        .into_iter()
        .map(
            |(id, key, value, from, reason, os_user, employee_id, db_user, set_at, before)| Row {
                id,
                key,
                value,
                from,
                reason,
                os_user,
                employee_id,
                db_user,
                set_at,
                before,
            },
        )
        .collect())
}

/// The rulebook: every version, in the order they were set.
pub(crate) fn rulebook(conn: &mut impl Queryable) -> Result<Rulebook> {
    book(conn.query("SELECT policy_key, value, from_date FROM policy_versions ORDER BY id")?)
}

/// The rulebook of rows `(key, value, from)`, in the order they were set.
fn book(rows: Vec<(String, String, NaiveDate)>) -> Result<Rulebook> {
    Ok(Rulebook {
        versions: rows
            .into_iter()
            .map(|(key, value, from)| Version { key, value, from })
            .collect(),
    })
}

/// Every version's date and id, `(from, id)`: which version judged a day (`rulebook::version_on`).
pub(crate) fn version_dates(conn: &mut impl Queryable) -> Result<Vec<(NaiveDate, u64)>> {
    Ok(conn.query("SELECT from_date, id FROM policy_versions")?)
}

/// [`rulebook`] on a connection of its own.
pub(crate) fn read(db: &Db) -> Result<Rulebook> {
    rulebook(&mut db.conn()?)
}

/// The rulebook inside `tx`, its rows locked against a concurrent `policy set` (two owners
/// setting keys at once cannot leave a clash that neither checked).
pub(crate) fn locked(tx: &mut Tx) -> Result<Rulebook> {
    book(tx.query("SELECT policy_key, value, from_date FROM policy_versions ORDER BY id FOR UPDATE")?)
}

/// Add a row in `tx` (an account without INSERT on the table is refused there, exit 1); the
/// row as stored.
pub(crate) fn add(tx: &mut Tx, r: &NewRow) -> Result<Row> {
    let (id, _) = crate::mysql::audit::insert(
        tx,
        "policy_versions",
        "INSERT INTO policy_versions (policy_key, value, from_date, reason, os_user, employee_id, db_user, \
         set_at, before_value) VALUES (?, ?, ?, ?, ?, ?, CURRENT_USER(), UTC_TIMESTAMP(6), ?)",
        (r.key, r.value, r.from, r.reason, r.os_user, r.employee_id, r.before),
    )?;
    history(tx)?
        .into_iter()
        .find(|row| row.id == id)
        .ok_or_else(|| anyhow::anyhow!("the rulebook's new row {id} was not read back"))
}
