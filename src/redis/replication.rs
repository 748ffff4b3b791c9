//! Waiting for a punch to reach the replicas (`WAIT` on the node that took it), so that a
//! check-in is acknowledged only once the loss of that master can no longer take it back.

use anyhow::{Context, Result};

use super::Board;

/// How long the mark of a repeated punch lives: longer than any `WAIT`.
const MARK_TTL_MS: u32 = 120_000;

impl Board {
    /// After a punch on `dept`'s board: wait at most `timeout_ms` for `n` replicas of the
    /// board's node to hold it; how many do. `wrote` false (a repeat that changed nothing):
    /// this connection wrote nothing for WAIT to wait for, while the first punch may not have
    /// reached the replicas yet, so a mark is written first and the wait covers everything the
    /// node held then, the first punch included.
    pub fn wait_replicated(&mut self, dept: &str, wrote: bool, n: u32, timeout_ms: u32) -> Result<u32> {
        let (con, keys) = (&mut self.con, &self.keys);
        let board_node = keys.replication_mark(dept);
        if !wrote {
            redis::cmd("SET")
                .arg(&board_node)
                .arg(1)
                .arg("PX")
                .arg(MARK_TTL_MS)
                .query::<()>(con)
                .context("marking a repeated punch for WAIT in Redis")?;
        }
        con.wait_replicas(&board_node, n, timeout_ms)
            .context("waiting for the Redis replicas (WAIT)")
    }
}
