//! The key a recording process signs its events with (a kiosk identity): its id and either an
//! Ed25519 private key (the registry holds its public key: consumers verify and cannot sign) or,
//! until the cut-over, an HMAC secret; and what each signs over the bytes of the outbox record
//! itself (docs/security.md). The verifiers' side, the keyring, is `event::signing`.

use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::domain::event::batch;
use crate::domain::punch::Kind;

pub(super) type HmacSha256 = Hmac<Sha256>;

/// Secrets shorter than this are refused: an HMAC key is as strong as its bytes.
pub(crate) const MIN_SECRET_BYTES: usize = 32;

/// The key a recording process signs its events with. Its secret never leaves it: no
/// `Debug` shows it.
#[derive(Clone)]
pub struct Signer {
    key_id: String,
    key: SigningKey,
}

/// A signing key of either scheme.
#[derive(Clone)]
enum SigningKey {
    /// A secret the verifiers share (every holder can sign): accepted until the cut-over.
    Hmac(HmacSha256),
    /// A private key only the kiosk holds; the registry holds its public half.
    Ed25519(Box<ed25519_dalek::SigningKey>),
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Signer({}, secret redacted)", self.key_id)
    }
}

/// An Ed25519 signature in base64url without padding: 64 bytes, 86 characters. Its length tells
/// it from an HMAC tag (22) and the first format's MAC (43).
pub(crate) const ED25519_CHARS: usize = 86;

/// An Ed25519 key (private or public: both 32 bytes) as a key file or the registry writes it:
/// base64 of its 32 bytes.
pub(crate) fn key_bytes(b64: &str) -> Result<[u8; 32], String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.trim())
        .map_err(|_| "the key is not base64".to_string())?;
    bytes.try_into().map_err(|_| "an Ed25519 key is 32 bytes".to_string())
}

