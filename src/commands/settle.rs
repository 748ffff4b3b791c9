//! `attendance settle`: write a finished day to MySQL and say what happened in one line.

use anyhow::Result;
use chrono::Duration;

use super::Ctx;
use crate::cli::SettleArgs;
use crate::error::Error;
use crate::settle::{self, Hooks, Options, Progress};

pub fn run(ctx: &Ctx, args: SettleArgs) -> Result<()> {
    let today = ctx.today();
    let date = args.date.unwrap_or(today - Duration::days(1));
    let opts = Options {
        date,
        today,
        hooks: Hooks::from_env()?,
    };
    let mut pb = None;
    let report = settle::settle(&ctx.cfg, &opts, |p| match p {
        Progress::Rows(n) => pb = Some(ctx.out.progress(n, "settle")),
        Progress::Written(n) => {
            if let Some(pb) = &pb {
                pb.inc(n);
            }
        }
    })?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    for (step, secs) in &report.steps {
        ctx.out.verbose(format!("{step}: {secs:.3}s"));
    }
    // A broken roster can fail every row: show a screenful, the rest are in MySQL.
    const SHOWN: usize = 20;
    for f in report.failures.iter().take(SHOWN) {
        ctx.out
            .status(format!("failed: {} ({}): {}", f.employee_id, f.department_id, f.reason));
    }
    if report.failures.len() > SHOWN {
        ctx.out.status(format!(
            "... and {} more failed rows (attendance report runs --failures)",
            report.failures.len() - SHOWN
        ));
    }
    if args.output.json {
        crate::outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        let counts: Vec<String> = report.counts.iter().map(|(s, n)| format!("{s} {n}")).collect();
        let next = match (&report.next_day, report.next_workday) {
            (Some(l), _) => format!("; next work day {} laid out ({} employees)", l.date, l.employees),
            (None, Some(d)) => format!("; next work day {d} not laid out"),
            (None, None) => String::new(),
        };
        let pending = match (&report.outbox.problem, report.outbox.pending) {
            (Some(p), n) => format!("; {n} notification(s) pending in outboxes ({p})"),
            (None, 0) => String::new(),
            (None, n) => format!("; {n} notification(s) still pending in outboxes"),
        };
        ctx.out.status(format!(
            "settled {} ({}) run {}: {} rows written, {} failed [{}]; {} boards deleted, {} kept{next}{pending} ({:.2}s)",
            report.date,
            if report.workday { "work day" } else { "rest day" },
            report.run_id,
            report.rows_written,
            report.failed,
            counts.join(", "),
            report.boards_deleted,
            report.boards_kept,
            report.seconds
        ));
    }
    if report.failed > 0 {
        return Err(Error::Partial(format!(
            "{} row(s) of {} could not be written (see `attendance report runs --failures`); their boards are kept for a rerun",
            report.failed, report.date
        ))
        .into());
    }
    Ok(())
}
