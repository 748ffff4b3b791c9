//! Signed events checked: the verifiers' keyring, why an event is refused, the first format's
//! canonical text, and everything a consumer checks of an event (docs/security.md). The
//! recording process's key and the current format's tag are `event::signer`.
//!
//! HMAC-SHA256: one keyed state per key, cloned per event (about a microsecond), so a bulk
//! check-in of 100,000 punches pays well under the 5% the hot path may spend. The price is the
//! trust model's: whoever holds a keyring can forge the events of every key in it.
//!
//! Two formats (told apart by the tag's length): the current one, a tag of 128 bits (HMAC-SHA256
//! truncated, RFC 2104 section 5, NIST SP 800-107) in base64url, 22 characters, over the bytes of
//! the outbox record itself (see `signer::record_message`); and the first one, the whole 256-bit MAC
//! in base64, 43 characters, over a canonical text of its own (see [`canonical`]), accepted for
//! events of work dates up to `signing.accept_v1_signatures_until` (the migration period).

use std::collections::{HashMap, HashSet};

use base64::Engine;
use chrono::{DateTime, NaiveDate};
use hmac::Mac;

use crate::domain::day::shifts::{Clocks, Shifts};
use crate::domain::event::membership::Membership;
use crate::domain::event::record::Event;
use crate::domain::event::signer::{check_key_id, keyed, record_message, HmacSha256, Signer, TAG_CHARS, V1_CHARS};
use crate::domain::punch::Kind;

/// What is signed of an event, as it is known before the board script runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signed<'a> {
    pub event_id: &'a str,
    pub employee_id: &'a str,
    pub employee_name: &'a str,
    pub department_id: &'a str,
    pub work_date: NaiveDate,
    /// The punch's instant, unix seconds.
    pub at: i64,
    pub kind: Kind,
    pub late_minutes: u32,
    pub early_minutes: u32,
    pub source: &'a str,
    /// When it was recorded, unix milliseconds.
    pub recorded_at_ms: i64,
    pub key_id: &'a str,
}

/// The first format's canonical text (events signed before the 128-bit tag, still verified in
/// the migration period): a version tag, then the fields one per line, the free texts
/// JSON-escaped (so none holds a newline). Whether the punch changed the day's record is not
/// signed: only the board's script knows it, and it tells a supervisor nothing new.
pub(crate) fn canonical(s: &Signed) -> String {
    let esc = |t: &str| serde_json::to_string(t).expect("a string always serialises");
    format!(
        "attendance-event-v1\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
        esc(s.event_id),
        esc(s.employee_id),
        esc(s.employee_name),
        esc(s.department_id),
        s.work_date,
        s.at,
        s.kind,
        s.late_minutes,
        s.early_minutes,
        esc(s.source),
        s.recorded_at_ms,
        esc(s.key_id),
    )
}

/// Why a verifier refused an event: the reason it is parked with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("unsigned event")]
    Unsigned,
    #[error("signed with unknown key id {0:?}")]
    UnknownKey(String),
    #[error("signed with revoked key id {0:?}")]
    Revoked(String),
    #[error("bad signature (key id {0:?})")]
    BadSignature(String),
    #[error("signed in the first format (key id {0:?}) after signing.accept_v1_signatures_until")]
    OldFormat(String),
    #[error("malformed event: {0}")]
    Malformed(String),
    #[error("roster: {0}")]
    Roster(String),
}

impl Refusal {
    /// A short class for counts (`doctor`, reports).
    pub fn class(&self) -> &'static str {
        match self {
            Refusal::Unsigned => "unsigned",
            Refusal::UnknownKey(_) => "unknown_key",
            Refusal::Revoked(_) => "revoked_key",
            Refusal::BadSignature(_) => "bad_signature",
            Refusal::OldFormat(_) => "old_format",
            Refusal::Malformed(_) => "malformed",
            Refusal::Roster(_) => "roster",
        }
    }
}

struct Entry {
    keyed: HmacSha256,
    replay: bool,
}

