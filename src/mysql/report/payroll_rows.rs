//! Payroll's reads, a slice of employees at a time so that memory follows the slice, not the
//! company: a keyset cursor over employee ids, each slice's rows in one read of its run of ids,
//! every day from the Monday of the period's first week, so that the weekly overtime threshold
//! (`domain::day::overtime::Tally`) sees every day of an employee's week. A thread of its own
//! reads the next slice while this one is counted and written ([`slices::ahead`]).

use std::collections::HashMap;

use anyhow::Result;
use chrono::NaiveDate;
use mysql::prelude::Queryable;

use crate::domain::day::overtime::{monday_of, Tally};
use crate::domain::day::policy::DayStatus;
use crate::domain::day::rulebook::version_on;
use crate::domain::day::worked::Days;
use crate::domain::report::payroll::{PayDay, Payroll};
use crate::mysql::people::{leave_rows, policy_rows};
use crate::mysql::report::slices::{self, DayRow, Decisions, Who};
use crate::mysql::Db;

/// Payroll's lines of a slice of employees, and their names.
pub(crate) struct PayrollPart {
    pub payroll: Payroll,
    pub names: HashMap<String, String>,
}

/// A slice as read: its employees' names, rows, whole days of leave and overtime decisions.
struct Slice {
    names: Vec<(String, String)>,
    rows: Vec<DayRow>,
    leave: leave_rows::WholeDays,
    decisions: Decisions,
}

/// Payroll's lines for a period, given to `each` a slice of `slice` employees at a time, in id
/// order, with the kind of the approved leave of each day on leave (approved leave never
/// overlaps, so a day matches one leave at most). The days before the period count only toward
/// their week's overtime threshold.
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
    drop(conn);
    let dates: Vec<NaiveDate> = monday.iter_days().take_while(|x| *x <= to).collect();
    let read = |give: &mut dyn FnMut(Slice) -> bool| -> Result<()> {
        let mut conn = pool.get_conn()?;
        let mut after = String::new();
        loop {
            let names: Vec<(String, String)> = conn.exec(
                "SELECT id, name FROM employees WHERE id > ? ORDER BY id LIMIT ?",
                (after.as_str(), slice.max(1) as u64),
            )?;
            let (Some((first, _)), Some((last, _))) = (names.first(), names.last()) else {
                return Ok(());
            };
            let who = Who::Range(first, last);
            let decisions = slices::decisions(&mut conn, who, &dates)?;
            let (filter, params) = slices::whom(who, "employee_id");
            let leave = leave_rows::whole_days(&mut conn, &filter, params, monday, to)?;
            let rows = slices::read_rows(&mut conn, who, &dates, true, |_| true)?;
            after = last.clone();
            let s = Slice {
                names,
                rows,
                leave,
                decisions,
            };
            if !give(s) {
                return Ok(());
            }
        }
    };
    slices::ahead(read, |s| {
        let mut tally = Tally::new(s.decisions);
        let mut payroll = Payroll::default();
        for r in s.rows {
            let (shift, day) = days.of(&r.employee, &r.dept, r.date);
            let split = day.stored_split(r.status, halves.on(&r.employee, r.date), r.first_in, r.last_out);
            let h = tally.day(day.rules(), &r.employee, r.date, split);
            if r.date < from {
                continue;
            }
            let leave_kind = if r.status == DayStatus::OnLeave {
                s.leave.kind_on(&r.employee, r.date)
            } else {
                None
            };
            let half_leave_kind = halves.half_on(&r.employee, r.date).map(|(_, k)| k);
            payroll.add(PayDay {
                employee: r.employee,
                dept: r.dept,
                date: r.date,
                status: r.status,
                late_minutes: r.late_minutes,
                leave_kind,
                half_leave_kind,
                shift: &shift.name,
                rulebook: version_on(&versions, r.date),
                hours: h,
            });
        }
        let names = s.names.into_iter().collect();
        each(PayrollPart { payroll, names })?;
        Ok(true)
    })
}
