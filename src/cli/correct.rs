//! `attendance correct`: a supervisor (or HR) fixes a forgotten punch on a settled day, acting
//! as the employee the roster maps to the operating-system account running it.

use anyhow::Result;

use super::Ctx;
use crate::cli::CorrectArgs;
use crate::domain::people::roster;
use crate::ops::settle::correct::{self, parse_time, Request};

pub(crate) fn run(ctx: &Ctx, a: CorrectArgs) -> Result<()> {
    roster::check_id("employee id", &a.employee_id)?;
    if let Some(by) = &a.by {
        roster::check_id("--by employee id", by)?;
    }
    let date = a.date;
    let tz = ctx.cfg.timezone;
    let first_in = a.check_in.map(|t| parse_time(tz, date, t)).transpose()?;
    let last_out = a.check_out.map(|t| parse_time(tz, date, t)).transpose()?;
    let os_user = crate::ops::lookup::os_user();
    let o = correct::correct(
        &ctx.cfg,
        &Request {
            employee_id: &a.employee_id,
            date,
            first_in,
            last_out,
            clear_in: a.clear_in,
            clear_out: a.clear_out,
            status: a.status,
            leave_kind: a.leave_kind.as_deref(),
            reason: &a.reason,
            by: a.by.as_deref(),
            os_user: &os_user,
        },
    )?;
    if a.output.json {
        crate::outln!("{}", serde_json::to_string(&o)?)?;
        return Ok(());
    }
    let hhmm = |t: Option<chrono::NaiveDateTime>| {
        t.map_or("-".to_string(), |t| {
            crate::domain::dates::wall_clock_utc(tz, t, "%H:%M")
        })
    };
    textln!(
        "{} on {}: {} (in {}, out {}) -> {} (in {}, out {}), correction {} by {} (as {} on this machine, {} in MySQL)",
        a.employee_id,
        date,
        o.before.status,
        hhmm(o.before.first_in),
        hhmm(o.before.last_out),
        o.after.status,
        hhmm(o.after.first_in),
        hhmm(o.after.last_out),
        o.correction_id,
        o.by,
        o.os_user,
        o.db_user
    )?;
    Ok(())
}
