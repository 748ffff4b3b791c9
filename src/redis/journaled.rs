//! Which journaled events a day's punch logs in Redis already hold: settle's reconciliation
//! with the journal restores only the others (what a fail-over to a lagging replica lost; a
//! punch voided since is off its board but still in its log, and stays voided).

use std::collections::HashMap;

use anyhow::{Context, Result};
use chrono::NaiveDate;

use super::Board;
use crate::domain::event::punch_log::How;

/// Departments' days per pipeline: each asks 2 keys per way a punch comes.
const GROUPS_PER_PIPELINE: usize = 100;

impl Board {
    /// For each (department, day, event id), whether a punch log of that department's day holds
    /// the event (live or settle's copy, whichever way the punch came), in input order.
    pub(crate) fn logged_events(&mut self, events: &[(&str, NaiveDate, &str)]) -> Result<Vec<bool>> {
        let mut groups: HashMap<(&str, NaiveDate), Vec<usize>> = HashMap::new();
        for (i, (dept, date, _)) in events.iter().enumerate() {
            groups.entry((*dept, *date)).or_default().push(i);
        }
        let groups: Vec<((&str, NaiveDate), Vec<usize>)> = groups.into_iter().collect();
        let mut found = vec![false; events.len()];
        let (con, keys) = (&mut self.con, &self.keys);
        for chunk in groups.chunks(GROUPS_PER_PIPELINE) {
            let mut pipe = redis::pipe();
            for ((dept, date), idx) in chunk {
                let ids: Vec<&str> = idx.iter().map(|&i| events[i].2).collect();
                for how in How::ON_BOARD {
                    for key in [
                        keys.punch_log(dept, *date, how.as_str()),
                        keys.settle_punch_log(dept, *date, how.as_str()),
                    ] {
                        pipe.cmd("HMGET").arg(key).arg(&ids);
                    }
                }
            }
            let replies: Vec<Vec<Option<redis::Value>>> =
                pipe.query(con).context("reading the day's punch logs from Redis")?;
            let per_group = 2 * How::ON_BOARD.len();
            for ((_, idx), replies) in chunk.iter().zip(replies.chunks(per_group)) {
                for reply in replies {
                    for (&i, v) in idx.iter().zip(reply) {
                        found[i] |= v.as_ref().is_some_and(|v| !matches!(v, redis::Value::Nil));
                    }
                }
            }
        }
        Ok(found)
    }
}
