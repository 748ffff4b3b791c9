//! `attendance queues declare|purge|delete`: the namespace's department queues, all at once
//! (purge and delete only with `--yes`).

use anyhow::Result;

use super::Ctx;
use crate::cli::QueuesCommand;
use crate::ops::relay::queues::{self, Applied, Declared};

/// Tell the operator how declaring the queues ahead went: the count with `-v`, a one-line
/// warning when the broker was away (check-ins then declare their queue as they come).
pub(crate) fn report_declared(ctx: &Ctx, command: &str, declared: &Result<Declared, String>) {
    match declared {
        Ok(Declared {
            queues: 0,
            looked_up: 0,
            ..
        }) => {}
        Ok(d) if d.looked_up > 0 => ctx.out.verbose(format!(
            "{command}: {} queues looked up on the broker, {} missing ones declared ({:.2}s)",
            d.looked_up, d.queues, d.seconds
        )),
        Ok(d) => ctx.out.verbose(format!(
            "{command}: {} department queues declared ({:.2}s)",
            d.queues, d.seconds
        )),
        Err(e) => ctx.say(format!(
            "{command}: warning: the department queues were not declared ({e}); check-ins will declare them \
             as they come; run `attendance queues declare` once the broker answers"
        )),
    }
}

/// How the limits went, in `--json`: set by the program, or the command to run.
fn limits_json(applied: &Applied) -> serde_json::Value {
    match applied {
        Applied::Managed => serde_json::json!({ "applied": true }),
        Applied::ByHand(line) => serde_json::json!({ "applied": false, "command": line }),
        Applied::Unbounded => serde_json::json!({ "applied": false }),
    }
}

pub(crate) fn run(ctx: &Ctx, cmd: QueuesCommand) -> Result<()> {
    match cmd {
        QueuesCommand::Declare { output } => {
            let (n, applied) = queues::declare(&ctx.cfg)?;
            if output.json {
                crate::output::json(&serde_json::json!({ "declared": n, "limits": limits_json(&applied) }))?;
            } else {
                textln!("{} declared", crate::domain::text::plural(n, "department queue"))?;
            }
            if let Applied::ByHand(line) = applied {
                ctx.say(format!(
                    "queues declare: no amqp.management_url to set the queues' policy (limits, leaders spread) with; run: {line} (then `rabbitmq-queues rebalance quorum` for the queues declared before it)"
                ));
            }
        }
        QueuesCommand::Purge { yes, output } => {
            super::confirmed(yes, || {
                format!(
                    "queues purge throws away every notification waiting in namespace '{}' (department, retry and parking queues)",
                    ctx.cfg.namespace
                )
            })?;
            let r = queues::purge(&ctx.cfg)?;
            if output.json {
                crate::output::json(&r)?;
            } else {
                textln!(
                    "{} purged from {}",
                    crate::domain::text::plural(r.messages as usize, "message"),
                    crate::domain::text::plural(r.queues, "queue")
                )?;
            }
        }
        QueuesCommand::Delete { yes, output } => {
            super::confirmed(yes, || {
                format!(
                    "queues delete removes every queue and exchange of namespace '{}', the journal included",
                    ctx.cfg.namespace
                )
            })?;
            let (n, applied) = queues::delete(&ctx.cfg)?;
            if output.json {
                crate::output::json(&serde_json::json!({ "deleted": n }))?;
            } else {
                textln!("{n} queues and the namespace's exchanges deleted")?;
            }
            if let Applied::ByHand(line) = applied {
                ctx.say(format!("queues delete: to remove the queues' limits too, run: {line}"));
            }
        }
    }
    Ok(())
}
