//! One employee's day as stored in a board hash field: a compact list of punches.
//!
//! The value is comma-separated tokens, `i<secs>` for a check-in and `o<secs>` for a
//! check-out, `secs` counted from the start of the work day in the company's zone (so a
//! typical day is `i30600,o64800`, 13 bytes). An empty value means "laid out, no punch yet".
//! The first check-in is the earliest `i`, the last check-out the latest `o`. The Lua script
//! `punch.lua` writes this format; this module reads it. Keep the two in step.

use crate::domain::event::Kind;

/// Tokens kept per employee and day; further distinct punches are counted but not stored.
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

    /// The reference model of `punch.lua`: the kind an unlabelled punch takes, and whether a
    /// punch changes the record. Used by property tests against the real script.
    pub fn resolve_kind(&self, secs: i64, kind: Option<Kind>, repeat_window_secs: i64) -> Kind {
        kind.unwrap_or(match self.first_in() {
            None if self.last_out().is_none() => Kind::In,
            Some(first) if secs < first + repeat_window_secs => Kind::In,
            _ => Kind::Out,
        })
    }

    /// Apply one punch as the script does; returns (kind, changed, duplicate).
    pub fn apply(&mut self, secs: i64, kind: Option<Kind>, repeat_window_secs: i64) -> (Kind, bool, bool) {
        let kind = self.resolve_kind(secs, kind, repeat_window_secs);
        if self.punches.contains(&(kind, secs)) {
            return (kind, false, true);
        }
        let before = (self.first_in(), self.last_out());
        if self.punches.len() < MAX_TOKENS {
            self.punches.push((kind, secs));
        } else {
            // Full: compact the history to the record itself plus this punch, as punch.lua does.
            let (f, l) = before;
            let (f, l) = match kind {
                Kind::In => (Some(f.map_or(secs, |f| f.min(secs))), l),
                Kind::Out => (f, Some(l.map_or(secs, |l| l.max(secs)))),
            };
            let mut toks: Vec<(Kind, i64)> = f
                .map(|f| (Kind::In, f))
                .into_iter()
                .chain(l.map(|l| (Kind::Out, l)))
                .collect();
            if !toks.contains(&(kind, secs)) {
                toks.push((kind, secs));
            }
            self.punches = toks;
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

    #[test]
    fn a_second_scan_seconds_later_is_not_a_checkout() {
        let mut r = DayRecord::default();
        assert_eq!(r.apply(30600, None, 1800), (Kind::In, true, false));
        assert_eq!(r.apply(30605, None, 1800), (Kind::In, false, false));
        assert_eq!(r.apply(30605, None, 1800), (Kind::In, false, true));
        assert_eq!(r.apply(64800, None, 1800), (Kind::Out, true, false));
        assert_eq!(r.apply(64000, Some(Kind::Out), 1800), (Kind::Out, false, false));
    }
}
