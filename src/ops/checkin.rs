//! Check-in: one punch, or a file of them. Each is recorded on its department's board with
//! its event in the department's outbox (one Lua script), then the events are published with
//! confirms; a broker that is down leaves them pending in the outbox, never fails the punch.

use std::collections::HashMap;

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::amqp::Publisher;
use crate::config::Config;
use crate::domain::dates::TypedTime;
use crate::domain::day::clock::Reading;
use crate::domain::day::policy;
use crate::domain::day::shifts::Shifts;
use crate::domain::punch::Kind;
use crate::error::Error;
use crate::redis::board::{Board, Employee, Punch, PunchRules};

/// Look employees up: the Redis roster cache first, then MySQL for the misses (opened only
/// then), which are cached back. Returns the ones found.
pub fn resolve(cfg: &Config, board: &mut Board, ids: &[&str]) -> Result<HashMap<String, Employee>> {
    let found = board.lookup_many(ids)?;
    complete(cfg, board, ids, found)
}

/// [`resolve`], and the Redis server's clock read in the same round trip as the roster cache.
/// With `max_skew` (punches with an explicit time), a host whose clock is further than that
/// from the server's is refused (exit 1) before anything is written, the roster cache included.
pub(crate) fn resolve_timed(
    cfg: &Config,
    board: &mut Board,
    ids: &[&str],
    max_skew: Option<u32>,
) -> Result<(HashMap<String, Employee>, Reading)> {
    let (found, clock) = board.lookup_many_timed(ids)?;
    if let Some(max) = max_skew {
        clock
            .check(max, "a punch with an explicit time")
            .map_err(Error::refused)?;
    }
    Ok((complete(cfg, board, ids, found)?, clock))
}

/// The roster cache's answers, with its misses looked up in MySQL and cached back. Caching
/// back is a courtesy: a part of the cache that cannot be written (its master lost on a
/// cluster) costs the next check-in a MySQL lookup again, never this one its punch.
fn complete(
    cfg: &Config,
    board: &mut Board,
    ids: &[&str],
    cached: Vec<Option<Employee>>,
) -> Result<HashMap<String, Employee>> {
    let mut found = HashMap::with_capacity(ids.len());
    let mut missing = Vec::new();
    for (id, e) in ids.iter().zip(cached) {
        match e {
            Some(e) => {
                found.insert(id.to_string(), e);
            }
            None => missing.push(*id),
        }
    }
    if !missing.is_empty() {
        let from_db = crate::mysql::roster_rows::active_by_ids(&crate::mysql::Db::open(cfg)?, &missing)?;
        // Best effort: an account that may only read the roster cache (a kiosk's: it must not
        // be able to move anyone, docs/security.md), or a cluster whose part's master is lost,
        // costs the next check-in a MySQL lookup again, never this one.
        let _ = board.cache_roster(&from_db);
        for m in from_db {
            let e = Employee {
                id: m.employee_id,
                department_id: m.department_id,
                name: m.name,
                employment: m.employment,
            };
            found.insert(e.id.clone(), e);
        }
    }
    Ok(found)
}

/// The shifts of `employees` (and every department's) from Redis's copy of the shift table:
/// one small read, in which a company with no shift finds nothing (everyone on the policy).
/// The copy is one key, so on a cluster it lives on one master: while that master fails over,
/// the shifts come from MySQL, as the roster does when its part of the cache cannot be read (no
/// key of the whole company may take the check-ins of healthy departments down).
pub(crate) fn shifts<S: AsRef<str>>(cfg: &Config, board: &mut Board, employees: &[S]) -> Result<Shifts> {
    let table = match board.read_shifts(employees) {
        Ok(table) => table,
        Err(redis) => crate::mysql::Db::open(cfg)
            .and_then(|db| crate::mysql::shift_rows::read(&db))
            .map_err(|mysql| redis.context(format!("nor could MySQL's shift tables be read: {mysql:#}")))?,
    };
    Ok(Shifts::new(table, &cfg.policy))
}

