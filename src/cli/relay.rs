//! `attendance relay [--follow]`: publish what the outboxes hold, once or until Ctrl-C.

use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;

use super::Ctx;
use crate::cli::RelayArgs;
use crate::error::Error;
use crate::ops::metrics;
use crate::ops::relay::{DrainReport, FollowSink};

pub(crate) fn run(ctx: &Ctx, args: RelayArgs) -> Result<()> {
    if !args.follow {
        let (started, clock) = (SystemTime::now(), Instant::now());
        let result = crate::ops::relay::drain_once(&ctx.cfg);
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
    let interval = Duration::from_millis(args.interval_ms);
    let total = crate::ops::relay::follow(&ctx.cfg, interval, &mut Lines { ctx, args: &args })?;
    ctx.say(format!(
        "relay: stopped; {} events sent in all, {} pending",
        total.sent, total.pending
    ));
    Ok(())
}

/// `--follow`'s reports, as they come: status lines to stderr, reports to stdout, the rounds'
/// figures to the metrics file.
struct Lines<'a> {
    ctx: &'a Ctx,
    args: &'a RelayArgs,
}

impl FollowSink for Lines<'_> {
    fn status(&mut self, line: String) {
        self.ctx.say(line);
    }

    fn report(&mut self, r: &DrainReport) -> Result<()> {
        print(self.ctx, self.args, r)
    }

    fn round(&mut self, last: Option<&DrainReport>, sent_total: usize, started: (SystemTime, Instant)) -> Result<()> {
        write_metrics(self.args, last, sent_total, started)
    }
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
        ctx.say(format!("relay: not published, left in its outbox: {m}"));
    }
    if args.output.json {
        crate::output::json(r)?;
    } else {
        textln!(
            "{} events sent, {} pending, from {} departments",
            r.sent,
            r.pending,
            r.departments
        )?;
        if r.pending > 0 {
            let why = r.problem.as_deref().unwrap_or("nacked or returned by the broker");
            ctx.say(format!("relay: pending events stay in Redis ({why})"));
        }
    }
    Ok(())
}
