//! The month sheet's and payroll's reads: every settled row of a month (of one department) in one streamed
//! query, the month's holidays, and the names of the people and departments on it. Rows come in
//! the table's own order and the sheet sorts its lines, so MySQL never sorts 3 million rows.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use chrono_tz::Tz;
use mysql::prelude::Queryable;

use crate::domain::day::hours::{self, HoursRule};
use crate::domain::day::policy::{DayStatus, Policy};
use crate::domain::report::month::{last_day, Code, MonthSheet};
use crate::domain::report::payroll::Payroll;
use crate::error::Error;
use crate::mysql::typed::Cols;
use crate::mysql::Db;

/// The month that starts on `first`, of `dept` or of everyone, and the names on it
/// (employee id -> name, department id -> name).
pub(crate) struct Month {
    pub sheet: MonthSheet,
    pub names: HashMap<String, String>,
    pub departments: HashMap<String, String>,
}

const COLUMNS: &str =
    "SELECT department_id, employee_id, work_date, CAST(status AS CHAR), first_in, last_out FROM attendance";

pub(crate) fn month(
    pool: &Db,
    policy: &dyn Fn(NaiveDate) -> Policy,
    tz: Tz,
    first: NaiveDate,
    dept: Option<&str>,
) -> Result<Month> {
    let last = last_day(first);
    let mut conn = pool.get_conn()?;
    let holidays: HashSet<NaiveDate> = conn
        .exec::<NaiveDate, _, _>(
            "SELECT day FROM calendar_days WHERE kind = 'holiday' AND day BETWEEN ? AND ?",
            (first, last),
        )?
        .into_iter()
        .collect();
    let mut rules: HashMap<NaiveDate, HoursRule> = HashMap::new();
    let mut sheet = MonthSheet::new(first);
    // With a department, one equality per day, so that MySQL reads the (day, department)
    // index rather than every row of the month.
    let (sql, params): (String, Vec<mysql::Value>) = match dept {
        Some(d) => {
            let days: Vec<NaiveDate> = first.iter_days().take_while(|x| *x <= last).collect();
            let mut params: Vec<mysql::Value> = days.iter().map(|x| (*x).into()).collect();
            params.push(d.into());
            let marks = vec!["?"; days.len()].join(",");
            (
                format!("{COLUMNS} WHERE work_date IN ({marks}) AND department_id = ?"),
                params,
            )
        }
        None => (
            format!("{COLUMNS} WHERE work_date BETWEEN ? AND ?"),
            vec![first.into(), last.into()],
        ),
    };
    let rows = conn.exec_iter(sql, params)?;
    for row in rows {
        let mut c = Cols::new(row?, "attendance row");
        let (d, e, date, status): (String, String, NaiveDate, String) = (c.get(0)?, c.get(1)?, c.get(2)?, c.get(3)?);
        let (fi, lo): (Option<NaiveDateTime>, Option<NaiveDateTime>) = (c.get(4)?, c.get(5)?);
        let status = DayStatus::parse(&status)
            .ok_or_else(|| Error::internal(format!("attendance row {date} {e}: unknown status '{status}'")))?;
        let rule = rules
            .entry(date)
            .or_insert_with(|| HoursRule::new(&policy(date), tz, date));
        let h = hours::of_row(rule, status != DayStatus::RestDay, fi, lo);
        sheet.add(d, e, date, Code::of(status, holidays.contains(&date)), h);
    }
    let departments: HashMap<String, String> = conn
        .exec::<(String, String), _, _>(
            "SELECT id, name FROM departments WHERE ? IS NULL OR id = ?",
            (dept, dept),
        )?
        .into_iter()
        .collect();
    // The names of everyone on the sheet: someone moved away keeps their earlier days.
    let names: HashMap<String, String> = match dept {
        None => conn.query::<(String, String), _>("SELECT id, name FROM employees")?,
        Some(_) => {
            let ids = sheet.employees();
            if ids.is_empty() {
                Vec::new()
            } else {
                let marks = vec!["?"; ids.len()].join(",");
                conn.exec(format!("SELECT id, name FROM employees WHERE id IN ({marks})"), ids)?
            }
        }
    }
    .into_iter()
    .collect();
    Ok(Month {
        sheet,
        names,
        departments,
    })
}

/// Payroll's lines for a period, and the names on them: every settled row of the period in one
/// streamed query, with the kind of the approved leave of each day on leave (approved leave
/// never overlaps, so a day matches one leave at most).
pub(crate) fn payroll(
    pool: &Db,
    policy: &dyn Fn(NaiveDate) -> Policy,
    tz: Tz,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<(Payroll, HashMap<String, String>)> {
    let mut conn = pool.get_conn()?;
    let mut rules: HashMap<NaiveDate, HoursRule> = HashMap::new();
    let mut payroll = Payroll::default();
    let rows = conn.exec_iter(
        "SELECT a.employee_id, a.department_id, a.work_date, CAST(a.status AS CHAR), a.first_in, a.last_out, \
         a.late_minutes, l.kind FROM attendance a LEFT JOIN leaves l ON a.status = 'on_leave' \
         AND l.employee_id = a.employee_id AND l.status = 'approved' AND a.work_date BETWEEN l.from_date AND l.to_date \
         WHERE a.work_date BETWEEN ? AND ?",
        (from, to),
    )?;
    for row in rows {
        let mut c = Cols::new(row?, "attendance row");
        let (e, d, date, status): (String, String, NaiveDate, String) = (c.get(0)?, c.get(1)?, c.get(2)?, c.get(3)?);
        let (fi, lo): (Option<NaiveDateTime>, Option<NaiveDateTime>) = (c.get(4)?, c.get(5)?);
        let (late, kind): (u32, Option<String>) = (c.get(6)?, c.get(7)?);
        let status = DayStatus::parse(&status)
            .ok_or_else(|| Error::internal(format!("attendance row {date} {e}: unknown status '{status}'")))?;
        let rule = rules
            .entry(date)
            .or_insert_with(|| HoursRule::new(&policy(date), tz, date));
        let h = hours::of_row(rule, status != DayStatus::RestDay, fi, lo);
        payroll.add(e, d, date, status, late, kind.as_deref(), h);
    }
    let names = conn
        .query::<(String, String), _>("SELECT id, name FROM employees")?
        .into_iter()
        .collect();
    Ok((payroll, names))
}
