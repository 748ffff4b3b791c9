//! The roll call: who is in right now (their latest punch of the day is a check-in), per
//! department, from the day's boards; and the counts of each department's board. Pure: the
//! caller reads the boards and the names.

use std::collections::HashMap;

use chrono::NaiveDate;
use chrono_tz::Tz;

use super::day_record::DayRecord;
use super::table::{local_time, Cell, Table};

/// Someone in right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Present {
    pub department_id: String,
    pub employee_id: String,
    /// Their latest check-in, seconds into the day.
    pub since: i64,
}

/// One department's board in numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub department_id: String,
    pub in_now: u64,
    /// Came and went.
    pub out: u64,
    pub not_yet_in: u64,
    /// Fields on the board: those laid out, and anyone who punched.
    pub on_board: u64,
}

/// The day's roll call: the people in, by department then id, and every department's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RollCall {
    pub present: Vec<Present>,
    pub departments: Vec<Counts>,
}

impl RollCall {
    /// From each department's board of the day (departments in the order given).
    pub(crate) fn of(boards: Vec<(String, HashMap<String, DayRecord>)>) -> RollCall {
        let mut r = RollCall::default();
        for (dept, board) in boards {
            let mut c = Counts {
                department_id: dept.clone(),
                on_board: board.len() as u64,
                ..Counts::default()
            };
            let mut here: Vec<Present> = Vec::new();
            for (emp, rec) in board {
                match (rec.in_since(), rec.punches.is_empty()) {
                    (Some(since), _) => here.push(Present {
                        department_id: dept.clone(),
                        employee_id: emp,
                        since,
                    }),
                    (None, true) => c.not_yet_in += 1,
                    (None, false) => c.out += 1,
                }
            }
            c.in_now = here.len() as u64;
            here.sort_by(|a, b| a.employee_id.cmp(&b.employee_id));
            r.present.extend(here);
            r.departments.push(c);
        }
        r
    }

    pub(crate) fn in_now(&self) -> u64 {
        self.present.len() as u64
    }

    /// One row per person in: department, employee, name (from `names`, empty when unknown),
    /// in since (the company's zone).
    pub(crate) fn people(&self, names: &HashMap<String, String>, tz: Tz, date: NaiveDate) -> Table {
        let mut t = Table::new(&["department", "employee", "name", "in since"]);
        for p in &self.present {
            let at = super::policy::instant(tz, date, p.since).naive_utc();
            t.push(vec![
                Cell::text(&p.department_id),
                Cell::text(&p.employee_id),
                Cell::text(names.get(&p.employee_id).cloned().unwrap_or_default()),
                local_time(tz, Some(at)),
            ]);
        }
        t
    }

    /// One row per department: in now, out, not yet in, on the board.
    pub(crate) fn counts(&self) -> Table {
        let mut t = Table::new(&["department", "in", "out", "not yet in", "on the board"]);
        for c in &self.departments {
            let n = |v: u64| Cell::Int(i64::try_from(v).unwrap_or(i64::MAX));
            t.push(vec![
                Cell::text(&c.department_id),
                n(c.in_now),
                n(c.out),
                n(c.not_yet_in),
                n(c.on_board),
            ]);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_now_is_the_latest_punch_being_a_check_in() {
        let board = |v: &[(&str, &str)]| -> HashMap<String, DayRecord> {
            v.iter().map(|(k, v)| (k.to_string(), DayRecord::parse(v))).collect()
        };
        let r = RollCall::of(vec![
            (
                "D1".into(),
                board(&[
                    ("E1", "i30000"),
                    ("E2", "i30000,o43000,i46000"),
                    ("E3", "i30000,o43000"),
                    ("E4", ""),
                    ("E5", "o40000,i40000"),
                ]),
            ),
            ("D2".into(), board(&[])),
        ]);
        let ids: Vec<(&str, i64)> = r.present.iter().map(|p| (p.employee_id.as_str(), p.since)).collect();
        assert_eq!(ids, [("E1", 30000), ("E2", 46000)]);
        assert_eq!(
            r.departments[0],
            Counts {
                department_id: "D1".into(),
                in_now: 2,
                out: 2,
                not_yet_in: 1,
                on_board: 5
            }
        );
        assert_eq!((r.departments[1].on_board, r.in_now()), (0, 2));
        let t = r.people(
            &HashMap::from([("E1".to_string(), "Ann".to_string())]),
            Tz::UTC,
            "2026-12-01".parse().unwrap(),
        );
        assert_eq!(t.rows[0][2], Cell::text("Ann"));
        assert_eq!(t.rows[1][3].plain(), "12:46");
    }
}