/// The keys a verifier accepts, by id (several at once: rotation), and the ids it refuses.
#[derive(Default)]
pub struct Keyring {
    keys: HashMap<String, Entry>,
    revoked: HashSet<String>,
    /// Unsigned events of work dates up to this one are accepted (a migration period).
    pub accept_unsigned_until: Option<NaiveDate>,
    /// Events signed in the first format (the whole MAC over [`canonical`]) of work dates up to
    /// this one are accepted (the migration period to the 128-bit tag).
    pub accept_v1_signatures_until: Option<NaiveDate>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ids: Vec<&String> = self.keys.keys().collect();
        ids.sort();
        f.debug_struct("Keyring")
            .field("key_ids", &ids)
            .field("revoked", &self.revoked)
            .field("accept_unsigned_until", &self.accept_unsigned_until)
            .field("accept_v1_signatures_until", &self.accept_v1_signatures_until)
            .finish()
    }
}

impl Keyring {
    /// Add a key; `replay`: it may replay offline punches (back-dating authority).
    pub fn add(&mut self, key_id: &str, secret_b64: &str, replay: bool) -> Result<(), String> {
        check_key_id(key_id)?;
        let keyed = keyed(secret_b64).map_err(|e| format!("key {key_id}: {e}"))?;
        self.keys.insert(key_id.to_string(), Entry { keyed, replay });
        Ok(())
    }

    pub fn revoke(&mut self, key_id: &str) {
        self.revoked.insert(key_id.to_string());
    }

    /// One line for `doctor`: the key ids and the revoked ones (never a secret).
    pub(crate) fn summary(&self) -> String {
        let sorted = |ids: Vec<&String>| {
            let mut ids: Vec<&str> = ids.into_iter().map(String::as_str).collect();
            ids.sort_unstable();
            ids.join(", ")
        };
        let mut s = format!(
            "a keyring of {} key(s) ({})",
            self.keys.len(),
            sorted(self.keys.keys().collect())
        );
        if !self.revoked.is_empty() {
            s += &format!(", revoked: {}", sorted(self.revoked.iter().collect()));
        }
        if let Some(d) = self.accept_unsigned_until {
            s += &format!(", unsigned events accepted up to {d}");
        }
        if let Some(d) = self.accept_v1_signatures_until {
            s += &format!(", first-format signatures accepted up to {d}");
        }
        s
    }

    pub fn knows(&self, key_id: &str) -> bool {
        self.keys.contains_key(key_id)
    }

    /// Whether the key may replay offline punches (false for an unknown or revoked key).
    pub fn may_replay(&self, key_id: &str) -> bool {
        !self.revoked.contains(key_id) && self.keys.get(key_id).is_some_and(|e| e.replay)
    }

    /// Whether `signer` is a key of this ring that may replay offline punches: its id is
    /// granted `replay` and not revoked, and its secret is the ring's for that id (a key file
    /// that only claims a replaying kiosk's id is not one).
    pub fn authorises_replay(&self, signer: &Signer) -> bool {
        const PROBE: &str = "attendance-replay-probe-v1";
        let Some(entry) = self
            .keys
            .get(signer.key_id())
            .filter(|_| self.may_replay(signer.key_id()))
        else {
            return false;
        };
        full_mac_matches(entry, PROBE, &signer.sign(PROBE)).is_ok()
    }

    /// Check an event's signature (the roster is the caller's to check): the current format
    /// (a 128-bit tag over the outbox record), or the first one in its migration period.
    pub fn verify(&self, ev: &Event) -> Result<(), Refusal> {
        let Some((key_id, sig, entry)) = self.signer_of(ev.key_id.as_deref(), ev.sig.as_deref(), ev.work_date)? else {
            return Ok(());
        };
        let bad = || Refusal::BadSignature(key_id.to_string());
        // Constant time either way: a forger learns nothing from how long a refusal took.
        match sig.len() {
            TAG_CHARS => {
                let body =
                    crate::domain::event::record::signed_body(ev, key_id).map_err(|e| Refusal::Malformed(e.0))?;
                tag_matches(entry, &ev.event_id, &body, ev.kind, sig).map_err(|_| bad())
            }
            V1_CHARS => {
                if self.accept_v1_signatures_until.is_none_or(|until| ev.work_date > until) {
                    return Err(Refusal::OldFormat(key_id.to_string()));
                }
                full_mac_matches(entry, &canonical(&signed_of(ev, key_id)?), sig).map_err(|_| bad())
            }
            _ => Err(bad()),
        }
    }

