//! Publishing events with publisher confirms and a window of outstanding confirms.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use amiquip::{AmqpProperties, Publish};
use anyhow::Result;
use chrono::{DateTime, Utc};

use super::confirm::{returned_ids, Confirming};
use super::connect::Link;
use super::topology::{self, Names, Wait};
use crate::config::{AmqpSettings, Config, JournalSettings};
use crate::domain::event::render::{self, Outgoing};
use crate::error::{Error, Service};

/// A confirm-mode channel on its own connection, declaring department queues as it meets them.
pub struct Publisher {
    // Field order is drop order: closing the connection closes its channel too (one round
    // trip, not two), and the channel's own close then returns at once.
    link: Link,
    out: Confirming,
    /// Events also go to the journal stream, in batches.
    journal: bool,
    /// The journal's settings, to declare it again ([`Publisher::why_closed`]).
    journal_settings: JournalSettings,
    declared: HashSet<String>,
    /// The verifiers' keyring: with one, an outbox entry whose signature fails is never
    /// published (it stays in its outbox, reported like a malformed one).
    ring: Option<std::sync::Arc<crate::domain::event::signing::Keyring>>,
    names: Names,
    settings: AmqpSettings,
    /// Why the channel is no longer usable, once it is not.
    broken: Option<String>,
    /// What the journal holds, read once an event that may be there already is sent again
    /// ([`Publisher::send_again`]); `None` until then.
    index: Option<JournalIndex>,
    /// For reading the journal ([`JournalIndex`]) on a connection of its own.
    cfg: std::sync::Arc<Config>,
}

/// The event ids the journal holds from an instant on, read (to a fence) the first time an
/// event published before may be sent again, so that it goes to its department queue again but
/// into the journal only if it is not there yet: the journal holds each event once, though
/// publishing is at least once. It grows with what this publisher's journal batches have had
/// acked since, and reads again, from further back, for an event recorded before `from`.
#[derive(Default)]
struct JournalIndex {
    /// Read from this instant (to a fence); `None`: not read yet.
    from: Option<DateTime<Utc>>,
    ids: HashSet<String>,
    /// The read failed: every event is journaled again (at least once, as without the index),
    /// or left in its outbox ([`Publisher::check_journal_within`]).
    failed: Option<String>,
    /// Events sent again that the journal already held (published to their queues only).
    skipped: usize,
    /// A read may take this long at most, else it fails: on a check-in's time. `None`: the
    /// read's own bounds (the connect, then each wait bounded: see `read_journal_to_fence`).
    within: Option<Duration>,
}

/// Whether the journal holds an event, as far as the publisher could tell.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Held {
    Yes,
    No,
    /// The journal could not be read.
    Unknown,
}

/// How far before an event's `recorded_at` (the Redis server's clock) its journal copy is
/// looked for: the broker's clock may differ, and a stream read by timestamp starts at a chunk.
const LOOKBACK_SECS: i64 = 120;

/// The event ids the journal holds from `since` to a fence (none when there is no journal at
/// all), each pause in deliveries `pause` at most. `within`: on a thread, given up (an error)
/// past that time; the thread ends by the read's own bounds, or with the process.
fn read_ids(
    cfg: &std::sync::Arc<Config>,
    since: DateTime<Utc>,
    pause: Duration,
    within: Option<Duration>,
) -> Result<HashSet<String>> {
    let Some(within) = within else {
        return super::journal::journal_ids_from(cfg, since, pause);
    };
    let (tx, rx) = crossbeam_channel::bounded(1);
    let cfg = std::sync::Arc::clone(cfg);
    std::thread::spawn(move || {
        let _ = tx.send(super::journal::journal_ids_from(&cfg, since, pause));
    });
    rx.recv_timeout(within).unwrap_or_else(|_| {
        Err(Error::service(
            Service::Rabbitmq,
            format!("the journal's read did not end within {} ms", within.as_millis()),
        )
        .into())
    })
}

