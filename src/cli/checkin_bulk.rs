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
        return cut_off(ctx, &b.report, json, failure);
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

/// Redis failed part-way: say what was recorded before (a rerun of the same file is
/// idempotent and records the rest), then fail with the service error (exit 3).
fn cut_off(ctx: &Ctx, report: &punch_file::BulkReport, json: bool, failure: anyhow::Error) -> Result<()> {
    if json {
        crate::output::json(report)?;
    } else {
        for r in &report.refused {
            ctx.say(format!("refused line {}: {}", r.line, r.reason));
        }
    }
    ctx.say(format!(
        "checkin --file: Redis failed after {} of {} rows: {} punches recorded, {} unchanged, {} refused, {} unconfirmed (sent, no reply); run the same file again to record the rest (repeats change nothing)",
        report.recorded + report.unchanged + report.refused.len(),
        report.rows,
        report.recorded,
        report.unchanged,
        report.refused.len(),
        report.unconfirmed
    ));
    Err(failure)
}
