//! Draining the Redis outboxes into the broker: after a check-in, by `relay`, and by `settle`.
//! An event leaves its outbox only once the broker has confirmed it.

use anyhow::Result;
use chrono::{DateTime, Utc};
use serde::Serialize;

use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::recent::{Confirmed, Recent};
use crate::amqp::Flow;
use crate::amqp::Publisher;
use crate::config::Config;
use crate::error::{Error, Service};
use crate::redis::board::Board;

/// A check-in also sends its department's older pending events (left by an earlier broker
/// outage), but not younger ones: those likely belong to a concurrent check-in that is
/// publishing them right now, and sending them too would only make duplicates.
pub(crate) const STALE_AFTER_SECS: i64 = 5;
/// At most this many older events ride along with one check-in (taken from one page of the
/// outbox, in no particular order); `relay` drains the rest. Kept small: each one is on the
/// kiosk's time (100 made a check-in facing a backlog 1.3x-1.4x slower than one facing 10).
const PIGGYBACK: usize = 10;

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
    /// Outbox entries that are no event (`<dept> <event id>: why`, the first
    /// [`MALFORMED_SHOWN`]): never published, left in their outbox and counted in `pending`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub malformed: Vec<String>,
    /// Of `sent`: events the broker confirmed that are still in their outbox, because Redis
    /// failed before they could be removed (`relay` sends them again: at least once).
    #[serde(skip_serializing_if = "is_zero")]
    pub unremoved: usize,
    /// Of `pending`: events the broker had confirmed within `amqp.republish_horizon_seconds` of
    /// losing the connection, or of refusing events of their department (a queue failing over),
    /// put back in their outboxes to be sent again (a node that dies, or a survivor right after,
    /// may not keep what it had just confirmed; see docs/durability.md section 5).
    #[serde(skip_serializing_if = "is_zero")]
    pub put_back: usize,
    /// Of `sent`: events sent again (found in an outbox, or put back) that the journal already
    /// held: published to their department queues only, so that the journal holds each once.
    #[serde(skip_serializing_if = "is_zero")]
    pub already_journaled: usize,
    /// Why the journal could not be read to check that (those events were journaled again).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub journal_unchecked: Option<String>,
    /// Redis failed while publishing (a bulk check-in's publishers), in one line: the figures
    /// are what was done before.
    #[serde(skip)]
    pub redis_failed: Option<String>,
}

