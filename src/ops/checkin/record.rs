//! One punch put on its board and its supervisor notified: the check-in's answer (`Checkin`),
//! the board's Lua script with the event in the department's outbox, the wait for replicas,
//! then the event published with a confirm (or handed to a live relay). A broker that is down
//! leaves the event pending in the outbox, never fails the punch. A single check-in, an
//! approved held punch and a void's notice go through here.

use anyhow::Result;
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use serde::Serialize;

use crate::amqp::Publisher;
use crate::config::Config;
use crate::domain::day::policy;
use crate::domain::punch::Kind;
use crate::error::Error;
use crate::redis::board::{Board, Punch, PunchRules};

/// Refuse a punch the rules do not accept: further in the future than the clock skew, or on a
/// work date more than `policy.max_backdate_days` before today (see `policy::PunchWindow`);
/// `now` is the Redis server's clock.
pub(crate) fn check_window(
    policy: &crate::config::Policy,
    tz: Tz,
    at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), Error> {
    crate::domain::day::policy::PunchWindow::new(policy, tz, now)
        .check(at)
        .map_err(Error::refused)
}

/// What became of a punch: the `status` of `checkin --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PunchStatus {
    /// On its board.
    Applied,
    /// Held for a supervisor's review (`review approve|reject`).
    HeldForReview,
}

impl PunchStatus {
    /// The word `--json` and the text lines use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PunchStatus::Applied => "applied",
            PunchStatus::HeldForReview => "held_for_review",
        }
    }
}

impl std::fmt::Display for PunchStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a punch's event reaches its supervisor's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Notification {
    /// The broker confirmed it.
    Sent,
    /// A live `relay --follow` was woken to publish it from the outbox.
    HandedOff,
    /// It waits in the outbox: `relay` sends it.
    Pending,
    /// An exact duplicate: no event.
    None,
}

impl Notification {
    /// The word `--json` and the text lines use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Notification::Sent => "sent",
            Notification::HandedOff => "handed_off",
            Notification::Pending => "pending",
            Notification::None => "none",
        }
    }
}

impl std::fmt::Display for Notification {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a punch's board write reached `redis.min_replicas_acked` replicas.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Replication {
    /// At least that many replicas hold it.
    Replicated,
    /// Fewer did within `redis.wait_timeout_ms`: recorded, but the loss of its master could still take it back (punch again: a repeat changes nothing).
    Pending,
    /// `redis.min_replicas_acked` is 0.
    Off,
}

impl Replication {
    /// The word `--json` and the text lines use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Replication::Replicated => "replicated",
            Replication::Pending => "pending",
            Replication::Off => "off",
        }
    }
}

impl std::fmt::Display for Replication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a check-in did: the `checkin --json` object.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Checkin {
    /// Always `applied` (a held punch is another object, `HeldPunch`).
    pub status: PunchStatus,
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
    pub notification: Notification,
    /// Why a notification is pending, for stderr.
    #[serde(skip)]
    pub pending_because: Option<String>,
    pub replication: Replication,
    /// How many replicas `WAIT` counted (`None` when not asked, or when WAIT failed).
    pub replicas_acked: Option<u32>,
    /// Why the replication is pending, for stderr.
    #[serde(skip)]
    pub unreplicated_because: Option<String>,
    #[serde(skip)]
    pub local_at: DateTime<Tz>,
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
        false => (Notification::None, None),
        true => notify(cfg, board, dept, &p.event_id, connecting, now),
    };
    let date = p.facts.work_date;
    let instant = |s: i64| crate::domain::instant::text(&policy::instant(tz, date, s));
    let local_at = at.with_timezone(&tz);
    Ok(Checkin {
        status: PunchStatus::Applied,
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
fn replicated(cfg: &Config, board: &mut Board, dept: &str, wrote: bool) -> (Replication, Option<u32>, Option<String>) {
    let r = cfg.replication;
    if r.min_replicas_acked == 0 {
        return (Replication::Off, None, None);
    }
    match board.wait_replicated(dept, wrote, r.min_replicas_acked, r.wait_timeout_ms) {
        Ok(n) if n >= r.min_replicas_acked => (Replication::Replicated, Some(n), None),
        Ok(n) => (
            Replication::Pending,
            Some(n),
            Some(format!(
                "{n} of {} replica(s) acknowledged within {} ms",
                r.min_replicas_acked, r.wait_timeout_ms
            )),
        ),
        Err(e) => (Replication::Pending, None, Some(crate::ops::exit::one_line(&e))),
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
) -> (Notification, Option<String>) {
    match connecting {
        Some(connecting) => notify_now(cfg, connecting, board, dept, event_id, now),
        None => match board.wake_relay(dept) {
            Ok(true) => (Notification::HandedOff, None),
            // The relay's heartbeat expired since: publish as if there had been none.
            Ok(false) => {
                let connecting = Publisher::connect_in_background(cfg);
                notify_now(cfg, connecting, board, dept, event_id, now)
            }
            Err(e) => (Notification::Pending, Some(crate::ops::exit::one_line(&e))),
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
) -> (Notification, Option<String>) {
    let sent = connecting.wait().and_then(|mut publisher| {
        publisher.set_confirm_timeout_ms(cfg.amqp.checkin_confirm_ms);
        crate::ops::relay::send_punch(publisher, board, dept, event_id, now)
    });
    match sent {
        Ok(true) => (Notification::Sent, None),
        Ok(false) => (Notification::Pending, Some("the broker did not confirm it".to_string())),
        Err(e) => (Notification::Pending, Some(crate::ops::exit::one_line(&e))),
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
        assert!(check_window(&cfg.policy, cfg.timezone, at("2026-11-30T08:01:00Z"), now).is_ok());
        assert!(check_window(&cfg.policy, cfg.timezone, at("2026-11-30T08:03:00Z"), now).is_err());
        assert!(check_window(&cfg.policy, cfg.timezone, at("2026-11-23T08:00:00Z"), now).is_ok());
        assert!(check_window(&cfg.policy, cfg.timezone, at("2026-11-22T08:00:00Z"), now).is_err());
    }
}
