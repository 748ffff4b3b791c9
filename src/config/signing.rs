//! The signing keys of the configuration: the recording process's key file and the
//! verifiers' keyring (docs/security.md, "Signed events"). Both are private files, refused
//! when group or others may read or write them.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use serde::Deserialize;

use super::secrets::check_private;
use crate::domain::event::signer::Signer;
use crate::domain::event::signing::Keyring;
use crate::error::Error;

/// Where the keys are. Nothing is signed without `key_file`; nothing is checked without
/// `keyring_file`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SigningSettings {
    /// `signing.key_file`: this process's key id and secret; every event it records is signed.
    pub key_file: Option<PathBuf>,
    /// `signing.keyring_file`: the keys verifiers accept, by id, and the revoked ids.
    pub keyring_file: Option<PathBuf>,
    /// `signing.accept_unsigned_until`: unsigned events of work dates up to this one pass a
    /// verifier (the migration period for events written before signing).
    pub accept_unsigned_until: Option<NaiveDate>,
    /// `signing.accept_v1_signatures_until`: events signed in the first format (the whole
    /// 256-bit MAC, before the 128-bit tag) of work dates up to this one pass a verifier (the
    /// migration period for events written by an older build).
    pub accept_v1_signatures_until: Option<NaiveDate>,
}

/// A recording process's key: its id and either an Ed25519 private key (`keys generate`
/// writes it) or, until the cut-over, a shared HMAC secret.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyFile {
    key_id: String,
    #[serde(default)]
    secret: Option<String>,
    #[serde(default)]
    private_key: Option<String>,
}

impl KeyFile {
    fn signer(&self) -> Result<Signer, String> {
        match (&self.secret, &self.private_key) {
            (None, Some(private)) => Signer::ed25519(&self.key_id, private),
            (Some(secret), None) => Signer::new(&self.key_id, secret),
            _ => Err("a key file holds either private_key (Ed25519) or secret (HMAC), one of them".into()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyringFile {
    #[serde(default)]
    keys: std::collections::BTreeMap<String, RingKey>,
    #[serde(default)]
    revoked: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RingKey {
    secret: String,
    /// Read and ignored: whether a key may replay offline punches is the registry's word
    /// (`keys add --replay`), never a file's that its holder may write.
    #[serde(default, rename = "replay")]
    _replay: bool,
}

fn read_toml<T: serde::de::DeserializeOwned>(path: &Path, key: &str) -> Result<T, Error> {
    let what = format!("config: {key}");
    check_private(path, &what, true)?;
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::input(format!("{what}: cannot read {}: {e}", path.display())))?;
    // The parser's message may quote the file: never a secret in an error.
    toml::from_str(&text).map_err(|e| {
        Error::input(format!(
            "{what}: {} is not a valid key file ({})",
            path.display(),
            e.message()
        ))
    })
}

impl SigningSettings {
    /// This process's signing key, if one is configured.
    pub fn signer(&self) -> Result<Option<Signer>, Error> {
        let Some(path) = &self.key_file else { return Ok(None) };
        let f: KeyFile = read_toml(path, "signing.key_file")?;
        f.signer()
            .map(Some)
            .map_err(|e| Error::input(format!("config: signing.key_file: {}: {e}", path.display())))
    }

    /// A keyring of this host's own shared-secret key alone, when it has one: what settle
    /// checks the journaled events it restores against when neither a keyring nor the registry
    /// has a key (so that an unsigned or foreign message in the journal never becomes a row
    /// unattended). An Ed25519 key's own events are checked through the registry.
    pub fn own_keyring(&self) -> Result<Option<Keyring>, Error> {
        let Some(path) = &self.key_file else { return Ok(None) };
        let f: KeyFile = read_toml(path, "signing.key_file")?;
        let Some(secret) = &f.secret else { return Ok(None) };
        let mut ring = Keyring::default();
        ring.add(&f.key_id, secret)
            .map_err(|e| Error::input(format!("config: signing.key_file: {}: {e}", path.display())))?;
        Ok(Some(ring))
    }

    /// The verifiers' keyring, if one is configured: events are checked only then.
    pub fn keyring(&self) -> Result<Option<Keyring>, Error> {
        let Some(path) = &self.keyring_file else {
            return Ok(None);
        };
        let f: KeyringFile = read_toml(path, "signing.keyring_file")?;
        let bad = |e: String| Error::input(format!("config: signing.keyring_file: {}: {e}", path.display()));
        let mut ring = Keyring::default();
        for (id, k) in &f.keys {
            ring.add(id, &k.secret).map_err(bad)?;
        }
        for id in &f.revoked {
            ring.revoke(id);
        }
        ring.accept_unsigned_until = self.accept_unsigned_until;
        ring.accept_v1_signatures_until = self.accept_v1_signatures_until;
        Ok(Some(ring))
    }

    /// Read both files once at start, so a bad key is a one-line error before anything runs.
    pub(crate) fn validate(&self) -> Result<(), Error> {
        self.signer()?;
        self.keyring()?;
        Ok(())
    }
}
