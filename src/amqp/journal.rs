//! Reading the event journal (the `<ns>.journal` stream) from an instant to its end.
//!
//! A stream consumer never reaches an "empty queue": it waits for more. So the reader decides
//! where the end is, two ways, whichever comes first:
//! - a message published after the read began (its AMQP `timestamp`, set by our publisher, is
//!   later than the start): everything journaled before the start has been read;
//! - no delivery for `idle` (longer for the first one, while the broker finds the offset on
//!   disk): the broker has nothing more to hand. On a healthy broker a stream delivers as fast
//!   as acks return credit, so a pause that long is the tail, not a slow read.
//!
//! Both bound the read: the first by the messages there were at the start, the second by time.
//!
//! Settle's read ends on a fence of its own instead (see [`read_journal_to_fence`]), and there a
//! pause is not an end but a question to the broker: one that does not answer fails the read.

use std::collections::HashSet;
use std::time::Duration;

use amiquip::{
    AmqpProperties, AmqpValue, Channel, ConnectionBlockedNotification, Consumer, ConsumerMessage, ConsumerOptions,
    Delivery, FieldTable, Publish,
};
use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use crossbeam_channel::RecvTimeoutError;
use serde::Serialize;

use super::topology::{self, Names};
use crate::config::Config;
use crate::domain::event::record::Event;
use crate::error::{Error, Service};

/// Deliveries in flight: streams need a prefetch, and a big one keeps the read streaming.
const PREFETCH: u16 = 1_000;

/// How a read ended, for the report (and the docs' promise that it always ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum EndedBy {
    /// A message published after the read began.
    NewerMessage,
    /// No delivery within the idle wait.
    Idle,
}

/// What a read saw.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReadReport {
    /// Messages delivered from the stream (every day's, every kind).
    pub messages: u64,
    /// Bodies that are not events (another publisher on the exchange), skipped.
    pub not_events: u64,
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    pub ended_by: EndedBy,
}

/// Read the journal from `from` (the stream starts at the chunk holding that instant, so a
/// little earlier is possible: callers filter by date) until its end as described above,
/// handing every event to `each` in journal order. Nothing is consumed away: a stream keeps
/// its messages for every later reader until retention drops them.
pub(crate) fn read_journal(
    cfg: &Config,
    from: DateTime<Utc>,
    idle: Duration,
    each: impl FnMut(Event) -> Result<()>,
) -> Result<ReadReport> {
    read(cfg, from, (idle, FIRST), false, each)?
        .ok_or_else(|| missing_journal(&Names::new(&cfg.namespace), "not found"))
}

/// [`read_journal`], ended by a fence: once its consumer has started, the reader appends a
/// message of its own to the stream (not an event: every reader skips it) and stops when that
/// comes back. The stream is in append order, so every event a publisher saw confirmed before
/// then has been read, and the read ends at once instead of after an idle pause (settle reads
/// the journal every night). Only the fence ends it: a pause of `idle` makes the reader ask the
/// broker whether it is still there, and no answer within `amqp.confirm_timeout_ms`, or
/// [`FENCE_PAUSES`] answered pauses in a row, is an error (RabbitMQ failing), never an end.
/// `None`: the broker answered that the namespace has no journal at all (nothing was ever
/// journaled, or it was deleted); a lookup that failed or went unanswered is an error.
pub(crate) fn read_journal_to_fence(
    cfg: &Config,
    from: DateTime<Utc>,
    idle: Duration,
    each: impl FnMut(Event) -> Result<()>,
) -> Result<Option<ReadReport>> {
    read(cfg, from, (idle, FIRST), true, each)
}

/// The event ids the journal holds from `from` on (a little before: the chunk holding it), read
/// to a fence as [`read_journal_to_fence`] reads, but with `pause` for every pause, the first
/// delivery's included: a publisher asks before it journals an event that may be there
/// already, and a silent broker costs it about two such waits, not the 5 s a long read allows
/// for old segment files (a slow first delivery is asked about, and waited for, a few times).
/// Empty when there is no journal at all.
pub(crate) fn journal_ids_from(cfg: &Config, from: DateTime<Utc>, pause: Duration) -> Result<HashSet<String>> {
    let mut ids = HashSet::new();
    read(cfg, from, (pause, pause), true, |ev| {
        ids.insert(ev.event_id);
        Ok(())
    })?;
    Ok(ids)
}

/// The first delivery of a read may need the broker to open old segment files.
const FIRST: Duration = Duration::from_secs(5);

/// Fence messages' ids begin so; a reader skips every fence, its own ends the read.
const FENCE: &str = "attendance-fence-";

/// Pauses of `idle` in a row, each answered by the broker, after which a read waiting for its
/// fence gives up (an error, never an end): a broker that answers and delivers nothing.
const FENCE_PAUSES: u32 = 5;

/// The broker's answer to a lookup of a queue that does not exist (404 NOT_FOUND, which
/// closes the channel); anything else (no answer, a lost connection) is not.
fn not_found(e: &amiquip::Error) -> bool {
    matches!(e, amiquip::Error::ServerClosedChannel { code: 404, .. })
}

