//! HR's reports: one question in, one table of cells out, from MySQL. A report of an employee
//! or department that MySQL does not know is refused rather than shown empty. `report now`, the
//! roll call from the live boards, is `roll_call`.

pub(crate) mod roll_call;

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::domain::day::shifts::Shifts;
use crate::domain::day::worked::Days;
use crate::domain::people::roster;
use crate::domain::report::table::Table;
use crate::error::Error;
use crate::mysql::report::month_rows::{self, Month};
use crate::mysql::report::report_queries::{self as report, Known};
use crate::mysql::Db;

/// One report, with its dates already decided (defaults are the command's business).
#[derive(Debug, Clone)]
pub(crate) enum Query {
    /// Per department: headcount and rows by status.
    Day { date: NaiveDate, dept: Option<String> },
    /// Who was absent.
    Absent { date: NaiveDate, dept: Option<String> },
    /// One employee's days, with totals.
    Employee { id: String, from: NaiveDate, to: NaiveDate },
    /// Each employee of a department over a range, with totals.
    Dept { id: String, from: NaiveDate, to: NaiveDate },
    /// Each employee's period, for payroll.
    Payroll { from: NaiveDate, to: NaiveDate },
    /// Corrections of days in a range (of one employee): who, as the systems saw it, and why.
    Corrections {
        employee: Option<String>,
        from: NaiveDate,
        to: NaiveDate,
    },
    /// The punch log of days in a range (of one employee, of one department).
    Punches {
        employee: Option<String>,
        dept: Option<String>,
        from: NaiveDate,
        to: NaiveDate,
    },
    /// Settle runs, or with `failures` the rows they could not write.
    Runs {
        date: Option<NaiveDate>,
        limit: u32,
        failures: bool,
    },
}

/// Answer one report.
pub(crate) fn run(cfg: &Config, q: &Query) -> Result<Table> {
    if let Query::Employee { from, to, .. }
    | Query::Dept { from, to, .. }
    | Query::Payroll { from, to }
    | Query::Corrections { from, to, .. }
    | Query::Punches { from, to, .. } = q
    {
        if to < from {
            return Err(Error::input(format!("--to ({to}) is before --from ({from})")).into());
        }
    }
    // Reports only read: they go to the replica when one is configured.
    let db = crate::mysql::Db::open_reports(cfg)?;
    let tz = cfg.timezone;
    let rules = crate::ops::lookup::rules_from(cfg, &db)?;
    // Each day's hours by the rulebook's version in force on it.
    let policy = |date| rules.on(date).unwrap_or_else(|_| cfg.policy.clone());
    match q {
        Query::Day { date, dept } => {
            known_dept(&db, dept.as_deref())?;
            report::day(&db, *date, dept.as_deref())
        }
        Query::Absent { date, dept } => {
            known_dept(&db, dept.as_deref())?;
            report::absent(&db, *date, dept.as_deref())
        }
        Query::Employee { id, from, to } => {
            must_know(&db, Known::Employee, id)?;
            report::employee(&db, &mut Days::new(&shifts(cfg, &db)?, tz, &policy), tz, id, *from, *to)
        }
        Query::Dept { id, from, to } => {
            must_know(&db, Known::Department, id)?;
            report::dept(&db, &mut Days::new(&shifts(cfg, &db)?, tz, &policy), id, *from, *to)
        }
        Query::Payroll { from, to } => {
            let (p, names) = month_rows::payroll(&db, &mut Days::new(&shifts(cfg, &db)?, tz, &policy), *from, *to)?;
            let closed = crate::mysql::people::periods::all_closed(&mut db.conn()?, *from, *to)?;
            Ok(p.table(&names, closed))
        }
        Query::Corrections { employee, from, to } => {
            if let Some(e) = employee {
                must_know(&db, Known::Employee, e)?;
            }
            report::corrections(&db, tz, *from, *to, employee.as_deref())
        }
        Query::Punches {
            employee,
            dept,
            from,
            to,
        } => {
            if let Some(e) = employee {
                must_know(&db, Known::Employee, e)?;
            }
            known_dept(&db, dept.as_deref())?;
            report::punches(&db, tz, *from, *to, employee.as_deref(), dept.as_deref())
        }
        Query::Runs {
            date,
            limit,
            failures: true,
        } => report::failures(&db, *date, *limit),
        Query::Runs { date, limit, .. } => report::runs(&db, tz, *date, *limit),
    }
}

/// The month sheet of the month that starts on `first` (of `dept`): one query for its rows.
pub(crate) fn month(cfg: &Config, first: NaiveDate, dept: Option<&str>) -> Result<Month> {
    let db = crate::mysql::Db::open_reports(cfg)?;
    known_dept(&db, dept)?;
    let rules = crate::ops::lookup::rules_from(cfg, &db)?;
    // Each day's hours by the rulebook's version in force on it.
    let policy = |date| rules.on(date).unwrap_or_else(|_| cfg.policy.clone());
    let shifts = shifts(cfg, &db)?;
    let mut days = Days::new(&shifts, cfg.timezone, &policy);
    month_rows::month(&db, &mut days, first, dept)
}

/// One employee's timesheet for the month that starts on `first`, and who they are.
pub(crate) struct Timesheet {
    pub table: Table,
    pub name: String,
    pub department: String,
}

/// The timesheet of employee `id` for the month that starts on `first`: a row per day.
/// Like every report it runs with the reporting account (read only); an unknown employee is
/// refused (exit 1).
pub(crate) fn timesheet(cfg: &Config, id: &str, first: NaiveDate) -> Result<Timesheet> {
    let db = crate::mysql::Db::open_reports(cfg)?;
    must_know(&db, Known::Employee, id)?;
    let rules = crate::ops::lookup::rules_from(cfg, &db)?;
    let policy = |date| rules.on(date).unwrap_or_else(|_| cfg.policy.clone());
    let shifts = shifts(cfg, &db)?;
    let mut days = Days::new(&shifts, cfg.timezone, &policy);
    let (who, sheet) = crate::mysql::report::timesheet_rows::month(&db, &mut days, id, first)?;
    Ok(Timesheet {
        table: crate::domain::report::timesheet::table(cfg.timezone, &sheet),
        name: who.name,
        department: who.department,
    })
}

/// The shifts as the record holds them: every report's hours are judged by the employee's own
/// (the default shift, whose hours are the policy's, by each day's: see `Days`).
fn shifts(cfg: &Config, db: &Db) -> Result<Shifts> {
    Ok(Shifts::new(crate::mysql::people::shift_rows::read(db)?, &cfg.policy))
}

fn known_dept(db: &Db, dept: Option<&str>) -> Result<()> {
    dept.map_or(Ok(()), |d| must_know(db, Known::Department, d))
}

fn must_know(db: &Db, what: Known, id: &str) -> Result<()> {
    roster::check_id("id", id)?;
    if !report::known(db, what, id)? {
        let kind = match what {
            Known::Employee => "employee",
            Known::Department => "department",
        };
        return Err(Error::refused(format!("unknown {kind} '{id}'")).into());
    }
    Ok(())
}