    /// Check the current format's tag of an outbox record as it is stored: `body` is the
    /// record's bytes from the employee id to the key id and its tab, the very bytes the
    /// recording process tagged (`record::record_prefix`), so nothing is rebuilt. The caller
    /// vouches that the record is written as this build writes it (canonical numbers, no escaped
    /// character, ids a record need not escape, the other kind's minutes 0): then these bytes are
    /// what [`Keyring::verify`] rebuilds from the event, and both accept the same records.
    pub(crate) fn verify_record(
        &self,
        event_id: &str,
        body: &str,
        kind: Kind,
        (key_id, sig): (&str, &str),
        work_date: NaiveDate,
    ) -> Result<(), Refusal> {
        let Some((key_id, sig, entry)) = self.signer_of(Some(key_id), Some(sig), work_date)? else {
            return Ok(());
        };
        if sig.len() != TAG_CHARS {
            return Err(Refusal::BadSignature(key_id.to_string()));
        }
        tag_matches(entry, event_id, body, kind, sig).map_err(|_| Refusal::BadSignature(key_id.to_string()))
    }

    /// Check the signature `sig` by `key_id` (the whole MAC, as [`Signer::sign`] makes it) of
    /// the canonical text `text(key_id)` of a message of `work_date` that is not a punch's event
    /// (an absence alert, a void notice: each has a text of its own).
    pub(crate) fn verify_text(
        &self,
        key_id: Option<&str>,
        sig: Option<&str>,
        work_date: NaiveDate,
        text: impl FnOnce(&str) -> Result<String, Refusal>,
    ) -> Result<(), Refusal> {
        let Some((key_id, sig, entry)) = self.signer_of(key_id, sig, work_date)? else {
            return Ok(());
        };
        full_mac_matches(entry, &text(key_id)?, sig).map_err(|_| Refusal::BadSignature(key_id.to_string()))
    }

    /// The key a message claims, if the ring accepts it: `None` for an unsigned message in the
    /// migration period for unsigned ones; refused when unsigned, revoked or unknown.
    fn signer_of<'s>(
        &self,
        key_id: Option<&'s str>,
        sig: Option<&'s str>,
        work_date: NaiveDate,
    ) -> Result<Option<(&'s str, &'s str, &Entry)>, Refusal> {
        let (Some(key_id), Some(sig)) = (key_id, sig) else {
            return match self.accept_unsigned_until {
                Some(until) if work_date <= until && key_id.is_none() && sig.is_none() => Ok(None),
                _ => Err(Refusal::Unsigned),
            };
        };
        if self.revoked.contains(key_id) {
            return Err(Refusal::Revoked(key_id.to_string()));
        }
        let entry = self
            .keys
            .get(key_id)
            .ok_or_else(|| Refusal::UnknownKey(crate::domain::text::clip(key_id).to_string()))?;
        Ok(Some((key_id, sig, entry)))
    }
}

/// Whether `sig` ([`TAG_CHARS`] of base64url) is the current format's tag of the record
/// message, in constant time.
fn tag_matches(entry: &Entry, event_id: &str, body: &str, kind: Kind, sig: &str) -> Result<(), ()> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(sig)
        .map_err(|_| ())?;
    let mac = record_message(entry.keyed.clone(), event_id, body, kind);
    // The caller checked the length: a shorter tag would be easier to guess.
    mac.verify_truncated_left(&raw).map_err(|_| ())
}

