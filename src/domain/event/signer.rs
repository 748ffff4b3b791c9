//! The key a recording process signs its events with (a kiosk identity): its id and secret, and
//! the current format's tag, a 128-bit HMAC-SHA256 over the bytes of the outbox record itself
//! (docs/security.md). The verifiers' side, the keyring, is `event::signing`.

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::punch::Kind;

pub(super) type HmacSha256 = Hmac<Sha256>;

/// Secrets shorter than this are refused: an HMAC key is as strong as its bytes.
pub(crate) const MIN_SECRET_BYTES: usize = 32;

/// The key a recording process signs its events with. Its secret never leaves it: no
/// `Debug` shows it.
#[derive(Clone)]
pub struct Signer {
    key_id: String,
    keyed: HmacSha256,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signer({}, secret redacted)", self.key_id)
    }
}

/// A key id: short, printable, no separator the canonical text or a record uses.
pub(crate) fn check_key_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.len() > 64 || !id.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
        return Err(format!(
            "a key id is 1 to 64 letters, digits, '-', '_' or '.', not {:?}",
            crate::domain::text::clip(id)
        ));
    }
    Ok(())
}

/// A secret as a key file or a keyring writes it: base64 of at least 32 bytes.
pub(super) fn keyed(secret_b64: &str) -> Result<HmacSha256, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(secret_b64.trim())
        .map_err(|_| "the secret is not base64".to_string())?;
    if bytes.len() < MIN_SECRET_BYTES {
        return Err(format!("the secret must hold at least {MIN_SECRET_BYTES} bytes"));
    }
    Ok(HmacSha256::new_from_slice(&bytes).expect("HMAC takes a key of any length"))
}

impl Signer {
    pub fn new(key_id: &str, secret_b64: &str) -> Result<Signer, String> {
        check_key_id(key_id)?;
        Ok(Signer {
            key_id: key_id.to_string(),
            keyed: keyed(secret_b64)?,
        })
    }

    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The whole MAC of a text, base64 without padding: the first format's signature of a
    /// canonical text (`signing::canonical`), and the replay probe.
    pub fn sign(&self, canonical: &str) -> String {
        let mut mac = self.keyed.clone();
        mac.update(canonical.as_bytes());
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// The current format's tag of an event (see [`record_message`]): the first [`TAG_BYTES`]
    /// of the MAC, base64url without padding ([`TAG_CHARS`] characters). Nothing is copied: the
    /// MAC runs over the record as it was written.
    pub fn tag_record(&self, event_id: &str, body: &str, kind: Kind) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(self.tag_bytes(event_id, body, kind))
    }

    /// [`Signer::tag_record`] of `record[body_from..]`, appended to the record being written
    /// (no String of its own).
    pub(crate) fn append_tag(&self, event_id: &str, record: &mut String, body_from: usize, kind: Kind) {
        let tag = self.tag_bytes(event_id, &record[body_from..], kind);
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode_string(tag, record);
    }

    fn tag_bytes(&self, event_id: &str, body: &str, kind: Kind) -> [u8; TAG_BYTES] {
        let full = record_message(self.keyed.clone(), event_id, body, kind)
            .finalize()
            .into_bytes();
        let mut tag = [0; TAG_BYTES];
        tag.copy_from_slice(&full[..TAG_BYTES]);
        tag
    }
}

/// The current format's tag: HMAC-SHA256 truncated to 128 bits (RFC 2104 section 5 allows
/// truncation to no less than half the output; NIST SP 800-107 puts a 128-bit tag's forgery
/// odds at 2^-128 per try), in base64url without padding.
pub(crate) const TAG_BYTES: usize = 16;
pub(crate) const TAG_CHARS: usize = 22;
/// The first format's signature: the whole MAC, base64 without padding.
pub(super) const V1_CHARS: usize = 43;

/// What the current format signs: a version label, the event id, then `body`, the event's outbox
/// record from the employee id to the key id and its tab (every field but the record's version
/// and the script's suffix, see `record::record_prefix`), then the punch's kind (`i` or `o`).
/// Names and sources are JSON-escaped in the record and ids hold no tab (checked when the record
/// is rebuilt from an event), so the fields are unambiguous.
pub(super) fn record_message(mut mac: HmacSha256, event_id: &str, body: &str, kind: Kind) -> HmacSha256 {
    mac.update(b"attendance-event-v2\t");
    mac.update(event_id.as_bytes());
    mac.update(b"\t");
    mac.update(body.as_bytes());
    mac.update(if kind == Kind::In { b"i" } else { b"o" });
    mac
}
