//! Who is due at work, and when: for a work date, each department's people expected at one
//! start time, as groups: one per department and shift (`domain::day::shifts`: each employee's
//! own, the policy's `default` when nothing is assigned). The one place that says so, for the
//! absence alerts.

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;

use crate::domain::day::policy::Policy;
use crate::domain::day::shift::Shift;
use crate::domain::day::shift_clock::DayClock;
use crate::domain::day::shifts::Shifts;
use crate::domain::people::roster::Member;

/// A department's people due at one start time on one work date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Due {
    pub department_id: String,
    pub shift: String,
    /// When they are due (the shift's start).
    pub starts_at: DateTime<Utc>,
    /// When whoever has not arrived is reported: the start plus the alert's minutes.
    pub alert_at: DateTime<Utc>,
    /// Employee id and name, by id.
    pub people: Vec<(String, String)>,
}

/// Who a day's boards hold (`init-day`, settle's layout of the next work day, `recover`): with
/// shifts assigned, the employed whose own shift works the date (`calendar` as in [`due`]), so
/// that someone on a rest day by their shift is not expected, not "not yet in"; with none
/// assigned, everyone employed, as before shifts existed (a company that defines no shift keeps
/// its layout).
pub(crate) struct Rota {
    shifts: Shifts,
    calendar: Option<bool>,
    date: NaiveDate,
}

impl Rota {
    pub(crate) fn new(shifts: Shifts, calendar: Option<bool>, date: NaiveDate) -> Rota {
        Rota { shifts, calendar, date }
    }

    /// Whether `m` is on the date's board.
    pub(crate) fn expects(&self, m: &Member) -> bool {
        m.employment.covers(self.date)
            && (self.shifts.table.is_empty()
                || works(&self.shifts, self.calendar, &m.employee_id, &m.department_id, self.date))
    }
}

/// Whether `date` is a work day of the employee's own shift: the date's calendar entry
/// (`Some(true)` a work day, `Some(false)` a holiday, for every shift), else the shift's week.
pub(crate) fn works(
    shifts: &Shifts,
    calendar: Option<bool>,
    employee: &str,
    department: &str,
    date: NaiveDate,
) -> bool {
    calendar.unwrap_or_else(|| shifts.on(employee, department, date).0.works_on(date))
}

/// When the absence alert of a shift's start goes out: `policy.absence_alert_minutes` after
/// it, by default the shift's late grace (the moment a check-in turns late).
fn alert_at(policy: &Policy, shift: &Shift, starts_at: DateTime<Utc>) -> DateTime<Utc> {
    let minutes = policy.absence_alert_minutes.unwrap_or(shift.late_grace_minutes);
    starts_at + Duration::minutes(i64::from(minutes))
}

/// The earliest moment any group of `date` is reported (before it, nothing needs reading).
pub(crate) fn first_alert_at(policy: &Policy, shifts: &Shifts, tz: Tz, date: NaiveDate) -> DateTime<Utc> {
    shifts
        .in_use(date)
        .into_iter()
        .map(|s| alert_at(policy, s, DayClock::for_shift(s, tz, date).starts_at()))
        .min()
        .expect("the default shift is always in use")
}

