//! `attendance calendar set|import|list`: holidays and extra work days.

use anyhow::Result;
use chrono::Duration;

use crate::cli::CalendarCommand;
use crate::cli::Ctx;
use crate::domain::day::workdays::{self, Entry};
use crate::domain::text::plural;
use crate::ops;
use crate::ops::people::Difference;

pub(crate) fn run(ctx: &Ctx, cmd: CalendarCommand) -> Result<()> {
    match cmd {
        CalendarCommand::Set {
            date,
            kind,
            note,
            output,
        } => {
            let resettled = ops::people::calendar::set(&ctx.cfg, &[Entry { date, kind, note }])?;
            if output.json {
                let v = serde_json::json!({ "date": date, "kind": kind.as_str(), "resettled": resettled });
                return crate::output::json(&v);
            }
            ctx.say(format!("{date} is now a {}", kind.as_str()));
            super::resettled::say(ctx, &resettled, None, false);
        }
        CalendarCommand::Unset { date, output } => {
            let done = ops::people::calendar::unset(&ctx.cfg, date)?;
            if output.json {
                let (was, resettled) = done.map_or((None, None), |(k, r)| (Some(k.as_str()), Some(r)));
                let v = serde_json::json!({ "date": date, "was": was, "resettled": resettled });
                return crate::output::json(&v);
            }
            match done {
                Some((was, resettled)) => {
                    ctx.say(format!(
                        "{date} is no longer a {}: the policy's week decides it",
                        was.as_str()
                    ));
                    super::resettled::say(ctx, &resettled, None, false);
                }
                None => ctx.say(format!("{date} had no calendar entry: nothing changed")),
            }
        }
        CalendarCommand::Import {
            file,
            errors,
            dry_run,
            output,
        } => {
            // Validate the whole file before touching MySQL.
            let entries = workdays::read_csv(crate::cli::input(&file)?)?
                .map_err(|bad| crate::cli::refused_file(errors.as_deref(), &bad, workdays::rejection(&bad)))?;
            if dry_run {
                return dry_run_import(ctx, &entries, output.json);
            }
            let resettled = ops::people::calendar::set(&ctx.cfg, &entries)?;
            if output.json {
                crate::output::json(
                    &serde_json::json!({ "dry_run": false, "imported": entries.len(), "resettled": resettled }),
                )?;
            }
            ctx.say(format!("imported {}", plural(entries.len(), "calendar day")));
            super::resettled::say(ctx, &resettled, None, false);
        }
        CalendarCommand::List { from, to, output } => {
            let from = ctx.date_or_today(from);
            let to = to.unwrap_or(from + Duration::days(30));
            let days = ops::people::calendar::list(&ctx.cfg, from, to)?;
            if output.json {
                return crate::output::json(&days);
            }
            let rows = days
                .into_iter()
                .map(|d| {
                    vec![
                        d.date.to_string(),
                        d.weekday,
                        d.kind.to_string(),
                        d.source.to_string(),
                        d.note,
                    ]
                })
                .collect();
            crate::cli::table(&["date", "weekday", "kind", "source", "note"], rows)?;
        }
    }
    Ok(())
}

/// `calendar import --dry-run`: each day the file would add or change, then the counts.
fn dry_run_import(ctx: &Ctx, entries: &[Entry], json: bool) -> Result<()> {
    let planned = ops::people::calendar::plan(&ctx.cfg, entries)?;
    let count = |c: Difference| planned.iter().filter(|p| p.change == c).count();
    let (new, changed, unchanged) = (
        count(Difference::New),
        count(Difference::Changed),
        count(Difference::Unchanged),
    );
    if json {
        return crate::output::json(&serde_json::json!({
            "dry_run": true, "new": new, "changed": changed, "unchanged": unchanged, "days": planned,
        }));
    }
    for p in planned.iter().filter(|p| p.change != Difference::Unchanged) {
        match p.was {
            Some(was) => textln!("{}  {} -> {}  {}", p.date, was.as_str(), p.kind.as_str(), p.note)?,
            None => textln!("{}  {} (new)  {}", p.date, p.kind.as_str(), p.note)?,
        }
    }
    ctx.say(format!(
        "dry run: would import {} ({new} new, {changed} changed, {unchanged} unchanged); nothing written",
        plural(entries.len(), "calendar day")
    ));
    Ok(())
}
