//! `attendance settle`: write finished days to MySQL and say what happened, one line a day.

use std::time::{Instant, SystemTime};

use anyhow::Result;

use super::Ctx;
use crate::cli::SettleArgs;
use crate::domain::text::plural;
use crate::error::Error;
use crate::ops::metrics;
use crate::ops::settle::reconcile::Checked;
use crate::ops::settle::{self, Hooks, Options, Progress, Report, Summary};

pub(crate) fn run(ctx: &Ctx, args: SettleArgs) -> Result<()> {
    let opts = Options {
        date: args.date,
        accept_missing_boards: args.accept_missing_boards,
        no_reconcile: args.no_reconcile,
        check_journal: args.check_journal,
        hooks: Hooks::from_env()?,
    };
    // A config that cannot serve the run is its one line, before any warning.
    settle::check_config(&ctx.cfg, &opts)?;
    if let Some(w) = crate::ops::settle_warning(&ctx.cfg) {
        ctx.say(w);
    }
    let mut pb: Option<indicatif::ProgressBar> = None;
    let (started, clock) = (SystemTime::now(), Instant::now());
    let result = settle::settle(&ctx.cfg, &opts, |p| match p {
        Progress::Rows(n) => {
            // A catch-up settles several days: one bar each.
            if let Some(pb) = pb.take() {
                pb.finish_and_clear();
            }
            pb = Some(ctx.out.progress(n, "settle"));
        }
        Progress::Written(n) => {
            if let Some(pb) = &pb {
                pb.inc(n);
            }
        }
    });
    let (result, metrics_problem) = with_metrics(ctx, &args, result, started, clock);
    let summary = result?;
    if let Some(pb) = pb {
        pb.finish_and_clear();
    }
    for report in summary.days() {
        show_failures(ctx, report);
        let r = &report.reconcile;
        if r.restored > 0 {
            ctx.say(format!(
                "warning: {}: {} acknowledged punch(es) were missing from Redis (a fail-over to a lagging replica?) \
                 and were restored from the journal before the day was written",
                report.date, r.restored
            ));
        }
        if r.refused > 0 {
            ctx.say(format!(
                "warning: {}: {} journaled punch(es) missing from Redis were refused by the keyring or the roster \
                 and parked, not restored (`attendance dlq list`)",
                report.date, r.refused
            ));
        }
        let refused = report.refused_punches;
        if refused.total() > 0 {
            ctx.say(format!(
                "warning: {}: {} punch(es) refused, not settled: {} board token(s) that no signed punch log record backs,                  {} punch log entr(ies) whose signature fails (who wrote them to Redis? `attendance doctor`, docs/settle.md)",
                report.date,
                refused.total(),
                refused.unbacked,
                refused.forged
            ));
        }
        if r.status == Checked::NoJournal {
            ctx.say(format!(
                "warning: {}: the broker has no journal for this namespace: the boards were settled as Redis has them",
                report.date
            ));
        }
        if report.held_for_review > 0 {
            ctx.say(format!(
                "warning: {}: {} punch(es) held for review still pending, not in the day's rows until approved \
                 (`attendance review list --date {}`)",
                report.date, report.held_for_review, report.date
            ));
        }
    }
    if args.output.json {
        crate::outln!("{}", serde_json::to_string(&summary)?)?;
    } else {
        for report in summary.days() {
            ctx.say(line(report));
        }
        if summary.settled_days.len() > 1 {
            let days: Vec<String> = summary.settled_days.iter().map(ToString::to_string).collect();
            ctx.say(format!("caught up {}: {}", plural(days.len(), "day"), days.join(", ")));
        }
    }
    // A day whose night shift is still on is the next run's, as cron runs it again tomorrow.
    for w in &summary.waiting {
        ctx.say(format!(
            "{} left for the next run: its last shift ends at {} (settle --date {} after that settles it now)",
            w.date, w.last_shift_ends, w.date
        ));
    }
    // The day is done and said: a metrics file that could not be written is a warning, even
    // under `-q`, and never the run's exit code (a unit whose work succeeded must succeed).
    if let Some(problem) = &metrics_problem {
        ctx.warn(format!("{problem} (the settle itself is done)"));
    }
    if summary.failed() > 0 {
        return Err(Error::Partial(format!(
            "{} row(s) could not be written (see `attendance report runs --failures`); their boards are kept for a rerun",
            summary.failed()
        ))
        .into());
    }
    Ok(())
}

