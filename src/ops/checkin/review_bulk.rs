//! `review approve|reject` by filter: every pending held punch of a department, a work date
//! or a recording key (or every one) decided in one command, each by the same rules as one at
//! a time (`lookup::may_act` with `authority::may_review`) and audited on its own row. The
//! MySQL reads are batched (the punches, their employees, their settled days); each approved
//! punch goes on its board through the board's own script (`Board::punch_as`, as `review
//! approve ID` does), on one Redis connection, and the events are published once at the end
//! from the outboxes (at least once, as `relay` does).

use std::collections::BTreeSet;

use anyhow::{Context, Result};
use chrono::NaiveDate;
use serde::Serialize;

use super::review::punch_of;
use crate::config::Config;
use crate::domain::day::review::Status;
use crate::domain::people::authority;
use crate::error::Error;
use crate::mysql::held_punches::{self, Filter, Held};
use crate::ops::lookup;
use crate::ops::relay::DrainReport;
use crate::redis::board::{Board, Punch, PunchRules};

/// Held punches locked, applied and decided per transaction: a failure part-way leaves the
/// chunk pending (applying one again is a repeat: same event, same time).
const CHUNK: usize = 100;
/// Refusals a summary lists (it counts them all).
pub(crate) const SHOWN_REFUSED: usize = 20;

/// A decision on every pending held punch `filter` matches.
#[derive(Debug, Clone)]
pub(crate) struct BulkRequest<'a> {
    /// Empty: every pending punch (`--all-pending`).
    pub filter: Filter<'a>,
    pub approve: bool,
    pub reason: Option<&'a str>,
    /// The operating-system account running the command: who acts.
    pub os_user: &'a str,
    /// Count only: decide nothing.
    pub dry_run: bool,
}

/// A punch left pending, and why.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Refused {
    pub review_id: u64,
    pub employee_id: String,
    pub department_id: String,
    pub work_date: NaiveDate,
    pub reason: String,
}

/// What a bulk decision did (or, `dry_run`, would do): the `review approve|reject --json`
/// object with filters.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BulkDecided {
    pub decision: Status,
    pub dry_run: bool,
    /// The employee who decided: the one the roster maps to `os_user`.
    pub by: String,
    pub os_user: String,
    /// The MySQL account the audit rows name (empty when nothing was decided).
    pub db_user: String,
    pub reason: Option<String>,
    /// Pending held punches the filter matched.
    pub matched: usize,
    pub approved: usize,
    pub rejected: usize,
    /// Of `approved`: punches that moved their day's first check-in or last check-out.
    pub changed: usize,
    /// Punches refused (left pending), every one counted.
    pub refused_count: usize,
    /// The first [`SHOWN_REFUSED`] of them, with why.
    pub refused: Vec<Refused>,
    /// Settled days that approved punches landed on: the next settle (`settle --date D`)
    /// writes their rows again.
    pub days_settled: Vec<NaiveDate>,
    /// The supervisors' notifications of the approved punches (`None`: nothing to send).
    pub notifications: Option<DrainReport>,
}

impl BulkDecided {
    fn refuse(&mut self, h: &Held, reason: String) {
        self.refused_count += 1;
        if self.refused.len() < SHOWN_REFUSED {
            self.refused.push(Refused {
                review_id: h.id,
                employee_id: h.employee_id.clone(),
                department_id: h.department_id.clone(),
                work_date: h.work_date,
                reason,
            });
        }
    }

    fn decided(&self) -> usize {
        self.approved + self.rejected
    }
}

