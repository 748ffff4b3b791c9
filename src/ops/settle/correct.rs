//! Corrections: a supervisor fixes a settled day of one of their people. The row is recomputed
//! under the same rules as settle, marked corrected (so later settles keep it), and an audit
//! row keeps who, when, the old and new values and the reason, in the same transaction.

use anyhow::Result;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::config::Config;
use crate::domain::dates::TypedTime;
use crate::domain::day::policy::DayStatus;
use crate::domain::day::shifts::Shifts;
use crate::domain::people::authority::{self, Actor};
use crate::domain::punch::Kind;
use crate::domain::{day::workdays, event::punch_log};
use crate::error::Error;
use crate::mysql::attendance::{self, Stored};
use crate::mysql::people::leave_rows;
use crate::mysql::people::roster_rows::Member;
use crate::mysql::{corrections, Conn, Tx};
use crate::ops::settle::rows;
use std::sync::Arc;

/// A correction as asked.
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    pub employee_id: &'a str,
    pub date: NaiveDate,
    pub first_in: Option<DateTime<Utc>>,
    pub last_out: Option<DateTime<Utc>>,
    /// Clear the check-in (`--clear-in`) or the check-out (`--clear-out`).
    pub clear_in: bool,
    pub clear_out: bool,
    /// Set the day's status (absent or on leave), its times cleared.
    pub status: Option<DayStatus>,
    /// With `status` on leave: the leave's kind, booked as an approved leave of the day.
    pub leave_kind: Option<&'a str>,
    pub reason: &'a str,
    /// The employee the caller says they are: if given, it must be the one the roster maps
    /// to `os_user`.
    pub by: Option<&'a str>,
    /// The operating-system account running the command (see [`os_user`]): who acts.
    pub os_user: &'a str,
}

/// The row before and after, and who made the change as the systems saw it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Outcome {
    pub correction_id: u64,
    /// The employee who corrected: the one the roster maps to `os_user`.
    pub by: String,
    pub os_user: String,
    /// The MySQL account that wrote it.
    pub db_user: String,
    pub before: attendance::Stored,
    pub after: attendance::Stored,
}

/// A typed time placed on the corrected day (`HH:MM` means that day's), refused (exit 2) where
/// the clocks skip it or pass it twice.
pub(crate) fn parse_time(tz: Tz, date: NaiveDate, t: TypedTime) -> Result<DateTime<Utc>, Error> {
    t.instant(tz, date).map_err(Error::input)
}

/// The checks that need no database: something to change, a reason, times on the day.
fn check_request(cfg: &Config, req: &Request) -> Result<(), Error> {
    let nothing = req.first_in.is_none() && req.last_out.is_none() && !req.clear_in && !req.clear_out;
    if nothing && req.status.is_none() {
        return Err(Error::input("give --in, --out, --clear-in, --clear-out or --status"));
    }
    if req
        .status
        .is_some_and(|s| !matches!(s, DayStatus::Absent | DayStatus::OnLeave))
    {
        return Err(Error::input("--status sets absent or leave only"));
    }
    if req.leave_kind.is_some() && req.status != Some(DayStatus::OnLeave) {
        return Err(Error::input("--leave-kind goes with --status leave"));
    }
    crate::domain::text::check("--reason", req.reason).map_err(Error::input)?;
    if req.reason.trim().is_empty() || req.reason.chars().count() > 500 {
        return Err(Error::input("--reason must say why, in at most 500 characters"));
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
            )));
        }
    }
    Ok(())
}

/// Who acts: the employee the roster maps to the account running the command; `--by`, if
/// given, must name them. Then whether they may correct this day (`domain::people::authority`).
fn check_authority(conn: &mut Conn, tz: Tz, req: &Request) -> Result<Actor> {
    let on = (req.employee_id, req.date);
    crate::ops::lookup::acting(conn, tz, req.os_user, req.by, on, authority::may_correct)
}

