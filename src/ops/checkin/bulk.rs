//! Bulk check-in: a file of punches recorded through the same script as one punch (a hundred
//! per call, many calls per pipeline), each call's events published while the next calls are
//! recorded (see `crate::ops::relay::publish_while`).

use std::collections::HashSet;

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::record::Replication;
use crate::config::{Config, Policy};
use crate::domain::day::policy::PunchWindow;
use crate::domain::day::shifts::Clocks;
use crate::domain::formats::punch_file::{self, BulkReport, Refusal, Row, SHOWN_REFUSALS};
use crate::error::{Error, Service};
use crate::ops::checkin::review::HeldPunch;
use crate::ops::lookup::resolve_timed;
use crate::ops::relay::{DrainReport, Feed};
use crate::redis::board::{Board, Punch, PunchOutcome, PunchRules};

/// What a bulk check-in did: the board's side and the broker's.
#[derive(Debug, Serialize)]
pub(crate) struct Bulk {
    #[serde(flatten)]
    pub report: BulkReport,
    pub notifications: DrainReport,
    /// What Redis answered when it refused (OOM, READONLY, MISCONF), in its words: then the
    /// `unconfirmed` punches got an answer, a refusal, not "no reply".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis_answered: Option<String>,
    /// The departments whose punches were recorded (a punch stream counts their outboxes).
    #[serde(skip)]
    pub departments: Vec<String>,
    /// The first [`SHOWN_REFUSALS`] punches held for review (`report.held` counts them all).
    pub held_for_review: Vec<HeldPunch>,
    /// `replicated` (every Redis master that took punches has them on at least
    /// `redis.min_replicas_acked` replicas), `pending` (not all within `redis.wait_timeout_ms`:
    /// recorded, but the loss of such a master could take them back; run the file again, repeats
    /// change nothing) or `off` (`redis.min_replicas_acked` is 0, or nothing was recorded).
    pub replication: Replication,
    /// The masters that did not have them replicated in time, each with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreplicated: Vec<String>,
}

/// Record every good row and publish its event with a window of confirms, on
/// `amqp.publishers` connections, while the next rows are recorded. Each event leaves its
/// outbox only once confirmed; a broker away leaves them pending (the punches are recorded).
pub(crate) fn bulk(cfg: &Config, rows: Vec<Row>, refused: Vec<Refusal>, progress: impl FnMut(usize)) -> Result<Bulk> {
    let mut board = Board::open(cfg)?;
    let board = &mut board;
    let total = rows.len() + refused.len();
    let (punches, refused, clock, policy) = prepare(cfg, board, rows, refused)?;
    // A revoked key records nothing (exit 1, nothing written).
    crate::ops::keys::check_own_key(board, clock)?;
    // Held punches are stored before anything is recorded: MySQL failing then changes nothing.
    let (punches, held) = hold_backdated(cfg, &policy, board, punches, clock)?;
    let mut depts: Vec<String> = punches.iter().map(|p| p.employee.department_id.clone()).collect();
    depts.sort_unstable();
    depts.dedup();
    let (mut report, notifications) = crate::ops::relay::publish_while(cfg, &depts, |feed| {
        record(cfg, &policy, board, &punches, progress, feed)
    });
    report.rows = total;
    report.refused_count = refused.len();
    report.refused = refused;
    report.held = held.len();
    let notifications = match notifications {
        Ok(n) => n,
        // The publishers' Redis connections could not be opened: nothing was published, every
        // event recorded waits in its outbox for `relay`.
        Err(e) => {
            let line = crate::ops::exit::one_line(&e);
            fail(&mut report, e);
            DrainReport {
                pending: report.recorded + report.unchanged,
                redis_failed: Some(line),
                ..Default::default()
            }
        }
    };
    // Redis failed while the events were published, after the punches were recorded: the
    // summary says what was done before, and the command fails with Redis's words (exit 3).
    if let Some(line) = &notifications.redis_failed {
        fail(
            &mut report,
            Error::service(Service::Redis, format!("while publishing the notifications: {line}")).into(),
        );
    }
    let redis_answered = report.failure.as_ref().and_then(crate::redis::failure::answered);
    let (replication, unreplicated) = match &report.failure {
        // Redis failed: nothing more is asked of it (the summary says what was recorded).
        Some(_) if cfg.replication.min_replicas_acked > 0 => (Replication::Pending, vec!["Redis failed".to_string()]),
        _ => replicated(cfg, board, &depts, report.recorded + report.unchanged),
    };
    Ok(Bulk {
        report,
        notifications,
        redis_answered,
        departments: depts,
        held_for_review: held.into_iter().take(SHOWN_REFUSALS).collect(),
        replication,
        unreplicated,
    })
}

