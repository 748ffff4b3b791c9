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
//! Besides them an Ed25519 signature of the record (86 characters), and a bulk's batch tag
//! (`b1.` and one signature over many records with this record's audit path, `event::batch`),
//! told apart by its prefix; a batch signature is checked once per ring (`verified`).

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use base64::Engine;
use chrono::{DateTime, NaiveDate};
use hmac::Mac;

use crate::domain::day::shifts::{Clocks, Shifts};
use crate::domain::event::batch::{self, Id};
use crate::domain::event::membership::Membership;
use crate::domain::event::record::{Event, Written};
use crate::domain::event::signer::{
    check_key_id, key_bytes, keyed, message_bytes, record_message, HmacSha256, Signer, ED25519_CHARS, TAG_CHARS,
    V1_CHARS,
};
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
    #[error("signed with shared-secret key id {0:?} after the cut-over to registry keys")]
    SharedSecret(String),
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
            Refusal::SharedSecret(_) => "shared_secret",
            Refusal::Malformed(_) => "malformed",
            Refusal::Roster(_) => "roster",
        }
    }
}

/// The last work date whose events signed with a shared HMAC secret (a keyring file's) a
/// verifier accepts: the cut-over to Ed25519 keys from the registry (docs/security.md). A
/// company fact, not a host's: no config key moves it.
pub(crate) const HMAC_ACCEPTED_UNTIL: NaiveDate = NaiveDate::from_ymd_opt(2027, 12, 31).expect("a valid date");

/// How a key's signatures are checked.
enum Check {
    /// A shared secret (a keyring file): whoever checks could sign.
    Hmac(HmacSha256),
    /// A public key (the registry): checking gives no power to sign.
    Ed25519(ed25519_dalek::VerifyingKey),
}

struct Entry {
    check: Check,
    /// May replay offline punches: the registry's word alone (a keyring file grants nothing).
    replay: bool,
    /// Revoked from this instant (unix millis, the event's `recorded_at`) on; before it, its
    /// events stay valid.
    revoked_from_ms: Option<i64>,
}

/// One Ed25519 signature [`Keyring::verify_many`] checks: the message, the signature, the key,
/// and for a batch signature the id its check is remembered by.
struct Pending {
    msg: Vec<u8>,
    sig: ed25519_dalek::Signature,
    key: ed25519_dalek::VerifyingKey,
    root: Option<Id>,
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
    /// Whether the registry's keys are in the ring. A ring of a keyring file alone (the
    /// publisher's, which reads no registry) passes events signed with a public key it does not
    /// know unchecked: the consumers check them against the registry.
    registry_known: bool,
    /// The batch signatures checked so far (`batch::verified_id`): a batch's other records
    /// cost their audit path's hashes, not a signature check. Shared by settle's threads.
    verified: Mutex<HashSet<Id>>,
}

