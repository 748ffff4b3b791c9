//! `attendance report day|absent|employee|dept|corrections|runs`: HR's answers from MySQL.

use anyhow::Result;
use chrono::{Datelike, Duration, NaiveDate};

use super::{parse_date, Ctx};
use crate::cli::{DateRange, ReportCommand};
use crate::db::report::{self, Known};
use crate::error::Error;
use crate::{roster, services};

/// `--date`, or yesterday (the last day settle may have written).
fn day_or_yesterday(ctx: &Ctx, date: Option<&str>) -> Result<NaiveDate> {
    Ok(match date {
        Some(d) => parse_date(d)?,
        None => ctx.today() - Duration::days(1),
    })
}

/// `--from`/`--to`, by default this month up to today.
fn range(ctx: &Ctx, r: &DateRange) -> Result<(NaiveDate, NaiveDate)> {
    let today = ctx.today();
    let from = match &r.from {
        Some(d) => parse_date(d)?,
        None => today.with_day(1).unwrap_or(today),
    };
    let to = r.to.as_deref().map(parse_date).transpose()?.unwrap_or(today);
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

/// A `--dept` filter must name a department: an unknown one is refused (exit 1), not shown
/// as an empty day.
fn known_dept(pool: &mysql::Pool, dept: Option<&str>) -> Result<()> {
    dept.map_or(Ok(()), |d| must_know(pool, Known::Department, d))
}

pub fn run(ctx: &Ctx, cmd: ReportCommand) -> Result<()> {
    let pool = services::mysql(&ctx.cfg)?;
    let tz = ctx.cfg.timezone;
    let (table, format) = match cmd {
        ReportCommand::Day { date, dept, format } => {
            let date = day_or_yesterday(ctx, date.as_deref())?;
            known_dept(&pool, dept.as_deref())?;
            (report::day(&pool, date, dept.as_deref())?, format)
        }
        ReportCommand::Absent { date, dept, format } => {
            let date = day_or_yesterday(ctx, date.as_deref())?;
            known_dept(&pool, dept.as_deref())?;
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
        ReportCommand::Corrections {
            employee,
            range: r,
            format,
        } => {
            if let Some(e) = employee.as_deref() {
                must_know(&pool, Known::Employee, e)?;
            }
            let (from, to) = range(ctx, &r)?;
            (report::corrections(&pool, tz, from, to, employee.as_deref())?, format)
        }
        ReportCommand::Runs {
            date,
            limit,
            failures,
            format,
        } => {
            let date = date.as_deref().map(parse_date).transpose()?;
            let t = if failures {
                report::failures(&pool, date, limit)?
            } else {
                report::runs(&pool, tz, date, limit)?
            };
            (t, format)
        }
    };
    let text = table.render(&format.format)?;
    // CSV ends its last record with a newline already.
    if text.ends_with('\n') {
        print!("{text}");
    } else {
        println!("{text}");
    }
    if table.rows.is_empty() && format.format == "table" {
        ctx.out.status("no rows (has the day been settled?)");
    }
    Ok(())
}