/// The AMQP properties of an event message: persistent JSON, `message_id` = event id.
pub(crate) fn event_properties(id: &str) -> AmqpProperties {
    AmqpProperties::default()
        .with_delivery_mode(2)
        .with_content_type("application/json".into())
        .with_message_id(id.to_string())
        .with_app_id("attendance".into())
        .with_timestamp(chrono::Utc::now().timestamp() as u64)
}

impl Publisher {
    /// Connect, enable confirms and declare the common topology. Unreachable: exit 3.
    pub fn connect(cfg: &Config) -> Result<Publisher> {
        let names = Names::new(&cfg.namespace);
        let (link, (out, broken)) = topology::connect(cfg, |conn| {
            let out = Confirming::open(conn)?;
            // Declarations do not wait for answers, so the broker's refusal of one (a queue
            // declared otherwise) closes the channel at some later call: here or at the first
            // publish. Either way it is the channel that is broken, not the connection: the
            // events stay pending.
            let broken = if cfg.amqp.declare {
                topology::declare_common(&out.channel, Wait::NoWait, &names, cfg)
                    .err()
                    .map(|e| format!("{e:#}"))
            } else {
                None
            };
            Ok((out, broken))
        })?;
        Ok(Publisher {
            link,
            out,
            declared: HashSet::new(),
            ring: cfg.signing.keyring()?.map(std::sync::Arc::new),
            journal: cfg.journal.enabled,
            journal_settings: cfg.journal.clone(),
            names,
            settings: cfg.amqp.clone(),
            broken,
            index: None,
            cfg: std::sync::Arc::new(cfg.clone()),
        })
    }

    /// Forget what was read of the journal: a publisher that lives long (`relay --follow`) reads
    /// it again for the next event sent again, since others have journaled since.
    /// Until then it adds nothing to a publish (no id is kept once its batch is confirmed).
    pub fn forget_journal(&mut self) {
        let within = self.index.as_ref().and_then(|i| i.within);
        self.index = within.map(|within| JournalIndex {
            within: Some(within),
            ..JournalIndex::default()
        });
    }

    /// A check-in's publisher: the journal may be read for `budget` at most (an older event
    /// taken along with the check-in's own), and an event it cannot check is not published at
    /// all (it stays in its outbox for `relay`, which reads as long as it needs): the kiosk
    /// never waits on a long read, and the journal never gets a second copy from it.
    pub fn check_journal_within(&mut self, budget: Duration) {
        self.index.get_or_insert_with(JournalIndex::default).within = Some(budget);
    }

    /// Events sent again ([`Publisher::send_again`]) that the journal already held, and why it
    /// could not be read, if it could not (they were journaled again then).
    pub fn journal_check(&self) -> (usize, Option<&str>) {
        match &self.index {
            None => (0, None),
            Some(i) => (i.skipped, i.failed.as_deref()),
        }
    }

    /// Wait at most this long for each confirm (a check-in answers sooner than a bulk drain).
    pub fn set_confirm_timeout_ms(&mut self, ms: u32) {
        self.settings.confirm_timeout_ms = ms;
    }

    /// How long it waits for each confirm.
    pub fn confirm_timeout(&self) -> Duration {
        Duration::from_millis(u64::from(self.settings.confirm_timeout_ms))
    }

    /// `host:port` of the broker this publisher reached.
    pub fn broker(&self) -> &str {
        self.link.broker()
    }

    /// Why publishing stopped working, if it did (timeout, closed channel); reconnect then.
    pub fn problem(&self) -> Option<&str> {
        self.broken.as_deref()
    }

