//! Voiding a punch before settle (`punch void`): a supervisor of the employee's department (or
//! HR, never one's own) takes a wrong punch off the live board, so that status, the roll call
//! and settle see the day without it; the audit row and the punch log's `voided` row are
//! committed only once the board no longer holds it.

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::record::Notification;
use crate::config::Config;
use crate::domain::dates::TypedTime;
use crate::domain::day::record::DayRecord;
use crate::domain::event::void_notice::VoidNotice;
use crate::domain::people::authority;
use crate::domain::punch::Kind;
use crate::domain::{day::policy, event::punch_log};
use crate::error::Error;
use crate::mysql::voids;
use crate::redis::board::Board;

/// A void as asked.
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    pub employee_id: &'a str,
    /// Which punch: its time or its event id.
    pub punch: Which<'a>,
    /// Needed only when the day has both a check-in and a check-out at that second.
    pub kind: Option<Kind>,
    pub reason: &'a str,
    pub by: Option<&'a str>,
    pub os_user: &'a str,
}

/// How a void names its punch.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Which<'a> {
    /// The punch's time (`HH:MM`: today by the Redis server's clock).
    At(TypedTime),
    /// The punch's event id (as `checkin --json` printed it), looked up in the punch logs of
    /// the department's live boards.
    Event(&'a str),
}

/// What was voided, and the day as the board now has it: the `punch void --json` object.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Voided {
    pub void_id: u64,
    pub employee_id: String,
    pub department_id: String,
    pub work_date: chrono::NaiveDate,
    pub kind: Kind,
    /// RFC 3339 in the company's offset.
    pub at: String,
    pub by: String,
    pub os_user: String,
    pub db_user: String,
    /// The day's first check-in and last check-out without the voided punch.
    pub first_in: Option<String>,
    pub last_out: Option<String>,
    /// The void notice's event id (`void-<id>`).
    pub event_id: String,
    /// The supervisor's notice: sent, handed off or pending (as `checkin`'s).
    pub notification: Notification,
    /// Why the notice is pending, for stderr.
    #[serde(skip)]
    pub pending_because: Option<String>,
}