/// Whether `sig` (base64 without padding) is the whole MAC of `text` under `entry`'s key, in
/// constant time.
fn full_mac_matches(entry: &Entry, text: &str, sig: &str) -> Result<(), ()> {
    let raw = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(sig)
        .map_err(|_| ())?;
    let mut mac = entry.keyed.clone();
    mac.update(text.as_bytes());
    mac.verify_slice(&raw).map_err(|_| ())
}

/// Everything a consumer checks of an event: its signature (through `ring`), then the roster:
/// `roster` is the employee's department in the roster and the ones they left (`None`:
/// unknown), and `expected_department` the department whose queue or board the event is for,
/// if any. The event's department must be one the employee was in on its work date, and its
/// work date the one the employee's shift (in `shifts`, as the event's department had it) gives
/// its time, as the punch path dated it: a night shift's check-out after midnight belongs to
/// the date the shift started.
pub(crate) fn check(
    ring: &Keyring,
    ev: &Event,
    tz: chrono_tz::Tz,
    roster: Option<&Membership>,
    expected_department: Option<&str>,
    shifts: &Shifts,
) -> Result<(), Refusal> {
    ring.verify(ev)?;
    let clip = crate::domain::text::clip;
    let Some(member) = roster else {
        return Err(Refusal::Roster(format!("unknown employee {:?}", clip(&ev.employee_id))));
    };
    if !member.was_in(&ev.department_id, tz, ev.work_date) {
        return Err(Refusal::Roster(format!(
            "employee {} is in {}, and was not in {:?} on {}",
            clip(&ev.employee_id),
            member.current,
            clip(&ev.department_id),
            ev.work_date
        )));
    }
    if let Some(want) = expected_department.filter(|w| *w != ev.department_id) {
        return Err(Refusal::Roster(format!(
            "an event of {:?} on {want}'s queue",
            clip(&ev.department_id)
        )));
    }
    let at = DateTime::parse_from_rfc3339(&ev.at).map_err(|e| Refusal::Malformed(format!("at: {e}")))?;
    let day = Clocks::new(shifts, tz).work_date(&ev.employee_id, &ev.department_id, at.with_timezone(&chrono::Utc));
    if day != ev.work_date {
        return Err(Refusal::Roster(format!(
            "work date {} does not match its time ({day})",
            ev.work_date
        )));
    }
    Ok(())
}

/// Sign an event as it stands (its wire fields) with a key, in the current format: what a tool
/// that re-signs an event, or a test that plays a kiosk, does. Recording processes sign in
/// `record::record_prefix`.
pub fn sign_event(ev: &mut Event, signer: &Signer) -> Result<(), Refusal> {
    let body = crate::domain::event::record::signed_body(ev, signer.key_id()).map_err(|e| Refusal::Malformed(e.0))?;
    ev.sig = Some(signer.tag_record(&ev.event_id, &body, ev.kind));
    ev.key_id = Some(signer.key_id().to_string());
    Ok(())
}

