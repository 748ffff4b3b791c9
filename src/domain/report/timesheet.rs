//! One employee's month as a timesheet: a row per day of the month (the days without a settled
//! row too, blank), each with its shift, punches and how they came, break, worked, late, early
//! and overtime minutes, status and leave; a totals row that is the sum of the rows (days by
//! status, leave days by kind in halves, every minute column).

use std::collections::BTreeMap;

use chrono::NaiveDate;
use chrono_tz::Tz;
use serde_json::{json, Value};

use crate::domain::day::overtime::Hours;
use crate::domain::day::policy::DayStatus;
use crate::domain::day::worked::Half;
use crate::domain::instant;
use crate::domain::report::table::{local_time, Cell, Table};

/// The columns, as CSV heads them (JSON: `date` is `work_date`).
pub(crate) const COLUMNS: [&str; 14] = [
    "date",
    "weekday",
    "shift",
    "first_in",
    "last_out",
    "punches",
    "break_minutes",
    "worked_minutes",
    "late_minutes",
    "early_minutes",
    "overtime_minutes",
    "status",
    "leave_kind",
    "leave_half",
];

/// One punch of the day, from the punch log.
#[derive(Debug, Clone)]
pub(crate) struct Punch {
    /// `in` or `out`.
    pub kind: String,
    /// UTC.
    pub at: chrono::NaiveDateTime,
    /// `live`, `bulk`, `recovered`, `approved`, `corrected`, `voided`.
    pub how: String,
}

/// A settled row of the day, with its hours as the worked-day model reads them.
#[derive(Debug, Clone)]
pub(crate) struct Settled {
    pub status: DayStatus,
    /// UTC.
    pub first_in: Option<chrono::NaiveDateTime>,
    pub last_out: Option<chrono::NaiveDateTime>,
    pub late_minutes: u32,
    pub early_minutes: u32,
    pub break_minutes: u32,
    pub hours: Hours,
}

/// One day of the month.
#[derive(Debug, Clone)]
pub(crate) struct SheetDay {
    pub date: NaiveDate,
    /// The shift the day is judged by; `None` outside the employment.
    pub shift: Option<String>,
    /// The approved leave on the day: its kind, and the half off for half a day.
    pub leave: Option<(String, Option<Half>)>,
    /// `None`: no settled row (outside the employment, or not settled yet).
    pub settled: Option<Settled>,
    pub punches: Vec<Punch>,
}

fn half_name(h: Half) -> &'static str {
    match h {
        Half::Morning => "morning",
        Half::Afternoon => "afternoon",
    }
}

/// The punches cell: `in 08:55 live, out 18:02 bulk`; in JSON each punch as an object.
fn punches_cell(tz: Tz, punches: &[Punch]) -> Cell {
    let shown: Vec<String> = punches
        .iter()
        .map(|p| format!("{} {} {}", p.kind, local_time(tz, Some(p.at)).plain(), p.how))
        .collect();
    let json: Vec<Value> = punches
        .iter()
        .map(|p| json!({ "kind": p.kind, "at": instant::text_in(tz, &p.at.and_utc()), "how": p.how }))
        .collect();
    Cell::typed(Cell::Text(shown.join(", ")), json)
}

/// A count in halves as text: `3`, `2.5`.
fn halves_text(n: u64) -> String {
    Cell::Halves(n).plain()
}

