//! `attendance relay [--follow]`: publish what the outboxes hold, once or until Ctrl-C.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;

use super::Ctx;
use crate::amqp::{Backoff, Publisher};
use crate::cli::RelayArgs;
use crate::error::Error;
use crate::interrupt;
use crate::ops::metrics;
use crate::ops::relay::{DrainReport, Handoffs};
use crate::redis::board;
use crate::redis::keys::Keys;

pub fn run(ctx: &Ctx, args: RelayArgs) -> Result<()> {
    let keys = Keys::new(&ctx.cfg.namespace);
    let mut con = board::Redis::open(&ctx.cfg)?;
    if !args.follow {
        let (started, clock) = (SystemTime::now(), Instant::now());
        let result = crate::ops::relay::drain_outboxes(&ctx.cfg, &mut con, &keys);
        let last = result.as_ref().ok();
        let sent = last.map_or(0, |r| r.sent);
        write_metrics(&args, last, sent, (started, clock))?;
        let r = result?;
        print(ctx, &args, &r)?;
        if r.pending > 0 {
            return Err(Error::Partial(format!(
                "{} events still pending (not confirmed by the broker)",
                r.pending
            ))
            .into());
        }
        return Ok(());
    }
    follow(ctx, &args, &mut con, &keys)
}

/// `--follow`: a full round every `--interval-ms`, the check-ins' hand-offs in between and
/// during it, until Ctrl-C or SIGTERM.
fn follow(ctx: &Ctx, args: &RelayArgs, con: &mut board::Redis, keys: &Keys) -> Result<()> {
    let stop = interrupt::stop_flag();
    let mut f = Follow::new(keys);
    // Wake-ups left by a relay that died: this one drains every outbox first anyway.
    crate::redis::handoff::clear_wakes(con, keys)?;
    let result = (|| -> Result<()> {
        while !stop.load(Ordering::SeqCst) {
            let started = (SystemTime::now(), Instant::now());
            if !connected(ctx, &mut f) {
                write_metrics(args, None, f.total.sent, started)?;
                // No broker: check-ins publish (or keep pending) themselves meanwhile.
                crate::redis::handoff::forget(con, keys, &f.me)?;
                f.beaten = None;
                f.lost = true;
                f.backoff.sleep(stop);
                continue;
            }
            // A round whose confirms are still due (a slow broker) is not swept again over it.
            if !f.handoffs.round_open() {
                let p = f.publisher.as_mut().expect("connected");
                f.handoffs.sweep(p, con, keys)?;
                f.round_started = started;
            }
            report(ctx, args, &mut f, con)?;
            take_handoffs(ctx, args, &mut f, con)?;
        }
        Ok(())
    })();
    // A signal that cut any Redis read short (the blocked wait for wake-ups, mostly) is the stop
    // that was asked for, not a failure: the events stay in their outboxes.
    let result = interrupt::unless_stopped(stop, result);
    // Stopped, or failed: no more hand-offs to this relay. On a connection of its own: a signal
    // may have cut a blocked read short on the other, whose reply would then still be owed.
    let fresh = board::Redis::open(&ctx.cfg);
    let forgotten = fresh.and_then(|mut c| {
        crate::redis::handoff::forget(&mut c, keys, &f.me)?;
        // What is on its way gets its confirms (within the confirm timeout), so that the next
        // relay does not send it again.
        if let Some(p) = f.publisher.as_mut().filter(|_| result.is_ok()) {
            f.handoffs.finish(p, &mut c, keys)?;
            report(ctx, args, &mut f, &mut c)?;
        }
        Ok(())
    });
    if let Some(p) = f.publisher {
        p.close();
    }
    result?;
    forgotten?;
    ctx.out.status(format!(
        "relay: stopped; {} events sent in all, {} pending",
        f.total.sent, f.total.pending
    ));
    Ok(())
}

