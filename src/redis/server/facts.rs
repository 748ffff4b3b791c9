//! What `doctor` asks Redis: its version and which days still have boards.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use chrono::NaiveDate;

use crate::redis::keys::Keys;
use crate::redis::{Board, Keyspace};

impl Board {
    /// `redis_version` from `INFO server`.
    pub fn version(&mut self) -> Result<String> {
        let infos = super::persistence::info_texts(&mut self.con, "server").context("INFO server")?;
        Ok(infos
            .first()
            .map(String::as_str)
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("redis_version:"))
            .unwrap_or("unknown")
            .trim()
            .to_string())
    }

    /// The days before `today` that still have boards, with how many departments' boards each.
    /// Settle deletes a day's boards once its rows are committed, so a board of a past day is a
    /// day that was never settled, or whose settle failed for some rows.
    pub fn past_board_days(&mut self, today: NaiveDate) -> Result<BTreeMap<NaiveDate, usize>> {
        let found = self
            .con
            .scan_keys(&self.keys.any_board_pattern())
            .context("listing the boards in Redis")?;
        let mut days = BTreeMap::new();
        for day in found.iter().filter_map(|k| Keys::date_of(k)).filter(|d| *d < today) {
            *days.entry(day).or_insert(0) += 1;
        }
        Ok(days)
    }
}
