//! The pure half of settle: from the roster, the day's boards, the punches a previous run
//! stored, the calendar and the leave, compute every employee's attendance row. No I/O.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

use crate::config::Policy;
use crate::domain::day::record::DayRecord;
use crate::domain::day::shift::Shift;
use crate::domain::day::shifts::Shifts;
use crate::domain::day::worked::{Facts, Half, Leave, ShiftDay};
use crate::domain::punch::Kind;
pub(crate) use crate::mysql::attendance::{parse_log, DayRow, Stamp};
use crate::mysql::people::roster_rows::Member;
pub(crate) use crate::mysql::runs::Failure;
pub(crate) use crate::redis::board::BoardEntry;

/// The facts of the day that are the same for everyone (on the policy's shift).
#[derive(Debug, Clone)]
pub(crate) struct Day {
    pub date: NaiveDate,
    pub workday: bool,
    /// The local midnight that starts the day (board seconds count from it).
    pub start: DateTime<Utc>,
    /// The policy's shift on the date, worked out once rather than once per employee.
    pub shift: ShiftDay,
    /// The shifts, when any is assigned: each employee's row follows their own.
    shifts: Option<Arc<DayShifts>>,
    /// Who is on leave for half the day: `true` the morning, `false` the afternoon.
    half_leave: Arc<HashMap<String, bool>>,
}

/// The day's shifts: who follows which, and each shift's day and work day, worked out once.
#[derive(Debug)]
struct DayShifts {
    /// Shared: a re-settle over many days judges them all by one table.
    shifts: Arc<Shifts>,
    /// Per shift name: its day on the date, whether the date is one of its work days.
    days: HashMap<String, (ShiftDay, bool)>,
}

impl Day {
    pub(crate) fn new(date: NaiveDate, tz: Tz, policy: &Policy, workday: bool) -> Day {
        let shift = ShiftDay::new(&Shift::from_policy(policy), tz, date, policy.overtime);
        Day {
            date,
            workday,
            start: shift.clock.start,
            shift,
            shifts: None,
            half_leave: Arc::default(),
        }
    }

    /// The day with who is on half-day leave (`true`: the morning off).
    pub(crate) fn with_half_leave(mut self, half_leave: HashMap<String, bool>) -> Day {
        self.half_leave = Arc::new(half_leave);
        self
    }

    /// The day with its shifts: `calendar` is the date's calendar entry (`Some(true)` a work
    /// day, `Some(false)` a holiday), which holds for every shift; without one, each shift's
    /// week decides. A table with no assignment changes nothing.
    pub(crate) fn with_shifts(mut self, tz: Tz, policy: &Policy, shifts: Arc<Shifts>, calendar: Option<bool>) -> Day {
        if shifts.table.is_empty() {
            return self;
        }
        let (date, rule) = (self.date, policy.overtime);
        let days = std::iter::once(&shifts.default)
            .chain(shifts.table.shifts.values())
            .map(|s| {
                let workday = calendar.unwrap_or_else(|| s.works_on(date));
                (s.name.clone(), (ShiftDay::new(s, tz, date, rule), workday))
            })
            .collect();
        self.shifts = Some(Arc::new(DayShifts { shifts, days }));
        self
    }

    /// An employee's shift day and whether the date is their work day.
    fn of(&self, member: &Member) -> (&ShiftDay, bool) {
        if let Some(s) = &self.shifts {
            let name = s
                .shifts
                .on(&member.employee_id, &member.department_id, self.date)
                .0
                .name
                .as_str();
            if let Some((day, workday)) = s.days.get(name) {
                return (day, *workday);
            }
        }
        (&self.shift, self.workday)
    }
}

/// Turn a board value into instants, or say why it cannot be read.
fn board_stamps(day: &Day, value: &str) -> Result<Vec<Stamp>, String> {
    let rec = DayRecord::parse(value);
    let tokens = value.split(',').filter(|t| !t.is_empty()).count();
    if tokens != rec.punches.len() {
        return Err(format!(
            "unreadable board value '{}'",
            value.chars().take(80).collect::<String>()
        ));
    }
    Ok(rec
        .punches
        .iter()
        .map(|(k, s)| (day.start + chrono::Duration::seconds(*s), *k))
        .collect())
}

/// One employee's row from the union of their punches (board and stored history).
pub(crate) fn row(day: &Day, member: &Member, mut punches: Vec<Stamp>, on_leave: bool) -> DayRow {
    punches.sort_by_key(|(t, k)| (*t, k.as_str()));
    punches.dedup();
    let first_in = punches.iter().filter(|(_, k)| *k == Kind::In).map(|(t, _)| *t).min();
    let last_out = punches.iter().filter(|(_, k)| *k == Kind::Out).map(|(t, _)| *t).max();
    let (shift, workday) = day.of(member);
    let leave = match day.half_leave.get(&member.employee_id) {
        Some(morning_off) => Leave::Half(Half::of_morning(*morning_off)),
        None if on_leave => Leave::Whole,
        None => Leave::None,
    };
    let outcome = shift
        .judge(&Facts {
            workday,
            leave,
            first_in,
            last_out,
        })
        .outcome();
    DayRow {
        employee_id: member.employee_id.clone(),
        department_id: member.department_id.clone(),
        outcome,
        first_in: first_in.map(|t| t.naive_utc()),
        last_out: last_out.map(|t| t.naive_utc()),
        punches,
    }
}

