//! The month sheet's and payroll's reads, a slice of employees at a time so that memory follows
//! the slice, not the company: the month sheet a department at a time (its employees in id
//! order, in slices), payroll by a keyset cursor over employee ids. Each slice's rows come in the
//! table's key order (day, employee), every day of the period from the Monday of its first week,
//! so the weekly overtime threshold (`domain::day::overtime::Tally`) sees every day of an
//! employee's week, in whichever department they were.

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

/// A part of the month sheet (one department's lines, or a slice of them) and the names on it.
pub(crate) struct MonthPart {
    pub sheet: MonthSheet,
    pub names: HashMap<String, String>,
}

/// Payroll's lines of a slice of employees, and their names.
pub(crate) struct PayrollPart {
    pub payroll: Payroll,
    pub names: HashMap<String, String>,
}

/// The departments of the sheet (`dept`, or every one), id -> name.
pub(crate) fn departments(pool: &Db, dept: Option<&str>) -> Result<HashMap<String, String>> {
    Ok(pool
        .get_conn()?
        .exec::<(String, String), _, _>(
            "SELECT id, name FROM departments WHERE ? IS NULL OR id = ?",
            (dept, dept),
        )?
        .into_iter()
        .collect())
}

/// `?,?,...` for `n` values.
fn marks(n: usize) -> String {
    vec!["?"; n].join(",")
}

fn values<T: Clone + Into<mysql::Value>>(v: &[T]) -> Vec<mysql::Value> {
    v.iter().cloned().map(Into::into).collect()
}

/// Whose rows a slice reads: these employees, or every employee from one id to another.
enum Who<'a> {
    Ids(&'a [String]),
    Range(&'a str, &'a str),
}

/// The rows of a slice of employees (`columns`, from `attendance a`, with `join`) on `dates`,
/// in the table's own order (day, employee): an employee's days come in date order, and each
/// day's rows are one range of the primary key, so MySQL neither sorts nor looks rows up by a
/// second index. (An `IN` list of 1,000 or more is a table MariaDB joins and sorts instead,
/// hence slices of fewer.)
fn rows_of<'c>(
    conn: &'c mut mysql::PooledConn,
    columns: &str,
    join: &str,
    who: Who,
    dates: &[NaiveDate],
) -> Result<mysql::QueryResult<'c, 'c, 'c, mysql::Binary>> {
    let mut params = values(dates);
    let whom = match who {
        Who::Ids(ids) => {
            params.extend(values(ids));
            format!("a.employee_id IN ({})", marks(ids.len()))
        }
        Who::Range(first, last) => {
            params.extend([first.into(), last.into()]);
            "a.employee_id BETWEEN ? AND ?".to_string()
        }
    };
    Ok(conn.exec_iter(
        format!(
            "SELECT {columns} FROM attendance a {join} WHERE a.work_date IN ({}) AND {whom} \
             ORDER BY a.work_date, a.employee_id",
            marks(dates.len())
        ),
        params,
    )?)
}

fn status_of(e: &str, date: NaiveDate, status: &str) -> Result<DayStatus> {
    DayStatus::parse(status)
        .ok_or_else(|| Error::internal(format!("attendance row {date} {e}: unknown status '{status}'")).into())
}

