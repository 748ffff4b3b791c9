//! Draining the Redis outboxes into the broker: after a check-in, by `relay`, and by `settle`.
//! An event leaves its outbox only once the broker has confirmed it.

use anyhow::Result;
use chrono::{DateTime, Utc};
use redis::ConnectionLike;
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
pub fn drain_outboxes(cfg: &Config, con: &mut impl board::Keyspace, keys: &Keys) -> Result<DrainReport> {
    let mut publisher = Publisher::connect(cfg)?;
    let report = drain_with(&mut publisher, con, keys)?;
    publisher.close();
    Ok(report)
}

/// Drain every outbox once on an open publisher (`relay --follow` keeps one across rounds).
pub fn drain_with(publisher: &mut Publisher, con: &mut impl board::Keyspace, keys: &Keys) -> Result<DrainReport> {
    let depts = board::outbox_departments(con, keys)?;
    drain_departments(publisher, con, keys, &depts)
}

/// Drain the given departments' outboxes (a bulk check-in knows which ones it filled). Events
/// of many departments go out in one `publish_confirmed` call, so the confirm window spans
/// departments: waiting for each department's last confirm in turn cost one broker round trip
/// per department (500 of them for a whole company).
pub fn drain_departments(
    publisher: &mut Publisher,
    con: &mut impl ConnectionLike,
    keys: &Keys,
    depts: &[String],
) -> Result<DrainReport> {
    let mut report = DrainReport::default();
    let mut batch: Vec<(String, Vec<(String, String)>)> = Vec::new();
    let mut queued = 0;
    for (i, dept) in depts.iter().enumerate() {
        let items = board::outbox_pending(con, keys, dept)?;
        if !items.is_empty() {
            report.departments += 1;
            queued += items.len();
            batch.push((dept.clone(), items));
        }
        if queued >= DRAIN_BATCH || (i + 1 == depts.len() && !batch.is_empty()) {
            publish_batch(publisher, con, keys, std::mem::take(&mut batch), &mut report)?;
            queued = 0;
        }
    }
    report.problem = publisher.problem().map(str::to_string);
    Ok(report)
}

/// Events published per `publish_confirmed` call while draining.
const DRAIN_BATCH: usize = 10_000;

fn publish_batch(
    publisher: &mut Publisher,
    con: &mut impl ConnectionLike,
    keys: &Keys,
    batch: Vec<(String, Vec<(String, String)>)>,
    report: &mut DrainReport,
) -> Result<()> {
    let all: Vec<(String, String)> = batch.iter().flat_map(|(_, items)| items.iter().cloned()).collect();
    let acked: std::collections::HashSet<String> = if publisher.problem().is_none() {
        publisher.publish_confirmed(&all)?.into_iter().collect()
    } else {
        Default::default()
    };
    for (dept, items) in &batch {
        let done: Vec<String> = items
            .iter()
            .filter(|(id, _)| acked.contains(id))
            .map(|(id, _)| id.clone())
            .collect();
        board::outbox_ack(con, keys, dept, &done)?;
        report.sent += done.len();
        report.pending += items.len() - done.len();
    }
    Ok(())
}

/// Publish one check-in's event and its department's stale pending events on `publisher`
/// (then closed); Ok(true) if the check-in's own event was confirmed (and left the outbox),
/// Ok(false) if the broker refused it, Err if the broker failed on the way.
pub fn send_punch(
    mut publisher: Publisher,
    con: &mut impl ConnectionLike,
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

/// An event that has waited in the outbox for a while: one an earlier publish left behind.
/// Its age counts from when it was recorded, not from the punch itself, which a kiosk that was
/// offline may replay hours later (events from before `recorded_at` existed fall back on `at`).
fn is_stale(json: &str, now: DateTime<Utc>) -> bool {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .and_then(|v| {
            v.get("recorded_at")
                .or_else(|| v.get("at"))?
                .as_str()
                .map(str::to_string)
        })
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
        // A punch replayed from an hour ago, recorded a moment ago, is not stale.
        assert!(!is_stale(
            r#"{"at":"2026-11-30T08:00:00+01:00","recorded_at":"2026-11-30T08:00:08.000Z"}"#,
            now
        ));
    }
}
