//! `attendance dlq list|replay|purge`: the parking queue of notifications that failed too often.

use anyhow::Result;

use super::Ctx;
use crate::cli::{DlqCommand, DlqSelect};
use crate::error::Error;
use crate::ops::relay::dlq::{self, DlqReport, Select};

pub(crate) fn run(ctx: &Ctx, cmd: DlqCommand) -> Result<()> {
    match cmd {
        DlqCommand::List { limit, output } => {
            let found = dlq::list(&ctx.cfg, limit)?;
            // A list is a result: one JSON document (an array), like every other list.
            if output.json {
                return crate::output::json(&found);
            }
            if found.is_empty() {
                ctx.say("the parking queue is empty");
                return Ok(());
            }
            let rows = found
                .into_iter()
                .map(|p| {
                    let body: String = p.body.chars().take(40).collect();
                    vec![
                        p.message_id.unwrap_or_default(),
                        p.department.unwrap_or_default(),
                        p.failures.to_string(),
                        p.reason,
                        p.parked_at.unwrap_or_default(),
                        body,
                    ]
                })
                .collect();
            super::table(
                &["event id", "department", "failures", "why", "parked at", "body"],
                rows,
            )?;
            Ok(())
        }
        DlqCommand::Replay(sel) => {
            let r = dlq::replay(&ctx.cfg, &select(&sel))?;
            report(ctx, &sel, "replayed", &r)
        }
        DlqCommand::Purge { select: sel, yes } => {
            super::confirmed(yes, || match sel.all {
                true => "dlq purge deletes every parked message for good".to_string(),
                false => format!(
                    "dlq purge deletes {} for good",
                    crate::domain::text::plural(sel.event_ids.len(), "parked message")
                ),
            })?;
            let r = dlq::purge(&ctx.cfg, &select(&sel))?;
            report(ctx, &sel, "purged", &r)
        }
    }
}

fn select(sel: &DlqSelect) -> Select {
    if sel.all {
        Select::All
    } else {
        Select::Ids(sel.event_ids.clone())
    }
}

fn report(ctx: &Ctx, sel: &DlqSelect, what: &str, r: &DlqReport) -> Result<()> {
    if sel.output.json {
        crate::outln!(
            "{}",
            serde_json::json!({ what: r.done, "left": r.left, "failed": r.failed.len() })
        )?;
    } else {
        textln!("{} {what}, {} left in the parking queue", r.done, r.left)?;
    }
    for p in &r.failed {
        // A refused event's reason says why (ops/relay/dlq.rs); any other found no queue.
        let why = p
            .reason
            .strip_prefix("not replayed: ")
            .unwrap_or("no department known, or its queue took nothing");
        ctx.say(format!(
            "not replayed: {} ({why})",
            p.message_id.as_deref().unwrap_or("(no message id)")
        ));
    }
    if !sel.all && r.done < sel.event_ids.len() {
        let missing = sel.event_ids.len() - r.done;
        return Err(Error::Partial(format!("{missing} of the given event ids were not {what}")).into());
    }
    Ok(())
}
