//! The check-in event: what a supervisor is told, as JSON on the wire and in the outbox.
//!
//! The outbox holds a compact record of each event (see `record_prefix` and `render` below):
//! Rust writes all of it but the punch's kind and whether it changed the record, which only the
//! board's Lua script knows; every publisher renders the wire JSON from it through `render`.
//! Field names are documented in docs/notifications.md; adding a field is compatible, renaming
//! one is not.

use chrono::{DateTime, FixedOffset, NaiveDate, TimeZone, Utc};
use serde::{Deserialize, Serialize};

use crate::domain::event::message::MessageType;
use crate::domain::event::signing::{self, Keyring, Signer};
use crate::domain::event::void_notice::VoidNotice;

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
    /// The id of the key that signed the event (domain/signing.rs); absent: unsigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_id: Option<String>,
    /// The signature (HMAC-SHA256 of the record's bytes truncated to 128 bits, base64url, 22
    /// characters; or, from older builds, the whole MAC of the first canonical text in base64,
    /// 43: see `signing`); absent: unsigned.
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
// `signing::record_message`) and covers the kind Rust resolved (the script resolves the same
// from the same time), so a record whose script suffix disagrees fails verification.
//
// where name and source are JSON-escaped without their quotes (so they hold no tab), and the
// last field, the punch's kind and whether it changed the day's record, is the only part that
// `redis/punch.lua` writes: Rust builds everything before it (`record_prefix`). Outboxes filled
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
/// record is tagged over its own bytes as written (see `signing::record_message`): no second
/// text is built for the signature.
pub(crate) fn record_prefix(f: &RecordFields) -> String {
    let Some(signer) = f.signer else {
        return prefix(RECORD_V1, f, f.late_minutes_if_in, f.early_minutes_if_out);
    };
    // Only the minutes of the punch's kind (the other 0): what the event shows, so that the
    // record rebuilt from the event (`signed_body`) is the very bytes signed.
    let (late, early) = match f.kind {
        Kind::In => (f.late_minutes_if_in, 0),
        Kind::Out => (0, f.early_minutes_if_out),
    };
    let mut record = prefix(RECORD_V2, f, late, early);
    record += signer.key_id();
    record.push('\t');
    // The tag goes into the record's own buffer, sized for it and the script's suffix.
    signer.append_tag(f.event_id, &mut record, RECORD_V2.len() + 1, f.kind);
    record.push('\t');
    record
}

/// What the current signature format covers of an event besides its id and kind: its record
/// from the employee id to the key id and its tab, rebuilt from the wire fields (see
/// `signing::record_message`). Ids holding what the record would escape are refused, so no two
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

/// The record's fields, tag first, each followed by a tab, in a buffer sized once for the
/// whole record (the key id, the tag and the script's suffix included).
fn prefix(tag: &str, f: &RecordFields, late: u32, early: u32) -> String {
    use std::fmt::Write;
    let (name, source) = (escaped(f.employee_name), escaped(f.source));
    let texts = f.employee_id.len() + name.len() + f.department_id.len() + source.len();
    let mut record = String::with_capacity(texts + RECORD_ROOM);
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

/// An outbox entry made ready to publish.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    pub department_id: String,
    pub kind: Kind,
    /// The wire JSON (see docs/notifications.md).
    pub json: String,
    /// When the punch was recorded (`at` for old entries without `recorded_at`), if readable.
    pub recorded_at: Option<DateTime<Utc>>,
    /// A void notice (`domain::event::void_notice`), not a punch: never journaled, as nothing replays it.
    pub void: bool,
}

impl Outgoing {
    /// `<department id>.<kind>`, or `<department id>.void` for a void notice.
    pub fn routing_key(&self) -> String {
        if self.void {
            return format!("{}.{}", self.department_id, crate::domain::event::void_notice::TYPE);
        }
        routing_key(&self.department_id, self.kind)
    }
}

/// An outbox entry that is no event: never published, left where it is for a person to see.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an event: {0}")]
pub struct Malformed(pub String);

