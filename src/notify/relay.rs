//! Draining the Redis outboxes into the broker: after a check-in, by `relay`, and by `settle`.
//! An event leaves its outbox only once the broker has confirmed it.

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;

use super::Publisher;
use crate::board;
use crate::config::Config;
use crate::error::{Error, Service};
use crate::keys::Keys;

/// A check-in also sends its department's older pending events (left by an earlier broker
/// outage), but not younger ones: those likely belong to a concurrent check-in that is
/// publishing them right now, and sending them too would only make duplicates.
pub const STALE_AFTER_SECS: i64 = 5;
/// At most this many older events ride along with one check-in; `relay` drains the rest.
const PIGGYBACK: usize = 100;

/// What one drain did.
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct DrainReport {
    /// Departments whose outbox held events.
    pub departments: usize,
    /// Events the broker confirmed (and that left their outbox).
    pub sent: usize,
    /// Events still in an outbox (nacked, unconfirmed, or the broker went away mid-way).
    pub pending: usize,
    /// Why the broker stopped taking events, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Drain every outbox of the namespace once, on a fresh connection.
pub fn drain_outboxes(cfg: &Config, con: &mut redis::Connection, keys: &Keys) -> Result<DrainReport> {
    let mut publisher = Publisher::connect(cfg)?;
    let report = drain_with(&mut publisher, con, keys)?;
    publisher.close();
    Ok(report)
}

/// Drain every outbox once on an open publisher (`relay --follow` keeps one across rounds).
pub fn drain_with(publisher: &mut Publisher, con: &mut redis::Connection, keys: &Keys) -> Result<DrainReport> {
    let depts = board::outbox_departments(con, keys)?;
    drain_departments(publisher, con, keys, &depts)
}

/// Drain the given departments' outboxes (a bulk check-in knows which ones it filled), with
/// `amqp.confirm_window` confirms outstanding per department.
pub fn drain_departments(
    publisher: &mut Publisher,
    con: &mut redis::Connection,
    keys: &Keys,
    depts: &[String],
) -> Result<DrainReport> {
    let mut report = DrainReport::default();
    for dept in depts {
        let items = board::outbox_pending(con, keys, dept)?;
        if items.is_empty() {
            continue;
        }
        report.departments += 1;
        let acked = if publisher.problem().is_none() {
            publisher.publish_confirmed(&items)?
        } else {
            Vec::new()
        };
        board::outbox_ack(con, keys, dept, &acked)?;
        report.sent += acked.len();
        report.pending += items.len() - acked.len();
    }
    report.problem = publisher.problem().map(str::to_string);
    Ok(report)
}

/// Publish one check-in's event and its department's stale pending events on `publisher`
/// (then closed); Ok(true) if the check-in's own event was confirmed (and left the outbox),
/// Ok(false) if the broker refused it, Err if the broker failed on the way.
pub fn send_punch(
    mut publisher: Publisher,
    con: &mut redis::Connection,
    keys: &Keys,
    dept: &str,
    event_id: &str,
) -> Result<bool> {
    let now = Utc::now();
    let pending = board::outbox_pending(con, keys, dept)?;
    let mut items: Vec<(String, String)> = pending
        .iter()
        .filter(|(id, json)| id != event_id && is_stale(json, now))
        .take(PIGGYBACK)
        .cloned()
        .collect();
    match pending.into_iter().find(|(id, _)| id == event_id) {
        Some(own) => items.push(own),
        // Only a confirmed publish removes an event: a concurrent `relay` already sent it.
        None => return Ok(true),
    }
    let acked = publisher.publish_confirmed(&items)?;
    let problem = publisher.problem().map(str::to_string);
    publisher.close();
    board::outbox_ack(con, keys, dept, &acked)?;
    match (acked.iter().any(|id| id == event_id), problem) {
        (true, _) => Ok(true),
        (false, Some(why)) => Err(Error::service(Service::Rabbitmq, why).into()),
        (false, None) => Ok(false),
    }
}

fn is_stale(json: &str, now: DateTime<Utc>) -> bool {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| v.get("at")?.as_str().map(str::to_string))
        .and_then(|at| DateTime::parse_from_rfc3339(&at).ok())
        .is_some_and(|at| (now - at.with_timezone(&Utc)).num_seconds() >= STALE_AFTER_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_events_older_than_the_threshold_are_stale() {
        let now = DateTime::parse_from_rfc3339("2026-11-30T09:00:10+01:00")
            .unwrap()
            .with_timezone(&Utc);
        assert!(is_stale(r#"{"at":"2026-11-30T09:00:00+01:00"}"#, now));
        assert!(!is_stale(r#"{"at":"2026-11-30T09:00:08+01:00"}"#, now));
        assert!(!is_stale("not json", now));
    }
}
