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
        // No drain (the broker unreachable): the outboxes as Redis has them, for the metrics.
        let backlog = match (&result, &args.metrics.metrics_file) {
            (Err(e), Some(_)) => crate::ops::relay::backlog(&ctx.cfg, &crate::ops::exit::one_line(e)),
            _ => None,
        };
        let last = result.as_ref().ok().or(backlog.as_ref());
        let sent = last.map_or(0, |r| r.sent);
        let problem = write_metrics(&args, last, sent, (started, clock));
        // A metrics file that cannot be written is a warning (even under `-q`) after the
        // drain's own word, never the relay's exit code: a unit whose work succeeded must
        // succeed.
        let warn = || {
            if let Some(p) = &problem {
                ctx.warn(p);
            }
        };
        let r = result.inspect_err(|_| warn())?;
        print(ctx, &args, &r)?;
        warn();
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
    let mut lines = Lines {
        ctx,
        args: &args,
        unwritten: 0,
        problem: None,
    };
    let total = crate::ops::relay::follow(&ctx.cfg, interval, &mut lines)?;
    ctx.say(format!(
        "relay: stopped; {} events sent in all, {} pending",
        total.sent, total.pending
    ));
    if let (n @ 1.., Some(p)) = (lines.unwritten, lines.problem) {
        ctx.warn(format!(
            "{p} ({n} round(s) without their metrics; the relay itself stopped cleanly)"
        ));
    }
    Ok(())
}

/// `--follow`'s reports, as they come: status lines to stderr, reports to stdout, the rounds'
/// figures to the metrics file. A metrics file that cannot be written stops nothing: the
/// relay goes on, warns once each time the reason changes (even under `-q`: the journal must
/// hear it), and says how many rounds went unwritten when it stops, exiting as its work did.
struct Lines<'a> {
    ctx: &'a Ctx,
    args: &'a RelayArgs,
    /// Rounds whose metrics could not be written.
    unwritten: usize,
    /// The last reason, while the file cannot be written.
    problem: Option<String>,
}

impl FollowSink for Lines<'_> {
    fn status(&mut self, line: String) {
        self.ctx.say(line);
    }

    fn report(&mut self, r: &DrainReport) -> Result<()> {
        print(self.ctx, self.args, r)
    }

    fn round(&mut self, last: Option<&DrainReport>, sent_total: usize, started: (SystemTime, Instant)) -> Result<()> {
        match write_metrics(self.args, last, sent_total, started) {
            Some(p) => {
                if self.problem.as_ref() != Some(&p) {
                    self.ctx.warn(&p);
                }
                self.unwritten += 1;
                self.problem = Some(p);
            }
            None if self.problem.take().is_some() => {
                if let Some(path) = &self.args.metrics.metrics_file {
                    self.ctx
                        .out
                        .status(format!("relay: --metrics-file {} written again", path.display()));
                }
            }
            None => {}
        }
        Ok(())
    }
}

/// The drain's figures for node_exporter, when `--metrics-file` asks for them. With no broker
/// `last` is the backlog read from Redis (its `problem` set: success 0); none at all when Redis
/// could not be read either. Returns the line to say when the file could not be written.
fn write_metrics(
    args: &RelayArgs,
    last: Option<&DrainReport>,
    sent_total: usize,
    (started, clock): (SystemTime, Instant),
) -> Option<String> {
    let path = args.metrics.metrics_file.as_ref()?;
    let ok = last.is_some_and(|r| r.pending == 0 && r.problem.is_none());
    metrics::relay(last, sent_total, ok, started, clock.elapsed().as_secs_f64())
        .write(path)
        .err()
        .map(|e| metrics::not_written(path, &e))
}

fn print(ctx: &Ctx, args: &RelayArgs, r: &DrainReport) -> Result<()> {
    for m in &r.malformed {
        ctx.say(format!("relay: not published, left in its outbox: {m}"));
    }
    if args.output.json {
        crate::output::json(r)?;
    } else {
        textln!(
            "{} events sent, {}, from {} departments",
            r.sent,
            r.pending_words(),
            r.departments
        )?;
        if r.pending > 0 {
            let why = r.problem.as_deref().unwrap_or("nacked or returned by the broker");
            ctx.say(format!("relay: pending events stay in Redis ({why})"));
        }
    }
    Ok(())
}
