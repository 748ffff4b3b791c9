//! Publishing while recording: a bulk check-in hands each script call's events to publisher
//! threads as soon as Redis has answered, so that the broker works on the first events while
//! Redis records the next ones (the two used to run one after the other).
//!
//! The outbox stays the guarantee: every event was written there by the script before it is
//! handed over, and leaves it only once confirmed. What a publisher could not send (a broker
//! away, a nack, a confirm that never came) is still in its outbox; each publisher ends with a
//! drain of its departments' outboxes, which also sends what an earlier outage left there.

use anyhow::Result;
use crossbeam_channel::{bounded, Receiver, Sender};
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};

use super::drain::{
    acked_by_dept, drain_departments, each_share, put_back_due, remove_acked, shares, DrainReport, Sent, Trouble,
};
use super::recent::Recent;
use crate::amqp::Flow;
use crate::amqp::Publisher;
use crate::config::Config;
use crate::redis::board::Board;

/// One script call's events: (department, event id, the outbox value: rendered when published).
pub(crate) type Events = Vec<(String, String, String)>;

/// Script calls' worth of events waiting per publisher: a publisher slower than Redis holds the
/// recording back instead of letting a day's events pile up in memory.
const BACKLOG: usize = 64;

/// Hands events to the publisher that owns their department.
pub(crate) struct Feed<'a> {
    owner: HashMap<String, usize>,
    senders: Vec<Sender<Events>>,
    abandoned: &'a AtomicBool,
}

impl Feed<'_> {
    /// Hand over one call's events (all of one department). A publisher that stopped still
    /// takes them (and drops them: they wait in the outbox), so recording never blocks on it.
    pub(crate) fn send(&self, events: Events) {
        let Some((dept, _, _)) = events.first() else { return };
        let to = self.owner.get(dept).copied().unwrap_or(0);
        // Fails only when the publisher is gone (its Redis failed): the events are in the outbox.
        if let Some(tx) = self.senders.get(to) {
            let _ = tx.send(events);
        }
    }

    /// Recording failed (Redis): the publishers stop at once, touching Redis no more (it is
    /// likely gone or silent for them too). What they sent but could not remove from its
    /// outbox is sent again by `relay` (at least once); the rest waits there.
    pub(crate) fn abandon(&self) {
        self.abandoned.store(true, Ordering::SeqCst);
    }
}

/// Run `record` (on this thread) while up to `amqp.publishers` threads, each with its own
/// Redis and broker connections and its share of `depts`, publish what it hands over; then each
/// drains its share's outboxes once. Returns what `record` returned and the publishers' report.
pub(crate) fn publish_while<R>(
    cfg: &Config,
    depts: &[String],
    record: impl FnOnce(&Feed) -> R,
) -> (R, Result<DrainReport>) {
    let shares = shares(cfg, depts);
    let abandoned = AtomicBool::new(false);
    // Each publisher's Redis connection, opened here so that none is opened while recording
    // (a Redis that goes silent meanwhile would hold each opening for its timeouts).
    let redis: Result<Vec<Board>> = shares.iter().map(|_| Board::open(cfg)).collect();
    let redis = match redis {
        Ok(r) => r,
        Err(e) => {
            let nobody = Feed {
                owner: HashMap::new(),
                senders: Vec::new(),
                abandoned: &abandoned,
            };
            return (record(&nobody), Err(e));
        }
    };
    let (senders, receivers): (Vec<_>, Vec<_>) = shares.iter().map(|_| bounded::<Events>(BACKLOG)).unzip();
    let owner = shares
        .iter()
        .enumerate()
        .flat_map(|(i, share)| share.iter().map(move |d| (d.clone(), i)))
        .collect();
    let feed = Feed {
        owner,
        senders,
        abandoned: &abandoned,
    };
    let parts: Vec<_> = shares.into_iter().zip(receivers).zip(redis).collect();
    std::thread::scope(|s| {
        let publishing = s.spawn(|| {
            each_share(parts, |((share, rx), redis)| {
                publish_share(cfg, share, rx, redis, &abandoned)
            })
        });
        let recorded = record(&feed);
        // Closing the feed tells each publisher that no more is coming.
        drop(feed);
        let report = publishing
            .join()
            .unwrap_or_else(|_| Err(crate::error::Error::internal("the publishers panicked").into()));
        (recorded, report)
    })
}