    /// Publish `(event id, outbox value)` pairs, keeping up to `amqp.confirm_window` confirms
    /// outstanding, and return the ids the broker acked, in order. An id missing from the
    /// answer was nacked, returned unroutable, not confirmed in time, or is not a valid event:
    /// it stays in its outbox for the next drain. Errors only if the channel was already broken.
    /// `first` is the event published for the first time (a check-in's own); the others were
    /// found waiting in an outbox, so they may have been published before
    /// ([`Publisher::send_again`]).
    pub fn publish_confirmed(&mut self, items: &[(String, String)], first: &str) -> Result<Vec<String>> {
        if let Some(why) = &self.broken {
            return Err(Error::service(Service::Rabbitmq, why).into());
        }
        let mut flow = Flow::default();
        for (i, (id, json)) in items.iter().enumerate() {
            let going = match id == first {
                true => self.send(&mut flow, id, json, i),
                false => self.send_again(&mut flow, id, json, i),
            };
            if !going {
                break;
            }
        }
        self.finish(&mut flow);
        let mut acked = flow.take_acked();
        acked.sort_unstable();
        Ok(acked.into_iter().map(|i| items[i].0.clone()).collect())
    }

    /// Publish one event into a stream of publishes whose window of outstanding confirms
    /// (`amqp.confirm_window`) spans calls, waiting first while the window is full; `tag` comes
    /// back from [`Flow::take_acked`] once the broker took every message the event went out in
    /// (its department queue's, its journal batch's, the events exchange's when that is on).
    /// False once publishing stopped ([`Publisher::problem`] says why). `stored` is the outbox
    /// value, rendered to the wire JSON by [`event::render`]; one that is no event is never
    /// published (never acked, it stays in its outbox) and [`Flow::take_malformed`] tells of it.
    ///
    /// For an event published for the first time: the check-in or bulk that recorded it, a
    /// following relay's hand-off. One that may have been published before (found in an outbox
    /// by a drain, put back after a loss) goes through [`Publisher::send_again`].
    pub fn send<T>(&mut self, flow: &mut Flow<T>, id: &str, stored: &str, tag: T) -> bool {
        self.send_as(flow, id, stored, tag, false)
    }

    /// [`Publisher::send`] for an event that may have been published before (a confirm lost,
    /// Redis failing before its removal from the outbox, put back after a broker loss): it goes
    /// to its department queue again (consumers drop repeats by event id), but into the journal
    /// only if the journal does not hold it yet. The journal is read for that once per
    /// publisher (from the oldest such event's `recorded_at`, to a fence): a cost on the paths
    /// after a fault only.
    pub fn send_again<T>(&mut self, flow: &mut Flow<T>, id: &str, stored: &str, tag: T) -> bool {
        self.send_as(flow, id, stored, tag, true)
    }

    fn send_as<T>(&mut self, flow: &mut Flow<T>, id: &str, stored: &str, tag: T, again: bool) -> bool {
        if self.broken.is_some() {
            return false;
        }
        let ev = match render::render_verified(id, stored, self.ring.as_deref()) {
            Ok(ev) => ev,
            Err(e) => {
                flow.malformed.push((id.to_string(), e.to_string()));
                return true;
            }
        };
        if flow.deliveries.len() >= self.settings.confirm_window && !self.wait(flow) {
            return false;
        }
        // A void notice is not journaled: recover replays punches, and takes voids from MySQL.
        let journal = self.journal && !ev.void;
        let journal = match journal && again {
            false => journal,
            true => match self.journaled(id, ev.recorded_at, &mut flow.progress) {
                Held::Yes => false,
                Held::No => true,
                // A check-in's: left in its outbox, never sent, so never acked.
                Held::Unknown if self.index.as_ref().is_some_and(|i| i.within.is_some()) => return true,
                Held::Unknown => true,
            },
        };
        let seq = flow.track(
            tag,
            &ev.department_id,
            1 + usize::from(journal) + usize::from(self.settings.events_exchange),
        );
        let sent = self.publish_one(flow, seq, id, &ev).and_then(|()| {
            if journal {
                flow.journal.push((seq, id.to_string(), ev.json));
                if flow.journal.len() >= JOURNAL_BATCH {
                    self.publish_journal(flow)?;
                }
            }
            Ok(())
        });
        match sent {
            Ok(()) => true,
            Err(e) => {
                self.broken = Some(self.why_closed(format!("{e:#}")));
                false
            }
        }
    }

