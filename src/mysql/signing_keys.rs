//! The registry of kiosk keys (`signing_keys`) and its audit (`signing_key_audit`): public keys,
//! replay authority and revocation times, written by `keys add|revoke` in one transaction with
//! their audit row (the MySQL account is the server's `CURRENT_USER()`, the time its clock).

use anyhow::Result;
use chrono::NaiveDateTime;
use mysql::prelude::Queryable;

use super::Db;

/// One key of the registry. Times are UTC.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub(crate) struct KeyRow {
    pub key_id: String,
    pub algorithm: String,
    /// Base64 of the 32-byte Ed25519 public key.
    pub public_key: String,
    pub replay: bool,
    #[serde(serialize_with = "crate::domain::instant::utc")]
    pub added_at: NaiveDateTime,
    pub added_by: String,
    pub added_os_user: String,
    #[serde(serialize_with = "crate::domain::instant::utc_opt")]
    pub revoked_at: Option<NaiveDateTime>,
    pub revoked_by: Option<String>,
    pub revoke_reason: Option<String>,
}

type Raw = (
    String,
    String,
    String,
    bool,
    NaiveDateTime,
    String,
    String,
    Option<NaiveDateTime>,
    Option<String>,
    Option<String>,
);

const COLUMNS: &str = "key_id, algorithm, public_key, replay, added_at, added_by, added_os_user, revoked_at, \
                       revoked_by, revoke_reason";

fn row(r: Raw) -> KeyRow {
    KeyRow {
        key_id: r.0,
        algorithm: r.1,
        public_key: r.2,
        replay: r.3,
        added_at: r.4,
        added_by: r.5,
        added_os_user: r.6,
        revoked_at: r.7,
        revoked_by: r.8,
        revoke_reason: r.9,
    }
}

/// Every key, by id.
pub(crate) fn all(db: &Db) -> Result<Vec<KeyRow>> {
    let mut conn = db.conn()?;
    let rows: Vec<Raw> = conn.query(format!("SELECT {COLUMNS} FROM signing_keys ORDER BY key_id"))?;
    Ok(rows.into_iter().map(row).collect())
}

/// What [`add`] did.
pub(crate) enum AddOutcome {
    Added(KeyRow),
    /// The id is taken (a revoked id too: an id names one key for ever).
    Taken,
}

/// Add a key and its audit row in one transaction.
pub(crate) fn add(db: &Db, key_id: &str, public_key: &str, replay: bool, os_user: &str) -> Result<AddOutcome> {
    let mut conn = db.conn()?;
    let mut tx = super::begin(&mut conn)?;
    let taken: Option<String> =
        tx.exec_first("SELECT key_id FROM signing_keys WHERE key_id = ? FOR UPDATE", (key_id,))?;
    if taken.is_some() {
        tx.rollback()?;
        return Ok(AddOutcome::Taken);
    }
    tx.exec_drop(
        "INSERT INTO signing_keys (key_id, public_key, replay, added_at, added_by, added_os_user) \
         VALUES (?, ?, ?, UTC_TIMESTAMP(3), CURRENT_USER(), ?)",
        (key_id, public_key, replay, os_user),
    )?;
    audit(
        &mut tx,
        key_id,
        "add",
        os_user,
        &format!("public key {public_key}, replay {replay}"),
    )?;
    Ok(AddOutcome::Added(commit_reading(tx, key_id)?))
}

/// What [`revoke`] did.
pub(crate) enum RevokeOutcome {
    Revoked(KeyRow),
    Unknown,
    /// Revoked already from this instant, no later than the one asked: nothing to move.
    Already(NaiveDateTime),
}

/// Revoke a key from `at` (UTC) with its audit row, in one transaction. A key revoked from a
/// later instant is moved earlier (more of its events refused); never later.
pub(crate) fn revoke(db: &Db, key_id: &str, at: NaiveDateTime, reason: &str, os_user: &str) -> Result<RevokeOutcome> {
    let mut conn = db.conn()?;
    let mut tx = super::begin(&mut conn)?;
    let found: Option<Option<NaiveDateTime>> = tx.exec_first(
        "SELECT revoked_at FROM signing_keys WHERE key_id = ? FOR UPDATE",
        (key_id,),
    )?;
    let before = match found {
        None => {
            tx.rollback()?;
            return Ok(RevokeOutcome::Unknown);
        }
        Some(Some(was)) if was <= at => {
            tx.rollback()?;
            return Ok(RevokeOutcome::Already(was));
        }
        Some(was) => was,
    };
    tx.exec_drop(
        "UPDATE signing_keys SET revoked_at = ?, revoked_by = CURRENT_USER(), revoke_reason = ? WHERE key_id = ?",
        (at, reason, key_id),
    )?;
    let from = before.map_or(String::new(), |b| {
        format!(" (was {})", b.format("%Y-%m-%dT%H:%M:%S%.3fZ"))
    });
    audit(
        &mut tx,
        key_id,
        "revoke",
        os_user,
        &format!("revoked from {}{from}: {reason}", at.format("%Y-%m-%dT%H:%M:%S%.3fZ")),
    )?;
    Ok(RevokeOutcome::Revoked(commit_reading(tx, key_id)?))
}

/// The key's row as the transaction wrote it, then the commit.
fn commit_reading(mut tx: mysql::Transaction, key_id: &str) -> Result<KeyRow> {
    let r: Option<Raw> = tx.exec_first(
        format!("SELECT {COLUMNS} FROM signing_keys WHERE key_id = ?"),
        (key_id,),
    )?;
    tx.commit()?;
    Ok(row(r.ok_or_else(|| {
        anyhow::anyhow!("key {key_id}: its row is gone within its transaction")
    })?))
}

fn audit(tx: &mut mysql::Transaction, key_id: &str, action: &str, os_user: &str, detail: &str) -> Result<()> {
    tx.exec_drop(
        "INSERT INTO signing_key_audit (key_id, action, db_user, os_user, at, detail) \
         VALUES (?, ?, CURRENT_USER(), ?, UTC_TIMESTAMP(3), ?)",
        (key_id, action, os_user, detail),
    )?;
    Ok(())
}
