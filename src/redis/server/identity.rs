//! Which Redis servers hold the boards: the `run_id` of every master. A restart, a fail-over to
//! a replica or a server swapped behind the same address gives another `run_id`, and each of
//! these can lose acknowledged punches (the last second of an append-only file, what a lagging
//! replica had not received, everything on a server that keeps nothing). Settle compares the
//! identity recorded when a day was laid out with the one it finds, and reads the journal back
//! only when they differ (docs/settle.md, "The check against the journal").

use anyhow::{Context, Result};
use chrono::NaiveDate;

use crate::domain::event::punch_log::How;
use crate::redis::Board;

/// Departments asked per round trip.
const PER_PIPELINE: usize = 200;

impl Board {
    /// The `run_id` of every master, sorted and joined with commas: one on a single node, one per
    /// master on a cluster.
    pub(crate) fn server_identity(&mut self) -> Result<String> {
        let infos = super::persistence::info_texts(&mut self.con, "server").context("INFO server")?;
        let mut ids: Vec<&str> = infos
            .iter()
            .filter_map(|info| info.lines().find_map(|l| l.strip_prefix("run_id:")).map(str::trim))
            .collect();
        if ids.is_empty() {
            anyhow::bail!("Redis's INFO server has no run_id");
        }
        ids.sort_unstable();
        Ok(ids.join(","))
    }

    /// Whether any of `depts` has a punch log for `date` in Redis: some punch of the day was
    /// recorded already (before its layout, or since an earlier one).
    pub(crate) fn day_has_punches(&mut self, date: NaiveDate, depts: &[String]) -> Result<bool> {
        for chunk in depts.chunks(PER_PIPELINE) {
            let mut pipe = redis::pipe();
            for d in chunk {
                for how in How::ON_BOARD {
                    pipe.exists(self.keys.punch_log(d, date, how.as_str()));
                }
            }
            let found: Vec<bool> = pipe
                .query(&mut self.con)
                .context("looking for the day's punch logs in Redis")?;
            if found.into_iter().any(|f| f) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
