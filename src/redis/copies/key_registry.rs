//! Redis: the copy of the key registry (`<ns>:{keys}`), so that consumers verify events and a
//! kiosk learns whether its key is revoked without MySQL and without any secret. Written whole
//! from MySQL by `keys add|revoke` and by every init-day and layout; read whole (a handful of
//! keys per kiosk).

use anyhow::{Context, Result};

use crate::redis::handle::Board;

/// One key as the copy holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CopiedKey {
    pub key_id: String,
    /// Base64 of the Ed25519 public key.
    pub public_key: String,
    pub replay: bool,
    /// Revoked from this instant on (unix millis), if revoked.
    pub revoked_from_ms: Option<i64>,
}

/// `ed25519 <public key> <replay 0|1> <revoked millis or ->`.
fn encode(k: &CopiedKey) -> String {
    let revoked = k.revoked_from_ms.map_or("-".to_string(), |r| r.to_string());
    format!("ed25519 {} {} {revoked}", k.public_key, u8::from(k.replay))
}

fn decode(key_id: String, v: &str) -> Result<CopiedKey> {
    let bad = || anyhow::anyhow!("reading the key registry copy: key {key_id:?} holds {v:?}");
    let f: Vec<&str> = v.split(' ').collect();
    let [alg, public, replay, revoked] = f[..] else {
        return Err(bad());
    };
    if alg != "ed25519" {
        return Err(bad());
    }
    Ok(CopiedKey {
        public_key: public.to_string(),
        replay: replay == "1",
        revoked_from_ms: match revoked {
            "-" => None,
            r => Some(r.parse().map_err(|_| bad())?),
        },
        key_id,
    })
}

impl Board {
    /// Replace the copy with `keys`, whole: written aside, then renamed over the old one, so that
    /// no reader sees half of it. No key removes the copy.
    pub(crate) fn write_key_registry(&mut self, keys: &[CopiedKey]) -> Result<()> {
        let (key, next) = (self.keys.key_registry(), self.keys.key_registry_next());
        if keys.is_empty() {
            redis::cmd("DEL")
                .arg(&key)
                .query::<()>(&mut self.con)
                .context("removing the key registry copy")?;
            return Ok(());
        }
        let fields: Vec<(String, String)> = keys.iter().map(|k| (k.key_id.clone(), encode(k))).collect();
        redis::pipe()
            .cmd("DEL")
            .arg(&next)
            .ignore()
            .cmd("HSET")
            .arg(&next)
            .arg(&fields)
            .ignore()
            .cmd("RENAME")
            .arg(&next)
            .arg(&key)
            .ignore()
            .query::<()>(&mut self.con)
            .context("writing the key registry copy")
    }

    /// Every key of the copy (none: no copy, or an empty registry).
    pub(crate) fn key_registry(&mut self) -> Result<Vec<CopiedKey>> {
        let all: Vec<(String, String)> = redis::cmd("HGETALL")
            .arg(self.keys.key_registry())
            .query(&mut self.con)
            .context("reading the key registry copy")?;
        all.into_iter().map(|(id, v)| decode(id, &v)).collect()
    }

    /// One key of the copy, if it holds it.
    pub(crate) fn copied_key(&mut self, key_id: &str) -> Result<Option<CopiedKey>> {
        let v: Option<String> = redis::cmd("HGET")
            .arg(self.keys.key_registry())
            .arg(key_id)
            .query(&mut self.con)
            .context("reading the key registry copy")?;
        v.map(|v| decode(key_id.to_string(), &v)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copied_key_reads_back_as_written() {
        for revoked in [None, Some(1_765_000_000_123)] {
            let k = CopiedKey {
                key_id: "kiosk-1".into(),
                public_key: "AAAA".into(),
                replay: true,
                revoked_from_ms: revoked,
            };
            assert_eq!(decode(k.key_id.clone(), &encode(&k)).unwrap(), k);
        }
        assert!(decode("k".into(), "rsa AAAA 1 -").is_err());
    }
}
