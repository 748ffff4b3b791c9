//! What a shift change reaches: the days an assignment governs (up to its target's next one),
//! and a changed shift's differences in words, for the audit of the rows it re-settles.

use chrono::{Duration, NaiveDate};

use crate::domain::day::shift::Shift;
use crate::domain::day::shifts::{Assignment, Scope, ShiftTable};

/// The last day `target`'s assignment from `from` governs: the day before the target's next
/// assignment, or `None` when none follows (it governs from then on).
pub(crate) fn last_day(table: &ShiftTable, scope: Scope, target: &str, from: NaiveDate) -> Option<NaiveDate> {
    let map = match scope {
        Scope::Department => &table.departments,
        Scope::Employee => &table.employees,
    };
    // The lists are kept in date order.
    map.get(target)?
        .iter()
        .map(|(f, _)| *f)
        .find(|f| *f > from)
        .map(|next| next - Duration::days(1))
}

/// Every assignment of the shift `name`, in the table's order.
pub(crate) fn assignments_of(table: &ShiftTable, name: &str) -> Vec<Assignment> {
    table.assignments().into_iter().filter(|a| a.shift == name).collect()
}

/// What differs between `old` and `new`, in words: `22:00-06:00 -> 21:00-05:00`,
/// `break 30 -> 0 min`. Empty when nothing does.
pub(crate) fn differences(old: &Shift, new: &Shift) -> Vec<String> {
    let hours = |s: &Shift| format!("{}-{}", s.start.format("%H:%M"), s.end.format("%H:%M"));
    let mut out = Vec::new();
    if (old.start, old.end) != (new.start, new.end) {
        out.push(format!("{} -> {}", hours(old), hours(new)));
    }
    for (what, a, b) in [
        ("late grace", old.late_grace_minutes, new.late_grace_minutes),
        ("early grace", old.early_grace_minutes, new.early_grace_minutes),
        ("break", old.break_minutes, new.break_minutes),
    ] {
        if a != b {
            out.push(format!("{what} {a} -> {b} min"));
        }
    }
    if old.work_days != new.work_days {
        out.push(format!("work days {} -> {}", old.days_text(), new.days_text()));
    }
    if old.part_time != new.part_time {
        out.push(format!("part time {} -> {}", old.part_time, new.part_time));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveTime;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn a(scope: Scope, target: &str, from: &str, shift: &str) -> Assignment {
        Assignment {
            scope,
            target: target.into(),
            from: d(from),
            shift: shift.into(),
        }
    }

    #[test]
    fn an_assignment_governs_up_to_the_day_before_its_targets_next_one() {
        let table = ShiftTable::new(
            Vec::new(),
            vec![
                a(Scope::Department, "D1", "2026-11-15", "early"),
                a(Scope::Department, "D1", "2026-11-01", "night"),
                a(Scope::Employee, "D1", "2026-11-20", "night"),
            ],
        );
        assert_eq!(
            last_day(&table, Scope::Department, "D1", d("2026-11-01")),
            Some(d("2026-11-14"))
        );
        // A back-dated one between them, and the last one: from then on.
        assert_eq!(
            last_day(&table, Scope::Department, "D1", d("2026-11-05")),
            Some(d("2026-11-14"))
        );
        assert_eq!(last_day(&table, Scope::Department, "D1", d("2026-11-15")), None);
        // An employee's list is its own, even under the same id.
        assert_eq!(last_day(&table, Scope::Employee, "D1", d("2026-11-20")), None);
        assert_eq!(last_day(&table, Scope::Employee, "D2", d("2026-11-01")), None);
        let night: Vec<String> = assignments_of(&table, "night")
            .into_iter()
            .map(|a| format!("{} {} {}", a.scope.as_str(), a.target, a.from))
            .collect();
        assert_eq!(night, ["department D1 2026-11-01", "employee D1 2026-11-20"]);
    }

    #[test]
    fn a_shifts_differences_are_named_one_by_one() {
        let t = |h: u32| NaiveTime::from_hms_opt(h, 0, 0).unwrap();
        let old = Shift {
            name: "night".into(),
            start: t(22),
            end: t(6),
            late_grace_minutes: 10,
            early_grace_minutes: 5,
            work_days: crate::domain::day::shift::parse_days("mon-fri").unwrap(),
            break_minutes: 30,
            part_time: false,
            split: None,
        };
        assert!(differences(&old, &old).is_empty());
        let new = Shift {
            start: t(21),
            end: t(5),
            break_minutes: 0,
            work_days: crate::domain::day::shift::parse_days("mon-sat").unwrap(),
            ..old.clone()
        };
        assert_eq!(
            differences(&old, &new),
            [
                "22:00-06:00 -> 21:00-05:00",
                "break 30 -> 0 min",
                "work days mon,tue,wed,thu,fri -> mon,tue,wed,thu,fri,sat"
            ]
        );
    }
}
