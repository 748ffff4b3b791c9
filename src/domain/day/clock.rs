//! Whose clock counts: the servers'. A reading of a server's clock between two readings of this
//! host's, how far apart the two clocks are, and the rule that refuses a host whose clock is
//! further off than `policy.max_clock_skew_secs` (README "Where time comes from").

use chrono::{DateTime, Duration, Utc};

/// A server's clock read once, with this host's clock read just before the request went out
/// and just after the answer came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub before: DateTime<Utc>,
    pub server: DateTime<Utc>,
    pub after: DateTime<Utc>,
}

impl Reading {
    /// The round trip, as this host measured it.
    pub fn round_trip(&self) -> Duration {
        self.after - self.before
    }

    /// The server's clock minus this host's, taken at the middle of the round trip (the
    /// server answered somewhere in it: the error is at most half the round trip).
    pub fn offset(&self) -> Duration {
        self.server - (self.before + self.round_trip() / 2)
    }

    /// `Err(why)` when this host's clock is more than `max_secs` from the server's; `doing`
    /// says what is refused ("a punch with --at", "settle").
    pub fn check(&self, max_secs: u32, doing: &str) -> Result<(), String> {
        let host_ahead = -self.offset();
        let off = host_ahead.num_milliseconds().abs();
        if off <= i64::from(max_secs) * 1_000 {
            return Ok(());
        }
        let way = if host_ahead > Duration::zero() {
            "ahead of"
        } else {
            "behind"
        };
        Err(format!(
            "this host's clock is {} s {way} the Redis server's (host {}, server {}; at most \
             policy.max_clock_skew_secs = {max_secs}): {doing} is refused until the host's clock is set right (NTP)",
            off / 1_000,
            self.after.format("%Y-%m-%dT%H:%M:%SZ"),
            self.server.format("%Y-%m-%dT%H:%M:%SZ"),
        ))
    }
}

/// Of several readings, the one with the shortest round trip (as NTP does): a reply delayed by
/// a busy host would otherwise look like a clock that is off.
pub(crate) fn best(readings: impl IntoIterator<Item = Reading>) -> Option<Reading> {
    readings.into_iter().min_by_key(Reading::round_trip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        crate::domain::dates::parse_instant(s).unwrap()
    }

    fn reading(before: &str, server: &str, after: &str) -> Reading {
        Reading {
            before: at(before),
            server: at(server),
            after: at(after),
        }
    }

    #[test]
    fn the_offset_is_taken_at_the_middle_of_the_round_trip() {
        let r = reading("2026-11-30T08:00:00Z", "2026-11-30T08:00:11Z", "2026-11-30T08:00:02Z");
        assert_eq!(r.offset(), Duration::seconds(10));
        assert_eq!(r.round_trip(), Duration::seconds(2));
    }

    #[test]
    fn a_host_two_days_ahead_is_refused_naming_the_skew_and_the_key() {
        let r = reading("2026-12-02T08:00:00Z", "2026-11-30T08:00:00Z", "2026-12-02T08:00:00Z");
        let why = r.check(30, "settle").unwrap_err();
        assert!(why.contains("172800 s ahead of the Redis server's"), "{why}");
        assert!(why.contains("policy.max_clock_skew_secs = 30"), "{why}");
        assert!(why.contains("settle is refused"), "{why}");
    }

    #[test]
    fn a_host_within_the_bound_passes_and_one_behind_is_refused() {
        let within = reading("2026-11-30T08:00:00Z", "2026-11-30T08:00:30Z", "2026-11-30T08:00:00Z");
        assert!(within.check(30, "x").is_ok());
        let behind = reading("2026-11-30T08:00:00Z", "2026-11-30T08:00:31Z", "2026-11-30T08:00:00Z");
        assert!(behind.check(30, "x").unwrap_err().contains("31 s behind"));
    }

    #[test]
    fn the_shortest_round_trip_wins() {
        let slow = reading("2026-11-30T08:00:00Z", "2026-11-30T08:00:05Z", "2026-11-30T08:00:10Z");
        let quick = reading("2026-11-30T08:00:00Z", "2026-11-30T08:00:01Z", "2026-11-30T08:00:01Z");
        assert_eq!(best([slow, quick]), Some(quick));
    }
}
