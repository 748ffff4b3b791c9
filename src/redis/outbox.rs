//! The per-department outboxes (events not yet confirmed by the broker) and the watchers'
//! record of the events they showed.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use redis::Commands;

use super::handle::{Board, Keyspace};
use crate::redis::keys::Keys;

/// How long a department remembers the event ids its watchers showed: past a day and a
/// weekend of redeliveries, short enough that the set stays small.
const SHOWN_TTL_SECS: i64 = 3 * 24 * 3600;

impl Board {
    /// One page of a department's outbox (HSCAN from `cursor`, about `count` entries; a small
    /// outbox comes whole): the next cursor (0 when done) and (event id, JSON) pairs. Reading page
    /// by page keeps a drain's memory and a check-in's cost independent of the backlog.
    pub fn outbox_page(&mut self, dept: &str, cursor: u64, count: usize) -> Result<(u64, Vec<(String, String)>)> {
        let (con, keys) = (&mut self.con, &self.keys);
        let (next, flat): (u64, Vec<String>) = redis::cmd("HSCAN")
            .arg(keys.outbox(dept))
            .arg(cursor)
            .arg("COUNT")
            .arg(count)
            .query(con)
            .context("reading an outbox in Redis")?;
        let mut items = Vec::with_capacity(flat.len() / 2);
        let mut it = flat.into_iter();
        while let (Some(id), Some(json)) = (it.next(), it.next()) {
            items.push((id, json));
        }
        Ok((next, items))
    }

    /// One event of a department's outbox, if it is still there.
    pub fn outbox_get(&mut self, dept: &str, id: &str) -> Result<Option<String>> {
        let (con, keys) = (&mut self.con, &self.keys);
        Ok(con.hget(keys.outbox(dept), id)?)
    }

    /// Remove confirmed events from a department's outbox.
    pub fn outbox_ack(&mut self, dept: &str, ids: &[String]) -> Result<()> {
        let (con, keys) = (&mut self.con, &self.keys);
        if !ids.is_empty() {
            let _: u64 = con.hdel(keys.outbox(dept), ids)?;
        }
        Ok(())
    }

    /// Remove confirmed events from several departments' outboxes in one pipeline (one HDEL per
    /// department, so each command stays on its department's slot of a cluster).
    pub fn outbox_ack_many(&mut self, acked: &BTreeMap<&str, Vec<String>>) -> Result<()> {
        let (con, keys) = (&mut self.con, &self.keys);
        let mut pipe = redis::pipe();
        let mut queued = false;
        for (dept, ids) in acked.iter().filter(|(_, ids)| !ids.is_empty()) {
            pipe.hdel(keys.outbox(dept), ids).ignore();
            queued = true;
        }
        // An empty pipeline is an error to the client, not an empty answer.
        if queued {
            pipe.query::<()>(con)
                .context("removing sent events from the outboxes in Redis")?;
        }
        Ok(())
    }

    /// Put events back in their outboxes (HSETNX: an entry still there stays as it is): the
    /// broker confirmed them on a connection lost soon after, which may not have kept them
    /// (see `ops::relay::recent`). One pipeline; each command stays on its department's slot.
    pub fn outbox_put_back(&mut self, events: &[(&str, &str, &str)]) -> Result<()> {
        let (con, keys) = (&mut self.con, &self.keys);
        if events.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for (dept, id, stored) in events {
            pipe.hset_nx(keys.outbox(dept), id, stored).ignore();
        }
        pipe.query::<()>(con)
            .context("putting events back in the outboxes in Redis")
    }

    /// Whether a watcher of the department already showed this event (it came back, redelivered
    /// after a watcher died before acking, or published twice).
    pub fn shown_before(&mut self, dept: &str, event_id: &str) -> Result<bool> {
        let (con, keys) = (&mut self.con, &self.keys);
        Ok(con.sismember(keys.shown(dept), event_id)?)
    }

