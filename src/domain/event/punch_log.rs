//! The punch log's entries: what a day's punch logs in Redis hold (one hash per way punches
//! came, event id -> the event's outbox record, see `redis/scripts/punch.lua`), read into the row
//! settle writes to MySQL's `punch_log`.

use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};

use crate::domain::event::record::Event;
use crate::domain::event::render::render;
use crate::domain::punch::Kind;

/// How a punch came to the board: each has its own punch log in Redis (see `redis/scripts/punch.lua`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum How {
    /// A check-in as it happened (`checkin E`).
    Live,
    /// A bulk check-in from a file (`checkin --file`).
    Bulk,
    /// Put back from the journal by `recover`.
    Recovered,
    /// A supervisor's correction (`correct`).
    Corrected,
    /// A back-dated punch held for review, then approved (`review approve`).
    Approved,
    /// A punch voided before settle (`punch void`): a row at the voided punch's time, so that
    /// the log shows it was there and went.
    Voided,
}

impl How {
    /// The ways a punch reaches the board (a correction is MySQL's alone).
    pub(crate) const ON_BOARD: [How; 4] = [How::Live, How::Bulk, How::Recovered, How::Approved];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            How::Live => "live",
            How::Bulk => "bulk",
            How::Recovered => "recovered",
            How::Corrected => "corrected",
            How::Approved => "approved",
            How::Voided => "voided",
        }
    }
}

/// One punch as the punch log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub event_id: String,
    pub work_date: NaiveDate,
    pub employee_id: String,
    pub department_id: String,
    /// The punch's instant, UTC.
    pub at: NaiveDateTime,
    pub kind: Kind,
    pub source: String,
    /// The id of the key that signed the event, when the event carries one.
    pub key_id: Option<String>,
    /// When the punch was recorded (UTC; the punch's own time for events without it).
    pub recorded_at: NaiveDateTime,
    pub how: How,
}

/// Read one field of a day's punch log in Redis (`how`'s log): the event id and its record.
pub(crate) fn parse(event_id: &str, record: &str, how: How) -> Result<Entry, String> {
    let out = render(event_id, record).map_err(|e| format!("punch log entry {event_id}: {e}"))?;
    let ev: Event = serde_json::from_str(&out.json).map_err(|e| format!("punch log entry {event_id}: {e}"))?;
    let at = DateTime::parse_from_rfc3339(&ev.at)
        .map_err(|e| format!("punch log entry {event_id}: at: {e}"))?
        .with_timezone(&Utc);
    Ok(Entry {
        event_id: event_id.to_string(),
        work_date: ev.work_date,
        employee_id: ev.employee_id,
        department_id: ev.department_id,
        at: at.naive_utc(),
        kind: ev.kind,
        source: ev.source,
        key_id: ev.key_id,
        recorded_at: out.recorded_at.unwrap_or(at).naive_utc(),
        how,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_logged_record_reads_back_as_its_punch() {
        let ev = Event {
            event_id: "e1".into(),
            employee_id: "E7".into(),
            employee_name: "Zoë".into(),
            department_id: "D042".into(),
            kind: Kind::In,
            at: "2026-11-30T09:12:00+01:00".into(),
            work_date: NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(),
            late: false,
            early: false,
            late_minutes: 0,
            early_minutes: 0,
            changed: true,
            source: "kiosk-3".into(),
            recorded_at: Some("2026-11-30T08:15:00.250Z".into()),
            key_id: None,
            sig: None,
        };
        let record = crate::domain::event::record::record_of(&ev).unwrap();
        let e = parse("e1", &record, How::Bulk).unwrap();
        assert_eq!(e.how, How::Bulk);
        assert_eq!((e.employee_id.as_str(), e.department_id.as_str()), ("E7", "D042"));
        assert_eq!(e.at.to_string(), "2026-11-30 08:12:00");
        assert_eq!(e.recorded_at.to_string(), "2026-11-30 08:15:00.250");
        assert_eq!((e.kind, e.source.as_str(), e.key_id), (Kind::In, "kiosk-3", None));
        assert!(parse("e1", "1\tE7", How::Bulk).is_err());
    }
}