/// Who is due on `date`, per department and shift: every active member (`members`) employed
/// that day and not on leave (`on_leave`), whose shift works that day (`calendar`: the date's
/// calendar entry, `Some(true)` a work day and `Some(false)` a holiday for every shift; `None`:
/// each shift's week). Groups whose people are all away are left out; groups come by
/// department, then shift.
pub(crate) fn due(
    policy: &Policy,
    shifts: &Shifts,
    tz: Tz,
    date: NaiveDate,
    calendar: Option<bool>,
    members: &[Member],
    on_leave: &HashSet<String>,
) -> Vec<Due> {
    let mut groups: BTreeMap<(&str, &str), Due> = BTreeMap::new();
    for m in members {
        if !m.employment.covers(date) || on_leave.contains(&m.employee_id) {
            continue;
        }
        if !works(shifts, calendar, &m.employee_id, &m.department_id, date) {
            continue;
        }
        let (shift, _) = shifts.on(&m.employee_id, &m.department_id, date);
        let person = (m.employee_id.clone(), m.name.clone());
        groups
            .entry((m.department_id.as_str(), shift.name.as_str()))
            .or_insert_with(|| {
                let starts_at = DayClock::for_shift(shift, tz, date).starts_at();
                Due {
                    department_id: m.department_id.clone(),
                    shift: shift.name.clone(),
                    starts_at,
                    alert_at: alert_at(policy, shift, starts_at),
                    people: Vec::new(),
                }
            })
            .people
            .push(person);
    }
    groups
        .into_values()
        .map(|mut g| {
            g.people.sort();
            g
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::day::shifts::ShiftTable;
    use crate::domain::people::employment::Employment;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn member(id: &str, dept: &str, employment: Employment) -> Member {
        Member {
            employee_id: id.into(),
            department_id: dept.into(),
            name: format!("name of {id}"),
            employment,
        }
    }

    #[test]
    fn the_active_employed_not_on_leave_are_due_at_the_deadline_and_reported_after_the_grace() {
        let policy = Policy {
            grace_minutes: 15,
            ..Policy::default()
        };
        let tz = chrono_tz::Europe::Paris;
        let day = d("2026-12-02");
        let members = vec![
            member("E1", "D1", Employment::default()),
            member("E2", "D1", Employment::new(None, Some(d("2026-12-01")))),
            member("E3", "D1", Employment::default()),
            member("E4", "D2", Employment::new(Some(d("2026-12-03")), None)),
            member(
                "E5",
                "D3",
                Employment::new(Some(d("2026-12-02")), Some(d("2026-12-02"))),
            ),
        ];
        let leave: HashSet<String> = ["E3".to_string()].into();
        let none = Shifts::new(ShiftTable::default(), &policy);
        let due = due(&policy, &none, tz, day, None, &members, &leave);
        assert_eq!(due.len(), 2, "D2's only member starts tomorrow: {due:?}");
        assert_eq!(
            (due[0].department_id.as_str(), due[0].shift.as_str()),
            ("D1", "default")
        );
        assert_eq!(due[0].people, vec![("E1".to_string(), "name of E1".to_string())]);
        assert_eq!(due[1].people[0].0, "E5");
        assert_eq!(due[0].starts_at.to_rfc3339(), "2026-12-02T08:00:00+00:00");
        assert_eq!(due[0].alert_at.to_rfc3339(), "2026-12-02T08:15:00+00:00");
        assert_eq!(first_alert_at(&policy, &none, tz, day), due[0].alert_at);
        let later = Policy {
            absence_alert_minutes: Some(40),
            ..policy.clone()
        };
        assert_eq!(
            super::due(&later, &none, tz, day, None, &members, &leave)[0]
                .alert_at
                .to_rfc3339(),
            "2026-12-02T08:40:00+00:00"
        );
        assert!(super::due(&policy, &none, tz, day, Some(false), &members, &leave).is_empty());
    }

    #[test]
    fn one_group_per_department_and_shift_each_at_its_own_start_plus_its_grace() {
        use crate::domain::day::shifts::{Assignment, Scope};
        let policy = Policy::default();
        let tz = chrono_tz::UTC;
        let night = Shift {
            late_grace_minutes: 10,
            ..Shift::sample("night", "22:00", "06:00", "mon-sat")
        };
        let shifts = Shifts::new(
            ShiftTable::new(
                vec![night],
                vec![Assignment {
                    scope: Scope::Employee,
                    target: "E2".into(),
                    from: d("2026-11-01"),
                    shift: "night".into(),
                }],
            ),
            &policy,
        );
        let members = vec![
            member("E1", "D1", Employment::default()),
            member("E2", "D1", Employment::default()),
        ];
        let none = HashSet::new();
        let due = due(&policy, &shifts, tz, d("2026-12-02"), None, &members, &none);
        let groups: Vec<(&str, &str, String)> = due
            .iter()
            .map(|g| (g.department_id.as_str(), g.shift.as_str(), g.alert_at.to_rfc3339()))
            .collect();
        assert_eq!(
            groups,
            vec![
                ("D1", "default", "2026-12-02T09:00:00+00:00".to_string()),
                ("D1", "night", "2026-12-02T22:10:00+00:00".to_string()),
            ]
        );
        assert_eq!(first_alert_at(&policy, &shifts, tz, d("2026-12-02")), due[0].alert_at);
        // Saturday: the night shift works, the policy's week does not.
        let sat = super::due(&policy, &shifts, tz, d("2026-12-05"), None, &members, &none);
        assert_eq!(sat.len(), 1);
        assert_eq!((sat[0].shift.as_str(), sat[0].people[0].0.as_str()), ("night", "E2"));
    }

    #[test]
    fn a_rest_day_by_ones_shift_is_neither_due_nor_on_the_board_unless_no_shift_is_assigned() {
        use crate::domain::day::shifts::{Assignment, Scope};
        let policy = Policy::default();
        let weekends = Shift::sample("weekends", "09:00", "17:00", "sat,sun");
        let assigned = ShiftTable::new(
            vec![weekends.clone()],
            vec![Assignment {
                scope: Scope::Employee,
                target: "E2".into(),
                from: d("2026-01-01"),
                shift: "weekends".into(),
            }],
        );
        let members = vec![
            member("E1", "D1", Employment::default()),
            member("E2", "D1", Employment::default()),
            member("E3", "D1", Employment::new(None, Some(d("2026-11-01")))),
        ];
        let wednesday = d("2026-11-18");
        let shifts = Shifts::new(assigned.clone(), &policy);
        let due = due(
            &policy,
            &shifts,
            chrono_tz::UTC,
            wednesday,
            None,
            &members,
            &HashSet::new(),
        );
        assert_eq!(due.len(), 1);
        assert_eq!(due[0].people, vec![("E1".to_string(), "name of E1".to_string())]);
        let on_board = |table: ShiftTable, calendar: Option<bool>| -> Vec<&str> {
            let rota = Rota::new(Shifts::new(table, &policy), calendar, wednesday);
            members
                .iter()
                .filter(|m| rota.expects(m))
                .map(|m| m.employee_id.as_str())
                .collect()
        };
        assert_eq!(on_board(assigned.clone(), None), ["E1"], "E2 rests, E3 has left");
        assert_eq!(
            on_board(assigned.clone(), Some(true)),
            ["E1", "E2"],
            "a calendar work day"
        );
        assert!(on_board(assigned, Some(false)).is_empty(), "a holiday");
        // Shifts defined but none assigned: the layout of before shifts existed.
        assert_eq!(
            on_board(ShiftTable::new(vec![weekends], vec![]), Some(false)),
            ["E1", "E2"]
        );
    }
}