/// The month that starts on `first`, of `dept` or of everyone, given to `each` a part at a
/// time, in department then employee order: a department's employees (those with a row there
/// in the month) `slice` at a time. An employee's line counts their whole weeks, days in another
/// department included, as the unsliced sheet did.
pub(crate) fn month(
    pool: &Db,
    days: &mut Days,
    first: NaiveDate,
    dept: Option<&str>,
    slice: usize,
    each: &mut dyn FnMut(MonthPart) -> Result<()>,
) -> Result<()> {
    let last = last_day(first);
    let monday = monday_of(first);
    let mut conn = pool.get_conn()?;
    let holidays: HashSet<NaiveDate> = conn
        .exec::<NaiveDate, _, _>(
            "SELECT day FROM calendar_days WHERE kind = 'holiday' AND day BETWEEN ? AND ?",
            (first, last),
        )?
        .into_iter()
        .collect();
    let halves = leave_rows::half_days(&mut conn, first, last)?;
    let depts: Vec<String> = match dept {
        Some(d) => vec![d.to_string()],
        None => conn.query("SELECT id FROM departments ORDER BY id")?,
    };
    // One equality per day, so that MySQL reads the (day, department) index alone.
    let month_days: Vec<NaiveDate> = first.iter_days().take_while(|x| *x <= last).collect();
    let weeks: Vec<NaiveDate> = monday.iter_days().take_while(|x| *x <= last).collect();
    let who = format!(
        "SELECT id, name FROM employees WHERE id IN (SELECT employee_id FROM attendance \
         WHERE work_date IN ({}) AND department_id = ?) ORDER BY id",
        marks(month_days.len())
    );
    for d in depts {
        let mut params = values(&month_days);
        params.push(d.as_str().into());
        let people: Vec<(String, String)> = conn.exec(&who, params)?;
        for people in people.chunks(slice.max(1)) {
            let ids: Vec<String> = people.iter().map(|(id, _)| id.clone()).collect();
            let ids = ids.as_slice();
            let mut tally = Tally::new(overtime_rows::standing_of(&mut conn, ids, monday, last)?);
            let mut sheet = MonthSheet::new(first);
            let columns = "a.department_id, a.employee_id, a.work_date, CAST(a.status AS CHAR), a.first_in, a.last_out";
            // A department whose people hold a run of ids (as a roster numbered by department
            // does) reads that run of the key, others' rows skipped; a scattered one each id.
            let (lo, hi) = (&people[0].0, &people[people.len() - 1].0);
            let run: u64 = conn
                .exec_first("SELECT COUNT(*) FROM employees WHERE id BETWEEN ? AND ?", (lo, hi))?
                .unwrap_or(u64::MAX);
            let who = if run <= 2 * people.len() as u64 {
                Who::Range(lo, hi)
            } else {
                Who::Ids(ids)
            };
            let mine: HashSet<&str> = ids.iter().map(String::as_str).collect();
            for row in rows_of(&mut conn, columns, "", who, &weeks)? {
                let mut c = Cols::new(row?, "attendance row");
                let (rd, e, date, status): (String, String, NaiveDate, String) =
                    (c.get(0)?, c.get(1)?, c.get(2)?, c.get(3)?);
                if !mine.contains(e.as_str()) {
                    continue;
                }
                let (fi, lo): (Option<NaiveDateTime>, Option<NaiveDateTime>) = (c.get(4)?, c.get(5)?);
                let status = status_of(&e, date, &status)?;
                let day = days.of(&e, &rd, date).1;
                let h = tally.day(
                    day.rules(),
                    &e,
                    date,
                    day.stored_split(status, halves.on(&e, date), fi, lo),
                );
                // The days before the month count toward their week; another department's
                // days are that department's lines.
                if date < first || rd != d {
                    continue;
                }
                sheet.add(rd, e, date, Code::of(status, holidays.contains(&date)), h);
            }
            let names = people.iter().cloned().collect();
            each(MonthPart { sheet, names })?;
        }
    }
    Ok(())
}

/// Payroll's lines for a period, given to `each` a slice of `slice` employees at a time, in id
/// order (a keyset cursor over `employees`), with the kind of the approved leave of each day
/// on leave (approved leave never overlaps, so a day matches one leave at most). An employee's
/// days come in date order from the Monday of the period's first week: the days before the
/// period count only toward their week's overtime threshold (`domain::day::overtime::Tally`).
pub(crate) fn payroll(
    pool: &Db,
    days: &mut Days,
    from: NaiveDate,
    to: NaiveDate,
    slice: usize,
    each: &mut dyn FnMut(PayrollPart) -> Result<()>,
) -> Result<()> {
    let mut conn = pool.get_conn()?;
    let monday = monday_of(from);
    let halves = leave_rows::half_days(&mut conn, from, to)?;
    let versions = policy_rows::version_dates(&mut conn)?;
    let dates: Vec<NaiveDate> = monday.iter_days().take_while(|x| *x <= to).collect();
    let mut after = String::new();
    loop {
        let people: Vec<(String, String)> = conn.exec(
            "SELECT id, name FROM employees WHERE id > ? ORDER BY id LIMIT ?",
            (after.as_str(), slice.max(1) as u64),
        )?;
        let (Some((first, _)), Some((last, _))) = (people.first(), people.last()) else {
            break;
        };
        let ids: Vec<String> = people.iter().map(|(id, _)| id.clone()).collect();
        after = last.clone();
        let mut tally = Tally::new(overtime_rows::standing_of(&mut conn, &ids, monday, to)?);
        let mut payroll = Payroll::default();
        let columns = "a.employee_id, a.department_id, CAST(a.status AS CHAR), a.first_in, a.last_out, a.late_minutes, l.kind, a.work_date";
        let join = "LEFT JOIN leaves l ON a.status = 'on_leave' AND l.employee_id = a.employee_id \
                    AND l.status = 'approved' AND l.half IS NULL AND a.work_date BETWEEN l.from_date AND l.to_date";
        for row in rows_of(&mut conn, columns, join, Who::Range(first, last), &dates)? {
            let mut c = Cols::new(row?, "attendance row");
            let (e, d, status): (String, String, String) = (c.get(0)?, c.get(1)?, c.get(2)?);
            let (fi, lo): (Option<NaiveDateTime>, Option<NaiveDateTime>) = (c.get(3)?, c.get(4)?);
            let (late, kind): (u32, Option<String>) = (c.get(5)?, c.get(6)?);
            let date: NaiveDate = c.get(7)?;
            let status = status_of(&e, date, &status)?;
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
        let names = people.into_iter().collect();
        each(PayrollPart { payroll, names })?;
    }
    Ok(())
}
