//! What `doctor` asks Redis: its version, its clock, and which days still have boards.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use chrono::{DateTime, NaiveDate, Utc};

use super::{Board, Keyspace};
use crate::redis::keys::Keys;

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

    /// The server's clock (`TIME`: seconds and microseconds).
    pub fn time(&mut self) -> Result<DateTime<Utc>> {
        let (secs, micros): (i64, i64) = redis::cmd("TIME").query(&mut self.con).context("TIME")?;
        DateTime::from_timestamp_micros(secs * 1_000_000 + micros).context("Redis's TIME is out of range")
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