impl DrainReport {
    /// `pending`, in words, with how many of them were put back after a broker loss.
    pub fn pending_words(&self) -> String {
        match self.put_back {
            0 => format!("{} pending", self.pending),
            n => format!(
                "{} pending ({n} of them confirmed just before the broker failed, put back to be sent again)",
                self.pending
            ),
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Malformed outbox entries a drain names; it counts them all in `pending`.
pub(crate) const MALFORMED_SHOWN: usize = 20;

/// What the outboxes hold when no drain could run (the broker unreachable), read from Redis
/// alone, with why: what the metrics and an alert on pending events need most then.
pub(crate) fn backlog_of(board: &mut Board, why: &str) -> Result<DrainReport> {
    let (departments, pending) = board.outbox_backlog()?;
    Ok(DrainReport {
        departments,
        pending,
        problem: Some(why.to_string()),
        ..DrainReport::default()
    })
}

/// [`backlog_of`] on a Redis connection of its own; `None` when Redis cannot be read either.
pub(crate) fn backlog(cfg: &Config, why: &str) -> Option<DrainReport> {
    backlog_of(&mut Board::open(cfg).ok()?, why).ok()
}

/// `relay` without `--follow`: every outbox of the namespace drained once (see
/// [`drain_outboxes`]), on a Redis connection of its own.
pub(crate) fn drain_once(cfg: &Config) -> Result<DrainReport> {
    drain_outboxes(cfg, &mut Board::open(cfg)?)
}

/// Drain every outbox of the namespace once, on fresh connections: `amqp.publishers` of them
/// at once for a backlog of several departments (see [`in_parallel`]). No broker: exit 3.
pub(crate) fn drain_outboxes(cfg: &Config, board: &mut Board) -> Result<DrainReport> {
    let depts = board.outbox_departments()?;
    drain_outboxes_of(cfg, board, &depts)
}

/// [`drain_outboxes`] for these departments' outboxes (found by [`Board::outbox_departments`]).
pub(crate) fn drain_outboxes_of(cfg: &Config, board: &mut Board, depts: &[String]) -> Result<DrainReport> {
    if cfg.amqp.publishers.clamp(1, depts.len().max(1)) == 1 {
        return drain_on_own_publisher(cfg, board, depts);
    }
    in_parallel(cfg, depts, |share| {
        drain_on_own_publisher(cfg, &mut Board::open(cfg)?, share)
    })
}

/// Drain `depts` on a publisher of its own; a connection lost on the way puts back what it
/// confirmed within the re-publish horizon (see [`put_back_lost`]).
fn drain_on_own_publisher(cfg: &Config, board: &mut Board, depts: &[String]) -> Result<DrainReport> {
    let mut recent = Recent::new(cfg.amqp.republish_horizon_seconds);
    let mut publisher = Publisher::connect(cfg)?;
    let mut report = drain_departments(&mut publisher, board, depts, &mut recent)?;
    publisher.close();
    put_back_due(board, &mut recent, &mut report)?;
    Ok(report)
}

/// Put back in their outboxes the events `recent` made due: those a drain's broker confirmed
/// within `amqp.republish_horizon_seconds` before its connection was found lost, or before and
/// after it refused events of their department (a queue failing over; [`Trouble`] made both
/// due as it found them), and count them as pending instead of sent. They go again with the
/// rest of the outboxes, by `relay`, on a later connection: a confirm that a failing node did
/// not honour is covered (at least once; consumers drop repeats by event id).
pub(crate) fn put_back_due(board: &mut Board, recent: &mut Recent, report: &mut DrainReport) -> Result<()> {
    let due = recent.take_due();
    if due.is_empty() {
        return Ok(());
    }
    let events: Vec<(&str, &str, &str)> = due
        .iter()
        .map(|e| (e.dept.as_str(), e.id.as_str(), e.stored.as_str()))
        .collect();
    board.outbox_put_back(&events)?;
    report.put_back += due.len();
    report.sent = report.sent.saturating_sub(due.len());
    report.pending += due.len();
    Ok(())
}

/// Run `share` on up to `amqp.publishers` threads at once, each given its own slice of the
/// departments (an outbox is drained by one publisher only), and add up their reports. The
/// first error wins (a broker unreachable from every thread is exit 3 all the same).
pub(crate) fn in_parallel(
    cfg: &Config,
    depts: &[String],
    share: impl Fn(&[String]) -> Result<DrainReport> + Sync,
) -> Result<DrainReport> {
    each_share(shares(cfg, depts), share)
}

/// `depts` cut into up to `amqp.publishers` consecutive shares, one per publisher.
pub(crate) fn shares<'d>(cfg: &Config, depts: &'d [String]) -> Vec<&'d [String]> {
    let n = cfg.amqp.publishers.clamp(1, depts.len().max(1));
    depts.chunks(depts.len().div_ceil(n).max(1)).collect()
}

/// Run `work` on each part on a thread of its own, and add up their reports (the first error
/// wins).
pub(crate) fn each_share<P: Send>(
    parts: Vec<P>,
    work: impl Fn(P) -> Result<DrainReport> + Sync,
) -> Result<DrainReport> {
    let work = &work;
    let reports: Vec<Result<DrainReport>> = std::thread::scope(|s| {
        let running: Vec<_> = parts.into_iter().map(|part| s.spawn(move || work(part))).collect();
        running
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::internal("a publisher thread panicked").into()))
            })
            .collect()
    });
    let mut total = DrainReport::default();
    for r in reports {
        let r = r?;
        total.departments += r.departments;
        total.sent += r.sent;
        total.pending += r.pending;
        total.problem = total.problem.or(r.problem);
        total.malformed.extend(r.malformed);
        total.unremoved += r.unremoved;
        total.put_back += r.put_back;
        total.already_journaled += r.already_journaled;
        total.journal_unchecked = total.journal_unchecked.or(r.journal_unchecked);
        total.redis_failed = total.redis_failed.or(r.redis_failed);
    }
    total.malformed.truncate(MALFORMED_SHOWN);
    Ok(total)
}

