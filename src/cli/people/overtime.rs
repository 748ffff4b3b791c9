//! `attendance overtime approve|reject`: the supervisor or HR decides on a day's overtime where
//! the rulebook asks for approval, acting as the employee the roster maps the account to.

use anyhow::Result;

use crate::cli::{Ctx, OvertimeCommand};
use crate::domain::day::overtime::Decision;
use crate::domain::people::roster;
use crate::ops::people::overtime::{self, Request, Whose};

pub(crate) fn run(ctx: &Ctx, cmd: OvertimeCommand) -> Result<()> {
    let (a, decision) = match cmd {
        OvertimeCommand::Approve(a) => (a, Decision::Approved),
        OvertimeCommand::Reject(a) => (a, Decision::Rejected),
    };
    let whose = match (&a.employee, &a.dept) {
        (Some(e), _) => {
            roster::check_id("employee id", e)?;
            Whose::Employee(e)
        }
        (None, Some(d)) => {
            roster::check_id("department id", d)?;
            Whose::Department(d)
        }
        (None, None) => unreachable!("clap requires --employee or --dept"),
    };
    let os_user = crate::ops::lookup::os_user();
    let done = overtime::decide(
        &ctx.cfg,
        &Request {
            whose,
            date: a.date,
            decision,
            reason: a.reason.as_deref(),
            os_user: &os_user,
        },
    )?;
    if a.output.json {
        return crate::output::json(&done);
    }
    let who: Vec<&str> = done.decisions.iter().map(|r| r.employee_id.as_str()).collect();
    ctx.say(format!(
        "overtime of {} on {} {} by {} (as {} on this machine, {} in MySQL)",
        who.join(", "),
        done.work_date,
        done.decision,
        done.by,
        done.os_user,
        done.db_user
    ));
    Ok(())
}