/// Between two full rounds (`--interval-ms`): say the relay is alive, and publish at once the
/// outboxes check-ins hand over (each wake-up names a department), taking the confirms of
/// these and of the round as they come.
fn take_handoffs(ctx: &Ctx, args: &RelayArgs, f: &mut Follow, con: &mut board::Redis) -> Result<()> {
    let keys = &f.keys.clone();
    let stop = interrupt::stop_flag();
    let until = Instant::now() + Duration::from_millis(args.interval_ms);
    while !stop.load(Ordering::SeqCst) {
        let Some(p) = f.publisher.as_mut().filter(|p| p.problem().is_none()) else {
            break;
        };
        if f.beaten.is_none_or(|b| b.elapsed() >= BEAT_EVERY) {
            crate::redis::handoff::beat(con, keys, &f.me)?;
            f.beaten = Some(Instant::now());
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        // A blocked read longer than the Redis read timeout would fail as a silent server;
        // while confirms are due, look for them every few milliseconds.
        let read_timeout = Duration::from_millis(u64::from(ctx.cfg.redis.read_timeout_ms) / 2);
        let mut wait = left.min(BEAT_EVERY).min(read_timeout);
        if f.handoffs.busy() {
            wait = wait.min(CONFIRMS_EVERY);
        }
        // Ctrl-C or SIGTERM interrupts the blocked read: the stop asked for, not a failure.
        let Some(depts) = interrupt::unless_stopped(stop, crate::redis::handoff::wait_wakes(con, keys, wait))? else {
            break;
        };
        if !depts.is_empty() {
            f.handoffs.offer(p, con, keys, &depts)?;
        }
        f.handoffs.settle(p, con, keys)?;
        report(ctx, args, f, con)?;
    }
    // A publisher that stopped ends its round at once: what it left is pending.
    report(ctx, args, f, con)
}

/// Print what the hand-offs sent (when they sent something) and the full round once it is
/// over (when it found events), count them, and write the round's metrics.
fn report(ctx: &Ctx, args: &RelayArgs, f: &mut Follow, con: &mut board::Redis) -> Result<()> {
    let handed = f.handoffs.take_handed();
    if handed.sent > 0 {
        print(ctx, args, &handed)?;
        f.total.sent += handed.sent;
    }
    let Some(p) = f.publisher.as_ref() else {
        return Ok(());
    };
    let Some(r) = f.handoffs.take_round(p, con, &f.keys)? else {
        return Ok(());
    };
    if r.departments > 0 {
        print(ctx, args, &r)?;
    }
    f.total.sent += r.sent;
    f.total.pending = r.pending;
    write_metrics(args, Some(&r), f.total.sent, f.round_started)
}

/// How often a relay with confirms due looks for them between wake-ups.
const CONFIRMS_EVERY: Duration = Duration::from_millis(2);

/// How often a following relay refreshes its heartbeat (and so the longest it blocks waiting
/// for a wake-up): well within `crate::redis::handoff::HEARTBEAT_TTL_MS`.
const BEAT_EVERY: Duration = Duration::from_millis(1_000);

/// The connection `relay --follow` keeps across rounds, and how it lost the last one.
struct Follow {
    /// This relay's heartbeat value (so that it deletes its own heartbeat only).
    me: String,
    /// When the heartbeat was last refreshed (None: not since the broker was lost).
    beaten: Option<Instant>,
    publisher: Option<Publisher>,
    /// The publisher's events on their way: hand-offs and the full round's.
    handoffs: Handoffs,
    /// When the open (or last) full round began: its metrics.
    round_started: (SystemTime, Instant),
    keys: Keys,
    /// Events sent since the start, and pending after the last round.
    total: DrainReport,
    /// A connection was lost (or never made): say where publishing resumes.
    lost: bool,
    /// Between failed connection attempts the wait grows (to a few seconds), so a dead
    /// cluster is not hammered.
    backoff: Backoff,
}

impl Follow {
    fn new(keys: &Keys) -> Self {
        Follow {
            keys: keys.clone(),
            total: DrainReport::default(),
            me: uuid::Uuid::new_v4().to_string(),
            beaten: None,
            publisher: None,
            handoffs: Handoffs::default(),
            round_started: (SystemTime::now(), Instant::now()),
            lost: false,
            backoff: Backoff::default(),
        }
    }
}

/// The publisher, reconnecting first if needed. A connection that broke (found out by a
/// publish or a confirm timeout) is dropped, with what it had on its way (those events stay in
/// their outboxes, for the next round), and reopened at once, on the next broker of the list if
/// its own is gone. False: no broker answered.
fn connected(ctx: &Ctx, f: &mut Follow) -> bool {
    if f.publisher.as_ref().is_some_and(|p| p.problem().is_some()) {
        f.publisher = None;
        f.handoffs = Handoffs::default();
        f.lost = true;
    }
    if f.publisher.is_none() {
        match Publisher::connect(&ctx.cfg) {
            Ok(p) => {
                if f.lost {
                    ctx.out.status(format!("relay: publishing again, on {}", p.broker()));
                }
                f.backoff.reset();
                f.publisher = Some(p);
            }
            Err(e) => ctx.out.status(format!("relay: {}", crate::failure::one_line(&e))),
        }
    }
    f.publisher.is_some()
}

/// The drain's figures for node_exporter, when `--metrics-file` asks for them. No report:
/// the broker could not be reached.
fn write_metrics(
    args: &RelayArgs,
    last: Option<&DrainReport>,
    sent_total: usize,
    (started, clock): (SystemTime, Instant),
) -> Result<()> {
    let Some(path) = &args.metrics.metrics_file else {
        return Ok(());
    };
    let ok = last.is_some_and(|r| r.pending == 0 && r.problem.is_none());
    metrics::relay(last, sent_total, ok, started, clock.elapsed().as_secs_f64()).write(path)
}

fn print(ctx: &Ctx, args: &RelayArgs, r: &DrainReport) -> Result<()> {
    for m in &r.malformed {
        ctx.out.status(format!("relay: not published, left in its outbox: {m}"));
    }
    if args.output.json {
        crate::output::json(r)?;
    } else {
        crate::outln!(
            "{} events sent, {} pending, from {} departments",
            r.sent,
            r.pending,
            r.departments
        )?;
        if r.pending > 0 {
            let why = r.problem.as_deref().unwrap_or("nacked or returned by the broker");
            ctx.out.status(format!("relay: pending events stay in Redis ({why})"));
        }
    }
    Ok(())
}