/// `waits`: the pause that ends a read without a fence (or makes one with a fence ask the
/// broker), and the longest wait for the first delivery.
fn read(
    cfg: &Config,
    from: DateTime<Utc>,
    (idle, first): (Duration, Duration),
    fence: bool,
    mut each: impl FnMut(Event) -> Result<()>,
) -> Result<Option<ReadReport>> {
    let svc = |e| Error::service(Service::Rabbitmq, e);
    let names = Names::new(&cfg.namespace);
    let started = Utc::now().timestamp();
    // Only the broker's own answer "no such queue" means there is no journal: a lookup that
    // failed or went unanswered is the broker failing (within the connect bound), never taken
    // for an empty journal (settle would then write absent whoever's punch Redis lost).
    let (link, (ch, blocks)) = topology::connect(cfg, |conn| {
        // A fence is a publish: a broker with an alarm blocks the connection at it, and never
        // delivers the fence until the alarm clears.
        let blocks = conn.listen_for_connection_blocked().map_err(svc)?;
        let ch = topology::open_channel(conn)?;
        match ch.queue_declare_passive(names.journal()) {
            Ok(_) => Ok((Ok(ch), blocks)),
            Err(e) if not_found(&e) => Ok((Err(e), blocks)),
            Err(e) => Err(anyhow::Error::from(svc(e)).context("looking up the journal")),
        }
    })?;
    let ch = match ch {
        Ok(ch) => ch,
        // The broker closed the channel: the connection goes too, within its bound.
        Err(e) if fence => {
            drop(e);
            link.close();
            return Ok(None);
        }
        Err(e) => {
            link.close();
            return Err(missing_journal(&names, &e.to_string()));
        }
    };
    let answer = Duration::from_millis(u64::from(cfg.amqp.confirm_timeout_ms));
    let bound = link.closing_bound();
    let consumer = link.guard().within(answer, "starting the journal consumer", || {
        consume_from(&ch, &names, from)
    })?;
    // Declared after the consumer, so dropped before it on an early return: the consumer's
    // cancel (on drop) is bounded too. A broker that blocks the connection (an alarm) never
    // answers it, and the read's error return waited there for good.
    let _cancel_bound = link.closing_bound();
    let fence_id = fence.then(|| format!("{FENCE}{}", uuid::Uuid::new_v4()));
    if let Some(id) = &fence_id {
        let props = AmqpProperties::default()
            .with_message_id(id.clone())
            .with_app_id("attendance".into())
            .with_timestamp(Utc::now().timestamp() as u64);
        let publish = Publish::with_properties(b"{}", names.journal(), props);
        link.guard().within(answer, "appending the journal's fence", || {
            ch.basic_publish("", publish).map_err(|e| svc(e).into())
        })?;
    }
    let mut report = ReadReport {
        messages: 0,
        not_events: 0,
        first_offset: None,
        last_offset: None,
        ended_by: EndedBy::Idle,
    };
    let mut wait = idle.max(first);
    let mut unacked: Option<Delivery> = None;
    // Pauses in a row with no delivery while waiting for the fence.
    let mut paused: u32 = 0;
    loop {
        let got = match fence_id {
            Some(_) => recv_unless_blocked(consumer.receiver(), &blocks, wait)?,
            None => consumer.receiver().recv_timeout(wait),
        };
        let d = match got {
            Ok(ConsumerMessage::Delivery(d)) => d,
            Ok(ConsumerMessage::ServerClosedChannel(e) | ConsumerMessage::ServerClosedConnection(e)) => {
                return Err(svc(e).into())
            }
            Ok(_) => return Err(Error::service(Service::Rabbitmq, "the journal consumer was cancelled").into()),
            // Without a fence a pause is the end. With one, only the fence is: a pause is a
            // broker that is slow or has stopped answering, and an end taken there would miss
            // whatever it had not delivered yet. So it is asked whether it is still there
            // (one round trip, bounded by `confirm_timeout_ms`: a silent broker is cut then),
            // and waited for a while longer while it answers.
            Err(RecvTimeoutError::Timeout) if fence_id.is_some() => {
                paused += 1;
                if paused > FENCE_PAUSES {
                    return Err(Error::service(
                        Service::Rabbitmq,
                        format!(
                            "the journal's read did not reach its end: no delivery for {} s while the broker still answered",
                            (idle * FENCE_PAUSES).as_secs()
                        ),
                    )
                    .into());
                }
                link.guard()
                    .within(answer, "reading the journal: no delivery, then no answer", || {
                        ch.queue_declare_passive(names.journal())
                            .map(drop)
                            .map_err(|e| svc(e).into())
                    })?;
                continue;
            }
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Error::service(Service::Rabbitmq, "the connection closed").into())
            }
        };
        wait = idle;
        paused = 0;
        if let Some(id) = d.properties.message_id().as_deref().filter(|id| id.starts_with(FENCE)) {
            if fence_id.as_deref() == Some(id) {
                report.ended_by = EndedBy::NewerMessage;
                break;
            }
            // Another reader's fence: no event, nothing to count.
            continue;
        }
        if d.properties.timestamp().is_some_and(|ts| ts as i64 > started) {
            report.ended_by = EndedBy::NewerMessage;
            break;
        }
        report.messages += 1;
        let offset = stream_offset(&d);
        report.first_offset = report.first_offset.or(offset);
        report.last_offset = offset.or(report.last_offset);
        match journal_events(&d.body) {
            Some(events) => events.into_iter().try_for_each(&mut each)?,
            None => report.not_events += 1,
        }
        // Acks return credit to a stream consumer (nothing is removed): one per half window.
        if report.messages.is_multiple_of(u64::from(PREFETCH / 2)) {
            consumer.ack_multiple(d).map_err(svc)?;
            unacked = None;
        } else {
            unacked = Some(d);
        }
    }
    if let Some(d) = unacked {
        consumer.ack_multiple(d).ok();
    }
    // From here every wait (cancel, channel and connection close) is bounded by close_timeout_ms.
    drop(bound);
    consumer.cancel().ok();
    drop(consumer);
    ch.close().ok();
    link.close();
    Ok(Some(report))
}

