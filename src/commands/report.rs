//! `attendance report day|absent|employee|dept|corrections|runs`: HR's answers from MySQL.

use anyhow::Result;
use chrono::{Datelike, Duration, NaiveDate};

use super::Ctx;
use crate::cli::{DateRange, ReportCommand, ReportFormat};
use crate::ops::report::{self, Query};
use crate::report::Format;

/// `--date`, or yesterday (the last day settle may have written).
fn day_or_yesterday(ctx: &Ctx, date: Option<NaiveDate>) -> NaiveDate {
    date.unwrap_or_else(|| ctx.today() - Duration::days(1))
}

/// `--from`/`--to`, by default this month up to today.
fn range(ctx: &Ctx, r: &DateRange) -> (NaiveDate, NaiveDate) {
    let today = ctx.today();
    (
        r.from.unwrap_or(today.with_day(1).unwrap_or(today)),
        r.to.unwrap_or(today),
    )
}

/// The question and how to print its answer.
fn query(ctx: &Ctx, cmd: ReportCommand) -> (Query, ReportFormat) {
    match cmd {
        ReportCommand::Day { date, dept, format } => {
            let date = day_or_yesterday(ctx, date);
            (Query::Day { date, dept }, format)
        }
        ReportCommand::Absent { date, dept, format } => {
            let date = day_or_yesterday(ctx, date);
            (Query::Absent { date, dept }, format)
        }
        ReportCommand::Employee {
            employee_id,
            range: r,
            format,
        } => {
            let (from, to) = range(ctx, &r);
            (
                Query::Employee {
                    id: employee_id,
                    from,
                    to,
                },
                format,
            )
        }
        ReportCommand::Dept {
            department_id,
            range: r,
            format,
        } => {
            let (from, to) = range(ctx, &r);
            (
                Query::Dept {
                    id: department_id,
                    from,
                    to,
                },
                format,
            )
        }
        ReportCommand::Corrections {
            employee,
            range: r,
            format,
        } => {
            let (from, to) = range(ctx, &r);
            (Query::Corrections { employee, from, to }, format)
        }
        ReportCommand::Runs {
            date,
            limit,
            failures,
            format,
        } => (Query::Runs { date, limit, failures }, format),
    }
}

pub fn run(ctx: &Ctx, cmd: ReportCommand) -> Result<()> {
    let (q, format) = query(ctx, cmd);
    let table = report::run(&ctx.cfg, &q)?;
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