/// Batch signatures a ring remembers at most; past it, it forgets them all and starts again (a
/// watcher that runs for weeks stays bounded; at 100 records a batch, 10 million records).
const VERIFIED_MAX: usize = 100_000;

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
    /// Add a shared-secret key (a keyring file's): its events verify up to
    /// [`HMAC_ACCEPTED_UNTIL`], and it never authorises a replay.
    pub fn add(&mut self, key_id: &str, secret_b64: &str) -> Result<(), String> {
        check_key_id(key_id)?;
        let keyed = keyed(secret_b64).map_err(|e| format!("key {key_id}: {e}"))?;
        self.forget_batches();
        self.keys.insert(
            key_id.to_string(),
            Entry {
                check: Check::Hmac(keyed),
                replay: false,
                revoked_from_ms: None,
            },
        );
        Ok(())
    }

    /// Add a registry key: its Ed25519 public key (base64 of 32 bytes), whether it may replay
    /// offline punches, and the instant (unix millis) it is revoked from, if it is. It takes the
    /// place of a keyring file's key of the same id.
    pub fn add_public(
        &mut self,
        key_id: &str,
        public_b64: &str,
        replay: bool,
        revoked_from_ms: Option<i64>,
    ) -> Result<(), String> {
        check_key_id(key_id)?;
        let public = public_key(public_b64).map_err(|e| format!("key {key_id}: {e}"))?;
        self.forget_batches();
        self.keys.insert(
            key_id.to_string(),
            Entry {
                check: Check::Ed25519(public),
                replay,
                revoked_from_ms,
            },
        );
        Ok(())
    }

    /// Refuse every event of a keyring file's key, whenever signed.
    pub fn revoke(&mut self, key_id: &str) {
        self.revoked.insert(key_id.to_string());
    }

    /// The registry's keys are in the ring now: an event of a key it does not know is refused,
    /// whatever its scheme.
    pub fn knows_registry(&mut self) {
        self.registry_known = true;
    }

    /// Whether the ring checks anything: a key in it, or a revoked id.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty() && self.revoked.is_empty()
    }

    /// One line for `doctor`: the key ids and the revoked ones (never a secret).
    pub(crate) fn summary(&self) -> String {
        let sorted = |ids: Vec<&String>| {
            let mut ids: Vec<&str> = ids.into_iter().map(String::as_str).collect();
            ids.sort_unstable();
            ids.join(", ")
        };
        let public = self
            .keys
            .values()
            .filter(|e| matches!(e.check, Check::Ed25519(_)))
            .count();
        let mut s = format!(
            "a keyring of {} key(s) ({}), {public} of them public keys from the registry",
            self.keys.len(),
            sorted(self.keys.keys().collect())
        );
        if public < self.keys.len() {
            s += &format!(", shared secrets accepted up to {HMAC_ACCEPTED_UNTIL}");
        }
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

    /// Whether `signer` is a registry key that may replay offline punches at `now_ms`: its id
    /// is granted `replay` in the registry and not revoked by then, and its private key is the
    /// one whose public key the registry holds (a key file that only claims a replaying kiosk's
    /// id is not one). A shared secret never is.
    pub fn authorises_replay(&self, signer: &Signer, now_ms: i64) -> bool {
        const PROBE: &str = "attendance-replay-probe-v2";
        let Some(entry) = self.keys.get(signer.key_id()) else {
            return false;
        };
        if !entry.replay || entry.revoked_from_ms.is_some_and(|r| now_ms >= r) || self.revoked.contains(signer.key_id())
        {
            return false;
        }
        matches!(entry.check, Check::Ed25519(_)) && text_matches(entry, PROBE, &signer.sign(PROBE)).is_ok()
    }

    /// Check an event's signature (the roster is the caller's to check): the current format
    /// (a 128-bit tag or an Ed25519 signature over the outbox record), or the first one in its
    /// migration period.
    pub fn verify(&self, ev: &Event) -> Result<(), Refusal> {
        let signed_ms = ev
            .recorded_at
            .as_deref()
            .and_then(|r| DateTime::parse_from_rfc3339(r).ok())
            .map(|r| r.timestamp_millis());
        let Some((key_id, sig, entry)) =
            self.signer_of(ev.key_id.as_deref(), ev.sig.as_deref(), ev.work_date, signed_ms)?
        else {
            return Ok(());
        };
        let bad = || Refusal::BadSignature(key_id.to_string());
        if batch::is_tag(sig) {
            let body = crate::domain::event::record::signed_body(ev, key_id).map_err(|e| Refusal::Malformed(e.0))?;
            return self
                .batch_matches(key_id, entry, &message_bytes(&ev.event_id, &body, ev.kind), sig)
                .map_err(|_| bad());
        }
        // Constant time either way: a forger learns nothing from how long a refusal took.
        match (&entry.check, sig.len()) {
            (Check::Hmac(_), TAG_CHARS) | (Check::Ed25519(_), ED25519_CHARS) => {
                let body =
                    crate::domain::event::record::signed_body(ev, key_id).map_err(|e| Refusal::Malformed(e.0))?;
                tag_matches(entry, &ev.event_id, &body, ev.kind, sig).map_err(|_| bad())
            }
            (Check::Hmac(_), V1_CHARS) => {
                if self.accept_v1_signatures_until.is_none_or(|until| ev.work_date > until) {
                    return Err(Refusal::OldFormat(key_id.to_string()));
                }
                text_matches(entry, &canonical(&signed_of(ev, key_id)?), sig).map_err(|_| bad())
            }
            _ => Err(bad()),
        }
    }

    /// [`Keyring::verify`] for many events at once, each answer in its event's place: the
    /// Ed25519 signatures in one batch (`ed25519_dalek::verify_batch`, about twice the speed of
    /// one check each at settle's volumes), the others one by one. A batch signature
    /// (`event::batch`) is checked once however many of its records come, and not again once
    /// the ring has checked it: each of its records costs its audit path's hashes. A batch that
    /// fails is checked again one signature at a time, so one forgery refuses only what it
    /// signs. A batch accepts what only the signer's private key could make, as one check does;
    /// it is not as strict about a signature's encoding (`verify_strict`), which gives no one
    /// without the key a way in.
    pub(crate) fn verify_many(&self, evs: &[&Event]) -> Vec<Result<(), Refusal>> {
        self.check_all(
            evs.iter()
                .map(|ev| (self.batchable(ev), ev.key_id.as_deref().unwrap_or_default())),
        )
    }

    /// [`Keyring::verify_many`] of records read where they lie (`render::signed_record`): the
    /// same checks over the bytes signed, with nothing decoded nor rebuilt. For a record as
    /// this build writes it, both give the same answer (see [`Keyring::verify_record`]).
    pub(crate) fn verify_written(&self, recs: &[Written]) -> Vec<Result<(), Refusal>> {
        self.check_all(recs.iter().map(|r| {
            let prepared = self.prepare(
                (r.key_id, r.sig),
                (r.work_date, Some(r.recorded_ms)),
                || Ok(message_bytes(r.event_id, r.body, r.kind)),
                || {
                    self.verify_record(
                        r.event_id,
                        r.body,
                        r.kind,
                        (r.key_id, r.sig),
                        (r.work_date, r.recorded_ms),
                    )
                },
            );
            (prepared, r.key_id)
        }))
    }

    /// Every answer, in order, of checks prepared by [`Keyring::prepare`] (with the key id a
    /// bad signature is refused under): the distinct Ed25519 signatures in one batch.
    fn check_all<'k>(
        &self,
        prepared: impl Iterator<Item = (Result<Pending, Result<(), Refusal>>, &'k str)>,
    ) -> Vec<Result<(), Refusal>> {
        let mut out: Vec<Result<(), Refusal>> = Vec::new();
        let mut key_ids: Vec<&str> = Vec::new();
        // The distinct signatures to check, and for each record waiting on one, which.
        let mut todo: Vec<Pending> = Vec::new();
        let mut waiting: Vec<(usize, usize)> = Vec::new();
        // Per batch signature: its slot in `todo`, or `None` when the ring checked it before.
        let mut roots: HashMap<Id, Option<usize>> = HashMap::new();
        for (p, key_id) in prepared {
            key_ids.push(key_id);
            out.push(match p {
                Ok(p) => {
                    let slot = match p.root {
                        Some(id) => *roots.entry(id).or_insert_with(|| {
                            if self.checked(&id) {
                                return None;
                            }
                            todo.push(p);
                            Some(todo.len() - 1)
                        }),
                        None => {
                            todo.push(p);
                            Some(todo.len() - 1)
                        }
                    };
                    if let Some(slot) = slot {
                        waiting.push((out.len(), slot));
                    }
                    Ok(())
                }
                Err(checked) => checked,
            });
        }
        let msgs: Vec<&[u8]> = todo.iter().map(|p| p.msg.as_slice()).collect();
        let sigs: Vec<_> = todo.iter().map(|p| p.sig).collect();
        let keys: Vec<_> = todo.iter().map(|p| p.key).collect();
        let mut good = vec![true; todo.len()];
        if !todo.is_empty() && ed25519_dalek::verify_batch(&msgs, &sigs, &keys).is_err() {
            for (i, ok) in good.iter_mut().enumerate() {
                *ok = keys[i].verify_strict(msgs[i], &sigs[i]).is_ok();
            }
        }
        for (n, slot) in waiting {
            if !good[slot] {
                out[n] = Err(Refusal::BadSignature(key_ids[n].to_string()));
            }
        }
        self.remember(
            todo.iter()
                .zip(&good)
                .filter(|(_, ok)| **ok)
                .filter_map(|(p, _)| p.root),
        );
        out
    }

    /// An event's Ed25519 check as a batch takes it; an event whose check is anything else is
    /// checked here, `Err(Ok(()))` standing for one that passed.
    fn batchable(&self, ev: &Event) -> Result<Pending, Result<(), Refusal>> {
        let signed_ms = ev.recorded_at.as_deref().and_then(millis);
        let (Some(key_id), Some(sig)) = (ev.key_id.as_deref(), ev.sig.as_deref()) else {
            return Err(self.verify(ev));
        };
        self.prepare(
            (key_id, sig),
            (ev.work_date, signed_ms),
            || {
                crate::domain::event::record::signed_body(ev, key_id)
                    .map(|body| message_bytes(&ev.event_id, &body, ev.kind))
                    .map_err(|e| Refusal::Malformed(e.0))
            },
            || self.verify(ev),
        )
    }

    /// A signed message's Ed25519 check as a batch takes it (`message`: the bytes a signature
    /// alone covers, a batch's leaf); a record of a batch signature brings the batch's signed
    /// message and the id its check is remembered by. Anything else is checked by `other`,
    /// `Err(Ok(()))` standing for one that passed.
    fn prepare(
        &self,
        (key_id, sig): (&str, &str),
        (work_date, signed_ms): (NaiveDate, Option<i64>),
        message: impl FnOnce() -> Result<Vec<u8>, Refusal>,
        other: impl FnOnce() -> Result<(), Refusal>,
    ) -> Result<Pending, Result<(), Refusal>> {
        let Some((key_id, sig, entry)) = self
            .signer_of(Some(key_id), Some(sig), work_date, signed_ms)
            .map_err(Err)?
        else {
            return Err(Ok(()));
        };
        let Check::Ed25519(public) = &entry.check else {
            return Err(other());
        };
        let bad = || Err(Refusal::BadSignature(key_id.to_string()));
        if batch::is_tag(sig) {
            let tag = batch::decode_tag(sig).ok_or_else(bad)?;
            let leaf = batch::leaf(&tag.salt, &message().map_err(Err)?);
            let root = batch::root_from(leaf, tag.index, tag.count, &tag.path).ok_or_else(bad)?;
            let msg = batch::signed_message(tag.count, &tag.salt, &root);
            return Ok(Pending {
                root: Some(batch::verified_id(key_id, &msg, &tag.sig)),
                msg,
                sig: ed25519_dalek::Signature::from_bytes(&tag.sig),
                key: *public,
            });
        }
        if sig.len() != ED25519_CHARS {
            return Err(bad());
        }
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(sig)
            .map_err(|_| bad())?;
        let sig = ed25519_dalek::Signature::from_slice(&raw).map_err(|_| bad())?;
        Ok(Pending {
            msg: message().map_err(Err)?,
            sig,
            key: *public,
            root: None,
        })
    }

    /// Whether `sig`, a batch tag, signs the record whose signed message is `msg`: the root its
    /// audit path reaches is one `entry`'s key signed (checked once, then remembered).
    fn batch_matches(&self, key_id: &str, entry: &Entry, msg: &[u8], sig: &str) -> Result<(), ()> {
        let Check::Ed25519(public) = &entry.check else {
            return Err(());
        };
        let tag = batch::decode_tag(sig).ok_or(())?;
        let root = batch::root_from(batch::leaf(&tag.salt, msg), tag.index, tag.count, &tag.path).ok_or(())?;
        let signed = batch::signed_message(tag.count, &tag.salt, &root);
        let id = batch::verified_id(key_id, &signed, &tag.sig);
        if self.checked(&id) {
            return Ok(());
        }
        ed25519_matches(public, &signed, &tag.sig)?;
        self.remember([id]);
        Ok(())
    }

    /// Whether the ring checked this batch signature before and found it good.
    fn checked(&self, id: &Id) -> bool {
        self.verified
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(id)
    }

    /// Remember batch signatures checked and found good.
    fn remember(&self, ids: impl IntoIterator<Item = Id>) {
        let mut verified = self.verified.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for id in ids {
            if verified.len() >= VERIFIED_MAX {
                verified.clear();
            }
            verified.insert(id);
        }
    }

    /// Forget every batch signature checked: a key changed.
    fn forget_batches(&mut self) {
        self.verified
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    /// Take this host's own shared-secret key (`own`) into the ring, unless a key of its id is
    /// there already: what the host signs itself it may check.
    pub(crate) fn adopt(&mut self, own: Keyring) {
        for (id, entry) in own.keys {
            self.keys.entry(id).or_insert(entry);
        }
    }

    /// Check the current format's signature of an outbox record as it is stored: `body` is the
    /// record's bytes from the employee id to the key id and its tab, the very bytes the
    /// recording process signed (`record::record_prefix`), so nothing is rebuilt. The caller
    /// vouches that the record is written as this build writes it (canonical numbers, no escaped
    /// character, ids a record need not escape, the other kind's minutes 0): then these bytes are
    /// what [`Keyring::verify`] rebuilds from the event, and both accept the same records.
    /// `recorded_ms`: the record's `recorded_at`, the signing time revocation is judged by.
    pub(crate) fn verify_record(
        &self,
        event_id: &str,
        body: &str,
        kind: Kind,
        (key_id, sig): (&str, &str),
        (work_date, recorded_ms): (NaiveDate, i64),
    ) -> Result<(), Refusal> {
        let Some((key_id, sig, entry)) = self.signer_of(Some(key_id), Some(sig), work_date, Some(recorded_ms))? else {
            return Ok(());
        };
        if batch::is_tag(sig) {
            return self
                .batch_matches(key_id, entry, &message_bytes(event_id, body, kind), sig)
                .map_err(|_| Refusal::BadSignature(key_id.to_string()));
        }
        let want = match entry.check {
            Check::Hmac(_) => TAG_CHARS,
            Check::Ed25519(_) => ED25519_CHARS,
        };
        if sig.len() != want {
            return Err(Refusal::BadSignature(key_id.to_string()));
        }
        tag_matches(entry, event_id, body, kind, sig).map_err(|_| Refusal::BadSignature(key_id.to_string()))
    }

    /// Check the signature `sig` by `key_id` (as [`Signer::sign`] makes it) of the canonical
    /// text `text(key_id)` of a message of `work_date` signed at `signed_ms` (unix millis; `None`:
    /// unknown, refused for a revoked key) that is not a punch's event (an absence alert, a void
    /// notice: each has a text of its own).
    pub(crate) fn verify_text(
        &self,
        key_id: Option<&str>,
        sig: Option<&str>,
        (work_date, signed_ms): (NaiveDate, Option<i64>),
        text: impl FnOnce(&str) -> Result<String, Refusal>,
    ) -> Result<(), Refusal> {
        let Some((key_id, sig, entry)) = self.signer_of(key_id, sig, work_date, signed_ms)? else {
            return Ok(());
        };
        text_matches(entry, &text(key_id)?, sig).map_err(|_| Refusal::BadSignature(key_id.to_string()))
    }

    /// The key a message claims, if the ring accepts it: `None` for an unsigned message in the
    /// migration period for unsigned ones; refused when unsigned, unknown, revoked by the time
    /// it was signed (`signed_ms`), or a shared secret's after the cut-over.
    fn signer_of<'s>(
        &self,
        key_id: Option<&'s str>,
        sig: Option<&'s str>,
        work_date: NaiveDate,
        signed_ms: Option<i64>,
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
        let Some(entry) = self.keys.get(key_id) else {
            if !self.registry_known && (sig.len() == ED25519_CHARS || batch::is_tag(sig)) {
                return Ok(None);
            }
            return Err(Refusal::UnknownKey(crate::domain::text::clip(key_id).to_string()));
        };
        if let Some(from) = entry.revoked_from_ms {
            if signed_ms.is_none_or(|t| t >= from) {
                return Err(Refusal::Revoked(key_id.to_string()));
            }
        }
        if matches!(entry.check, Check::Hmac(_)) && work_date > HMAC_ACCEPTED_UNTIL {
            return Err(Refusal::SharedSecret(key_id.to_string()));
        }
        Ok(Some((key_id, sig, entry)))
    }
}