/// How often a read waiting for its fence looks whether the broker blocked its connection.
const BLOCK_CHECK: Duration = Duration::from_millis(50);

/// The next delivery within `wait`, but an error as soon as the broker blocks the connection
/// (a memory or disk alarm: the fence, a publish, is not taken until it clears, and the read
/// would wait its pauses out for nothing).
fn recv_unless_blocked(
    deliveries: &crossbeam_channel::Receiver<ConsumerMessage>,
    blocks: &crossbeam_channel::Receiver<ConnectionBlockedNotification>,
    wait: Duration,
) -> Result<Result<ConsumerMessage, RecvTimeoutError>> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        if let Some(ConnectionBlockedNotification::Blocked(reason)) = blocks.try_iter().last() {
            return Err(Error::service(
                Service::Rabbitmq,
                format!("the broker blocks publishers ({reason}: a memory or disk alarm)"),
            )
            .into());
        }
        let now = std::time::Instant::now();
        match deliveries.recv_timeout(BLOCK_CHECK.min(deadline.saturating_duration_since(now))) {
            Err(RecvTimeoutError::Timeout) if std::time::Instant::now() < deadline => {}
            got => return Ok(got),
        }
    }
}

/// The events of one journal message: a batch (a JSON array, what publishers write) or a single
/// event (what versions before the batches wrote). None: not an event at all.
fn journal_events(body: &[u8]) -> Option<Vec<Event>> {
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => serde_json::from_slice(body).ok(),
        _ => serde_json::from_slice(body).ok().map(|ev| vec![ev]),
    }
}

/// Fail (exit 1) unless the namespace's journal exists, before a caller changes anything.
/// A lookup that fails otherwise (no answer, a lost connection) is RabbitMQ failing (exit 3).
pub(crate) fn require_journal(cfg: &Config) -> Result<()> {
    let (link, found) = topology::connect(cfg, |conn| {
        let ch = topology::open_channel(conn)?;
        let found = check_journal(&ch, &Names::new(&cfg.namespace))?;
        if found.is_ok() {
            ch.close().ok();
        }
        Ok(found)
    })?;
    link.close();
    found
}

/// The journal must exist: a passive declare, so that a namespace with the journal turned off
/// (or a typo'd namespace) is a clear error instead of an empty read, and nothing is created.
/// The outer error is the broker failing; the inner one its answer that there is no journal.
fn check_journal(ch: &Channel, names: &Names) -> Result<Result<()>> {
    match ch.queue_declare_passive(names.journal()) {
        Ok(_) => Ok(Ok(())),
        Err(e) if not_found(&e) => Ok(Err(missing_journal(names, &e.to_string()))),
        Err(e) => Err(anyhow::Error::from(Error::service(Service::Rabbitmq, e)).context("looking up the journal")),
    }
}

fn missing_journal(names: &Names, why: &str) -> anyhow::Error {
    Error::refused(format!(
        "no journal {} on the broker ({why}): it is declared by the first publish with journal.enabled = true",
        names.journal()
    ))
    .into()
}

/// A stream consumer starting at `from`: a prefetch and manual acks, as streams require.
fn consume_from<'a>(ch: &'a Channel, names: &Names, from: DateTime<Utc>) -> Result<Consumer<'a>> {
    let svc = |e| Error::service(Service::Rabbitmq, e);
    ch.qos(0, PREFETCH, false).map_err(svc)?;
    let mut arguments = FieldTable::new();
    arguments.insert(
        "x-stream-offset".to_string(),
        AmqpValue::Timestamp(from.timestamp().max(0) as u64),
    );
    ch.basic_consume(
        names.journal(),
        ConsumerOptions {
            arguments,
            ..Default::default()
        },
    )
    .map_err(svc)
    .context("reading the journal")
}

/// The `x-stream-offset` header RabbitMQ puts on every delivery from a stream.
fn stream_offset(d: &Delivery) -> Option<i64> {
    match d.properties.headers().as_ref()?.get("x-stream-offset")? {
        AmqpValue::LongLongInt(n) => Some(*n),
        AmqpValue::LongInt(n) => Some(i64::from(*n)),
        _ => None,
    }
}