    /// Whether the journal holds event `id` already (recorded at `recorded_at`): read for the
    /// first such event, and again from further back for an older one. After a read that
    /// failed, no other is tried: unknown. The read's time is not the broker's: `progress` (the
    /// confirm timeout's start) moves past it.
    fn journaled(&mut self, id: &str, recorded_at: Option<DateTime<Utc>>, progress: &mut Instant) -> Held {
        let Some(at) = recorded_at else { return Held::Unknown };
        let since = at - chrono::Duration::seconds(LOOKBACK_SECS);
        let pause = self.confirm_timeout();
        let index = self.index.get_or_insert_with(JournalIndex::default);
        if index.failed.is_some() {
            return Held::Unknown;
        }
        if index.from.is_none_or(|from| since < from) {
            // A pause as long as a confirm may take: a silent broker costs this wait and the
            // answer to the question the read then asks, each bounded so.
            let read = read_ids(&self.cfg, since, pause, index.within);
            *progress = Instant::now();
            match read {
                Ok(ids) => {
                    index.ids.extend(ids);
                    index.from = Some(since);
                }
                Err(e) => {
                    index.failed = Some(format!("{e:#}"));
                    return Held::Unknown;
                }
            }
        }
        if index.ids.contains(id) {
            index.skipped += 1;
            Held::Yes
        } else {
            Held::No
        }
    }

    /// Wait for every confirm still outstanding in `flow` (or until none will come), the
    /// journal batch being filled first sent as it is.
    pub fn finish<T>(&mut self, flow: &mut Flow<T>) {
        self.flush_journal(flow);
        while !flow.deliveries.is_empty() && self.wait(flow) {}
    }

    /// The event to its department's queue, straight through the default exchange (no
    /// exchange routing on the broker), and to the events exchange when that feed is on.
    fn publish_one<T>(&mut self, flow: &mut Flow<T>, seq: u64, id: &str, ev: &Outgoing) -> Result<()> {
        if self.settings.declare && !self.declared.contains(&ev.department_id) {
            topology::declare_department(
                &self.out.channel,
                Wait::NoWait,
                &self.names,
                &self.settings,
                &ev.department_id,
            )?;
            self.declared.insert(ev.department_id.clone());
        }
        // Mandatory: a message no queue takes (a department queue deleted behind our back) comes
        // back as a return before its ack, instead of being acked and dropped.
        let publish = Publish {
            mandatory: true,
            ..Publish::with_properties(
                ev.json.as_bytes(),
                self.names.department(&ev.department_id),
                event_properties(id),
            )
        };
        let delivery = self.out.publish("", publish)?;
        flow.sent(delivery, id, vec![seq]);
        if self.settings.events_exchange {
            // Not mandatory: nobody need be bound there.
            let publish = Publish::with_properties(ev.json.as_bytes(), ev.routing_key(), event_properties(id));
            let delivery = self.out.publish(&self.names.events(), publish)?;
            flow.sent(delivery, id, vec![seq]);
        }
        Ok(())
    }

    /// The journal batch being filled, as one message (a JSON array of events) to the journal
    /// stream: its confirm covers every event in it.
    fn publish_journal<T>(&mut self, flow: &mut Flow<T>) -> Result<()> {
        let batch = std::mem::take(&mut flow.journal);
        let (seqs, ids, body) = journal_body(batch);
        let id = format!("journal-{}", uuid::Uuid::new_v4());
        let publish = Publish {
            mandatory: true,
            ..Publish::with_properties(body.as_bytes(), self.names.journal(), event_properties(&id))
        };
        let delivery = self.out.publish("", publish)?;
        flow.sent(delivery, &id, seqs);
        flow.journal_ids.insert(delivery, ids);
        Ok(())
    }

