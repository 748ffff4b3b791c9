//! Kiosk keys (docs/security.md, "Keys"): a kiosk's Ed25519 key made (`keys generate`), the
//! registry of public keys in MySQL changed by the owner alone and audited (`keys add`,
//! `keys revoke`, `keys list`), its copy in Redis rewritten after each change, and what every
//! other command reads of it: the verifiers' keyring (the copy's public keys, and until the
//! cut-over a keyring file's shared secrets), and whether this process's key may still record
//! and may replay offline punches.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{Context, Result};
use chrono::{DateTime, NaiveDateTime, Utc};

use crate::config::Config;
use crate::domain::event::signer::{check_key_id, ed25519_pair};
use crate::domain::event::signing::{public_key, Keyring};
use crate::error::Error;
use crate::mysql::signing_keys::{self, AddOutcome, KeyRow, RevokeOutcome};
use crate::mysql::Db;
use crate::redis::board::Board;
use crate::redis::copies::key_registry::CopiedKey;

/// A key made by `keys generate`: its id and public key (the private key is only in the file).
#[derive(Debug, serde::Serialize)]
pub(crate) struct Generated {
    pub key_id: String,
    pub public_key: String,
    pub file: String,
}

/// Make an Ed25519 key for the kiosk `key_id`: the private key into `out` (a new file, mode
/// 0600, never one that exists), its public key returned for `keys add`. No store is touched.
pub(crate) fn generate(key_id: &str, out: &Path) -> Result<Generated> {
    check_key_id(key_id).map_err(Error::input)?;
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| Error::internal(format!("no random bytes from the system: {e}")))?;
    let (private, public) = ed25519_pair(&seed);
    seed.fill(0);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(out)
        .map_err(|e| {
            Error::input(format!(
                "cannot create {} (a key file is never written over): {e}",
                out.display()
            ))
        })?;
    file.write_all(format!("key_id = \"{key_id}\"\nprivate_key = \"{private}\"\n").as_bytes())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", out.display()))?;
    Ok(Generated {
        key_id: key_id.to_string(),
        public_key: public,
        file: out.display().to_string(),
    })
}

/// Add a kiosk's public key (as `keys generate` printed it, in `file`) to the registry, with
/// or without replay authority; then rewrite the Redis copy. An id already taken is refused
/// (exit 1): an id names one key for ever.
pub(crate) fn add(cfg: &Config, key_id: &str, file: &Path, replay: bool) -> Result<KeyRow> {
    check_key_id(key_id).map_err(Error::input)?;
    let text =
        std::fs::read_to_string(file).map_err(|e| Error::input(format!("cannot read {}: {e}", file.display())))?;
    let public = text.trim();
    public_key(public).map_err(|e| Error::input(format!("{}: {e}", file.display())))?;
    let db = Db::open(cfg)?;
    let row = match signing_keys::add(&db, key_id, public, replay, &crate::ops::lookup::os_user())? {
        AddOutcome::Added(row) => row,
        AddOutcome::Taken => {
            return Err(Error::refused(format!(
                "key {key_id} is in the registry already (a revoked id is never reused: generate a key under a new id)"
            ))
            .into())
        }
    };
    refresh_copy(&db, &mut Board::open(cfg)?)?;
    Ok(row)
}

/// Revoke a key from `at`: its events signed at or after it are refused, the ones before stay
/// valid; then rewrite the Redis copy. Unknown (exit 1); revoked already from no later (exit 1).
pub(crate) fn revoke(cfg: &Config, key_id: &str, at: DateTime<Utc>, reason: &str) -> Result<KeyRow> {
    check_key_id(key_id).map_err(Error::input)?;
    if reason.trim().is_empty() || reason.chars().count() > 400 {
        return Err(Error::input("--reason: 1 to 400 characters").into());
    }
    let db = Db::open(cfg)?;
    let row = match signing_keys::revoke(&db, key_id, at.naive_utc(), reason, &crate::ops::lookup::os_user())? {
        RevokeOutcome::Revoked(row) => row,
        RevokeOutcome::Unknown => return Err(Error::refused(format!("no key {key_id} in the registry")).into()),
        RevokeOutcome::Already(was) => {
            return Err(Error::refused(format!(
                "key {key_id} is revoked already from {} (a revocation only ever moves earlier)",
                crate::domain::instant::utc_text(was)
            ))
            .into())
        }
    };
    refresh_copy(&db, &mut Board::open(cfg)?)?;
    Ok(row)
}

/// Every key of the registry, from MySQL.
pub(crate) fn list(cfg: &Config) -> Result<Vec<KeyRow>> {
    signing_keys::all(&Db::open(cfg)?)
}

fn millis(t: NaiveDateTime) -> i64 {
    t.and_utc().timestamp_millis()
}

/// Rewrite Redis's copy of the registry from MySQL: after every change, and by init-day.
pub(crate) fn refresh_copy(db: &Db, board: &mut Board) -> Result<()> {
    board.write_key_registry(&of_record(db)?)
}

