//! The timesheet's reads: one employee's settled rows, punch log and approved leave over a
//! month, judged day by day by the worked-day model.

use std::collections::HashMap;

use anyhow::Result;
use chrono::{NaiveDate, NaiveDateTime};
use mysql::prelude::Queryable;

use crate::domain::day::policy::DayStatus;
use crate::domain::day::worked::{Days, Half, Leave};
use crate::domain::report::month::last_day;
use crate::domain::report::timesheet::{Punch, Settled, SheetDay};
use crate::error::Error;
use crate::mysql::typed::Cols;
use crate::mysql::Db;

/// Who the timesheet is of: their name and department (today's).
pub(crate) struct Whom {
    pub name: String,
    pub department: String,
}

/// A settled row as read: its department, status, punches (UTC) and lateness.
struct Row {
    dept: String,
    status: DayStatus,
    first_in: Option<NaiveDateTime>,
    last_out: Option<NaiveDateTime>,
    late: u32,
    early: u32,
}

/// Each day of the month that starts on `first` for employee `id` (known to exist), and who
/// they are.
pub(crate) fn month(pool: &Db, days: &mut Days, id: &str, first: NaiveDate) -> Result<(Whom, Vec<SheetDay>)> {
    let last = last_day(first);
    let mut conn = pool.get_conn()?;
    let (name, department, start, end): (String, String, Option<NaiveDate>, Option<NaiveDate>) = conn
        .exec_first(
            "SELECT name, department_id, start_date, end_date FROM employees WHERE id = ?",
            (id,),
        )?
        .ok_or_else(|| Error::refused(format!("unknown employee '{id}'")))?;
    let mut rows: HashMap<NaiveDate, Row> = HashMap::new();
    let stored: Vec<mysql::Row> = conn.exec(
        "SELECT work_date, department_id, CAST(status AS CHAR), first_in, last_out, late_minutes, early_minutes \
         FROM attendance WHERE employee_id = ? AND work_date BETWEEN ? AND ?",
        (id, first, last),
    )?;
    for r in stored {
        let mut c = Cols::new(r, "attendance row");
        let (date, dept, status): (NaiveDate, String, String) = (c.get(0)?, c.get(1)?, c.get(2)?);
        let status = DayStatus::parse(&status)
            .ok_or_else(|| Error::internal(format!("attendance row {date} {id}: unknown status '{status}'")))?;
        let row = Row {
            dept,
            status,
            first_in: c.get(3)?,
            last_out: c.get(4)?,
            late: c.get(5)?,
            early: c.get(6)?,
        };
        rows.insert(date, row);
    }
    // Approved leave never overlaps: a day has one at most.
    let leaves: Vec<(NaiveDate, NaiveDate, String, Option<String>)> = conn.exec(
        "SELECT from_date, to_date, kind, half FROM leaves \
         WHERE employee_id = ? AND status = 'approved' AND from_date <= ? AND to_date >= ?",
        (id, last, first),
    )?;
    let mut punches: HashMap<NaiveDate, Vec<Punch>> = HashMap::new();
    for p in crate::mysql::punch_log::list(&mut conn, first, last, Some(id), None)? {
        punches.entry(p.work_date).or_default().push(Punch {
            kind: p.kind,
            at: p.at,
            how: p.how,
        });
    }
    let employed = |d: NaiveDate| start.is_none_or(|s| s <= d) && end.is_none_or(|e| d <= e);
    let mut out = Vec::new();
    for date in first.iter_days().take_while(|d| *d <= last) {
        let leave = leaves
            .iter()
            .find(|(f, t, ..)| *f <= date && date <= *t)
            .map(|(_, _, k, h)| (k.clone(), h.as_deref().and_then(Half::parse)));
        let row = rows.remove(&date);
        let dept = row.as_ref().map_or(department.as_str(), |r| r.dept.as_str());
        let shift = (row.is_some() || employed(date)).then(|| days.of(id, dept, date));
        let settled = match (row, shift) {
            (Some(r), Some((_, day))) => {
                let half = leave.as_ref().and_then(|(_, h)| *h).map_or(Leave::None, Leave::Half);
                let (hours, break_minutes) = day.stored_day(r.status, half, r.first_in, r.last_out);
                Some(Settled {
                    status: r.status,
                    first_in: r.first_in,
                    last_out: r.last_out,
                    late_minutes: r.late,
                    early_minutes: r.early,
                    break_minutes,
                    hours,
                })
            }
            _ => None,
        };
        out.push(SheetDay {
            date,
            shift: shift.map(|(s, _)| s.name.clone()),
            leave,
            settled,
            punches: punches.remove(&date).unwrap_or_default(),
        });
    }
    Ok((Whom { name, department }, out))
}
