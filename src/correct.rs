//! Corrections: a supervisor fixes a settled day of one of their people. The row is recomputed
//! under the same rules as settle, marked corrected (so later settles keep it), and an audit
//! row keeps who, when, the old and new values and the reason, in the same transaction.

use anyhow::Result;
use chrono::{DateTime, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use chrono_tz::Tz;
use mysql::prelude::Queryable;
use mysql::{Pool, TxOpts};
use serde::Serialize;

use crate::config::Config;
use crate::db::{self, attendance};
use crate::error::Error;
use crate::{calendar, policy};

/// A correction as asked.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    pub employee_id: &'a str,
    pub date: NaiveDate,
    pub first_in: Option<DateTime<Utc>>,
    pub last_out: Option<DateTime<Utc>>,
    pub reason: &'a str,
    pub by: &'a str,
}

/// The row before and after.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub correction_id: u64,
    pub before: attendance::Stored,
    pub after: attendance::Stored,
}

/// A time given as HH:MM (local, on `date`) or RFC 3339.
pub fn parse_time(tz: Tz, date: NaiveDate, s: &str) -> Result<DateTime<Utc>, Error> {
    if let Ok(t) = NaiveTime::parse_from_str(s, "%H:%M") {
        let secs = policy::local_offset_secs(tz, date, t);
        return Ok(policy::instant(tz, date, secs).with_timezone(&Utc));
    }
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| Error::input(format!("invalid time '{s}': expected HH:MM or RFC 3339")))
}

/// The supervisor of an employee's department, if the employee exists: `Some(None)` when the
/// department has none.
fn supervisor_of(pool: &Pool, employee: &str) -> Result<Option<Option<String>>> {
    let mut conn = pool.get_conn()?;
    let r: Option<(String, Option<String>)> = conn.exec_first(
        "SELECT e.id, s.employee_id FROM employees e \
         LEFT JOIN supervisors s ON s.department_id = e.department_id WHERE e.id = ?",
        (employee,),
    )?;
    Ok(r.map(|(_, s)| s))
}

pub fn correct(cfg: &Config, pool: &Pool, req: &Request) -> Result<Outcome> {
    if req.first_in.is_none() && req.last_out.is_none() {
        return Err(Error::input("give --in, --out or both").into());
    }
    if req.reason.trim().is_empty() || req.reason.chars().count() > 500 {
        return Err(Error::input("--reason must say why, in at most 500 characters").into());
    }
    for t in [req.first_in, req.last_out].into_iter().flatten() {
        // The board files every punch under its local date; a correction does the same.
        let local = t.with_timezone(&cfg.timezone);
        if local.date_naive() != req.date {
            return Err(Error::input(format!(
                "{} is not on {} in {}",
                local.to_rfc3339(),
                req.date,
                cfg.timezone
            ))
            .into());
        }
    }
    match supervisor_of(pool, req.employee_id)? {
        None => return Err(Error::refused(format!("unknown employee '{}'", req.employee_id)).into()),
        Some(sup) if sup.as_deref() != Some(req.by) => {
            return Err(Error::refused(format!(
                "{} is not the supervisor of {}'s department: only they may correct this day",
                req.by, req.employee_id
            ))
            .into())
        }
        Some(_) => {}
    }
    let tz = cfg.timezone;
    let mut conn = pool.get_conn()?;
    let mut tx = conn.start_transaction(TxOpts::default())?;
    let before: Option<attendance::Stored> = tx
        .exec_first(
            format!(
                "{} WHERE work_date = ? AND employee_id = ? FOR UPDATE",
                attendance::SELECT_STORED
            ),
            (req.date, req.employee_id),
        )?
        .map(attendance::stored_from_row)
        .transpose()?;
    // The row, locked until the commit, is what the correction hangs on: no foreign key ties
    // a correction to its row since V5 (partitioning), and `archive --drop` deletes a row and
    // its corrections in one transaction, which waits for this lock.
    let Some(before) = before else {
        tx.rollback()?;
        return Err(Error::refused(format!(
            "{} has no settled row on {}: settle the day first",
            req.employee_id, req.date
        ))
        .into());
    };
    let first_in = req.first_in.map(|t| t.naive_utc()).or(before.first_in);
    let last_out = req.last_out.map(|t| t.naive_utc()).or(before.last_out);
    if let (Some(i), Some(o)) = (first_in, last_out) {
        if o < i {
            tx.rollback()?;
            return Err(Error::input(format!(
                "the check-out ({o} UTC) would come before the check-in ({i} UTC)"
            ))
            .into());
        }
    }
    let overrides = db::calendar::overrides(&mut tx, req.date, req.date)?;
    let workday = calendar::is_workday(&cfg.policy, &overrides, req.date);
    let on_leave = db::leave::on_leave(&mut tx, req.date)?.contains(req.employee_id);
    let start = policy::day_start(tz, req.date);
    let secs = |t: NaiveDateTime| (t.and_utc() - start).num_seconds();
    let o = policy::day_outcome(
        &cfg.policy,
        tz,
        req.date,
        workday,
        on_leave,
        first_in.map(secs),
        last_out.map(secs),
    );
    tx.exec_drop(
        "UPDATE attendance SET status = ?, first_in = ?, last_out = ?, late_minutes = ?, \
         early_minutes = ?, corrected = TRUE WHERE work_date = ? AND employee_id = ?",
        (
            o.status.as_str(),
            first_in,
            last_out,
            o.late_minutes,
            o.early_minutes,
            req.date,
            req.employee_id,
        ),
    )?;
    tx.exec_drop(
        "INSERT INTO corrections (work_date, employee_id, corrected_by, corrected_at, reason, old_status, \
         new_status, old_first_in, new_first_in, old_last_out, new_last_out) \
         VALUES (?, ?, ?, UTC_TIMESTAMP(), ?, ?, ?, ?, ?, ?, ?)",
        (
            req.date,
            req.employee_id,
            req.by,
            req.reason,
            before.status.as_str(),
            o.status.as_str(),
            before.first_in,
            first_in,
            before.last_out,
            last_out,
        ),
    )?;
    let correction_id = tx.last_insert_id().unwrap_or_default();
    tx.commit()?;
    let after = attendance::Stored {
        status: o.status,
        first_in,
        last_out,
        late_minutes: o.late_minutes,
        early_minutes: o.early_minutes,
        corrected: true,
        ..before.clone()
    };
    Ok(Outcome {
        correction_id,
        before,
        after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_local_hh_mm_or_rfc3339() {
        let tz = chrono_tz::Europe::Paris;
        let d = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let t = parse_time(tz, d, "18:15").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-20T17:15:00+00:00");
        assert_eq!(parse_time(tz, d, "2026-11-20T18:15:00+01:00").unwrap(), t);
        assert!(parse_time(tz, d, "6pm").is_err());
    }
}
