//! The check-in event: what a supervisor is told, as JSON on the wire and in the outbox.
//!
//! The board's Lua script writes this JSON (it alone knows the punch's final kind and whether it
//! changed the record); Rust reads it back to publish and to show. Field names are documented
//! in docs/notifications.md; adding a field is compatible, renaming one is not.

use chrono::NaiveDate;
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

/// One punch as told to a supervisor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    /// Unique id (UUID v4); also the AMQP `message_id`. Consumers dedup on it.
    pub event_id: String,
    pub employee_id: String,
    pub employee_name: String,
    pub department_id: String,
    pub kind: Kind,
    /// RFC 3339 with the company's UTC offset.
    pub at: String,
    pub work_date: NaiveDate,
    /// A check-in after the deadline plus grace.
    pub late: bool,
    /// A check-out before the end of day minus grace.
    pub early: bool,
    /// Minutes after the deadline (0 unless late).
    pub late_minutes: u32,
    /// Minutes before the end of day (0 unless early).
    pub early_minutes: u32,
    /// Whether this punch changed the day's record (false for a repeat).
    pub changed: bool,
    /// Where the punch came from (kiosk name, "cli", "bulk", ...).
    pub source: String,
    /// When the punch was recorded on the board (RFC 3339, UTC). Differs from `at` for a
    /// punch replayed by a kiosk that was offline. Absent in events from before this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recorded_at: Option<String>,
}

impl Event {
    /// The routing key on the events exchange: `<department id>.<kind>`.
    pub fn routing_key(&self) -> String {
        routing_key(&self.department_id, self.kind)
    }
}

/// `<department id>.<kind>`; department ids hold no dots, so a topic binding `D042.*` takes a department.
pub fn routing_key(dept: &str, kind: Kind) -> String {
    format!("{dept}.{}", kind.as_str())
}
