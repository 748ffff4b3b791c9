//! `attendance leave add|list|cancel`: approved leave.

use anyhow::Result;

use super::Ctx;
use crate::cli::LeaveCommand;
use crate::db::leave::{self, NewLeave};
use crate::error::Error;
use crate::output::print_table;
use crate::{calendar, db, roster, services};

pub fn run(ctx: &Ctx, cmd: LeaveCommand) -> Result<()> {
    match cmd {
        LeaveCommand::Add {
            employee_id,
            from,
            to,
            kind,
            note,
            output,
        } => {
            roster::check_id("employee id", &employee_id)?;
            if to < from {
                return Err(Error::input(format!("leave ends ({to}) before it starts ({from})")).into());
            }
            calendar::check_note(&note).map_err(Error::input)?;
            let pool = services::mysql(&ctx.cfg)?;
            if db::roster::employee(&pool, &employee_id)?.is_none() {
                return Err(Error::refused(format!("unknown employee '{employee_id}'")).into());
            }
            let overlapping = leave::overlapping(&pool, &employee_id, from, to)?;
            // The very same leave again is a repeat (scripts rerun), not a conflict.
            let same = overlapping
                .iter()
                .find(|l| l.from == from && l.to == to && l.kind == kind);
            if let (Some(l), None) = (overlapping.first(), same) {
                return Err(Error::refused(format!(
                    "{employee_id} already has leave {} from {} to {} ({}): cancel it first",
                    l.id, l.from, l.to, l.kind
                ))
                .into());
            }
            let (id, repeat) = match same {
                Some(l) => (l.id, true),
                None => (
                    leave::add(
                        &pool,
                        &NewLeave {
                            employee_id: &employee_id,
                            from,
                            to,
                            kind: &kind,
                            note: &note,
                        },
                    )?,
                    false,
                ),
            };
            if output.json {
                crate::outln!(
                    "{}",
                    serde_json::json!({ "id": id, "employee_id": employee_id, "from": from, "to": to, "kind": kind, "repeat": repeat })
                )?;
            } else if repeat {
                crate::outln!("leave {id}: {employee_id} {kind} from {from} to {to} (already recorded)")?;
            } else {
                crate::outln!("leave {id}: {employee_id} {kind} from {from} to {to}")?;
            }
        }
        LeaveCommand::List {
            employee,
            from,
            to,
            output,
        } => {
            let pool = services::mysql(&ctx.cfg)?;
            let leaves = leave::list(&pool, employee.as_deref(), from, to, false)?;
            if output.json {
                crate::outln!("{}", serde_json::to_string(&leaves)?)?;
            } else {
                let rows = leaves
                    .iter()
                    .map(|l| {
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
                    })
                    .collect();
                print_table(
                    &["id", "employee", "from", "to", "kind", "status", "note", "recorded"],
                    rows,
                )?;
            }
        }
        LeaveCommand::Cancel { id } => {
            let pool = services::mysql(&ctx.cfg)?;
            match leave::cancel(&pool, id)? {
                None => return Err(Error::refused(format!("no leave with id {id}")).into()),
                Some(false) => ctx.out.status(format!("leave {id} was already cancelled")),
                Some(true) => ctx.out.status(format!("leave {id} cancelled")),
            }
        }
    }
    Ok(())
}
