//! `attendance period close|reopen`: HR closes a pay period and reopens it with a reason.

use anyhow::Result;

use crate::cli::{Ctx, PeriodCommand};
use crate::ops::people::periods;

pub(crate) fn run(ctx: &Ctx, cmd: PeriodCommand) -> Result<()> {
    let (month, close, reason, output) = match cmd {
        PeriodCommand::Close { month, output } => (month, true, String::new(), output),
        PeriodCommand::Reopen { month, reason, output } => (month, false, reason, output),
    };
    let done = periods::set(&ctx.cfg, month, close, &reason)?;
    if output.json {
        return crate::output::json(&done);
    }
    let state = if close { "closed" } else { "open" };
    if done.changed {
        ctx.say(format!("pay period {} is now {state} (by {})", done.period, done.by));
    } else {
        ctx.say(format!(
            "pay period {} was already {state}: nothing changed",
            done.period
        ));
    }
    Ok(())
}
