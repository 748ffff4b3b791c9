//! The month sheet's reads, a slice of employees at a time so that memory follows the slice,
//! not the company: its lines (an employee with a row in a department in the month) a group
//! of departments at a time from the (day, department) index, then their rows a slice of lines
//! at a time, every day from the Monday of the month's first week, so that the weekly overtime
//! threshold (`domain::day::overtime::Tally`) sees every day of an employee's week, in
//! whichever department they were. A thread of its own reads the next slice while this one is
//! counted and written ([`slices::ahead`]).

use std::collections::{HashMap, HashSet};

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;

use crate::domain::day::overtime::{monday_of, Hours, Tally};
use crate::domain::day::worked::Days;
use crate::domain::report::month::{last_day, Code, MonthSheet};
use crate::mysql::people::leave_rows;
use crate::mysql::report::members;
use crate::mysql::report::slices::{self, DayRow, Decisions};
use crate::mysql::Db;

/// A part of the month sheet (one department's lines, or a slice of them) and the names on it.
pub(crate) struct MonthPart {
    pub sheet: MonthSheet,
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

/// How many employees' lines (by the roster) the month sheet looks up at a time, at least: a
/// read of the index per group of departments, so the fewer the better.
const LINES_READ: usize = 5000;

/// A slice of the sheet's lines as read: the lines (department, employee; in that order), the
/// names of those on the roster, and their rows with the decisions on their overtime.
struct Slice {
    lines: Vec<(String, String)>,
    names: HashMap<String, String>,
    reads: Vec<(Decisions, Vec<DayRow>)>,
}

/// The month that starts on `first`, of `dept` or of everyone, given to `each` a part at a
/// time, in department then employee order. Departments go in groups of a few thousand
/// employees by their roster (one department alone when larger), whose lines are read from the
/// index in one go; then `slice` lines at a time, each slice's employees' rows in one read where
/// their ids run together. An employee's line counts their whole weeks, days in another
/// department included, as the unsliced sheet did.
pub(crate) fn month(
    pool: &Db,
    days: &mut Days,
    first: NaiveDate,
    dept: Option<&str>,
    slice: usize,
    each: &mut dyn FnMut(MonthPart) -> Result<()>,
) -> Result<()> {
    let slice = slice.max(1);
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
    let depts: Vec<(String, u64)> = match dept {
        Some(d) => vec![(d.to_string(), 0)],
        None => conn.query(
            "SELECT d.id, COUNT(e.id) FROM departments d LEFT JOIN employees e ON e.department_id = d.id \
             GROUP BY d.id ORDER BY d.id",
        )?,
    };
    drop(conn);
    // One equality per day, so that MySQL reads one range of a key per day.
    let month_days: Vec<NaiveDate> = first.iter_days().take_while(|x| *x <= last).collect();
    let weeks: Vec<NaiveDate> = monday.iter_days().take_while(|x| *x <= last).collect();
    // Three threads: one reads the lines a group of departments at a time, one the rows of a
    // slice of lines at a time, and this one counts them and writes the sheet.
    let lines = |give: &mut dyn FnMut(Vec<(String, String)>) -> bool| -> Result<()> {
        let mut conn = pool.get_conn()?;
        for group in groups(&depts, slice.max(LINES_READ)) {
            let ids: Vec<&str> = group.iter().map(|(d, _)| d.as_str()).collect();
            for part in members::of(&mut conn, &ids, &month_days)?.chunks(slice) {
                if !give(part.to_vec()) {
                    return Ok(());
                }
            }
        }
        Ok(())
    };
    let rows = |give: &mut dyn FnMut(Slice) -> bool| -> Result<()> {
        let mut conn = pool.get_conn()?;
        slices::ahead(lines, |part| Ok(give(read_slice(&mut conn, part, &weeks)?)))
    };
    slices::ahead(rows, |s| {
        each(count(days, s, first, &holidays, &halves))?;
        Ok(true)
    })
}

/// Consecutive departments whose rosters add up to `size` employees at most (a larger one
/// alone).
fn groups(depts: &[(String, u64)], size: usize) -> Vec<&[(String, u64)]> {
    let mut out = Vec::new();
    let (mut start, mut sum) = (0, 0u64);
    for (i, (_, n)) in depts.iter().enumerate() {
        if i > start && sum + n > size as u64 {
            out.push(&depts[start..i]);
            (start, sum) = (i, 0);
        }
        sum += n;
    }
    if start < depts.len() {
        out.push(&depts[start..]);
    }
    out
}

/// Read the rows of the employees of `lines` on `weeks`, and the decisions on their overtime.
fn read_slice(conn: &mut mysql::PooledConn, lines: Vec<(String, String)>, weeks: &[NaiveDate]) -> Result<Slice> {
    let mut ids: Vec<&str> = lines.iter().map(|(_, e)| e.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let (plan, names) = slices::plan(conn, &ids)?;
    let mut reads = Vec::with_capacity(plan.len());
    for who in plan {
        let decisions = slices::decisions(conn, who, weeks)?;
        reads.push((
            decisions,
            slices::read_rows(conn, who, weeks, false, |e| names.contains_key(e))?,
        ));
    }
    Ok(Slice { lines, names, reads })
}

/// The part of the sheet a slice makes: every row counts toward its week, and the rows in the
/// month of each line's department fill that line.
fn count(
    days: &mut Days,
    s: Slice,
    first: NaiveDate,
    holidays: &HashSet<NaiveDate>,
    halves: &leave_rows::HalfDays,
) -> MonthPart {
    // Each employee's lines here (usually one): its department and where its rows go.
    let mut theirs: HashMap<&str, Vec<(&str, usize)>> = HashMap::with_capacity(s.names.len());
    for (i, (d, e)) in s.lines.iter().enumerate() {
        if s.names.contains_key(e) {
            theirs.entry(e.as_str()).or_default().push((d.as_str(), i));
        }
    }
    let mut found: Vec<Vec<(NaiveDate, Code, Hours)>> = vec![Vec::new(); s.lines.len()];
    for (decisions, rows) in s.reads {
        let mut tally = Tally::new(decisions);
        for r in rows {
            let Some(mine) = theirs.get(r.employee.as_str()) else {
                continue;
            };
            let day = days.of(&r.employee, &r.dept, r.date).1;
            let split = day.stored_split(r.status, halves.on(&r.employee, r.date), r.first_in, r.last_out);
            let h = tally.day(day.rules(), &r.employee, r.date, split);
            // The days before the month count toward their week; the employee's other lines
            // (another department's) are other parts'.
            if r.date < first {
                continue;
            }
            if let Some((_, i)) = mine.iter().find(|(d, _)| *d == r.dept) {
                found[*i].push((r.date, Code::of(r.status, holidays.contains(&r.date)), h));
            }
        }
    }
    let mut sheet = MonthSheet::new(first);
    for ((d, e), rows) in s.lines.iter().zip(found) {
        if !rows.is_empty() {
            sheet.add_line(d.clone(), e.clone(), rows);
        }
    }
    MonthPart { sheet, names: s.names }
}
