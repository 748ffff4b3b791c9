//! `relay --follow`: a full round over every outbox every interval, and between rounds the
//! events check-ins hand over (woken through Redis), until Ctrl-C or SIGTERM. What it has to
//! say goes to a [`FollowSink`]: the command renders it. A Redis that goes away (a restart)
//! is reconnected to, as a broker is, and every outbox swept again once it is back.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;

use super::{DrainReport, Handoffs};
use crate::amqp::Publisher;
use crate::config::Config;
use crate::interrupt;
use crate::interrupt::Backoff;
use crate::ops::reopen::{board_again, redis_gone};
use crate::redis::board::Board;

/// Where a following relay reports, as it goes.
pub(crate) trait FollowSink {
    /// A status line (stderr): the broker lost, or publishing again.
    fn status(&mut self, line: String);
    /// What the hand-offs or a full round sent.
    fn report(&mut self, r: &DrainReport) -> Result<()>;
    /// A full round is over (`last`), or no broker could be reached (`last` is then the backlog
    /// read from Redis, with its `problem`; `None` if Redis could not be read): its figures, with
    /// the events sent since the start and when the round began.
    fn round(&mut self, last: Option<&DrainReport>, sent_total: usize, started: (SystemTime, Instant)) -> Result<()>;
}

/// Follow the check-ins: a full round every `interval`, the hand-offs in between and during it,
/// until Ctrl-C or SIGTERM. Returns the events sent in all, and those pending after the last round.
pub(crate) fn follow(cfg: &Config, interval: Duration, sink: &mut impl FollowSink) -> Result<DrainReport> {
    let mut board = Board::open(cfg)?;
    let stop = interrupt::stop_flag();
    let mut f = Follow::new(cfg, interval);
    // Wake-ups left by a relay that died: this one drains every outbox first anyway.
    board.clear_wakes()?;
    let result = (|| -> Result<()> {
        while !stop.load(Ordering::SeqCst) {
            match f.round(sink, &mut board) {
                // Redis restarted (or is moving): what was on its way stays in its outbox, and the
                // first round on the new connection sweeps every outbox again.
                Err(e) if redis_gone(&e) && !stop.load(Ordering::SeqCst) => {
                    f.drop_publisher();
                    let mut say = |line: String| sink.status(format!("relay: {line}"));
                    match board_again(cfg, &e, stop, &mut say)? {
                        Some(b) => board = b,
                        None => break,
                    }
                }
                r => r?,
            }
        }
        Ok(())
    })();
    // A signal that cut any Redis read short (the blocked wait for wake-ups, mostly) is the stop
    // that was asked for, not a failure: the events stay in their outboxes.
    let result = interrupt::unless_stopped(stop, result);
    // Stopped, or failed: no more hand-offs to this relay. On a connection of its own: a signal
    // may have cut a blocked read short on the other, whose reply would then still be owed.
    let fresh = Board::open(cfg);
    let forgotten = fresh.and_then(|mut b| {
        b.forget(&f.me)?;
        // What is on its way gets its confirms (within the confirm timeout), so that the next
        // relay does not send it again.
        if let Some(p) = f.publisher.as_mut().filter(|_| result.is_ok()) {
            f.handoffs.finish(p, &mut b)?;
            f.report(sink, &mut b)?;
        }
        Ok(())
    });
    if let Some(p) = f.publisher.take() {
        p.close();
    }
    result?;
    match forgotten {
        // Stopped while Redis was away: its heartbeat expires by itself, and what was on its
        // way stays in its outbox for the next relay.
        Err(e) if redis_gone(&e) && stop.load(Ordering::SeqCst) => sink.status(format!(
            "relay: stopped while Redis is away ({}); what was on its way stays in the outboxes",
            crate::ops::exit::one_line(&e)
        )),
        r => r?,
    }
    Ok(f.total)
}

/// How often a relay with confirms due looks for them between wake-ups.
const CONFIRMS_EVERY: Duration = Duration::from_millis(2);

/// How often a following relay refreshes its heartbeat (and so the longest it blocks waiting
/// for a wake-up): well within `crate::redis::handoff::HEARTBEAT_TTL_MS`.
const BEAT_EVERY: Duration = Duration::from_millis(1_000);

/// The connection `relay --follow` keeps across rounds, and how it lost the last one.
struct Follow<'c> {
    cfg: &'c Config,
    /// Between two full rounds.
    interval: Duration,
    /// This relay's heartbeat value (so that it deletes its own heartbeat only).
    me: String,
    /// When the heartbeat was last refreshed (None: not since the broker was lost).
    beaten: Option<Instant>,
    publisher: Option<Publisher>,
    /// The publisher's events on their way: hand-offs and the full round's.
    handoffs: Handoffs,
    /// When the open (or last) full round began: its metrics.
    round_started: (SystemTime, Instant),
    /// Events sent since the start, and pending after the last round.
    total: DrainReport,
    /// A connection was lost (or never made): say where publishing resumes.
    lost: bool,
    /// Between failed connection attempts the wait grows (to a few seconds), so a dead
    /// cluster is not hammered.
    backoff: Backoff,
    /// Between connections given up because the broker refused a whole round on them: the
    /// wait grows the same way, and starts short again once a connection has events acked.
    refusals: Backoff,
    /// The absence alerts it sends when they are due.
    alerts: super::alerts::Alerts,
    /// The events due now are that second publish, not a lost connection's (what to say).
    rechecking: bool,
}