/// Drain the given departments' outboxes (a bulk check-in knows which ones it filled), page by
/// page: each page read from an outbox goes into one stream of publishes whose confirm window
/// spans pages and departments (waiting for each department's last confirm in turn cost one
/// broker round trip per department), and what the broker acked leaves its outbox after each
/// page. Memory holds a page, the window and the ids of one department's outbox, never the
/// backlog. An event is removed only once confirmed: a drain killed mid-way leaves the others.
/// What the broker confirms is kept in `recent` (when its horizon is on) and made due again
/// once the connection is found lost or refuses events of its department ([`Trouble`]):
/// [`put_back_due`] then puts it back.
pub(crate) fn drain_departments(
    publisher: &mut Publisher,
    board: &mut Board,
    depts: &[String],
    recent: &mut Recent,
) -> Result<DrainReport> {
    let mut flow: Flow<Sent> = Flow::keeping_failed();
    let mut trouble = Trouble::default();
    // Per department: events read (and offered to the broker), events acked and removed.
    let (mut read, mut sent) = (vec![0; depts.len()], vec![0; depts.len()]);
    let (mut stopped_at, mut malformed) = (None, Vec::new());
    'depts: for (i, dept) in depts.iter().enumerate() {
        // HSCAN may return an entry twice (the hash shrinks as it is drained): send it once.
        let mut offered = HashSet::new();
        let mut cursor = 0;
        loop {
            let (next, page) = board.outbox_page(dept, cursor, PAGE)?;
            for (id, json) in page {
                if !offered.insert(id.clone()) {
                    continue;
                }
                let tag = Sent::new(i, &id, &json, recent);
                // Found in an outbox: it may have been published before (a confirm lost, Redis
                // failing before its removal, put back after a loss); journaled once all the same.
                if !publisher.send_again(&mut flow, &id, &json, tag) {
                    stopped_at = Some(i);
                    break 'depts;
                }
                read[i] += 1;
            }
            for (id, why) in flow.take_malformed() {
                malformed.push(format!("{dept} {id}: {why}"));
            }
            remove_acked(board, depts, &mut flow, &mut sent, recent)?;
            trouble.note(&mut flow, depts, recent);
            if next == 0 {
                break;
            }
            cursor = next;
        }
    }
    publisher.finish(&mut flow);
    remove_acked(board, depts, &mut flow, &mut sent, recent)?;
    trouble.note(&mut flow, depts, recent);
    trouble.end(publisher, depts, recent);
    let mut report = DrainReport::default();
    let done = stopped_at.unwrap_or(depts.len());
    for i in 0..done {
        report.departments += usize::from(read[i] > 0);
        report.sent += sent[i];
        report.pending += read[i] - sent[i];
    }
    // The broker stopped taking events: what the rest of the outboxes hold stays pending.
    if done < depts.len() {
        let rest = &depts[done..];
        let left = board.outbox_lens(rest)?;
        for (i, n) in (done..).zip(left) {
            report.departments += usize::from(n > 0 || sent[i] > 0);
            report.sent += sent[i];
            report.pending += n;
        }
    }
    report.problem = publisher.problem().map(str::to_string);
    let (already, unchecked) = publisher.journal_check();
    report.already_journaled = already;
    report.journal_unchecked = unchecked.map(str::to_string);
    malformed.truncate(MALFORMED_SHOWN);
    report.malformed = malformed;
    Ok(report)
}

/// Entries read from an outbox per HSCAN while draining.
pub(crate) const PAGE: usize = 1_000;

/// An event sent from an outbox: its department (an index into the drain's list) and id, and
/// its outbox value when the publisher keeps a re-publish horizon (to put it back after a loss).
pub(crate) struct Sent {
    i: usize,
    id: String,
    stored: Option<String>,
}

