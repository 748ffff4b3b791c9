//! `attendance calendar set|import|list`: holidays and extra work days.

use anyhow::Result;
use chrono::Duration;

use super::Ctx;
use crate::cli::CalendarCommand;
use crate::domain::workdays::{self, Entry};
use crate::ops;

pub(crate) fn run(ctx: &Ctx, cmd: CalendarCommand) -> Result<()> {
    match cmd {
        CalendarCommand::Set { date, kind, note } => {
            ops::calendar::set(&ctx.cfg, &[Entry { date, kind, note }])?;
            ctx.say(format!("{date} is now a {}", kind.as_str()));
        }
        CalendarCommand::Import { file, errors } => {
            // Validate the whole file before touching MySQL.
            let entries = workdays::read_csv(super::input(&file)?)?
                .map_err(|bad| super::refused_file(errors.as_deref(), &bad, workdays::rejection(&bad)))?;
            ops::calendar::set(&ctx.cfg, &entries)?;
            ctx.say(format!("imported {} calendar day(s)", entries.len()));
        }
        CalendarCommand::List { from, to, output } => {
            let from = ctx.date_or_today(from);
            let to = to.unwrap_or(from + Duration::days(30));
            let days = ops::calendar::list(&ctx.cfg, from, to)?;
            if output.json {
                return crate::output::json(&days);
            }
            let rows = days
                .into_iter()
                .map(|d| vec![d.date.to_string(), d.weekday, d.kind.into(), d.source.into(), d.note])
                .collect();
            super::table(&["date", "weekday", "kind", "source", "note"], rows)?;
        }
    }
    Ok(())
}
