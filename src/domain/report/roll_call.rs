//! The roll call: who is in right now, per department, from the day's boards (their latest
//! punch of the day is a check-in), and those still in from a shift that began the day before
//! (on that date's board: a night shift's punches belong to the date it started); and the
//! counts of each department's board. Pure: the caller reads the boards, the shifts and the
//! names.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;

use crate::domain::day::record::DayRecord;
use crate::domain::day::shifts::{Clocks, Shifts, NIGHT_CUTOFF_HOURS};
use crate::domain::report::table::{local_time, Cell, Table};

/// Someone in right now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Present {
    pub department_id: String,
    pub employee_id: String,
    /// The work date whose board they are in on: today, or the day before for a shift that
    /// crossed midnight.
    pub date: NaiveDate,
    /// Their latest check-in, seconds into `date`.
    pub since: i64,
}

/// One department's board in numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub department_id: String,
    /// In right now, those of the day before included.
    pub in_now: u64,
    /// Of those in, how many are in on the day before's board (a shift across midnight).
    pub from_day_before: u64,
    /// Came and went.
    pub out: u64,
    pub not_yet_in: u64,
    /// Fields on today's board: those laid out, and anyone who punched.
    pub on_board: u64,
}

/// The roll call: the people in, by department then id, and every department's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RollCall {
    pub present: Vec<Present>,
    pub departments: Vec<Counts>,
}

/// A board as it stood `secs` into its date: the punches after that left out (a roll call
/// taken as of a past instant).
pub(crate) fn as_of(board: &mut HashMap<String, DayRecord>, secs: i64) {
    for rec in board.values_mut() {
        rec.punches.retain(|(_, s)| *s <= secs);
    }
}

/// Those on `date`'s boards (departments in the order of `today`) whose check-in is still
/// open and who have no punch on today's board of their department (today's board decides
/// for anyone on it): the candidates still in from a shift that began on `date`.
pub(crate) fn open_before(
    date: NaiveDate,
    before: Vec<HashMap<String, DayRecord>>,
    today: &[(String, HashMap<String, DayRecord>)],
) -> Vec<Present> {
    let mut open = Vec::new();
    for ((dept, now), board) in today.iter().zip(before) {
        for (emp, rec) in board {
            let Some(since) = rec.in_since() else { continue };
            if now.get(&emp).is_some_and(|r| !r.punches.is_empty()) {
                continue;
            }
            open.push(Present {
                department_id: dept.clone(),
                employee_id: emp,
                date,
                since,
            });
        }
    }
    open
}

/// Whether someone checked in on `p.date` is still in at `now` by their shift of that date: it
/// crosses midnight and `now` is before its end plus [`NIGHT_CUTOFF_HOURS`] (the bound past which
/// a punch no longer belongs to the day before). Someone on a day shift who never checked out
/// yesterday is not in.
pub(crate) fn still_on_shift(clocks: &mut Clocks<'_>, shifts: &Shifts, p: &Present, now: DateTime<Utc>) -> bool {
    let shift = shifts.on(&p.employee_id, &p.department_id, p.date).0;
    shift.crosses_midnight()
        && now < clocks.on(&p.employee_id, &p.department_id, p.date).ends_at() + Duration::hours(NIGHT_CUTOFF_HOURS)
}

