//! `attendance punch void`: a supervisor (or HR) takes a wrong punch off today's board before
//! settle, acting as the employee the roster maps to the operating-system account running it.

use anyhow::Result;

use crate::cli::Ctx;
use crate::cli::{PunchCommand, VoidArgs};
use crate::ops::checkin::void::{self, Request, Which};

pub(crate) fn run(ctx: &Ctx, c: PunchCommand) -> Result<()> {
    match c {
        PunchCommand::Void(a) => run_void(ctx, a),
    }
}

fn run_void(ctx: &Ctx, a: VoidArgs) -> Result<()> {
    if let Some(by) = &a.by {
        crate::domain::people::roster::check_id("--by employee id", by)?;
    }
    let os_user = crate::ops::lookup::os_user();
    let v = void::void(
        &ctx.cfg,
        &Request {
            employee_id: &a.employee_id,
            punch: match (&a.event, a.at) {
                (Some(id), _) => Which::Event(id),
                (None, Some(t)) => Which::At(t),
                (None, None) => unreachable!("clap requires --at or --event"),
            },
            kind: a.kind,
            reason: &a.reason,
            by: a.by.as_deref(),
            os_user: &os_user,
        },
    )?;
    if let Some(why) = &v.pending_because {
        ctx.say(format!(
            "punch void: the supervisor's notice {} is pending ({why}): `attendance relay` sends it",
            v.event_id
        ));
    }
    if a.output.json {
        return crate::output::json(&v);
    }
    let tz = ctx.cfg.timezone;
    let hhmm = |t: &Option<String>| {
        t.as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
            .map_or("-".to_string(), |t| {
                crate::domain::dates::wall_clock(t.with_timezone(&tz), "%H:%M:%S")
            })
    };
    let at = chrono::DateTime::parse_from_rfc3339(&v.at)
        .map(|t| crate::domain::dates::wall_clock(t.with_timezone(&tz), "%H:%M:%S"))
        .unwrap_or_else(|_| v.at.clone());
    textln!(
        "{} on {}: {} at {at} voided (void {}) by {} (as {} on this machine, {} in MySQL); the day now: in {}, out {}",
        v.employee_id,
        v.work_date,
        if v.kind == crate::domain::punch::Kind::In {
            "check-in"
        } else {
            "check-out"
        },
        v.void_id,
        v.by,
        v.os_user,
        v.db_user,
        hhmm(&v.first_in),
        hhmm(&v.last_out)
    )?;
    Ok(())
}