/// One employee, or refused (exit 1) when unknown everywhere.
pub(crate) fn employee(cfg: &Config, board: &mut Board, id: &str) -> Result<Employee> {
    known(resolve(cfg, board, &[id])?, id)
}

fn known(mut found: HashMap<String, Employee>, id: &str) -> Result<Employee> {
    found
        .remove(id)
        .ok_or_else(|| Error::refused(format!("unknown employee '{id}'")).into())
}

/// Refuse a punch the rules do not accept: further in the future than the clock skew, or on a
/// work date more than `policy.max_backdate_days` before today (see `policy::PunchWindow`);
/// `now` is the Redis server's clock.
pub(crate) fn check_window(cfg: &Config, at: DateTime<Utc>, now: DateTime<Utc>) -> Result<(), Error> {
    crate::domain::day::policy::PunchWindow::new(&cfg.policy, cfg.timezone, now)
        .check(at)
        .map_err(Error::refused)
}

/// Refuse a punch on a day outside the employee's employment dates (a leaver after their last
/// day, a joiner before their first): nobody is expected then, so nothing may be recorded.
pub(crate) fn check_employed(employee: &Employee, day: NaiveDate) -> Result<(), Error> {
    match employee.employment.refusal(&employee.id, day) {
        Some(why) => Err(Error::refused(why)),
        None => Ok(()),
    }
}

/// One punch as asked for.
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    pub employee_id: &'a str,
    /// `None`: its time decides (`policy.auto_kind_split`, see `redis/punch.lua`).
    pub kind: Option<Kind>,
    /// `None`: now, by the Redis server's clock; `HH:MM` is on today by that clock.
    pub at: Option<TypedTime>,
    pub source: &'a str,
}

/// A punch applied to the board, or held for a supervisor's review (back-dated past
/// `policy.replay_window_minutes` without replay authority: `domain::day::review`).
#[derive(Debug, Clone)]
pub(crate) enum Punched {
    Applied(Checkin),
    Held(crate::ops::review::HeldPunch),
}

/// What a check-in did: the `checkin --json` object.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Checkin {
    /// `applied` (a held punch is another object, `held_for_review`).
    pub status: &'static str,
    pub employee_id: String,
    pub employee_name: String,
    pub department_id: String,
    pub work_date: NaiveDate,
    pub kind: Kind,
    /// RFC 3339 in the company's offset.
    pub at: String,
    pub late: bool,
    pub late_minutes: u32,
    pub early: bool,
    pub early_minutes: u32,
    pub changed: bool,
    pub duplicate: bool,
    pub first_in: Option<String>,
    pub last_out: Option<String>,
    pub event_id: Option<String>,
    /// `sent` (the broker confirmed it), `handed_off` (a live `relay --follow` was woken to
    /// publish it from the outbox), `pending` (it waits in the outbox: `relay` sends it) or
    /// `none` (an exact duplicate: no event).
    pub notification: &'static str,
    /// Why a notification is pending, for stderr.
    #[serde(skip)]
    pub pending_because: Option<String>,
    /// `replicated` (at least `redis.min_replicas_acked` replicas hold the board's write),
    /// `pending` (fewer did within `redis.wait_timeout_ms`: recorded, but the loss of its
    /// master could still take it back; punch again, a repeat changes nothing) or `off`
    /// (`redis.min_replicas_acked` is 0).
    pub replication: &'static str,
    /// How many replicas `WAIT` counted (`None` when not asked, or when WAIT failed).
    pub replicas_acked: Option<u32>,
    /// Why the replication is pending, for stderr.
    #[serde(skip)]
    pub unreplicated_because: Option<String>,
    #[serde(skip)]
    pub local_at: DateTime<Tz>,
}