impl<'c> Follow<'c> {
    fn new(cfg: &'c Config, interval: Duration) -> Self {
        let me = uuid::Uuid::new_v4().to_string();
        Follow {
            alerts: super::alerts::Alerts::new(&me),
            cfg,
            interval,
            total: DrainReport::default(),
            me,
            beaten: None,
            publisher: None,
            handoffs: Handoffs::new(cfg.amqp.republish_horizon_seconds),
            round_started: (SystemTime::now(), Instant::now()),
            lost: false,
            backoff: Backoff::default(),
            refusals: Backoff::default(),
            rechecking: false,
        }
    }

    /// A new connection's first horizon is over: publish once more what it confirmed in it.
    /// Right after a node dies, a surviving node has confirmed publishes to a queue whose
    /// leader was gone and not kept them (docs/durability.md section 5), and a relay reconnects
    /// into that very window; by the end of the horizon the queues have their new leaders.
    fn recheck(&mut self) {
        if self.handoffs.first_over() > 0 {
            self.rechecking = true;
        }
    }

    /// One full round, then the hand-offs until the next one; or, with no broker, one wait.
    fn round(&mut self, sink: &mut impl FollowSink, board: &mut Board) -> Result<()> {
        let stop = interrupt::stop_flag();
        let started = (SystemTime::now(), Instant::now());
        if self.refused(sink) {
            // Check-ins publish themselves meanwhile, each on a connection of its own.
            board.forget(&self.me)?;
            self.beaten = None;
            if !self.refusals.sleep(stop) {
                return Ok(());
            }
        }
        self.recheck();
        if !self.connected(sink) {
            // The backlog still counts for the metrics (an alert on events stuck with no broker).
            let backlog = super::backlog_of(board, "the broker could not be reached").ok();
            sink.round(backlog.as_ref(), self.total.sent, started)?;
            // No broker: check-ins publish (or keep pending) themselves meanwhile.
            board.forget(&self.me)?;
            self.beaten = None;
            self.lost = true;
            self.backoff.sleep(stop);
            return Ok(());
        }
        // A round whose confirms are still due (a slow broker) is not swept again over it.
        if !self.handoffs.round_open() {
            let p = self.publisher.as_mut().expect("connected");
            self.handoffs.sweep(p, board)?;
            self.round_started = started;
        }
        self.report(sink, board)?;
        self.take_handoffs(sink, board)
    }

    /// Redis was lost: the events on their way are left in their outboxes (their confirms
    /// could not be recorded there), with the connection that carried them; the heartbeat is
    /// written again on the new connection.
    fn drop_publisher(&mut self) {
        if let Some(p) = self.publisher.take() {
            p.close();
        }
        self.handoffs.start_over(false);
        self.beaten = None;
    }

    /// Whether the broker refused (nacked or returned) every event this connection published
    /// since the last look (a round: one interval) and acked none: the connection is then given
    /// up, as if lost (what it confirmed within the horizon is due again), to be opened anew
    /// after a growing wait. RabbitMQ 3.10 keeps a quorum queue's dead leader on a channel after
    /// a fail-over, so publishing again on the same channel was refused round after round
    /// (docs/durability.md section 5); a new connection asks the cluster where the leaders are.
    fn refused(&mut self, sink: &mut impl FollowSink) -> bool {
        let Some(p) = self.publisher.as_ref().filter(|p| p.problem().is_none()) else {
            return false;
        };
        let v = self.handoffs.take_verdicts();
        if v.acked > 0 {
            self.refusals.reset();
        }
        if !v.all_refused() {
            // Some queues' events all refused while others' are acked: those queues' dead
            // leaders are kept on this channel; a fresh connection at once, no wait (the
            // other queues are fine, and their events go on on the new connection).
            let queues = v.refused_queues();
            if queues.is_empty() {
                return false;
            }
            let shown: Vec<&str> = queues.iter().take(5).copied().collect();
            let more = if queues.len() > shown.len() { ", ..." } else { "" };
            sink.status(format!(
                "relay: the broker at {} refused every event published to {}{more} in the last round; connecting again",
                p.broker(),
                shown.join(", ")
            ));
            self.give_up_publisher();
            return false;
        }
        sink.status(format!(
            "relay: the broker at {} refused all {} event(s) published in the last round; connecting again",
            p.broker(),
            v.refused
        ));
        self.give_up_publisher();
        true
    }

