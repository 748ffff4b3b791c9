//! One punch from a kiosk or a shell (`attendance checkin`): checked, dated by the Redis
//! server's clock, recorded on its board and its supervisor notified (`record`); or held for a
//! supervisor's review when it is back-dated past the replay window (`review`).

use anyhow::Result;

use super::record::{apply, check_window, notifier, Checkin};
use super::review::{hold, HeldPunch};
use crate::config::Config;
use crate::domain::dates::TypedTime;
use crate::domain::punch::Kind;
use crate::error::Error;
use crate::ops::lookup::{check_employed, known, resolve_timed, shifts};
use crate::redis::board::{Board, Punch, PunchRules};

/// One punch as asked for.
#[derive(Debug, Clone)]
pub(crate) struct Request<'a> {
    pub employee_id: &'a str,
    /// `None`: its time decides (`policy.auto_kind_split`, see `redis/scripts/punch.lua`).
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
    Held(HeldPunch),
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
    // The server's clock comes with the roster lookup (and the rulebook's copy with it): the
    // time of a punch without --at, and the "now" of the window; a punch with --at needs a
    // host whose clock agrees with it.
    let (found, clock) = resolve_timed(cfg, &mut board, &[req.employee_id], None)?;
    let rules = crate::ops::lookup::rules(cfg, &mut board)?;
    let now = clock.server;
    let tz = cfg.timezone;
    // Recording is judged by today's rules (how far back, how old before review), the punch's
    // day by the rules of its day.
    let today = rules.on(crate::domain::day::policy::work_date(tz, now))?;
    if req.at.is_some() {
        clock
            .check(today.max_clock_skew_secs, "a punch with an explicit time")
            .map_err(Error::refused)?;
    }
    let employee = known(found, req.employee_id)?;
    let at = match (dated, req.at) {
        (Some(at), _) => at,
        // HH:MM: today in the company's zone, by the server's clock.
        (None, Some(t)) => t
            .instant(cfg.timezone, now.with_timezone(&cfg.timezone).date_naive())
            .map_err(Error::input)?,
        (None, None) => now,
    };
    check_window(&today, tz, at, now)?;
    let day = rules.on(crate::domain::day::policy::work_date(tz, at))?;
    // The employee's shift decides the work date (a night shift's check-out belongs to the
    // date it started on), lateness, early leave and the kind of an unlabelled punch.
    let facts =
        shifts(cfg, &mut board, &[employee.id.as_str()], &day)?.facts(&employee.id, &employee.department_id, tz, at);
    check_employed(&employee, facts.work_date)?;
    let mut p = Punch::with_facts(employee, req.kind, at, req.source, facts);
    p.recorded_at = now;
    let rules = PunchRules::new(&day, tz);
    // A revoked key records nothing; the registry is read for replay authority only for a
    // back-dated punch: a live one never needs it.
    crate::ops::keys::check_own_key(&mut board, now)?;
    if crate::domain::day::review::past_window(at, now, today.replay_window_minutes)
        && !crate::ops::keys::may_replay(&mut board, now)?
    {
        let id = hold(cfg, &board, rules, std::slice::from_ref(&p))?;
        let kind = board.held_record(rules, &p).0;
        return Ok(Punched::Held(HeldPunch::new(
            &p,
            kind,
            id[0],
            tz,
            board.key_id(),
            today.replay_window_minutes,
        )));
    }
    Ok(Punched::Applied(apply(
        cfg, &mut board, rules, &p, connecting, now, false,
    )?))
}
