//! The supervisor's consumer of one department queue: show, then ack; dedup by event id;
//! a malformed message goes to the retry queue, and to parking after `amqp.max_retries` tries.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use amiquip::{Channel, ConsumerMessage, ConsumerOptions, Delivery};
use anyhow::Result;
use crossbeam_channel::RecvTimeoutError;
use serde::Serialize;

use super::confirm::Confirming;
use super::connect::Link;
use super::parking as dlq;
use super::reconnect::broker_gone;
use super::topology::{self, Names, Wait};
use crate::config::{AmqpSettings, Config};
use crate::domain::day::shifts::Shifts;
use crate::domain::event::alert::AbsenceAlert;
use crate::domain::event::membership::Membership;
use crate::domain::event::message::MessageType;
use crate::domain::event::record::Event;
use crate::domain::event::signing::{self, Keyring};
use crate::domain::event::void_notice::VoidNotice;
use crate::error::{Error, Service};
use crate::interrupt::unless_stopped;
use crate::interrupt::Backoff;

/// Deliveries in flight to one watcher: enough to keep a burst flowing, few enough that a
/// crash hands little back.
const PREFETCH: u16 = 100;

#[derive(Debug, Clone, Copy)]
pub(crate) struct WatchOptions {
    /// Take what waits in the queue and return, instead of waiting for more.
    pub once: bool,
    /// How often to report `Idle` while no message comes (a live screen refreshes then).
    pub tick: Duration,
}