/// An RFC 3339 instant as unix millis (a message's signing time), `None` if it is not one.
pub(crate) fn millis(rfc3339: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(rfc3339).ok().map(|t| t.timestamp_millis())
}

/// An Ed25519 public key from base64 of its 32 bytes.
pub(crate) fn public_key(b64: &str) -> Result<ed25519_dalek::VerifyingKey, String> {
    ed25519_dalek::VerifyingKey::from_bytes(&key_bytes(b64)?).map_err(|_| "not an Ed25519 public key".to_string())
}

/// Whether `sig` (base64url) is the current format's signature of the record message under
/// `entry`'s key (the HMAC tag in constant time; the caller checked its length).
fn tag_matches(entry: &Entry, event_id: &str, body: &str, kind: Kind, sig: &str) -> Result<(), ()> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(sig)
        .map_err(|_| ())?;
    match &entry.check {
        Check::Hmac(keyed) => record_message(keyed.clone(), event_id, body, kind)
            .verify_truncated_left(&raw)
            .map_err(|_| ()),
        Check::Ed25519(public) => ed25519_matches(public, &message_bytes(event_id, body, kind), &raw),
    }
}

/// Whether `raw` is a valid Ed25519 signature of `msg` (strict: no malleable encodings).
fn ed25519_matches(public: &ed25519_dalek::VerifyingKey, msg: &[u8], raw: &[u8]) -> Result<(), ()> {
    let sig = ed25519_dalek::Signature::from_slice(raw).map_err(|_| ())?;
    public.verify_strict(msg, &sig).map_err(|_| ())
}

