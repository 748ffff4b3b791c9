//! The supervisor's consumer of one department queue: show, then ack; dedup by event id;
//! a malformed message goes to the retry queue, and to parking after `amqp.max_retries` tries.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use amiquip::{Channel, ConsumerMessage, ConsumerOptions, Delivery};
use anyhow::Result;
use crossbeam_channel::RecvTimeoutError;
use serde::Serialize;

use super::confirm::Confirming;
use super::dlq;
use super::topology::{self, Names, Wait};
use crate::board;
use crate::config::{AmqpSettings, Config};
use crate::error::{Error, Service};
use crate::event::Event;
use crate::keys::Keys;

/// Deliveries in flight to one watcher: enough to keep a burst flowing, few enough that a
/// crash hands little back.
const PREFETCH: u16 = 100;

#[derive(Debug, Clone, Copy)]
pub struct WatchOptions {
    /// Take what waits in the queue and return, instead of waiting for more.
    pub once: bool,
    /// How often to report `Idle` while no message comes (a live screen refreshes then).
    pub tick: Duration,
}

/// What the watcher hands to its caller to show.
#[derive(Debug)]
pub enum WatchItem<'a> {
    /// A new event (never one already shown by a watcher of this department).
    Event { event: &'a Event, redelivered: bool },
    /// A malformed message, sent to retry, or parked when it failed too often.
    Rejected {
        reason: &'a str,
        failures: u32,
        parked: bool,
    },
    /// Nothing came for a tick.
    Idle,
}

/// What one watch did.
#[derive(Debug, Default, Clone, Serialize)]
pub struct WatchReport {
    pub shown: usize,
    /// Deliveries of an event id already shown (at-least-once delivery, or a watcher that died
    /// before acking), acked unshown.
    pub duplicates: usize,
    /// Malformed messages sent to the retry queue.
    pub retried: usize,
    /// Malformed messages moved to the parking queue.
    pub parked: usize,
}

struct Watcher<'r> {
    /// Where shown event ids are kept, so that a restarted watcher drops them too.
    redis: &'r mut board::Redis,
    keys: Keys,
    queue: String,
    dept: String,
    settings: AmqpSettings,
    names: Names,
    parker: Confirming,
    report: WatchReport,
}

/// Consume the department's queue until it is empty (`once`) or `stop` is set, handing each
/// item to `show`. A message is acked only after `show` returned Ok; an error from `show`
/// ends the watch and the broker takes back every unacked message.
pub fn watch_department(
    cfg: &Config,
    redis: &mut board::Redis,
    dept: &str,
    opts: WatchOptions,
    stop: &AtomicBool,
    mut show: impl FnMut(WatchItem<'_>) -> Result<()>,
) -> Result<WatchReport> {
    let svc = |e| Error::service(Service::Rabbitmq, e);
    let names = Names::new(&cfg.namespace);
    let (link, (ch, parker)) = topology::connect(cfg, |conn| {
        let ch = topology::open_channel(conn)?;
        topology::declare_common(&ch, Wait::Answer, &names, cfg)?;
        topology::declare_department(&ch, Wait::Answer, &names, &cfg.amqp, dept)?;
        Ok((ch, Confirming::open(conn)?))
    })?;
    let guard = link.guard().clone();
    // Every request that waits for the broker's answer gets as long as a confirm would.
    let answer = Duration::from_millis(u64::from(cfg.amqp.confirm_timeout_ms));
    let mut w = Watcher {
        redis,
        keys: Keys::new(&cfg.namespace),
        queue: names.department(dept),
        dept: dept.to_string(),
        settings: cfg.amqp.clone(),
        parker,
        names,
        report: WatchReport::default(),
    };
    // Declared after the channels, so dropped before them on any early return.
    let bound = link.closing_bound();
    if opts.once {
        while !stop.load(Ordering::SeqCst) {
            let got = guard.within(answer, "getting a message", || {
                Ok(ch.basic_get(w.queue.as_str(), false)?)
            })?;
            match got {
                Some(got) => {
                    if stopped_during(stop, w.handle(&ch, got.delivery, &mut show))? {
                        break;
                    }
                }
                None => break,
            }
        }
    } else {
        let consumer = guard.within(answer, "starting the consumer", || {
            ch.qos(0, PREFETCH, false)?;
            Ok(ch.basic_consume(w.queue.as_str(), ConsumerOptions::default())?)
        })?;
        while !stop.load(Ordering::SeqCst) {
            match consumer.receiver().recv_timeout(opts.tick) {
                Ok(ConsumerMessage::Delivery(d)) => {
                    if stopped_during(stop, w.handle(&ch, d, &mut show))? {
                        break;
                    }
                }
                Ok(ConsumerMessage::ServerClosedChannel(e) | ConsumerMessage::ServerClosedConnection(e)) => {
                    return Err(svc(e).into())
                }
                Ok(_) => return Err(Error::service(Service::Rabbitmq, "the consumer was cancelled").into()),
                Err(RecvTimeoutError::Timeout) => show(WatchItem::Idle)?,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::service(
                        Service::Rabbitmq,
                        "the connection closed (the broker closed it, or stopped answering its heartbeats)",
                    )
                    .into())
                }
            }
        }
        consumer.cancel().ok();
    }
    // Closing the channel hands every delivery not yet acked (prefetched, unshown) back.
    drop(bound);
    ch.close().ok();
    link.close();
    Ok(w.report)
}