/// The registry as MySQL holds it, in the copy's shape.
fn of_record(db: &Db) -> Result<Vec<CopiedKey>> {
    Ok(signing_keys::all(db)?
        .into_iter()
        .map(|k| CopiedKey {
            key_id: k.key_id,
            public_key: k.public_key,
            replay: k.replay,
            revoked_from_ms: k.revoked_at.map(millis),
        })
        .collect())
}

/// The verifiers' keyring: the registry copy's public keys, and a keyring file's shared
/// secrets (accepted up to the cut-over); `None` when neither holds a key (an installation
/// that signs nothing checks nothing).
pub(crate) fn verifiers(cfg: &Config, board: &mut Board) -> Result<Option<Keyring>> {
    // On a cluster the copy's master may be lost while the department's is up: the record then
    // answers, so that a supervisor's screen does not go down with an unrelated master.
    let copied = match board.key_registry() {
        Ok(copied) => copied,
        Err(e) => Db::open(cfg).and_then(|db| of_record(&db)).map_err(|_| e)?,
    };
    ring_of(cfg, copied)
}

/// A keyring file's ring (or an empty one with this host's migration dates) with `registry`'s
/// public keys; `None` when neither holds a key.
fn ring_of(cfg: &Config, registry: Vec<CopiedKey>) -> Result<Option<Keyring>> {
    let file = cfg.signing.keyring()?;
    if registry.is_empty() && file.is_none() {
        return Ok(None);
    }
    let mut ring = file.unwrap_or_else(|| {
        let mut ring = Keyring::default();
        ring.accept_unsigned_until = cfg.signing.accept_unsigned_until;
        ring.accept_v1_signatures_until = cfg.signing.accept_v1_signatures_until;
        ring
    });
    with_registry(&mut ring, registry)?;
    Ok(Some(ring))
}

/// [`verifiers`] with the registry read from MySQL itself (commands that rebuild a day after
/// Redis lost it: the copy may be gone), the copy rewritten on the way.
pub(crate) fn verifiers_of_record(cfg: &Config, db: &Db, board: &mut Board) -> Result<Option<Keyring>> {
    refresh_copy(db, board)?;
    verifiers(cfg, board)
}

/// The keys settle checks the punch log's records with: the registry as MySQL holds it (never
/// Redis's copy, which a kiosk's account is closer to) and a keyring file's shared secrets, with
/// this host's own shared secret beside them (what it could sign it may check); `None` when
/// neither the registry nor a keyring file holds a key (an installation that signs nothing
/// checks nothing, as its consumers).
pub(crate) fn settle_verifiers(cfg: &Config, db: &Db) -> Result<Option<Keyring>> {
    let Some(mut ring) = ring_of(cfg, of_record(db)?)? else {
        return Ok(None);
    };
    if let Some(own) = cfg.signing.own_keyring()? {
        ring.adopt(own);
    }
    Ok(Some(ring))
}

fn with_registry(ring: &mut Keyring, copied: Vec<CopiedKey>) -> Result<()> {
    for k in copied {
        ring.add_public(&k.key_id, &k.public_key, k.replay, k.revoked_from_ms)
            .map_err(|e| anyhow::anyhow!("the key registry copy: {e}"))?;
    }
    ring.knows_registry();
    Ok(())
}

/// Whether this process may record with its key at `now` (the server's clock): an Ed25519 key
/// is refused (exit 1) when the registry copy revokes it by then, does not hold it, or holds
/// another public key under its id (nobody could verify its events). A shared secret is never
/// in the registry (it holds public keys only): it records as before, up to the cut-over.
pub(crate) fn check_own_key(board: &mut Board, now: DateTime<Utc>) -> Result<()> {
    let Some((key_id, Some(public))) = board.signer_kind() else {
        return Ok(());
    };
    match board.copied_key(&key_id)? {
        Some(k) if k.revoked_from_ms.is_some_and(|r| now.timestamp_millis() >= r) => Err(Error::refused(format!(
            "this kiosk's key {key_id} is revoked (keys list): it may not record; install a new key"
        ))
        .into()),
        Some(k) if k.public_key != public => Err(Error::refused(format!(
            "this kiosk's key file does not match the registry's public key of {key_id}: it may not record"
        ))
        .into()),
        Some(_) => Ok(()),
        None => Err(Error::refused(format!(
            "this kiosk's key {key_id} is not in the key registry: the owner adds it (attendance keys add {key_id} --public-key FILE)"
        ))
        .into()),
    }
}

/// Whether this process's key may replay offline punches at `now`: the registry copy's word
/// alone (an Ed25519 key added with `--replay`, not revoked by then).
pub(crate) fn may_replay(board: &mut Board, now: DateTime<Utc>) -> Result<bool> {
    let Some((key_id, Some(_))) = board.signer_kind() else {
        return Ok(false);
    };
    let Some(k) = board.copied_key(&key_id)? else {
        return Ok(false);
    };
    let mut ring = Keyring::default();
    with_registry(&mut ring, vec![k])?;
    Ok(board.may_replay(&ring, now.timestamp_millis()))
}
