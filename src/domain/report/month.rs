//! HR's month sheet: one line per employee and department, a short status code per day, totals
//! per line (days present, late, absent, on leave, hours) and per day. Built from the settled
//! rows as they stream in, in any order; a day with no row (before joining, after leaving, not
//! settled) stays blank.

use std::collections::{BTreeMap, HashMap};

use chrono::{Datelike, NaiveDate};

use crate::domain::day::overtime::Hours;
use crate::domain::day::policy::DayStatus;
use crate::domain::report::table::{Cell, Table};

/// The code of a day in the sheet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Code {
    Present,
    Late,
    EarlyLeave,
    LateAndEarly,
    MissingOut,
    MissingIn,
    Absent,
    Leave,
    Holiday,
    Rest,
    HalfLeave,
    PartTime,
}

impl Code {
    pub(crate) const ALL: [Code; 12] = [
        Code::Present,
        Code::Late,
        Code::EarlyLeave,
        Code::LateAndEarly,
        Code::MissingOut,
        Code::MissingIn,
        Code::Absent,
        Code::Leave,
        Code::Holiday,
        Code::Rest,
        Code::HalfLeave,
        Code::PartTime,
    ];

    /// A settled status; a rest day that the calendar calls a holiday is a holiday.
    pub(crate) fn of(status: DayStatus, holiday: bool) -> Code {
        match status {
            DayStatus::Present => Code::Present,
            DayStatus::Late => Code::Late,
            DayStatus::EarlyLeave => Code::EarlyLeave,
            DayStatus::LateAndEarly => Code::LateAndEarly,
            DayStatus::MissingCheckout => Code::MissingOut,
            DayStatus::MissingCheckin => Code::MissingIn,
            DayStatus::Absent => Code::Absent,
            DayStatus::OnLeave => Code::Leave,
            DayStatus::RestDay if holiday => Code::Holiday,
            DayStatus::RestDay => Code::Rest,
            DayStatus::HalfDayLeave => Code::HalfLeave,
            DayStatus::PartTime => Code::PartTime,
        }
    }

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Code::Present => "P",
            Code::Late => "L",
            Code::EarlyLeave => "E",
            Code::LateAndEarly => "LE",
            Code::MissingOut => "MO",
            Code::MissingIn => "MI",
            Code::Absent => "A",
            Code::Leave => "V",
            Code::Holiday => "H",
            Code::Rest => "R",
            Code::HalfLeave => "HV",
            Code::PartTime => "PT",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == s)
    }

    fn meaning(self) -> &'static str {
        match self {
            Code::Present => "present, on time",
            Code::Late => "late",
            Code::EarlyLeave => "left early",
            Code::LateAndEarly => "late and left early",
            Code::MissingOut => "checked in, no check-out",
            Code::MissingIn => "checked out, no check-in",
            Code::Absent => "absent",
            Code::Leave => "on leave",
            Code::Holiday => "holiday",
            Code::Rest => "rest day",
            Code::HalfLeave => "half a day on leave, the other half worked as expected",
            Code::PartTime => "a part-time shift worked",
        }
    }

    /// A workbook cell's fill: greens for days worked, amber for late or early, red for absent.
    pub(crate) fn colour(self) -> &'static str {
        match self {
            Code::Present | Code::PartTime => "#C6EFCE",
            Code::HalfLeave => "#DDEBF7",
            Code::Late | Code::EarlyLeave | Code::LateAndEarly => "#FFEB9C",
            Code::MissingOut | Code::MissingIn => "#F8CBAD",
            Code::Absent => "#FFC7CE",
            Code::Leave => "#BDD7EE",
            Code::Holiday | Code::Rest => "#E7E6E6",
        }
    }

    /// The employee came: any punch.
    fn came(self) -> bool {
        matches!(
            self,
            Code::Present
                | Code::Late
                | Code::EarlyLeave
                | Code::LateAndEarly
                | Code::MissingOut
                | Code::MissingIn
                | Code::HalfLeave
                | Code::PartTime
        )
    }
}

