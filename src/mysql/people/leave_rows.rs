//! Leave queries: approved leave, both ends included; cancelling keeps the row.

use std::collections::HashSet;

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;
use mysql::TxOpts;
use serde::Serialize;

use crate::domain::day::worked::{Half, Leave as DayLeave};
use crate::mysql::typed::Cols;
use crate::mysql::Db;

/// One leave as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Leave {
    #[serde(rename = "leave_id")]
    pub id: u64,
    pub employee_id: String,
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub kind: String,
    pub note: String,
    pub status: String,
    /// UTC.
    #[serde(serialize_with = "crate::domain::instant::utc")]
    pub created_at: NaiveDateTime,
}

/// A leave to add.
#[derive(Debug, Clone)]
pub(crate) struct NewLeave<'a> {
    pub employee_id: &'a str,
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub kind: &'a str,
    pub note: &'a str,
    /// `morning` or `afternoon`: half of each day off; `None`: whole days.
    pub half: Option<&'a str>,
}

/// What [`add`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Added {
    /// A new leave, with its id.
    New(u64),
    /// The very same leave (dates and kind) was already approved: its id. Scripts rerun.
    Repeat(u64),
    /// Another approved leave overlaps: nothing was written.
    Overlaps(Leave),
    /// No such employee: nothing was written.
    UnknownEmployee,
}

/// Add an approved leave unless another approved one overlaps it: the rule and the insert are
/// one transaction, which locks the employee's row so two adds for one employee cannot both
/// pass the check.
pub(crate) fn add(pool: &Db, l: &NewLeave) -> Result<Added> {
    let mut conn = pool.get_conn()?;
    let mut tx = conn.start_transaction(TxOpts::default())?;
    let known: Option<String> = tx.exec_first("SELECT id FROM employees WHERE id = ? FOR UPDATE", (l.employee_id,))?;
    if known.is_none() {
        tx.rollback()?;
        return Ok(Added::UnknownEmployee);
    }
    let rows: Vec<mysql::Row> = tx.exec(
        format!("{SELECT_LEAVE} WHERE employee_id = ? AND status = 'approved' AND to_date >= ? AND from_date <= ? ORDER BY from_date DESC, id DESC"),
        (l.employee_id, l.from, l.to),
    )?;
    let overlapping = rows.into_iter().map(leave_from_row).collect::<Result<Vec<_>>>()?;
    let same = overlapping
        .iter()
        .find(|o| o.from == l.from && o.to == l.to && o.kind == l.kind);
    let added = match (same, overlapping.first()) {
        (Some(o), _) => Added::Repeat(o.id),
        (None, Some(o)) => Added::Overlaps(o.clone()),
        (None, None) => {
            tx.exec_drop(
                "INSERT INTO leaves (employee_id, from_date, to_date, kind, half, note, created_at) \
                 VALUES (?, ?, ?, ?, ?, ?, UTC_TIMESTAMP())",
                (l.employee_id, l.from, l.to, l.kind, l.half, l.note),
            )?;
            Added::New(tx.last_insert_id().unwrap_or_default())
        }
    };
    tx.commit()?;
    Ok(added)
}

/// Book one day of approved leave of `kind` in a correction's transaction, so that the day set
/// on leave by hand counts under its kind: nothing to do when an approved whole day of that kind
/// already covers it; refused (exit 1) when another approved leave covers it.
pub(crate) fn book_day(
    tx: &mut impl Queryable,
    employee: &str,
    date: NaiveDate,
    kind: &str,
    reason: &str,
) -> Result<()> {
    let covering: Vec<(String, Option<String>)> = tx.exec(
        "SELECT kind, half FROM leaves WHERE employee_id = ? AND status = 'approved' \
         AND from_date <= ? AND to_date >= ? FOR UPDATE",
        (employee, date, date),
    )?;
    match covering.first() {
        Some((k, None)) if k == kind => Ok(()),
        Some((k, half)) => Err(crate::error::Error::refused(format!(
            "{employee} already has approved {}leave of kind {k} on {date}: cancel it or correct without --leave-kind",
            if half.is_some() { "half-day " } else { "" }
        ))
        .into()),
        None => {
            let note: String = format!("correction: {reason}").chars().take(200).collect();
            tx.exec_drop(
                "INSERT INTO leaves (employee_id, from_date, to_date, kind, note, created_at) \
                 VALUES (?, ?, ?, ?, ?, UTC_TIMESTAMP())",
                (employee, date, date, kind, note),
            )?;
            Ok(())
        }
    }
}

const SELECT_LEAVE: &str = "SELECT id, employee_id, from_date, to_date, kind, note, status, created_at FROM leaves";

fn leave_from_row(r: mysql::Row) -> Result<Leave> {
    let mut c = Cols::new(r, "leaves row");
    Ok(Leave {
        id: c.get(0)?,
        employee_id: c.get(1)?,
        from: c.get(2)?,
        to: c.get(3)?,
        kind: c.get(4)?,
        note: c.get(5)?,
        status: c.get(6)?,
        created_at: c.get(7)?,
    })
}

/// Leaves, newest range first, optionally of one employee, overlapping a range, approved only.
pub(crate) fn list(
    pool: &Db,
    employee: Option<&str>,
    from: Option<NaiveDate>,
    to: Option<NaiveDate>,
    approved_only: bool,
) -> Result<Vec<Leave>> {
    let mut conn = pool.get_conn()?;
    let rows: Vec<mysql::Row> = conn.exec(
        format!(
            "{SELECT_LEAVE} WHERE (? IS NULL OR employee_id = ?) AND (? IS NULL OR to_date >= ?) \
             AND (? IS NULL OR from_date <= ?) AND (NOT ? OR status = 'approved') \
             ORDER BY from_date DESC, id DESC"
        ),
        (employee, employee, from, from, to, to, approved_only),
    )?;
    rows.into_iter().map(leave_from_row).collect()
}

