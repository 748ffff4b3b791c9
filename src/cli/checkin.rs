//! `attendance checkin`: record one punch on the board and queue its event for the supervisor
//! (`--file`: many punches, see `checkin_bulk`).

use anyhow::Result;

use super::Ctx;
use crate::cli::CheckinArgs;
use crate::domain::event::Kind;
use crate::error::Error;
use crate::ops::checkin::{self, Checkin, Request};

pub(crate) fn run(ctx: &Ctx, args: CheckinArgs) -> Result<()> {
    if let Some(file) = args.file.as_deref() {
        return super::checkin_bulk::run(ctx, file, args.errors.as_deref(), args.output.json);
    }
    let employee_id = args
        .employee_id
        .as_deref()
        .ok_or_else(|| Error::input("an employee id or --file is needed"))?;
    let c = checkin::punch(
        &ctx.cfg,
        &Request {
            employee_id,
            kind: args.kind,
            at: args.at,
            source: &args.source,
        },
    )?;
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

/// `E000123 Priya Tanaka checked in at 08:55:02 on 2026-11-30 (late by 5 min)`.
fn line(c: &Checkin) -> String {
    let what = match c.kind {
        Kind::In => "checked in",
        Kind::Out => "checked out",
    };
    let note = match (c.late_minutes, c.early_minutes, c.changed) {
        (_, _, false) => " (repeat: record unchanged)".to_string(),
        (l, _, true) if l > 0 => format!(" (late by {l} min)"),
        (_, e, true) if e > 0 => format!(" (early by {e} min)"),
        _ => String::new(),
    };
    let pending = if c.notification == "pending" {
        "; supervisor notification pending"
    } else {
        ""
    };
    let unreplicated = if c.replication == "pending" {
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
