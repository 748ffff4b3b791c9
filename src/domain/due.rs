//! Who is due at work, and when: for a work date, each department's people expected at one
//! start time, as groups. The one place that says so, for the absence alerts: today every
//! employee follows the company policy (one group per department, the shift `default`); work
//! patterns will return a group per department and shift from here, and nothing else changes.

use std::collections::HashSet;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use chrono_tz::Tz;

use super::policy::{day_start, local_offset_secs, Policy};
use super::roster::Member;

/// The shift everyone follows while the company has only its policy.
pub(crate) const DEFAULT_SHIFT: &str = "default";

/// A department's people due at one start time on one work date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Due {
    pub department_id: String,
    pub shift: String,
    /// When they are due (the check-in deadline).
    pub starts_at: DateTime<Utc>,
    /// When whoever has not arrived is reported: the start plus the alert's minutes.
    pub alert_at: DateTime<Utc>,
    /// Employee id and name, by id.
    pub people: Vec<(String, String)>,
}

/// When the absence alert of a day's start goes out: `policy.absence_alert_minutes` after the
/// check-in deadline, by default its grace (the moment a check-in turns late).
fn alert_at(policy: &Policy, starts_at: DateTime<Utc>) -> DateTime<Utc> {
    let minutes = policy.absence_alert_minutes.unwrap_or(policy.grace_minutes);
    starts_at + Duration::minutes(i64::from(minutes))
}

/// The policy's check-in deadline on `date`, as an instant.
fn starts_at(policy: &Policy, tz: Tz, date: NaiveDate) -> DateTime<Utc> {
    day_start(tz, date) + Duration::seconds(local_offset_secs(tz, date, policy.checkin_deadline))
}

/// The earliest moment any group of `date` is reported (before it, nothing needs reading).
pub(crate) fn first_alert_at(policy: &Policy, tz: Tz, date: NaiveDate) -> DateTime<Utc> {
    alert_at(policy, starts_at(policy, tz, date))
}

/// Who is due on `date`, per department: every active member (`members`, ordered by
/// department) employed that day and not on leave (`on_leave`), on a work day (`workday`,
/// from the policy's week and the calendar); nobody on another day. Departments whose people
/// are all away are left out.
pub(crate) fn due(
    policy: &Policy,
    tz: Tz,
    date: NaiveDate,
    workday: bool,
    members: &[Member],
    on_leave: &HashSet<String>,
) -> Vec<Due> {
    if !workday {
        return Vec::new();
    }
    let starts_at = starts_at(policy, tz, date);
    let mut groups: Vec<Due> = Vec::new();
    for m in members {
        if !m.employment.covers(date) || on_leave.contains(&m.employee_id) {
            continue;
        }
        let person = (m.employee_id.clone(), m.name.clone());
        match groups.last_mut() {
            Some(g) if g.department_id == m.department_id => g.people.push(person),
            _ => groups.push(Due {
                department_id: m.department_id.clone(),
                shift: DEFAULT_SHIFT.to_string(),
                starts_at,
                alert_at: alert_at(policy, starts_at),
                people: vec![person],
            }),
        }
    }
    for g in &mut groups {
        g.people.sort();
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::employment::Employment;

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
        let due = due(&policy, tz, day, true, &members, &leave);
        assert_eq!(due.len(), 2, "D2's only member starts tomorrow: {due:?}");
        assert_eq!(
            (due[0].department_id.as_str(), due[0].shift.as_str()),
            ("D1", "default")
        );
        assert_eq!(due[0].people, vec![("E1".to_string(), "name of E1".to_string())]);
        assert_eq!(due[1].people[0].0, "E5");
        assert_eq!(due[0].starts_at.to_rfc3339(), "2026-12-02T08:00:00+00:00");
        assert_eq!(due[0].alert_at.to_rfc3339(), "2026-12-02T08:15:00+00:00");
        assert_eq!(first_alert_at(&policy, tz, day), due[0].alert_at);
        let later = Policy {
            absence_alert_minutes: Some(40),
            ..policy.clone()
        };
        assert_eq!(
            super::due(&later, tz, day, true, &members, &leave)[0]
                .alert_at
                .to_rfc3339(),
            "2026-12-02T08:40:00+00:00"
        );
        assert!(super::due(&policy, tz, day, false, &members, &leave).is_empty());
    }
}
