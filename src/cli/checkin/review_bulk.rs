//! `attendance review approve|reject` with filters: every pending held punch of a department,
//! a day or a recording key (or `--all-pending`) decided in one command, each punch checked and
//! audited as if decided alone; a summary, the refused ones with why, and exit 4 when some
//! were refused (1 when every one was).

use anyhow::Result;

use crate::cli::{Ctx, ReviewDecision};
use crate::domain::day::review::Status;
use crate::error::Error;
use crate::ops::checkin::review_bulk::{self, BulkDecided, BulkRequest};

/// Refusals shown on stderr in text (`--json` lists up to `review_bulk::SHOWN_REFUSED`).
const SHOWN: usize = 5;

pub(crate) fn decide_all(ctx: &Ctx, d: ReviewDecision, approve: bool) -> Result<()> {
    let filter = super::review::filter(d.date, d.dept.as_deref(), d.key.as_deref())?;
    let os_user = crate::ops::lookup::os_user();
    let o = review_bulk::decide_all(
        &ctx.cfg,
        &BulkRequest {
            filter,
            approve,
            reason: d.reason.as_deref(),
            os_user: &os_user,
            dry_run: d.dry_run,
        },
    )?;
    if o.matched == 0 {
        ctx.say("no pending held punch matches (`attendance review list` shows them)");
    }
    for r in o.refused.iter().take(SHOWN) {
        ctx.say(format!(
            "refused: review {} ({} of {} on {}): {}",
            r.review_id, r.employee_id, r.department_id, r.work_date, r.reason
        ));
    }
    if o.refused_count > SHOWN {
        ctx.say(format!(
            "... and {} more refused (`--json` lists the first {})",
            o.refused_count - SHOWN,
            review_bulk::SHOWN_REFUSED
        ));
    }
    if let Some(n) = &o.notifications {
        if let Some(why) = &n.problem {
            ctx.say(format!(
                "{} notification(s) pending ({why}); `attendance relay` will send them",
                n.pending
            ));
        }
    }
    for day in &o.days_settled {
        ctx.say(format!(
            "{day} is settled: its approved punches wait on its board for the next settle \
             (`attendance settle --date {day}` does it now)"
        ));
    }
    if d.output.json {
        crate::output::json(&o)?;
    } else {
        textln!("{}", summary(&o))?;
    }
    outcome(&o)
}

/// `approved 498 of 500 pending held punch(es) matched, 2 refused (by S1, as ops on this
/// machine, att_jobs@% in MySQL)`, or what a dry run would do.
fn summary(o: &BulkDecided) -> String {
    let decided = o.approved + o.rejected;
    let verb = o.decision.as_str();
    if o.dry_run {
        return format!(
            "dry run: {} pending held punch(es) matched: {decided} would be {verb} by {}, {} refused; nothing changed",
            o.matched, o.by, o.refused_count
        );
    }
    let changed = match o.decision {
        Status::Approved => format!(" ({} moved their day)", o.changed),
        _ => String::new(),
    };
    let sent = o
        .notifications
        .as_ref()
        .map(|n| format!("; notifications: {} sent, {}", n.sent, n.pending_words()))
        .unwrap_or_default();
    format!(
        "{verb} {decided}{changed} of {} pending held punch(es) matched, {} refused (by {}, as {} on this machine, {} in MySQL){sent}",
        o.matched,
        o.refused_count,
        o.by,
        o.os_user,
        if o.db_user.is_empty() { "-" } else { &o.db_user }
    )
}

/// Exit 4 when some punches were refused and others decided, 1 when every one matched was
/// refused (nothing changed); a dry run exits 0 (its counts say it all).
fn outcome(o: &BulkDecided) -> Result<()> {
    if o.dry_run || o.refused_count == 0 {
        return Ok(());
    }
    let decided = o.approved + o.rejected;
    let first = o.refused.first().map(|r| r.reason.as_str()).unwrap_or("");
    if decided == 0 {
        return Err(Error::refused(format!(
            "none of the {} matching punch(es) {}: {first}",
            o.matched,
            o.decision.as_str()
        ))
        .into());
    }
    Err(Error::Partial(format!(
        "{} of {} matching punch(es) refused and left pending (first: {first})",
        o.refused_count, o.matched
    ))
    .into())
}