/// The Ed25519 private key of 32 random bytes and its public key, both in base64 (what `keys
/// generate` writes and prints); the caller wipes `seed`.
pub fn ed25519_pair(seed: &[u8; 32]) -> (String, String) {
    let key = ed25519_dalek::SigningKey::from_bytes(seed);
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    (b64(seed), b64(key.verifying_key().as_bytes()))
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
            key: SigningKey::Hmac(keyed(secret_b64)?),
        })
    }

    /// A kiosk's Ed25519 key: its id and its private key (base64 of 32 bytes).
    pub fn ed25519(key_id: &str, private_b64: &str) -> Result<Signer, String> {
        check_key_id(key_id)?;
        let mut bytes = key_bytes(private_b64)?;
        let key = ed25519_dalek::SigningKey::from_bytes(&bytes);
        bytes.fill(0);
        Ok(Signer {
            key_id: key_id.to_string(),
            key: SigningKey::Ed25519(Box::new(key)),
        })
    }

    /// The public key of an Ed25519 key, in base64 as the registry holds it.
    pub(crate) fn public_key(&self) -> Option<String> {
        match &self.key {
            SigningKey::Ed25519(key) => {
                Some(base64::engine::general_purpose::STANDARD.encode(key.verifying_key().as_bytes()))
            }
            SigningKey::Hmac(_) => None,
        }
    }

    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The signature of a text: the whole MAC in base64 without padding (the first format's
    /// signature of a canonical text, `signing::canonical`, and the replay probe), or an Ed25519
    /// signature in base64url without padding. Alerts and void notices are signed so.
    pub fn sign(&self, canonical: &str) -> String {
        match &self.key {
            SigningKey::Hmac(keyed) => {
                let mut mac = keyed.clone();
                mac.update(canonical.as_bytes());
                base64::engine::general_purpose::STANDARD_NO_PAD.encode(mac.finalize().into_bytes())
            }
            SigningKey::Ed25519(key) => {
                use ed25519_dalek::Signer as _;
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key.sign(canonical.as_bytes()).to_bytes())
            }
        }
    }

    /// The current format's tag of an event (see [`record_message`]): with an HMAC secret the
    /// first [`TAG_BYTES`] of the MAC ([`TAG_CHARS`] characters), with an Ed25519 key the
    /// signature of the same message ([`ED25519_CHARS`]), base64url without padding.
    pub fn tag_record(&self, event_id: &str, body: &str, kind: Kind) -> String {
        let mut out = String::new();
        self.tag_into(event_id, body, kind, &mut out);
        out
    }

    /// [`Signer::tag_record`] of `record[body_from..]`, appended to the record being written.
    pub(crate) fn append_tag(&self, event_id: &str, record: &mut String, body_from: usize, kind: Kind) {
        let mut tag = String::with_capacity(ED25519_CHARS);
        self.tag_into(event_id, &record[body_from..], kind, &mut tag);
        record.push_str(&tag);
    }

    /// Tags for many records at once, each appended to its record (`(event id, record, kind)`,
    /// the signed bytes from `body_from` on, as [`Signer::append_tag`] takes them): with an
    /// Ed25519 key and more than one record, one signature over the records' Merkle tree, each
    /// record's tag holding it with the record's audit path (`event::batch`), so a batch of a
    /// hundred costs one signature, not a hundred; otherwise each record its own tag.
    pub(crate) fn append_tags(&self, records: &mut [(&str, String, Kind)], body_from: usize) {
        let key = match &self.key {
            SigningKey::Ed25519(key) if records.len() > 1 => key,
            _ => {
                for (id, record, kind) in records.iter_mut() {
                    self.append_tag(id, record, body_from, *kind);
                }
                return;
            }
        };
        use ed25519_dalek::Signer as _;
        for chunk in records.chunks_mut(batch::LEAVES) {
            let messages: Vec<Vec<u8>> = chunk
                .iter()
                .map(|(id, record, kind)| message_bytes(id, &record[body_from..], *kind))
                .collect();
            // The salt: keyed by the private key and every record of the batch (as Ed25519
            // derives its own nonce, RFC 8032), so no one can know it before the batch is signed.
            let mut salted = HmacSha256::new_from_slice(key.as_bytes()).expect("HMAC takes a key of any length");
            salted.update(b"attendance-batch-salt-v1");
            for m in &messages {
                salted.update(&(m.len() as u64).to_be_bytes());
                salted.update(m);
            }
            let salt: batch::Salt = salted.finalize().into_bytes()[..batch::SALT_BYTES]
                .try_into()
                .expect("SALT_BYTES <= 32");
            let leaves: Vec<batch::Hash> = messages.iter().map(|m| batch::leaf(&salt, m)).collect();
            let (root, paths) = batch::tree(&leaves);
            let sig = key.sign(&batch::signed_message(leaves.len(), &salt, &root)).to_bytes();
            for (i, ((_, record, _), path)) in chunk.iter_mut().zip(&paths).enumerate() {
                batch::encode_tag(&sig, (i, leaves.len()), &salt, path, record);
            }
        }
    }

    fn tag_into(&self, event_id: &str, body: &str, kind: Kind, out: &mut String) {
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        match &self.key {
            SigningKey::Hmac(keyed) => {
                let full = record_message(keyed.clone(), event_id, body, kind)
                    .finalize()
                    .into_bytes();
                b64.encode_string(&full[..TAG_BYTES], out);
            }
            SigningKey::Ed25519(key) => {
                use ed25519_dalek::Signer as _;
                let sig = key.sign(&message_bytes(event_id, body, kind));
                b64.encode_string(sig.to_bytes(), out);
            }
        }
    }
}

/// The bytes [`record_message`] feeds the MAC, as one buffer: what an Ed25519 key signs.
pub(super) fn message_bytes(event_id: &str, body: &str, kind: Kind) -> Vec<u8> {
    let mut m = Vec::with_capacity(MESSAGE_LABEL.len() + event_id.len() + body.len() + 2);
    m.extend_from_slice(MESSAGE_LABEL);
    m.extend_from_slice(event_id.as_bytes());
    m.push(b'\t');
    m.extend_from_slice(body.as_bytes());
    m.push(if kind == Kind::In { b'i' } else { b'o' });
    m
}

const MESSAGE_LABEL: &[u8] = b"attendance-event-v2\t";

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
    mac.update(MESSAGE_LABEL);
    mac.update(event_id.as_bytes());
    mac.update(b"\t");
    mac.update(body.as_bytes());
    mac.update(if kind == Kind::In { b"i" } else { b"o" });
    mac
}