/// One publisher: what is handed over as it comes, then its departments' outboxes once. A
/// broker that cannot be reached leaves the events pending (the punches are recorded). A Redis
/// that fails meanwhile ends it with what it did before: the events confirmed (some perhaps
/// still in their outbox) and those not, which wait in their outboxes for `relay`.
fn publish_share(
    cfg: &Config,
    share: &[String],
    rx: Receiver<Events>,
    mut redis: Board,
    abandoned: &AtomicBool,
) -> Result<DrainReport> {
    let mut publisher = match Publisher::connect(cfg) {
        Ok(p) => p,
        Err(e) => {
            let handed: usize = rx.iter().map(|events| events.len()).sum();
            let problem = Some(crate::ops::exit::one_line(&e));
            if abandoned.load(Ordering::SeqCst) {
                return Ok(DrainReport {
                    pending: handed,
                    problem,
                    ..Default::default()
                });
            }
            let (pending, redis_failed) = match redis.outbox_len(share) {
                Ok(n) => (n, None),
                Err(e) => (handed, Some(crate::ops::exit::one_line(&e))),
            };
            return Ok(DrainReport {
                pending,
                problem,
                redis_failed,
                ..Default::default()
            });
        }
    };
    let mut done = Done {
        sent: vec![0; share.len()],
        ..Done::default()
    };
    let mut recent = Recent::new(cfg.amqp.republish_horizon_seconds);
    let result = publish_handed(
        share,
        &rx,
        &mut redis,
        &mut publisher,
        abandoned,
        &mut done,
        &mut recent,
    );
    // A publisher that stopped early still takes what is handed over (and drops it: it is in
    // its outbox), so recording never blocks on it.
    rx.iter().for_each(drop);
    let problem = publisher.problem().map(str::to_string);
    publisher.close();
    let sent: usize = done.sent.iter().sum();
    let partial = |redis_failed| DrainReport {
        departments: done.sent.iter().filter(|&&n| n > 0).count(),
        sent,
        pending: done.handed.saturating_sub(sent),
        problem: problem.clone(),
        unremoved: done.unremoved,
        redis_failed,
        ..Default::default()
    };
    let mut report = match result {
        Ok(Some(mut report)) => {
            report.sent += sent;
            report.departments = report.departments.max(partial(None).departments);
            report
        }
        // Recording failed: that failure is the report's; here, what was sent before it.
        Ok(None) => partial(None),
        Err(e) => return Ok(partial(Some(crate::ops::exit::one_line(&e)))),
    };
    // The broker connection was lost, or refused some departments' events: what it confirmed
    // around that goes back in the outboxes (unless Redis failed too: recording stopped, the
    // publisher touches it no more).
    if !abandoned.load(Ordering::SeqCst) {
        if let Err(e) = put_back_due(&mut redis, &mut recent, &mut report) {
            report.redis_failed = Some(crate::ops::exit::one_line(&e));
        }
    }
    Ok(report)
}

/// Remove the events the broker acked from their outboxes one department at a time, so that
/// an outbox on a lost master does not keep the others' events in: how many could not be
/// removed. On a single Redis the first failure stops it (every outbox is on that node).
fn remove_acked_each(redis: &mut Board, share: &[String], flow: &mut Flow<Sent>, sent: &mut [usize]) -> usize {
    let (mut unremoved, mut failed) = (0, false);
    // Redis failed: nothing is put back after a broker loss, so nothing is kept for it.
    for (dept, ids) in acked_by_dept(share, flow, sent, &mut Recent::new(0)) {
        if failed && !redis.is_cluster() {
            unremoved += ids.len();
            continue;
        }
        let n = ids.len();
        let one = BTreeMap::from([(dept, ids)]);
        if redis.outbox_ack_many(&one).is_err() {
            unremoved += n;
            failed = true;
        }
    }
    unremoved
}

/// What one publisher did so far: events handed to it, confirmed per department, and
/// confirmed but left in their outbox by a failing Redis.
#[derive(Default)]
struct Done {
    handed: usize,
    sent: Vec<usize>,
    unremoved: usize,
}

/// Publish what is handed over, then drain the share's outboxes once. `None`: recording failed
/// (abandoned), so the publisher stopped touching Redis. An error is Redis failing. What the
/// broker confirms is kept in `recent`, made due again as soon as the connection is found lost.
fn publish_handed(
    share: &[String],
    rx: &Receiver<Events>,
    redis: &mut Board,
    publisher: &mut Publisher,
    abandoned: &AtomicBool,
    done: &mut Done,
    recent: &mut Recent,
) -> Result<Option<DrainReport>> {
    let gone = || abandoned.load(Ordering::SeqCst);
    let index: HashMap<&str, usize> = share.iter().enumerate().map(|(i, d)| (d.as_str(), i)).collect();
    let mut flow: Flow<Sent> = Flow::keeping_failed();
    let mut trouble = Trouble::default();
    let remove = |redis: &mut Board, flow: &mut Flow<Sent>, done: &mut Done, recent: &mut Recent| {
        remove_acked(redis, share, flow, &mut done.sent, recent).map_err(|u| {
            done.unremoved += u.count;
            u.error
        })
    };
    for events in rx.iter() {
        for (dept, id, stored) in events {
            let Some(&i) = index.get(dept.as_str()) else { continue };
            done.handed += 1;
            if publisher.problem().is_none() {
                let tag = Sent::new(i, &id, &stored, recent);
                publisher.send(&mut flow, &id, &stored, tag);
            }
        }
        if gone() {
            break;
        }
        remove(redis, &mut flow, done, recent)?;
        trouble.note(&mut flow, share, recent);
        // Found lost now: the horizon counts back from here, however long recording goes on.
        if publisher.problem().is_some() {
            recent.lost();
        }
    }
    if gone() {
        // Recording failed (on a cluster, most likely one master lost): what the broker has
        // confirmed still leaves its outbox, department by department, so that only the lost
        // master's departments keep confirmed events (sent again later: at least once), instead
        // of every outbox sending again what its queue already holds.
        publisher.finish(&mut flow);
        done.unremoved += remove_acked_each(redis, share, &mut flow, &mut done.sent);
        return Ok(None);
    }
    publisher.finish(&mut flow);
    remove(redis, &mut flow, done, recent)?;
    trouble.note(&mut flow, share, recent);
    trouble.end(publisher, share, recent);
    // What is still in the outboxes: anything not confirmed above, and older pending events
    // (their lengths in one pipeline: most are empty by now).
    let left: Vec<String> = share
        .iter()
        .zip(redis.outbox_lens(share)?)
        .filter(|(_, n)| *n > 0)
        .map(|(d, _)| d.clone())
        .collect();
    Ok(Some(drain_departments(publisher, redis, &left, recent)?))
}