/// The codes and what they mean, as a two-column table.
pub(crate) fn legend() -> Table {
    let mut t = Table::new(&["code", "meaning"]);
    for c in Code::ALL {
        t.push(vec![Cell::text(c.as_str()), Cell::text(c.meaning())]);
    }
    t
}

/// The last day of the month that starts on `first`.
pub(crate) fn last_day(first: NaiveDate) -> NaiveDate {
    let next = if first.month() == 12 {
        NaiveDate::from_ymd_opt(first.year() + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(first.year(), first.month() + 1, 1)
    };
    next.and_then(|n| n.pred_opt()).unwrap_or(first)
}

/// One employee's month in one department.
#[derive(Debug, Clone, Default)]
struct Line {
    days: Vec<Option<Code>>,
    present: u64,
    late: u64,
    absent: u64,
    leave: u64,
    hours: Hours,
}

/// The sheet, filled row by row.
#[derive(Debug, Clone)]
pub(crate) struct MonthSheet {
    days: usize,
    lines: BTreeMap<(String, String), Line>,
}

pub(crate) const TOTAL_COLUMNS: [&str; 6] = [
    "present_days",
    "late_days",
    "absent_days",
    "leave_days",
    "worked_minutes",
    "overtime_minutes",
];

impl MonthSheet {
    pub(crate) fn new(first: NaiveDate) -> MonthSheet {
        MonthSheet {
            days: last_day(first).day() as usize,
            lines: BTreeMap::new(),
        }
    }

    /// One settled row: `dept`'s `employee` on `date` (in the month).
    #[cfg(test)]
    pub(crate) fn add(&mut self, dept: String, employee: String, date: NaiveDate, code: Code, h: Hours) {
        self.add_line(dept, employee, [(date, code, h)]);
    }

    /// Settled rows of one line: `dept`'s `employee` on each date (in the month).
    pub(crate) fn add_line(
        &mut self,
        dept: String,
        employee: String,
        rows: impl IntoIterator<Item = (NaiveDate, Code, Hours)>,
    ) {
        let days = self.days;
        let line = self.lines.entry((dept, employee)).or_insert_with(|| Line {
            days: vec![None; days],
            ..Line::default()
        });
        for (date, code, h) in rows {
            if let Some(cell) = line.days.get_mut(date.day0() as usize) {
                *cell = Some(code);
            }
            line.present += u64::from(code.came());
            line.late += u64::from(matches!(code, Code::Late | Code::LateAndEarly));
            line.absent += u64::from(code == Code::Absent);
            line.leave += u64::from(code == Code::Leave);
            line.hours += h;
        }
    }

    /// The departments on the sheet, in order.
    pub(crate) fn departments(&self) -> Vec<String> {
        let mut d: Vec<String> = self.lines.keys().map(|(d, _)| d.clone()).collect();
        d.dedup();
        d
    }

    /// The sheet's columns: department, employee, name, a column per day, the totals.
    pub(crate) fn columns(&self) -> Vec<String> {
        let mut cols: Vec<String> = vec!["department".into(), "employee".into(), "name".into()];
        cols.extend((1..=self.days).map(|d| format!("{d:02}")));
        cols.extend(TOTAL_COLUMNS.iter().map(|c| c.to_string()));
        cols
    }

    /// Take in the lines of `other`, a sheet of the same month (another department, other
    /// employees).
    pub(crate) fn absorb(&mut self, other: MonthSheet) {
        self.lines.extend(other.lines);
    }

    /// The lines (only `dept`'s, if given) as rows, in department and employee order, each
    /// added to `sum`.
    pub(crate) fn rows(
        &self,
        names: &HashMap<String, String>,
        dept: Option<&str>,
        sum: &mut SheetSum,
    ) -> Vec<Vec<Cell>> {
        let mut rows = Vec::new();
        for ((d, e), line) in self.lines.iter().filter(|((d, _), _)| dept.is_none_or(|x| x == d)) {
            let mut row = vec![
                Cell::text(d),
                Cell::text(e),
                Cell::text(names.get(e).map_or("", |n| n.as_str())),
            ];
            if sum.came.len() < self.days {
                sum.came.resize(self.days, 0);
            }
            for (i, c) in line.days.iter().enumerate() {
                sum.came[i] += u64::from(c.is_some_and(Code::came));
                row.push(c.map_or(Cell::Null, |c| Cell::text(c.as_str())));
            }
            row.extend(totals(line));
            sum.line.present += line.present;
            sum.line.late += line.late;
            sum.line.absent += line.absent;
            sum.line.leave += line.leave;
            sum.line.hours += line.hours;
            sum.lines += 1;
            rows.push(row);
        }
        rows
    }

    /// The sheet as a table (only `dept`'s lines, if given): department, employee, name, a
    /// column per day, the totals; and a last row `total` counting, per day, who came, and
    /// summing the totals.
    pub(crate) fn table(&self, names: &HashMap<String, String>, dept: Option<&str>) -> Table {
        let mut sum = SheetSum::default();
        let mut t = Table {
            columns: self.columns(),
            rows: self.rows(names, dept, &mut sum),
        };
        t.rows.extend(sum.row());
        t
    }
}

/// The totals row of a sheet written a part at a time: per day, who came; the lines' totals summed.
#[derive(Debug, Default)]
pub(crate) struct SheetSum {
    came: Vec<u64>,
    line: Line,
    lines: u64,
}

impl SheetSum {
    /// The row `total`, or none when no line was added.
    pub(crate) fn row(&self) -> Option<Vec<Cell>> {
        if self.lines == 0 {
            return None;
        }
        let mut row = vec![Cell::text("total"), Cell::Null, Cell::Null];
        row.extend(self.came.iter().copied().map(Cell::from));
        row.extend(totals(&self.line));
        Some(row)
    }
}

fn totals(l: &Line) -> [Cell; 6] {
    [
        Cell::from(l.present),
        Cell::from(l.late),
        Cell::from(l.absent),
        Cell::from(l.leave),
        Cell::Minutes(i64::from(l.hours.worked)),
        Cell::Minutes(i64::from(l.hours.overtime)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn months_end_on_their_last_day() {
        assert_eq!(last_day(d("2026-02-01")), d("2026-02-28"));
        assert_eq!(last_day(d("2028-02-01")), d("2028-02-29"));
        assert_eq!(last_day(d("2026-12-01")), d("2026-12-31"));
    }

    #[test]
    fn a_sheet_counts_per_line_and_per_day() {
        let mut s = MonthSheet::new(d("2026-11-01"));
        let h = Hours {
            worked: 480,
            overtime: 5,
            ..Hours::default()
        };
        s.add("D1".into(), "E2".into(), d("2026-11-02"), Code::Late, h);
        s.add("D1".into(), "E1".into(), d("2026-11-02"), Code::Present, h);
        s.add(
            "D1".into(),
            "E1".into(),
            d("2026-11-03"),
            Code::Absent,
            Hours::default(),
        );
        s.add(
            "D2".into(),
            "E3".into(),
            d("2026-11-01"),
            Code::Holiday,
            Hours::default(),
        );
        let names = HashMap::from([("E1".to_string(), "Ann".to_string())]);
        let t = s.table(&names, Some("D1"));
        assert_eq!(t.columns.len(), 3 + 30 + 6);
        assert_eq!(t.rows.len(), 3, "two lines and the totals");
        assert_eq!(t.rows[0][1], Cell::text("E1"), "lines in id order");
        assert_eq!(t.rows[0][2], Cell::text("Ann"));
        assert_eq!(t.rows[0][3], Cell::Null, "no row: blank");
        assert_eq!(t.rows[0][4], Cell::text("P"));
        assert_eq!(t.rows[0][5], Cell::text("A"));
        let total = &t.rows[2];
        assert_eq!(total[4], Cell::Int(2), "two came on the 2nd");
        assert_eq!(total[5], Cell::Int(0));
        assert_eq!(
            total[33..],
            [
                Cell::Int(2),
                Cell::Int(1),
                Cell::Int(1),
                Cell::Int(0),
                Cell::Minutes(960),
                Cell::Minutes(10)
            ]
        );
        assert_eq!(s.departments(), ["D1", "D2"]);
        assert_eq!(s.table(&names, None).rows.len(), 4);
    }
}
