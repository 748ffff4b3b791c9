//! The check-in event ([`Event`]): what a supervisor is told, as JSON on the wire and in the
//! outbox, and its compact outbox record, with the bytes a signature covers ([`signed_body`]).
//!
//! The outbox holds a compact record of each event (see `record_prefix` below): Rust writes all
//! of it but the punch's kind and whether it changed the record, which only the board's Lua
//! script knows; every publisher renders the wire JSON from it through `event::render`.
//! Field names are documented in docs/notifications.md; adding a field is compatible, renaming
//! one is not.

use chrono::{DateTime, FixedOffset, NaiveDate, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::event::signer::Signer;
use crate::domain::punch::Kind;

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
    /// The id of the key that signed the event (domain/event/signing.rs); absent: unsigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// The signature (HMAC-SHA256 of the record's bytes truncated to 128 bits, base64url, 22
    /// characters; an Ed25519 signature of them, 86; a batch tag, `b1.` and the batch's
    /// signature with the record's audit path, see `event::batch`; or, from older builds, the
    /// whole MAC of the first canonical text in base64, 43: see `event::signing`); absent:
    /// unsigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sig: Option<String>,
}

impl Event {
    /// The routing key on the events exchange: `<department id>.<kind>`.
    pub fn routing_key(&self) -> String {
        routing_key(&self.department_id, self.kind)
    }
}

/// `<department id>.<kind>`; department ids hold no dots, so a topic binding `D042.*` takes a department.
pub(crate) fn routing_key(dept: &str, kind: Kind) -> String {
    format!("{dept}.{}", kind.as_str())
}

// ---------------------------------------------------------------------------------------------
// The outbox record, and the wire JSON rendered from it: the one place that says what an event
// holds besides the `Event` type above.
//
// A department's outbox (a Redis hash: event id -> record) holds, per event not yet confirmed
// by the broker, a compact record: tab-separated fields after a version tag,
//
//   1 \t employee id \t name \t department id \t at (unix secs) \t at's UTC offset (secs)
//     \t work date \t source \t recorded_at (unix millis) \t late minutes if in
//     \t early minutes if out \t <i|o><1|0>
//
// and, for a signed event, version 2: the same with the key id and the signature before the
// last field (`2 \t ... \t early minutes if out \t key id \t signature \t <i|o><1|0>`), the
// minutes of the other kind 0. The signature is made over these very bytes (see
// `signer::record_message`) and covers the kind Rust resolved (the script resolves the same
// from the same time), so a record whose script suffix disagrees fails verification.
//
// where name and source are JSON-escaped without their quotes (so they hold no tab), and the
// last field, the punch's kind and whether it changed the day's record, is the only part that
// `redis/scripts/punch.lua` writes: Rust builds everything before it (`record_prefix`). Outboxes filled
// before this record existed hold the event's JSON itself (a value that starts with `{`);
// `render` takes both, so such entries are published as they were written.
// ---------------------------------------------------------------------------------------------

/// The record's version tag (its first field).
pub(super) const RECORD_V1: &str = "1";
/// Fields in a version 1 record, the tag and the script's suffix included.
pub(super) const RECORD_FIELDS: usize = 12;
/// A signed record's tag, and its fields (key id and signature added).
pub(super) const RECORD_V2: &str = "2";
pub(super) const RECORD_V2_FIELDS: usize = 14;

/// What Rust knows of a punch's event before the script settles its kind (a label, or the
/// punch's time against the day's split) and whether it changed the record.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecordFields<'a> {
    pub event_id: &'a str,
    /// The punch's kind as the script will resolve it (its label, or its time against the split).
    pub kind: Kind,
    /// The recording process's key; `None`: an unsigned (version 1) record.
    pub signer: Option<&'a Signer>,
    pub employee_id: &'a str,
    pub employee_name: &'a str,
    pub department_id: &'a str,
    /// The punch's instant in the company's zone.
    pub at: DateTime<FixedOffset>,
    pub work_date: NaiveDate,
    pub source: &'a str,
    pub recorded_at: DateTime<Utc>,
    pub late_minutes_if_in: u32,
    pub early_minutes_if_out: u32,
}