impl Sent {
    pub(crate) fn new(i: usize, id: &str, stored: &str, recent: &Recent) -> Sent {
        Sent {
            i,
            id: id.to_string(),
            stored: recent.on().then(|| stored.to_string()),
        }
    }
}

/// The departments whose events the broker refused (nacked or returned) during a drain or a
/// bulk's publishing. A refusal is how a quorum queue failing over answers, and a surviving
/// node then sometimes also confirms publishes it does not keep (RabbitMQ 3.10, measured:
/// docs/durability.md section 5), so what such a department had confirmed within the horizon,
/// before the refusal and after it, is put back at the end. The refused events themselves stay
/// in their outboxes.
#[derive(Default)]
pub(crate) struct Trouble(BTreeSet<usize>);

impl Trouble {
    /// Take the refusals since the last call: what their departments confirmed until now
    /// becomes due.
    pub(crate) fn note(&mut self, flow: &mut Flow<Sent>, depts: &[String], recent: &mut Recent) {
        let refused: BTreeSet<usize> = flow.take_failed().into_iter().map(|s| s.i).collect();
        if !refused.is_empty() {
            recent.refused(refused.iter().map(|&i| depts[i].as_str()));
            self.0.extend(refused);
        }
    }

    /// The end of the publishing: what the refused departments confirmed since their refusals
    /// becomes due too, and everything kept if the connection was lost.
    pub(crate) fn end(&self, publisher: &Publisher, depts: &[String], recent: &mut Recent) {
        recent.refused(self.0.iter().map(|&i| depts[i].as_str()));
        if publisher.problem().is_some() {
            recent.lost();
        }
    }
}

/// Remove from their outboxes the events the broker acked so far (kept in `recent`).
pub(crate) fn remove_acked(
    board: &mut Board,
    depts: &[String],
    flow: &mut Flow<Sent>,
    sent: &mut [usize],
    recent: &mut Recent,
) -> Result<(), Unremoved> {
    let by_dept = acked_by_dept(depts, flow, sent, recent);
    let taken = by_dept.values().map(Vec::len).sum();
    board
        .outbox_ack_many(&by_dept)
        .map_err(|error| Unremoved { count: taken, error })
}

/// The events the broker acked since the last call, by department (`depts[i]` for a tag's
/// `i`), each counted in `sent[i]` and kept in `recent` (when on): what is to leave the outboxes.
pub(crate) fn acked_by_dept<'d>(
    depts: &'d [String],
    flow: &mut Flow<Sent>,
    sent: &mut [usize],
    recent: &mut Recent,
) -> BTreeMap<&'d str, Vec<String>> {
    let mut by_dept: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for Sent { i, id, stored } in flow.take_acked() {
        sent[i] += 1;
        if let Some(stored) = stored {
            recent.confirmed(Confirmed {
                dept: depts[i].clone(),
                id: id.clone(),
                stored,
            });
        }
        by_dept.entry(depts[i].as_str()).or_default().push(id);
    }
    by_dept
}

/// Redis failed removing confirmed events from their outboxes: how many stay there (counted
/// as sent all the same: the broker has them).
#[derive(Debug)]
pub(crate) struct Unremoved {
    pub count: usize,
    pub error: anyhow::Error,
}

impl From<Unremoved> for anyhow::Error {
    fn from(u: Unremoved) -> Self {
        u.error
    }
}

