//! `attendance queues declare|purge`: the namespace's department queues, all at once.

use anyhow::Result;

use super::Ctx;
use crate::cli::QueuesCommand;
use crate::ops::queues;

/// Declare the departments' queues ahead of their first check-in, so that no check-in (and no
/// first bulk of a fresh broker) waits on declarations. The broker being away does not fail
/// the command that asks (its own work is done, and check-ins declare what they publish to):
/// a warning says so, and what to run once the broker is back.
pub(crate) fn declare_ahead(ctx: &Ctx, command: &str, departments: &[String]) {
    if departments.is_empty() {
        return;
    }
    let started = std::time::Instant::now();
    match queues::declare_these(&ctx.cfg, departments) {
        Ok(n) => ctx.out.verbose(format!(
            "{command}: {n} department queues declared ({:.2}s)",
            started.elapsed().as_secs_f64()
        )),
        Err(e) => ctx.out.status(format!(
            "{command}: warning: the department queues were not declared ({}); check-ins will declare them \
             as they come; run `attendance queues declare` once the broker answers",
            crate::error::one_line(&e)
        )),
    }
}

pub fn run(ctx: &Ctx, cmd: QueuesCommand) -> Result<()> {
    match cmd {
        QueuesCommand::Declare { output } => {
            let n = queues::declare(&ctx.cfg)?;
            if output.json {
                crate::output::json(&serde_json::json!({ "declared": n }))?;
            } else {
                crate::outln!("{n} department queues declared")?;
            }
        }
        QueuesCommand::Purge { output } => {
            let r = queues::purge(&ctx.cfg)?;
            if output.json {
                crate::output::json(&r)?;
            } else {
                crate::outln!("{} messages purged from {} queues", r.messages, r.queues)?;
            }
        }
    }
    Ok(())
}
