//! Payroll's period: one line per employee (the shifts and rulebook versions used, days worked,
//! absent, on leave by kind, in half days, late count and minutes, hours worked, overtime as
//! the rules count it, overtime pending approval, rest-day minutes counted apart), built from the settled rows as they stream in, for
//! a payroll import to take as it is.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::domain::day::overtime::Hours;
use crate::domain::day::policy::DayStatus;
use crate::domain::report::table::{Cell, Table};

/// The kinds of leave, in the order of the payroll's columns (`leave add --kind`).
pub(crate) const LEAVE_KINDS: [&str; 6] = ["annual", "sick", "parental", "unpaid", "training", "other"];

#[derive(Debug, Clone, Default)]
struct Line {
    /// The department of the employee's latest row in the period.
    dept: (chrono::NaiveDate, String),
    /// Every shift the period's days were judged by.
    shifts: BTreeSet<String>,
    /// Days in halves: half a day of leave makes its day half worked (or half absent) and
    /// half on leave.
    worked_days: u64,
    absent: u64,
    leave: [u64; LEAVE_KINDS.len()],
    late: u64,
    late_minutes: u64,
    hours: Hours,
    /// Every rulebook version the period's days were judged by (0: the built-in defaults).
    versions: BTreeSet<u64>,
}

/// One settled row as payroll counts it.
#[derive(Debug, Clone)]
pub(crate) struct PayDay<'a> {
    pub employee: String,
    pub dept: String,
    pub date: chrono::NaiveDate,
    pub status: DayStatus,
    pub late_minutes: u32,
    /// The kind of the approved whole day of leave on an `on_leave` day.
    pub leave_kind: Option<&'a str>,
    /// The kind of the approved half day of leave that day, if any.
    pub half_leave_kind: Option<&'a str>,
    /// The shift the day was judged by.
    pub shift: &'a str,
    /// The rulebook version the day was judged by (`rulebook::version_on`).
    pub rulebook: u64,
    /// What the day counts, its week and the decision on its overtime included.
    pub hours: Hours,
}

/// The versions as payroll names them: their ids, comma-separated; `default` for days judged
/// by the built-in rules alone.
fn versions_text(versions: &BTreeSet<u64>) -> String {
    let ids: Vec<String> = versions
        .iter()
        .map(|v| if *v == 0 { "default".to_string() } else { v.to_string() })
        .collect();
    ids.join(",")
}

/// The column of a leave kind; a leave since cancelled, or of an unknown kind, is "other".
fn kind_at(kind: Option<&str>) -> usize {
    kind.and_then(|k| LEAVE_KINDS.iter().position(|x| *x == k))
        .unwrap_or(LEAVE_KINDS.len() - 1)
}

/// The period's lines, filled row by row.
#[derive(Debug, Clone, Default)]
pub(crate) struct Payroll {
    lines: BTreeMap<String, Line>,
}

impl Payroll {
    /// One settled row.
    pub(crate) fn add(&mut self, d: PayDay) {
        let l = self.lines.entry(d.employee).or_default();
        if l.dept.1.is_empty() || d.date >= l.dept.0 {
            l.dept = (d.date, d.dept);
        }
        if !l.shifts.contains(d.shift) {
            l.shifts.insert(d.shift.to_string());
        }
        use DayStatus::*;
        let status = d.status;
        // Half a day of leave on a day that was due: the other half is what the day was.
        let half = d.half_leave_kind.is_some() && !matches!(status, RestDay | OnLeave);
        let day = if half { 1 } else { 2 };
        if half {
            l.leave[kind_at(d.half_leave_kind)] += 1;
        }
        if matches!(
            status,
            Present | Late | EarlyLeave | LateAndEarly | MissingCheckout | MissingCheckin | HalfDayLeave | PartTime
        ) {
            l.worked_days += day;
        }
        if status == Absent {
            l.absent += day;
        }
        if status == OnLeave {
            l.leave[kind_at(d.leave_kind)] += 2;
        }
        l.late += u64::from(matches!(status, Late | LateAndEarly));
        l.late_minutes += u64::from(d.late_minutes);
        l.hours += d.hours;
        l.versions.insert(d.rulebook);
    }