/// Whether `sig` is [`Signer::sign`]'s signature of `text` under `entry`'s key: the whole MAC
/// (base64 without padding, constant time), or an Ed25519 signature (base64url).
fn text_matches(entry: &Entry, text: &str, sig: &str) -> Result<(), ()> {
    match &entry.check {
        Check::Hmac(keyed) => {
            let raw = base64::engine::general_purpose::STANDARD_NO_PAD
                .decode(sig)
                .map_err(|_| ())?;
            let mut mac = keyed.clone();
            mac.update(text.as_bytes());
            mac.verify_slice(&raw).map_err(|_| ())
        }
        Check::Ed25519(public) => {
            let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(sig)
                .map_err(|_| ())?;
            ed25519_matches(public, text.as_bytes(), &raw)
        }
    }
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

/// Sign events as one batch, as a bulk check-in signs a script call's records (with an Ed25519
/// key, one signature over their Merkle tree, each event's `sig` a batch tag: `event::batch`);
/// what a tool or a benchmark that plays a bulk kiosk does.
pub fn sign_batch(evs: &mut [Event], signer: &Signer) -> Result<(), Refusal> {
    let bodies = evs
        .iter()
        .map(|ev| crate::domain::event::record::signed_body(ev, signer.key_id()).map_err(|e| Refusal::Malformed(e.0)))
        .collect::<Result<Vec<String>, Refusal>>()?;
    let lens: Vec<usize> = bodies.iter().map(String::len).collect();
    let mut records: Vec<(&str, String, Kind)> = evs
        .iter()
        .zip(bodies)
        .map(|(ev, body)| (ev.event_id.as_str(), body, ev.kind))
        .collect();
    signer.append_tags(&mut records, 0);
    let tags: Vec<String> = records
        .into_iter()
        .zip(lens)
        .map(|(r, len)| r.1[len..].to_string())
        .collect();
    for (ev, tag) in evs.iter_mut().zip(tags) {
        (ev.key_id, ev.sig) = (Some(signer.key_id().to_string()), Some(tag));
    }
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
        k.add("k1", S1).unwrap();
        k.add("k2", S2).unwrap();
        k
    }

    /// Two Ed25519 kiosks, `e1` and `e2` (may replay), from fixed seeds.
    fn ed(id: &str, seed: u8) -> (Signer, String) {
        let (private, public) = crate::domain::event::signer::ed25519_pair(&[seed; 32]);
        (Signer::ed25519(id, &private).unwrap(), public)
    }

    fn registry(revoked_from_ms: Option<i64>) -> Keyring {
        let mut k = ring();
        k.add_public("e1", &ed("e1", 1).1, false, revoked_from_ms).unwrap();
        k.add_public("e2", &ed("e2", 2).1, true, None).unwrap();
        k.knows_registry();
        k
    }

    /// recorded_at of [`event`]: 2026-11-30T08:12:00.250Z.
    const RECORDED_MS: i64 = 1_796_026_320_250;

    #[test]
    fn an_ed25519_event_verifies_with_the_public_key_alone_and_any_change_breaks_it() {
        let (e1, _) = ed("e1", 1);
        let ev = event(Some(&e1));
        assert_eq!(ev.sig.as_deref().map(str::len), Some(ED25519_CHARS));
        assert_eq!(registry(None).verify(&ev), Ok(()));
        let mut late = ev.clone();
        late.late_minutes = 0;
        assert!(matches!(registry(None).verify(&late), Err(Refusal::BadSignature(_))));
        // Another private key under e1's id: refused.
        let forged = event(Some(&ed("e1", 9).0));
        assert!(matches!(registry(None).verify(&forged), Err(Refusal::BadSignature(_))));
        // A keyring file alone (the publisher's) leaves it to the consumers; a ring that knows
        // the registry refuses a key it does not hold.
        assert_eq!(ring().verify(&ev), Ok(()));
        let unknown = event(Some(&ed("e9", 9).0));
        assert!(matches!(registry(None).verify(&unknown), Err(Refusal::UnknownKey(_))));
    }

    #[test]
    fn a_revocation_refuses_what_was_signed_from_its_instant_on_and_not_before() {
        let ev = event(Some(&ed("e1", 1).0));
        assert_eq!(registry(Some(RECORDED_MS + 1)).verify(&ev), Ok(()));
        assert!(matches!(
            registry(Some(RECORDED_MS)).verify(&ev),
            Err(Refusal::Revoked(_))
        ));
        assert!(matches!(
            registry(Some(RECORDED_MS - 1)).verify(&ev),
            Err(Refusal::Revoked(_))
        ));
        // A record checked as stored is judged by its own recorded_at the same way.
        let body = crate::domain::event::record::signed_body(&ev, "e1").unwrap();
        let sig = ev.sig.as_deref().unwrap();
        let check = |from| {
            registry(Some(from)).verify_record(&ev.event_id, &body, ev.kind, ("e1", sig), (ev.work_date, RECORDED_MS))
        };
        assert_eq!(check(RECORDED_MS + 1), Ok(()));
        assert!(matches!(check(RECORDED_MS), Err(Refusal::Revoked(_))));
    }

    #[test]
    fn shared_secrets_verify_up_to_the_cut_over_and_never_after() {
        let s1 = Signer::new("k1", S1).unwrap();
        let mut ev = event(None);
        ev.work_date = HMAC_ACCEPTED_UNTIL;
        ev.at = format!("{HMAC_ACCEPTED_UNTIL}T09:12:00+01:00");
        sign_event(&mut ev, &s1).unwrap();
        assert_eq!(ring().verify(&ev), Ok(()));
        let mut after = event(None);
        after.work_date = HMAC_ACCEPTED_UNTIL.succ_opt().unwrap();
        after.at = format!("{}T09:12:00+01:00", after.work_date);
        sign_event(&mut after, &s1).unwrap();
        assert_eq!(ring().verify(&after), Err(Refusal::SharedSecret("k1".into())));
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
    }

    #[test]
    fn only_a_registry_key_granted_replay_authorises_it_and_a_shared_secret_never() {
        let r = registry(None);
        let now = RECORDED_MS;
        assert!(r.authorises_replay(&ed("e2", 2).0, now));
        assert!(!r.authorises_replay(&ed("e1", 1).0, now), "e1 may not replay");
        assert!(!r.authorises_replay(&ed("e2", 9).0, now), "e2's id, another key");
        assert!(!r.authorises_replay(&ed("e9", 2).0, now), "unknown id");
        assert!(
            !r.authorises_replay(&Signer::new("k2", S2).unwrap(), now),
            "a shared secret"
        );
        let mut revoked = Keyring::default();
        revoked.add_public("e2", &ed("e2", 2).1, true, Some(now)).unwrap();
        assert!(!revoked.authorises_replay(&ed("e2", 2).0, now));
        assert!(revoked.authorises_replay(&ed("e2", 2).0, now - 1));
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

    /// Events `first..first + n`, of one employee each, signed by `signer` as one batch, as a
    /// bulk check-in signs its records.
    fn batch_from(first: usize, n: usize, signer: &Signer) -> Vec<Event> {
        let mut evs: Vec<Event> = (first..first + n)
            .map(|i| {
                let mut ev = event(None);
                (ev.event_id, ev.employee_id) = (format!("e{i}"), format!("E{i}"));
                ev
            })
            .collect();
        sign_batch(&mut evs, signer).unwrap();
        evs
    }

    fn batch_of(n: usize, signer: &Signer) -> Vec<Event> {
        batch_from(0, n, signer)
    }

    #[test]
    fn a_batch_signature_verifies_each_record_alone_and_a_tampered_one_alone_fails() {
        let (e1, _) = ed("e1", 1);
        for n in [2, 3, 7, 100] {
            let evs = batch_of(n, &e1);
            assert!(evs.iter().all(|ev| batch::is_tag(ev.sig.as_deref().unwrap())));
            let r = registry(None);
            for ev in &evs {
                assert_eq!(r.verify(ev), Ok(()), "{n} records");
            }
            let mut evs = evs;
            evs[n / 2].late_minutes += 1;
            let refs: Vec<&Event> = evs.iter().collect();
            for ring in [registry(None), r] {
                let verdicts = ring.verify_many(&refs);
                for (i, v) in verdicts.iter().enumerate() {
                    if i == n / 2 {
                        assert_eq!(v, &Err(Refusal::BadSignature("e1".into())), "{n} records");
                        assert_eq!(ring.verify(&evs[i]), Err(Refusal::BadSignature("e1".into())));
                    } else {
                        assert_eq!(v, &Ok(()), "record {i} of {n}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_batch_tag_with_another_place_or_another_batchs_path_is_a_bad_signature() {
        let (e1, _) = ed("e1", 1);
        let (a, b) = (batch_of(5, &e1), batch_from(5, 6, &e1));
        let parts = |ev: &Event| batch::decode_tag(ev.sig.as_deref().unwrap()).unwrap();
        let retag = |ev: &Event, t: &batch::Tag| {
            let mut sig = String::new();
            batch::encode_tag(&t.sig, (t.index, t.count), &t.salt, &t.path, &mut sig);
            Event {
                sig: Some(sig),
                ..ev.clone()
            }
        };
        let bad = Err(Refusal::BadSignature("e1".into()));
        let mut moved = parts(&a[1]);
        moved.index = 2;
        let mut cross = parts(&a[1]);
        (cross.path, cross.count, cross.sig) = (parts(&b[1]).path, 6, parts(&b[1]).sig);
        let mut cross_salted = cross.clone();
        cross_salted.salt = parts(&b[1]).salt;
        let mut salt = parts(&a[1]);
        salt.salt[0] ^= 1;
        let mut cut = parts(&a[1]);
        cut.path.pop();
        let mut sig = parts(&a[1]);
        sig.sig[0] ^= 1;
        for (what, forged) in [
            ("another place", retag(&a[1], &moved)),
            ("another batch's path", retag(&a[1], &cross)),
            ("another batch's path and salt", retag(&a[1], &cross_salted)),
            ("another salt", retag(&a[1], &salt)),
            ("a path cut short", retag(&a[1], &cut)),
            ("another signature", retag(&a[1], &sig)),
        ] {
            // Before and after the ring has checked the genuine batches.
            let r = registry(None);
            assert_eq!(r.verify(&forged), bad, "{what}");
            assert_eq!(r.verify_many(&[&forged]), vec![bad.clone()]);
            assert_eq!(r.verify_many(&[&a[1], &b[1]]), vec![Ok(()), Ok(())]);
            assert_eq!(r.verify(&forged), bad);
            assert_eq!(r.verify_many(&[&forged, &a[0]]), vec![bad.clone(), Ok(())]);
        }
        for junk in ["b1.", "b1.AAAA", "b1.!!", &format!("b1.{}", "A".repeat(91))] {
            let ev = Event {
                sig: Some(junk.to_string()),
                ..a[0].clone()
            };
            assert_eq!(registry(None).verify(&ev), bad, "{junk}");
            assert_eq!(registry(None).verify_many(&[&ev]), vec![bad.clone()]);
        }
    }

    #[test]
    fn a_batch_is_judged_by_revocation_and_registry_as_each_event_is() {
        let evs = batch_of(3, &ed("e1", 1).0);
        let refs: Vec<&Event> = evs.iter().collect();
        assert_eq!(registry(Some(RECORDED_MS + 1)).verify_many(&refs), vec![Ok(()); 3]);
        let revoked = registry(Some(RECORDED_MS));
        assert_eq!(revoked.verify(&evs[0]), Err(Refusal::Revoked("e1".into())));
        assert_eq!(revoked.verify_many(&refs), vec![Err(Refusal::Revoked("e1".into())); 3]);
        // Signed with a key the registry does not hold, or another key under e1's id.
        let stranger = batch_of(3, &ed("e9", 9).0);
        assert!(matches!(
            registry(None).verify(&stranger[0]),
            Err(Refusal::UnknownKey(_))
        ));
        let impostor = batch_of(3, &ed("e1", 9).0);
        let refs: Vec<&Event> = impostor.iter().collect();
        assert_eq!(
            registry(None).verify_many(&refs),
            vec![Err(Refusal::BadSignature("e1".into())); 3]
        );
        // A publisher's ring (a keyring file alone) leaves them to the consumers.
        assert_eq!(ring().verify(&stranger[0]), Ok(()));
    }

    #[test]
    fn a_batch_signature_is_checked_once_per_root_and_a_stored_record_verifies_as_its_event() {
        let e1 = ed("e1", 1).0;
        let (a, b) = (batch_of(100, &e1), batch_from(100, 4, &e1));
        let refs: Vec<&Event> = a.iter().chain(&b).collect();
        let r = registry(None);
        assert!(r.verify_many(&refs).iter().all(Result::is_ok));
        assert_eq!(r.verified.lock().unwrap().len(), 2, "one check per batch");
        let ev = &b[2];
        let body = crate::domain::event::record::signed_body(ev, "e1").unwrap();
        let tag = ev.sig.as_deref().unwrap();
        let check = |body: &str| {
            registry(None).verify_record(&ev.event_id, body, ev.kind, ("e1", tag), (ev.work_date, RECORDED_MS))
        };
        assert_eq!(check(&body), Ok(()));
        assert_eq!(
            check(&body.replacen("E102", "E103", 1)),
            Err(Refusal::BadSignature("e1".into()))
        );
        // A shared secret never signs batches: its records keep their own tags.
        let s1 = Signer::new("k1", S1).unwrap();
        let hmac = batch_of(3, &s1);
        assert!(hmac.iter().all(|ev| ev.sig.as_deref().unwrap().len() == TAG_CHARS));
        assert!(hmac.iter().all(|ev| ring().verify(ev).is_ok()));
        // One record alone is signed alone.
        assert_eq!(batch_of(1, &e1)[0].sig.as_deref().map(str::len), Some(ED25519_CHARS));
    }

    #[test]
    fn a_batchs_salt_comes_from_the_key_and_every_record_so_no_one_knows_it_before_signing() {
        let salt = |evs: &[Event]| batch::decode_tag(evs[0].sig.as_deref().unwrap()).unwrap().salt;
        let (e1, e2) = (ed("e1", 1).0, ed("e2", 2).0);
        assert_eq!(
            salt(&batch_of(3, &e1)),
            salt(&batch_of(3, &e1)),
            "the same batch, the same tags"
        );
        assert_ne!(salt(&batch_of(3, &e1)), salt(&batch_of(3, &e2)), "another key");
        assert_ne!(salt(&batch_of(3, &e1)), salt(&batch_of(4, &e1)), "one record more");
        let mut other = batch_of(3, &e1);
        other[2].late_minutes += 1;
        sign_batch(&mut other, &e1).unwrap();
        assert_ne!(salt(&batch_of(3, &e1)), salt(&other), "one record changed");
    }

    #[test]
    fn short_or_bad_secrets_and_ids_are_refused() {
        assert!(Signer::new("k1", "c2hvcnQ=").is_err());
        assert!(Signer::new("k1", "not base64!").is_err());
        assert!(Signer::new("k 1", S1).is_err());
        assert!(format!("{:?}", Signer::new("k1", S1).unwrap()).contains("redacted"));
    }
}
