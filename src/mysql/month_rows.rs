//! The month sheet's reads: every settled row of a month (of one department) in one streamed
//! query, the month's holidays, and the names of the people and departments on it. Rows come in
//! the table's own order and the sheet sorts its lines, so MySQL never sorts 3 million rows.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use chrono_tz::Tz;
use mysql::prelude::Queryable;

use super::typed::Cols;
use super::Db;
use crate::domain::hours::{self, HoursRule};
use crate::domain::month::{last_day, Code, MonthSheet};
use crate::domain::policy::{DayStatus, Policy};
use crate::error::Error;

/// The month that starts on `first`, of `dept` or of everyone, and the names on it
/// (employee id -> name, department id -> name).
pub(crate) struct Month {
    pub sheet: MonthSheet,
    pub names: HashMap<String, String>,
    pub departments: HashMap<String, String>,
}

pub(crate) fn month(pool: &Db, policy: &Policy, tz: Tz, first: NaiveDate, dept: Option<&str>) -> Result<Month> {
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
    let rows = conn.exec_iter(
        "SELECT department_id, employee_id, work_date, CAST(status AS CHAR), first_in, last_out \
         FROM attendance WHERE work_date BETWEEN ? AND ? AND (? IS NULL OR department_id = ?)",
        (first, last, dept, dept),
    )?;
    for row in rows {
        let mut c = Cols::new(row?, "attendance row");
        let (d, e, date, status): (String, String, NaiveDate, String) = (c.get(0)?, c.get(1)?, c.get(2)?, c.get(3)?);
        let (fi, lo): (Option<NaiveDateTime>, Option<NaiveDateTime>) = (c.get(4)?, c.get(5)?);
        let status = DayStatus::parse(&status)
            .ok_or_else(|| Error::internal(format!("attendance row {date} {e}: unknown status '{status}'")))?;
        let rule = rules.entry(date).or_insert_with(|| HoursRule::new(policy, tz, date));
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
    // Everyone who was ever in the department: someone moved away keeps their earlier days.
    let names: HashMap<String, String> = conn
        .exec::<(String, String), _, _>(
            "SELECT e.id, e.name FROM employees e WHERE ? IS NULL OR e.id IN \
             (SELECT DISTINCT employee_id FROM attendance WHERE work_date BETWEEN ? AND ? AND department_id = ?)",
            (dept, first, last, dept),
        )?
        .into_iter()
        .collect();
    Ok(Month {
        sheet,
        names,
        departments,
    })
}
