//! `attendance leave add|list|cancel`: approved leave.

use anyhow::Result;

use crate::cli::Ctx;
use crate::cli::LeaveCommand;
use crate::ops;
use crate::ops::people::leave::{Leave, NewLeave};

pub(crate) fn run(ctx: &Ctx, cmd: LeaveCommand) -> Result<()> {
    match cmd {
        LeaveCommand::Add {
            employee_id,
            from,
            to,
            kind,
            half,
            note,
            output,
        } => {
            let l = NewLeave {
                employee_id: &employee_id,
                from,
                to,
                kind: &kind,
                note: &note,
                half: half.as_deref(),
            };
            let added = ops::people::leave::add(&ctx.cfg, &l)?;
            let (id, repeat) = (added.id, added.repeat);
            if output.json {
                let v = serde_json::json!({ "leave_id": id, "employee_id": employee_id, "from": from, "to": to, "kind": kind, "half": half, "repeat": repeat, "resettled": added.resettled });
                return crate::output::json(&v);
            }
            let again = if repeat { " (already recorded)" } else { "" };
            let halves = half.as_deref().map_or(String::new(), |h| format!(", {h}s only"));
            textln!("leave {id}: {employee_id} {kind} from {from} to {to}{halves}{again}")?;
            super::resettled::say(ctx, &added.resettled, Some(&employee_id), false);
        }
        LeaveCommand::List {
            employee,
            from,
            to,
            output,
        } => {
            let leaves = ops::people::leave::list(&ctx.cfg, employee.as_deref(), from, to)?;
            if output.json {
                return crate::output::json(&leaves);
            }
            crate::cli::table(
                &["id", "employee", "from", "to", "kind", "status", "note", "recorded"],
                leaves.iter().map(|l| row(ctx, l)).collect(),
            )?;
        }
        LeaveCommand::Cancel { id, output } => {
            let (cancelled, employee_id, resettled) = ops::people::leave::cancel(&ctx.cfg, id)?;
            if output.json {
                let v = serde_json::json!({ "leave_id": id, "employee_id": employee_id, "cancelled": cancelled, "resettled": resettled });
                return crate::output::json(&v);
            }
            if cancelled {
                ctx.say(format!("leave {id} cancelled"));
            } else {
                ctx.say(format!("leave {id} was already cancelled"));
            }
            super::resettled::say(ctx, &resettled, Some(&employee_id), false);
        }
    }
    Ok(())
}

fn row(ctx: &Ctx, l: &Leave) -> Vec<String> {
    let created = l.created_at.and_utc().with_timezone(&ctx.cfg.timezone);
    vec![
        l.id.to_string(),
        l.employee_id.clone(),
        l.from.to_string(),
        l.to.to_string(),
        l.kind.clone(),
        l.status.clone(),
        l.note.clone(),
        created.format("%Y-%m-%d %H:%M").to_string(),
    ]
}