/// The timesheet of `days` (each day of the month, in order), times in `tz`.
pub(crate) fn table(tz: Tz, days: &[SheetDay]) -> Table {
    let mut t = Table::new(&COLUMNS);
    let (mut late, mut early, mut brk) = (0u64, 0u64, 0u64);
    let mut hours = Hours::default();
    let mut by_status = BTreeMap::<&str, u64>::new();
    let mut leave_halves = BTreeMap::<String, u64>::new();
    let mut settled_days = 0u64;
    for d in days {
        let minutes = |m: Option<u32>| m.map_or(Cell::Null, |m| Cell::Minutes(m.into()));
        let s = d.settled.as_ref();
        if let Some(s) = s {
            settled_days += 1;
            late += u64::from(s.late_minutes);
            early += u64::from(s.early_minutes);
            brk += u64::from(s.break_minutes);
            hours += s.hours;
            *by_status.entry(s.status.as_str()).or_default() += 1;
            // A settled day on leave counts its leave: a whole day as two halves, half a day as one.
            if let Some((kind, half)) = &d.leave {
                if s.status == DayStatus::OnLeave || half.is_some() {
                    *leave_halves.entry(kind.clone()).or_default() += if half.is_some() { 1 } else { 2 };
                }
            }
        }
        t.push(vec![
            Cell::Date(d.date),
            Cell::Text(d.date.format("%a").to_string()),
            d.shift.clone().map_or(Cell::Null, Cell::Text),
            local_time(tz, s.and_then(|s| s.first_in)),
            local_time(tz, s.and_then(|s| s.last_out)),
            punches_cell(tz, &d.punches),
            minutes(s.map(|s| s.break_minutes)),
            minutes(s.map(|s| s.hours.worked)),
            minutes(s.map(|s| s.late_minutes)),
            minutes(s.map(|s| s.early_minutes)),
            minutes(s.map(|s| s.hours.overtime)),
            s.map_or(Cell::Null, |s| Cell::text(s.status.as_str())),
            d.leave.as_ref().map_or(Cell::Null, |(k, _)| Cell::text(k)),
            d.leave
                .as_ref()
                .and_then(|(_, h)| *h)
                .map_or(Cell::Null, |h| Cell::text(half_name(h))),
        ]);
    }
    let counts: Vec<String> = by_status.iter().map(|(s, n)| format!("{s} {n}")).collect();
    let leave: Vec<String> = leave_halves
        .iter()
        .map(|(k, n)| format!("{k} {}", halves_text(*n)))
        .collect();
    let leave_json: serde_json::Map<String, Value> = leave_halves
        .iter()
        .map(|(k, n)| {
            let v = if n % 2 == 0 {
                Value::from(n / 2)
            } else {
                Value::from(*n as f64 / 2.0)
            };
            (k.clone(), v)
        })
        .collect();
    t.push(vec![
        Cell::text("total"),
        Cell::typed(
            Cell::text(format!(
                "{settled_days} day{}",
                if settled_days == 1 { "" } else { "s" }
            )),
            settled_days,
        ),
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Null,
        Cell::Minutes(brk as i64),
        Cell::Minutes(hours.worked.into()),
        Cell::Minutes(late as i64),
        Cell::Minutes(early as i64),
        Cell::Minutes(hours.overtime.into()),
        Cell::typed(Cell::Text(counts.join(", ")), json!(by_status)),
        Cell::typed(Cell::Text(leave.join(", ")), Value::Object(leave_json)),
        Cell::Null,
    ]);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(date: &str, settled: Option<Settled>, leave: Option<(String, Option<Half>)>) -> SheetDay {
        SheetDay {
            date: date.parse().unwrap(),
            shift: Some("day".into()),
            leave,
            settled,
            punches: Vec::new(),
        }
    }

    fn settled(status: DayStatus, worked: u32, overtime: u32, brk: u32, late: u32) -> Option<Settled> {
        Some(Settled {
            status,
            first_in: None,
            last_out: None,
            late_minutes: late,
            early_minutes: 0,
            break_minutes: brk,
            hours: Hours {
                worked,
                overtime,
                ..Hours::default()
            },
        })
    }

    #[test]
    fn the_totals_are_the_rows_summed_and_blank_days_count_nothing() {
        let tz = chrono_tz::UTC;
        let days = [
            day("2026-11-02", settled(DayStatus::Late, 470, 0, 60, 10), None),
            day(
                "2026-11-03",
                settled(DayStatus::HalfDayLeave, 240, 0, 30, 0),
                Some(("annual".into(), Some(Half::Morning))),
            ),
            day(
                "2026-11-04",
                settled(DayStatus::OnLeave, 0, 0, 0, 0),
                Some(("sick".into(), None)),
            ),
            day("2026-11-05", None, None),
        ];
        let t = table(tz, &days);
        assert_eq!(t.rows.len(), 5, "a row a day, and the totals");
        let v: Value = serde_json::from_str(&t.to_json()).unwrap();
        let totals = &v["totals"];
        assert_eq!(totals["days"], 3);
        assert_eq!(totals["worked_minutes"], 710);
        assert_eq!(totals["break_minutes"], 90);
        assert_eq!(totals["late_minutes"], 10);
        assert_eq!(totals["counts"], json!({"late": 1, "half_day_leave": 1, "on_leave": 1}));
        assert_eq!(totals["leave_kind"], json!({"annual": 0.5, "sick": 1}));
        let blank = &v["rows"][3];
        assert_eq!(
            (blank["status"].clone(), blank["worked_minutes"].clone()),
            (Value::Null, Value::Null)
        );
        assert_eq!(v["rows"][1]["leave_half"], "morning");
    }
}