/// Decide every pending held punch `req.filter` matches that the account running it may
/// decide; refuse (and leave pending) the others, each with why. Stores are opened once.
pub(crate) fn decide_all(cfg: &Config, req: &BulkRequest) -> Result<BulkDecided> {
    crate::domain::day::review::check_reason(req.reason, !req.approve).map_err(Error::input)?;
    let db = crate::mysql::Db::open(cfg)?;
    let mut conn = db.conn()?;
    let actor = lookup::actor(&mut conn, req.os_user, None)?;
    let held = held_punches::list(&mut conn, req.filter, false)?;
    let decision = if req.approve {
        Status::Approved
    } else {
        Status::Rejected
    };
    let mut out = BulkDecided {
        decision,
        dry_run: req.dry_run,
        by: actor.employee_id.clone(),
        os_user: req.os_user.to_string(),
        db_user: String::new(),
        reason: req.reason.map(str::to_string),
        matched: held.len(),
        approved: 0,
        rejected: 0,
        changed: 0,
        refused_count: 0,
        refused: Vec::new(),
        days_settled: Vec::new(),
        notifications: None,
    };
    if held.is_empty() {
        return Ok(out);
    }
    // Who may decide which: the employees read once, every punch judged by the one rule.
    let mut ids: Vec<&str> = held.iter().map(|h| h.employee_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let known = crate::mysql::corrections::supervisors_of(&mut conn, &ids)?;
    let today = lookup::server_today(&mut conn, cfg.timezone)?;
    let mut allowed = Vec::with_capacity(held.len());
    for h in &held {
        let target = (h.employee_id.as_str(), known.get(&h.employee_id).cloned());
        match lookup::may_act(&actor, target, today, h.work_date, authority::may_review) {
            Ok(()) => allowed.push(h),
            Err(why) => out.refuse(h, why.to_string()),
        }
    }
    if !req.approve {
        if req.dry_run {
            out.rejected = allowed.len();
            return Ok(out);
        }
        let ids: Vec<u64> = allowed.iter().map(|h| h.id).collect();
        for chunk in ids.chunks(CHUNK) {
            let mut tx = crate::mysql::begin(&mut conn)?;
            let pending = still_pending(&mut tx, chunk, &held, &mut out)?;
            out.db_user =
                held_punches::decide_many(&mut tx, &pending, decision, &actor.employee_id, req.os_user, req.reason)?;
            tx.commit()?;
            out.rejected += pending.len();
        }
        return Ok(out);
    }
    // Approving: each punch as its board will take it (the roster and shifts read once).
    let mut board = Board::open(cfg)?;
    let found = lookup::resolve(cfg, &mut board, &ids)?;
    // Today's rules (a held punch is approved now; the default shift never crosses midnight).
    let today = crate::domain::day::policy::work_date(cfg.timezone, board.read_clock()?.server);
    let policy = lookup::policy_on(cfg, &mut board, today)?;
    let shifts = lookup::shifts(cfg, &mut board, &ids, &policy)?;
    let mut punches: Vec<(u64, Punch)> = Vec::with_capacity(allowed.len());
    for h in allowed {
        match punch_of(cfg, h, found.get(&h.employee_id), &shifts) {
            Ok(p) => punches.push((h.id, p)),
            Err(why) => out.refuse(h, why.to_string()),
        }
    }
    let days: Vec<(NaiveDate, &str)> = punches
        .iter()
        .map(|(_, p)| (p.facts.work_date, p.employee.id.as_str()))
        .collect();
    let settled = crate::mysql::attendance::settled_among(&mut conn, &days)?;
    if req.dry_run {
        out.approved = punches.len();
        return Ok(out);
    }
    let rules = PunchRules::new(&policy, cfg.timezone);
    let mut depts = BTreeSet::new();
    let mut days_settled = BTreeSet::new();
    for chunk in punches.chunks(CHUNK) {
        let ids: Vec<u64> = chunk.iter().map(|(id, _)| *id).collect();
        let mut tx = crate::mysql::begin(&mut conn)?;
        let pending = still_pending(&mut tx, &ids, &held, &mut out)?;
        for (id, p) in chunk.iter().filter(|(id, _)| pending.contains(id)) {
            let o = board.punch_as(rules, p, true).with_context(|| {
                format!(
                    "approving review {id}: {} punch(es) decided before it, the rest left pending",
                    out.decided()
                )
            })?;
            out.changed += usize::from(o.changed);
            if o.event_json.is_some() {
                depts.insert(p.employee.department_id.clone());
            }
            let day = (p.facts.work_date, p.employee.id.clone());
            if settled.contains(&day) {
                days_settled.insert(day.0);
            }
        }
        out.db_user =
            held_punches::decide_many(&mut tx, &pending, decision, &actor.employee_id, req.os_user, req.reason)?;
        tx.commit()?;
        out.approved += pending.len();
    }
    out.days_settled = days_settled.into_iter().collect();
    if !depts.is_empty() {
        out.notifications = Some(notify(cfg, &mut board, &depts.into_iter().collect::<Vec<_>>()));
    }
    Ok(out)
}

/// Of `ids`, locked in `tx`, the ones still pending; the others (decided meanwhile by another
/// reviewer) are refused with who decided them.
fn still_pending(tx: &mut crate::mysql::Tx<'_>, ids: &[u64], held: &[Held], out: &mut BulkDecided) -> Result<Vec<u64>> {
    let locked = held_punches::lock_many(tx, ids)?;
    let mut pending = Vec::with_capacity(locked.len());
    for l in locked {
        if l.status == Status::Pending {
            pending.push(l.id);
        } else if let Some(h) = held.iter().find(|h| h.id == l.id) {
            let why = format!(
                "review {} was already {} by {} meanwhile",
                l.id,
                l.status.as_str(),
                l.decided_by.as_deref().unwrap_or("?")
            );
            out.refuse(h, why);
        }
    }
    Ok(pending)
}

/// Publish the approved punches' events from their departments' outboxes, on one publisher.
/// The punches are recorded and decided whatever this says: a broker away leaves the events
/// in their outboxes for `relay`, counted as pending.
fn notify(cfg: &Config, board: &mut Board, depts: &[String]) -> DrainReport {
    match crate::ops::relay::drain_outboxes_of(cfg, board, depts) {
        Ok(r) => r,
        Err(e) => {
            let why = crate::ops::exit::one_line(&e);
            crate::ops::relay::backlog_of(board, &why).unwrap_or(DrainReport {
                problem: Some(why),
                ..DrainReport::default()
            })
        }
    }
}
