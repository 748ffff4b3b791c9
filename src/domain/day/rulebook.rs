//! The company's rulebook: policy values, each set from a date on (`policy set`), so that a
//! day is judged by the values in force on that day whenever it is judged (a re-settle of last
//! month by last month's grace). Which value stands on a date is decided here; turning the
//! values into a [`Policy`](super::policy::Policy) is the key table's (`config::rulebook`).

use std::collections::BTreeMap;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// One key set to a value from a date on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Version {
    pub key: String,
    pub value: String,
    pub from: NaiveDate,
}

/// Every version, in the order they were set. Empty: the built-in defaults everywhere.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Rulebook {
    pub versions: Vec<Version>,
}

impl Rulebook {
    /// Each key's value in force on `date`: of its versions from `date` or before, the one from
    /// the latest date; of two from the same date, the one set last. A key with none there
    /// keeps its default.
    pub(crate) fn in_force(&self, date: NaiveDate) -> BTreeMap<&str, &str> {
        let mut best: BTreeMap<&str, (NaiveDate, &str)> = BTreeMap::new();
        for v in self.versions.iter().filter(|v| v.from <= date) {
            let slot = best.entry(v.key.as_str()).or_insert((v.from, v.value.as_str()));
            if v.from >= slot.0 {
                *slot = (v.from, v.value.as_str());
            }
        }
        best.into_iter().map(|(k, (_, v))| (k, v)).collect()
    }

    /// The dates on which some value changes, from `date` on (`date` itself first): a new
    /// version must leave the rules valid on each of them.
    pub(crate) fn changes_from(&self, date: NaiveDate) -> Vec<NaiveDate> {
        let mut dates: Vec<NaiveDate> = std::iter::once(date)
            .chain(self.versions.iter().map(|v| v.from).filter(|d| *d > date))
            .collect();
        dates.sort();
        dates.dedup();
        dates
    }
}

/// The rulebook version a date is judged by, of the versions `(from, id)`: the highest id of
/// those in force by then (the rows from that date or before, set up to it, decide every
/// value); 0 when none is (the built-in defaults).
pub(crate) fn version_on(versions: &[(NaiveDate, u64)], date: NaiveDate) -> u64 {
    versions
        .iter()
        .filter(|(from, _)| *from <= date)
        .map(|(_, id)| *id)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(key: &str, value: &str, from: &str) -> Version {
        Version {
            key: key.into(),
            value: value.into(),
            from: from.parse().unwrap(),
        }
    }

    #[test]
    fn the_version_in_force_is_the_latest_from_on_or_before_the_day_and_the_last_set_of_a_date() {
        let book = Rulebook {
            versions: vec![
                v("policy.grace_minutes", "5", "2026-01-01"),
                v("policy.grace_minutes", "20", "2026-06-01"),
                v("policy.grace_minutes", "10", "2026-03-01"),
                v("policy.grace_minutes", "12", "2026-03-01"),
                v("policy.break_minutes", "30", "2026-02-01"),
            ],
        };
        let on = |d: &str| book.in_force(d.parse().unwrap());
        assert!(on("2025-12-31").is_empty());
        assert_eq!(on("2026-01-01").get("policy.grace_minutes"), Some(&"5"));
        assert_eq!(on("2026-02-28").get("policy.break_minutes"), Some(&"30"));
        assert_eq!(on("2026-03-01").get("policy.grace_minutes"), Some(&"12"));
        assert_eq!(on("2026-05-31").get("policy.grace_minutes"), Some(&"12"));
        assert_eq!(on("2026-06-01").get("policy.grace_minutes"), Some(&"20"));
        assert_eq!(
            book.changes_from("2026-02-15".parse().unwrap()),
            ["2026-02-15", "2026-03-01", "2026-06-01"].map(|d| d.parse::<NaiveDate>().unwrap())
        );
    }
}
