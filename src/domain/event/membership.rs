//! Which departments an employee belonged to and when: their department in the roster now,
//! and the departments they left with the instant they left each (the departures `org import`
//! records, `redis/moves.rs`). A consumer checks an event against it: an employee moved at
//! 10:00 from D1 to D2 still has their 08:00 check-in of D1 accepted.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

/// A department left: `until` is when the roster stopped saying it (unix seconds, the Redis
/// server's clock).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Departure {
    pub department: String,
    pub until: i64,
}

/// An employee's department now and the ones they left, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Membership {
    pub current: String,
    pub left: Vec<Departure>,
}

impl Membership {
    /// Only the roster's department is known (no departure recorded, or none looked up).
    pub(crate) fn now(current: &str) -> Membership {
        Membership {
            current: current.to_string(),
            left: Vec::new(),
        }
    }

    /// Whether the employee was in `dept` at some moment of `date` (the company day in `tz`).
    ///
    /// The current department always passes (as the roster alone said before departures were
    /// recorded; when the employee joined their first department is not known). A department
    /// left passes when it was left at or after the day's start, and joined (when the
    /// departure before it was recorded) before the day's end.
    pub(crate) fn was_in(&self, dept: &str, tz: Tz, date: NaiveDate) -> bool {
        if self.current == dept {
            return true;
        }
        let start = crate::domain::day::policy::day_start(tz, date).timestamp();
        let end = date.succ_opt().map_or(i64::MAX, |next| {
            crate::domain::day::policy::day_start(tz, next).timestamp()
        });
        let mut joined: Option<i64> = None;
        for d in &self.left {
            if d.department == dept && d.until >= start && joined.is_none_or(|j| j < end) {
                return true;
            }
            joined = Some(d.until);
        }
        false
    }
}

/// The departures as stored: `D1@1764590000,D3@1764600000` (department ids hold neither `@`
/// nor `,`). An entry that does not parse is skipped: it grants nothing.
pub(crate) fn parse_departures(text: &str) -> Vec<Departure> {
    text.split(',')
        .filter_map(|e| {
            let (dept, until) = e.split_once('@')?;
            Some(Departure {
                department: dept.to_string(),
                until: until.parse().ok()?,
            })
        })
        .filter(|d| !d.department.is_empty())
        .collect()
}

/// The stored departures with `dept` left at `at` added. Leaving the department the last
/// entry already left (a rerun of an import a crash cut short, or that failed before the
/// roster changed) moves that entry's instant rather than adding one.
pub(crate) fn add_departure(stored: Option<&str>, dept: &str, at: DateTime<Utc>) -> String {
    let mut left = stored.map(parse_departures).unwrap_or_default();
    let until = at.timestamp();
    match left.last_mut() {
        Some(last) if last.department == dept => last.until = until,
        _ => left.push(Departure {
            department: dept.to_string(),
            until,
        }),
    }
    left.iter()
        .map(|d| format!("{}@{}", d.department, d.until))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 11, d).unwrap()
    }

    fn at(d: u32, h: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, d, h, 0, 0).unwrap()
    }

    #[test]
    fn a_department_left_counts_on_the_days_the_employee_was_in_it() {
        // In D1 until the 20th 10:00 UTC, then D2 until the 25th 09:00, now D3.
        let stored = add_departure(Some(&add_departure(None, "D1", at(20, 10))), "D2", at(25, 9));
        assert_eq!(
            stored,
            format!("D1@{},D2@{}", at(20, 10).timestamp(), at(25, 9).timestamp())
        );
        let m = Membership {
            current: "D3".into(),
            left: parse_departures(&stored),
        };
        let utc = chrono_tz::UTC;
        assert!(m.was_in("D1", utc, day(20)), "left D1 that day");
        assert!(m.was_in("D1", utc, day(3)), "D1 before its departure");
        assert!(!m.was_in("D1", utc, day(21)), "D1 after the day it was left");
        assert!(m.was_in("D2", utc, day(20)) && m.was_in("D2", utc, day(25)));
        assert!(!m.was_in("D2", utc, day(19)), "D2 before it was joined");
        assert!(!m.was_in("D2", utc, day(26)));
        assert!(m.was_in("D3", utc, day(1)), "the roster's department passes");
        assert!(!m.was_in("D9", utc, day(20)), "never in D9");
        // The day is the company's: 10:00 UTC on the 20th is the 20th in Tokyo too, and
        // 23:00 UTC of the 19th already the 20th there.
        assert!(m.was_in("D1", chrono_tz::Asia::Tokyo, day(20)));
        assert!(!m.was_in("D1", chrono_tz::Asia::Tokyo, day(21)));
    }

    #[test]
    fn leaving_the_same_department_again_moves_the_instant() {
        let once = add_departure(None, "D1", at(20, 10));
        assert_eq!(
            add_departure(Some(&once), "D1", at(21, 8)),
            format!("D1@{}", at(21, 8).timestamp())
        );
        assert_eq!(
            parse_departures("D1@x,@5,D2@7,junk"),
            vec![Departure {
                department: "D2".into(),
                until: 7
            }]
        );
    }
}