    /// Remember that the event was shown (the set's expiry moves on with each one).
    pub fn mark_shown(&mut self, dept: &str, event_id: &str) -> Result<()> {
        let (con, keys) = (&mut self.con, &self.keys);
        let key = keys.shown(dept);
        redis::pipe()
            .sadd(&key, event_id)
            .ignore()
            .expire(&key, SHOWN_TTL_SECS)
            .ignore()
            .query::<()>(con)?;
        Ok(())
    }

    /// Count `n` more events refused for `class` (signature or roster; see `doctor`).
    pub(crate) fn count_refused(&mut self, class: &str, n: u64) -> Result<()> {
        let key = self.keys.refused();
        let _: i64 = self.con.hincr(key, class, n)?;
        Ok(())
    }

    /// The refused events counted so far, by class.
    pub(crate) fn refused_counts(&mut self) -> Result<BTreeMap<String, u64>> {
        let key = self.keys.refused();
        Ok(self.con.hgetall(key)?)
    }

    /// Events waiting in the given departments' outboxes.
    pub fn outbox_len(&mut self, depts: &[String]) -> Result<usize> {
        Ok(self.outbox_lens(depts)?.into_iter().sum())
    }

    /// Events waiting in each of the given departments' outboxes.
    pub fn outbox_lens(&mut self, depts: &[String]) -> Result<Vec<usize>> {
        let (con, keys) = (&mut self.con, &self.keys);
        if depts.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        for d in depts {
            pipe.hlen(keys.outbox(d));
        }
        pipe.query(con).context("reading the outboxes in Redis")
    }

    /// What the outboxes hold, touching nothing: (departments with events, events).
    pub fn outbox_backlog(&mut self) -> Result<(usize, usize)> {
        let depts = self.outbox_departments()?;
        let (con, keys) = (&mut self.con, &self.keys);
        if depts.is_empty() {
            // An empty pipeline is an error to the client, not an empty answer.
            return Ok((0, 0));
        }
        let mut pipe = redis::pipe();
        for d in &depts {
            pipe.hlen(keys.outbox(d));
        }
        let lens: Vec<usize> = pipe.query(con).context("reading the outboxes in Redis")?;
        Ok((lens.iter().filter(|n| **n > 0).count(), lens.iter().sum()))
    }

    /// Departments whose outbox holds anything (on a cluster, found on every master).
    pub fn outbox_departments(&mut self) -> Result<Vec<String>> {
        let (con, keys) = (&mut self.con, &self.keys);
        let found = con
            .scan_keys(&keys.outbox_pattern())
            .context("listing the outboxes in Redis")?;
        Ok(departments_of(&found))
    }

    /// [`Board::outbox_departments`], running `between` after each SCAN call (on a cluster, once,
    /// after every master's scan): a following relay takes its wake-ups there, so that a server
    /// holding many keys (every namespace's) does not hold them back for the whole scan.
    pub fn outbox_departments_between(
        &mut self,
        mut between: impl FnMut(&mut Board) -> Result<()>,
    ) -> Result<Vec<String>> {
        let pattern = self.keys.outbox_pattern();
        let what = "listing the outboxes in Redis";
        let (mut found, mut cursor) = (Vec::new(), 0);
        loop {
            let Some((next, page)) = self.con.scan_step(&pattern, cursor).context(what)? else {
                found = self.con.scan_keys(&pattern).context(what)?;
                between(self)?;
                break;
            };
            found.extend(page);
            between(self)?;
            if next == 0 {
                break;
            }
            cursor = next;
        }
        Ok(departments_of(&found))
    }
}

/// The departments of outbox keys, each once, in order.
fn departments_of(found: &[String]) -> Vec<String> {
    let mut depts: Vec<String> = found
        .iter()
        .filter_map(|k| Keys::dept_of(k).map(str::to_string))
        .collect();
    depts.sort();
    depts.dedup();
    depts
}
