//! `attendance checkin --file`: many punches at once, pipelined, with a summary.

use std::os::fd::AsFd;
use std::path::Path;

use anyhow::Result;

use crate::cli::Ctx;
use crate::domain::formats::punch_file::{self, Refusal, SHOWN_REFUSALS};
use crate::error::Error;
use crate::ops;
use crate::ops::checkin::record::Replication;

pub(crate) fn run(ctx: &Ctx, file: &Path, errors: Option<&Path>, json: bool) -> Result<()> {
    let started = std::time::Instant::now();
    let (mut b, cut, stopped) = if is_stream(file) {
        // Installed before the first read, so a SIGTERM at any point ends the stream cleanly.
        let stop = crate::interrupt::stop_flag();
        let s = ops::checkin::stream::stream(&ctx.cfg, crate::cli::input(file)?, stop)?;
        (s.bulk, s.cut, s.stopped)
    } else {
        // A regular file is read whole, then recorded pipelined: the bulk fast path.
        // Each row's time is checked against the Redis server's clock, in `ops::checkin::bulk`.
        let (rows, refused) = punch_file::read(crate::cli::input(file)?)?;
        let pb = ctx.out.progress(rows.len() as u64, "punches");
        let b = ops::checkin::bulk::bulk(&ctx.cfg, rows, refused, |n| pb.inc(n as u64))?;
        pb.finish_and_clear();
        (b, None, false)
    };
    if let Some(failure) = b.report.failure.take() {
        write_errors(errors, &b.report.refused)?;
        return cut_off(ctx, &b, errors, json, failure);
    }
    let (report, sent) = (&b.report, &b.notifications);
    if json {
        crate::output::json(&b)?;
    } else {
        say_refused(ctx, &report.refused, errors);
        say_held(ctx, &b);
        textln!(
            "{} rows: {} recorded, {} unchanged ({} repeats), {} refused, {} held for review ({:.2}s)",
            report.rows,
            report.recorded,
            report.unchanged,
            report.repeats,
            report.refused.len(),
            report.held,
            started.elapsed().as_secs_f64()
        )?;
        textln!("notifications: {} sent, {}", sent.sent, sent.pending_words())?;
    }
    if let Some(why) = &sent.problem {
        ctx.say(format!(
            "notifications pending ({why}); `attendance relay` will send them"
        ));
    }
    say_unreplicated(ctx, &b);
    write_errors(errors, &report.refused)?;
    if stopped {
        ctx.say("checkin --file: stopped by a signal; every row read before it was applied");
    }
    if let Some(e) = cut {
        // A stream stopped part-way: the summary above is what was applied before it.
        return Err(e);
    }
    if !report.refused.is_empty() {
        return Err(Error::Partial(format!("{} of {} rows refused", report.refused.len(), report.rows)).into());
    }
    if report.held > 0 {
        let first = b.held_for_review.first();
        let (key, window) = (
            first.and_then(|h| h.key_id.as_deref()),
            first.map_or(0, |h| h.window_minutes),
        );
        return Err(Error::Held(format!(
            "{} of {} rows held for review: back-dated {}; `attendance review list`, then `review approve` by the supervisor or HR",
            report.held,
            report.rows,
            ops::checkin::review::held_why(window, key)
        ))
        .into());
    }
    Ok(())
}

/// Punches recorded but not yet on `redis.min_replicas_acked` replicas: which masters, on stderr.
fn say_unreplicated(ctx: &Ctx, b: &ops::checkin::bulk::Bulk) {
    if b.replication == Replication::Pending {
        ctx.say(format!(
            "punches recorded but not yet replicated ({}); run the same file again to be sure (repeats change nothing)",
            b.unreplicated.join("; ")
        ));
    }
}

/// The first punches held for review on stderr, and how many more there are.
fn say_held(ctx: &Ctx, b: &ops::checkin::bulk::Bulk) {
    for h in &b.held_for_review {
        ctx.say(format!(
            "held for review (review {}): {} {} at {} on {}, {} min old when recorded",
            h.review_id, h.employee_id, h.kind, h.at, h.work_date, h.minutes_old
        ));
    }
    let more = b.report.held.saturating_sub(b.held_for_review.len());
    if more > 0 {
        ctx.say(format!(
            "... and {more} more held for review (`attendance review list`)"
        ));
    }
}

/// A pipe, a FIFO, a terminal or any other input that is not a regular file: its punches are
/// applied as they arrive. A file that cannot be opened is not one (its error comes on opening).
fn is_stream(file: &Path) -> bool {
    let meta = if file.as_os_str() == "-" {
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .and_then(|fd| std::fs::File::from(fd).metadata())
    } else {
        std::fs::metadata(file)
    };
    meta.is_ok_and(|m| !m.is_file())
}

/// The first [`SHOWN_REFUSALS`] refusals on stderr, and how many more there are.
fn say_refused(ctx: &Ctx, refused: &[Refusal], errors: Option<&Path>) {
    for r in refused.iter().take(SHOWN_REFUSALS) {
        ctx.say(format!("refused line {}: {}", r.line, r.reason));
    }
    let more = refused.len().saturating_sub(SHOWN_REFUSALS);
    if more > 0 {
        ctx.say(match errors {
            Some(f) => format!("... and {more} more refused rows (every one is in {})", f.display()),
            None => format!("... and {more} more refused rows (--errors FILE writes every one)"),
        });
    }
}

/// `--errors FILE`: every refusal, written whole or not at all.
fn write_errors(errors: Option<&Path>, refused: &[Refusal]) -> Result<()> {
    match errors {
        Some(f) => crate::files::write_with(f, |w| punch_file::write_refusals(w, refused)),
        None => Ok(()),
    }
}

/// Redis failed part-way (recording, or publishing after it): say what was done before it
/// (recorded, sent, pending; a rerun of the same file is idempotent and records the rest), in
/// stderr and in `--json`, then fail with the service error (exit 3).
fn cut_off(
    ctx: &Ctx,
    b: &ops::checkin::bulk::Bulk,
    errors: Option<&Path>,
    json: bool,
    failure: anyhow::Error,
) -> Result<()> {
    let (report, sent) = (&b.report, &b.notifications);
    if json {
        crate::output::json(b)?;
    } else {
        say_refused(ctx, &report.refused, errors);
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
        "checkin --file: Redis failed {when}: {} punches recorded, {} unchanged, {} refused{unconfirmed}; notifications: {} sent{unremoved}, {} in the outboxes; {next}",
        report.recorded,
        report.unchanged,
        report.refused.len(),
        sent.sent,
        sent.pending_words()
    ));
    Err(failure)
}
