//! `attendance shifts import|assign|list|which`: work patterns (docs/shifts.md).

use anyhow::Result;

use crate::cli::Ctx;
use crate::cli::{ShiftsCommand, ShiftsFile};
use crate::domain::formats::shift_files;
use crate::domain::text::plural;
use crate::ops;
use crate::ops::people::shifts::Report;
use crate::ops::people::Difference;

pub(crate) fn run(ctx: &Ctx, cmd: ShiftsCommand) -> Result<()> {
    match cmd {
        ShiftsCommand::Import {
            file:
                ShiftsFile {
                    file,
                    errors,
                    dry_run,
                    output,
                },
            resettle,
        } => {
            let shifts =
                shift_files::read_shifts(crate::cli::input(&file)?, &ctx.cfg.policy.work_days)?.map_err(|bad| {
                    crate::cli::refused_file(errors.as_deref(), &bad, shift_files::rejection("shifts", &bad))
                })?;
            let r = ops::people::shifts::import(&ctx.cfg, &shifts, dry_run, resettle)?;
            if output.json {
                return crate::output::json(&r);
            }
            for c in r.rows.iter().filter(|c| c.change != Difference::Unchanged) {
                let s = &c.row;
                textln!(
                    "{} ({}): {}-{}{} on {}, grace {}/{} min, break {} min{}",
                    s.name,
                    c.change,
                    s.start,
                    s.end,
                    if s.crosses_midnight { " (next day)" } else { "" },
                    s.work_days,
                    s.late_grace_minutes,
                    s.early_grace_minutes,
                    s.break_minutes,
                    if s.part_time { ", part time" } else { "" }
                )?;
            }
            say_counts(ctx, &r, "shift");
        }
        ShiftsCommand::Assign(ShiftsFile {
            file,
            errors,
            dry_run,
            output,
        }) => {
            // A shift is known if MySQL has it (or it is `default`, the policy's): each row is
            // checked against the names as they are now.
            let names: Vec<String> = ops::people::shifts::list(&ctx.cfg)?
                .shifts
                .into_iter()
                .map(|s| s.name)
                .collect();
            let rows = shift_files::read_assignments(crate::cli::input(&file)?, |s| names.iter().any(|n| n == s))?
                .map_err(|bad| {
                    crate::cli::refused_file(errors.as_deref(), &bad, shift_files::rejection("assignments", &bad))
                })?;
            let r = ops::people::shifts::assign(&ctx.cfg, &rows, dry_run)?;
            if output.json {
                return crate::output::json(&r);
            }
            for c in r.rows.iter().filter(|c| c.change != Difference::Unchanged) {
                let a = &c.row;
                textln!(
                    "{} {} from {}: {} ({})",
                    a.scope.as_str(),
                    a.target,
                    a.from,
                    a.shift,
                    c.change
                )?;
            }
            say_counts(ctx, &r, "assignment");
        }
        ShiftsCommand::List { output } => {
            let l = ops::people::shifts::list(&ctx.cfg)?;
            if output.json {
                return crate::output::json(&l);
            }
            let rows = l
                .shifts
                .iter()
                .map(|s| {
                    vec![
                        s.name.clone(),
                        s.start.clone(),
                        s.end.clone(),
                        if s.crosses_midnight { "yes".into() } else { "no".into() },
                        format!("{}/{}", s.late_grace_minutes, s.early_grace_minutes),
                        s.work_days.clone(),
                        s.break_minutes.to_string(),
                        if s.part_time { "yes".into() } else { "no".into() },
                    ]
                })
                .collect();
            crate::cli::table(
                &[
                    "shift",
                    "start",
                    "end",
                    "crosses midnight",
                    "grace late/early",
                    "work days",
                    "break",
                    "part time",
                ],
                rows,
            )?;
            if !l.assignments.is_empty() {
                let rows = l
                    .assignments
                    .iter()
                    .map(|a| {
                        vec![
                            a.scope.as_str().into(),
                            a.target.clone(),
                            a.from.to_string(),
                            a.shift.clone(),
                        ]
                    })
                    .collect();
                crate::cli::table(&["scope", "target", "from", "shift"], rows)?;
            }
        }
        ShiftsCommand::Which {
            employee_id,
            date,
            output,
        } => {
            let w = ops::people::shifts::which(&ctx.cfg, &employee_id, ctx.date_or_today(date))?;
            if output.json {
                return crate::output::json(&w);
            }
            textln!(
                "{} ({}) on {}: shift {}, {} to {}{}",
                w.employee_id,
                w.department_id,
                w.work_date,
                w.shift,
                w.starts_at,
                w.ends_at,
                if w.work_day { "" } else { " (not a work day)" }
            )?;
            textln!("why: {}", w.source.words())?;
        }
    }
    Ok(())
}

/// The counts, then what the change re-settled (or, in a dry run, would).
fn say_counts<T: serde::Serialize>(ctx: &Ctx, r: &Report<T>, what: &str) {
    let total = r.new + r.changed + r.unchanged;
    let verb = if r.dry_run { "dry run: would import" } else { "imported" };
    let tail = if r.dry_run { "; nothing written" } else { "" };
    ctx.say(format!(
        "{verb} {} ({} new, {} changed, {} unchanged){tail}",
        plural(total, what),
        r.new,
        r.changed,
        r.unchanged
    ));
    super::resettled::say(ctx, &r.resettled, None, r.dry_run);
}