/// Publish one check-in's event and its department's stale pending events on `publisher`
/// (then closed); Ok(true) if the check-in's own event was confirmed (and left the outbox),
/// Ok(false) if the broker refused it, Err if the broker failed on the way. `now` is the Redis
/// server's clock (the check-in's), the one the events' `recorded_at` was read from: a host
/// whose own clock runs ahead would take fresh events for stale ones.
pub(crate) fn send_punch(
    mut publisher: Publisher,
    board: &mut Board,
    dept: &str,
    event_id: &str,
    now: DateTime<Utc>,
) -> Result<bool> {
    // Only a confirmed publish removes an event: gone, a concurrent `relay` already sent it.
    let Some(own) = board.outbox_get(dept, event_id)? else {
        return Ok(true);
    };
    // One page of the outbox, however long it is: the check-in costs the same with 10 or
    // 100,000 events waiting, and `relay` drains the rest.
    let (_, page) = board.outbox_page(dept, 0, PIGGYBACK)?;
    // Its own event first: the older ones may need the journal read (they may be there
    // already), which then runs while its confirm is on its way.
    let mut items = vec![(event_id.to_string(), own)];
    items.extend(
        page.into_iter()
            .filter(|(id, stored)| id != event_id && is_stale(id, stored, now))
            .take(PIGGYBACK),
    );
    // The older events' journal read is on the kiosk's time: as long as the confirm may take
    // at most; an event it cannot check waits in its outbox for `relay`.
    let budget = publisher.confirm_timeout();
    publisher.check_journal_within(budget);
    let acked = publisher.publish_confirmed(&items, event_id)?;
    let problem = publisher.problem().map(str::to_string);
    publisher.close();
    board.outbox_ack(dept, &acked)?;
    match (acked.iter().any(|id| id == event_id), problem) {
        (true, _) => Ok(true),
        (false, Some(why)) => Err(Error::service(Service::Rabbitmq, why).into()),
        (false, None) => Ok(false),
    }
}

/// An event that has waited in the outbox for a while: one an earlier publish left behind.
/// Its age counts from when it was recorded, not from the punch itself, which a kiosk that was
/// offline may replay hours later (events from before `recorded_at` existed fall back on `at`).
pub(crate) fn is_stale(id: &str, stored: &str, now: DateTime<Utc>) -> bool {
    crate::domain::event::render::render(id, stored)
        .ok()
        .and_then(|ev| ev.recorded_at)
        .is_some_and(|at| (now - at).num_seconds() >= STALE_AFTER_SECS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::event::record::{record_prefix, RecordFields};

    fn instant(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    /// An outbox entry as written before the compact record: the event's JSON.
    fn old_entry(at: &str, recorded_at: Option<&str>) -> String {
        let recorded = recorded_at.map_or(String::new(), |r| format!(r#","recorded_at":"{r}""#));
        format!(
            r#"{{"event_id":"x","employee_id":"E1","employee_name":"Ann","department_id":"D1","at":"{at}","work_date":"2026-11-30","source":"cli"{recorded},"kind":"in","late":false,"late_minutes":0,"early":false,"early_minutes":0,"changed":true}}"#
        )
    }

    /// An outbox entry as the punch script writes it now.
    fn record(at: &str, recorded_at: &str) -> String {
        let fields = RecordFields {
            event_id: "x",
            kind: crate::domain::punch::Kind::In,
            signer: None,
            employee_id: "E1",
            employee_name: "Ann",
            department_id: "D1",
            at: DateTime::parse_from_rfc3339(at).unwrap(),
            work_date: chrono::NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(),
            source: "cli",
            recorded_at: instant(recorded_at),
            late_minutes_if_in: 0,
            early_minutes_if_out: 0,
        };
        record_prefix(&fields) + "i1"
    }

    #[test]
    fn only_events_older_than_the_threshold_are_stale() {
        let now = instant("2026-11-30T09:00:10+01:00");
        assert!(is_stale("x", &old_entry("2026-11-30T09:00:00+01:00", None), now));
        assert!(!is_stale("x", &old_entry("2026-11-30T09:00:08+01:00", None), now));
        assert!(!is_stale("x", "not json", now));
        // A punch replayed from an hour ago, recorded a moment ago, is not stale.
        let replayed = old_entry("2026-11-30T08:00:00+01:00", Some("2026-11-30T08:00:08.000Z"));
        assert!(!is_stale("x", &replayed, now));
        assert!(!is_stale(
            "x",
            &record("2026-11-30T08:00:00+01:00", "2026-11-30T08:00:08Z"),
            now
        ));
        assert!(is_stale(
            "x",
            &record("2026-11-30T09:00:08+01:00", "2026-11-30T08:00:00Z"),
            now
        ));
    }
}
