//! Back-dating needs authority: a punch held for review instead of reaching the board (a
//! check-in back-dated past `policy.replay_window_minutes` by a process whose key may not
//! replay offline punches), and `review list|approve|reject`. Approving puts the very punch
//! held on its board through the check-in's own path (`record::apply`), logged as approved;
//! both decisions are audited on the held row (who, as which accounts, when, why).

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Timelike, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use super::record::{self, Checkin, PunchStatus};
use crate::config::Config;
use crate::domain::day::review::Status;
use crate::domain::day::shifts::Shifts;
use crate::domain::people::authority;
use crate::domain::punch::Kind;
use crate::error::Error;
pub(crate) use crate::mysql::held_punches::Filter;
use crate::mysql::held_punches::{self, Held, NewHeld};
use crate::ops::lookup;
use crate::redis::board::{Board, Employee, Punch, PunchRules};

/// A punch held for review: the `checkin --json` object then.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct HeldPunch {
    /// Always `held_for_review`.
    pub status: PunchStatus,
    /// The id `review approve` and `review reject` take.
    pub review_id: u64,
    pub employee_id: String,
    pub employee_name: String,
    pub department_id: String,
    pub work_date: NaiveDate,
    pub kind: Kind,
    /// RFC 3339 in the company's offset.
    pub at: String,
    /// When it was recorded, by the Redis server's clock (RFC 3339, UTC).
    pub recorded_at: String,
    #[serde(skip)]
    pub local_at: DateTime<Tz>,
    /// How old the punch was when recorded, in whole minutes: what passed the window.
    #[serde(skip)]
    pub minutes_old: i64,
    /// The key it came with (`None`: this process signs nothing).
    #[serde(skip)]
    pub key_id: Option<String>,
    /// The replay window it passed: the rulebook's on the day it was recorded.
    #[serde(skip)]
    pub window_minutes: u32,
}

impl HeldPunch {
    pub(crate) fn new(
        p: &Punch,
        kind: Kind,
        review_id: u64,
        tz: Tz,
        key_id: Option<&str>,
        window_minutes: u32,
    ) -> HeldPunch {
        let local_at = p.at.with_timezone(&tz);
        HeldPunch {
            window_minutes,
            minutes_old: (p.recorded_at - p.at).num_minutes(),
            key_id: key_id.map(str::to_string),
            status: PunchStatus::HeldForReview,
            review_id,
            employee_id: p.employee.id.clone(),
            employee_name: p.employee.name.clone(),
            department_id: p.employee.department_id.clone(),
            work_date: p.facts.work_date,
            kind,
            at: crate::domain::instant::text(&local_at),
            recorded_at: crate::domain::instant::text(&p.recorded_at),
            local_at,
        }
    }
}

/// Why a punch was held and what the owner can do, in one clause for a one-line message:
/// the window, the key, and the two ways out (a key that may replay, or a review).
pub(crate) fn held_why(window_minutes: u32, key_id: Option<&str>) -> String {
    let key = match key_id {
        Some(k) => format!("key '{k}' may not replay"),
        None => "this process signs with no key that may replay".to_string(),
    };
    format!("past policy.replay_window_minutes ({window_minutes}), and {key} (replay = true in signing.keyring_file)")
}

/// Hold these punches for review in MySQL, each with the event record it would have had (signed
/// with this process's key); returns their review ids, in order. A punch held already (sent
/// again) keeps its id.
pub(crate) fn hold(cfg: &Config, board: &Board, rules: PunchRules, punches: &[Punch]) -> Result<Vec<u64>> {
    let rows: Vec<NewHeld> = punches
        .iter()
        .map(|p| {
            let (kind, record) = board.held_record(rules, p);
            NewHeld {
                event_id: p.event_id.clone(),
                work_date: p.facts.work_date,
                employee_id: p.employee.id.clone(),
                department_id: p.employee.department_id.clone(),
                // A punch's instant is kept to the second, as the board keeps it.
                at: p.at.naive_utc().with_nanosecond(0).unwrap_or(p.at.naive_utc()),
                kind,
                source: p.source.clone(),
                key_id: board.key_id().map(str::to_string),
                recorded_at: p.recorded_at.naive_utc(),
                record,
            }
        })
        .collect();
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    held_punches::hold(&mut conn, &rows)
}

/// Held punches matching `filter`: pending ones (every one with `all`).
pub(crate) fn list(cfg: &Config, filter: Filter, all: bool) -> Result<Vec<Held>> {
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    held_punches::list(&mut conn, filter, all)
}

/// A decision as asked.
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    pub id: u64,
    pub approve: bool,
    pub reason: Option<&'a str>,
    /// The operating-system account running the command: who acts (see `correct::os_user`).
    pub os_user: &'a str,
}

