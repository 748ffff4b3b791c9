//! One employee's day as stored in a board hash field: a compact list of punches.
//!
//! The value is comma-separated tokens, `i<secs>` for a check-in and `o<secs>` for a
//! check-out, `secs` counted from the start of the work day in the company's zone (so a
//! typical day is `i30600,o64800`, 13 bytes). An empty value means "laid out, no punch yet".
//! The first check-in is the earliest `i`, the last check-out the latest `o`. The Lua script
//! `punch.lua` writes this format; this module reads it. Keep the two in step.
//!
//! A token's kind is the punch's label or, unlabelled, what its time alone says
//! ([`DayRecord::resolve_kind`]), so the same punches in any order give the same first check-in
//! and last check-out. Boards written before that rule (when an unlabelled punch took its kind
//! from what was on the board) hold the same `i`/`o` tokens and read the same way.

use crate::domain::punch::Kind;

/// Tokens kept per employee and day: beyond it, the record and the earliest other punches
/// (see `DayRecord::compact`).
pub(crate) const MAX_TOKENS: usize = 24;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DayRecord {
    /// Every distinct punch, in arrival order.
    pub punches: Vec<(Kind, i64)>,
}

impl DayRecord {
    /// Parse a board value. Unknown tokens are skipped rather than failing the whole day.
    pub fn parse(value: &str) -> DayRecord {
        let punches = value
            .split(',')
            .filter_map(|tok| {
                let (k, n) = tok.split_at_checked(1)?;
                let kind = match k {
                    "i" => Kind::In,
                    "o" => Kind::Out,
                    _ => return None,
                };
                Some((kind, n.parse().ok()?))
            })
            .collect();
        DayRecord { punches }
    }

    pub fn encode(&self) -> String {
        let toks: Vec<String> = self
            .punches
            .iter()
            .map(|(k, s)| format!("{}{s}", if *k == Kind::In { 'i' } else { 'o' }))
            .collect();
        toks.join(",")
    }

    /// The earliest check-in, seconds into the day.
    pub fn first_in(&self) -> Option<i64> {
        self.punches
            .iter()
            .filter(|(k, _)| *k == Kind::In)
            .map(|(_, s)| *s)
            .min()
    }

    /// The latest check-out, seconds into the day.
    pub fn last_out(&self) -> Option<i64> {
        self.punches
            .iter()
            .filter(|(k, _)| *k == Kind::Out)
            .map(|(_, s)| *s)
            .max()
    }

    /// When the employee came in, seconds into the day, if they are in now: their latest punch
    /// is a check-in (a check-out at the same second counts as after it). `None`: not yet in,
    /// or out.
    pub fn in_since(&self) -> Option<i64> {
        let (kind, secs) = self.punches.iter().max_by_key(|(k, s)| (*s, *k == Kind::Out))?;
        (*kind == Kind::In).then_some(*secs)
    }

    /// The kind of a punch: its label, or without one, from its time alone: before the day's
    /// split (`Policy::auto_kind_split`, `split_secs` into the day) a check-in, at or after it
    /// a check-out. Never from what is already on the board, so that every arrival order of a
    /// day's punches gives each punch the same kind (and the same event).
    pub fn resolve_kind(secs: i64, kind: Option<Kind>, split_secs: i64) -> Kind {
        kind.unwrap_or(if secs < split_secs { Kind::In } else { Kind::Out })
    }

    /// A day of more than [`MAX_TOKENS`] distinct punches (rare), as `punch.lua` compacts it:
    /// the record (first check-in, last check-out), then the earliest other punches, by time
    /// then kind, up to [`MAX_TOKENS`]. A function of the set of punches, so that what is kept
    /// never depends on arrival order: nothing dropped once can belong to a later compaction's
    /// set, which only grows.
    fn compact(&mut self) {
        let record: Vec<(Kind, i64)> = self
            .first_in()
            .map(|s| (Kind::In, s))
            .into_iter()
            .chain(self.last_out().map(|s| (Kind::Out, s)))
            .collect();
        let mut rest: Vec<(i64, &str, Kind)> = self
            .punches
            .iter()
            .filter(|p| !record.contains(p))
            .map(|&(k, s)| (s, k.as_str(), k))
            .collect();
        rest.sort_by_key(|&(s, k, _)| (s, k));
        let keep = MAX_TOKENS.saturating_sub(record.len());
        self.punches = record
            .iter()
            .copied()
            .chain(rest.into_iter().take(keep).map(|(s, _, k)| (k, s)))
            .collect();
    }

