//! Pay periods as MySQL holds them: which months are closed, closing and reopening them with
//! their audit, and the refusal every change to a closed month meets.

use anyhow::Result;
use chrono::{Datelike, NaiveDate};
use mysql::prelude::Queryable;

use crate::error::Error;

/// The first day of `date`'s month.
fn month_of(date: NaiveDate) -> NaiveDate {
    date.with_day(1).unwrap_or(date)
}

/// The closed months that `from..=to` touches, first first.
pub(crate) fn closed_in(conn: &mut impl Queryable, from: NaiveDate, to: NaiveDate) -> Result<Vec<NaiveDate>> {
    Ok(conn.exec(
        "SELECT month FROM pay_periods WHERE closed AND month BETWEEN ? AND ? ORDER BY month",
        (month_of(from), month_of(to)),
    )?)
}

/// Whether every month `from..=to` touches is a closed pay period.
pub(crate) fn all_closed(conn: &mut impl Queryable, from: NaiveDate, to: NaiveDate) -> Result<bool> {
    let mut months = 0;
    let mut m = month_of(from);
    while m <= to {
        months += 1;
        m = m.checked_add_months(chrono::Months::new(1)).unwrap_or(NaiveDate::MAX);
    }
    Ok(closed_in(conn, from, to)?.len() == months)
}

/// Refuse (exit 1) a change of `what` to days in `from..=to` when a closed pay period holds one.
pub(crate) fn refuse_closed(conn: &mut impl Queryable, from: NaiveDate, to: NaiveDate, what: &str) -> Result<()> {
    if let Some(m) = closed_in(conn, from, to)?.first() {
        let m = m.format("%Y-%m");
        return Err(Error::refused(format!(
            "pay period {m} is closed: no {what} changes it (reopen it with `period reopen {m} --reason ...`)"
        ))
        .into());
    }
    Ok(())
}

/// Close or reopen `month` (its first day), with its audit row, in `tx`; `false` when it already
/// was so (nothing written).
pub(crate) fn set(
    tx: &mut impl Queryable,
    month: NaiveDate,
    close: bool,
    by: &str,
    os_user: &str,
    reason: &str,
) -> Result<bool> {
    let now: Option<bool> = tx.exec_first("SELECT closed FROM pay_periods WHERE month = ? FOR UPDATE", (month,))?;
    if now.unwrap_or(false) == close {
        return Ok(false);
    }
    tx.exec_drop(
        "INSERT INTO pay_periods (month, closed, changed_by) VALUES (?, ?, ?) \
         ON DUPLICATE KEY UPDATE closed = VALUES(closed), changed_by = VALUES(changed_by)",
        (month, close, by),
    )?;
    tx.exec_drop(
        "INSERT INTO pay_period_audit (month, action, by_employee, os_user, db_user, reason) \
         VALUES (?, ?, ?, ?, CURRENT_USER(), ?)",
        (month, if close { "close" } else { "reopen" }, by, os_user, reason),
    )?;
    Ok(true)
}