/// The row with the corrected times, recomputed under the same rules as settle.
fn recompute(cfg: &Config, tx: &mut Tx, req: &Request, before: &Stored) -> Result<Stored> {
    if let Some(status) = req.status {
        // A status set by hand is the day's: no time, no lateness, kept by later settles.
        return Ok(Stored {
            status,
            first_in: None,
            last_out: None,
            late_minutes: 0,
            early_minutes: 0,
            corrected: true,
            ..before.clone()
        });
    }
    let kept = |clear: bool, t: Option<NaiveDateTime>| if clear { None } else { t };
    let first_in = req
        .first_in
        .map(|t| t.naive_utc())
        .or(kept(req.clear_in, before.first_in));
    let last_out = req
        .last_out
        .map(|t| t.naive_utc())
        .or(kept(req.clear_out, before.last_out));
    if let (Some(i), Some(o)) = (first_in, last_out) {
        if o < i {
            return Err(Error::input(format!(
                "the check-out ({o} UTC) would come before the check-in ({i} UTC)"
            ))
            .into());
        }
    }
    // Judged as settle judges the day: the employee's shift, the calendar, whole and half
    // days of leave, all read in this transaction.
    let overrides = crate::mysql::people::calendar_rows::overrides(tx, req.date, req.date)?;
    // The rules in force on the corrected day, not today's.
    let policy = crate::ops::lookup::Rules::new(cfg, crate::mysql::people::policy_rows::rulebook(tx)?).on(req.date)?;
    let workday = workdays::is_workday(&policy, &overrides, req.date);
    let shifts = Shifts::new(crate::mysql::people::shift_rows::table(tx)?, &policy);
    let day = rows::Day::new(req.date, cfg.timezone, &policy, workday)
        .with_shifts(
            cfg.timezone,
            &policy,
            Arc::new(shifts),
            workdays::entry(&overrides, req.date),
        )
        .with_half_leave(leave_rows::half_leave(tx, req.date)?);
    let on_leave = leave_rows::on_leave(tx, req.date)?.contains(req.employee_id);
    let member = Member {
        employee_id: before.employee_id.clone(),
        department_id: before.department_id.clone(),
        name: String::new(),
        employment: Default::default(),
    };
    let punches = (first_in.map(|t| (t.and_utc(), Kind::In)).into_iter())
        .chain(last_out.map(|t| (t.and_utc(), Kind::Out)))
        .collect();
    let o = rows::row(&day, &member, punches, on_leave).outcome;
    Ok(Stored {
        status: o.status,
        first_in,
        last_out,
        late_minutes: o.late_minutes,
        early_minutes: o.early_minutes,
        corrected: true,
        ..before.clone()
    })
}

/// Correct a settled day: the row and its audit row in one transaction.
pub(crate) fn correct(cfg: &Config, req: &Request) -> Result<Outcome> {
    check_request(cfg, req)?;
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    let actor = check_authority(&mut conn, cfg.timezone, req)?;
    crate::mysql::people::periods::refuse_closed(&mut conn, req.date, req.date, "correction")?;
    let mut tx = crate::mysql::begin(&mut conn)?;
    // The row, locked until the commit, is what the correction hangs on: no foreign key ties
    // a correction to its row since V5 (partitioning), and `archive --drop` deletes a row and
    // its corrections in one transaction, which waits for this lock.
    let Some(before) = corrections::lock_row(&mut tx, req.date, req.employee_id)? else {
        tx.rollback()?;
        return Err(Error::refused(format!(
            "{} has no settled row on {}: settle the day first",
            req.employee_id, req.date
        ))
        .into());
    };
    let after = match recompute(cfg, &mut tx, req, &before) {
        Ok(after) => after,
        Err(e) => {
            tx.rollback()?;
            return Err(e);
        }
    };
    if let Some(kind) = req.leave_kind {
        if let Err(e) = leave_rows::book_day(&mut tx, req.employee_id, req.date, kind, req.reason) {
            tx.rollback()?;
            return Err(e);
        }
    }
    corrections::update_row(&mut tx, &after)?;
    let audit = corrections::Audit {
        by: &actor.employee_id,
        os_user: req.os_user,
        reason: req.reason,
        before: &before,
        after: &after,
    };
    let (correction_id, db_user) = corrections::record(&mut tx, &audit)?;
    crate::mysql::punch_log::insert(&mut tx, &log_entries(req, &after, correction_id, &actor.employee_id))?;
    tx.commit()?;
    Ok(Outcome {
        correction_id,
        by: actor.employee_id.clone(),
        os_user: req.os_user.to_string(),
        db_user,
        before,
        after,
    })
}

/// The punch log's rows of a correction: each time it sets, as a punch of kind in or out, with
/// event id `correction-<id>-<kind>`, source `correct by <employee>`, how = corrected.
fn log_entries(req: &Request, after: &Stored, id: u64, by: &str) -> Vec<punch_log::Entry> {
    let now = Utc::now().naive_utc();
    [(req.first_in, Kind::In), (req.last_out, Kind::Out)]
        .into_iter()
        .filter_map(|(t, kind)| {
            Some(punch_log::Entry {
                event_id: format!("correction-{id}-{}", kind.as_str()),
                work_date: after.work_date,
                employee_id: after.employee_id.clone(),
                department_id: after.department_id.clone(),
                at: t?.naive_utc(),
                kind,
                source: format!("correct by {by}"),
                key_id: None,
                recorded_at: now,
                how: punch_log::How::Corrected,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_local_hh_mm_or_rfc3339() {
        let tz = chrono_tz::Europe::Paris;
        let d = NaiveDate::from_ymd_opt(2026, 11, 20).unwrap();
        let parse = crate::domain::dates::parse_typed_time;
        let at = |s: &str| parse_time(tz, d, parse(s).unwrap());
        let t = at("18:15").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-20T17:15:00+00:00");
        assert_eq!(at("2026-11-20T18:15:00+01:00").unwrap(), t);
        assert_eq!(at("2026-11-20T18:15").unwrap(), t);
        assert!(parse("6pm").is_err());
    }

    #[test]
    fn the_os_user_is_the_account_of_the_real_uid() {
        let name = crate::ops::lookup::os_user();
        assert!(!name.is_empty());
        // SAFETY: getuid cannot fail.
        let uid = unsafe { libc::getuid() };
        if uid == 0 {
            assert_eq!(name, "root");
        }
    }
}
