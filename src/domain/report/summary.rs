//! A department's day at a glance, for the supervisor's live screen: who is in (on time or
//! late), not yet in, out (early or not). Pure: the caller reads the board and the names.

use std::collections::HashMap;

use crate::domain::day::record::DayRecord;
use crate::domain::day::shift_clock;

/// Employee ids by state, each list sorted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Summary {
    pub on_time: Vec<String>,
    pub late: Vec<String>,
    pub not_in: Vec<String>,
    pub out: Vec<String>,
    /// Out before the end of the day (also counted in `out`).
    pub early: Vec<String>,
}

/// Sum a department's board up, each employee judged by their own shift: `clock_of` gives
/// their day's clock.
pub(crate) fn summarize_by(
    board: &HashMap<String, DayRecord>,
    clock_of: impl Fn(&str) -> shift_clock::DayClock,
) -> Summary {
    let mut s = Summary::default();
    for (id, rec) in board {
        let clock = clock_of(id);
        let id = id.clone();
        match (rec.first_in(), rec.last_out()) {
            (None, None) => s.not_in.push(id),
            (Some(first), None) if clock.late_minutes(first) > 0 => s.late.push(id),
            (Some(_), None) => s.on_time.push(id),
            (_, Some(last)) => {
                if clock.early_minutes(last) > 0 {
                    s.early.push(id.clone());
                }
                s.out.push(id);
            }
        }
    }
    for v in [&mut s.on_time, &mut s.late, &mut s.not_in, &mut s.out, &mut s.early] {
        v.sort();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::day::policy::Policy;
    use chrono::NaiveDate;
    use chrono_tz::Tz;

    #[test]
    fn each_employee_lands_in_one_state() {
        let d = NaiveDate::from_ymd_opt(2026, 11, 30).unwrap();
        let board: HashMap<String, DayRecord> = [
            ("E1", ""),
            ("E2", "i30000"),
            ("E3", "i33000"),
            ("E4", "i30000,o50000"),
            ("E5", "i30000,o66000"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), DayRecord::parse(v)))
        .collect();
        let clock = shift_clock::DayClock::new(&Policy::default(), Tz::UTC, d);
        let s = summarize_by(&board, |_| clock);
        assert_eq!(s.not_in, ["E1"]);
        assert_eq!(s.on_time, ["E2"]);
        assert_eq!(s.late, ["E3"]);
        assert_eq!(s.out, ["E4", "E5"]);
        assert_eq!(s.early, ["E4"]);
    }
}
