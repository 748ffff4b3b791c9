//! `attendance calendar set|import|list`: holidays and extra work days.

use std::fs::File;
use std::io::BufReader;

use anyhow::Result;
use chrono::Duration;

use super::Ctx;
use crate::calendar::{self, DayKind, Entry};
use crate::cli::CalendarCommand;
use crate::error::Error;
use crate::output::print_table;
use crate::{db, services};

pub fn run(ctx: &Ctx, cmd: CalendarCommand) -> Result<()> {
    match cmd {
        CalendarCommand::Set { date, kind, note } => {
            let kind = DayKind::parse(&kind).map_err(Error::input)?;
            calendar::check_note(&note).map_err(Error::input)?;
            let pool = services::mysql(&ctx.cfg)?;
            db::calendar::upsert(&pool, &[Entry { date, kind, note }])?;
            ctx.out.status(format!("{date} is now a {}", kind.as_str()));
        }
        CalendarCommand::Import { file } => {
            let f = File::open(&file).map_err(|e| Error::input(format!("cannot open {}: {e}", file.display())))?;
            // Validate the whole file before touching MySQL.
            let entries = calendar::parse_csv(BufReader::new(f))?;
            let pool = services::mysql(&ctx.cfg)?;
            db::calendar::upsert(&pool, &entries)?;
            ctx.out.status(format!("imported {} calendar day(s)", entries.len()));
        }
        CalendarCommand::List { from, to, output } => {
            let from = ctx.date_or_today(from);
            let to = to.unwrap_or(from + Duration::days(30));
            if to < from || (to - from).num_days() > 3_660 {
                return Err(Error::input("--to must be on or after --from, at most ten years later").into());
            }
            let pool = services::mysql(&ctx.cfg)?;
            let overrides = db::calendar::overrides(&mut pool.get_conn()?, from, to)?;
            let days: Vec<serde_json::Value> = from
                .iter_days()
                .take_while(|d| *d <= to)
                .map(|d| {
                    let entry = overrides.get(&d);
                    let workday = calendar::is_workday(&ctx.cfg.policy, &overrides, d);
                    serde_json::json!({
                        "date": d.to_string(),
                        "weekday": d.format("%a").to_string(),
                        "kind": if workday { "workday" } else { "holiday" },
                        "source": if entry.is_some() { "calendar" } else { "policy" },
                        "note": entry.map_or("", |e| e.note.as_str()),
                    })
                })
                .collect();
            if output.json {
                crate::outln!("{}", serde_json::Value::Array(days))?;
            } else {
                let cell = |v: &serde_json::Value, k: &str| v[k].as_str().unwrap_or_default().to_string();
                let rows = days
                    .iter()
                    .map(|v| {
                        ["date", "weekday", "kind", "source", "note"]
                            .iter()
                            .map(|k| cell(v, k))
                            .collect()
                    })
                    .collect();
                print_table(&["date", "weekday", "kind", "source", "note"], rows)?;
            }
        }
    }
    Ok(())
}