/// Every row of the day: one per active member (in roster order), then one per employee
/// off the active roster who punched anyway (their punches are kept, not dropped). `stored`
/// holds the punch histories a previous run wrote, so that a rerun after the boards were
/// deleted computes the same rows.
pub(crate) fn day_rows(
    day: &Day,
    members: &[Member],
    boards: &HashMap<String, BoardEntry>,
    stored: &HashMap<String, String>,
    on_leave: &HashSet<String>,
) -> (Vec<DayRow>, Vec<Failure>) {
    let mut rows = Vec::with_capacity(members.len());
    let mut failures = Vec::new();
    let mut seen: HashSet<&str> = HashSet::with_capacity(members.len());
    let gather = |m: &Member, failures: &mut Vec<Failure>| -> Option<Vec<Stamp>> {
        let mut punches = Vec::new();
        let fail = |reason: String| Failure {
            employee_id: m.employee_id.clone(),
            department_id: m.department_id.clone(),
            reason,
        };
        if let Some(b) = boards.get(&m.employee_id) {
            match board_stamps(day, &b.value) {
                Ok(p) => punches.extend(p),
                Err(reason) => {
                    failures.push(fail(reason));
                    return None;
                }
            }
        }
        if let Some(s) = stored.get(&m.employee_id) {
            match parse_log(s) {
                Some(p) => punches.extend(p),
                None => {
                    failures.push(fail(format!("unreadable stored punch history '{s}'")));
                    return None;
                }
            }
        }
        Some(punches)
    };
    for m in members {
        seen.insert(&m.employee_id);
        if let Some(p) = gather(m, &mut failures) {
            rows.push(row(day, m, p, on_leave.contains(&m.employee_id)));
        }
    }
    // Off the roster: sorted, so that the rows (and any failures) come in the same order each run.
    let extras: BTreeMap<&String, &BoardEntry> = boards
        .iter()
        .filter(|(id, b)| !seen.contains(id.as_str()) && !b.value.is_empty())
        .collect();
    for (id, b) in extras {
        let m = Member {
            employee_id: id.clone(),
            department_id: b.department_id.clone(),
            name: String::new(),
            employment: Default::default(),
        };
        if let Some(p) = gather(&m, &mut failures) {
            rows.push(row(day, &m, p, on_leave.contains(id)));
        }
    }
    (rows, failures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::day::policy::DayStatus;
    use crate::mysql::attendance::encode_log;

    fn member(id: &str) -> Member {
        Member {
            employee_id: id.into(),
            department_id: "D1".into(),
            name: id.into(),
            employment: Default::default(),
        }
    }

    fn entry(v: &str) -> BoardEntry {
        BoardEntry {
            department_id: "D1".into(),
            value: v.into(),
        }
    }

    #[test]
    fn board_and_stored_history_give_the_same_row() {
        let policy = Policy::default();
        let day = Day::new(
            NaiveDate::from_ymd_opt(2026, 11, 27).unwrap(),
            chrono_tz::Europe::Paris,
            &policy,
            true,
        );
        let members = vec![member("E1"), member("E2"), member("E3")];
        let boards: HashMap<String, BoardEntry> = [
            ("E1".to_string(), entry("i34200,o57600")),
            ("E2".to_string(), entry("")),
            ("X9".to_string(), entry("i30000")),
        ]
        .into();
        let (rows, fails) = day_rows(&day, &members, &boards, &HashMap::new(), &HashSet::new());
        assert!(fails.is_empty());
        assert_eq!(rows.len(), 4, "three members and one punch off the roster");
        assert_eq!(rows[0].outcome.status, DayStatus::LateAndEarly);
        assert_eq!(
            encode_log(&rows[0].punches),
            "in@2026-11-27T08:30:00Z,out@2026-11-27T15:00:00Z"
        );
        assert_eq!(rows[1].outcome.status, DayStatus::Absent);
        assert_eq!(rows[3].employee_id, "X9");
        // Without the boards, the stored histories give the very same rows.
        let stored: HashMap<String, String> = rows
            .iter()
            .map(|r| (r.employee_id.clone(), encode_log(&r.punches)))
            .collect();
        let (again, _) = day_rows(&day, &members, &HashMap::new(), &stored, &HashSet::new());
        assert_eq!(again[..3], rows[..3]);
        // Both at once (killed after writing, before deleting): still the same.
        let (both, _) = day_rows(&day, &members, &boards, &stored, &HashSet::new());
        assert_eq!(both, rows);
    }

    #[test]
    fn an_unreadable_value_is_a_failure_not_a_guess() {
        let policy = Policy::default();
        let day = Day::new(
            NaiveDate::from_ymd_opt(2026, 11, 27).unwrap(),
            chrono_tz::UTC,
            &policy,
            true,
        );
        let boards: HashMap<String, BoardEntry> = [("E1".to_string(), entry("i30000,garbage"))].into();
        let (rows, fails) = day_rows(&day, &[member("E1")], &boards, &HashMap::new(), &HashSet::new());
        assert!(rows.is_empty());
        assert_eq!(fails.len(), 1);
        assert!(fails[0].reason.contains("unreadable"), "{:?}", fails[0]);
    }

    #[test]
    fn log_round_trips() {
        let t = DateTime::parse_from_rfc3339("2026-11-27T07:55:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let log = vec![(t, Kind::In), (t + chrono::Duration::hours(9), Kind::Out)];
        assert_eq!(parse_log(&encode_log(&log)), Some(log));
        assert_eq!(parse_log(""), Some(vec![]));
        assert_eq!(parse_log("in@yesterday"), None);
    }
}