fn show_failures(ctx: &Ctx, report: &Report) {
    for (step, secs) in &report.steps {
        ctx.out.verbose(format!("{}: {step}: {secs:.3}s", report.date));
    }
    for (part, secs) in &report.parts {
        ctx.out.verbose(format!(
            "{}: writing the rows, summed over threads: {part}: {secs:.3}s",
            report.date
        ));
    }
    // A broken roster can fail every row: show a screenful, the rest are in MySQL.
    const SHOWN: usize = 20;
    for f in report.failures.iter().take(SHOWN) {
        ctx.say(format!(
            "failed: {} ({}) on {}: {}",
            f.employee_id, f.department_id, report.date, f.reason
        ));
    }
    if report.failures.len() > SHOWN {
        ctx.say(format!(
            "... and {} more failed rows (attendance report runs --failures)",
            report.failures.len() - SHOWN
        ));
    }
}

/// One day's summary line.
fn line(report: &Report) -> String {
    let counts: Vec<String> = report.counts.iter().map(|(s, n)| format!("{s} {n}")).collect();
    let next = match (&report.next_day, report.next_workday) {
        (Some(l), _) => format!(
            "; next work day {} laid out ({})",
            l.date,
            plural(l.employees, "employee")
        ),
        (None, Some(d)) => format!("; next work day {d} not laid out"),
        (None, None) => String::new(),
    };
    let pending = match (&report.outbox.problem, report.outbox.pending) {
        (Some(p), n) => format!("; {} pending in outboxes ({p})", plural(n, "notification")),
        (None, 0) => String::new(),
        (None, n) => format!("; {n} notification(s) still pending in outboxes"),
    };
    let unreadable = match report.punch_log_unreadable {
        0 => String::new(),
        n => format!(" ({n} unreadable, left out)"),
    };
    let reconciled = match (report.reconcile.status, report.reconcile.restored) {
        (Checked::Done, 0) => String::new(),
        (Checked::Done, n) => format!("; {} restored from the journal", plural(n as usize, "punch")),
        (Checked::Skipped, _) => "; not checked against the journal (--no-reconcile)".into(),
        (Checked::JournalOff, _) => "; not checked against the journal (journal.enabled = false)".into(),
        (Checked::NoJournal, _) => "; not checked against the journal (none on the broker)".into(),
        // The usual night: said by nothing, as a check that restored nothing.
        (Checked::Unchanged, _) => String::new(),
    };
    let refused = match report.refused_punches.total() {
        0 => String::new(),
        n => format!("; {} refused (no signed record)", plural(n as usize, "punch")),
    };
    let held = match report.held_for_review {
        0 => String::new(),
        n => format!("; {n} held for review"),
    };
    format!(
        "settled {} ({}) run {}: {} rows written, {} failed [{}]; {} punches logged{unreadable}; {} boards deleted, {} kept{refused}{reconciled}{held}{next}{pending} ({:.2}s)",
        report.date,
        if report.workday { "work day" } else { "rest day" },
        report.run_id,
        report.rows_written,
        report.failed,
        counts.join(", "),
        report.punches_logged,
        report.boards_deleted,
        report.boards_kept,
        report.seconds
    )
}

/// Write the run's figures for node_exporter when `--metrics-file` asks for them (those of the
/// last day settled, which is yesterday), also for a run that stopped early (outcome `error`:
/// what an alert needs to see). A file that cannot be written costs the run nothing: its
/// result is handed on whole, with one line saying which file and why, for a warning after
/// the summary (before the error of a run that stopped early).
fn with_metrics(
    ctx: &Ctx,
    args: &SettleArgs,
    result: Result<Summary>,
    started: SystemTime,
    clock: Instant,
) -> (Result<Summary>, Option<String>) {
    let Some(path) = &args.metrics.metrics_file else {
        return (result, None);
    };
    let (report, outcome) = match &result {
        Ok(s) if s.failed() > 0 => (s.last.as_ref(), "partial"),
        Ok(s) => (s.last.as_ref(), "ok"),
        Err(_) => (None, "error"),
    };
    // A run that stopped early: the outboxes as Redis has them, if it can be read.
    let pending = match &result {
        Err(_) => crate::ops::relay::backlog(&ctx.cfg, "settle stopped").map(|b| b.pending),
        Ok(_) => None,
    };
    let written = metrics::settle(report, pending, outcome, started, clock.elapsed().as_secs_f64()).write(path);
    let problem = written.err().map(|e| metrics::not_written(path, &e));
    if let (Err(_), Some(p)) = (&result, &problem) {
        ctx.warn(p);
    }
    (result, problem)
}
