//! An outbox entry made ready to publish ([`Outgoing`]): every publisher and every view of
//! pending events asks [`render`] (or [`render_verified`], the signature checked too). A compact
//! record (`event::record`) is rendered to the wire JSON, a void notice or an entry from before
//! the record is checked and published as it was written.
//!
//! The hot path writes the wire JSON of a record straight into one buffer (a bulk check-in
//! renders every punch's event), without the `Event` and its dozen Strings that
//! `record::decode` and `Event::to_wire_json` build and drop per event.
//!
//! It takes on only records written as this build writes them (`record::record_prefix`):
//! numbers as Rust prints them, texts with nothing escaped, ids a record need not escape, dates
//! and instants in years 1000 to 9999. Anything else (an old or hand-made entry) goes to the
//! general path, which renders it or says why not; so both give the same bytes and the same
//! verdicts (a proptest in this module checks one against the other).

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, TimeZone, Timelike, Utc};

use crate::domain::event::message::{MessageType, VOID};
use crate::domain::event::record::{
    decode, Event, Malformed, Written, RECORD_FIELDS, RECORD_V1, RECORD_V2, RECORD_V2_FIELDS,
};
use crate::domain::event::signing::{self, Keyring};
use crate::domain::event::void_notice::VoidNotice;
use crate::domain::punch::Kind;

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
            return format!("{}.{}", self.department_id, VOID);
        }
        crate::domain::event::record::routing_key(&self.department_id, self.kind)
    }
}

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
    if let Some(out) = render_record(id, stored, ring) {
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

/// Room for the JSON's field names, numbers and instants besides the record's texts.
const JSON_ROOM: usize = 256;

/// The event of a compact record, and with a keyring its signature checked over the record's
/// own bytes (`Keyring::verify_record`); `None` when this path does not take the record on or
/// the check fails: the caller's general path then renders it or refuses it with its reason.
fn render_record(id: &str, stored: &str, ring: Option<&Keyring>) -> Option<Outgoing> {
    let mut f = [""; RECORD_V2_FIELDS];
    let mut n = 0;
    for field in stored.split('\t') {
        *f.get_mut(n)? = field;
        n += 1;
    }
    let signed = match (f[0], n) {
        (RECORD_V1, RECORD_FIELDS) => false,
        (RECORD_V2, RECORD_V2_FIELDS) => true,
        _ => return None,
    };
    let last = f[n - 1];
    let kind = match last.as_bytes() {
        [b'i', _] => Kind::In,
        [b'o', _] => Kind::Out,
        _ => return None,
    };
    let changed = match last.as_bytes()[1] {
        b'1' => true,
        b'0' => false,
        _ => return None,
    };
    let (emp, name, dept, source) = (f[1], f[2], f[3], f[7]);
    if ![id, emp, name, dept, source].into_iter().all(plain) {
        return None;
    }
    let offset = FixedOffset::east_opt(i32::try_from(int(f[5])?).ok()?).filter(|o| o.local_minus_utc() % 60 == 0)?;
    let at = offset.timestamp_opt(int(f[4])?, 0).single()?;
    let recorded = Utc.timestamp_millis_opt(int(f[8])?).single()?;
    let work_date = date(f[6])?;
    let (late_if_in, early_if_out) = (u32::try_from(int(f[9])?).ok()?, u32::try_from(int(f[10])?).ok()?);
    let (late, early) = match kind {
        Kind::In => (late_if_in, 0),
        Kind::Out => (0, early_if_out),
    };
    let sig = signed.then_some((f[11], f[12]));
    if sig.is_some_and(|(key, tag)| !plain(key) || !plain(tag)) {
        return None;
    }
    if let Some(ring) = ring {
        // The same bytes `Keyring::verify` rebuilds from the event: only those of a record as
        // this build writes it (the other kind's minutes 0: what the event shows).
        let (key, tag) = sig?;
        if late_if_in != late || early_if_out != early {
            return None;
        }
        let body = &stored[RECORD_V2.len() + 1..stored.len() - last.len() - tag.len() - 1];
        ring.verify_record(id, body, kind, (key, tag), (work_date, recorded.timestamp_millis()))
            .ok()?;
    }
    let texts = id.len() + emp.len() + name.len() + dept.len() + source.len();
    let mut json = String::with_capacity(texts + JSON_ROOM);
    let field = |json: &mut String, name: &str, value: &str| {
        json.push_str(name);
        json.push('"');
        json.push_str(value);
        json.push('"');
    };
    field(&mut json, r#"{"event_id":"#, id);
    field(&mut json, r#","employee_id":"#, emp);
    field(&mut json, r#","employee_name":"#, name);
    field(&mut json, r#","department_id":"#, dept);
    json.push_str(r#","at":""#);
    instant(&mut json, &at.naive_local(), None)?;
    offset_of(&mut json, offset.local_minus_utc());
    json.push('"');
    field(&mut json, r#","work_date":"#, f[6]);
    field(&mut json, r#","source":"#, source);
    json.push_str(r#","recorded_at":""#);
    instant(
        &mut json,
        &recorded.naive_utc(),
        Some(recorded.timestamp_subsec_millis()),
    )?;
    json.push_str("Z\"");
    json.push_str(if kind == Kind::In {
        r#","kind":"in""#
    } else {
        r#","kind":"out""#
    });
    json.push_str(r#","late":"#);
    json.push_str(if late > 0 { "true" } else { "false" });
    json.push_str(r#","late_minutes":"#);
    number(&mut json, late);
    json.push_str(r#","early":"#);
    json.push_str(if early > 0 { "true" } else { "false" });
    json.push_str(r#","early_minutes":"#);
    number(&mut json, early);
    json.push_str(r#","changed":"#);
    json.push_str(if changed { "true" } else { "false" });
    if let Some((key, tag)) = sig {
        field(&mut json, r#","key_id":"#, key);
        field(&mut json, r#","sig":"#, tag);
    }
    json.push('}');
    Some(Outgoing {
        department_id: dept.to_string(),
        kind,
        json,
        recorded_at: Some(recorded),
        void: false,
    })
}

/// A signed record as this build writes it, read where it lies: what settle's check of the punch
/// logs needs of it, the signed bytes (`body`, as `render_record` checks them) included, so no
/// event is decoded nor its bytes rebuilt. `None` for anything else (an unsigned or older
/// record, a text a record escapes, numbers not written as Rust writes them): the general path
/// takes those.
pub(crate) fn signed_record<'a>(id: &'a str, stored: &'a str) -> Option<Written<'a>> {
    let mut f = [""; RECORD_V2_FIELDS];
    let mut n = 0;
    for field in stored.split('\t') {
        *f.get_mut(n)? = field;
        n += 1;
    }
    if (f[0], n) != (RECORD_V2, RECORD_V2_FIELDS) {
        return None;
    }
    let last = f[n - 1];
    let kind = match last.as_bytes() {
        [b'i', b'0' | b'1'] => Kind::In,
        [b'o', b'0' | b'1'] => Kind::Out,
        _ => return None,
    };
    let (emp, name, dept, source, key_id, sig) = (f[1], f[2], f[3], f[7], f[11], f[12]);
    if ![id, emp, name, dept, source, key_id, sig].into_iter().all(plain) {
        return None;
    }
    FixedOffset::east_opt(i32::try_from(int(f[5])?).ok()?).filter(|o| o.local_minus_utc() % 60 == 0)?;
    let (late, early) = (u32::try_from(int(f[9])?).ok()?, u32::try_from(int(f[10])?).ok()?);
    // The other kind's minutes 0: what the event shows, so these are the bytes it rebuilds.
    if (kind == Kind::In && early != 0) || (kind == Kind::Out && late != 0) {
        return None;
    }
    let recorded_ms = int(f[8])?;
    Utc.timestamp_millis_opt(recorded_ms).single()?;
    let at = int(f[4])?;
    Utc.timestamp_opt(at, 0).single()?;
    Some(Written {
        event_id: id,
        employee_id: emp,
        kind,
        at,
        work_date: date(f[6])?,
        recorded_ms,
        key_id,
        sig,
        body: &stored[RECORD_V2.len() + 1..stored.len() - last.len() - sig.len() - 1],
    })
}

/// A text that JSON writes as it is, and that a record holds as it is (nothing escaped, no
/// control character: `event::escaped`'s test). Printable ASCII is told byte by byte (ids, tags,
/// most names); a text with anything else is asked of each character.
fn plain(s: &str) -> bool {
    if s.bytes().all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\') {
        return true;
    }
    !s.chars().any(|c| c == '"' || c == '\\' || c.is_control())
}

/// An integer written as Rust writes it: no sign but a minus, no leading zero, no "-0".
fn int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let canonical = match digits.as_bytes() {
        [] => false,
        [b'0'] => s.len() == 1,
        [first, rest @ ..] => (b'1'..=b'9').contains(first) && rest.iter().all(u8::is_ascii_digit),
    };
    canonical.then(|| s.parse().ok()).flatten()
}

/// A date as `NaiveDate` writes it (YYYY-MM-DD, a year 1000 to 9999), and a real one.
fn date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        b.get(r)?
            .iter()
            .try_fold(0u32, |n, c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')))
    };
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' || b[0] == b'0' {
        return None;
    }
    NaiveDate::from_ymd_opt(i32::try_from(digits(0..4)?).ok()?, digits(5..7)?, digits(8..10)?)
}

/// `YYYY-MM-DDTHH:MM:SS`, and `.mmm` with `millis`: RFC 3339 as chrono writes it for a year 1000
/// to 9999 (`None` for another year: the general path writes those).
fn instant(json: &mut String, t: &chrono::NaiveDateTime, millis: Option<u32>) -> Option<()> {
    if !(1000..=9999).contains(&t.year()) {
        return None;
    }
    number(json, t.year().unsigned_abs());
    for (sep, v) in [
        ('-', t.month()),
        ('-', t.day()),
        ('T', t.hour()),
        (':', t.minute()),
        (':', t.second()),
    ] {
        json.push(sep);
        two(json, v);
    }
    if let Some(ms) = millis {
        json.push('.');
        two(json, ms / 10);
        json.push(char::from(b'0' + (ms % 10) as u8));
    }
    Some(())
}

/// `+HH:MM` or `-HH:MM` (whole minutes: the caller checked).
fn offset_of(json: &mut String, secs: i32) {
    json.push(if secs < 0 { '-' } else { '+' });
    let mins = secs.unsigned_abs() / 60;
    two(json, mins / 60);
    json.push(':');
    two(json, mins % 60);
}

/// Two digits, zero-padded (`v` < 100).
fn two(json: &mut String, v: u32) {
    json.push(char::from(b'0' + (v / 10) as u8));
    json.push(char::from(b'0' + (v % 10) as u8));
}

fn number(json: &mut String, v: u32) {
    use std::fmt::Write;
    write!(json, "{v}").expect("writing to a String never fails");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::event::record::{decode, record_of, record_prefix, Event, RecordFields};
    use crate::domain::event::signer::Signer;
    use proptest::prelude::*;

    const SECRET: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

    /// What the general path gives: the event decoded, its signature checked on the event
    /// (rebuilding the signed bytes), its JSON written from it.
    fn general(id: &str, stored: &str, ring: Option<&Keyring>) -> Result<String, String> {
        let ev: Event = decode(id, stored).map_err(|e| e.0)?;
        if let Some(ring) = ring {
            ring.verify(&ev).map_err(|e| e.to_string())?;
        }
        Ok(ev.to_wire_json())
    }

    fn ring() -> Keyring {
        let mut ring = Keyring::default();
        ring.add("kiosk-3", SECRET).unwrap();
        ring
    }

    /// Any text, weighted towards what a record escapes or splits on.
    fn text() -> impl Strategy<Value = String> {
        prop_oneof![
            "[A-Za-z0-9 ._-]{0,12}",
            "[ -~\t\n\"\\\\ëZ\u{7f}\u{85}é]{0,12}",
            any::<String>()
        ]
    }

    prop_compose! {
        /// A record as this build writes it (signed or not), for arbitrary fields.
        fn written()(
            id in "[0-9a-f-]{1,36}", emp in text(), name in text(), dept in text(), source in text(),
            at in -62_000_000_000i64..260_000_000_000, offset in -86_399i32..86_400, whole in any::<bool>(),
            days in -800_000i32..3_000_000, recorded in -62_000_000_000_000i64..260_000_000_000_000,
            late in any::<u32>(), early in any::<u32>(), kind in any::<bool>(), changed in any::<bool>(),
            signed in any::<bool>(),
        ) -> (String, String, bool) {
            let offset = if whole { offset / 60 * 60 } else { offset };
            let kind = if kind { Kind::In } else { Kind::Out };
            let signer = Signer::new("kiosk-3", SECRET).unwrap();
            let f = RecordFields {
                event_id: &id,
                kind,
                signer: signed.then_some(&signer),
                employee_id: &emp,
                employee_name: &name,
                department_id: &dept,
                at: FixedOffset::east_opt(offset).unwrap().timestamp_opt(at, 0).unwrap(),
                work_date: NaiveDate::from_num_days_from_ce_opt(days).unwrap(),
                source: &source,
                recorded_at: Utc.timestamp_millis_opt(recorded).unwrap(),
                late_minutes_if_in: late,
                early_minutes_if_out: early,
            };
            let suffix = format!("{}{}", if kind == Kind::In { 'i' } else { 'o' }, u8::from(changed));
            (id.clone(), record_prefix(&f) + &suffix, signed)
        }
    }

    proptest! {
        /// `plain` is the test by which a record escapes a text (a text it escapes never is).
        #[test]
        fn plain_is_what_a_record_leaves_unescaped(s in text()) {
            let unescaped = matches!(crate::domain::event::record::escaped(&s), std::borrow::Cow::Borrowed(_));
            prop_assert_eq!(plain(&s), unescaped);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        /// Whatever this path renders is what the general path renders, byte for byte, with
        /// and without a keyring; and every record it declines, the general path still takes or
        /// refuses as before (it is the fallback).
        #[test]
        fn the_direct_rendering_is_the_general_one((id, record, _) in written()) {
            let ring = ring();
            for r in [None, Some(&ring)] {
                if let Some(out) = render_record(&id, &record, r) {
                    prop_assert_eq!(Ok(out.json.clone()), general(&id, &record, r));
                    let ev: Event = serde_json::from_str(&out.json).unwrap();
                    prop_assert_eq!(out.recorded_at.map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)), ev.recorded_at);
                    prop_assert_eq!((out.department_id, out.kind), (ev.department_id, ev.kind));
                }
            }
        }

        /// A record of plain texts and ordinary instants, as a check-in writes it, is rendered
        /// here, never left to the general path (or the hot path would gain nothing).
        #[test]
        fn an_ordinary_record_takes_the_direct_path(
            emp in "E[0-9]{1,6}", name in "[A-Za-z ]{1,20}", dept in "D[0-9]{1,4}",
            // Up to the shared secrets' cut-over (2027-12-31): the ring here is a keyring file's.
            at in 1_700_000_000i64..1_830_000_000, offset in -720i32..840, late in 0u32..600, early in 0u32..600,
            kind in any::<bool>(), changed in any::<bool>(), signed in any::<bool>(),
        ) {
            let kind = if kind { Kind::In } else { Kind::Out };
            let signer = Signer::new("kiosk-3", SECRET).unwrap();
            let at = FixedOffset::east_opt(offset * 60).unwrap().timestamp_opt(at, 0).unwrap();
            let f = RecordFields {
                event_id: "6f1c2a",
                kind,
                signer: signed.then_some(&signer),
                employee_id: &emp,
                employee_name: &name,
                department_id: &dept,
                at,
                work_date: at.date_naive(),
                source: "kiosk-3",
                recorded_at: at.with_timezone(&Utc) + chrono::Duration::milliseconds(1234),
                late_minutes_if_in: late,
                early_minutes_if_out: early,
            };
            let record = record_prefix(&f) + if kind == Kind::In { "i" } else { "o" } + if changed { "1" } else { "0" };
            let ring = ring();
            let out = render_record("6f1c2a", &record, signed.then_some(&ring));
            prop_assert!(out.is_some(), "not rendered directly: {}", record);
            prop_assert_eq!(Ok(out.unwrap().json), general("6f1c2a", &record, signed.then_some(&ring)));
        }

        /// Records changed by hand (a field replaced by any text, one byte dropped or doubled)
        /// are rendered the same as the general path renders them, or left to it.
        #[test]
        fn an_altered_record_is_rendered_the_same_or_left_alone(
            (id, record, _) in written(), at in 0usize..14, with in text(), cut in any::<prop::sample::Index>(),
        ) {
            let mut fields: Vec<String> = record.split('\t').map(str::to_string).collect();
            let i = at % fields.len();
            fields[i] = with;
            let replaced = fields.join("\t");
            let k = cut.index(record.len().max(1));
            let dropped = record.get(..k).zip(record.get(k + 1..)).map(|(a, b)| format!("{a}{b}"));
            let doubled = record.get(..k).zip(record.get(k..)).map(|(a, b)| format!("{a}{b}"));
            let ring = ring();
            for r in [Some(replaced), dropped, doubled].into_iter().flatten() {
                for keys in [None, Some(&ring)] {
                    if let Some(out) = render_record(&id, &r, keys) {
                        prop_assert_eq!(Ok(out.json), general(&id, &r, keys));
                    }
                }
            }
        }
    }

    #[test]
    fn a_record_signed_by_another_key_or_retagged_is_left_to_the_general_path_which_refuses_it() {
        let signer = Signer::new("kiosk-3", SECRET).unwrap();
        let at = FixedOffset::east_opt(3600)
            .unwrap()
            .timestamp_opt(1_796_000_000, 0)
            .unwrap();
        let f = RecordFields {
            event_id: "6f1c",
            kind: Kind::In,
            signer: Some(&signer),
            employee_id: "E7",
            employee_name: "Ann",
            department_id: "D042",
            at,
            work_date: at.date_naive(),
            source: "kiosk-3",
            recorded_at: at.with_timezone(&Utc),
            late_minutes_if_in: 12,
            early_minutes_if_out: 0,
        };
        let record = record_prefix(&f) + "i1";
        let ring = ring();
        assert!(render_record("6f1c", &record, Some(&ring)).is_some());
        // The kind the script settled differs from the one signed; another event id.
        assert!(render_record("6f1c", &(record_prefix(&f) + "o1"), Some(&ring)).is_none());
        assert!(render_record("6f1d", &record, Some(&ring)).is_none());
        let mut other = Keyring::default();
        other
            .add("kiosk-3", "MTIzNDU2Nzg5MGFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=")
            .unwrap();
        assert!(render_record("6f1c", &record, Some(&other)).is_none());
        assert!(
            crate::domain::event::render::render_verified("6f1c", &record, Some(&other))
                .unwrap_err()
                .0
                .contains("bad signature")
        );
        // Without a keyring it renders (the publisher checks nothing then, as before).
        assert!(render_record("6f1d", &record, None).is_some());
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
        ring.add("kiosk-3", secret).unwrap();
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