/// Void one punch on its employee's live board, audited.
pub(crate) fn void(cfg: &Config, req: &Request) -> Result<Voided> {
    crate::domain::people::roster::check_id("employee id", req.employee_id)?;
    crate::domain::text::check("--reason", req.reason).map_err(Error::input)?;
    if req.reason.chars().count() > 500 {
        return Err(Error::input("--reason must be at most 500 characters").into());
    }
    let tz = cfg.timezone;
    let dated = match req.punch {
        Which::At(t) => t.dated(tz).transpose().map_err(Error::input)?,
        Which::Event(_) => None,
    };
    let mut board = Board::open(cfg)?;
    let connecting = crate::ops::checkin::record::notifier(cfg, &mut board)?;
    let (mut found, clock) = crate::ops::lookup::resolve_timed(cfg, &mut board, &[req.employee_id], None)?;
    let employee = found
        .remove(req.employee_id)
        .ok_or_else(|| Error::refused(format!("unknown employee '{}'", req.employee_id)))?;
    let (at, want_kind): (DateTime<Utc>, Option<Kind>) = match (req.punch, dated) {
        (_, Some(at)) => (at, req.kind),
        (Which::At(t), None) => (
            t.instant(tz, clock.server.with_timezone(&tz).date_naive())
                .map_err(Error::input)?,
            req.kind,
        ),
        (Which::Event(id), _) => {
            let e = board
                .punch_of_event(&employee.department_id, id)?
                .filter(|e| e.employee_id == req.employee_id)
                .ok_or_else(|| {
                    Error::refused(format!(
                        "no punch of {} with event id '{}' on a live board of {}",
                        req.employee_id,
                        crate::domain::text::clip(id),
                        employee.department_id
                    ))
                })?;
            (e.at.and_utc(), Some(e.kind))
        }
    };
    let date = policy::work_date(tz, at);
    let secs = (at - policy::day_start(tz, date)).num_seconds();
    let dept = employee.department_id.clone();
    let local = at.with_timezone(&tz);
    let when = crate::domain::dates::wall_clock(local, "%H:%M:%S");
    let record = board.day_record(&dept, date, req.employee_id)?.unwrap_or_default();
    let kind = kind_at(&record, secs, want_kind).map_err(|why| {
        let e = format!("{} has {why} at {when} on {date} on the board", req.employee_id);
        match why {
            Why::Both => Error::input(format!("{e}: give --kind in or --kind out")),
            Why::None => Error::refused(format!(
                "{e} (a settled day is fixed with `correct --clear-in/--clear-out`)"
            )),
        }
    })?;

    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    let on = (req.employee_id, date);
    let actor = crate::ops::lookup::acting(&mut conn, tz, req.os_user, req.by, on, authority::may_void)?;
    let mut tx = crate::mysql::begin(&mut conn)?;
    let v = voids::Void {
        work_date: date,
        employee_id: req.employee_id,
        department_id: &dept,
        punched_at: at.naive_utc(),
        kind,
        by: &actor.employee_id,
        os_user: req.os_user,
        reason: req.reason,
    };
    let (void_id, db_user) = voids::record(&mut tx, &v)?;
    crate::mysql::punch_log::insert(&mut tx, &[log_entry(&v, void_id)])?;
    // The board first, the audit's commit after: a void that could not be audited would be a
    // change nobody answers for; one audited but not done is rolled back here.
    let mut notice = VoidNotice {
        notice_type: crate::domain::event::message::VOID.to_string(),
        event_id: format!("void-{void_id}"),
        employee_id: req.employee_id.to_string(),
        employee_name: employee.name.clone(),
        department_id: dept.clone(),
        kind,
        at: local.to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
        work_date: date,
        voided_by: actor.employee_id.clone(),
        reason: req.reason.to_string(),
        voided_at: clock.server.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        key_id: None,
        sig: None,
    };
    if !board.void_punch(&dept, date, req.employee_id, kind, secs, &mut notice)? {
        tx.rollback()?;
        return Err(Error::refused(format!(
            "{} has no such punch at {when} on {date} on the board any more (voided, or its day settled meanwhile)",
            req.employee_id
        ))
        .into());
    }
    tx.commit()?;
    let (notification, pending_because) =
        crate::ops::checkin::record::notify(cfg, &mut board, &dept, &notice.event_id, connecting, clock.server);
    let after = board.day_record(&dept, date, req.employee_id)?.unwrap_or_default();
    let instant = |s: i64| crate::domain::instant::text(&policy::instant(tz, date, s));
    Ok(Voided {
        void_id,
        employee_id: req.employee_id.to_string(),
        department_id: dept,
        work_date: date,
        kind,
        at: crate::domain::instant::text(&local),
        by: actor.employee_id,
        os_user: req.os_user.to_string(),
        db_user,
        first_in: after.first_in().map(instant),
        last_out: after.last_out().map(instant),
        event_id: notice.event_id,
        notification,
        pending_because,
    })
}

/// Why no single punch is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Why {
    None,
    Both,
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Why::None => "no punch",
            Why::Both => "a check-in and a check-out",
        })
    }
}

/// The kind of the day's one punch at `secs` (of kind `kind`, if given).
fn kind_at(record: &DayRecord, secs: i64, kind: Option<Kind>) -> Result<Kind, Why> {
    let mut kinds = record
        .punches
        .iter()
        .filter(|(k, s)| *s == secs && kind.is_none_or(|want| want == *k))
        .map(|(k, _)| *k);
    match (kinds.next(), kinds.next()) {
        (None, _) => Err(Why::None),
        (Some(k), None) => Ok(k),
        (Some(a), Some(b)) if a == b => Ok(a),
        _ => Err(Why::Both),
    }
}

/// The punch log's row of a void: at the voided punch's time, event id `void-<id>`, source
/// `void by <employee>`, how = voided.
fn log_entry(v: &voids::Void, id: u64) -> punch_log::Entry {
    punch_log::Entry {
        event_id: format!("void-{id}"),
        work_date: v.work_date,
        employee_id: v.employee_id.to_string(),
        department_id: v.department_id.to_string(),
        at: v.punched_at,
        kind: v.kind,
        source: format!("void by {}", v.by),
        key_id: None,
        recorded_at: Utc::now().naive_utc(),
        how: punch_log::How::Voided,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_void_names_one_punch_or_says_why_not() {
        let r = DayRecord::parse("i100,o100,i200");
        assert_eq!(kind_at(&r, 200, None), Ok(Kind::In));
        assert_eq!(kind_at(&r, 100, None), Err(Why::Both));
        assert_eq!(kind_at(&r, 100, Some(Kind::Out)), Ok(Kind::Out));
        assert_eq!(kind_at(&r, 300, None), Err(Why::None));
        assert_eq!(kind_at(&r, 200, Some(Kind::Out)), Err(Why::None));
    }
}