    /// Take the confirms that have arrived, without waiting (a relay that follows check-ins
    /// publishes the next wake-up's events meanwhile). A message unconfirmed for longer than
    /// `amqp.confirm_timeout_ms` since the last confirm breaks the publisher, as a wait would.
    pub fn poll<T>(&mut self, flow: &mut Flow<T>) {
        while let Some(got) = self.out.try_wait() {
            self.take(flow, got);
        }
        // The connection went away (its node died): found out now rather than at the next
        // publish, so that what it confirmed just before is still within the re-publish horizon.
        if self.broken.is_none() && self.out.closed() {
            self.broken = Some("the connection to the broker was lost".into());
            return;
        }
        if self.broken.is_none() && !flow.deliveries.is_empty() {
            // Blocked (an alarm): no confirm comes until it clears; the events stay pending.
            if let Some(why) = self.out.blocked_now() {
                self.broken = Some(why);
                return;
            }
        }
        let limit = Duration::from_millis(u64::from(self.settings.confirm_timeout_ms));
        if !flow.deliveries.is_empty() && flow.progress.elapsed() > limit && self.broken.is_none() {
            self.out.timed_out = true;
            self.broken = Some(format!("no publisher confirm within {} ms", limit.as_millis()));
        }
    }

    /// Send the journal batch being filled now, as it is (`send` sends it at 100 events, and
    /// [`Publisher::finish`] before waiting).
    pub fn flush_journal<T>(&mut self, flow: &mut Flow<T>) {
        if self.broken.is_none() && !flow.journal.is_empty() {
            if let Err(e) = self.publish_journal(flow) {
                self.broken = Some(format!("{e:#}"));
            }
        }
    }

    /// Take the confirms that arrive within the timeout; false once none will come.
    fn wait<T>(&mut self, flow: &mut Flow<T>) -> bool {
        // Broken already (a confirm that timed out, a closed channel, an alarm): no confirm is
        // coming, and waiting again would spend a second `confirm_timeout_ms` (a bulk whose
        // window filled waited once there, then once more in `finish`: 10 s, not 5).
        if self.broken.is_some() {
            return false;
        }
        let got = match self
            .out
            .wait(Duration::from_millis(u64::from(self.settings.confirm_timeout_ms)))
        {
            Ok(got) => got,
            Err(why) => {
                self.broken = Some(self.why_closed(why));
                return false;
            }
        };
        self.take(flow, got);
        true
    }

    /// The broker's own reason for closing the channel, where amiquip lost it. A refused
    /// declaration (sent without waiting) closes the channel; amiquip hands the broker's reason
    /// to whichever call reads the channel next, and when none did before the channel went away
    /// a later call only learns "i/o loop dropped sending side of a channel" (seen on a loaded
    /// machine, about one run in six). The declarations are then made again on a fresh channel,
    /// waiting for each answer (bounded like every wait), so that the operator reads what the
    /// broker refused (`PRECONDITION_FAILED ...`) rather than that; if they all pass, or the
    /// connection is gone too, `why` stands. Only on that failure: nothing is added to a publish.
    fn why_closed(&mut self, why: String) -> String {
        // Whether it came bare (a confirm's wait) or wrapped (a publish's error, with context).
        // Without declaring (`amqp.declare` off), the account may not: its refusal would be no answer.
        if !self.settings.declare || !why.contains(&amiquip::Error::EventLoopDropped.to_string()) {
            return why;
        }
        let answer = Duration::from_millis(u64::from(REDECLARE_MS));
        let (names, settings, journal) = (&self.names, &self.settings, &self.journal_settings);
        let depts: Vec<String> = self.declared.iter().cloned().collect();
        let link = &mut self.link;
        let guard = link.guard().clone();
        let refused = guard.within(answer, "declaring again to learn why the channel closed", || {
            let ch = topology::open_channel(&mut *link)?;
            topology::declare_common_of(&ch, Wait::Answer, names, settings, journal)?;
            for d in &depts {
                topology::declare_department(&ch, Wait::Answer, names, settings, d)?;
            }
            Ok(())
        });
        match refused {
            Err(e) => format!("{e:#}"),
            Ok(()) => why,
        }
    }