/// Whether a delivery's handling failed because Ctrl-C or SIGTERM arrived during it: a read
/// with a timeout (Redis's, the broker's) is not restarted after the signal but fails with
/// "interrupted system call". That is the stop the user asked for, not a failure; the
/// delivery stays unacked and the broker hands it back. Any other error stands.
fn stopped_during(stop: &AtomicBool, handled: Result<()>) -> Result<bool> {
    match handled {
        Ok(()) => Ok(false),
        Err(_) if stop.load(Ordering::SeqCst) => Ok(true),
        Err(e) => Err(e),
    }
}

impl Watcher<'_> {
    fn handle(&mut self, ch: &Channel, d: Delivery, show: &mut impl FnMut(WatchItem<'_>) -> Result<()>) -> Result<()> {
        let svc = |e| Error::service(Service::Rabbitmq, e);
        match parse_event(&d.body) {
            Ok(event) => {
                if board::shown_before(self.redis, &self.keys, &self.dept, &event.event_id)? {
                    self.report.duplicates += 1;
                } else {
                    show(WatchItem::Event {
                        event: &event,
                        redelivered: d.redelivered,
                    })?;
                    // Shown, then remembered, then acked: a crash in between shows it again
                    // rather than never.
                    board::mark_shown(self.redis, &self.keys, &self.dept, &event.event_id)?;
                    self.report.shown += 1;
                }
                d.ack(ch).map_err(svc)?;
            }
            Err(reason) => {
                let failures = dlq::rejections(&d, &self.queue) + 1;
                let parked = failures >= self.settings.max_retries;
                if parked {
                    let timeout = Duration::from_millis(u64::from(self.settings.confirm_timeout_ms));
                    dlq::park(
                        &mut self.parker,
                        &self.names,
                        &self.dept,
                        &d,
                        &reason,
                        failures,
                        timeout,
                    )?;
                    d.ack(ch).map_err(svc)?;
                    self.report.parked += 1;
                } else {
                    // No requeue: the department queue dead-letters it to the retry queue.
                    d.nack(ch, false).map_err(svc)?;
                    self.report.retried += 1;
                }
                show(WatchItem::Rejected {
                    reason: &reason,
                    failures,
                    parked,
                })?;
            }
        }
        Ok(())
    }
}

/// An event, or why the body is not one.
fn parse_event(body: &[u8]) -> Result<Event, String> {
    let ev: Event = serde_json::from_slice(body).map_err(|e| format!("not an event: {e}"))?;
    if ev.event_id.is_empty() {
        return Err("not an event: empty event_id".into());
    }
    Ok(ev)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_bodies_say_why() {
        assert!(parse_event(b"{oops").unwrap_err().starts_with("not an event"));
        assert!(parse_event(br#"{"event_id":"x"}"#)
            .unwrap_err()
            .contains("missing field"));
    }
}
