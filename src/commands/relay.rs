//! `attendance relay [--follow]`: publish what the outboxes hold, once or until Ctrl-C.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;

use super::Ctx;
use crate::cli::RelayArgs;
use crate::error::Error;
use crate::keys::Keys;
use crate::notify::{self, DrainReport, Publisher};
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
    let mut publisher: Option<Publisher> = None;
    let mut total = DrainReport::default();
    while !stop.load(Ordering::SeqCst) {
        let (started, clock) = (SystemTime::now(), Instant::now());
        // A broken connection is dropped and reopened on the next round; the events wait in Redis.
        if publisher.as_ref().is_some_and(|p| p.problem().is_some()) {
            publisher = None;
        }
        if publisher.is_none() {
            match Publisher::connect(&ctx.cfg) {
                Ok(p) => publisher = Some(p),
                Err(e) => ctx.out.status(format!("relay: {}", crate::error::one_line(&e))),
            }
        }
        let mut last = None;
        if let Some(p) = publisher.as_mut() {
            let r = notify::drain_with(p, &mut con, &keys)?;
            if r.departments > 0 {
                print(ctx, &args, &r)?;
            }
            total.sent += r.sent;
            total.pending = r.pending;
            last = Some(r);
        }
        write_metrics(&args, last.as_ref(), total.sent, started, clock)?;
        std::thread::sleep(Duration::from_millis(args.interval_ms));
    }
    if let Some(p) = publisher {
        p.close();
    }
    ctx.out.status(format!(
        "relay: stopped; {} events sent in all, {} pending",
        total.sent, total.pending
    ));
    Ok(())
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
