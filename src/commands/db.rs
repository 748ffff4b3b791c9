//! `attendance db partition --from YYYY-MM --months N`: monthly partitions of `attendance`.

use anyhow::Result;
use chrono::NaiveDate;

use super::Ctx;
use crate::cli::DbCommand;
use crate::db::partition;
use crate::error::Error;
use crate::{output, services};

/// A YYYY-MM month, as its first day.
fn parse_month(s: &str) -> Result<NaiveDate, Error> {
    NaiveDate::parse_from_str(&format!("{s}-01"), "%Y-%m-%d")
        .map_err(|_| Error::input(format!("invalid month '{s}': expected YYYY-MM")))
}

pub fn run(ctx: &Ctx, cmd: DbCommand) -> Result<()> {
    let DbCommand::Partition { from, months, output } = cmd;
    let from = parse_month(&from)?;
    if !(1..=240).contains(&months) {
        return Err(Error::input(format!("--months {months}: expected 1 to 240")).into());
    }
    let pool = services::mysql(&ctx.cfg)?;
    let mut conn = pool.get_conn().map_err(|e| services::mysql_error(&ctx.cfg, e))?;
    let parts = partition::partition(&mut conn, from, months)?;
    if output.json {
        return output::json(&parts);
    }
    let rows = parts
        .iter()
        .map(|p| {
            let bound = p.less_than.map_or("MAXVALUE".into(), |d| d.to_string());
            vec![p.name.clone(), bound, p.rows.to_string()]
        })
        .collect();
    output::print_table(&["partition", "days before", "rows (estimate)"], rows)?;
    Ok(())
}