/// One leave by id.
pub(crate) fn get(pool: &Db, id: u64) -> Result<Option<Leave>> {
    let mut conn = pool.get_conn()?;
    let row: Option<mysql::Row> = conn.exec_first(format!("{SELECT_LEAVE} WHERE id = ?"), (id,))?;
    row.map(leave_from_row).transpose()
}

/// Cancel a leave. `None`: no such leave; `Some(false)`: it was already cancelled.
pub(crate) fn cancel(pool: &Db, id: u64) -> Result<Option<bool>> {
    let mut conn = pool.get_conn()?;
    let status: Option<String> = conn.exec_first("SELECT status FROM leaves WHERE id = ?", (id,))?;
    match status.as_deref() {
        None => Ok(None),
        Some("cancelled") => Ok(Some(false)),
        Some(_) => {
            conn.exec_drop(
                "UPDATE leaves SET status = 'cancelled', cancelled_at = UTC_TIMESTAMP() WHERE id = ?",
                (id,),
            )?;
            Ok(Some(true))
        }
    }
}

/// The employees on approved leave on a day.
pub(crate) fn on_leave(conn: &mut impl Queryable, date: NaiveDate) -> Result<HashSet<String>> {
    Ok(conn
        .exec(
            "SELECT DISTINCT employee_id FROM leaves \
             WHERE status = 'approved' AND half IS NULL AND from_date <= ? AND to_date >= ?",
            (date, date),
        )?
        .into_iter()
        .collect())
}

/// Approved whole days of leave, by employee: the kind of leave of each day a report reads
/// that was settled on leave (approved leave never overlaps, so a date has one at most; were
/// two to, the first booked would count).
#[derive(Debug, Default)]
pub(crate) struct WholeDays(std::collections::HashMap<String, Vec<(NaiveDate, NaiveDate, String)>>);

impl WholeDays {
    /// The kind of the approved whole day of leave `employee` has on `date`, if any.
    pub(crate) fn kind_on(&self, employee: &str, date: NaiveDate) -> Option<&str> {
        self.0
            .get(employee)?
            .iter()
            .find(|(f, t, _)| *f <= date && date <= *t)
            .map(|(_, _, k)| k.as_str())
    }
}

/// The approved whole days of leave that touch `from..=to` of the employees `filter` selects (a
/// condition on `employee_id`, with its `params`).
pub(crate) fn whole_days(
    conn: &mut impl Queryable,
    filter: &str,
    mut params: Vec<mysql::Value>,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<WholeDays> {
    params.extend([to.into(), from.into()]);
    let rows: Vec<(String, NaiveDate, NaiveDate, String)> = conn.exec(
        format!(
            "SELECT employee_id, from_date, to_date, kind FROM leaves WHERE {filter} \
             AND status = 'approved' AND half IS NULL AND from_date <= ? AND to_date >= ? ORDER BY id"
        ),
        params,
    )?;
    let mut out = WholeDays::default();
    for (e, f, t, k) in rows {
        out.0.entry(e).or_default().push((f, t, k));
    }
    Ok(out)
}

/// Approved half days of leave over a range, by employee: what a report asks of every row it
/// reads (approved leave never overlaps, so a date has one at most).
#[derive(Debug, Default)]
pub(crate) struct HalfDays(std::collections::HashMap<String, Vec<(NaiveDate, NaiveDate, Half, String)>>);

impl HalfDays {
    /// The leave `employee` has on `date` as far as the day's hours go: half of it, or none
    /// (a whole day of leave does not change what the day was due).
    pub(crate) fn on(&self, employee: &str, date: NaiveDate) -> DayLeave {
        self.half_on(employee, date)
            .map_or(DayLeave::None, |(h, _)| DayLeave::Half(h))
    }

    /// The half day of leave `employee` has on `date`, and its kind.
    pub(crate) fn half_on(&self, employee: &str, date: NaiveDate) -> Option<(Half, &str)> {
        self.0
            .get(employee)?
            .iter()
            .find(|(f, t, ..)| *f <= date && date <= *t)
            .map(|(_, _, h, k)| (*h, k.as_str()))
    }
}

/// The approved half days of leave that touch `from..=to`.
pub(crate) fn half_days(conn: &mut impl Queryable, from: NaiveDate, to: NaiveDate) -> Result<HalfDays> {
    let rows: Vec<(String, NaiveDate, NaiveDate, String, String)> = conn.exec(
        "SELECT employee_id, from_date, to_date, half, kind FROM leaves \
         WHERE status = 'approved' AND half IS NOT NULL AND from_date <= ? AND to_date >= ?",
        (to, from),
    )?;
    let mut out = HalfDays::default();
    for (e, f, t, h, k) in rows {
        if let Some(h) = Half::parse(&h) {
            out.0.entry(e).or_default().push((f, t, h, k));
        }
    }
    Ok(out)
}

/// Who is on half-day leave on `date`, and whether it is the morning (`true`) or the afternoon.
pub(crate) fn half_leave(
    conn: &mut impl Queryable,
    date: NaiveDate,
) -> Result<std::collections::HashMap<String, bool>> {
    let rows: Vec<(String, String)> = conn.exec(
        "SELECT employee_id, half FROM leaves \
         WHERE status = 'approved' AND half IS NOT NULL AND from_date <= ? AND to_date >= ?",
        (date, date),
    )?;
    Ok(rows.into_iter().map(|(e, h)| (e, h == "morning")).collect())
}