    /// Close the publisher as if lost: what it confirmed within the horizon is due again, and
    /// the next [`Follow::connected`] opens a new connection.
    fn give_up_publisher(&mut self) {
        if let Some(p) = self.publisher.take() {
            p.close();
        }
        self.handoffs.start_over(true);
        self.lost = true;
    }

    /// The publisher, reconnecting first if needed. A connection that broke (found out by a
    /// publish, a confirm timeout or its closing) is dropped, with what it had on its way (those
    /// events stay in their outboxes, for the next round), and reopened at once, on the next
    /// broker of the list if its own is gone; the events it confirmed within the re-publish
    /// horizon are published again there first. False: no broker answered.
    fn connected(&mut self, sink: &mut impl FollowSink) -> bool {
        if self.publisher.as_ref().is_some_and(|p| p.problem().is_some()) {
            self.publisher = None;
            self.handoffs.start_over(true);
            self.lost = true;
        }
        if self.publisher.is_none() {
            match Publisher::connect(self.cfg) {
                Ok(p) => {
                    if self.lost {
                        sink.status(format!("relay: publishing again, on {}", p.broker()));
                        self.handoffs.watch_first();
                    }
                    self.backoff.reset();
                    self.publisher = Some(p);
                }
                Err(e) => sink.status(format!("relay: {}", crate::ops::exit::one_line(&e))),
            }
        }
        self.republish(sink);
        self.publisher.is_some()
    }

    /// Publish again what a lost connection confirmed within the horizon (a broker node that
    /// died may not have kept it), and say so.
    fn republish(&mut self, sink: &mut impl FollowSink) {
        let Some(p) = self.publisher.as_mut().filter(|_| self.handoffs.due() > 0) else {
            return;
        };
        self.handoffs.republish(p);
        let n = self.handoffs.take_republished();
        let horizon = self.cfg.amqp.republish_horizon_seconds;
        if n > 0 && std::mem::take(&mut self.rechecking) {
            sink.status(format!(
                "relay: {n} event(s) confirmed in the first {horizon} s after reconnecting published once more (at least once)"
            ));
        } else if n > 0 {
            sink.status(format!(
                "relay: {n} event(s) confirmed in the {horizon} s before the loss published again (at least once)"
            ));
        }
    }

    /// Between two full rounds (`interval`): say the relay is alive, and publish at once the
    /// outboxes check-ins hand over (each wake-up names a department), taking the confirms of
    /// these and of the round as they come.
    fn take_handoffs(&mut self, sink: &mut impl FollowSink, board: &mut Board) -> Result<()> {
        let stop = interrupt::stop_flag();
        let until = Instant::now() + self.interval;
        while !stop.load(Ordering::SeqCst) {
            let Some(p) = self.publisher.as_mut().filter(|p| p.problem().is_none()) else {
                break;
            };
            if self.beaten.is_none_or(|b| b.elapsed() >= BEAT_EVERY) {
                board.beat(&self.me)?;
                self.beaten = Some(Instant::now());
            }
            self.alerts.tick(self.cfg, board, &mut |line| sink.status(line))?;
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            // A blocked read longer than the Redis read timeout would fail as a silent server;
            // while confirms are due, look for them every few milliseconds.
            let read_timeout = Duration::from_millis(u64::from(self.cfg.redis.read_timeout_ms) / 2);
            let mut wait = left.min(BEAT_EVERY).min(read_timeout);
            if self.handoffs.busy() {
                wait = wait.min(CONFIRMS_EVERY);
            }
            // Ctrl-C or SIGTERM interrupts the blocked read: the stop asked for, not a failure.
            let Some(depts) = interrupt::unless_stopped(stop, board.wait_wakes(wait))? else {
                break;
            };
            if !depts.is_empty() {
                self.handoffs.offer(p, board, &depts)?;
            }
            self.handoffs.settle(p, board)?;
            self.report(sink, board)?;
        }
        // A publisher that stopped ends its round at once: what it left is pending.
        self.report(sink, board)
    }

    /// Report what the hand-offs sent (when they sent something) and the full round once it
    /// is over (when it found events), count them, and hand over the round's figures.
    fn report(&mut self, sink: &mut impl FollowSink, board: &mut Board) -> Result<()> {
        let handed = self.handoffs.take_handed();
        if handed.sent > 0 {
            sink.report(&handed)?;
            self.total.sent += handed.sent;
        }
        let Some(p) = self.publisher.as_ref() else {
            return Ok(());
        };
        let Some(r) = self.handoffs.take_round(p, board)? else {
            return Ok(());
        };
        if r.departments > 0 {
            sink.report(&r)?;
        }
        self.total.sent += r.sent;
        self.total.pending = r.pending;
        sink.round(Some(&r), self.total.sent, self.round_started)
    }
}