/// The record up to its last field, which the punch script appends (`<i|o><1|0>`). A signed
/// record is tagged over its own bytes as written (see `signer::record_message`): no second
/// text is built for the signature.
pub(crate) fn record_prefix(f: &RecordFields) -> String {
    let Some(signer) = f.signer else {
        return prefix(RECORD_V1, f, f.late_minutes_if_in, f.early_minutes_if_out);
    };
    let mut record = signed_head(f, signer.key_id(), RECORD_ROOM);
    // The tag goes into the record's own buffer, sized for it and the script's suffix.
    signer.append_tag(f.event_id, &mut record, RECORD_V2.len() + 1, f.kind);
    record.push('\t');
    record
}

/// [`record_prefix`] of many punches signed with `signer` as one batch (`Signer::append_tags`:
/// with an Ed25519 key, one signature for them all), in their order.
pub(crate) fn record_prefixes(fs: &[RecordFields], signer: &Signer) -> Vec<String> {
    let mut records: Vec<(&str, String, Kind)> = fs
        .iter()
        .map(|f| {
            (
                f.event_id,
                signed_head(f, signer.key_id(), RECORD_ROOM + BATCH_ROOM),
                f.kind,
            )
        })
        .collect();
    signer.append_tags(&mut records, RECORD_V2.len() + 1);
    records
        .into_iter()
        .map(|(_, mut record, _)| {
            record.push('\t');
            record
        })
        .collect()
}

/// A signed record up to its tag: every field to the key id and its tab.
fn signed_head(f: &RecordFields, key_id: &str, room: usize) -> String {
    // Only the minutes of the punch's kind (the other 0): what the event shows, so that the
    // record rebuilt from the event (`signed_body`) is the very bytes signed.
    let (late, early) = match f.kind {
        Kind::In => (f.late_minutes_if_in, 0),
        Kind::Out => (0, f.early_minutes_if_out),
    };
    let mut record = prefix_in(RECORD_V2, f, late, early, room);
    record += key_id;
    record.push('\t');
    record
}

/// What the current signature format covers of an event besides its id and kind: its record
/// from the employee id to the key id and its tab, rebuilt from the wire fields (see
/// `signer::record_message`). Ids holding what the record would escape are refused, so no two
/// events share these bytes.
pub(crate) fn signed_body(ev: &Event, key_id: &str) -> Result<String, Malformed> {
    for (what, id) in [
        ("event_id", &ev.event_id),
        ("employee_id", &ev.employee_id),
        ("department_id", &ev.department_id),
    ] {
        if matches!(escaped(id), std::borrow::Cow::Owned(_)) {
            return Err(Malformed(format!("{what} holds a character a record escapes")));
        }
    }
    if ev.recorded_at.is_none() {
        return Err(Malformed("a signed event without recorded_at".into()));
    }
    let mut body = prefix("", &fields_of(ev)?, ev.late_minutes, ev.early_minutes);
    body.remove(0);
    body += key_id;
    body.push('\t');
    Ok(body)
}

/// Room for a record's numbers, tabs, key id, tag and the script's suffix besides its texts:
/// enough that a record is written into one buffer, never grown (a key id is at most 64).
const RECORD_ROOM: usize = 192;
/// What a batch tag adds to that room: up to 128 leaves (7 nodes), 3 + 262 characters.
const BATCH_ROOM: usize = 280;

/// The record's fields, tag first, each followed by a tab, in a buffer sized once for the
/// whole record (the key id, the tag and the script's suffix included).
fn prefix(tag: &str, f: &RecordFields, late: u32, early: u32) -> String {
    prefix_in(tag, f, late, early, RECORD_ROOM)
}

