//! The oracle: what each settled row must be, recomputed from the harness's own model (the
//! punches it saw acknowledged and not voided, leave, the calendar, the two shifts, employment dates,
//! corrections) by the rules as docs/settle.md and docs/shifts.md state them. It shares no code
//! with the product: not its rules, not its formats.

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};

use super::model::{local, Kind, World};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub status: String,
    /// UTC, `YYYY-MM-DD HH:MM:SS`, as MySQL stores it.
    pub first_in: Option<String>,
    pub last_out: Option<String>,
    pub late: u32,
    pub early: u32,
    pub corrected: bool,
}

/// Whole minutes, a started minute counted.
fn minutes_up(secs: i64) -> u32 {
    ((secs + 59) / 60) as u32
}

fn stamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S").to_string()
}

/// Every row day `d` must have: one per employee employed that day.
pub fn expected(w: &World, d: NaiveDate) -> BTreeMap<String, Row> {
    let mut rows = BTreeMap::new();
    for e in w.emps.iter().filter(|e| e.employed(d)) {
        let mine: Vec<_> = w
            .acked
            .iter()
            .filter(|p| p.emp == e.id && w.work_date(p) == d && !w.voided.contains(p))
            .collect();
        let first_in = mine.iter().filter(|p| p.kind == Kind::In).map(|p| p.at).min();
        let mut last_out = mine.iter().filter(|p| p.kind == Kind::Out).map(|p| p.at).max();
        let corrected = w.corrections.get(&(e.id.clone(), d));
        if let Some(out) = corrected {
            last_out = Some(*out);
        }
        // The shift's start, end and graces; half a day of leave moves the start (a morning
        // off) or the end (an afternoon off) to the middle of the day shift, 13:30.
        let half = w.half_leave.get(&(e.id.clone(), d)).copied();
        let (start, end, late_grace, early_grace) = if e.night {
            (local(d, 22, 0, 0), local(d.succ_opt().unwrap(), 6, 0, 0), 10, 5)
        } else {
            match half {
                Some(true) => (local(d, 13, 30, 0), local(d, 18, 0, 0), 0, 0),
                Some(false) => (local(d, 9, 0, 0), local(d, 13, 30, 0), 0, 0),
                None => (local(d, 9, 0, 0), local(d, 18, 0, 0), 0, 0),
            }
        };
        let row = |status: &str, late: u32, early: u32| Row {
            status: status.to_string(),
            first_in: first_in.map(stamp),
            last_out: last_out.map(stamp),
            late,
            early,
            corrected: corrected.is_some(),
        };
        let r = if !w.workday(e, d) {
            row("rest_day", 0, 0)
        } else {
            let late = first_in
                .filter(|t| *t > start + Duration::minutes(late_grace))
                .map_or(0, |t| minutes_up((t - start).num_seconds()));
            let early = last_out
                .filter(|t| *t < end - Duration::minutes(early_grace))
                .map_or(0, |t| minutes_up((end - t).num_seconds()));
            let status = match (first_in, last_out) {
                (None, None) if w.leave.contains(&(e.id.clone(), d)) => "on_leave",
                (None, None) => "absent",
                (Some(_), None) => "missing_checkout",
                (None, Some(_)) => "missing_checkin",
                (Some(_), Some(_)) => match (late > 0, early > 0) {
                    (false, false) if half.is_some() => "half_day_leave",
                    (false, false) => "present",
                    (true, false) => "late",
                    (false, true) => "early_leave",
                    (true, true) => "late_and_early",
                },
            };
            row(status, late, early)
        };
        rows.insert(e.id.clone(), r);
    }
    rows
}