    /// What the broker said: returns first (a message's return comes before its ack), then
    /// the confirms.
    fn take<T>(&mut self, flow: &mut Flow<T>, got: super::confirm::Confirmed) {
        flow.progress = Instant::now();
        for r in &got.returned {
            // Redeclare next time: the queue this department had is gone.
            if let Some(dept) = self.names.department_of(&r.routing_key) {
                self.declared.remove(dept);
            }
        }
        // A message's return arrives before its ack, so it is known here when the ack comes.
        flow.returned.extend(returned_ids(&got.returned));
        // Each tag once, with its own verdict: an event leaves its outbox only on its own ack.
        for c in got.confirms {
            flow.confirmed(c.tag, c.acked);
        }
        // What the journal took is in it now (whether before or after the index's fence): a
        // later send of the same event again need not read to find it.
        match &mut self.index {
            Some(index) => index.ids.extend(flow.journaled.drain(..)),
            None => flow.journaled.clear(),
        }
    }

    /// Close the connection politely, at most `amqp.close_timeout_ms` (the same as dropping it).
    pub fn close(self) {}

    /// Connect on a thread, so that the handshake overlaps the caller's own work (a check-in
    /// records its punch in Redis meanwhile).
    pub fn connect_in_background(cfg: &Config) -> Connecting {
        let cfg = cfg.clone();
        Connecting(Some(std::thread::spawn(move || Publisher::connect(&cfg))))
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        if self.out.timed_out {
            // A broker that let a confirm time out may not answer a close either.
            self.link.guard().cut();
        }
    }
}

/// A publisher being connected; see [`Publisher::connect_in_background`]. Dropped unused (the
/// check-in was refused, or made no event), it closes the connection politely, so the broker
/// does not log an abrupt disconnect for every refused check-in.
pub struct Connecting(Option<std::thread::JoinHandle<Result<Publisher>>>);

impl Connecting {
    /// The publisher, once connected (or why not).
    pub fn wait(mut self) -> Result<Publisher> {
        let handle = self.0.take().expect("waited once");
        handle
            .join()
            .unwrap_or_else(|_| Err(Error::service(Service::Rabbitmq, "the connecting thread panicked").into()))
    }
}

impl Drop for Connecting {
    fn drop(&mut self) {
        if let Some(Ok(Ok(p))) = self.0.take().map(|h| h.join()) {
            p.close();
        }
    }
}

/// How long the broker may take to answer the declarations made again to learn why it closed
/// a channel ([`Publisher::why_closed`]).
const REDECLARE_MS: u32 = 5_000;

/// Events per journal message: the journal takes a day's events as a few thousand batches
/// instead of one message each (the broker's work per message is what bounds a bulk publish).
const JOURNAL_BATCH: usize = 100;

/// A journal message's body, `[event,event,...]`, and the events it carries (tracked, and ids).
fn journal_body(batch: Vec<(u64, String, String)>) -> (Vec<u64>, Vec<String>, String) {
    let mut body = String::with_capacity(batch.iter().map(|(_, _, j)| j.len() + 1).sum::<usize>() + 2);
    let mut seqs = Vec::with_capacity(batch.len());
    let mut ids = Vec::with_capacity(batch.len());
    body.push('[');
    for (i, (seq, id, json)) in batch.into_iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&json);
        seqs.push(seq);
        ids.push(id);
    }
    body.push(']');
    (seqs, ids, body)
}

