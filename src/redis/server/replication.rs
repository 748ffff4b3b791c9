//! Waiting for a punch to reach the replicas (`WAIT` on the node that took it), so that a
//! check-in is acknowledged only once the loss of that master can no longer take it back.

use anyhow::{Context, Result};

use crate::redis::Board;

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

    /// After many punches on `depts`' boards (a bulk check-in, on this connection): wait at most
    /// `timeout_ms` for `n` replicas, once per Redis master that holds one of those boards (one
    /// `WAIT` covers every write this connection made on that node), not once per punch. Per
    /// master (`host:port`; `redis` on a single node): how many replicas hold every write, or why
    /// that could not be read.
    pub fn wait_replicated_masters(
        &mut self,
        depts: &[String],
        n: u32,
        timeout_ms: u32,
    ) -> Result<Vec<(String, Result<u32, String>)>> {
        let marks: Vec<String> = depts.iter().map(|d| self.keys.replication_mark(d)).collect();
        // One department's mark per master: WAIT is routed by its key's slot.
        let mut per_master: Vec<(String, &str)> = Vec::new();
        match &mut self.con {
            crate::redis::Redis::Single(_) => {
                per_master.extend(marks.first().map(|m| ("redis".to_string(), m.as_str())))
            }
            crate::redis::Redis::Cluster(c) => {
                let ranges = c
                    .slot_masters()
                    .context("reading the cluster's masters (CLUSTER SLOTS)")?;
                for mark in &marks {
                    let slot = crate::redis::cluster::slot_of(mark);
                    let master = ranges
                        .iter()
                        .find(|(a, b, _)| (*a..=*b).contains(&slot))
                        .map_or_else(|| format!("slot {slot}"), |(_, _, m)| m.clone());
                    if !per_master.iter().any(|(m, _)| *m == master) {
                        per_master.push((master, mark.as_str()));
                    }
                }
            }
        }
        Ok(per_master
            .into_iter()
            .map(|(master, mark)| {
                // A mark written first: WAIT then covers everything the node held, punches this
                // connection found already there (repeats, unchanged) included.
                let got = redis::cmd("SET")
                    .arg(mark)
                    .arg(1)
                    .arg("PX")
                    .arg(MARK_TTL_MS)
                    .query::<()>(&mut self.con)
                    .and_then(|()| self.con.wait_replicas(mark, n, timeout_ms))
                    .map_err(|e| format!("{master}: {e}"));
                (master, got)
            })
            .collect())
    }
}
