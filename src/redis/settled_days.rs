//! The record of settled days (`Keys::settled_days`): what MySQL held of each day once settle
//! committed it, so that settle and `doctor` notice a day whose rows MySQL no longer holds (a
//! fail-over to a replica that was behind). Kept as long as a punch of the day is still taken
//! (`policy::repeats_kept_until`, as the settled days' punch tokens), then dropped.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::redis::handle::Board;

/// One settled day as MySQL held it after its last run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SettledDay {
    /// The run that settled it last.
    pub run: u64,
    /// Attendance rows of the day.
    pub rows: u64,
    /// Of them, rows with at least one punch.
    pub punched: u64,
    /// `recover` has put the day's boards back since: its next settle restores it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
}

impl Board {
    /// Record `date` as settled with `day`, and forget the days settled before `forget_before`.
    pub(crate) fn record_settled_day(
        &mut self,
        date: NaiveDate,
        day: SettledDay,
        forget_before: NaiveDate,
    ) -> Result<()> {
        let key = self.keys.settled_days();
        let value = serde_json::to_string(&day)?;
        let old = self.days_before(forget_before)?;
        let mut pipe = redis::pipe();
        pipe.hset(&key, day_field(date), value).ignore();
        if !old.is_empty() {
            pipe.hdel(&key, old).ignore();
        }
        pipe.query::<()>(&mut self.con)
            .context("recording the settled day in Redis")
    }

    /// Every day recorded as settled, oldest first. A field that does not parse (written by
    /// hand) is left out rather than failing every settle on it.
    pub(crate) fn settled_days(&mut self) -> Result<BTreeMap<NaiveDate, SettledDay>> {
        let all: BTreeMap<String, String> = redis::cmd("HGETALL")
            .arg(self.keys.settled_days())
            .query(&mut self.con)
            .context("reading the settled days from Redis")?;
        Ok(all
            .into_iter()
            .filter_map(|(d, v)| {
                let date = NaiveDate::parse_from_str(&d, "%Y-%m-%d").ok()?;
                Some((date, serde_json::from_str(&v).ok()?))
            })
            .collect())
    }

    /// Note that `recover` put `date`'s boards back, when it is a recorded settled day
    /// (returns whether it is): its next settle may write it again however short MySQL is.
    pub(crate) fn mark_settled_day_recovered(&mut self, date: NaiveDate) -> Result<bool> {
        let Some(mut day) = self.settled_days()?.remove(&date) else {
            return Ok(false);
        };
        day.recovered = true;
        redis::cmd("HSET")
            .arg(self.keys.settled_days())
            .arg(day_field(date))
            .arg(serde_json::to_string(&day)?)
            .query::<()>(&mut self.con)
            .context("marking a settled day recovered in Redis")?;
        Ok(true)
    }

    /// Forget the days before `before` (`archive --drop` took their rows out of MySQL).
    pub(crate) fn forget_settled_days_before(&mut self, before: NaiveDate) -> Result<()> {
        let old = self.days_before(before)?;
        if old.is_empty() {
            return Ok(());
        }
        redis::cmd("HDEL")
            .arg(self.keys.settled_days())
            .arg(old)
            .query::<()>(&mut self.con)
            .context("forgetting archived days in Redis")
    }

    /// The recorded days before `before`, as their fields.
    fn days_before(&mut self, before: NaiveDate) -> Result<Vec<String>> {
        Ok(self
            .settled_days()?
            .into_keys()
            .filter(|d| *d < before)
            .map(day_field)
            .collect())
    }
}

fn day_field(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}
