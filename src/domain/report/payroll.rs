//! Payroll's period: one line per employee (days worked, absent, on leave by kind, late count
//! and minutes, hours worked and overtime), built from the settled rows as they stream in, for
//! a payroll import to take as it is.

use std::collections::{BTreeMap, HashMap};

use crate::domain::day::policy::DayStatus;
use crate::domain::day::worked::Hours;
use crate::domain::report::table::{Cell, Table};

/// The kinds of leave, in the order of the payroll's columns (`leave add --kind`).
pub(crate) const LEAVE_KINDS: [&str; 6] = ["annual", "sick", "parental", "unpaid", "training", "other"];

#[derive(Debug, Clone, Default)]
struct Line {
    /// The department of the employee's latest row in the period.
    dept: (chrono::NaiveDate, String),
    worked_days: u64,
    absent: u64,
    leave: [u64; LEAVE_KINDS.len()],
    late: u64,
    late_minutes: u64,
    hours: Hours,
}

/// The period's lines, filled row by row.
#[derive(Debug, Clone, Default)]
pub(crate) struct Payroll {
    lines: BTreeMap<String, Line>,
}

impl Payroll {
    /// One settled row; `leave_kind`: the approved leave's kind on an `on_leave` day.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn add(
        &mut self,
        employee: String,
        dept: String,
        date: chrono::NaiveDate,
        status: DayStatus,
        late_minutes: u32,
        leave_kind: Option<&str>,
        h: Hours,
    ) {
        let l = self.lines.entry(employee).or_default();
        if l.dept.1.is_empty() || date >= l.dept.0 {
            l.dept = (date, dept);
        }
        use DayStatus::*;
        l.worked_days += u64::from(matches!(
            status,
            Present | Late | EarlyLeave | LateAndEarly | MissingCheckout | MissingCheckin | HalfDayLeave | PartTime
        ));
        l.absent += u64::from(status == Absent);
        if status == OnLeave {
            let kind = leave_kind.and_then(|k| LEAVE_KINDS.iter().position(|x| *x == k));
            // A leave day whose leave was since cancelled, or of an unknown kind, is "other".
            l.leave[kind.unwrap_or(LEAVE_KINDS.len() - 1)] += 1;
        }
        l.late += u64::from(matches!(status, Late | LateAndEarly));
        l.late_minutes += u64::from(late_minutes);
        l.hours += h;
    }

    /// The lines by employee id, with names.
    pub(crate) fn table(&self, names: &HashMap<String, String>) -> Table {
        let mut cols = vec!["employee", "name", "department", "days_worked", "absent_days"];
        let leave: Vec<String> = LEAVE_KINDS.iter().map(|k| format!("leave_{k}")).collect();
        cols.extend(leave.iter().map(String::as_str));
        cols.extend(["late_count", "late_minutes", "worked_minutes", "overtime_minutes"]);
        let mut t = Table::new(&cols);
        for (e, l) in &self.lines {
            let mut row = vec![
                Cell::text(e),
                Cell::text(names.get(e).map_or("", |n| n.as_str())),
                Cell::text(&l.dept.1),
                Cell::from(l.worked_days),
                Cell::from(l.absent),
            ];
            row.extend(l.leave.iter().map(|n| Cell::from(*n)));
            row.extend([
                Cell::from(l.late),
                Cell::from(l.late_minutes),
                Cell::Minutes(i64::from(l.hours.worked)),
                Cell::Minutes(i64::from(l.hours.overtime)),
            ]);
            t.push(row);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_counts_days_leave_by_kind_and_minutes() {
        let d = |s: &str| s.parse::<chrono::NaiveDate>().unwrap();
        let mut p = Payroll::default();
        let h = Hours {
            worked: 500,
            overtime: 20,
        };
        p.add("E1".into(), "D2".into(), d("2026-11-03"), DayStatus::Late, 12, None, h);
        p.add(
            "E1".into(),
            "D1".into(),
            d("2026-11-02"),
            DayStatus::OnLeave,
            0,
            Some("sick"),
            Hours::default(),
        );
        p.add(
            "E1".into(),
            "D1".into(),
            d("2026-11-01"),
            DayStatus::OnLeave,
            0,
            None,
            Hours::default(),
        );
        let t = p.table(&HashMap::new());
        let row = &t.rows[0];
        assert_eq!(row[2], Cell::text("D2"), "the latest row's department");
        assert_eq!(row[3], Cell::Int(1));
        assert_eq!(row[6], Cell::Int(1), "sick");
        assert_eq!(row[10], Cell::Int(1), "other");
        assert_eq!(
            row[11..],
            [Cell::Int(1), Cell::Int(12), Cell::Minutes(500), Cell::Minutes(20)]
        );
    }
}
