//! `attendance report day|absent|employee|dept|runs`: HR's answers from MySQL.

use anyhow::Result;
use chrono::{Datelike, Duration, NaiveDate};

use super::Ctx;
use crate::cli::{DateRange, ReportCommand};
use crate::db::report::{self, Known};
use crate::error::Error;
use crate::report::Format;
use crate::{roster, services};

/// `--date`, or yesterday (the last day settle may have written).
fn day_or_yesterday(ctx: &Ctx, date: Option<NaiveDate>) -> NaiveDate {
    date.unwrap_or_else(|| ctx.today() - Duration::days(1))
}

/// `--from`/`--to`, by default this month up to today.
fn range(ctx: &Ctx, r: &DateRange) -> Result<(NaiveDate, NaiveDate)> {
    let today = ctx.today();
    let from = r.from.unwrap_or(today.with_day(1).unwrap_or(today));
    let to = r.to.unwrap_or(today);
    if to < from {
        return Err(Error::input(format!("--to ({to}) is before --from ({from})")).into());
    }
    Ok((from, to))
}

fn must_know(pool: &mysql::Pool, what: Known, id: &str) -> Result<()> {
    roster::check_id("id", id)?;
    if !report::known(pool, what, id)? {
        let kind = match what {
            Known::Employee => "employee",
            Known::Department => "department",
        };
        return Err(Error::refused(format!("unknown {kind} '{id}'")).into());
    }
    Ok(())
}

pub fn run(ctx: &Ctx, cmd: ReportCommand) -> Result<()> {
    let pool = services::mysql(&ctx.cfg)?;
    let tz = ctx.cfg.timezone;
    let (table, format) = match cmd {
        ReportCommand::Day { date, dept, format } => {
            if let Some(d) = &dept {
                must_know(&pool, Known::Department, d)?;
            }
            let date = day_or_yesterday(ctx, date);
            (report::day(&pool, date, dept.as_deref())?, format)
        }
        ReportCommand::Absent { date, dept, format } => {
            if let Some(d) = &dept {
                must_know(&pool, Known::Department, d)?;
            }
            let date = day_or_yesterday(ctx, date);
            (report::absent(&pool, date, dept.as_deref())?, format)
        }
        ReportCommand::Employee {
            employee_id,
            range: r,
            format,
        } => {
            must_know(&pool, Known::Employee, &employee_id)?;
            let (from, to) = range(ctx, &r)?;
            (report::employee(&pool, tz, &employee_id, from, to)?, format)
        }
        ReportCommand::Dept {
            department_id,
            range: r,
            format,
        } => {
            must_know(&pool, Known::Department, &department_id)?;
            let (from, to) = range(ctx, &r)?;
            (report::dept(&pool, &department_id, from, to)?, format)
        }
        ReportCommand::Runs {
            date,
            limit,
            failures,
            format,
        } => {
            let t = if failures {
                report::failures(&pool, date, limit)?
            } else {
                report::runs(&pool, tz, date, limit)?
            };
            (t, format)
        }
    };
    let format = format.get();
    let text = table.render(format)?;
    // CSV ends its last record with a newline already.
    if text.ends_with('\n') {
        crate::output::data(&text)?;
    } else {
        crate::outln!("{text}")?;
    }
    if table.rows.is_empty() && format == Format::Table {
        ctx.out.status("no rows (has the day been settled?)");
    }
    Ok(())
}
