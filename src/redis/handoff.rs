//! Redis side of the hand-off between a check-in and a running `relay --follow`: the relay's
//! heartbeat and the wake-up list. A wake-up is only a nudge: the event is already in its
//! outbox (the punch script put it there), so a relay that dies after it loses nothing; the
//! next relay, or a later check-in's ride-along, sends it.

use std::sync::LazyLock;
use std::time::Duration;

use super::Board;
use anyhow::{Context, Result};

/// How long a heartbeat outlives the relay's last refresh. The relay refreshes it about every
/// second; a relay killed without a word attracts hand-offs for at most this long (their events
/// wait in the outboxes for the next relay).
pub(crate) const HEARTBEAT_TTL_MS: u64 = 5_000;

/// Wake-ups kept at most: a relay that stopped reading leaves a bounded list behind.
const WAKE_CAP: usize = 10_000;

/// Push the department to the wake-up list only if a relay's heartbeat exists (one round trip,
/// atomic: no hand-off to a relay whose heartbeat just expired).
static WAKE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        "if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end \
         redis.call('RPUSH', KEYS[2], ARGV[1]) \
         redis.call('LTRIM', KEYS[2], -tonumber(ARGV[2]), -1) \
         return 1",
    )
});

/// Delete the heartbeat only if it is this relay's (another relay may be beating too).
static FORGET: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0")
});

impl Board {
    /// Whether a relay says it is alive (its heartbeat has not expired).
    pub fn relay_alive(&mut self) -> Result<bool> {
        let (con, keys) = (&mut self.con, &self.keys);
        let n: u32 = redis::cmd("EXISTS")
            .arg(keys.relay_heartbeat())
            .query(con)
            .context("reading the relay's heartbeat in Redis")?;
        Ok(n > 0)
    }

    /// Wake the relay for a department's outbox. False: no relay is alive (any more), nothing
    /// pushed.
    pub fn wake_relay(&mut self, dept: &str) -> Result<bool> {
        let (con, keys) = (&mut self.con, &self.keys);
        let mut inv = WAKE.key(keys.relay_heartbeat());
        inv.key(keys.relay_wake()).arg(dept).arg(WAKE_CAP);
        let pushed: u32 = inv.invoke(con).context("waking the relay through Redis")?;
        Ok(pushed == 1)
    }

    /// Say (again) that the relay `me` is alive, for [`HEARTBEAT_TTL_MS`].
    pub fn beat(&mut self, me: &str) -> Result<()> {
        let (con, keys) = (&mut self.con, &self.keys);
        redis::cmd("SET")
            .arg(keys.relay_heartbeat())
            .arg(me)
            .arg("PX")
            .arg(HEARTBEAT_TTL_MS)
            .query::<()>(con)
            .context("writing the relay's heartbeat in Redis")
    }

    /// The relay `me` stops taking hand-offs (stopped, or lost its broker): check-ins publish
    /// themselves again at once.
    pub fn forget(&mut self, me: &str) -> Result<()> {
        let (con, keys) = (&mut self.con, &self.keys);
        let mut inv = FORGET.key(keys.relay_heartbeat());
        inv.arg(me);
        inv.invoke::<u32>(con)
            .context("deleting the relay's heartbeat in Redis")?;
        Ok(())
    }

    /// Drop the wake-ups nobody read (a relay starting drains every outbox anyway).
    pub fn clear_wakes(&mut self) -> Result<()> {
        let (con, keys) = (&mut self.con, &self.keys);
        redis::cmd("DEL")
            .arg(keys.relay_wake())
            .query::<()>(con)
            .context("clearing the relay's wake-ups in Redis")
    }

    /// Wait at most `timeout` (keep it well under `redis.read_timeout_ms`) for a wake-up, then
    /// take every other one waiting. The departments, each once, in the order they were woken;
    /// empty if none came.
    pub fn wait_wakes(&mut self, timeout: Duration) -> Result<Vec<String>> {
        let (con, keys) = (&mut self.con, &self.keys);
        let key = keys.relay_wake();
        let first: Option<(String, String)> = redis::cmd("BLPOP")
            .arg(&key)
            .arg(timeout.as_secs_f64().max(0.001))
            .query(con)
            .context("waiting for wake-ups in Redis")?;
        let Some((_, dept)) = first else {
            return Ok(Vec::new());
        };
        let more = self.take_wakes()?;
        Ok(once_each(std::iter::once(dept).chain(more)))
    }

    /// The wake-ups waiting now, without waiting for any: the departments, each once, in the
    /// order they were woken (a relay busy with its full round looks between two outboxes' pages).
    pub fn take_wakes(&mut self) -> Result<Vec<String>> {
        let (con, keys) = (&mut self.con, &self.keys);
        let more: Option<Vec<String>> = redis::cmd("LPOP")
            .arg(keys.relay_wake())
            .arg(WAKE_CAP)
            .query(con)
            .context("taking wake-ups in Redis")?;
        Ok(once_each(more.unwrap_or_default().into_iter()))
    }
}

fn once_each(depts: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    depts.filter(|d| seen.insert(d.clone())).collect()
}