    /// The lines by employee id, with names; `closed`: whether every month of the period is a
    /// closed pay period (its figures final), on every line.
    pub(crate) fn table(&self, names: &HashMap<String, String>, closed: bool) -> Table {
        let mut cols = vec!["employee", "name", "department", "shift", "days_worked", "absent_days"];
        let leave: Vec<String> = LEAVE_KINDS.iter().map(|k| format!("leave_{k}")).collect();
        cols.extend(leave.iter().map(String::as_str));
        cols.extend([
            "late_count",
            "late_minutes",
            "worked_minutes",
            "overtime_minutes",
            "overtime_pending_minutes",
            "rest_day_minutes",
            "rulebook_version",
            "period_closed",
        ]);
        let mut t = Table::new(&cols);
        for (e, l) in &self.lines {
            let shifts: Vec<&str> = l.shifts.iter().map(String::as_str).collect();
            let mut row = vec![
                Cell::text(e),
                Cell::text(names.get(e).map_or("", |n| n.as_str())),
                Cell::text(&l.dept.1),
                Cell::text(shifts.join(",")),
                Cell::Halves(l.worked_days),
                Cell::Halves(l.absent),
            ];
            row.extend(l.leave.iter().map(|n| Cell::Halves(*n)));
            row.extend([
                Cell::from(l.late),
                Cell::from(l.late_minutes),
                Cell::Minutes(i64::from(l.hours.worked)),
                Cell::Minutes(i64::from(l.hours.overtime)),
                Cell::Minutes(i64::from(l.hours.pending)),
                Cell::Minutes(i64::from(l.hours.rest_day)),
                Cell::text(versions_text(&l.versions)),
                Cell::typed(Cell::text(if closed { "yes" } else { "no" }), closed),
            ]);
            t.push(row);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(
        date: &str,
        status: DayStatus,
        leave: Option<&'static str>,
        half: Option<&'static str>,
        shift: &'static str,
    ) -> PayDay<'static> {
        PayDay {
            employee: "E1".into(),
            dept: if date == "2026-11-03" { "D2" } else { "D1" }.into(),
            date: date.parse().unwrap(),
            status,
            late_minutes: if status == DayStatus::Late { 12 } else { 0 },
            leave_kind: leave,
            half_leave_kind: half,
            shift,
            rulebook: 3,
            hours: if status == DayStatus::Late {
                Hours {
                    worked: 500,
                    overtime: 20,
                    rest_day: 0,
                    pending: 5,
                }
            } else {
                Hours::default()
            },
        }
    }

    #[test]
    fn a_line_counts_days_and_half_days_leave_by_kind_and_minutes() {
        let mut p = Payroll::default();
        p.add(day("2026-11-03", DayStatus::Late, None, None, "night"));
        p.add(day("2026-11-02", DayStatus::OnLeave, Some("sick"), None, "default"));
        p.add(day("2026-11-01", DayStatus::OnLeave, None, None, "default"));
        // Half a day of annual leave, the other half worked; half of sick leave, half absent.
        p.add(day(
            "2026-11-04",
            DayStatus::HalfDayLeave,
            None,
            Some("annual"),
            "default",
        ));
        p.add(day("2026-11-05", DayStatus::Absent, None, Some("sick"), "default"));
        let t = p.table(&HashMap::new(), false);
        let row = &t.rows[0];
        assert_eq!(row[2], Cell::text("D1"), "the latest row's department");
        assert_eq!(row[3], Cell::text("default,night"), "every shift used");
        assert_eq!(
            (row[4].plain(), row[5].plain()),
            ("1.5".into(), "0.5".into()),
            "days worked, absent"
        );
        assert_eq!(row[6].plain(), "0.5", "annual");
        assert_eq!(row[7].plain(), "1.5", "sick");
        assert_eq!(row[11].plain(), "1", "other");
        assert_eq!(
            row[12..16],
            [Cell::Int(1), Cell::Int(12), Cell::Minutes(500), Cell::Minutes(20)]
        );
        assert_eq!(row[16..19], [Cell::Minutes(5), Cell::Minutes(0), Cell::text("3")]);
    }
}
