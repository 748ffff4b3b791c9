//! `attendance queues declare|purge`: the namespace's department queues, all at once.

use anyhow::Result;

use super::Ctx;
use crate::cli::QueuesCommand;
use crate::ops::queues;

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