/// Record one punch and notify its supervisor; or hold it for review when it is back-dated
/// past the replay window and this process's key may not replay offline punches.
pub(crate) fn punch(cfg: &Config, req: &Request) -> Result<Punched> {
    crate::domain::people::roster::check_id("employee id", req.employee_id)?;
    crate::domain::text::check("--source", req.source).map_err(Error::input)?;
    let dated = req
        .at
        .and_then(|t| t.dated(cfg.timezone))
        .transpose()
        .map_err(Error::input)?;
    let mut board = Board::open(cfg)?;
    let connecting = notifier(cfg, &mut board)?;
    // The server's clock comes with the roster lookup: the time of a punch without --at, and
    // the "now" of the window; a punch with --at needs a host whose clock agrees with it.
    let max_skew = req.at.is_some().then_some(cfg.policy.max_clock_skew_secs);
    let (found, clock) = resolve_timed(cfg, &mut board, &[req.employee_id], max_skew)?;
    let employee = known(found, req.employee_id)?;
    let now = clock.server;
    let at = match (dated, req.at) {
        (Some(at), _) => at,
        // HH:MM: today in the company's zone, by the server's clock.
        (None, Some(t)) => t
            .instant(cfg.timezone, now.with_timezone(&cfg.timezone).date_naive())
            .map_err(Error::input)?,
        (None, None) => now,
    };
    check_window(cfg, at, now)?;
    let tz = cfg.timezone;
    // The employee's shift decides the work date (a night shift's check-out belongs to the
    // date it started on), lateness, early leave and the kind of an unlabelled punch.
    let facts = shifts(cfg, &mut board, &[employee.id.as_str()])?.facts(&employee.id, &employee.department_id, tz, at);
    check_employed(&employee, facts.work_date)?;
    let mut p = Punch::with_facts(employee, req.kind, at, req.source, facts);
    p.recorded_at = now;
    let rules = PunchRules::new(&cfg.policy, tz);
    // The keyring is read only for a back-dated punch: a live one never needs it.
    if crate::domain::day::review::past_window(at, now, cfg.policy.replay_window_minutes)
        && !board.may_replay(cfg.signing.keyring()?.as_ref())
    {
        let id = crate::ops::review::hold(cfg, &board, rules, std::slice::from_ref(&p))?;
        let kind = board.held_record(rules, &p).0;
        return Ok(Punched::Held(crate::ops::review::HeldPunch::new(&p, kind, id[0], tz)));
    }
    Ok(Punched::Applied(apply(
        cfg, &mut board, rules, &p, connecting, now, false,
    )?))
}

/// How this check-in's event will reach the broker: `None`, a live relay takes it over (no
/// broker connection at all); otherwise the broker handshake, started now so that it runs while
/// Redis records the punch: it is most of the publish's cost. The heartbeat lives on one master
/// of a cluster: unreadable, it means "no relay" (this check-in publishes itself), never a
/// failed punch of a department on a healthy master.
pub(crate) fn notifier(cfg: &Config, board: &mut Board) -> Result<Option<crate::amqp::Connecting>> {
    let handoff = cfg.amqp.handoff && board.relay_alive().unwrap_or(false);
    Ok((!handoff).then(|| Publisher::connect_in_background(cfg)))
}

/// Put a punch on its board and notify its supervisor: a check-in, or a held punch approved
/// (`approved`: logged as such). `connecting`: see [`notifier`]; `now`: the server's clock.
pub(crate) fn apply(
    cfg: &Config,
    board: &mut Board,
    rules: PunchRules,
    p: &Punch,
    connecting: Option<crate::amqp::Connecting>,
    now: DateTime<Utc>,
    approved: bool,
) -> Result<Checkin> {
    let (tz, at) = (cfg.timezone, p.at);
    let o = board.punch_as(rules, p, approved)?;
    let late = if o.kind == Kind::In {
        p.facts.late_minutes_if_in
    } else {
        0
    };
    let early = if o.kind == Kind::Out {
        p.facts.early_minutes_if_out
    } else {
        0
    };
    let dept = &p.employee.department_id;
    let (replication, replicas_acked, unreplicated_because) =
        replicated(cfg, board, dept, o.changed || o.event_json.is_some());
    let (notification, pending_because) = match o.event_json.is_some() {
        false => ("none", None),
        true => notify(cfg, board, dept, &p.event_id, connecting, now),
    };
    let date = p.facts.work_date;
    let instant = |s: i64| crate::domain::instant::text(&policy::instant(tz, date, s));
    let local_at = at.with_timezone(&tz);
    Ok(Checkin {
        status: "applied",
        employee_id: p.employee.id.clone(),
        employee_name: p.employee.name.clone(),
        department_id: p.employee.department_id.clone(),
        work_date: date,
        kind: o.kind,
        at: crate::domain::instant::text(&local_at),
        late: late > 0,
        late_minutes: late,
        early: early > 0,
        early_minutes: early,
        changed: o.changed,
        duplicate: o.duplicate,
        first_in: o.first_in.map(instant),
        last_out: o.last_out.map(instant),
        event_id: o.event_json.is_some().then(|| p.event_id.clone()),
        notification,
        pending_because,
        replication,
        replicas_acked,
        unreplicated_because,
        local_at,
    })
}