impl RollCall {
    /// From each department's board of `date` (departments in the order given), and `before`:
    /// those still in from a shift that began the day before (see [`open_before`] and
    /// [`still_on_shift`]).
    pub(crate) fn of(
        date: NaiveDate,
        boards: Vec<(String, HashMap<String, DayRecord>)>,
        before: Vec<Present>,
    ) -> RollCall {
        let mut night: HashMap<String, Vec<Present>> = HashMap::new();
        for p in before {
            night.entry(p.department_id.clone()).or_default().push(p);
        }
        let mut r = RollCall::default();
        for (dept, board) in boards {
            let mut c = Counts {
                department_id: dept.clone(),
                on_board: board.len() as u64,
                ..Counts::default()
            };
            let mut here: Vec<Present> = night.remove(&dept).unwrap_or_default();
            c.from_day_before = here.len() as u64;
            for (emp, rec) in board {
                match (rec.in_since(), rec.punches.is_empty()) {
                    (Some(since), _) => here.push(Present {
                        department_id: dept.clone(),
                        employee_id: emp,
                        date,
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

    /// How many of those in are on the day before's boards.
    pub(crate) fn in_from_day_before(&self) -> u64 {
        self.departments.iter().map(|c| c.from_day_before).sum()
    }

    /// One row per person in: department, employee, name (from `names`, empty when unknown),
    /// the work date they are in on, in since (the company's zone).
    pub(crate) fn people(&self, names: &HashMap<String, String>, tz: Tz) -> Table {
        let mut t = Table::new(&["department", "employee", "name", "date", "in since"]);
        for p in &self.present {
            let at = crate::domain::day::policy::instant(tz, p.date, p.since).naive_utc();
            t.push(vec![
                Cell::text(&p.department_id),
                Cell::text(&p.employee_id),
                Cell::text(names.get(&p.employee_id).cloned().unwrap_or_default()),
                Cell::Date(p.date),
                local_time(tz, Some(at)),
            ]);
        }
        t
    }

    /// One row per department: in now, of them from the day before, out, not yet in, on the
    /// board.
    pub(crate) fn counts(&self) -> Table {
        let mut t = Table::new(&[
            "department",
            "in",
            "from the day before",
            "out",
            "not yet in",
            "on the board",
        ]);
        for c in &self.departments {
            let n = |v: u64| Cell::Int(i64::try_from(v).unwrap_or(i64::MAX));
            t.push(vec![
                Cell::text(&c.department_id),
                n(c.in_now),
                n(c.from_day_before),
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
        let day: NaiveDate = "2026-12-01".parse().unwrap();
        let r = RollCall::of(
            day,
            vec![
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
            ],
            Vec::new(),
        );
        let ids: Vec<(&str, i64)> = r.present.iter().map(|p| (p.employee_id.as_str(), p.since)).collect();
        assert_eq!(ids, [("E1", 30000), ("E2", 46000)]);
        assert_eq!(
            r.departments[0],
            Counts {
                department_id: "D1".into(),
                in_now: 2,
                from_day_before: 0,
                out: 2,
                not_yet_in: 1,
                on_board: 5
            }
        );
        assert_eq!((r.departments[1].on_board, r.in_now()), (0, 2));
        let t = r.people(&HashMap::from([("E1".to_string(), "Ann".to_string())]), Tz::UTC);
        assert_eq!(t.rows[0][2], Cell::text("Ann"));
        assert_eq!(
            (t.rows[1][3].plain(), t.rows[1][4].plain()),
            ("2026-12-01".into(), "12:46".into())
        );
    }

    #[test]
    fn a_night_shift_still_on_from_the_day_before_is_in_and_a_day_shift_left_open_is_not() {
        use crate::domain::day::policy::Policy;
        use crate::domain::day::shift::Shift;
        use crate::domain::day::shifts::{Assignment, Scope, ShiftTable};
        let board = |v: &[(&str, &str)]| -> HashMap<String, DayRecord> {
            v.iter().map(|(k, v)| (k.to_string(), DayRecord::parse(v))).collect()
        };
        let night = Shift::sample("night", "22:00", "06:00", "mon-sun");
        let shifts = Shifts::new(
            ShiftTable::new(
                vec![night],
                vec![Assignment {
                    scope: Scope::Department,
                    target: "D1".into(),
                    from: "2026-01-01".parse().unwrap(),
                    shift: "night".into(),
                }],
            ),
            &Policy::default(),
        );
        let (before, today): (NaiveDate, NaiveDate) = ("2026-11-20".parse().unwrap(), "2026-11-21".parse().unwrap());
        // D1 on nights: N1 in since 22:00, N2 in and out, N3 in since 22:00 but punched today too.
        // D2 on the policy: P1 never checked out yesterday.
        let now_boards = vec![
            ("D1".to_string(), board(&[("N3", "o3600")])),
            ("D2".to_string(), board(&[("P2", "i28800")])),
        ];
        let open = open_before(
            before,
            vec![
                board(&[("N1", "i79200"), ("N2", "i79200,o80000"), ("N3", "i79200")]),
                board(&[("P1", "i30000")]),
            ],
            &now_boards,
        );
        let mut ids: Vec<&str> = open.iter().map(|p| p.employee_id.as_str()).collect();
        ids.sort();
        assert_eq!(ids, ["N1", "P1"]);
        let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc);
        let mut clocks = Clocks::new(&shifts, Tz::UTC);
        let still = |clocks: &mut Clocks<'_>, now: &str| -> Vec<String> {
            let mut v: Vec<String> = open
                .iter()
                .filter(|p| still_on_shift(clocks, &shifts, p, at(now)))
                .map(|p| p.employee_id.clone())
                .collect();
            v.sort();
            v
        };
        assert_eq!(still(&mut clocks, "2026-11-21T02:00:00Z"), ["N1"]);
        // Past the shift's end and the cutoff (06:00 + 4 h) they no longer count.
        assert_eq!(still(&mut clocks, "2026-11-21T09:59:00Z"), ["N1"]);
        assert!(still(&mut clocks, "2026-11-21T10:00:00Z").is_empty());
        let kept: Vec<Present> = open
            .into_iter()
            .filter(|p| still_on_shift(&mut clocks, &shifts, p, at("2026-11-21T02:00:00Z")))
            .collect();
        let r = RollCall::of(today, now_boards, kept);
        let rows: Vec<(&str, NaiveDate)> = r.present.iter().map(|p| (p.employee_id.as_str(), p.date)).collect();
        assert_eq!(rows, [("N1", before), ("P2", today)]);
        assert_eq!(
            (
                r.departments[0].in_now,
                r.departments[0].from_day_before,
                r.in_from_day_before()
            ),
            (1, 1, 1)
        );
        assert_eq!(
            r.people(&HashMap::new(), Tz::UTC).rows[0][4].plain(),
            "22:00",
            "in since the day before's 22:00"
        );
    }
}
