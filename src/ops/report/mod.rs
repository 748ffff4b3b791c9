//! HR's reports: one question in, one table of cells out, from MySQL. A report of an employee
//! or department that MySQL does not know is refused rather than shown empty. `report now`, the
//! roll call from the live boards, is `roll_call`.

pub(crate) mod roll_call;

use std::collections::HashMap;

use anyhow::Result;
use chrono::NaiveDate;

use crate::config::Config;
use crate::domain::day::shifts::Shifts;
use crate::domain::day::worked::Days;
use crate::domain::people::roster;
use crate::domain::report::month::MonthSheet;
use crate::domain::report::payroll::Payroll;
use crate::domain::report::table::Table;
use crate::error::Error;
use crate::mysql::report::month_rows::{self, MonthPart};
use crate::mysql::report::payroll_rows;
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
            let mut table = None;
            payroll_each(cfg, *from, *to, &mut |part| {
                match &mut table {
                    None => table = Some(part),
                    Some(t) => t.rows.extend(part.rows),
                }
                Ok(())
            })?;
            Ok(table.unwrap_or_else(|| Payroll::default().table(&Default::default(), false)))
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

/// The month sheet of the month that starts on `first` (of `dept`), whole: the parts of
/// [`month_each`] put together (the text table and the workbook need every line at once).
pub(crate) fn month(cfg: &Config, first: NaiveDate, dept: Option<&str>) -> Result<Month> {
    let mut sheet = MonthSheet::new(first);
    let mut names = HashMap::new();
    let departments = month_each(cfg, first, dept, &mut |part| {
        sheet.absorb(part.sheet);
        names.extend(part.names);
        Ok(())
    })?;
    Ok(Month {
        sheet,
        names,
        departments,
    })
}

/// The month sheet, whole, and the names on it (employee id -> name, department id -> name).
pub(crate) struct Month {
    pub sheet: MonthSheet,
    pub names: HashMap<String, String>,
    pub departments: HashMap<String, String>,
}

/// The month sheet of the month that starts on `first` (of `dept`), given to `each` a part at
/// a time, in department and employee order (`ATTENDANCE_REPORT_SLICE` employees at most);
/// returns the departments' names.
pub(crate) fn month_each(
    cfg: &Config,
    first: NaiveDate,
    dept: Option<&str>,
    each: &mut dyn FnMut(MonthPart) -> Result<()>,
) -> Result<HashMap<String, String>> {
    let db = crate::mysql::Db::open_reports(cfg)?;
    known_dept(&db, dept)?;
    let rules = crate::ops::lookup::rules_from(cfg, &db)?;
    // Each day's hours by the rulebook's version in force on it.
    let policy = |date| rules.on(date).unwrap_or_else(|_| cfg.policy.clone());
    let shifts = shifts(cfg, &db)?;
    let mut days = Days::new(&shifts, cfg.timezone, &policy);
    month_rows::month(&db, &mut days, first, dept, slice()?, each)?;
    month_rows::departments(&db, dept)
}

/// Payroll from `from` to `to`, given to `each` as tables of a slice of employees at a time, in
/// id order (`ATTENDANCE_REPORT_SLICE` employees each); the first part comes even when there is
/// no line, so that its columns are known.
pub(crate) fn payroll_each(
    cfg: &Config,
    from: NaiveDate,
    to: NaiveDate,
    each: &mut dyn FnMut(Table) -> Result<()>,
) -> Result<()> {
    if to < from {
        return Err(Error::input(format!("--to ({to}) is before --from ({from})")).into());
    }
    let db = crate::mysql::Db::open_reports(cfg)?;
    let rules = crate::ops::lookup::rules_from(cfg, &db)?;
    let policy = |date| rules.on(date).unwrap_or_else(|_| cfg.policy.clone());
    let shifts = shifts(cfg, &db)?;
    let mut days = Days::new(&shifts, cfg.timezone, &policy);
    let closed = crate::mysql::people::periods::all_closed(&mut db.conn()?, from, to)?;
    let mut parts = 0u64;
    payroll_rows::payroll(&db, &mut days, from, to, slice()?, &mut |part| {
        parts += 1;
        each(part.payroll.table(&part.names, closed))
    })?;
    if parts == 0 {
        each(Payroll::default().table(&HashMap::new(), closed))?;
    }
    Ok(())
}

/// How many employees a streamed report reads at a time: `ATTENDANCE_REPORT_SLICE` (a test
/// hook, docs/reports.md), by default 1,000 (a slice's rows, names and decisions are what the
/// month sheet and payroll hold at once, two or three slices with the reading threads; each
/// slice is one statement per read, so fewer are cheaper: 500 cost the month sheet a fifth more).
fn slice() -> Result<usize> {
    const DEFAULT: usize = 1000;
    match std::env::var("ATTENDANCE_REPORT_SLICE") {
        Err(_) => Ok(DEFAULT),
        Ok(v) => v.trim().parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(|| {
            Error::input(format!(
                "ATTENDANCE_REPORT_SLICE: '{v}' is not a number of employees (1 or more)"
            ))
            .into()
        }),
    }
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