/// What a decision did: the `review approve|reject --json` object.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Decided {
    pub review_id: u64,
    pub decision: Status,
    /// The employee who decided: the one the roster maps to `os_user`.
    pub by: String,
    pub os_user: String,
    pub db_user: String,
    pub reason: Option<String>,
    pub employee_id: String,
    pub work_date: NaiveDate,
    pub kind: Kind,
    /// The punch's instant, RFC 3339 in the company's offset.
    pub at: String,
    /// Approved: what the board made of the punch (as `checkin --json` says it).
    pub applied: Option<Checkin>,
    /// Approved on a day already settled: the punch waits on the day's board for the next
    /// settle, which writes the day's row again (`settle --date D` at once).
    pub day_settled: bool,
}

/// Approve or reject a held punch. Approving records it on its board and notifies its
/// supervisor exactly as a check-in of a replaying kiosk would, then marks it approved, all
/// while its row is locked: two reviewers cannot both apply it, and a failure before the commit
/// leaves it pending (applying it again is a repeat: same event, same time).
pub(crate) fn decide(cfg: &Config, req: &Request) -> Result<Decided> {
    crate::domain::day::review::check_reason(req.reason, !req.approve).map_err(Error::input)?;
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    let unknown = || Error::refused(format!("no punch is held for review with id {}", req.id));
    let held = held_punches::get(&mut conn, req.id)?.ok_or_else(unknown)?;
    let rule = authority::may_review;
    let on = (held.employee_id.as_str(), held.work_date);
    let actor = lookup::acting(&mut conn, cfg.timezone, req.os_user, None, on, rule)?;
    let day_settled = crate::mysql::attendance::row(&mut conn, held.work_date, &held.employee_id)?.is_some();
    let mut tx = crate::mysql::begin(&mut conn)?;
    let held = held_punches::lock(&mut tx, req.id)?.ok_or_else(unknown)?;
    if held.status != Status::Pending {
        tx.rollback()?;
        return Err(Error::refused(format!(
            "review {} was already {} by {} at {} UTC",
            held.id,
            held.status.as_str(),
            held.decided_by.as_deref().unwrap_or("?"),
            held.decided_at
                .map_or_else(|| "?".to_string(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
        ))
        .into());
    }
    let applied = if req.approve { Some(apply(cfg, &held)?) } else { None };
    let status = if req.approve {
        Status::Approved
    } else {
        Status::Rejected
    };
    let db_user = held_punches::decide(&mut tx, held.id, status, &actor.employee_id, req.os_user, req.reason)?;
    tx.commit()?;
    Ok(Decided {
        review_id: held.id,
        decision: status,
        by: actor.employee_id,
        os_user: req.os_user.to_string(),
        db_user,
        reason: req.reason.map(str::to_string),
        employee_id: held.employee_id.clone(),
        work_date: held.work_date,
        kind: held.kind,
        at: crate::domain::instant::utc_text(held.at),
        day_settled: req.approve && day_settled,
        applied,
    })
}

/// The held punch on its board, through the check-in's own path: its event id, time, kind,
/// source, recording time and record (signed by the process that recorded it) as held.
fn apply(cfg: &Config, held: &Held) -> Result<Checkin> {
    let mut board = Board::open(cfg)?;
    let connecting = record::notifier(cfg, &mut board)?;
    let (found, clock) = lookup::resolve_timed(cfg, &mut board, &[held.employee_id.as_str()], None)?;
    let policy = lookup::policy_on(
        cfg,
        &mut board,
        crate::domain::day::policy::work_date(cfg.timezone, held.at.and_utc()),
    )?;
    let shifts = lookup::shifts(cfg, &mut board, &[held.employee_id.as_str()], &policy)?;
    let p = punch_of(cfg, held, found.get(&held.employee_id), &shifts)?;
    let now: DateTime<Utc> = clock.server;
    record::apply(
        cfg,
        &mut board,
        PunchRules::new(&policy, cfg.timezone),
        &p,
        connecting,
        now,
        true,
    )
}

/// The very punch that was held, ready for its board: `known` is the employee as the roster has
/// them now (for the output's name; the record keeps the one it was signed with). A punch of a
/// day outside the employment (an end date set since it was held) is refused as the check-in
/// itself would refuse it.
pub(crate) fn punch_of(cfg: &Config, held: &Held, known: Option<&Employee>, shifts: &Shifts) -> Result<Punch, Error> {
    let employee = Employee {
        id: held.employee_id.clone(),
        department_id: held.department_id.clone(),
        name: known.map_or_else(|| held.employee_id.clone(), |e| e.name.clone()),
        employment: known.map(|e| e.employment).unwrap_or_default(),
    };
    lookup::check_employed(&employee, held.work_date)?;
    let (tz, at) = (cfg.timezone, held.at.and_utc());
    let facts = shifts.facts(&employee.id, &employee.department_id, tz, at);
    let mut p = Punch::with_facts(employee, Some(held.kind), at, &held.source, facts);
    p.event_id = held.event_id.clone();
    p.recorded_at = held.recorded_at.and_utc();
    p.record = Some(held.record.clone());
    Ok(p)
}
