//! The month sheet's and payroll's reads: every settled row of a month (of one department) in one streamed
//! query, the month's holidays, and the names of the people and departments on it. Rows come in
//! the table's own order and the sheet sorts its lines, so MySQL never sorts 3 million rows.

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;

use crate::domain::day::overtime::{monday_of, Tally};
use crate::domain::day::policy::DayStatus;
use crate::domain::day::rulebook::version_on;
use crate::domain::day::worked::Days;
use crate::domain::report::month::{last_day, Code, MonthSheet};
use crate::domain::report::payroll::{PayDay, Payroll};
use crate::error::Error;
use crate::mysql::people::{leave_rows, overtime_rows, policy_rows};
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

pub(crate) fn month(pool: &Db, days: &mut Days, first: NaiveDate, dept: Option<&str>) -> Result<Month> {
    let last = last_day(first);
    let mut conn = pool.get_conn()?;
    let holidays: HashSet<NaiveDate> = conn
        .exec::<NaiveDate, _, _>(
            "SELECT day FROM calendar_days WHERE kind = 'holiday' AND day BETWEEN ? AND ?",
            (first, last),
        )?
        .into_iter()
        .collect();
    let halves = leave_rows::half_days(&mut conn, first, last)?;
    // From the Monday of the month's first week, in date order: the week's overtime threshold
    // counts the days before the month too (payroll's rule, `domain::day::overtime::Tally`).
    let monday = monday_of(first);
    let mut tally = Tally::new(overtime_rows::standing(&mut conn, monday, last)?);
    let mut sheet = MonthSheet::new(first);
    // With a department, one equality per day, so that MySQL reads the (day, department)
    // index rather than every row of the month.
    let (sql, params): (String, Vec<mysql::Value>) = match dept {
        Some(d) => {
            let days: Vec<NaiveDate> = monday.iter_days().take_while(|x| *x <= last).collect();
            let mut params: Vec<mysql::Value> = days.iter().map(|x| (*x).into()).collect();
            params.push(d.into());
            let marks = vec!["?"; days.len()].join(",");
            (
                format!("{COLUMNS} WHERE work_date IN ({marks}) AND department_id = ? ORDER BY work_date"),
                params,
            )
        }
        None => (
            format!("{COLUMNS} WHERE work_date BETWEEN ? AND ? ORDER BY work_date"),
            vec![monday.into(), last.into()],
        ),
    };
    let rows = conn.exec_iter(sql, params)?;
    for row in rows {
        let mut c = Cols::new(row?, "attendance row");
        let (d, e, date, status): (String, String, NaiveDate, String) = (c.get(0)?, c.get(1)?, c.get(2)?, c.get(3)?);
        let (fi, lo): (Option<NaiveDateTime>, Option<NaiveDateTime>) = (c.get(4)?, c.get(5)?);
        let status = DayStatus::parse(&status)
            .ok_or_else(|| Error::internal(format!("attendance row {date} {e}: unknown status '{status}'")))?;
        let day = days.of(&e, &d, date).1;
        let h = tally.day(
            day.rules(),
            &e,
            date,
            day.stored_split(status, halves.on(&e, date), fi, lo),
        );
        if date < first {
            continue;
        }
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

/// Payroll's lines for a period, and the names on them: every settled row of the period, streamed
/// a day at a time, with the kind of the approved leave of each day on leave (approved leave
/// never overlaps, so a day matches one leave at most). Days come in date order from the Monday
/// of the period's first week: the days before the period count only toward their week's
/// overtime threshold (`domain::day::overtime::Tally`).
pub(crate) fn payroll(
    pool: &Db,
    days: &mut Days,
    from: NaiveDate,
    to: NaiveDate,
) -> Result<(Payroll, HashMap<String, String>)> {
    let mut conn = pool.get_conn()?;
    let monday = monday_of(from);
    let halves = leave_rows::half_days(&mut conn, from, to)?;
    let mut tally = Tally::new(overtime_rows::standing(&mut conn, monday, to)?);
    let versions = policy_rows::version_dates(&mut conn)?;
    let mut payroll = Payroll::default();
    // A day at a time, in date order: an ORDER BY over the join would have MySQL sort the
    // period's rows, where each day's query is a range of the table's key.
    for date in monday.iter_days().take_while(|d| *d <= to) {
        let rows = conn.exec_iter(
            "SELECT a.employee_id, a.department_id, CAST(a.status AS CHAR), a.first_in, a.last_out, \
             a.late_minutes, l.kind FROM attendance a LEFT JOIN leaves l ON a.status = 'on_leave' \
             AND l.employee_id = a.employee_id AND l.status = 'approved' AND l.half IS NULL AND a.work_date BETWEEN l.from_date AND l.to_date \
             WHERE a.work_date = ?",
            (date,),
        )?;
        for row in rows {
            let mut c = Cols::new(row?, "attendance row");
            let (e, d, status): (String, String, String) = (c.get(0)?, c.get(1)?, c.get(2)?);
            let (fi, lo): (Option<NaiveDateTime>, Option<NaiveDateTime>) = (c.get(3)?, c.get(4)?);
            let (late, kind): (u32, Option<String>) = (c.get(5)?, c.get(6)?);
            let status = DayStatus::parse(&status)
                .ok_or_else(|| Error::internal(format!("attendance row {date} {e}: unknown status '{status}'")))?;
            let (shift, day) = days.of(&e, &d, date);
            let split = day.stored_split(status, halves.on(&e, date), fi, lo);
            let h = tally.day(day.rules(), &e, date, split);
            if date < from {
                continue;
            }
            let half_leave_kind = halves.half_on(&e, date).map(|(_, k)| k);
            payroll.add(PayDay {
                employee: e.clone(),
                dept: d,
                date,
                status,
                late_minutes: late,
                leave_kind: kind.as_deref(),
                half_leave_kind,
                shift: &shift.name,
                rulebook: version_on(&versions, date),
                hours: h,
            });
        }
    }
    let names = conn
        .query::<(String, String), _>("SELECT id, name FROM employees")?
        .into_iter()
        .collect();
    Ok((payroll, names))
}