/// The first format's signed fields of an event as it arrives (its wire JSON).
fn signed_of<'a>(ev: &'a Event, key_id: &'a str) -> Result<Signed<'a>, Refusal> {
    let at = DateTime::parse_from_rfc3339(&ev.at).map_err(|e| Refusal::Malformed(format!("at: {e}")))?;
    let recorded = ev
        .recorded_at
        .as_deref()
        .ok_or_else(|| Refusal::Malformed("a signed event without recorded_at".into()))?;
    let recorded =
        DateTime::parse_from_rfc3339(recorded).map_err(|e| Refusal::Malformed(format!("recorded_at: {e}")))?;
    Ok(Signed {
        event_id: &ev.event_id,
        employee_id: &ev.employee_id,
        employee_name: &ev.employee_name,
        department_id: &ev.department_id,
        work_date: ev.work_date,
        at: at.timestamp(),
        kind: ev.kind,
        late_minutes: ev.late_minutes,
        early_minutes: ev.early_minutes,
        source: &ev.source,
        recorded_at_ms: recorded.timestamp_millis(),
        key_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const S1: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
    const S2: &str = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=";

    fn event(signer: Option<&Signer>) -> Event {
        let mut ev: Event = serde_json::from_str(
            r#"{"event_id":"e1","employee_id":"E7","employee_name":"Zoë","department_id":"D042","at":"2026-11-30T09:12:00+01:00","work_date":"2026-11-30","source":"kiosk","recorded_at":"2026-11-30T08:12:00.250Z","kind":"in","late":true,"late_minutes":12,"early":false,"early_minutes":0,"changed":true}"#,
        )
        .unwrap();
        if let Some(s) = signer {
            sign_event(&mut ev, s).unwrap();
        }
        ev
    }

    fn ring() -> Keyring {
        let mut k = Keyring::default();
        k.add("k1", S1, false).unwrap();
        k.add("k2", S2, true).unwrap();
        k
    }

    #[test]
    fn a_signed_event_verifies_and_any_change_breaks_it() {
        let s1 = Signer::new("k1", S1).unwrap();
        let ev = event(Some(&s1));
        assert_eq!(ring().verify(&ev), Ok(()));
        let mut late = ev.clone();
        late.late_minutes = 0;
        assert!(matches!(ring().verify(&late), Err(Refusal::BadSignature(_))));
        let mut moved = ev.clone();
        moved.department_id = "D777".into();
        assert!(matches!(ring().verify(&moved), Err(Refusal::BadSignature(_))));
        // Rotation: a second key is accepted by its id; a forger's key is not.
        assert_eq!(ring().verify(&event(Some(&Signer::new("k2", S2).unwrap()))), Ok(()));
        let forger = Signer::new("k1", S2).unwrap();
        assert!(matches!(
            ring().verify(&event(Some(&forger))),
            Err(Refusal::BadSignature(_))
        ));
        let mut r = ring();
        r.revoke("k1");
        assert!(matches!(r.verify(&ev), Err(Refusal::Revoked(_))));
        assert!(!r.may_replay("k1") && r.may_replay("k2"));
    }

    #[test]
    fn only_the_replaying_key_itself_authorises_replay() {
        let r = ring();
        assert!(r.authorises_replay(&Signer::new("k2", S2).unwrap()));
        assert!(
            !r.authorises_replay(&Signer::new("k1", S1).unwrap()),
            "k1 may not replay"
        );
        assert!(
            !r.authorises_replay(&Signer::new("k2", S1).unwrap()),
            "k2's id, another secret"
        );
        assert!(!r.authorises_replay(&Signer::new("k9", S2).unwrap()), "unknown id");
        let mut revoked = ring();
        revoked.revoke("k2");
        assert!(!revoked.authorises_replay(&Signer::new("k2", S2).unwrap()));
    }

    #[test]
    fn unsigned_events_only_within_the_migration_period() {
        let ev = event(None);
        let mut r = ring();
        assert_eq!(r.verify(&ev), Err(Refusal::Unsigned));
        r.accept_unsigned_until = NaiveDate::from_ymd_opt(2026, 11, 30);
        assert_eq!(r.verify(&ev), Ok(()));
        r.accept_unsigned_until = NaiveDate::from_ymd_opt(2026, 11, 29);
        assert_eq!(r.verify(&ev), Err(Refusal::Unsigned));
    }

    /// An event as a build before the 128-bit tag signed it: the whole MAC over `canonical`.
    fn v1_signed(signer: &Signer) -> Event {
        let mut ev = event(None);
        let text = canonical(&signed_of(&ev, signer.key_id()).unwrap());
        ev.key_id = Some(signer.key_id().to_string());
        ev.sig = Some(signer.sign(&text));
        ev
    }

    #[test]
    fn the_current_tag_is_128_bits_in_base64url_and_only_that_length_passes() {
        let ev = event(Some(&Signer::new("k1", S1).unwrap()));
        let sig = ev.sig.clone().unwrap();
        assert_eq!(sig.len(), TAG_CHARS);
        assert!(sig.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'));
        for cut in [sig[..21].to_string(), sig[..2].to_string(), format!("{sig}A")] {
            let short = Event {
                sig: Some(cut),
                ..ev.clone()
            };
            assert!(matches!(ring().verify(&short), Err(Refusal::BadSignature(_))));
        }
    }

    #[test]
    fn first_format_signatures_pass_in_the_migration_period_and_tampering_still_fails() {
        let old = v1_signed(&Signer::new("k1", S1).unwrap());
        assert_eq!(old.sig.as_deref().map(str::len), Some(V1_CHARS));
        let mut r = ring();
        assert_eq!(r.verify(&old), Err(Refusal::OldFormat("k1".into())));
        r.accept_v1_signatures_until = NaiveDate::from_ymd_opt(2026, 11, 30);
        assert_eq!(r.verify(&old), Ok(()));
        let mut tampered = old.clone();
        tampered.late_minutes = 0;
        assert!(matches!(r.verify(&tampered), Err(Refusal::BadSignature(_))));
        let forged = v1_signed(&Signer::new("k1", S2).unwrap());
        assert!(matches!(r.verify(&forged), Err(Refusal::BadSignature(_))));
        r.accept_v1_signatures_until = NaiveDate::from_ymd_opt(2026, 11, 29);
        assert_eq!(r.verify(&old), Err(Refusal::OldFormat("k1".into())));
    }

    /// D042 on a 22:00-06:00 shift from 2026-11-01; everyone else on the policy.
    fn night_shifts() -> Shifts {
        use crate::domain::day::shift::{parse_days, Shift};
        use crate::domain::day::shifts::{Assignment, Scope, ShiftTable};
        let t = |h| chrono::NaiveTime::from_hms_opt(h, 0, 0).unwrap();
        let night = Shift {
            name: "night".into(),
            start: t(22),
            end: t(6),
            late_grace_minutes: 0,
            early_grace_minutes: 0,
            work_days: parse_days("mon-sun").unwrap(),
            break_minutes: 0,
            part_time: false,
            split: None,
        };
        let from = NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
        let assigned = Assignment {
            scope: Scope::Department,
            target: "D042".into(),
            from,
            shift: "night".into(),
        };
        Shifts::new(
            ShiftTable::new(vec![night], vec![assigned]),
            &crate::domain::day::policy::Policy::default(),
        )
    }

    #[test]
    fn a_night_check_out_after_midnight_is_dated_by_the_shift_as_the_punch_was() {
        let s1 = Signer::new("k1", S1).unwrap();
        let out = |work_date: &str| {
            let mut ev = event(None);
            ev.at = "2026-12-01T06:01:00+01:00".into();
            ev.work_date = work_date.parse().unwrap();
            ev.kind = Kind::Out;
            (ev.late, ev.late_minutes) = (false, 0);
            sign_event(&mut ev, &s1).unwrap();
            ev
        };
        let tz = chrono_tz::Europe::Paris;
        let member = Membership::now("D042");
        let verdict = |ev: &Event, shifts: &Shifts| check(&ring(), ev, tz, Some(&member), Some("D042"), shifts);
        let none = Shifts::new(Default::default(), &Default::default());
        assert_eq!(verdict(&out("2026-11-30"), &night_shifts()), Ok(()));
        // The local date is not the night's: refused, as a punch never dated it so.
        assert!(matches!(
            verdict(&out("2026-12-01"), &night_shifts()),
            Err(Refusal::Roster(_))
        ));
        // Without a night shift the local date stands.
        assert_eq!(verdict(&out("2026-12-01"), &none), Ok(()));
        assert!(matches!(verdict(&out("2026-11-30"), &none), Err(Refusal::Roster(_))));
    }

    #[test]
    fn short_or_bad_secrets_and_ids_are_refused() {
        assert!(Signer::new("k1", "c2hvcnQ=").is_err());
        assert!(Signer::new("k1", "not base64!").is_err());
        assert!(Signer::new("k 1", S1).is_err());
        assert!(format!("{:?}", Signer::new("k1", S1).unwrap()).contains("redacted"));
    }
}