/// Wait for the punches recorded to reach `redis.min_replicas_acked` replicas: one `WAIT` per
/// Redis master holding one of `depts`' boards (as a single check-in waits for its one punch).
/// The punches are recorded whatever this says: nothing here fails the command.
fn replicated(cfg: &Config, board: &mut Board, depts: &[String], applied: usize) -> (Replication, Vec<String>) {
    let r = cfg.replication;
    if r.min_replicas_acked == 0 || applied == 0 {
        return (Replication::Off, Vec::new());
    }
    let pending: Vec<String> = match board.wait_replicated_masters(depts, r.min_replicas_acked, r.wait_timeout_ms) {
        Ok(masters) => masters
            .into_iter()
            .filter_map(|(master, got)| match got {
                Ok(n) if n >= r.min_replicas_acked => None,
                Ok(n) => Some(format!(
                    "{master}: {n} of {} replica(s) acknowledged within {} ms",
                    r.min_replicas_acked, r.wait_timeout_ms
                )),
                Err(why) => Some(why),
            })
            .collect(),
        Err(e) => vec![crate::ops::exit::one_line(&e)],
    };
    if pending.is_empty() {
        (Replication::Replicated, pending)
    } else {
        (Replication::Pending, pending)
    }
}

/// Hold for review the punches back-dated past the replay window, unless this process's key
/// may replay offline punches (the registry is read only when some punch is that old). Returns
/// the punches to record and the ones held.
fn hold_backdated(
    cfg: &Config,
    policy: &Policy,
    board: &mut Board,
    punches: Vec<Punch>,
    now: DateTime<Utc>,
) -> Result<(Vec<Punch>, Vec<HeldPunch>)> {
    let window = policy.replay_window_minutes;
    let past = |p: &Punch| crate::domain::day::review::past_window(p.at, now, window);
    if !punches.iter().any(past) || crate::ops::keys::may_replay(board, now)? {
        return Ok((punches, Vec::new()));
    }
    let (old, keep): (Vec<Punch>, Vec<Punch>) = punches.into_iter().partition(past);
    let rules = PunchRules::new(policy, cfg.timezone);
    let ids = crate::ops::checkin::review::hold(cfg, board, rules, &old)?;
    let held = old
        .iter()
        .zip(ids)
        .map(|(p, id)| {
            HeldPunch::new(
                p,
                board.held_record(rules, p).0,
                id,
                cfg.timezone,
                board.key_id(),
                window,
            )
        })
        .collect();
    Ok((keep, held))
}

/// The report's failure, unless recording failed first (that one stands).
fn fail(report: &mut BulkReport, e: anyhow::Error) {
    if report.failure.is_none() {
        report.error = Some(crate::ops::exit::one_line(&e));
        report.failure = Some(e);
    }
}

/// The punches to record, every refusal in line order, the server's "now", and the policy
/// the punches are recorded by (today's).
type Prepared = (Vec<Punch>, Vec<Refusal>, DateTime<Utc>, Policy);

