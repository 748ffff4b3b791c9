//! How every command prints an instant (docs/commands.md, "The JSON contract"): RFC 3339 in the
//! company's zone, to the second, with its numeric offset: `2026-12-01T08:04:00+01:00`. One
//! form in every `--json` output, so that a script compares and parses them all alike.
//!
//! The stores keep instants in UTC (`NaiveDateTime` from MySQL); a row's `Serialize` has no
//! way to be told the zone, so the process's company zone is set once, where the
//! configuration is built ([`set_zone`]), and the serde helpers below read it. The wire format
//! of events (signed, published) is not this contract and keeps its own forms.

use std::sync::OnceLock;

use chrono::{DateTime, NaiveDateTime, TimeZone};
use chrono_tz::Tz;
use serde::Serializer;

static ZONE: OnceLock<Tz> = OnceLock::new();

/// The company's zone for every instant printed from now on (the first call wins).
pub(crate) fn set_zone(tz: Tz) {
    let _ = ZONE.set(tz);
}

/// The company's zone ([`set_zone`]), UTC before it is set.
fn zone() -> Tz {
    ZONE.get().copied().unwrap_or(Tz::UTC)
}

/// An instant as printed: RFC 3339 in the company's zone, seconds, numeric offset.
pub(crate) fn text<Z: TimeZone>(t: &DateTime<Z>) -> String {
    text_in(zone(), t)
}

/// An instant as printed, in a zone the caller holds.
pub(crate) fn text_in<Z: TimeZone>(tz: Tz, t: &DateTime<Z>) -> String {
    t.with_timezone(&tz).to_rfc3339_opts(chrono::SecondsFormat::Secs, false)
}

/// A UTC instant as stored (MySQL's `DATETIME`), as printed.
pub(crate) fn utc_text(t: NaiveDateTime) -> String {
    text(&t.and_utc())
}

/// An RFC 3339 text in whatever offset and precision (a wire event's), as printed; a text that
/// is no RFC 3339 instant is kept as it is.
pub(crate) fn reform(t: &str) -> String {
    DateTime::parse_from_rfc3339(t).map_or_else(|_| t.to_string(), |t| text(&t))
}

/// `#[serde(serialize_with = "instant::utc")]` for a UTC `NaiveDateTime`.
pub(crate) fn utc<S: Serializer>(t: &NaiveDateTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&utc_text(*t))
}

/// `#[serde(serialize_with = "instant::utc_opt")]` for an optional UTC `NaiveDateTime`.
pub(crate) fn utc_opt<S: Serializer>(t: &Option<NaiveDateTime>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => utc(t, s),
        None => s.serialize_none(),
    }
}

/// `#[serde(serialize_with = "instant::rfc3339_opt")]` for an optional RFC 3339 text kept as
/// it came (a header, a wire field).
pub(crate) fn rfc3339_opt<S: Serializer>(t: &Option<String>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&reform(t)),
        None => s.serialize_none(),
    }
}

/// `#[serde(serialize_with = "instant::punch_list")]` for a stored punch history
/// (`in@<RFC 3339>,out@...`): a list of `{"kind": "in", "at": <instant>}`, in stored order.
pub(crate) fn punch_list<S: Serializer>(stored: &str, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let tokens: Vec<&str> = stored.split(',').filter(|t| !t.is_empty()).collect();
    let mut seq = s.serialize_seq(Some(tokens.len()))?;
    for tok in tokens {
        let (kind, at) = tok.split_once('@').unwrap_or(("", tok));
        seq.serialize_element(&serde_json::json!({ "kind": kind, "at": reform(at) }))?;
    }
    seq.end()
}

/// The keys of a wire message (event, void notice, absence alert) that hold instants.
const WIRE_INSTANTS: [&str; 6] = ["at", "recorded_at", "voided_at", "due_at", "alert_at", "sent_at"];

/// A wire message as a command prints it (`watch-dept --json`): the same fields, its instants
/// in the printed form. What was signed and published is not changed: this is a copy.
pub(crate) fn printed_message(mut v: serde_json::Value) -> serde_json::Value {
    if let Some(m) = v.as_object_mut() {
        for k in WIRE_INSTANTS {
            if let Some(serde_json::Value::String(t)) = m.get_mut(k) {
                *t = reform(t);
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_form_whatever_the_input() {
        // The zone is the process's: these expectations hold in UTC and in any set zone.
        let t = NaiveDateTime::parse_from_str("2026-12-01 07:04:05", "%Y-%m-%d %H:%M:%S").unwrap();
        let shown = utc_text(t);
        assert_eq!(DateTime::parse_from_rfc3339(&shown).unwrap(), t.and_utc());
        assert_eq!(
            reform("2026-12-01T07:04:05.123Z"),
            shown,
            "milliseconds and Z: one form"
        );
        assert_eq!(reform("2026-12-01T08:04:05+01:00"), shown);
        assert!(!shown.contains('Z') && !shown.contains('.'), "{shown}");
        assert_eq!(reform("not a time"), "not a time");
    }
}