/// A stream of publishes on one publisher: what awaits its confirms, and what the broker took.
/// It holds only the window (and one journal batch), so a drain's memory does not grow with
/// the backlog.
pub struct Flow<T> {
    /// Delivery tag -> the message's id and the events it carries (one, or a journal batch).
    deliveries: HashMap<u64, (String, Vec<u64>)>,
    /// Event -> the caller's tag, its messages not yet confirmed, and whether one failed.
    events: HashMap<u64, Tracked<T>>,
    next: u64,
    /// Events whose journal batch is still being filled: (event, its id, its JSON).
    journal: Vec<(u64, String, String)>,
    /// The event ids of each journal message not yet confirmed, and those whose message was
    /// acked since the last [`Publisher::take`]: what the journal holds besides what the
    /// publisher read of it ([`Publisher::send_again`]).
    journal_ids: HashMap<u64, Vec<String>>,
    journaled: Vec<String>,
    acked: Vec<T>,
    /// Events the broker refused (nacked or returned), kept only by a flow made with
    /// [`Flow::keeping_failed`]: the others count what was not acked instead.
    failed: Option<Vec<T>>,
    /// Message ids returned unroutable whose confirm has not come yet.
    returned: HashSet<String>,
    /// When a confirm last came (or the flow began): [`Publisher::poll`]'s timeout.
    progress: Instant,
    /// Outbox entries that are no event: (id, why), never published.
    malformed: Vec<(String, String)>,
    /// Events the broker acked and refused (nacked or returned) since [`Flow::take_verdicts`].
    verdicts: Verdicts,
}

/// How the broker answered a stream's events over some stretch: acked, and refused (nacked
/// or returned), in all and by department queue. A stretch with refusals and no ack at all is
/// a channel the broker refuses outright (RabbitMQ 3.10 keeps a quorum queue's dead leader on
/// a channel after a fail-over, so every later publish on it is refused): a new connection, not
/// the same channel, is the cure. The same holds for one queue whose events are all refused
/// while the others' are acked: its dead leader is kept on the channel just the same.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Verdicts {
    pub acked: usize,
    pub refused: usize,
    /// Department -> (acked, refused).
    pub by_queue: std::collections::BTreeMap<String, (usize, usize)>,
}

impl Verdicts {
    /// Refused, and nothing acked.
    pub fn all_refused(&self) -> bool {
        self.refused > 0 && self.acked == 0
    }

    /// The departments whose events were all refused, none acked.
    pub fn refused_queues(&self) -> Vec<&str> {
        self.by_queue
            .iter()
            .filter(|(_, (acked, refused))| *refused > 0 && *acked == 0)
            .map(|(d, _)| d.as_str())
            .collect()
    }

    fn count(&mut self, dept: &str, acked: bool) {
        let q = self.by_queue.entry(dept.to_string()).or_default();
        if acked {
            self.acked += 1;
            q.0 += 1;
        } else {
            self.refused += 1;
            q.1 += 1;
        }
    }
}

struct Tracked<T> {
    tag: T,
    dept: String,
    waiting: usize,
    failed: bool,
}

impl<T> Default for Flow<T> {
    fn default() -> Self {
        Flow {
            deliveries: HashMap::new(),
            events: HashMap::new(),
            next: 0,
            journal: Vec::new(),
            journal_ids: HashMap::new(),
            journaled: Vec::new(),
            acked: Vec::new(),
            failed: None,
            returned: HashSet::new(),
            progress: Instant::now(),
            malformed: Vec::new(),
            verdicts: Verdicts::default(),
        }
    }
}

impl<T> Flow<T> {
    /// A flow that also tells which events the broker refused ([`Flow::take_failed`]).
    pub fn keeping_failed() -> Self {
        Flow {
            failed: Some(Vec::new()),
            ..Flow::default()
        }
    }

    /// The tags of the events refused since the last call (none unless [`Flow::keeping_failed`]).
    pub fn take_failed(&mut self) -> Vec<T> {
        self.failed.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// The tags of the events acked since the last call.
    pub fn take_acked(&mut self) -> Vec<T> {
        std::mem::take(&mut self.acked)
    }

    /// Outbox entries met that are no event, not yet taken.
    pub fn malformed_len(&self) -> usize {
        self.malformed.len()
    }

    /// The outbox entries met since the last call that are no event: (id, why).
    pub fn take_malformed(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.malformed)
    }

    /// The tags of the events sent whose confirms will not come now (the publisher broke);
    /// the flow forgets them and their messages.
    pub fn take_unconfirmed(&mut self) -> Vec<T> {
        self.deliveries.clear();
        self.journal.clear();
        self.journal_ids.clear();
        self.events.drain().map(|(_, t)| t.tag).collect()
    }