/// Turn an outbox entry (event id, stored value) into what is published: a compact record is
/// rendered to the wire JSON; an entry from before the record (the event's JSON) is checked and
/// published as it was written. Every publisher and every view of pending events goes here.
pub fn render(id: &str, stored: &str) -> Result<Outgoing, Malformed> {
    render_verified(id, stored, None)
}

/// [`render`], and with a keyring the event's signature checked too: one that fails is
/// `Malformed` ("refused: ..."), so a publisher never sends what it cannot verify.
pub(crate) fn render_verified(id: &str, stored: &str, ring: Option<&Keyring>) -> Result<Outgoing, Malformed> {
    // The hot path: a record as this build writes it (never JSON, so never a void notice).
    if let Some(out) = crate::domain::event::render::render_record(id, stored, ring) {
        return Ok(out);
    }
    let refused = |r: signing::Refusal| Malformed(format!("refused: {r}"));
    if MessageType::of(stored.as_bytes()) == Ok(MessageType::Void) {
        let n: VoidNotice = serde_json::from_str(stored).map_err(|e| Malformed(format!("bad void notice: {e}")))?;
        if let Some(ring) = ring {
            n.verify(ring).map_err(refused)?;
        }
        return Ok(Outgoing {
            recorded_at: n.voided_at(),
            department_id: n.department_id,
            kind: n.kind,
            json: stored.to_string(),
            void: true,
        });
    }
    if stored.starts_with('{') {
        let ev: Event = serde_json::from_str(stored).map_err(|e| Malformed(format!("bad event JSON: {e}")))?;
        if let Some(ring) = ring {
            ring.verify(&ev).map_err(refused)?;
        }
        let recorded = ev.recorded_at.as_deref().unwrap_or(&ev.at);
        return Ok(Outgoing {
            recorded_at: DateTime::parse_from_rfc3339(recorded)
                .ok()
                .map(|t| t.with_timezone(&Utc)),
            department_id: ev.department_id,
            kind: ev.kind,
            json: stored.to_string(),
            void: false,
        });
    }
    let ev = decode(id, stored)?;
    if let Some(ring) = ring {
        ring.verify(&ev).map_err(refused)?;
    }
    let recorded_at = ev
        .recorded_at
        .as_deref()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok());
    Ok(Outgoing {
        json: ev.to_wire_json(),
        recorded_at: recorded_at.map(|t| t.with_timezone(&Utc)),
        department_id: ev.department_id,
        kind: ev.kind,
        void: false,
    })
}

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

    /// A check-in as the script before the compact record wrote it, byte for byte.
    const OLD: &str = r#"{"event_id":"6f1c","employee_id":"E7","employee_name":"Zoë \"Z\" \\ O\tK","department_id":"D042","at":"2026-11-30T09:12:00+01:00","work_date":"2026-11-30","source":"kiosk \"3\"","recorded_at":"2026-11-30T08:12:00.250Z","kind":"in","late":true,"late_minutes":12,"early":false,"early_minutes":0,"changed":true}"#;

    fn fields(at: &str) -> RecordFields<'static> {
        RecordFields {
            event_id: "6f1c",
            kind: Kind::In,
            signer: None,
            employee_id: "E7",
            employee_name: "Zoë \"Z\" \\ O\tK",
            department_id: "D042",
            at: DateTime::parse_from_rfc3339(at).unwrap(),
            work_date: NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(),
            source: "kiosk \"3\"",
            recorded_at: DateTime::parse_from_rfc3339("2026-11-30T08:12:00.250Z")
                .unwrap()
                .with_timezone(&Utc),
            late_minutes_if_in: 12,
            early_minutes_if_out: 339,
        }
    }

    #[test]
    fn a_record_renders_to_the_bytes_the_old_script_wrote() {
        let record = record_prefix(&fields("2026-11-30T09:12:00+01:00")) + "i1";
        assert!(!record.contains('\n') && record.split('\t').count() == RECORD_FIELDS);
        let out = render("6f1c", &record).unwrap();
        assert_eq!(out.json, OLD);
        assert_eq!((out.department_id.as_str(), out.kind), ("D042", Kind::In));
        assert_eq!(out.routing_key(), "D042.in");
        // The same punch as a check-out: early, not late; and a repeat that changed nothing.
        let out = render("6f1c", &(record_prefix(&fields("2026-11-30T09:12:00+01:00")) + "o0")).unwrap();
        let ev: Event = serde_json::from_str(&out.json).unwrap();
        assert_eq!((ev.kind, ev.late, ev.late_minutes), (Kind::Out, false, 0));
        assert_eq!((ev.early, ev.early_minutes, ev.changed), (true, 339, false));
    }

    #[test]
    fn an_entry_from_before_the_record_is_published_as_it_was_written() {
        let out = render("6f1c", OLD).unwrap();
        assert_eq!(out.json, OLD);
        assert_eq!(out.recorded_at, Some(fields("2026-11-30T09:12:00+01:00").recorded_at));
        // Older still: no recorded_at, the age counts from `at`.
        let older = OLD.replace(r#","recorded_at":"2026-11-30T08:12:00.250Z""#, "");
        let out = render("6f1c", &older).unwrap();
        assert_eq!(out.json, older);
        assert_eq!(out.recorded_at.unwrap().to_rfc3339(), "2026-11-30T08:12:00+00:00");
    }

    #[test]
    fn a_signed_record_renders_to_an_event_that_verifies_and_keeps_its_signature() {
        let secret = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
        let signer = Signer::new("kiosk-3", secret).unwrap();
        let mut ring = signing::Keyring::default();
        ring.add("kiosk-3", secret, false).unwrap();
        let f = RecordFields {
            signer: Some(&signer),
            ..fields("2026-11-30T09:12:00+01:00")
        };
        let record = record_prefix(&f) + "i1";
        assert!(record.starts_with("2\t") && record.split('\t').count() == RECORD_V2_FIELDS);
        let ev: Event = serde_json::from_str(&render("6f1c", &record).unwrap().json).unwrap();
        assert_eq!((ev.key_id.as_deref(), ev.late_minutes), (Some("kiosk-3"), 12));
        assert_eq!(ring.verify(&ev), Ok(()));
        assert_eq!(
            render("6f1c", &record_of(&ev).unwrap()).unwrap().json,
            ev.to_wire_json()
        );
        // The script settling another kind than the one signed: refused, not published.
        let other = record_prefix(&f) + "o1";
        assert!(render_verified("6f1c", &other, Some(&ring)).is_err());
        assert!(render_verified("6f1c", &record, Some(&ring)).is_ok());
        assert!(render_verified("6f1c", OLD, Some(&ring))
            .unwrap_err()
            .0
            .contains("unsigned"));
    }

    #[test]
    fn record_of_an_event_renders_back_to_it() {
        let ev: Event = serde_json::from_str(OLD).unwrap();
        assert_eq!(render("6f1c", &record_of(&ev).unwrap()).unwrap().json, OLD);
    }

    #[test]
    fn what_is_no_event_is_refused_not_guessed() {
        let good = record_prefix(&fields("2026-11-30T09:12:00+01:00")) + "i1";
        let mut bad: Vec<String> = vec![
            String::new(),
            "garbage".into(),
            "{\"event_id\":\"x\"}".into(),
            good.replacen('1', "2", 1),
            good.replace("\ti1", "\tx1"),
            good.replace("\ti1", "\ti"),
            good.replace("\ti1", "\ti2"),
            good.replace("\ti1", "\ti1\textra"),
            good.replace("D042", "D042\tD043"),
            good.replace("\t3600\t", "\tone hour\t"),
            good.replace("\t12\t", "\t-12\t"),
            good.replace("2026-11-30", "2026-13-30"),
            good.replace("Zo", "Z\\q"),
        ];
        bad.push(good[..good.len() - 1].to_string());
        for b in &bad {
            assert!(render("6f1c", b).is_err(), "rendered: {b:?}");
        }
        assert!(render("6f1c", &good).is_ok());
    }
}
