//! Employment dates: the days an employee is expected at work, from their first day to their
//! last, both included (either end open). Nobody is laid out, expected or marked absent outside
//! them, and a punch on a day outside them is refused.

use chrono::NaiveDate;
use serde::Serialize;

/// From `start` to `end`, both included; `None` is open on that side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Employment {
    pub start: Option<NaiveDate>,
    pub end: Option<NaiveDate>,
}

impl Employment {
    pub(crate) fn new(start: Option<NaiveDate>, end: Option<NaiveDate>) -> Employment {
        Employment { start, end }
    }

    /// Whether `day` is one of the employment's days.
    pub(crate) fn covers(&self, day: NaiveDate) -> bool {
        self.start.is_none_or(|s| s <= day) && self.end.is_none_or(|e| day <= e)
    }

    /// Whether the employment ended before `today` (a leaver).
    pub(crate) fn ended_before(&self, today: NaiveDate) -> bool {
        self.end.is_some_and(|e| e < today)
    }

    /// Why a punch of `employee` on `day` is refused, or `None` when it is one of their days.
    pub(crate) fn refusal(&self, employee: &str, day: NaiveDate) -> Option<String> {
        match (self.start, self.end) {
            (Some(s), _) if day < s => Some(format!(
                "employee '{employee}' starts on {s}: no punch on {day}, before their first day"
            )),
            (_, Some(e)) if e < day => Some(format!(
                "employee '{employee}' left on {e} (their end date): no punch on {day}, after their last day"
            )),
            _ => None,
        }
    }

    /// As the Redis roster cache keeps it after the department and name: nothing for an open
    /// employment (the cache of earlier versions reads the same), else `\t<start>\t<end>`.
    pub(crate) fn cache_suffix(&self) -> String {
        if self.start.is_none() && self.end.is_none() {
            return String::new();
        }
        let d = |d: Option<NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
        format!("\t{}\t{}", d(self.start), d(self.end))
    }

    /// Back from the part of a cache value after the name (see [`Employment::cache_suffix`]):
    /// `None` when it does not parse.
    pub(crate) fn from_cache(rest: &str) -> Option<Employment> {
        if rest.is_empty() {
            return Some(Employment::default());
        }
        let (s, e) = rest.split_once('\t')?;
        let day = |v: &str| -> Option<Option<NaiveDate>> {
            if v.is_empty() {
                Some(None)
            } else {
                crate::domain::dates::parse_day(v).ok().map(Some)
            }
        };
        Some(Employment::new(day(s)?, day(e)?))
    }
}

/// A value a roster file may give for a field it may also leave out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Given<T> {
    /// The file has no such column: whatever the record holds stays.
    Keep,
    /// The column is there and blank: the record's value is cleared.
    Clear,
    Set(T),
}

impl<T: Clone> Given<T> {
    /// The value once applied to what the record holds.
    pub(crate) fn applied_to(&self, held: Option<T>) -> Option<T> {
        match self {
            Given::Keep => held,
            Given::Clear => None,
            Given::Set(v) => Some(v.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    #[test]
    fn both_ends_are_days_of_the_employment() {
        let e = Employment::new(Some(d("2026-03-02")), Some(d("2026-11-30")));
        assert!(!e.covers(d("2026-03-01")));
        assert!(e.covers(d("2026-03-02")));
        assert!(e.covers(d("2026-11-30")));
        assert!(!e.covers(d("2026-12-01")));
        assert!(Employment::default().covers(d("1000-01-01")));
        assert!(e.refusal("E1", d("2026-12-01")).unwrap().contains("left on 2026-11-30"));
        assert!(e
            .refusal("E1", d("2026-03-01"))
            .unwrap()
            .contains("starts on 2026-03-02"));
        assert_eq!(e.refusal("E1", d("2026-06-01")), None);
        assert!(e.ended_before(d("2026-12-01")) && !e.ended_before(d("2026-11-30")));
    }

    #[test]
    fn the_cache_form_reads_back_and_an_open_employment_adds_nothing() {
        assert_eq!(Employment::default().cache_suffix(), "");
        for e in [
            Employment::default(),
            Employment::new(Some(d("2026-03-02")), None),
            Employment::new(None, Some(d("2026-11-30"))),
            Employment::new(Some(d("2026-03-02")), Some(d("2026-11-30"))),
        ] {
            let s = e.cache_suffix();
            assert_eq!(Employment::from_cache(s.strip_prefix('\t').unwrap_or(&s)), Some(e));
        }
        assert_eq!(Employment::from_cache("x\ty"), None);
        assert_eq!(Employment::from_cache("2026-01-01"), None);
    }
}