/// What the watcher hands to its caller to show.
#[derive(Debug)]
pub(crate) enum WatchItem<'a> {
    /// A new event (never one already shown by a watcher of this department).
    Event { event: &'a Event },
    /// A new absence alert (likewise shown once).
    Alert { alert: &'a AbsenceAlert },
    /// A punch of the department voided (`punch void`), shown once as events are.
    Void { notice: &'a VoidNotice },
    /// A malformed message, sent to retry, or parked when it failed too often.
    Rejected {
        reason: &'a str,
        failures: u32,
        parked: bool,
    },
    /// Nothing came for a tick.
    Idle,
    /// The broker went away (or a reconnection attempt failed): reconnecting.
    Lost { why: &'a str },
    /// Consuming again, on this broker (`host:port`).
    Reconnected { broker: &'a str },
}

/// What one watch did.
#[derive(Debug, Default, Clone, Serialize)]
pub(crate) struct WatchReport {
    pub shown: usize,
    /// Deliveries of an event id already shown (at-least-once delivery, or a watcher that died
    /// before acking), acked unshown.
    pub duplicates: usize,
    /// Malformed messages sent to the retry queue.
    pub retried: usize,
    /// Malformed messages moved to the parking queue.
    pub parked: usize,
    /// Events refused by the keyring or the roster (unsigned, badly signed, revoked key,
    /// unknown employee, another department...), parked at once with their reason.
    pub refused: usize,
}

/// Where a watcher keeps the event ids it showed, per department, so that a restarted watcher
/// drops them too (the operation passes the department's board).
pub(crate) trait ShownEvents {
    /// Whether a watcher of the department already showed this event.
    fn shown_before(&mut self, dept: &str, event_id: &str) -> Result<bool>;
    /// Remember that it was shown.
    fn mark_shown(&mut self, dept: &str, event_id: &str) -> Result<()>;
    /// The employee's department in the roster, with the departments they left when it is
    /// not `dept` (`None`: not in the roster).
    fn membership(&mut self, employee_id: &str, dept: &str) -> Result<Option<Membership>>;
    /// Count an event refused for `class` (`doctor` reports the counts).
    fn refused(&mut self, class: &str) -> Result<()>;
    /// The shifts of the employee (and of every department): what dates their punches.
    fn shifts(&mut self, employee_id: &str) -> Result<Shifts>;
}

struct Watcher<'r> {
    /// Where shown event ids are kept, so that a restarted watcher drops them too.
    shown: &'r mut dyn ShownEvents,
    queue: String,
    dept: String,
    settings: AmqpSettings,
    names: Names,
    report: WatchReport,
    /// The verifiers' keyring (the registry copy's public keys, a keyring file's shared
    /// secrets): without one, events are shown unchecked (docs/security.md).
    ring: Option<Keyring>,
    tz: chrono_tz::Tz,
}

/// One connection of a watcher: its channel, and the confirm channel parking goes through.
struct Session {
    // Field order is drop order: the channels close before their connection.
    ch: Channel,
    parker: Confirming,
    link: Link,
}

impl Session {
    /// Connect to the first broker that answers and declare what the watch needs.
    fn open(cfg: &Config, names: &Names, dept: &str) -> Result<Session> {
        let (link, (ch, parker)) = topology::connect(cfg, |conn| {
            let ch = topology::open_channel(conn)?;
            if cfg.amqp.declare {
                topology::declare_common(&ch, Wait::Answer, names, cfg)?;
                topology::declare_department(&ch, Wait::Answer, names, &cfg.amqp, dept)?;
            }
            Ok((ch, Confirming::open(conn)?))
        })?;
        Ok(Session { ch, parker, link })
    }

    /// Close politely within `amqp.close_timeout_ms`: every delivery not yet acked
    /// (prefetched, unshown) goes back to the queue.
    fn close(self) {
        let bound = self.link.closing_bound();
        drop(bound);
        self.ch.close().ok();
    }

    /// Drop a connection that failed, without waiting on a broker that may not answer; the
    /// broker hands its unacked deliveries back when it notices.
    fn abandon(self) {
        self.link.guard().cut();
    }
}

/// How a live session ended.
enum Ended {
    /// `stop` was set.
    Stopped,
    /// The broker went away (closed, cut, or silent past its heartbeats): reconnect.
    Lost(anyhow::Error),
}

/// Consume the department's queue until it is empty (`once`) or `stop` is set, handing each
/// item to `show`. A message is acked only after `show` returned Ok; an error from `show`
/// ends the watch and the broker takes back every unacked message.
///
/// A live watch whose broker goes away reconnects (the next broker of the list, or the same
/// one when it is back), waiting longer between attempts up to a few seconds, and resumes:
/// what the lost connection had not acked is delivered again and shown once (dedup by event id).
pub(crate) fn watch_department(
    cfg: &Config,
    shown: &mut dyn ShownEvents,
    dept: &str,
    (opts, ring): (WatchOptions, Option<Keyring>),
    stop: &AtomicBool,
    mut show: impl FnMut(WatchItem<'_>) -> Result<()>,
) -> Result<WatchReport> {
    let names = Names::new(&cfg.namespace);
    // The first connection fails the command (exit 3): a wrong URL is not retried for days.
    let mut session = Session::open(cfg, &names, dept)?;
    let mut w = Watcher {
        shown,
        queue: names.department(dept),
        dept: dept.to_string(),
        settings: cfg.amqp.clone(),
        names: names.clone(),
        report: WatchReport::default(),
        ring,
        tz: cfg.timezone,
    };
    if opts.once {
        w.take_waiting(&mut session, stop, &mut show)?;
        session.close();
        return Ok(w.report);
    }
    let mut backoff = Backoff::default();
    loop {
        match w.consume(&mut session, opts, stop, &mut show)? {
            Ended::Stopped => {
                session.close();
                return Ok(w.report);
            }
            Ended::Lost(e) => {
                session.abandon();
                show(WatchItem::Lost {
                    why: &super::failure::one_line(&e),
                })?;
            }
        }
        session = loop {
            if !backoff.sleep(stop) {
                return Ok(w.report);
            }
            match Session::open(cfg, &names, dept) {
                Ok(s) => break s,
                Err(e) if broker_gone(&e) => show(WatchItem::Lost {
                    why: &super::failure::one_line(&e),
                })?,
                Err(e) => return Err(e),
            }
        };
        backoff.reset();
        show(WatchItem::Reconnected {
            broker: session.link.broker(),
        })?;
    }
}

impl Watcher<'_> {
    /// `--once`: take what waits in the queue, then return.
    fn take_waiting(
        &mut self,
        s: &mut Session,
        stop: &AtomicBool,
        show: &mut impl FnMut(WatchItem<'_>) -> Result<()>,
    ) -> Result<()> {
        let guard = s.link.guard().clone();
        let answer = Duration::from_millis(u64::from(self.settings.confirm_timeout_ms));
        while !stop.load(Ordering::SeqCst) {
            let got = guard.within(answer, "getting a message", || {
                Ok(s.ch.basic_get(self.queue.as_str(), false)?)
            })?;
            match got {
                Some(got) => {
                    // Stopped mid-delivery: it stays unacked and the broker hands it back.
                    if unless_stopped(stop, self.handle(&s.ch, &mut s.parker, got.delivery, show))?.is_none() {
                        break;
                    }
                }
                None => break,
            }
        }
        Ok(())
    }

    /// Consume on one connection until `stop` is set or the broker goes away. Errors of
    /// `show` and of Redis end the watch; the broker's end the session only.
    fn consume(
        &mut self,
        s: &mut Session,
        opts: WatchOptions,
        stop: &AtomicBool,
        show: &mut impl FnMut(WatchItem<'_>) -> Result<()>,
    ) -> Result<Ended> {
        let lost = |e: anyhow::Error| if broker_gone(&e) { Ok(Ended::Lost(e)) } else { Err(e) };
        let svc = |e: amiquip::Error| -> anyhow::Error { Error::service(Service::Rabbitmq, e).into() };
        // Every request that waits for the broker's answer gets as long as a confirm would.
        let answer = Duration::from_millis(u64::from(self.settings.confirm_timeout_ms));
        let started = s.link.guard().within(answer, "starting the consumer", || {
            s.ch.qos(0, PREFETCH, false)?;
            Ok(s.ch.basic_consume(self.queue.as_str(), ConsumerOptions::default())?)
        });
        let consumer = match started {
            Ok(c) => c,
            Err(e) => return lost(e),
        };
        while !stop.load(Ordering::SeqCst) {
            let got = match consumer.receiver().recv_timeout(opts.tick) {
                Ok(ConsumerMessage::Delivery(d)) => self.handle(&s.ch, &mut s.parker, d, show),
                Ok(ConsumerMessage::ServerClosedChannel(e) | ConsumerMessage::ServerClosedConnection(e)) => Err(svc(e)),
                Ok(_) => Err(Error::service(Service::Rabbitmq, "the consumer was cancelled").into()),
                Err(RecvTimeoutError::Timeout) => show(WatchItem::Idle),
                Err(RecvTimeoutError::Disconnected) => Err(Error::service(
                    Service::Rabbitmq,
                    "the connection closed (the broker closed it, or stopped answering its heartbeats)",
                )
                .into()),
            };
            match unless_stopped(stop, got) {
                Ok(Some(())) => {}
                Ok(None) => break,
                Err(e) => return lost(e),
            }
        }
        consumer.cancel().ok();
        Ok(Ended::Stopped)
    }

    fn handle(
        &mut self,
        ch: &Channel,
        parker: &mut Confirming,
        d: Delivery,
        show: &mut impl FnMut(WatchItem<'_>) -> Result<()>,
    ) -> Result<()> {
        let svc = |e| Error::service(Service::Rabbitmq, e);
        let parsed = parse_message(&d.body);
        if let (Ok(message), Some(ring)) = (&parsed, &self.ring) {
            let (roster, shifts) = match message.employee() {
                Some((emp, dept)) => (self.shown.membership(emp, dept)?, Some(self.shown.shifts(emp)?)),
                None => (None, None),
            };
            if let Err(refusal) = message.check(ring, self.tz, roster.as_ref(), shifts.as_ref(), &self.dept) {
                // Never shown, and never retried: a forgery does not get better with time.
                let reason = format!("refused: {refusal}");
                let timeout = Duration::from_millis(u64::from(self.settings.confirm_timeout_ms));
                let failures = dlq::rejections(&d, &self.queue) + 1;
                dlq::park(parker, &self.names, &self.dept, &d, &reason, failures, timeout)?;
                d.ack(ch).map_err(svc)?;
                self.report.parked += 1;
                self.report.refused += 1;
                self.shown.refused(refusal.class())?;
                return show(WatchItem::Rejected {
                    reason: &reason,
                    failures,
                    parked: true,
                });
            }
        }
        match parsed {
            Ok(message) => {
                let id = message.id();
                if self.shown.shown_before(&self.dept, id)? {
                    self.report.duplicates += 1;
                } else {
                    // Shown, then remembered, then acked: a crash in between shows it again
                    // rather than never. A Ctrl-C in between waits for the three (it would
                    // otherwise fail the Redis read: an event shown, yet not remembered).
                    crate::interrupt::deferred(|| -> Result<()> {
                        show(match &message {
                            Message::Event(event) => WatchItem::Event { event },
                            Message::Alert(alert) => WatchItem::Alert { alert },
                            Message::Void(notice) => WatchItem::Void { notice },
                        })?;
                        self.shown.mark_shown(&self.dept, id)?;
                        self.report.shown += 1;
                        Ok(())
                    })?;
                }
                d.ack(ch).map_err(svc)?;
            }
            Err(reason) => {
                let failures = dlq::rejections(&d, &self.queue) + 1;
                let parked = failures >= self.settings.max_retries;
                if parked {
                    let timeout = Duration::from_millis(u64::from(self.settings.confirm_timeout_ms));
                    dlq::park(parker, &self.names, &self.dept, &d, &reason, failures, timeout)?;
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

/// What a department queue carries: a punch's event, an absence alert or a void's notice.
pub(crate) enum Message {
    Event(Event),
    Alert(AbsenceAlert),
    Void(VoidNotice),
}

impl Message {
    fn id(&self) -> &str {
        match self {
            Message::Event(e) => &e.event_id,
            Message::Alert(a) => &a.event_id,
            Message::Void(n) => &n.event_id,
        }
    }

    /// The employee and department whose roster entry its check needs (an alert names none).
    pub(crate) fn employee(&self) -> Option<(&str, &str)> {
        match self {
            Message::Event(e) => Some((&e.employee_id, &e.department_id)),
            Message::Void(n) => Some((&n.employee_id, &n.department_id)),
            Message::Alert(_) => None,
        }
    }

    /// Everything a reader of `dept`'s queue checks of it: the signature through `ring`, and
    /// `roster` (the entry of [`Message::employee`]) against its department and date, a punch's
    /// date by `shifts` (the employee's, read with the roster entry).
    pub(crate) fn check(
        &self,
        ring: &Keyring,
        tz: chrono_tz::Tz,
        roster: Option<&Membership>,
        shifts: Option<&Shifts>,
        dept: &str,
    ) -> Result<(), signing::Refusal> {
        match self {
            Message::Event(event) => {
                let Some(shifts) = shifts else {
                    return Err(signing::Refusal::Roster("no shift table to date the punch by".into()));
                };
                signing::check(ring, event, tz, roster, Some(dept), shifts)
            }
            Message::Void(n) => n.check(ring, tz, roster, dept),
            Message::Alert(alert) => alert.check(ring, dept),
        }
    }
}

/// An event, an alert or a void notice, or why the body is none of them.
pub(crate) fn parse_message(body: &[u8]) -> Result<Message, String> {
    match MessageType::of(body)? {
        MessageType::Punch => parse_event(body).map(Message::Event),
        MessageType::AbsenceAlert => {
            let a: AbsenceAlert = serde_json::from_slice(body).map_err(|e| format!("not an absence alert: {e}"))?;
            Ok(Message::Alert(a))
        }
        MessageType::Void => {
            let n: VoidNotice = serde_json::from_slice(body).map_err(|e| format!("not a void notice: {e}"))?;
            if n.event_id.is_empty() {
                return Err("not a void notice: empty event_id".into());
            }
            Ok(Message::Void(n))
        }
        MessageType::Unknown(other) => Err(format!(
            "not an event: unknown type {:?}",
            crate::domain::text::clip(&other)
        )),
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
        assert!(parse_message(br#"{"type":"absence_alert","event_id":"x"}"#)
            .err()
            .unwrap()
            .starts_with("not an absence alert"));
        assert!(parse_message(br#"{"type":"shrug"}"#)
            .err()
            .unwrap()
            .contains("unknown type"));
    }
}
