//! Back-dating needs authority: which punches are held for a supervisor's review instead of
//! reaching the board, and the decisions on them (docs/security.md, "Back-dating needs
//! authority"). Pure: the caller knows the server's time and the recording key's authority.

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;

/// Whether a punch at `at`, recorded at `now` (the Redis server's clock), is back-dated past
/// the window: more than `window_minutes` before `now`. Such a punch is held for review unless
/// its recording process may replay offline punches (its key is in the keyring with
/// `replay = true`: `Keyring::authorises_replay`).
pub(crate) fn past_window(at: DateTime<Utc>, now: DateTime<Utc>, window_minutes: u32) -> bool {
    at < now - Duration::minutes(i64::from(window_minutes))
}

/// Where a held punch stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Status {
    Pending,
    Approved,
    Rejected,
}

impl Status {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Rejected => "rejected",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Status> {
        [Status::Pending, Status::Approved, Status::Rejected]
            .into_iter()
            .find(|x| x.as_str() == s)
    }
}

/// A decision's reason: required to reject, optional to approve; text, at most 500 characters.
pub(crate) fn check_reason(reason: Option<&str>, required: bool) -> Result<(), String> {
    match reason {
        None if required => Err("--reason must say why the punch is rejected".into()),
        None => Ok(()),
        Some(r) => {
            crate::domain::text::check("--reason", r)?;
            if r.trim().is_empty() || r.chars().count() > 500 {
                return Err("--reason must say why, in at most 500 characters".into());
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        crate::domain::dates::parse_instant(s).unwrap()
    }

    #[test]
    fn a_punch_is_past_the_window_only_when_older_than_it() {
        let now = at("2026-11-30T10:40:00Z");
        assert!(past_window(at("2026-11-30T07:55:00Z"), now, 15));
        assert!(!past_window(at("2026-11-30T10:25:00Z"), now, 15), "exactly the window");
        assert!(past_window(at("2026-11-30T10:24:59Z"), now, 15));
        assert!(!past_window(now, now, 0), "a punch stamped now");
        assert!(
            !past_window(at("2026-11-30T10:41:00Z"), now, 15),
            "a clock a little ahead"
        );
    }

    #[test]
    fn statuses_read_back_and_reasons_are_checked() {
        for s in [Status::Pending, Status::Approved, Status::Rejected] {
            assert_eq!(Status::parse(s.as_str()), Some(s));
        }
        assert!(check_reason(None, true).is_err());
        assert!(check_reason(None, false).is_ok());
        assert!(check_reason(Some(" "), false).is_err());
        assert!(check_reason(Some("a\u{1b}[2J"), true).is_err());
        assert!(check_reason(Some("forgot the badge"), true).is_ok());
    }
}