/// [`prefix`] with `room` besides the texts.
fn prefix_in(tag: &str, f: &RecordFields, late: u32, early: u32, room: usize) -> String {
    use std::fmt::Write;
    let (name, source) = (escaped(f.employee_name), escaped(f.source));
    let texts = f.employee_id.len() + name.len() + f.department_id.len() + source.len();
    let mut record = String::with_capacity(texts + room);
    // NaiveDate's Display is YYYY-MM-DD (years 1000 to 9999 here), without parsing a format.
    write!(
        record,
        "{tag}\t{}\t{name}\t{}\t{}\t{}\t{}\t{source}\t{}\t{late}\t{early}\t",
        f.employee_id,
        f.department_id,
        f.at.timestamp(),
        f.at.offset().local_minus_utc(),
        f.work_date,
        f.recorded_at.timestamp_millis(),
    )
    .expect("writing to a String never fails");
    record
}

/// An event's fields as a record holds them (unsigned: a record is signed by its writer).
fn fields_of(ev: &Event) -> Result<RecordFields<'_>, Malformed> {
    let at = DateTime::parse_from_rfc3339(&ev.at).map_err(|e| Malformed(format!("at: {e}")))?;
    let recorded = match &ev.recorded_at {
        Some(r) => DateTime::parse_from_rfc3339(r).map_err(|e| Malformed(format!("recorded_at: {e}")))?,
        None => at,
    };
    Ok(RecordFields {
        event_id: &ev.event_id,
        kind: ev.kind,
        signer: None,
        employee_id: &ev.employee_id,
        employee_name: &ev.employee_name,
        department_id: &ev.department_id,
        at,
        work_date: ev.work_date,
        source: &ev.source,
        recorded_at: recorded.with_timezone(&Utc),
        late_minutes_if_in: ev.late_minutes,
        early_minutes_if_out: ev.early_minutes,
    })
}

/// The whole record of an event, as the punch script leaves it: what a tool that migrates or
/// re-dates an outbox entry writes back.
pub fn record_of(ev: &Event) -> Result<String, Malformed> {
    let fields = fields_of(ev)?;
    let kind = if ev.kind == Kind::In { 'i' } else { 'o' };
    // A signed event keeps its signature as it is: it still covers what the record holds.
    let prefix = match (&ev.key_id, &ev.sig) {
        (Some(k), Some(sig)) if !k.contains('\t') && !sig.contains('\t') => {
            format!(
                "{}{k}\t{sig}\t",
                prefix(RECORD_V2, &fields, ev.late_minutes, ev.early_minutes)
            )
        }
        _ => record_prefix(&fields),
    };
    Ok(format!("{prefix}{kind}{}", u8::from(ev.changed)))
}

/// A JSON string's escaped text without its quotes: no tab, no newline, no bare quote.
pub(super) fn escaped(s: &str) -> std::borrow::Cow<'_, str> {
    // Names and sources rarely hold anything JSON escapes: those go in as they are (this runs
    // for every punch a bulk check-in builds).
    if !s.chars().any(|c| c == '"' || c == '\\' || c.is_control()) {
        return s.into();
    }
    let q = serde_json::to_string(s).expect("a string always serialises");
    q[1..q.len() - 1].to_string().into()
}

/// A signed record as `render::signed_record` reads it where it lies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Written<'a> {
    pub event_id: &'a str,
    pub employee_id: &'a str,
    pub kind: Kind,
    /// The punch's instant, unix seconds.
    pub at: i64,
    pub work_date: NaiveDate,
    pub recorded_ms: i64,
    pub key_id: &'a str,
    pub sig: &'a str,
    /// The bytes its signature covers besides its id and kind (`signer::record_message`).
    pub body: &'a str,
}

/// An outbox entry that is no event: never published, left where it is for a person to see.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an event: {0}")]
pub struct Malformed(pub String);

