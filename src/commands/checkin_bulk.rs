//! `attendance checkin --file`: many punches at once, pipelined, with a summary.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use anyhow::Result;

use super::Ctx;
use crate::error::Error;
use crate::keys::Keys;
use crate::notify::{self, DrainReport, Publisher};
use crate::services::RedisConn;
use crate::{board, bulk, services};

pub fn run(ctx: &Ctx, file: &Path, json: bool) -> Result<()> {
    let reader: Box<dyn Read> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(BufReader::new(
            File::open(file).map_err(|e| Error::input(format!("cannot open {}: {e}", file.display())))?,
        ))
    };
    let (rows, refused) = bulk::parse(reader, chrono::Utc::now(), ctx.cfg.policy.max_future_skew_secs)?;
    let keys = Keys::new(&ctx.cfg.namespace);
    let mut con = services::redis(&ctx.cfg)?;
    let pb = ctx.out.progress(rows.len() as u64, "punches");
    let started = std::time::Instant::now();
    let mut report = bulk::record(&ctx.cfg, &mut con, &keys, rows, refused, |n| pb.inc(n as u64))?;
    pb.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    if let Some(failure) = report.failure.take() {
        return cut_off(ctx, &report, json, failure);
    }
    let sent = publish(ctx, &mut con, &keys, &report.departments)?;
    if json {
        let mut v = serde_json::to_value(&report)?;
        v["notifications"] = serde_json::to_value(&sent)?;
        println!("{v}");
    } else {
        for r in &report.refused {
            ctx.out.status(format!("refused line {}: {}", r.line, r.reason));
        }
        println!(
            "{} rows: {} recorded, {} unchanged, {} refused ({:.2}s)",
            report.rows,
            report.recorded,
            report.unchanged,
            report.refused.len(),
            secs
        );
        println!("notifications: {} sent, {} pending", sent.sent, sent.pending);
    }
    if let Some(why) = &sent.problem {
        ctx.out.status(format!(
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
fn cut_off(ctx: &Ctx, report: &bulk::BulkReport, json: bool, failure: anyhow::Error) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string(report)?);
    } else {
        for r in &report.refused {
            ctx.out.status(format!("refused line {}: {}", r.line, r.reason));
        }
    }
    ctx.out.status(format!(
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

/// Publish what the punches put in their departments' outboxes, with a window of confirms.
/// An unreachable broker leaves them pending (the punches are recorded all the same).
fn publish(ctx: &Ctx, con: &mut RedisConn, keys: &Keys, depts: &[String]) -> Result<DrainReport> {
    if depts.is_empty() {
        return Ok(DrainReport::default());
    }
    match Publisher::connect(&ctx.cfg) {
        Ok(mut p) => {
            let r = notify::drain_departments(&mut p, con, keys, depts)?;
            p.close();
            Ok(r)
        }
        Err(e) => Ok(DrainReport {
            pending: board::outbox_len(con, keys, depts)?,
            problem: Some(crate::error::one_line(&e)),
            ..Default::default()
        }),
    }
}