/// Wait for the punch to reach `redis.min_replicas_acked` replicas: (`replication`, replicas
/// counted, why pending). The punch is recorded whatever this says: nothing here fails it.
fn replicated(cfg: &Config, board: &mut Board, dept: &str, wrote: bool) -> (&'static str, Option<u32>, Option<String>) {
    let r = cfg.replication;
    if r.min_replicas_acked == 0 {
        return ("off", None, None);
    }
    match board.wait_replicated(dept, wrote, r.min_replicas_acked, r.wait_timeout_ms) {
        Ok(n) if n >= r.min_replicas_acked => ("replicated", Some(n), None),
        Ok(n) => (
            "pending",
            Some(n),
            Some(format!(
                "{n} of {} replica(s) acknowledged within {} ms",
                r.min_replicas_acked, r.wait_timeout_ms
            )),
        ),
        Err(e) => ("pending", None, Some(crate::ops::exit::one_line(&e))),
    }
}

/// Send the event `event_id` waiting in `dept`'s outbox: on `connecting` (see [`notifier`]), or
/// handed to a live relay: (`notification`, why pending). What was recorded stays recorded:
/// nothing here fails the command.
pub(crate) fn notify(
    cfg: &Config,
    board: &mut Board,
    dept: &str,
    event_id: &str,
    connecting: Option<crate::amqp::Connecting>,
    now: DateTime<Utc>,
) -> (&'static str, Option<String>) {
    match connecting {
        Some(connecting) => notify_now(cfg, connecting, board, dept, event_id, now),
        None => match board.wake_relay(dept) {
            Ok(true) => ("handed_off", None),
            // The relay's heartbeat expired since: publish as if there had been none.
            Ok(false) => {
                let connecting = Publisher::connect_in_background(cfg);
                notify_now(cfg, connecting, board, dept, event_id, now)
            }
            Err(e) => ("pending", Some(crate::ops::exit::one_line(&e))),
        },
    }
}

/// Publish a check-in's event on the check-in's own connection: (`notification`, why pending).
fn notify_now(
    cfg: &Config,
    connecting: crate::amqp::Connecting,
    board: &mut Board,
    dept: &str,
    event_id: &str,
    now: DateTime<Utc>,
) -> (&'static str, Option<String>) {
    let sent = connecting.wait().and_then(|mut publisher| {
        publisher.set_confirm_timeout_ms(cfg.amqp.checkin_confirm_ms);
        crate::ops::relay::send_punch(publisher, board, dept, event_id, now)
    });
    match sent {
        Ok(true) => ("sent", None),
        Ok(false) => ("pending", Some("the broker did not confirm it".to_string())),
        Err(e) => ("pending", Some(crate::ops::exit::one_line(&e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_punch_may_not_be_in_the_future_nor_older_than_the_backdate_limit() {
        let at = |s| crate::domain::dates::parse_instant(s).unwrap();
        let now = at("2026-11-30T08:00:00Z");
        let cfg = Config::default();
        assert!(check_window(&cfg, at("2026-11-30T08:01:00Z"), now).is_ok());
        assert!(check_window(&cfg, at("2026-11-30T08:03:00Z"), now).is_err());
        assert!(check_window(&cfg, at("2026-11-23T08:00:00Z"), now).is_ok());
        assert!(check_window(&cfg, at("2026-11-22T08:00:00Z"), now).is_err());
    }
}
