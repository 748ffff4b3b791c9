//! `attendance checkin`: record one punch on the board and queue its event for the supervisor
//! (`--file`: many punches, see `bulk`).

use anyhow::Result;

use crate::cli::CheckinArgs;
use crate::cli::Ctx;
use crate::domain::dates::minutes_text;
use crate::domain::punch::Kind;
use crate::error::Error;
use crate::ops::checkin::record::{Checkin, Notification, Replication};
use crate::ops::checkin::review::{held_why, HeldPunch};
use crate::ops::checkin::single::{self, Punched, Request};

pub(crate) fn run(ctx: &Ctx, args: CheckinArgs) -> Result<()> {
    if let Some(file) = args.file.as_deref() {
        return super::bulk::run(ctx, file, args.errors.as_deref(), args.output.json);
    }
    let employee_id = args
        .employee_id
        .as_deref()
        .ok_or_else(|| Error::input("an employee id or --file is needed"))?;
    let punched = single::punch(
        &ctx.cfg,
        &Request {
            employee_id,
            kind: args.kind,
            at: args.at,
            source: &args.source,
        },
    )?;
    let c = match punched {
        Punched::Applied(c) => c,
        Punched::Held(h) => return held(args.output.json, h.window_minutes, &h),
    };
    if let Some(why) = &c.unreplicated_because {
        ctx.say(format!(
            "punch recorded but not yet replicated ({why}); punch again to be sure (a repeat changes nothing)"
        ));
    }
    if let Some(why) = &c.pending_because {
        ctx.say(format!("notification pending ({why}); `attendance relay` will send it"));
    }
    if args.output.json {
        return crate::output::json(&c);
    }
    textln!("{}", line(&c))?;
    Ok(())
}

/// A punch held for review: said on stdout (or `--json`), then exit 7 with one line.
fn held(json: bool, window: u32, h: &HeldPunch) -> Result<()> {
    if json {
        crate::output::json(h)?;
    } else {
        textln!(
            "{} {} {} at {} on {}: held for review (review {}): back-dated past policy.replay_window_minutes",
            h.employee_id,
            h.employee_name,
            match h.kind {
                Kind::In => "check-in",
                Kind::Out => "check-out",
            },
            crate::domain::dates::wall_clock(h.local_at, "%H:%M:%S"),
            h.work_date,
            h.review_id
        )?;
    }
    Err(Error::Held(format!(
        "punch held for review (review {}): {} min old, {}; applied when the employee's \
         supervisor or HR runs `attendance review approve {}`",
        h.review_id,
        h.minutes_old,
        held_why(window, h.key_id.as_deref()),
        h.review_id
    ))
    .into())
}

/// `E000123 Priya Tanaka checked in at 08:55:02 on 2026-11-30 (late by 5 min)`.
fn line(c: &Checkin) -> String {
    let what = match c.kind {
        Kind::In => "checked in",
        Kind::Out => "checked out",
    };
    let note = match (c.late_minutes, c.early_minutes, c.changed) {
        (_, _, false) => " (repeat: record unchanged)".to_string(),
        (l, _, true) if l > 0 => format!(" (late by {})", minutes_text(l)),
        (_, e, true) if e > 0 => format!(" (early by {})", minutes_text(e)),
        _ => String::new(),
    };
    let pending = if c.notification == Notification::Pending {
        "; supervisor notification pending"
    } else {
        ""
    };
    let unreplicated = if c.replication == Replication::Pending {
        "; not yet replicated: punch again"
    } else {
        ""
    };
    format!(
        "{} {} {what} at {} on {}{note}{pending}{unreplicated}",
        c.employee_id,
        c.employee_name,
        crate::domain::dates::wall_clock(c.local_at, "%H:%M:%S"),
        c.work_date
    )
}
