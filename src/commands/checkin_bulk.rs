//! `attendance checkin --file`: many punches at once, pipelined, with a summary.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use anyhow::Result;

use super::Ctx;
use crate::error::Error;
use crate::keys::Keys;
use crate::{bulk, services};

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
    let report = bulk::record(&ctx.cfg, &mut con, &keys, rows, refused, |n| pb.inc(n as u64))?;
    pb.finish_and_clear();
    let secs = started.elapsed().as_secs_f64();
    if json {
        println!("{}", serde_json::to_string(&report)?);
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
    }
    if !report.refused.is_empty() {
        return Err(Error::Partial(format!("{} of {} rows refused", report.refused.len(), report.rows)).into());
    }
    Ok(())
}
