//! `attendance relay [--follow]`: publish what the outboxes hold, once or until Ctrl-C.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;

use super::Ctx;
use crate::cli::RelayArgs;
use crate::error::Error;
use crate::keys::Keys;
use crate::notify::{self, Backoff, DrainReport, Publisher};
use crate::{board, interrupt, metrics};

pub fn run(ctx: &Ctx, args: RelayArgs) -> Result<()> {
    let keys = Keys::new(&ctx.cfg.namespace);
    let mut con = board::Redis::open(&ctx.cfg)?;
    if !args.follow {
        let (started, clock) = (SystemTime::now(), Instant::now());
        let result = notify::drain_outboxes(&ctx.cfg, &mut con, &keys);
        let last = result.as_ref().ok();
        let sent = last.map_or(0, |r| r.sent);
        write_metrics(&args, last, sent, started, clock)?;
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
    let stop = interrupt::stop_flag();
    let mut follow = Follow::default();
    let mut total = DrainReport::default();
    // Wake-ups left by a relay that died: this one drains every outbox first anyway.
    board::handoff::clear_wakes(&mut con, &keys)?;
    let result = (|| -> Result<()> {
        while !stop.load(Ordering::SeqCst) {
            let (started, clock) = (SystemTime::now(), Instant::now());
            let last = round(ctx, &mut follow, &mut con, &keys)?;
            if let Some(r) = last.as_ref().filter(|r| r.departments > 0) {
                print(ctx, &args, r)?;
            }
            if let Some(r) = &last {
                total.sent += r.sent;
                total.pending = r.pending;
            }
            write_metrics(&args, last.as_ref(), total.sent, started, clock)?;
            if follow.publisher.is_none() {
                // No broker: check-ins publish (or keep pending) themselves meanwhile.
                board::handoff::forget(&mut con, &keys, &follow.me)?;
                follow.beaten = None;
                follow.lost = true;
                follow.backoff.sleep(stop);
            } else {
                take_handoffs(ctx, &args, &mut follow, &mut con, &keys, &mut total)?;
            }
        }
        Ok(())
    })();
    // A signal that cut any Redis read short (the blocked wait for wake-ups, mostly) is the stop
    // that was asked for, not a failure: the events stay in their outboxes.
    let result = interrupt::unless_stopped(stop, result);
    // Stopped, or failed: no more hand-offs to this relay. On a connection of its own: a signal
    // may have cut a blocked read short on the other, whose reply would then still be owed.
    let forgotten = board::Redis::open(&ctx.cfg).and_then(|mut c| board::handoff::forget(&mut c, &keys, &follow.me));
    if let Some(p) = follow.publisher {
        p.close();
    }
    result?;
    forgotten?;
    ctx.out.status(format!(
        "relay: stopped; {} events sent in all, {} pending",
        total.sent, total.pending
    ));
    Ok(())
}

/// Between two full rounds (`--interval-ms`): say the relay is alive, and publish at once the
/// outboxes check-ins hand over (each wake-up names a department).
fn take_handoffs(
    ctx: &Ctx,
    args: &RelayArgs,
    f: &mut Follow,
    con: &mut board::Redis,
    keys: &Keys,
    total: &mut DrainReport,
) -> Result<()> {
    let stop = interrupt::stop_flag();
    let until = Instant::now() + Duration::from_millis(args.interval_ms);
    let mut handoffs = notify::Handoffs::default();
    while !stop.load(Ordering::SeqCst) {
        let Some(p) = f.publisher.as_mut().filter(|p| p.problem().is_none()) else {
            break;
        };
        if f.beaten.is_none_or(|b| b.elapsed() >= BEAT_EVERY) {
            board::handoff::beat(con, keys, &f.me)?;
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
        if handoffs.busy() {
            wait = wait.min(CONFIRMS_EVERY);
        }
        // Ctrl-C or SIGTERM interrupts the blocked read: the stop asked for, not a failure.
        let Some(depts) = interrupt::unless_stopped(stop, board::handoff::wait_wakes(con, keys, wait))? else {
            break;
        };
        if !depts.is_empty() {
            handoffs.offer(p, con, keys, &depts)?;
        }
        report_sent(ctx, args, handoffs.settle(p, con, keys)?, total)?;
    }
    // The full round that follows reads every outbox: nothing may still be on its way.
    if let Some(p) = f.publisher.as_mut() {
        report_sent(ctx, args, handoffs.finish(p, con, keys)?, total)?;
    }
    Ok(())
}

/// Print what the hand-offs sent (when they sent something) and count it.
fn report_sent(ctx: &Ctx, args: &RelayArgs, r: DrainReport, total: &mut DrainReport) -> Result<()> {
    if r.sent > 0 {
        print(ctx, args, &r)?;
        total.sent += r.sent;
    }
    Ok(())
}

/// How often a relay with confirms due looks for them between wake-ups.
const CONFIRMS_EVERY: Duration = Duration::from_millis(2);

/// How often a following relay refreshes its heartbeat (and so the longest it blocks waiting
/// for a wake-up): well within `board::handoff::HEARTBEAT_TTL_MS`.
const BEAT_EVERY: Duration = Duration::from_millis(1_000);

/// The connection `relay --follow` keeps across rounds, and how it lost the last one.
struct Follow {
    /// This relay's heartbeat value (so that it deletes its own heartbeat only).
    me: String,
    /// When the heartbeat was last refreshed (None: not since the broker was lost).
    beaten: Option<Instant>,
    publisher: Option<Publisher>,
    /// A connection was lost (or never made): say where publishing resumes.
    lost: bool,
    /// Between failed connection attempts the wait grows (to a few seconds), so a dead
    /// cluster is not hammered.
    backoff: Backoff,
}

impl Default for Follow {
    fn default() -> Self {
        Follow {
            me: uuid::Uuid::new_v4().to_string(),
            beaten: None,
            publisher: None,
            lost: false,
            backoff: Backoff::default(),
        }
    }
}

/// One round: drain every outbox, reconnecting first if needed. None: no broker answered.
fn round(ctx: &Ctx, f: &mut Follow, con: &mut board::Redis, keys: &Keys) -> Result<Option<DrainReport>> {
    let mut last: Option<DrainReport> = None;
    // A connection that broke (now, or while idle: found out by the publish) is dropped and
    // reopened at once, on the next broker of the list if its own is gone; one retry per
    // round, then the events wait in Redis for the next.
    for _attempt in 0..2 {
        if f.publisher.as_ref().is_some_and(|p| p.problem().is_some()) {
            f.publisher = None;
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
                Err(e) => ctx.out.status(format!("relay: {}", crate::error::one_line(&e))),
            }
        }
        let Some(p) = f.publisher.as_mut() else { break };
        let r = notify::drain_with(p, con, keys)?;
        let sent_before = last.as_ref().map_or(0, |l| l.sent);
        let retry = r.problem.is_some();
        last = Some(DrainReport {
            sent: r.sent + sent_before,
            ..r
        });
        if !retry {
            break;
        }
    }
    Ok(last)
}

/// The drain's figures for node_exporter, when `--metrics-file` asks for them. No report:
/// the broker could not be reached.
fn write_metrics(
    args: &RelayArgs,
    last: Option<&DrainReport>,
    sent_total: usize,
    started: SystemTime,
    clock: Instant,
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