    /// How the broker answered the events since the last call.
    pub fn take_verdicts(&mut self) -> Verdicts {
        std::mem::take(&mut self.verdicts)
    }

    /// Events sent whose confirms have not all come.
    pub fn in_flight(&self) -> usize {
        self.events.len()
    }

    /// A new event, that goes out in `messages` messages.
    fn track(&mut self, tag: T, dept: &str, messages: usize) -> u64 {
        self.next += 1;
        let t = Tracked {
            tag,
            dept: dept.to_string(),
            waiting: messages,
            failed: false,
        };
        self.events.insert(self.next, t);
        self.next
    }

    fn sent(&mut self, delivery: u64, message_id: &str, events: Vec<u64>) {
        if self.deliveries.is_empty() {
            // The confirm timeout counts from the first message nothing answered yet.
            self.progress = Instant::now();
        }
        self.deliveries.insert(delivery, (message_id.to_string(), events));
    }

    /// A message's confirm: an event is acked once all of its messages were acked and routed.
    fn confirmed(&mut self, delivery: u64, acked: bool) {
        let Some((id, events)) = self.deliveries.remove(&delivery) else {
            return;
        };
        let ok = !self.returned.remove(&id) && acked;
        if let Some(ids) = self.journal_ids.remove(&delivery) {
            if ok {
                self.journaled.extend(ids);
            }
        }
        for seq in events {
            let Some(t) = self.events.get_mut(&seq) else { continue };
            t.waiting -= 1;
            t.failed |= !ok;
            if t.waiting == 0 {
                let t = self.events.remove(&seq).expect("present");
                self.verdicts.count(&t.dept, !t.failed);
                if !t.failed {
                    self.acked.push(t.tag);
                } else {
                    if let Some(failed) = &mut self.failed {
                        failed.push(t.tag);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_counts_the_events_acked_and_refused_nacks_and_returns_alike() {
        let mut flow: Flow<&str> = Flow::keeping_failed();
        for (tag, delivery) in [("a", 1), ("b", 2), ("c", 3)] {
            let seq = flow.track(tag, if tag == "a" { "D1" } else { "D2" }, 1);
            flow.sent(delivery, tag, vec![seq]);
        }
        flow.returned.insert("c".into());
        flow.confirmed(1, true);
        flow.confirmed(2, false);
        flow.confirmed(3, true);
        let v = flow.take_verdicts();
        assert_eq!((v.acked, v.refused), (1, 2));
        assert!(!v.all_refused(), "one was acked");
        assert_eq!(v.refused_queues(), vec!["D2"], "D1's one event acked, D2's two refused");
        assert_eq!(flow.take_verdicts(), Verdicts::default(), "taken once");
        let seq = flow.track("d", "D1", 1);
        flow.sent(4, "d", vec![seq]);
        flow.confirmed(4, false);
        assert!(flow.take_verdicts().all_refused());
    }

    #[test]
    fn a_journal_batch_counts_its_events_as_journaled_only_on_its_own_ack() {
        let mut flow: Flow<&str> = Flow::default();
        let (a, b) = (flow.track("a", "D1", 1), flow.track("b", "D1", 1));
        let (seqs, ids, body) = journal_body(vec![(a, "ea".into(), "{}".into()), (b, "eb".into(), "{}".into())]);
        assert_eq!((seqs, body.as_str()), (vec![a, b], "[{},{}]"));
        flow.sent(7, "journal-1", vec![a, b]);
        flow.journal_ids.insert(7, ids);
        let c = flow.track("c", "D1", 1);
        flow.sent(8, "journal-2", vec![c]);
        flow.journal_ids.insert(8, vec!["ec".into()]);
        flow.confirmed(8, false);
        assert!(flow.journaled.is_empty(), "a nacked batch is not in the journal");
        flow.confirmed(7, true);
        assert_eq!(flow.journaled, ["ea", "eb"]);
        assert!(flow.journal_ids.is_empty());
    }
}