/// Resolve and classify every row: the punches to record, and every refusal in line order.
/// The Redis server's clock, read once with the roster lookup, is the "now" every row's time is
/// checked against; a host whose clock is off by more than `policy.max_clock_skew_secs` is
/// refused (exit 1) before anything is written: every row of a punch file has its own time.
fn prepare(cfg: &Config, board: &mut Board, rows: Vec<Row>, refused: Vec<Refusal>) -> Result<Prepared> {
    let mut ids: Vec<&str> = rows.iter().map(|r| r.employee_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let (mut known, clock) = resolve_timed(cfg, board, &ids, None)?;
    // Recording is judged by today's rules (how far back, the clocks' agreement), as a single
    // check-in's is.
    let policy = crate::ops::lookup::policy_on(
        cfg,
        board,
        crate::domain::day::policy::work_date(cfg.timezone, clock.server),
    )?;
    clock
        .check(policy.max_clock_skew_secs, "a punch with an explicit time")
        .map_err(Error::refused)?;
    let shifts = crate::ops::lookup::shifts(cfg, board, &ids, &policy)?;
    let policy = &policy;
    let tz = cfg.timezone;
    let (rows, mut refused) = punch_file::keep_within(&PunchWindow::new(policy, tz, clock.server), rows, refused);
    let shift = clock.offset();
    let mut punches = Vec::with_capacity(rows.len());
    let mut by_shift = Clocks::new(&shifts, tz);
    let last = last_rows(&rows);
    for (r, last) in rows.into_iter().zip(last) {
        // An employee's last row takes their entry (most have one row): no copy of it per punch.
        let e = if last {
            known.remove(&r.employee_id)
        } else {
            known.get(&r.employee_id).cloned()
        };
        match e {
            Some(e) => {
                // With no shift assigned, everyone's is the default (the policy's): one clock
                // per day, worked out once, as before.
                let facts = by_shift.facts(&e.id, &e.department_id, r.at);
                let date = facts.work_date;
                // Outside the employee's employment dates: refused like an unknown employee.
                if let Some(reason) = e.employment.refusal(&e.id, date) {
                    refused.push(Refusal { line: r.line, reason });
                    continue;
                }
                let mut p = Punch::with_facts(e, r.kind, r.at, &r.source, facts);
                // When it was recorded, by the server's clock: this host's, put right.
                p.recorded_at += shift;
                punches.push(p);
            }
            None => refused.push(Refusal {
                line: r.line,
                reason: format!("unknown employee '{}'", r.employee_id),
            }),
        }
    }
    refused.sort_by_key(|r| r.line);
    Ok((punches, refused, clock.server, policy.clone()))
}

/// For each row, whether it is its employee's last.
fn last_rows(rows: &[Row]) -> Vec<bool> {
    let mut seen = HashSet::with_capacity(rows.len());
    let mut last: Vec<bool> = rows.iter().rev().map(|r| seen.insert(r.employee_id.as_str())).collect();
    last.reverse();
    last
}

/// Record the punches on the boards, handing each script call's events over as Redis answers
/// it. When Redis fails part-way, the report still says what was recorded before, with the
/// failure in it.
fn record(
    cfg: &Config,
    policy: &Policy,
    board: &mut Board,
    punches: &[Punch],
    mut progress: impl FnMut(usize),
    feed: &Feed,
) -> BulkReport {
    let rules = PunchRules::new(policy, cfg.timezone);
    let (outcomes, done) = board.punch_many_streamed(rules, punches, |call, out| {
        progress(call.len());
        let events = call
            .iter()
            .filter_map(|&i| {
                let stored = out[i].as_mut()?.event_json.take()?;
                let p = &punches[i];
                Some((p.employee.department_id.clone(), p.event_id.clone(), stored))
            })
            .collect();
        feed.send(events);
    });
    let failure = done.err();
    if failure.is_some() {
        feed.abandon();
    }
    let outcomes: Vec<&PunchOutcome> = outcomes.iter().flatten().collect();
    let recorded = outcomes.iter().filter(|o| o.changed).count();
    BulkReport {
        recorded,
        unchanged: outcomes.len() - recorded,
        repeats: outcomes.iter().filter(|o| o.duplicate).count(),
        unconfirmed: punches.len() - outcomes.len(),
        error: failure.as_ref().map(crate::ops::exit::one_line),
        failure,
        ..Default::default()
    }
}
