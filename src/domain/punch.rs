//! A punch's kind, check-in or check-out, and its one spelling (`in`, `out`) on the command
//! line, on the wire and in the stores. Every family reads it: the day's record, the event, the
//! punch files.

use serde::{Deserialize, Serialize};

/// Punch kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    In,
    Out,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::In => "in",
            Kind::Out => "out",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "in" => Ok(Kind::In),
            "out" => Ok(Kind::Out),
            _ => Err(format!("kind must be 'in' or 'out', not '{s}'")),
        }
    }
}

/// A punch's event id, the same however often the punch is sent: a UUID (version 8, "custom")
/// made of the first 128 bits of SHA-256 over the punch's identity: the employee, the kind the
/// board gives it (its label, or what its time says against the day's split) and its instant to
/// the second. Those are what make two punches the same punch on a board (`i<secs>`/`o<secs>`
/// per employee, see `day::record`), so the event id, the punch log's key and every consumer's
/// dedup agree with the board: a file, a stream or a single punch sent again (before or after
/// settle, from a restarted kiosk or another one) carries the same id. The source and the key
/// that signed are not part of it: they say who recorded the punch, not which punch it is.
/// Not a secret: a signature, not the id, says an event is genuine.
pub(crate) fn punch_id(employee_id: &str, kind: Kind, at: chrono::DateTime<chrono::Utc>) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    // The employee id with its length first: no id can run into the fields after it.
    h.update(b"attendance punch v1\0");
    h.update((employee_id.len() as u64).to_be_bytes());
    h.update(employee_id.as_bytes());
    h.update(kind.as_str().as_bytes());
    h.update(b"\0");
    h.update(at.timestamp().to_string().as_bytes());
    let digest = h.finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes).into_uuid().to_string()
}

#[cfg(test)]
mod identity_tests {
    use super::*;
    use chrono::{TimeZone, Utc};

    #[test]
    fn the_same_punch_has_the_same_id_and_any_difference_another() {
        let at = Utc.with_ymd_and_hms(2026, 11, 30, 7, 55, 2).unwrap();
        let id = punch_id("E000123", Kind::In, at);
        assert_eq!(id, punch_id("E000123", Kind::In, at));
        // The sub-second part is not the board's: a punch is to the second.
        assert_eq!(
            id,
            punch_id("E000123", Kind::In, at + chrono::Duration::milliseconds(400))
        );
        assert_ne!(id, punch_id("E000124", Kind::In, at));
        assert_ne!(id, punch_id("E000123", Kind::Out, at));
        assert_ne!(id, punch_id("E000123", Kind::In, at + chrono::Duration::seconds(1)));
        // A UUID as before (version 8 instead of 4): 36 characters, nothing a record escapes.
        let u = uuid::Uuid::parse_str(&id).unwrap();
        assert_eq!((id.len(), u.get_version_num()), (36, 8));
    }
}