    /// The reference model of `punch.lua`, checked against the real script by property tests:
    /// apply one punch as the script does; returns (kind, changed, duplicate).
    pub fn apply(&mut self, secs: i64, kind: Option<Kind>, split_secs: i64) -> (Kind, bool, bool) {
        let kind = DayRecord::resolve_kind(secs, kind, split_secs);
        if self.punches.contains(&(kind, secs)) {
            return (kind, false, true);
        }
        let before = (self.first_in(), self.last_out());
        self.punches.push((kind, secs));
        if self.punches.len() > MAX_TOKENS {
            self.compact();
        }
        (kind, (self.first_in(), self.last_out()) != before, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_extremes() {
        let r = DayRecord::parse("i30600,o64800,i30000,o60000");
        assert_eq!(r.first_in(), Some(30000));
        assert_eq!(r.last_out(), Some(64800));
        assert_eq!(DayRecord::parse(&r.encode()), r);
        assert_eq!(DayRecord::parse(""), DayRecord::default());
        assert_eq!(DayRecord::parse("x1,i5").punches, vec![(Kind::In, 5)]);
    }

    /// 13:30, the default split (midpoint of 09:00 and 18:00).
    const SPLIT: i64 = 48_600;

    #[test]
    fn a_second_scan_seconds_later_is_not_a_checkout() {
        let mut r = DayRecord::default();
        assert_eq!(r.apply(30600, None, SPLIT), (Kind::In, true, false));
        assert_eq!(r.apply(30605, None, SPLIT), (Kind::In, false, false));
        assert_eq!(r.apply(30605, None, SPLIT), (Kind::In, false, true));
        assert_eq!(r.apply(64800, None, SPLIT), (Kind::Out, true, false));
        assert_eq!(r.apply(64000, Some(Kind::Out), SPLIT), (Kind::Out, false, false));
    }

    /// Regression (issue 20): an offline kiosk replaying 18:30 before 08:00 made 18:30 a
    /// check-in, late 570 min, and the day had no check-out.
    #[test]
    fn an_evening_punch_that_arrives_first_is_still_the_checkout() {
        let mut r = DayRecord::default();
        assert_eq!(r.apply(66_600, None, SPLIT), (Kind::Out, true, false));
        assert_eq!(r.apply(28_800, None, SPLIT), (Kind::In, true, false));
        assert_eq!((r.first_in(), r.last_out()), (Some(28_800), Some(66_600)));
        // Labels keep their kind on either side of the split.
        assert_eq!(r.apply(50_000, Some(Kind::In), SPLIT).0, Kind::In);
        assert_eq!(r.apply(30_000, Some(Kind::Out), SPLIT).0, Kind::Out);
        assert_eq!(DayRecord::resolve_kind(SPLIT - 1, None, SPLIT), Kind::In);
        assert_eq!(DayRecord::resolve_kind(SPLIT, None, SPLIT), Kind::Out);
    }

    /// A board the old script wrote (18:30 stored as a check-in, then 08:00) reads as it was
    /// recorded, and takes new punches by the new rule.
    #[test]
    fn a_board_written_by_the_old_rule_reads_as_recorded() {
        let mut r = DayRecord::parse("i66600,i28800");
        assert_eq!((r.first_in(), r.last_out()), (Some(28_800), None));
        assert_eq!(r.apply(66_600, None, SPLIT), (Kind::Out, true, false));
        assert_eq!(r.encode(), "i66600,i28800,o66600");
    }

    use proptest::prelude::*;

    /// A day's punches: secs anywhere in the day (late evening, small hours), each unlabelled
    /// or labelled, with repeats, and more than [`MAX_TOKENS`] of them at times (compaction).
    fn day() -> impl Strategy<Value = Vec<(i64, Option<Kind>)>> {
        let kind = prop::option::of(prop::bool::ANY.prop_map(|b| if b { Kind::In } else { Kind::Out }));
        let secs = prop_oneof![
            prop::sample::select(vec![0i64, 28_800, 32_400, 48_599, 48_600, 64_800, 86_399]),
            0i64..86_400,
        ];
        prop::collection::vec((secs, kind), 1..40)
    }

    proptest! {
        /// Every arrival order of a day's punches gives the same first check-in and last
        /// check-out (what status, the supervisor's screen and settle read), the same punches
        /// kept (settle's punch history; past [`MAX_TOKENS`] too), and each punch the same kind.
        #[test]
        fn every_arrival_order_gives_the_same_day(
            (punches, shuffled) in day().prop_flat_map(|v| (Just(v.clone()), Just(v).prop_shuffle())),
        ) {
            let run = |list: &[(i64, Option<Kind>)]| {
                let mut r = DayRecord::default();
                let mut kinds: Vec<(i64, Option<&str>, &str)> = list
                    .iter()
                    .map(|&(s, k)| (s, k.map(Kind::as_str), r.apply(s, k, SPLIT).0.as_str()))
                    .collect();
                kinds.sort();
                let mut kept: Vec<(i64, &str)> = r.punches.iter().map(|&(k, s)| (s, k.as_str())).collect();
                kept.sort();
                // The row settle writes from them (Monday 2026-11-02, a work day, in Paris).
                let date = chrono::NaiveDate::from_ymd_opt(2026, 11, 2).unwrap();
                let policy = crate::domain::day::policy::Policy::default();
                let row = crate::domain::day::shift_clock::day_outcome(&policy, chrono_tz::Europe::Paris, date, true, false, r.first_in(), r.last_out());
                (r.first_in(), r.last_out(), kept, kinds, row)
            };
            prop_assert_eq!(run(&punches), run(&shuffled));
        }
    }
}