/// A version 1 or 2 record as the event it stands for.
pub(super) fn decode(id: &str, stored: &str) -> Result<Event, Malformed> {
    let bad = |what: &str| Malformed(format!("bad outbox record ({what})"));
    let mut f: Vec<&str> = stored.split('\t').collect();
    let signature = match (f.first().copied(), f.len()) {
        (Some(RECORD_V1), RECORD_FIELDS) => None,
        (Some(RECORD_V2), RECORD_V2_FIELDS) => {
            let (key_id, sig) = (f[11].to_string(), f[12].to_string());
            f.drain(11..13);
            Some((key_id, sig))
        }
        _ => return Err(bad("unknown version or wrong number of fields")),
    };
    let num = |i: usize, what: &str| f[i].parse::<i64>().map_err(|_| bad(what));
    let text = |i: usize, what: &str| serde_json::from_str::<String>(&format!("\"{}\"", f[i])).map_err(|_| bad(what));
    let offset = i32::try_from(num(5, "offset")?)
        .ok()
        .and_then(FixedOffset::east_opt)
        .ok_or_else(|| bad("offset"))?;
    let at = offset
        .timestamp_opt(num(4, "at")?, 0)
        .single()
        .ok_or_else(|| bad("at"))?;
    let recorded = Utc
        .timestamp_millis_opt(num(8, "recorded_at")?)
        .single()
        .ok_or_else(|| bad("recorded_at"))?;
    let (late_if_in, early_if_out) = (
        u32::try_from(num(9, "late")?).map_err(|_| bad("late"))?,
        u32::try_from(num(10, "early")?).map_err(|_| bad("early"))?,
    );
    let kind = match f[11].as_bytes().first() {
        Some(b'i') => Kind::In,
        Some(b'o') => Kind::Out,
        _ => return Err(bad("kind")),
    };
    let changed = match &f[11][1..] {
        "1" => true,
        "0" => false,
        _ => return Err(bad("changed")),
    };
    let (late_minutes, early_minutes) = match kind {
        Kind::In => (late_if_in, 0),
        Kind::Out => (0, early_if_out),
    };
    Ok(Event {
        event_id: id.to_string(),
        employee_id: f[1].to_string(),
        employee_name: text(2, "name")?,
        department_id: f[3].to_string(),
        kind,
        at: at.to_rfc3339_opts(chrono::SecondsFormat::Secs, false),
        work_date: NaiveDate::parse_from_str(f[6], "%Y-%m-%d").map_err(|_| bad("work date"))?,
        late: late_minutes > 0,
        early: early_minutes > 0,
        late_minutes,
        early_minutes,
        changed,
        source: text(7, "source")?,
        recorded_at: Some(recorded.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)),
        key_id: signature.as_ref().map(|s| s.0.clone()),
        sig: signature.map(|s| s.1),
    })
}

impl Event {
    /// The wire JSON, fields in the order the punch script wrote them before the compact record
    /// (so an event renders to the very bytes it was published as before).
    pub fn to_wire_json(&self) -> String {
        let q = |s: &str| serde_json::to_string(s).expect("a string always serialises");
        let mut json = format!(
            r#"{{"event_id":{},"employee_id":{},"employee_name":{},"department_id":{},"at":{},"work_date":"{}","source":{}"#,
            q(&self.event_id),
            q(&self.employee_id),
            q(&self.employee_name),
            q(&self.department_id),
            q(&self.at),
            self.work_date.format("%Y-%m-%d"),
            q(&self.source),
        );
        if let Some(r) = &self.recorded_at {
            json += &format!(r#","recorded_at":{}"#, q(r));
        }
        json += &format!(
            r#","kind":"{}","late":{},"late_minutes":{},"early":{},"early_minutes":{},"changed":{}}}"#,
            self.kind, self.late, self.late_minutes, self.early, self.early_minutes, self.changed
        );
        if let (Some(k), Some(sig)) = (&self.key_id, &self.sig) {
            json.truncate(json.len() - 1);
            json += &format!(r#","key_id":{},"sig":{}}}"#, q(k), q(sig));
        }
        json
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The fast path (nothing to escape) gives what JSON's escaping gives, for any text.
        #[test]
        fn escaped_is_json_escaping_without_quotes(s in any::<String>(), t in "[ -~\t\n\"\\\\ëZ]{0,12}") {
            for s in [&s, &t] {
                let q = serde_json::to_string(s).unwrap();
                prop_assert_eq!(escaped(s), &q[1..q.len() - 1]);
            }
        }
    }
}
