//! `attendance checkin --file`: many punches at once, pipelined, with a summary.

use std::path::Path;

use anyhow::Result;

use super::Ctx;
use crate::domain::punch_file;
use crate::error::Error;
use crate::ops;

pub(crate) fn run(ctx: &Ctx, file: &Path, json: bool) -> Result<()> {
    let reader = super::input(file)?;
    // Each row's time is checked against the Redis server's clock, in `ops::bulk`.
    let (rows, refused) = punch_file::read(reader)?;
    let pb = ctx.out.progress(rows.len() as u64, "punches");
    let started = std::time::Instant::now();
    let mut b = ops::bulk::bulk(&ctx.cfg, rows, refused, |n| pb.inc(n as u64))?;
    pb.finish_and_clear();
    if let Some(failure) = b.report.failure.take() {
        return cut_off(ctx, &b, json, failure);
    }
    let (report, sent) = (&b.report, &b.notifications);
    if json {
        crate::output::json(&b)?;
    } else {
        for r in &report.refused {
            ctx.say(format!("refused line {}: {}", r.line, r.reason));
        }
        textln!(
            "{} rows: {} recorded, {} unchanged, {} refused ({:.2}s)",
            report.rows,
            report.recorded,
            report.unchanged,
            report.refused.len(),
            started.elapsed().as_secs_f64()
        )?;
        textln!("notifications: {} sent, {} pending", sent.sent, sent.pending)?;
    }
    if let Some(why) = &sent.problem {
        ctx.say(format!(
            "notifications pending ({why}); `attendance relay` will send them"
        ));
    }
    if !report.refused.is_empty() {
        return Err(Error::Partial(format!("{} of {} rows refused", report.refused.len(), report.rows)).into());
    }
    Ok(())
}

/// Redis failed part-way (recording, or publishing after it): say what was done before it
/// (recorded, sent, pending; a rerun of the same file is idempotent and records the rest), in
/// stderr and in `--json`, then fail with the service error (exit 3).
fn cut_off(ctx: &Ctx, b: &ops::bulk::Bulk, json: bool, failure: anyhow::Error) -> Result<()> {
    let (report, sent) = (&b.report, &b.notifications);
    if json {
        crate::output::json(b)?;
    } else {
        for r in &report.refused {
            ctx.say(format!("refused line {}: {}", r.line, r.reason));
        }
    }
    let done = report.recorded + report.unchanged + report.refused.len();
    let when = if report.unconfirmed == 0 && done == report.rows {
        format!("after all {} rows were done, while publishing", report.rows)
    } else {
        format!("after {done} of {} rows", report.rows)
    };
    // Punches without a reply read: Redis went away (no reply), or it refused a call (its
    // answer) and the calls after it were not read.
    let unconfirmed = match (&b.redis_answered, report.unconfirmed) {
        (_, 0) => String::new(),
        (Some(said), n) => format!(", {n} unconfirmed (Redis answered: {said})"),
        (None, n) => format!(", {n} unconfirmed (sent, no reply)"),
    };
    let next = if done == report.rows && report.unconfirmed == 0 {
        "nothing to record again; `attendance relay` sends what waits in the outboxes"
    } else {
        "run the same file again to record the rest (repeats change nothing)"
    };
    let unremoved = match sent.unremoved {
        0 => String::new(),
        n => format!(" ({n} of them still in their outboxes: `attendance relay` sends them again)"),
    };
    ctx.say(format!(
        "checkin --file: Redis failed {when}: {} punches recorded, {} unchanged, {} refused{unconfirmed}; notifications: {} sent{unremoved}, {} pending in the outboxes; {next}",
        report.recorded,
        report.unchanged,
        report.refused.len(),
        sent.sent,
        sent.pending
    ));
    Err(failure)
}
